"""How far computed labels agree with human grades, and the seeded query sample that keeps the
default run's label stage small.

:func:`agreement` compares each labeler's label distributions p_r (the labels table) with the human grades of the
same pairs (``labels/<collection>/pairs.tsv``): Spearman's ρ between the expected grade E[r] = Σ_r r · p_r and the
human grade, Cohen's κ between the most probable grade argmax_r p_r and the human grade,

    κ = (p_o − p_e) / (1 − p_e),   p_o = Σ_r C_rr / n,   p_e = Σ_r (Σ_s C_rs / n)(Σ_s C_sr / n),

C the confusion matrix (rows: human grade, columns: argmax grade; human grades above the prompt's G − 1 counted as
G − 1), the share of exact agreement p_o, Kendall's τ_b between E[r] and the human grade (ties in both counted),
the quadratically weighted κ_w = 1 − Σ w_rs C_rs / Σ w_rs E_rs with w_rs = (r − s)² / (G − 1)² and E the
chance-expected matrix (near misses between neighbouring grades cost little), and the mean over queries of the
per-query Spearman ρ (what decides how a labeler *ranks* a query's documents; queries whose human grades or
expected grades are all equal have no ρ and are left out, their count in ``ranked_queries``).
:func:`agreement_table` puts the summaries of every collection beside each labeler's speed. :func:`sample_queries`
keeps a seeded random subset of queries.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from irrepro.errors import InputError


def sample_queries(pairs: pd.DataFrame, max_queries: int | None, seed: int) -> pd.DataFrame:
    """The rows of ``pairs`` whose ``query_id`` is among ``max_queries`` queries drawn without replacement
    (``numpy.random.default_rng(seed)`` over the sorted query ids); all rows when ``max_queries`` is None or at
    least the number of queries. Row order is kept."""
    if max_queries is None:
        return pairs
    if int(max_queries) < 1:
        raise InputError(f"max_queries {max_queries!r}: expected a positive integer or null")
    qids = np.array(sorted(pairs["query_id"].astype(str).unique()))
    if len(qids) <= int(max_queries):
        return pairs
    keep = set(np.random.default_rng(int(seed)).choice(qids, size=int(max_queries), replace=False).tolist())
    return pairs[pairs["query_id"].astype(str).isin(keep)]


def cohen_kappa(confusion: np.ndarray) -> float:
    """Cohen's κ of a square confusion matrix (NaN when chance agreement is 1)."""
    c = np.asarray(confusion, dtype=float)
    n = c.sum()
    if n == 0:
        return float("nan")
    po = np.trace(c) / n
    pe = float((c.sum(1) / n) @ (c.sum(0) / n))
    return float("nan") if pe >= 1 else float((po - pe) / (1 - pe))


def weighted_kappa(confusion: np.ndarray) -> float:
    """Quadratically weighted κ of a square confusion matrix (NaN when the chance-expected disagreement is 0)."""
    c = np.asarray(confusion, dtype=float)
    n, G = c.sum(), len(c)
    if n == 0 or G < 2:
        return float("nan")
    r = np.arange(G)
    w = (r[:, None] - r[None, :]) ** 2 / (G - 1) ** 2
    e = np.outer(c.sum(1), c.sum(0)) / n
    den = float((w * e).sum())
    return float("nan") if den == 0 else float(1.0 - (w * c).sum() / den)


def per_query_spearman(query_ids, expected, human) -> tuple[float, int]:
    """``(mean ρ, queries)``: Spearman's ρ between expected and human grades within each query, averaged over the
    queries where both vary."""
    from scipy.stats import spearmanr

    t = pd.DataFrame({"q": np.asarray(query_ids), "e": np.asarray(expected, float), "h": np.asarray(human, float)})
    rhos = [spearmanr(g.e, g.h).statistic for _, g in t.groupby("q", sort=False)
            if g.e.nunique() > 1 and g.h.nunique() > 1]
    return (float(np.mean(rhos)) if rhos else float("nan")), len(rhos)


