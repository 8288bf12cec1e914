"""The prepared evaluator of a collection (:class:`irrepro.core.evaluation._Evaluator`) gives exactly the values of
ir_measures evaluating each whole run frame itself (``ir_measures.evaluator(...).iter_calc(frame)``): the run handed
to ir_measures as a dict-of-dict, gdeval run on the top of each ranking only, runs already ranked not sorted again."""
import ir_measures
import numpy as np
import pandas as pd
import pytest

from irrepro.core.evaluation import _dict_of_dict, _Evaluator, _gdeval_run_lines
from irrepro.core.trec import sort_run

MEASURES = ["AP", "nDCG@10", "nDCG@20", "ERR@20", "P@10", "ERR@5", "nDCG(dcg='exp-log2')@5"]


def _collection(seed=0):
    """Qrels grading every retrieved document -1..4 and a run with score ties, some across ranks 5 and 20, a topic
    shorter than the cutoffs, and a judged topic the run does not retrieve."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for t in range(1, 13):
        n = 3 if t == 2 else 60
        docs = [f"d{t}-{i:03d}" for i in range(n)]
        for d in docs:
            qrels.append((str(t), d, int(rng.integers(-1, 5))))
        # scores with one decimal: many ties, some across the cutoffs
        for d in docs:
            run.append((str(t), d, float(np.round(rng.uniform(0, 3), 1))))
    qrels.append(("13", "d13-000", 2))  # judged, not retrieved
    qrels = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    run = pd.DataFrame(run, columns=["query_id", "doc_id", "score"])
    return qrels, run


def _reference(qrels, run, measures):
    """Each measure's per-topic values as ir_measures computes them on the whole frame."""
    q = qrels.assign(relevance=qrels["relevance"].astype(int).clip(lower=0))
    parsed = [ir_measures.parse_measure(m) for m in measures]
    names = dict(zip(parsed, measures))
    got = {(m.query_id, names[m.measure]): float(m.value) for m in ir_measures.evaluator(parsed, q).iter_calc(run)}
    return got


@pytest.mark.parametrize("order", ["ranked", "shuffled", "interleaved"])
def test_same_values_as_ir_measures_on_the_whole_run(order):
    qrels, run = _collection()
    if order == "ranked":
        run = sort_run(run)
    elif order == "shuffled":
        run = run.sample(frac=1, random_state=1).reset_index(drop=True)
    else:  # a topic's rows not contiguous: the frame, not a dict, goes to ir_measures
        run = run.iloc[np.argsort(np.arange(len(run)) % 7, kind="stable")].reset_index(drop=True)
    ref = _reference(qrels, run, MEASURES)
    got = _Evaluator(qrels, MEASURES)(run).set_index(["topic", "measure"])["value"]
    for key, value in ref.items():
        assert got[key] == value, key
    # topics the qrels judge and ir_measures leaves out score 0
    assert {k for k in got.index if k not in ref} <= {(t, m) for t in ("13",) for m in MEASURES}


def test_gdeval_reads_only_the_top_of_each_ranking():
    qrels, run = _collection(seed=3)
    ranked = sort_run(run)
    lines = _gdeval_run_lines(ranked, 20)
    assert len(lines) < len(run)
    kept = pd.DataFrame([line.split() for line in lines], columns=["q", "q0", "d", "r", "s", "tag"])
    for t, grp in ranked.groupby("query_id"):
        mine = kept[kept.q == t]
        assert mine.d.tolist()[: min(20, len(grp))] == grp.doc_id.tolist()[:20]
        if len(grp) >= 20:  # every row tied with the 20th is kept
            assert set(grp[grp.score == grp.score.iloc[19]].doc_id) <= set(mine.d)


def test_dict_of_dict_only_where_it_lists_the_same_run():
    assert _dict_of_dict(["1", "1", "2"], ["a", "b", "a"], [3.0, 2.0, 1.0]) == {"1": {"a": 3.0, "b": 2.0},
                                                                                "2": {"a": 1.0}}
    assert _dict_of_dict(["1", "2", "1"], ["a", "a", "b"], [3.0, 2.0, 1.0]) is None  # topic 1 not contiguous
    assert _dict_of_dict(["1", "1"], ["a", "a"], [3.0, 2.0]) is None  # a document twice
