"""RM1/RM3 on hand-computed examples, and RM3 end to end on a tiny hand-made PISA index."""
import pandas as pd
import pytest

from irrepro.retrieval import rm3
from irrepro.retrieval.pisa import System, build_index, expand_queries, run_system


def test_query_model():
    assert rm3.query_model(["a", "b", "a"]) == {"a": 2 / 3, "b": 1 / 3}
    assert rm3.query_model([]) == {}


def test_relevance_model_by_hand():
    # d1 = [a a b] weight 0.75; d2 = [b c] weight 0.25
    # P(a) ∝ .75*2/3 = .5 ; P(b) ∝ .75/3 + .25/2 = .375 ; P(c) ∝ .25/2 = .125 ; total 1
    m = rm3.relevance_model([["a", "a", "b"], ["b", "c"]], [0.75, 0.25], n_terms=10)
    assert m == pytest.approx({"a": 0.5, "b": 0.375, "c": 0.125})
    # truncation to 2 terms renormalises: a .5/.875, b .375/.875
    m2 = rm3.relevance_model([["a", "a", "b"], ["b", "c"]], [0.75, 0.25], n_terms=2)
    assert m2 == pytest.approx({"a": 0.5 / 0.875, "b": 0.375 / 0.875})
    # stopwords are removed before P(w|d) is estimated
    m3 = rm3.relevance_model([["the", "a"]], [1.0], n_terms=5, stopwords={"the"})
    assert m3 == {"a": 1.0}


def test_interpolate():
    q = {"a": 1.0}
    e = {"a": 0.5, "b": 0.5}
    assert rm3.interpolate(q, e, 0.5) == pytest.approx({"a": 0.75, "b": 0.25})
    assert rm3.interpolate(q, e, 1.0) == {"a": 1.0}
    assert rm3.interpolate(q, e, 0.0) == pytest.approx(e)
    with pytest.raises(ValueError):
        rm3.interpolate(q, e, 1.5)


def test_feedback_weights():
    assert rm3.feedback_weights([3.0, 1.0]).tolist() == pytest.approx([0.75, 0.25])
    assert rm3.feedback_weights([0.0, 0.0], "uniform").tolist() == [0.5, 0.5]
    w = rm3.feedback_weights([0.0, -1.0], "softmax")
    assert w.sum() == pytest.approx(1) and w[0] > w[1]
    with pytest.raises(ValueError):
        rm3.feedback_weights([1.0], "bogus")


DOCS = {
    "d1": "jaguar speed cat cat",
    "d2": "jaguar cat habitat jungle",
    "d3": "cat jungle predator",
    "d4": "car engine speed",
    "d5": "engine oil",
}


def test_rm3_on_tiny_index(tmp_path):
    idx = build_index(({"docno": k, "text": v} for k, v in DOCS.items()), tmp_path / "idx")
    topics = pd.DataFrame({"query_id": ["q1"], "text": ["jaguar"]})
    base = run_system(idx, System("bm25", (("k1", 1.2), ("b", 0.75))), topics, depth=10)
    assert set(base.doc_id) == {"d1", "d2"}  # only documents containing 'jaguar'
    first = base.rename(columns={"query_id": "qid", "doc_id": "docno"})
    exp = expand_queries(topics, first, lambda ids: {i: DOCS[i] for i in ids}, fb_docs=2, fb_terms=3, lam=0.5)
    toks = exp.query_toks.iloc[0]
    # 'cat' is the most frequent feedback term; the expansion keeps the query term and adds it
    assert "jaguar" in toks and "cat" in toks and len(toks) <= 4
    assert sum(toks.values()) == pytest.approx(1.0)
    rm = run_system(idx, System("bm25", (("k1", 1.2), ("b", 0.75)), (2, 3, 0.5)), topics, depth=10,
                    doc_text=lambda ids: {i: DOCS[i] for i in ids})
    # expansion retrieves d3, which shares no term with the query
    assert "d3" in set(rm.doc_id)
    assert not ({"d4", "d5"} & set(rm.doc_id)) or rm.set_index("doc_id").loc["d3", "score"] > 0
