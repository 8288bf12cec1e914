"""Evaluating a ranking with human and with LLM labels (Oosterhuis et al., KDD 2024, Sec. 3 and Table 1).

The pieces between the label stage and the confidence intervals (``irrepro.papers.ci.intervals``):

* :func:`labelled_ranking` — the ranking whose pairs are labelled: a system's run, optionally restricted to each
  query's judged documents ("each approach ranks the top-100 results retrieved by BM25"), cut at ``depth``, with
  the human grade of every pair (unjudged = 0, negative grades = 0);
* :func:`label_matrix` — the label distributions of those pairs as a ``(queries, depth, G)`` array with a mask;
* :func:`table1` — DCG@k of the Random, BM25 (the run's order), LLM (by the labeler's predicted gain) and Perfect
  (by the human grade) rankers of each query's candidates, measured with human labels (Eq. 1) and with the
  labeler's predicted gain (Eq. 6).

Conventions (the paper's Sec. 7): DCG@k with gain ``2^r - 1`` and discount ``1/log2(rank + 1)``. The predicted
gain of a pair is set by ``label_gain`` (:data:`irrepro.papers.ci.metric.LABEL_GAINS`): by default
``2^{E_P[r]} - 1``, the gain of the expected grade, as the authors' code computes it; ``"expected_gain"`` gives the
text's Eq. 5, the expected gain ``sum_r P(r|d,q) (2^r - 1)``. Ties in a re-ranking are broken by the original
rank, so every table is deterministic.
"""
from __future__ import annotations

from irrepro.papers.ci.metric import DEFAULT_LABEL_GAIN

import numpy as np
import pandas as pd

from irrepro.core.gain import dcg_weights, exp_gain
from irrepro.errors import InputError

PAIR_COLUMNS = ["query_id", "doc_id", "rank", "relevance"]


def labelled_ranking(run: pd.DataFrame, qrels: pd.DataFrame, depth: int, judged_only: bool = False,
                     queries=None) -> pd.DataFrame:
    """The top ``depth`` documents of each judged query of ``run`` with their human grades.

    ``run``: ``query_id, doc_id, rank`` (irrepro.core.trec.read_run); ``qrels``: ``query_id, doc_id, relevance``.
    Only queries with at least one judgment are kept (a query without judgments has no human truth). With
    ``judged_only`` the run is first restricted to the documents judged for that query, so every pair has a human
    grade (and a precomputed label from a file of labels on the judged pairs). ``queries``: keep these queries
    instead (a topic set of which the qrels judge some): a query the qrels do not judge has no grade (NaN), an
    unjudged document of a judged query grade 0. Returns ``query_id, doc_id, rank, relevance`` with ranks renumbered
    ``1..`` per query, sorted by query and rank.
    """
    if depth < 1:
        raise InputError(f"depth must be >= 1, got {depth}")
    q = qrels[["query_id", "doc_id", "relevance"]].copy()
    q["query_id"] = q["query_id"].astype(str)
    q["doc_id"] = q["doc_id"].astype(str)
    q = q.groupby(["query_id", "doc_id"], as_index=False)["relevance"].max()  # diversity qrels: one row per subtopic
    r = run[["query_id", "doc_id", "rank"]].copy()
    r["query_id"] = r["query_id"].astype(str)
    r["doc_id"] = r["doc_id"].astype(str)
    if queries is None:
        r = r[r.query_id.isin(set(q.query_id))]
        if r.empty:
            raise InputError("no query of the run has judgments in the qrels")
    else:
        r = r[r.query_id.isin({str(x) for x in queries})]
        if r.empty:
            raise InputError("no query of the run is among the topics' queries")
    r = r.merge(q, on=["query_id", "doc_id"], how="inner" if judged_only else "left")
    if queries is None:
        r["relevance"] = r["relevance"].fillna(0).clip(lower=0).astype(int)
    else:
        judged = r.query_id.isin(set(q.query_id))
        r["relevance"] = r["relevance"].astype(float).clip(lower=0).where(~judged | r.relevance.notna(), 0.0)
    r = r.sort_values(["query_id", "rank", "doc_id"], kind="mergesort")
    r["rank"] = r.groupby("query_id").cumcount() + 1
    r = r[r["rank"] <= depth]
    return r[PAIR_COLUMNS].reset_index(drop=True)


