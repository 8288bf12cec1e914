"""Summaries of the CI experiments over their repetitions: mean width with its spread, coverage with a Wilson
interval (the numbers behind Figs 2-4 of Oosterhuis et al., KDD 2024), and the cluster-robust interval of a coverage
pooled over clusters of correlated intervals (:func:`clustered_proportion`)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from irrepro.errors import InputError


def summarise(runs: pd.DataFrame, by: str) -> pd.DataFrame:
    """Per method and setting: mean width with its 95% prediction interval over runs (2.5/97.5 percentiles),
    coverage with a 95% Wilson interval, and the share of runs where the method gave no interval (CRC with too
    few queries)."""
    rows = []
    for (m, x), d in runs.groupby(["method", by], sort=True):
        ok = d["width"].notna()
        w = d.loc[ok, "width"].to_numpy()
        cov = d["covered"].fillna(False).astype(bool).to_numpy()
        k, n = int(cov.sum()), len(cov)
        lo, hi = wilson(k, n)
        rows.append({"method": m, by: x, "runs": n, "failed": int((~ok).sum()),
                     "width": float(w.mean()) if len(w) else np.nan,
                     "width_lo": float(np.percentile(w, 2.5)) if len(w) else np.nan,
                     "width_hi": float(np.percentile(w, 97.5)) if len(w) else np.nan,
                     "coverage": k / n if n else np.nan, "coverage_lo": lo, "coverage_hi": hi})
    return pd.DataFrame(rows)


def wilson(k: int, n: int, z: float = 1.959963984540054):
    """95% Wilson score interval of a binomial proportion k/n."""
    if n == 0:
        return np.nan, np.nan
    p = k / n
    den = 1 + z * z / n
    c = (p + z * z / (2 * n)) / den
    h = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return float(c - h), float(c + h)


def clustered_proportion(covered, intervals, level: float = 0.95):
    """``(low, high)``: the cluster-robust interval of a proportion pooled over clusters, e.g. the coverage of
    intervals from several draws whose intervals within a draw are correlated (they share the draw's queries).

    ``covered``, ``intervals``: per cluster d, the successes k_d and trials n_d (clusters with n_d = 0 are left
    out; D is the number of the others). The estimate is the ratio p = Σ k_d / Σ n_d, its cluster-robust (sandwich)
    variance ``D/(D−1) · Σ_d (k_d − p·n_d)² / (Σ_d n_d)²``, and the interval ``p ± t_{D−1} · sqrt(var)`` (the
    two-sided ``level`` quantile of Student's t with D − 1 degrees of freedom) clipped to [0, 1]. Only the spread
    of the clusters' residuals enters, so trials that move together within a cluster count about as one, not as
    n_d independent ones (the binomial / Wilson interval over all trials would treat them as independent).

    When that variance is 0 — one cluster (D = 1: no between-cluster spread to estimate), p of 0 or 1 (every
    residual is 0), or every cluster with the same proportion — the interval would have width 0. Then it is the
    Wilson interval (:func:`wilson`, at ``level``) of p·D successes (not necessarily an integer) of D trials:
    the clusters are taken as the independent units, which is what the data can show when all trials of a cluster
    may move together (the effective sample size lies between D and Σ n_d; D is its conservative end). ``(NaN,
    NaN)`` when no cluster has a trial."""
    from irrepro.core.quantiles import norm_ppf, t_ppf

    k = np.asarray(covered, dtype=float).ravel()
    n = np.asarray(intervals, dtype=float).ravel()
    if k.shape != n.shape:
        raise InputError(f"covered and intervals differ in length: {k.size} and {n.size}")
    keep = n > 0
    k, n = k[keep], n[keep]
    D, N = len(n), float(n.sum())
    if D == 0:
        return np.nan, np.nan
    p = float(k.sum()) / N
    r = k - p * n
    var = D / (D - 1) * float(r @ r) / N ** 2 if D > 1 else 0.0
    q = 1 - (1 - level) / 2
    if var <= 1e-12 * p * (1 - p) / N:  # 0 up to rounding, relative to the binomial variance
        return wilson(p * D, D, z=float(norm_ppf(q)))
    h = float(t_ppf(q, D - 1)) * np.sqrt(var)
    return float(max(p - h, 0.0)), float(min(p + h, 1.0))
