"""TREC Web diversity intents for VB-Score: synthetic hand-computed cases, then the real 2012 data from the mirror."""
import numpy as np
import pandas as pd
import pytest

from irrepro.papers.vb import diversity as dv
from irrepro.papers.vb import vbscore as vbs
from irrepro.core.trec import read_run, sort_run


def _qrels():
    rows = [
        ("1", "1", "a", 1), ("1", "1", "b", 2), ("1", "2", "c", 1), ("1", "3", "a", 0),  # subtopic 3: no relevant
        ("2", "1", "x", 1), ("2", "2", "y", -2),
    ]
    return pd.DataFrame(rows, columns=["query_id", "iteration", "doc_id", "relevance"])


def _run():
    rows = [("1", "c", 3.0), ("1", "z", 2.0), ("1", "a", 1.0), ("2", "q", 1.0)]
    return sort_run(pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]).assign(rank=0, system="s"))


def test_intents_uniform_and_mass():
    it = dv.intents_from_qrels(_qrels())
    assert list(it.columns) == dv.INTENT_COLUMNS
    assert it[["query_id", "subtopic", "n_rel"]].values.tolist() == [["1", "1", 2], ["1", "2", 1], ["2", "1", 1]]
    assert it["pi_uniform"].tolist() == pytest.approx([0.5, 0.5, 1.0])
    assert it["pi_mass"].tolist() == pytest.approx([2 / 3, 1 / 3, 1.0])
    g = dv.intents_from_qrels(_qrels(), mass="grade")
    assert g["pi_mass"].tolist() == pytest.approx([0.75, 0.25, 1.0])
    hot = dv.intents_from_qrels(_qrels(), temperature=1e6)
    assert hot["pi_mass"].tolist() == pytest.approx([0.5, 0.5, 1.0], abs=1e-5)
    top = dv.intents_from_qrels(_qrels(), top_k=1)
    assert top["pi_mass"].tolist() == pytest.approx([1.0, 0.0, 1.0])


def test_per_topic_es_hand_computed():
    q = _qrels()
    it = dv.intents_from_qrels(q)
    es = dv.per_topic_es(_run(), q, it, ks=[1, 3])

    def get(t, gain, prior, k):
        return es.query("topic == @t and gain == @gain and prior == @prior and k == @k")["es"].item()

    # topic 1: ranking c, z, a. c covers subtopic 2 at rank 1; a covers subtopic 1 at rank 3.
    assert get("1", "binary", "uniform", 1) == pytest.approx(0.5)
    assert get("1", "binary", "mass", 1) == pytest.approx(1 / 3)
    assert get("1", "binary", "uniform", 3) == pytest.approx(1.0)
    # DCG gain of subtopic 1 at k=3: (1/log2 4) / (1 + 1/log2 3) (2 relevant docs); subtopic 2: 1
    g1 = (1 / np.log2(4)) / (1 + 1 / np.log2(3))
    assert get("1", "dcg", "uniform", 3) == pytest.approx(0.5 * g1 + 0.5)
    assert get("1", "dcg", "mass", 3) == pytest.approx(2 / 3 * g1 + 1 / 3)
    # topic 2: the run misses its only intent
    assert get("2", "binary", "uniform", 3) == 0.0
    pooled = dv.pooled_intent_gains(_run(), q, it, 3)
    assert sorted(pooled.tolist()) == [0.0, 1.0, 1.0]


# ------------------------------------------------------------------------------------------- real data (mirror)
@pytest.fixture(scope="module")
def web2012(irds_home):
    topics, qrels = dv.load_diversity("clueweb09/catb/trec-web-2012/diversity")
    return topics, qrels


def test_2012_counts(web2012):
    topics, qrels = web2012
    assert len(topics) == 50
    assert len(qrels) == 38992
    it = dv.intents_from_qrels(qrels)
    assert it["query_id"].nunique() <= 50
    s = it.groupby("query_id")[["pi_uniform", "pi_mass"]].sum()
    assert np.allclose(s, 1.0)


def test_2012_ql_catb_alpha_ndcg_err_ia(web2012, mirror):
    """The toolchain check (ir_measures + pyndeval): Indri QL cat B on the 2012 diversity qrels."""
    _, qrels = web2012
    run = read_run(mirror / "artifacts/trec-web-2012-runs/ql-results-catb.txt", system="ql-catb")
    m = dv.diversity_measures(run, qrels, ["alpha_nDCG@20", "ERR_IA@20"])
    mean = m.groupby("measure")["value"].mean()
    assert mean["alpha_nDCG@20"] == pytest.approx(0.398, abs=5e-4)
    assert mean["ERR_IA@20"] == pytest.approx(0.283, abs=5e-4)


def test_2012_es_matches_a_naive_loop_and_E1(web2012, mirror):
    _, qrels = web2012
    run = read_run(mirror / "artifacts/trec-web-2012-runs/rm-results-catb.txt", system="rm-catb")
    it = dv.intents_from_qrels(qrels)
    es = dv.per_topic_es(run, qrels, it, ks=[1, 3, 5, 10, 20], gains=["binary"], priors=["uniform", "mass"])
    # naive reference: for each topic, the set of subtopics covered in the top-k
    relset = {}
    for q, s, d, r in qrels.itertuples(index=False):
        if r >= 1:
            relset.setdefault((q, d), set()).add(s)
    for topic in ["151", "160", "175", "199"]:
        tin = it[it.query_id == topic]
        docs = run[run.query_id == topic].sort_values("rank").doc_id.tolist()
        for k in [1, 5, 20]:
            covered = set().union(*[relset.get((topic, d), set()) for d in docs[:k]])
            for prior in ["uniform", "mass"]:
                want = sum(p for s, p in zip(tin.subtopic, tin[f"pi_{prior}"]) if s in covered)
                got = es.query("topic == @topic and prior == @prior and k == @k")["es"].item()
                assert got == pytest.approx(want)
    # E1 on real data: binary ES nondecreasing in k for every topic and prior
    wide = es.pivot_table(index=["topic", "prior"], columns="k", values="es")
    assert (np.diff(wide.to_numpy(), axis=1) >= -1e-12).all()
    # and VB_1 can be negative on real topics (A1's range claim fails on data too)
    assert (vbs.vb_score(es["es"], 1.0) < 0).any()