def grade_columns(labels: pd.DataFrame) -> list[str]:
    """The ``p_0 .. p_{G-1}`` columns of a labels frame, in grade order."""
    cols = sorted((c for c in labels.columns if c.startswith("p_") and c[2:].isdigit()), key=lambda c: int(c[2:]))
    if not cols or [int(c[2:]) for c in cols] != list(range(len(cols))):
        raise InputError("a labels table needs columns p_0 .. p_G (a distribution over grades 0..G)")
    return cols


def label_matrix(pairs: pd.DataFrame, labels: pd.DataFrame, depth: int | None = None):
    """Arrange ``pairs`` (from :func:`labelled_ranking`) and their label distributions as arrays.

    Distributions must sum to 1 within 1e-3 (a table written with 6 digits sums to 1 only up to rounding) and are
    renormalised exactly; anything else is an error naming the pair.

    Returns ``(query_ids, grades, dists, mask)``: ``grades`` int ``(N, depth)`` human grades, ``dists`` float
    ``(N, depth, G)`` label distributions, ``mask`` bool ``(N, depth)`` (False past a query's last document; there
    grades are 0 and dists put all mass on grade 0, so the slot contributes nothing to DCG). A pair without a
    label is an error naming it.
    """
    cols = grade_columns(labels)
    lab = labels[["query_id", "doc_id"] + cols].copy()
    lab["query_id"] = lab["query_id"].astype(str)
    lab["doc_id"] = lab["doc_id"].astype(str)
    m = pairs.merge(lab, on=["query_id", "doc_id"], how="left")
    missing = m[cols[0]].isna()
    if missing.any():
        ex = m.loc[missing, ["query_id", "doc_id"]].head(3).to_records(index=False).tolist()
        raise InputError(f"{int(missing.sum())} ranked pairs have no label, e.g. (query, doc) {ex}")
    probs = m[cols].to_numpy(dtype=float)
    sums = probs.sum(axis=1)
    bad = ~np.isfinite(sums) | (np.abs(sums - 1) > 1e-3) | (probs < 0).any(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"the label distribution of (query {m.query_id.iloc[i]!r}, doc {m.doc_id.iloc[i]!r}) sums to "
                         f"{sums[i]:.6g}: expected non-negative p_0..p_{len(cols) - 1} summing to 1")
    m[cols] = probs / sums[:, None]  # labels written with a few digits sum to 1 only up to rounding
    depth = int(depth or m["rank"].max())
    m = m[m["rank"] <= depth]
    qids = sorted(m.query_id.unique(), key=_natural)
    qi = {q: i for i, q in enumerate(qids)}
    n, g = len(qids), len(cols)
    grades = np.zeros((n, depth), dtype=int)
    dists = np.zeros((n, depth, g))
    dists[:, :, 0] = 1.0
    mask = np.zeros((n, depth), dtype=bool)
    rows = m.query_id.map(qi).to_numpy()
    ranks = m["rank"].to_numpy() - 1
    grades[rows, ranks] = m.relevance.to_numpy()
    dists[rows, ranks] = m[cols].to_numpy(dtype=float)
    mask[rows, ranks] = True
    if grades.max(initial=0) >= g:
        raise InputError(f"human grades go up to {grades.max()} but the labels have only {g} grades (p_0..p_{g-1})")
    return qids, grades, dists, mask


def _natural(q):
    return (0, int(q), q) if str(q).isdigit() else (1, 0, str(q))


