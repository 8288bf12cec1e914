"""The ranking that gets labelled, label arrays, and Table 1's rankers (Oosterhuis et al., KDD 2024)."""
import numpy as np
import pandas as pd
import pytest

from irrepro.errors import InputError
from irrepro.papers.ci.intervals import dcg_weights
from irrepro.papers.ci.ranking import label_matrix, labelled_ranking, per_query_dcg, table1

RUN = pd.DataFrame({"query_id": ["1"] * 4 + ["2"] * 3 + ["3"] * 2,
                    "doc_id": ["a", "b", "c", "d", "e", "f", "g", "h", "i"],
                    "rank": [1, 2, 3, 4, 1, 2, 3, 1, 2]})
QRELS = pd.DataFrame({"query_id": ["1", "1", "1", "2", "2"], "doc_id": ["b", "d", "x", "e", "g"],
                      "relevance": [2, 1, 3, -1, 1]})


def test_labelled_ranking_unjudged_as_zero_and_judged_only():
    p = labelled_ranking(RUN, QRELS, depth=3)
    assert p.query_id.tolist() == ["1", "1", "1", "2", "2", "2"]  # query 3 has no judgments
    assert p.doc_id.tolist() == ["a", "b", "c", "e", "f", "g"]
    assert p.relevance.tolist() == [0, 2, 0, 0, 0, 1]  # unjudged and negative grades are 0
    j = labelled_ranking(RUN, QRELS, depth=3, judged_only=True)
    assert j.doc_id.tolist() == ["b", "d", "e", "g"] and j["rank"].tolist() == [1, 2, 1, 2]
    with pytest.raises(InputError):
        labelled_ranking(RUN, QRELS.assign(query_id="9"), depth=3)


def _labels(pairs, g=4, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(g), size=len(pairs))
    lab = pairs[["query_id", "doc_id"]].copy()
    for i in range(g):
        lab[f"p_{i}"] = p[:, i]
    return lab


def test_label_matrix_shapes_mask_and_missing_label():
    pairs = labelled_ranking(RUN, QRELS, depth=3, judged_only=True)
    lab = _labels(pairs)
    qids, grades, dists, mask = label_matrix(pairs, lab)
    assert qids == ["1", "2"] and grades.shape == (2, 2) and dists.shape == (2, 2, 4)
    assert grades.tolist() == [[2, 1], [0, 1]] and mask.all()
    np.testing.assert_allclose(dists.sum(-1), 1)
    with pytest.raises(InputError, match="no label"):
        label_matrix(pairs, lab.iloc[1:])
    with pytest.raises(InputError, match="grades"):
        label_matrix(pairs.assign(relevance=5), lab)


def test_table1_by_hand():
    # one query, candidates in BM25 order with human grades [0, 3, 1]; the labeler is sure of grades [1, 0, 3]
    grades = np.array([[0, 3, 1]])
    dists = np.eye(4)[[[1, 0, 3]]].astype(float)
    mask = np.ones((1, 3), bool)
    d = dcg_weights(3)
    t = table1(grades, dists, mask, k=10)
    h, llm = np.array([0, 7, 1.0]), np.array([1, 0, 7.0])
    assert t["BM25"]["human"] == pytest.approx(h @ d) and t["BM25"]["llm"] == pytest.approx(llm @ d)
    assert t["Perfect"]["human"] == pytest.approx(np.array([7, 1, 0]) @ d)
    assert t["Perfect"]["llm"] == pytest.approx(np.array([0, 7, 1]) @ d)
    assert t["LLM"]["human"] == pytest.approx(np.array([1, 0, 7]) @ d)  # LLM order: c, a, b
    assert t["LLM"]["llm"] == pytest.approx(np.array([7, 1, 0]) @ d)
    assert t["Random"]["human"] == pytest.approx(h.mean() * d.sum())
    # the perfect ranking is the best by human labels; the LLM's own ranking the best by its labels
    assert t["Perfect"]["human"] >= max(v["human"] for v in t.values()) - 1e-12
    assert t["LLM"]["llm"] >= max(v["llm"] for v in t.values()) - 1e-12


def test_random_ranker_is_the_mean_over_permutations():
    rng = np.random.default_rng(3)
    grades = rng.integers(0, 4, size=(2, 5))
    mask = np.array([[True] * 5, [True] * 3 + [False] * 2])
    grades[~mask] = 0
    dists = np.eye(4)[grades].astype(float)
    t = table1(grades, dists, mask, k=2)
    import itertools
    vals = []
    for q in range(2):
        c = [2.0 ** grades[q, i] - 1 for i in range(5) if mask[q, i]]
        vals.append(np.mean([np.array(p[:2]) @ dcg_weights(2) for p in itertools.permutations(c)]))
    assert t["Random"]["human"] == pytest.approx(np.mean(vals))


def test_per_query_dcg_padding_adds_nothing():
    grades = np.array([[3, 0], [1, 0]])
    mask = np.array([[True, True], [True, False]])
    dists = np.eye(4)[grades].astype(float)
    true, pred = per_query_dcg(grades, dists, mask, k=10)
    np.testing.assert_allclose(true, [7.0, 1.0])
    np.testing.assert_allclose(pred, true)


def test_label_matrix_renormalises_rounded_labels_and_rejects_non_distributions():
    pairs = labelled_ranking(RUN, QRELS, depth=3, judged_only=True)
    lab = _labels(pairs).round(6)  # as written with 6 digits: sums off by up to ~1e-6
    lab.loc[0, "p_0"] += 2e-6
    _, _, dists, _ = label_matrix(pairs, lab)
    np.testing.assert_allclose(dists.sum(-1), 1, atol=1e-12)
    bad = lab.copy()
    bad.loc[1, "p_1"] += 0.1
    with pytest.raises(InputError, match="sums to"):
        label_matrix(pairs, bad)
