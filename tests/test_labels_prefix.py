"""Shared prompt prefixes: the instruction prefix computed once per prompt, each query's tokens
once per query, and labels equal to the full-sequence computation of every pair on a fixed sample."""
import numpy as np
import pytest

import irrepro.labels as L
from irrepro.labels.prefix import PrefixStore, group_by_prefix

from conftest import smollm2_labeler

# a fixed sample: 3 Cranfield-like queries x 4 abstracts (12 pairs), texts of very different lengths (more pairs
# cost more model passes, each a full-sequence reference in float64, and test nothing more)
QUERIES = ["what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft",
           "heat transfer to a blunt body", "flutter of thin panels"]
DOCS = ["scale models for thermo-aeroelastic research. an investigation is made of the parameters to be satisfied "
        "for thermo-aeroelastic similarity of a heated aircraft model.",
        "the stagnation point heat transfer of a blunt body in hypersonic flow is computed.",
        "panel flutter.",
        "a theory of supersonic panel flutter is given for thin plates with clamped edges, and compared with wind "
        "tunnel tests at mach numbers between 1.3 and 3; the effects of in-plane loads and of the boundary layer on "
        "the flutter boundary are discussed at length."]
QS = [q for q in QUERIES for _ in DOCS]
DS = [d for _ in QUERIES for d in DOCS]
#: each run's sample: two queries sharing the instructions and several documents sharing each query (float32: 2 x 4,
#: float64: 2 x 3 of the abstracts, the short and the long ones); the 12 pairs were 35 s of CI in float64, 19 s in
#: float32
SAMPLES = {"float32": (QUERIES[:2], DOCS), "float64": (QUERIES[:2], DOCS[1:])}


def test_prefix_store_computes_each_prefix_once_from_its_parent():
    calls = []

    def extend(base, tokens):
        calls.append((None if base is None else tuple(base), tuple(tokens)))
        return list(base or ()) + list(tokens)

    store = PrefixStore(extend)
    store._stackable = False  # plain lists stand in for whole caches
    instr, q1, q2 = (1, 2, 3), (1, 2, 3, 7), (1, 2, 3, 8, 8)
    assert store.split([1, 2, 3, 7, 9], q1, instr) == q1
    assert store.split([1, 2, 3, 8, 8, 9], q2, instr) == q2
    assert store.split([1, 2, 3, 7], q1, instr) == instr  # q1 would leave nothing to run: the parent
    assert store.split([5, 6], q1, instr) == ()
    for p in (q1, q2, q1, instr, q2):
        store.get(p)
    assert calls == [(None, (1, 2, 3)), ((1, 2, 3), (7,)), ((1, 2, 3), (8, 8))]
    assert set(store.computed.values()) == {1}
    assert group_by_prefix([q1, (), q1], [5, 1, 2]) == [(q1, [2, 0]), ((), [1])]


@pytest.fixture
def one_thread():
    torch = pytest.importorskip("torch")
    n = torch.get_num_threads()
    yield
    torch.set_num_threads(n)


def _in_calls(lab, prompt, qs=QS, ds=DS, n=8):
    """Log-scores of a sample (default the fixed one) in label_pairs' calls: shortest first, n pairs per call."""
    order = sorted(range(len(qs)), key=lambda i: len(qs[i]) + len(ds[i]))
    out = np.empty((len(qs), L.get_prompt(prompt).n_grades))
    for i in range(0, len(order), n):
        idx = order[i:i + n]
        out[idx] = lab.log_scores(prompt, [qs[j] for j in idx], [ds[j] for j in idx])
    return out


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_smollm2_shared_prefixes_equal_full_sequences(dtype, one_thread):
    """The full-sequence computation (each pair alone, batch size 1) is the reference; so is the labeler that shares
    prefixes only within a batch (``share_prefix="batch"``). The order of float sums changes with the batch layout:
    in float32 the batch-sharing labeler differs from its own unbatched run by ~3e-5 in log-probability (measured), so there the
    test bounds the labels (the softmax over grades, where the shift common to all grades cancels) by 1e-5 and
    the log-probabilities by the float32 layout noise (1e-4, the bound of the other HF tests). In float64
    activations (this GGUF build's matmul kernels still compute in float32, transformers warns) the layout noise
    is ~2e-6 (measured), so there the grade log-probabilities must agree within 1e-5: a wrong position, mask or
    cache would be off by far more."""
    lab = smollm2_labeler(dtype=dtype, batch_size=8, threads=1)
    prompt = "cranfield"
    queries, docs = SAMPLES[dtype]
    qs, ds = [q for q in queries for _ in docs], [d for _ in queries for d in docs]
    lab.share_prefix, lab.batch_size = False, 1
    full = _in_calls(lab, prompt, qs, ds)
    lab.share_prefix, lab.batch_size = "batch", 8
    before = _in_calls(lab, prompt, qs, ds)
    lab.share_prefix = True
    lab.prefixes = PrefixStore(lab._extend_cache)
    lab.stats.reset()
    after = _in_calls(lab, prompt, qs, ds)
    # each shared prefix computed once: the instructions once, each query once (extending the instructions)
    assert sorted(lab.prefixes.computed.values()) == [1] * (1 + len(queries))
    instr = lab._instruction_prefix(L.get_prompt(prompt))
    assert lab.stats.prefix_tokens == len(instr) + sum(
        len(lab._query_prefix(L.get_prompt(prompt), q)) - len(instr) for q in queries)
    # the rows run only what follows their query's prefix
    assert lab.stats.real_tokens == lab.stats.prompt_tokens - sum(
        len(lab._query_prefix(L.get_prompt(prompt), q)) for q in qs)
    print(dtype, "max |after - full|", np.abs(after - full).max(), "max |after - before|", np.abs(after - before).max(),
          "labels", np.abs(L.softmax(after) - L.softmax(full)).max())
    for ref in (full, before):
        if dtype == "float64":
            assert np.abs(after - ref).max() <= 1e-5
        else:
            assert np.abs(after - ref).max() <= 1e-4
            assert np.abs(L.softmax(after) - L.softmax(ref)).max() <= 1e-5
    # label_pairs gives the same labels; its plumbing does not depend on the dtype, so it is checked in float32 only
    # (in float64 the pairs once more are a quarter of the test's time)
    if dtype == "float32":
        import pandas as pd
        pairs = pd.DataFrame({"query_id": [str(QUERIES.index(q)) for q in qs],
                              "doc_id": [str(DOCS.index(d)) for d in ds], "query": qs, "text": ds})
        got = L.label_pairs(lab, prompt, pairs, None, progress=False)
        np.testing.assert_allclose(got[L.label_columns(5)].to_numpy(), L.softmax(full), atol=1e-5)
