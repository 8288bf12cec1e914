"""The SIGIR 2013 query-model family on hand-made feedback sets."""
import pytest

from irrepro.papers.bv.querymodels import QueryModel, build_query_model, family

Q = ["jaguar"]
FB = [["jaguar", "car"], ["jaguar", "cat"], ["cat", "jungle"]]
SCORES = [0.0, 0.0, 0.0]  # equal scores: uniform document weights under softmax
REL = [False, True, True]


def test_family_names_in_paper_order():
    names = [m.name for m in family([0.1, 0.5], [0.5, 1.0])]
    assert names == ["original", "rm1", "rm3_lambda-0.1", "rm3_lambda-0.5", "rm1_rn-0.5", "rm1_rn-1", "target"]


def test_original_and_rm1():
    assert build_query_model(QueryModel("original"), Q, FB, SCORES, REL) == {"jaguar": 1.0}
    rm1 = build_query_model(QueryModel("rm1"), Q, FB, SCORES, REL)
    # each doc weighs 1/3, each term in a 2-term doc 1/2: jaguar 1/3, cat 1/3, car 1/6, jungle 1/6
    assert rm1 == pytest.approx({"jaguar": 1 / 3, "cat": 1 / 3, "car": 1 / 6, "jungle": 1 / 6})


def test_rm3_interpolates():
    m = build_query_model(QueryModel("rm3", 0.5), Q, FB, SCORES, REL)
    assert m["jaguar"] == pytest.approx(0.5 + 0.5 / 3) and m["car"] == pytest.approx(0.5 / 6)


def test_target_model_eq10_uses_only_relevant_docs_uniformly():
    t = build_query_model(QueryModel("target"), Q, FB, [5.0, 1.0, 0.0], REL)
    assert t == pytest.approx({"jaguar": 0.25, "cat": 0.5, "jungle": 0.25})
    # no relevant feedback document: the original query model is kept
    assert build_query_model(QueryModel("target"), Q, FB, SCORES, [False] * 3) == {"jaguar": 1.0}


def test_removing_nonrelevant_feedback():
    # one non-relevant doc (the first); rn = 1 removes it, rn = 0.4 rounds to 0 removed
    full = build_query_model(QueryModel("rm1"), Q, FB, SCORES, REL)
    assert build_query_model(QueryModel("rm1_rn", 0.4), Q, FB, SCORES, REL) == pytest.approx(full)
    no_n = build_query_model(QueryModel("rm1_rn", 1.0), Q, FB, SCORES, REL)
    assert "car" not in no_n
    assert no_n == pytest.approx(build_query_model(QueryModel("target"), Q, FB, SCORES, REL))
