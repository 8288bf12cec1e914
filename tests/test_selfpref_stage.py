"""Self-preference end to end on synthetic data: a labeler that lifts the grade of every document a same-model
system ranks in its top k, and systems of known overlap with it, recovered by the score tables, the bias table and
the gap exactly; the coverage draws (labels refitted on each draw's queries, runs cut at k without changing a single
interval); the plan's same-model detection and its config errors; the neural systems' plan (keys, errors)."""
import copy

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import REPO
from irrepro.errors import InputError
import irrepro.selfpref as sp
from irrepro.selfpref.scores import _cut
from irrepro.labels.factory import labeler_models
from irrepro.plan import same_model
from irrepro.retrieval.neural import parse_system
from irrepro.selfpref.plan import resolve as resolve_self_preference
from irrepro.papers.ci import systems as ci
from irrepro.plan import neural_index_key, neural_systems, resolve
from irrepro.schema import validate_config

K, G, T, DOCS = 5, 3, 40, 30


def _world(seed=0):
    """T topics over DOCS documents with random grades 0..2; four systems: ``own`` (the labeler's model), ``near``
    (own's ranking with its top 2 swapped for two others), ``far`` and ``other`` (independent rankings)."""
    rng = np.random.default_rng(seed)
    qrels, runs = [], {s: [] for s in ("own", "near", "far", "other")}
    for t in range(1, T + 1):
        q = str(t)
        grades = rng.choice([0, 0, 1, 2], size=DOCS)
        qrels += [(q, f"d{d}", int(g)) for d, g in enumerate(grades)]
        own = rng.permutation(DOCS)
        orders = {"own": own, "near": np.concatenate([own[2:4], own[:2], own[4:]]),
                  "far": rng.permutation(DOCS), "other": rng.permutation(DOCS)}
        for s, order in orders.items():
            runs[s] += [(q, f"d{d}", r, float(DOCS - r)) for r, d in enumerate(order, 1)]
    qrels = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    runs = {s: pd.DataFrame(v, columns=["query_id", "doc_id", "rank", "score"]) for s, v in runs.items()}
    return qrels, runs


def _lifting_labels(qrels, runs, lifted="own", lift=1):
    """One-hot labels of every pool pair at its human grade, one grade higher (capped at 2) for the documents in
    ``lifted``'s top K: a labeler that prefers what its own model retrieves."""
    pool = ci.systems_pairs(runs, qrels, K)
    top = runs[lifted]
    top = set(zip(top[top["rank"] <= K].query_id, top[top["rank"] <= K].doc_id))
    g = pool.relevance.to_numpy().astype(int)
    g = np.where([(q, d) in top for q, d in zip(pool.query_id, pool.doc_id)], np.minimum(g + lift, G - 1), g)
    return pool.assign(**{f"p_{i}": (g == i).astype(float) for i in range(G)}).drop(columns="relevance")


def _true_bias(qrels, runs, system, lifted="own"):
    """The bias of ``system``'s DCG@K that the lifting labeler causes, from its definition: the mean over topics of
    the gain added at each lifted document of the system's top K, discounted by its rank."""
    grade = {(q, d): g for q, d, g in zip(qrels.query_id, qrels.doc_id, qrels.relevance)}
    top = runs[lifted]
    top = set(zip(top[top["rank"] <= K].query_id, top[top["rank"] <= K].doc_id))
    r = runs[system]
    total = 0.0
    for q, d, rank in zip(r.query_id, r.doc_id, r["rank"]):
        if rank <= K and (q, d) in top:
            g = grade[(q, d)]
            total += ((2 ** min(g + 1, G - 1) - 1) - (2 ** g - 1)) / np.log2(rank + 1)
    return total / T


