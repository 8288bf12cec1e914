"""The judge as a ranker: every system's top k re-ranked by the labeler's expected grade E_P[r] = Σ_r r · p_r, ties
kept in the system's own order. When systems use the judge (an LLM re-ranker that is also the evaluation's LLM
judge), the evaluation grades its own ranking: Clarke & Dietz (2024) found Kendall τ 0.89 over 75 TREC DL systems
falling to top-10 τ 0.38 and top-5 τ −0.40 once every system re-ranks with the judge. Auditing this population
the same way as the systems as they are shows how far a study of judge-using systems can trust the judge."""
from __future__ import annotations

import numpy as np
import pandas as pd

from irrepro.errors import InputError


def expected_grade(labels: pd.DataFrame) -> pd.Series:
    """E_P[r] of each labelled pair, indexed by (query_id, doc_id): ``labels`` has ``p_0 .. p_{G-1}``."""
    cols = sorted((c for c in labels.columns if c.startswith("p_") and c[2:].isdigit()), key=lambda c: int(c[2:]))
    if not cols:
        raise InputError("labels without grade columns p_0 .. p_{G-1}")
    P = labels[cols].to_numpy(dtype=float)
    e = (P * np.arange(len(cols))).sum(axis=1) / P.sum(axis=1)
    idx = pd.MultiIndex.from_arrays([labels.query_id.astype(str), labels.doc_id.astype(str)])
    return pd.Series(e, index=idx).groupby(level=[0, 1]).first()


def judge_reranked(run: pd.DataFrame, grades: pd.Series, k: int) -> pd.DataFrame:
    """``run`` (``query_id, doc_id, rank``) cut to each query's top ``k`` and re-ranked by ``grades``
    (:func:`expected_grade`), best first, ties in the run's order; ranks renumbered 1.., ``score`` the expected
    grade. A ranked pair without a label is an error naming it."""
    r = run.assign(query_id=run.query_id.astype(str), doc_id=run.doc_id.astype(str))
    r = r[r.groupby("query_id")["rank"].rank(method="first") <= int(k)]
    g = grades.reindex(pd.MultiIndex.from_arrays([r.query_id, r.doc_id])).to_numpy()
    if np.isnan(g).any():
        missing = r.loc[np.isnan(g), ["query_id", "doc_id"]].head(3).to_records(index=False).tolist()
        raise InputError(f"{int(np.isnan(g).sum())} ranked pairs have no label, e.g. {missing}")
    r = r.assign(score=g).sort_values(["query_id", "score", "rank"], ascending=[True, False, True], kind="mergesort")
    r["rank"] = r.groupby("query_id").cumcount() + 1
    return r.reset_index(drop=True)


def condensed(run: pd.DataFrame, qrels: pd.DataFrame) -> pd.DataFrame:
    """``run`` restricted to the documents judged for each query, ranks renumbered 1.. in the run's order: the
    judged-only reading (humans and labels then see the same documents; Sakai's condensed lists)."""
    judged = set(zip(qrels.query_id.astype(str), qrels.doc_id.astype(str)))
    r = run.assign(query_id=run.query_id.astype(str), doc_id=run.doc_id.astype(str))
    r = r[[p in judged for p in zip(r.query_id, r.doc_id)]].sort_values(["query_id", "rank"], kind="mergesort")
    r["rank"] = r.groupby("query_id").cumcount() + 1
    return r.reset_index(drop=True)
