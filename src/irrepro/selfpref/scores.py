"""The two per-topic score tables of a population of systems, by human qrels and by a labeler's labels, computed by
the CI paper's evaluator (:mod:`irrepro.papers.ci.systems`)."""
from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from irrepro.core.scores import normalise_scores
from irrepro.errors import InputError


def label_score_tables(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame, labels: pd.DataFrame, measures, *,
                       collection: str, label_gain: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(by_humans, by_labels)``: the canonical per-topic score tables of the systems of ``runs`` on every judged
    topic of ``qrels``, by the qrels and by the ``labels`` table (``query_id, doc_id, p_0 .. p_{G-1}``, a label
    for every pair in some system's top k).

    Computed as ``ci.systems`` computes them (:mod:`irrepro.papers.ci.systems`): ``measures`` are ``DCG@k`` /
    ``nDCG@k`` with gain ``2^r − 1``; the human value of a topic is its DCG@k on the qrels' grades (unjudged = 0;
    as ``ir_measures`` gives it), the labels' value the same sum over the predicted gains of the ranked documents
    (``label_gain``: :data:`irrepro.papers.ci.metric.LABEL_GAINS`, default the CI analyses' ``2^{E_P[r]} − 1``).
    nDCG divides the human values by the qrels' ideal DCG@k and the labels' values by the ideal DCG@k of the
    predicted gains of the topic's pool (every system's top k), so the label table reads no qrels — and a
    system's nDCG by labels depends on which systems are in ``runs``: pass the whole population. The labels' grade
    scale must reach the qrels' top grade (:func:`irrepro.papers.ci.systems.check_grade_scale`).
    """
    from irrepro.papers.ci import systems as ci
    from irrepro.papers.ci.metric import DEFAULT_LABEL_GAIN
    from irrepro.papers.ci.ranking import grade_columns

    if not runs:
        raise InputError("label_score_tables: no runs")
    label_gain = DEFAULT_LABEL_GAIN if label_gain is None else label_gain
    measures = [measures] if isinstance(measures, str) else list(measures)
    if not measures:
        raise InputError("label_score_tables: measures is empty")
    parsed = {m: ci.parse_measure(m) for m in measures}
    queries = ci.judged_queries(qrels)
    ci.check_grade_scale(qrels, len(grade_columns(labels)))
    names = [str(s) for s in runs]
    top = max(k for _, k in parsed.values())
    runs = {n: _cut(r, top) for n, r in zip(names, runs.values())}  # nothing deeper than the largest k is read
    human, lab = [], []
    for k in sorted({k for _, k in parsed.values()}):
        arrays = {s: ci.system_arrays(runs[s], qrels, labels, queries, k, label_gain) for s in names}
        ideal_t = ci.ideal_dcg(qrels, queries, k)
        ideal_p = ci.pool_ideal_pred(ci.systems_pairs(runs, qrels, k), labels, queries, k, label_gain)
        for m in (m for m in measures if parsed[m][1] == k):
            for s in names:
                a = ci.measure_arrays(arrays[s], m, ideal_t, ideal_p)
                base = {"collection": collection, "system": s, "topic": queries, "measure": m}
                human.append(pd.DataFrame({**base, "value": a["u_true"]}))
                lab.append(pd.DataFrame({**base, "value": a["u_pred"]}))
    return (normalise_scores(pd.concat(human, ignore_index=True)),
            normalise_scores(pd.concat(lab, ignore_index=True)))


def _cut(run: pd.DataFrame, k: int) -> pd.DataFrame:
    """The rows of ``run`` within each query's ``k`` best ranks (``rank`` column; ties at the k-th rank kept)."""
    r = run.assign(query_id=run["query_id"].astype(str))
    return r[r.groupby("query_id")["rank"].rank(method="min") <= int(k)]
