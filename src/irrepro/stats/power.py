"""Discriminative power and swap rates of a collection.

- Discriminative power (Sakai 2006, "Evaluating evaluation metrics based on the bootstrap", SIGIR): the share of
  system pairs a test finds significant at α, per test and correction, read off the per-pair table.
- Swap rate (Voorhees & Buckley 2002, "The effect of topic set size on retrieval experiment error", SIGIR;
  Sanderson & Zobel 2005): two disjoint random subsets of n topics each; a pair swaps when its mean difference has
  opposite signs on the two subsets. ``swap_rate`` is the share of (pair, repetition) that swap among those with a
  non-zero difference on both subsets; ``swap_rate_significant`` the share that swap among the pairs the paired
  t-test finds significant at α on the first subset (a significant conclusion reversed by other topics).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from irrepro.core.quantiles import t_ppf


def discriminative_power(table: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Per test and correction: pairs, significant pairs, and their share. Unadjusted p-values count as
    correction ``none`` for every test."""
    rows = []
    for test, g in table.groupby("test", sort=False):
        first = g[g["correction"] == g["correction"].iloc[0]]
        if test != "tukey":
            rows.append({"test": test, "correction": "none", "pairs": len(first),
                         "significant": int((first["p_value"] < alpha).sum())})
        for corr, h in g.groupby("correction", sort=False):
            if corr == "none" and test != "tukey":
                continue
            rows.append({"test": test, "correction": corr, "pairs": len(h),
                         "significant": int((h["p_adjusted"] < alpha).sum())})
    out = pd.DataFrame(rows, columns=["test", "correction", "pairs", "significant"])
    out["share"] = out["significant"] / out["pairs"].where(out["pairs"] > 0)
    return out


def swap_rates(X: np.ndarray, a: np.ndarray, b: np.ndarray, sizes, repetitions: int, rng: np.random.Generator,
               alpha: float) -> pd.DataFrame:
    """Swap rates of the pairs (a[i], b[i]) of ``X`` (T × S) for each subset size n ≤ T / 2 (larger sizes are left
    out: two disjoint subsets would not fit)."""
    X = np.asarray(X, dtype=float)
    T = X.shape[0]
    rows = []
    for n in sorted(int(s) for s in sizes):
        if 2 * n > T or n < 2:
            continue
        swaps = counted = sig = sig_swaps = 0
        crit = t_ppf(1 - alpha / 2, n - 1)
        for _ in range(repetitions):
            perm = rng.permutation(T)
            A, B = X[perm[:n]], X[perm[n:2 * n]]
            DA = A[:, a] - A[:, b]
            dA, dB = DA.mean(axis=0), B[:, a].mean(axis=0) - B[:, b].mean(axis=0)
            both = (dA != 0) & (dB != 0)
            flip = both & (np.sign(dA) != np.sign(dB))
            swaps += int(flip.sum())
            counted += int(both.sum())
            sd = DA.std(axis=0, ddof=1)
            # p < alpha  <=>  |t| > the t quantile (no p-value needed); constant non-zero differences: significant
            s = np.where(sd > 0, np.abs(dA) * np.sqrt(n) > crit * sd, dA != 0)
            sig += int(s.sum())
            sig_swaps += int((s & flip).sum())
        rows.append({"subset_size": n, "repetitions": repetitions, "pairs": len(a),
                     "swap_rate": swaps / counted if counted else np.nan,
                     "significant_per_repetition": sig / repetitions,
                     "swap_rate_significant": sig_swaps / sig if sig else np.nan})
    return pd.DataFrame(rows, columns=["subset_size", "repetitions", "pairs", "swap_rate",
                                       "significant_per_repetition", "swap_rate_significant"])