def test_a_labeler_lifting_its_own_systems_results_is_recovered_exactly():
    qrels, runs = _world()
    labels = _lifting_labels(qrels, runs)
    same = {"own": True, "near": True, "far": False, "other": False}
    h, lab = sp.label_score_tables(runs, qrels, labels, f"DCG@{K}", collection="toy")
    t = sp.self_preference_table(h, lab, same, labeler="judge", n_boot=500, seed=0).set_index("system")
    for s in runs:
        assert t.loc[s, "bias"] == pytest.approx(_true_bias(qrels, runs, s), abs=1e-12), s
    # near ranks own's top K in another order: both carry the lift in full, the independent rankings by chance only
    assert t.loc["own", "bias_low"] > 0 and t.loc["near", "bias_low"] > 0
    assert min(t.loc["own", "bias"], t.loc["near", "bias"]) > 2 * max(t.loc["far", "bias"], t.loc["other", "bias"])
    g = sp.self_preference_gap(h, lab, same, labeler="judge", n_boot=500, seed=0).iloc[0]
    want = (_true_bias(qrels, runs, "own") + _true_bias(qrels, runs, "near")) / 2 - \
        (_true_bias(qrels, runs, "far") + _true_bias(qrels, runs, "other")) / 2
    assert g.gap == pytest.approx(want, abs=1e-12) and g.gap_low > 0
    # the same labels with a labeler that lifts nobody: every bias is 0 exactly
    none = _lifting_labels(qrels, runs, lift=0)
    h0, lab0 = sp.label_score_tables(runs, qrels, none, f"DCG@{K}", collection="toy")
    t0 = sp.self_preference_table(h0, lab0, same, labeler="honest", n_boot=200)
    assert np.allclose(t0.bias, 0.0) and np.allclose(t0.bias_low, 0.0)


def test_coverage_draws_refit_per_draw_and_cutting_the_runs_changes_no_interval():
    qrels, runs = _world(seed=3)
    labels = _lifting_labels(qrels, runs)
    same = {"own": True, "near": False, "far": False, "other": False}
    seen = []

    def labels_of(drawn):
        seen.append(list(drawn))
        return labels

    intervals, cov = sp.coverage_draws(runs, qrels, labels_of, same, [f"DCG@{K}"], n=8, draws=3, seed=7,
                                       labeler="judge", n_boot=300, n_batches=300)
    queries = ci.judged_queries(qrels)
    assert seen == [ci.draw_queries(queries, 8, 7 + r) for r in range(3)]
    assert len(intervals) == 3 * len(runs) * len(ci.METHODS) and set(intervals.draw) == {0, 1, 2}
    # draw 1 equals evaluate_systems on the full runs with that draw's queries and seed
    full, *_ = ci.evaluate_systems(runs, qrels, labels, seen[1], [f"DCG@{K}"], n_boot=300, n_batches=300, seed=8)
    pd.testing.assert_frame_equal(intervals[intervals.draw == 1].drop(columns="draw").reset_index(drop=True),
                                  full.reset_index(drop=True))
    # coverage pools the draws: per method, same_model = own's 3 intervals, other = 9 (a failed CRC calibration
    # counts under no_interval)
    c = cov.set_index(["method", "group"])
    n = c.intervals + c.no_interval
    assert (n.xs("same_model", level="group") == 3).all() and (n.xs("other", level="group") == 9).all()
    got = intervals.assign(g=intervals.system.eq("own")).groupby(["method", "g"]).covered.sum()
    assert got[("ppi", True)] == c.loc[("ppi", "same_model"), "covered"]
    with pytest.raises(InputError, match="draws"):
        sp.coverage_draws(runs, qrels, labels_of, same, [f"DCG@{K}"], n=8, draws=0)


def test_cut_keeps_ties_at_the_kth_rank():
    run = pd.DataFrame({"query_id": ["1"] * 5 + ["2"] * 2, "doc_id": list("abcdexy"), "rank": [1, 2, 3, 3, 5, 1, 2],
                        "score": [5, 4, 3, 3, 1, 2, 1.0]})
    cut = _cut(run, 3)
    assert cut.doc_id.tolist() == ["a", "b", "c", "d", "x", "y"]


