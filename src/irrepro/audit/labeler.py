"""The audit of one labeler on one collection: both populations (the systems as they are, and the same systems
re-ranked by the judge), scored by humans and by labels, then their rankings and their decisions compared."""
from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from irrepro.audit.decisions import decision_audit, pair_decisions, spread
from irrepro.audit.rankings import ranking_audit
from irrepro.audit.rerank import condensed, expected_grade, judge_reranked
from irrepro.core.scores import to_matrix
from irrepro.selfpref.scores import label_score_tables

def population_runs(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame, labels: pd.DataFrame, depth: int, *,
                    judged_only: bool) -> dict:
    """``{population: {system: run}}``: the runs on the queries of ``qrels`` (the labeler's: its sample, if any) as
    they are (condensed to each query's judged documents when ``judged_only``) and the same runs' top ``depth``
    re-ranked by the labels' expected grade."""
    queries = set(qrels.query_id.astype(str))
    runs = {s: r[r.query_id.astype(str).isin(queries)] for s, r in runs.items()}
    base = {s: condensed(r, qrels) if judged_only else r for s, r in runs.items()}
    grades = expected_grade(labels)
    return {"as-is": base, "judge-reranked": {s: judge_reranked(r, grades, depth) for s, r in base.items()}}


def audit_labeler(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame, labels: pd.DataFrame, measures, *,
                  collection: str, labeler: str, depth: int, judged_only: bool, label_gain: str | None = None,
                  tops=(5, 10, 20), n_boot: int = 1000, seed: int = 0, alpha: float = 0.05, stats: dict) -> dict:
    """``{"scores": by-labels table of the systems as they are, "humans": their by-humans table on the same topics,
    "rankings": ..., "decisions": ..., "pairs": ..., "means": ...}`` for one collection and labeler. ``labels``
    covers every system's top ``depth`` (the pool); ``stats``: :func:`irrepro.stats.compare.compare`'s settings
    (tests, corrections, alpha, n_permutations, n_bootstrap, seed)."""
    key = {"collection": collection, "labeler": labeler}
    ranks, decisions, pairs, means, scores, humans = [], [], [], [], None, None
    for population, pruns in population_runs(runs, qrels, labels, depth, judged_only=judged_only).items():
        by_h, by_l = label_score_tables(pruns, qrels, labels, measures, collection=collection, label_gain=label_gain)
        if population == "as-is":
            scores, humans = by_l, by_h
        for m in measures:
            H, L = to_matrix(by_h, m), to_matrix(by_l, m)
            L = L.loc[H.index, H.columns]
            tag = {**key, "measure": m, "population": population}
            ranks.append(ranking_audit(H.to_numpy(), L.to_numpy(), tops=tops, n_boot=n_boot, seed=seed,
                                       alpha=alpha).assign(**tag))
            d = pair_decisions(H, L, **stats)
            pairs.append(d.assign(**tag))
            decisions.append(decision_audit(d, stats, topics=len(H)).assign(**tag, **spread(H.to_numpy(),
                                                                                             L.to_numpy())))
            means.append(pd.DataFrame({**tag, "system": H.columns, "humans": H.mean().to_numpy(),
                                       "labels": L.mean().to_numpy()}))
    first = ["collection", "labeler", "measure", "population"]

    def ordered(frames):
        t = pd.concat(frames, ignore_index=True)
        return t[first + [c for c in t.columns if c not in first]]
    return {"scores": scores, "humans": humans, "rankings": ordered(ranks), "decisions": ordered(decisions),
            "pairs": ordered(pairs), "means": ordered(means)}