def agreement(labels: pd.DataFrame, pairs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(summary, confusion)`` for every labeler of ``labels`` (columns ``labeler, query_id, doc_id, p_0…``)
    against the human ``relevance`` of ``pairs`` (``query_id, doc_id, relevance``).

    ``summary``: ``labeler, pairs, queries, spearman, kendall_tau_b, kappa, weighted_kappa, exact,
    per_query_spearman, ranked_queries, mean_expected, mean_human`` (one row per labeler, in order of appearance); ``confusion``: ``labeler, human`` and one column ``pred_<r>`` per grade
    (counts). A labeled pair without a human grade is an error.
    """
    from scipy.stats import kendalltau, spearmanr

    cols = sorted((c for c in labels.columns if c.startswith("p_") and c[2:].isdigit()), key=lambda c: int(c[2:]))
    G = len(cols)
    if G < 2:
        raise InputError(f"labels table has no grade columns p_0, p_1, ...: {list(labels.columns)}")
    human = pairs.assign(query_id=pairs.query_id.astype(str), doc_id=pairs.doc_id.astype(str))
    human = human.set_index(["query_id", "doc_id"])["relevance"]
    rows, conf = [], []
    for name, t in labels.groupby("labeler", sort=False):
        key = pd.MultiIndex.from_arrays([t.query_id.astype(str), t.doc_id.astype(str)])
        h = human.reindex(key)
        if h.isna().any():
            raise InputError(f"labeler {name!r}: {int(h.isna().sum())} labelled pairs have no human grade")
        h = np.clip(h.to_numpy(dtype=int), 0, G - 1)
        p = t[cols].to_numpy(dtype=float)
        expected = p @ np.arange(G)
        pred = p.argmax(1)
        c = np.zeros((G, G), dtype=int)
        np.add.at(c, (h, pred), 1)
        varies = np.ptp(expected) > 0 and np.ptp(h) > 0
        rho = spearmanr(expected, h).statistic if varies else float("nan")
        tau = kendalltau(expected, h, variant="b").statistic if varies else float("nan")
        pq, nq = per_query_spearman(t.query_id.astype(str), expected, h)
        rows.append({"labeler": name, "pairs": len(t), "queries": t.query_id.nunique(), "spearman": float(rho),
                     "kendall_tau_b": float(tau), "kappa": cohen_kappa(c), "weighted_kappa": weighted_kappa(c),
                     "exact": float(np.trace(c) / max(c.sum(), 1)), "per_query_spearman": pq, "ranked_queries": nq,
                     "mean_expected": float(expected.mean()), "mean_human": float(h.mean())})
        conf.append(pd.DataFrame(c, columns=[f"pred_{r}" for r in range(G)]).assign(labeler=name, human=range(G)))
    confusion = pd.concat(conf, ignore_index=True)
    confusion = confusion[["labeler", "human"] + [f"pred_{r}" for r in range(G)]]
    return pd.DataFrame(rows), confusion


def agreement_table(summaries: dict, timings: dict) -> pd.DataFrame:
    """Every labeler × collection in one table: ``collection, labeler, pairs, queries, spearman, kendall_tau_b,
    weighted_kappa, per_query_spearman, pairs_per_s`` from ``summaries`` (collection -> :func:`agreement` summary)
    and ``timings`` ((collection, labeler) -> the label job's timing record: ``pairs_per_s`` is None where the job
    labelled nothing new (served from the cache) or read a label file)."""
    rows = []
    for c, summary in summaries.items():
        for r in summary.to_dict("records"):
            t = timings.get((c, r["labeler"])) or {}
            rows.append({"collection": c, "labeler": r["labeler"], "pairs": r["pairs"], "queries": r["queries"],
                         "spearman": r["spearman"], "kendall_tau_b": r["kendall_tau_b"],
                         "weighted_kappa": r["weighted_kappa"], "per_query_spearman": r["per_query_spearman"],
                         "pairs_per_s": t.get("pairs_per_s")})
    return pd.DataFrame(rows)