# ------------------------------------------------------------------------------------------------ the plans

def _config(path="config/config.yaml"):
    c = yaml.safe_load((REPO / path).read_text())
    validate_config(c, REPO / "workflow/schemas")
    return c


def test_same_model_systems_are_found_from_the_labelers_model():
    assert labeler_models({"backend": "biencoder", "model": "minilm"}) == ("minilm-l6-v2",)
    assert labeler_models({"backend": "biencoder"}) == ("minilm-l6-v2",)
    assert labeler_models({"backend": "smollm2"}) == () and labeler_models({"backend": "file"}) == ()
    assert parse_system("bm25_k1-0.9_b-0.4+minilm-l6-v2-rerank_k-100").models == ("minilm-l6-v2",)
    assert parse_system("splade-tiny+minilm-l6-v2-rerank_k-10").models == ("splade-tiny", "minilm-l6-v2")
    assert parse_system("qld_mu-1000+rm3_fb-10_terms-20_lambda-0.5").models == ()
    plan = resolve(_config(), check_ids=False)
    spc = plan.stages["selfpref"]["collections"]["vaswani"]
    assert spc["labelers"] == ["minilm", "smollm2"] and spc["sample"] == {"smollm2": 10}
    assert len(spc["systems"]) == len(plan.systems["vaswani"])
    assert sorted(s for s, f in spc["same_model"]["minilm"].items() if f) == [
        "bm25_k1-0.9_b-0.4+minilm-l6-v2-rerank_k-100", "minilm-l6-v2"]
    assert not any(spc["same_model"]["smollm2"].values())


@pytest.mark.parametrize("edit, match", [
    (lambda c: c["labels"]["self_preference"].update(collections=["nowhere"]), r"self_preference.collections\[0\]"),
    (lambda c: c["labels"]["self_preference"].update(systems=["dph", "bm25_k1-9_b-0.4"]),
     r"self_preference.systems\[1\]"),
    (lambda c: c["labels"]["self_preference"].update(labelers=["llama3-70b"]), r"self_preference.labelers\[0\]"),
    (lambda c: c["labels"]["self_preference"].update(measures=["DCG@20"]), r"measures\[0\].*depth is 10"),
    (lambda c: c["labels"]["self_preference"].update(same_model={"minilm": ["splade"]}), r"same_model.minilm\[0\]"),
    (lambda c: c["labels"]["self_preference"].update(same_model={"gpt": ["dph"]}),
     r"same_model: 'gpt' is not a labeler under labels.labelers"),
    (lambda c: c["labels"]["collections"]["vaswani"].update(labelers=["llama3-70b"], sample={}),
     r"collections\[0\]: vaswani has no computed labeler \(labels.collections.vaswani.labelers are all file"),
])
def test_self_preference_config_errors_name_the_key(edit, match):
    c = _config()
    edit(c)
    with pytest.raises(InputError, match=match):
        resolve(c, check_ids=False)


def test_one_same_model_rule_by_weights_for_the_population_and_by_name_for_imports():
    """irrepro.plan.same_model, the rule of ci.systems, self-preference and the audit alike: a population system by
    the models it runs (a cross-encoder whose name says MiniLM is not the bi-encoder MiniLM a re-ranker runs, which a
    match on names would call the same), an imported run by the words of its name, a file labeler never."""
    minilm, rr = {"backend": "biencoder", "model": "minilm"}, "bm25_k1-0.9_b-0.4+minilm-l6-v2-rerank_k-100"
    cross = {"backend": "hf", "model": "cross-encoder/ms-marco-MiniLM-L-6-v2"}
    assert same_model(rr, "minilm", minilm) and same_model("minilm-l6-v2", "judge", minilm)
    assert not same_model("bm25_k1-0.9_b-0.4", "minilm", minilm) and not same_model(rr, "minilm-cross", cross)
    assert same_model("mine/bm25+minilm-rerank", "minilm", minilm) and same_model("mine/x-minilm-ce", "ce", cross)
    assert same_model("run-smollm2-rr", "llm", {"backend": "smollm2"})
    assert not same_model("mine/bm25", "minilm", minilm) and not same_model(rr, "minilm", {"backend": "file"})
    assert not same_model("mine/minilm", "minilm", {"backend": "file", "path": "x"})
    plan = resolve(_config(), check_ids=False)
    assert plan.same_model(rr, "minilm") and not plan.same_model(rr, "smollm2")