def _dcg(gains_sorted: np.ndarray, k: int) -> np.ndarray:
    """DCG@k of rows of gains already in ranked order (N, depth)."""
    kk = min(k, gains_sorted.shape[1])
    return gains_sorted[:, :kk] @ dcg_weights(kk)


def _rerank(key: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per query, the permutation sorting the candidates by ``key`` descending (ties: original rank); padded
    slots last."""
    k = np.where(mask, key, -np.inf)
    # lexsort: last key is primary; stable on the original rank through the index
    idx = np.arange(key.shape[1])[None, :].repeat(key.shape[0], 0)
    return np.lexsort((idx, -k), axis=1)


def _pred_gain(dists: np.ndarray, mask: np.ndarray, label_gain: str) -> np.ndarray:
    """Each pair's predicted gain (0 where masked): ``E_P[2^r − 1]`` or ``2^{E_P[r]} − 1``
    (:data:`irrepro.papers.ci.metric.LABEL_GAINS`)."""
    g = np.arange(dists.shape[-1])
    if label_gain == "expected_gain":
        pred = dists @ exp_gain(g)
    elif label_gain == "gain_of_expected_grade":
        pred = exp_gain(dists @ g)
    else:
        raise InputError(f"label_gain must be 'expected_gain' or 'gain_of_expected_grade', got {label_gain!r}")
    return np.where(mask, pred, 0.0)


def table1(grades: np.ndarray, dists: np.ndarray, mask: np.ndarray, k: int = 10,
           label_gain: str = DEFAULT_LABEL_GAIN) -> dict[str, dict[str, float]]:
    """Mean DCG@k of four rankers of each query's candidates, by human labels and by the labeler (Table 1).

    Rankers: ``Random`` (the expected DCG@k of a uniformly random order of the candidates: each of the first k
    ranks holds the mean gain of the candidates — exact, no sampling), ``BM25`` (the candidates' given order),
    ``LLM`` (descending predicted gain under ``dists``, per ``label_gain``), ``Perfect`` (descending human grade). Returns
    ``{ranker: {"human": value, "llm": value}}``; "human" uses gains ``2^grade - 1``, "llm" the predicted gain
    (``label_gain``: ``2^{E_P[r]} − 1``, the authors' code and the default, or ``E_P[2^r − 1]``, the text).
    """
    human = np.where(mask, exp_gain(grades), 0.0)
    pred = _pred_gain(dists, mask, label_gain)
    cnt = np.maximum(mask.sum(1), 1)
    out = {}
    for name, key in (("BM25", None), ("LLM", pred), ("Perfect", human)):
        if key is None:
            order = np.arange(grades.shape[1])[None, :].repeat(grades.shape[0], 0)
        else:
            order = _rerank(key, mask)
        h = np.take_along_axis(human, order, 1)
        p = np.take_along_axis(pred, order, 1)
        out[name] = {"human": float(_dcg(h, k).mean()), "llm": float(_dcg(p, k).mean())}
    # Random: E[gain at any rank] = mean gain of the candidates; ranks beyond the candidate count hold nothing.
    disc = dcg_weights(min(k, grades.shape[1]))
    filled = np.arange(1, len(disc) + 1)[None, :] <= cnt[:, None]
    w = (filled * disc[None, :]).sum(1)
    out["Random"] = {"human": float((human.sum(1) / cnt * w).mean()), "llm": float((pred.sum(1) / cnt * w).mean())}
    return {r: out[r] for r in ("Random", "BM25", "LLM", "Perfect")}


def per_query_dcg(grades: np.ndarray, dists: np.ndarray, mask: np.ndarray, k: int = 10,
                  label_gain: str = DEFAULT_LABEL_GAIN):
    """Per-query DCG@k of the given order: ``(true, predicted)``, each ``(N,)`` — U(q) (Eq. 1) and Û(q) (Eq. 6)."""
    human = np.where(mask, exp_gain(grades), 0.0)
    pred = _pred_gain(dists, mask, label_gain)
    return _dcg(human, k), _dcg(pred, k)