def test_declared_same_model_systems_are_flagged():
    c = _config()
    c["labels"]["self_preference"]["same_model"] = {"smollm2": ["dph"]}
    flags = resolve_self_preference(c, resolve(_config(), check_ids=False))["collections"]["vaswani"]["same_model"]
    assert flags["smollm2"]["dph"] and not flags["smollm2"]["pl2_c-1"]


def test_neural_systems_join_the_population_of_their_collections_only():
    c = _config()
    plan = resolve(c, check_ids=False)
    names = c["population"]["neural"]["systems"]
    assert plan.systems["vaswani"][-len(names):] == names and plan.systems["cranfield"][-len(names):] == names
    assert not set(names) & set(plan.systems["dl19-pool"])
    assert plan.neural_models("vaswani", names[2]) == ["minilm-l6-v2"]
    assert {m for (_, m) in plan.neural_keys} == {"minilm-l6-v2", "splade-tiny"}
    assert plan.neural_index("vaswani", "splade-tiny").startswith("resources/neural/vaswani-splade-tiny-")


def test_neural_index_key_follows_documents_weights_and_settings_not_systems():
    c = _config()
    k = neural_index_key(c, "vaswani", "minilm-l6-v2")
    assert k != neural_index_key(c, "cranfield", "minilm-l6-v2") != neural_index_key(c, "vaswani", "splade-tiny")
    d = copy.deepcopy(c)
    d["population"]["neural"]["models"]["minilm-l6-v2"] = {"dtype": "float32"}  # the default, written out
    assert neural_index_key(d, "vaswani", "minilm-l6-v2") == k
    d["population"]["neural"]["models"]["minilm-l6-v2"] = {"dtype": "bfloat16"}
    assert neural_index_key(d, "vaswani", "minilm-l6-v2") != k
    d["population"]["neural"]["models"]["minilm-l6-v2"] = {"batch_size": 16}
    assert neural_index_key(d, "vaswani", "minilm-l6-v2") != k
    d["population"]["neural"]["models"]["minilm-l6-v2"] = {"device": "cpu", "batch_size": 32}  # the defaults
    assert neural_index_key(d, "vaswani", "minilm-l6-v2") == k
    d = copy.deepcopy(c)
    d["population"]["neural"]["max_docs"] = 2000
    assert neural_index_key(d, "vaswani", "minilm-l6-v2") != k
    d = copy.deepcopy(c)
    d["population"]["neural"]["systems"] = ["minilm-l6-v2"]
    d["version"] = "other"
    assert neural_index_key(d, "vaswani", "minilm-l6-v2") == k


@pytest.mark.parametrize("systems, match", [
    (["bm25_k1-9_b-0.4+minilm-l6-v2-rerank_k-100"], "not a system of the population"),
    (["bm25_k1-0.9_b-0.4"], "without a re-ranking stage"),
    (["colbert"], "neither a neural model"),
    (["minilm-l6-v2+bert-rerank_k-10"], "unknown re-ranking model|neither"),
])
def test_neural_system_errors_name_the_key(systems, match):
    c = _config()
    c["population"]["neural"]["systems"] = systems
    classic = resolve(_config(), check_ids=False).systems["dl19-pool"]
    with pytest.raises(InputError, match=r"population.neural.systems\[0\].*" + f"({match})"):
        neural_systems(c, classic)


def test_an_encoder_on_a_gpu_is_keyed_by_its_device_and_batches_more():
    """population.neural.models.<m>.device: a GPU's float32 encodings differ from a CPU's in their last bits, so
    the device enters the key (the CPU, the default, does not: existing keys stay); 256 texts a batch there unless
    batch_size says otherwise; a model without a device setting, and a bfloat16 key this machine cannot tell, are
    refused naming the key."""
    from irrepro.plan import neural_settings

    c = _config()
    k = neural_index_key(c, "vaswani", "minilm-l6-v2")
    c["population"]["neural"]["models"]["minilm-l6-v2"] = {"device": "cuda"}
    assert neural_settings(c, "minilm-l6-v2") == {"batch_size": 256, "dtype": "float32", "device": "cuda"}
    assert neural_index_key(c, "vaswani", "minilm-l6-v2") != k
    c["population"]["neural"]["models"]["minilm-l6-v2"] = {"device": "cuda:1", "batch_size": 64}
    assert neural_settings(c, "minilm-l6-v2") == {"batch_size": 64, "dtype": "float32", "device": "cuda:1"}
    c["population"]["neural"]["models"] = {"e5-small": {"device": "cuda"}}
    with pytest.raises(InputError, match=r"population\.neural\.models\.e5-small\.device"):
        neural_settings(c, "e5-small")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        c["population"]["neural"]["models"] = {"minilm-l6-v2": {"device": "cuda", "dtype": "bfloat16"}}
        with pytest.raises(InputError, match=r"population\.neural\.models\.minilm-l6-v2: bfloat16 on cuda"):
            neural_settings(c, "minilm-l6-v2")


def test_neural_collection_and_dtype_errors():
    c = _config()
    c["population"]["neural"]["collections"] = ["robust04"]
    with pytest.raises(InputError, match=r"population.neural.collections\[0\]"):
        resolve(c, check_ids=False)
    c = _config()
    c["population"]["neural"]["models"] = {"e5-small": {"dtype": "bfloat16"}}
    c["population"]["neural"]["systems"] = ["e5-small"]
    with pytest.raises(InputError, match="models.e5-small.dtype"):
        resolve(c, check_ids=False)


def test_bfloat16_encodings_are_keyed_by_the_arithmetic_and_a_job_elsewhere_refuses(monkeypatch):
    """bfloat16 encodings differ between a CPU's native bfloat16 and torch's emulation (irrepro.core.arithmetic):
    the index key holds the planning machine's arithmetic, and a model that would compute in another refuses to
    encode under that key."""
    from irrepro.core import arithmetic as ar
    from irrepro.plan import neural_settings
    from irrepro.retrieval import neural

    c = _config()
    c["population"]["neural"]["models"]["minilm-l6-v2"] = {"dtype": "bfloat16"}
    monkeypatch.setattr(ar, "cpu_flags", lambda cpuinfo=None: {"avx512_bf16"})
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    native = neural_settings(c, "minilm-l6-v2")
    k = neural_index_key(c, "vaswani", "minilm-l6-v2")
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    assert (native["arithmetic"], neural_settings(c, "minilm-l6-v2")["arithmetic"]) == ("cpu-native", "cpu-emulated")
    assert neural_index_key(c, "vaswani", "minilm-l6-v2") != k
    assert "arithmetic" not in neural_settings(_config(), "minilm-l6-v2")  # float32: the same on every machine
    pytest.importorskip("transformers")
    with pytest.raises(InputError, match="planned in cpu-native arithmetic, but this machine computes them in "
                                         "cpu-emulated"):
        neural.load_model("minilm-l6-v2", threads=1, **native)


def test_max_docs_must_fill_a_ranking():
    c = _config()
    c["population"]["neural"]["max_docs"] = c["retrieval"]["depth"] - 1
    with pytest.raises(InputError, match="population.neural.max_docs"):
        resolve(c, check_ids=False)
    c["population"]["neural"]["max_docs"] = c["retrieval"]["depth"]
    resolve(c, check_ids=False)
