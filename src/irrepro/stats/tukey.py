"""Randomised Tukey HSD (Carterette 2012, "Multiple testing in statistical analysis of systems-based information
retrieval experiments", TOIS 30(1); Sakai 2018, "Laboratory Experiments in Information Retrieval", Sec. 4.4).

The null hypothesis of every pair at once is that system labels are exchangeable within each topic. One resample
permutes each row (topic) of the topic-by-system matrix independently and records the range of the system means,
max − min. The p-value of a pair with observed mean difference δ is (1 + #{range ≥ |δ|}) / (1 + R): the family-wise
error rate over all pairs is controlled, so the p-value is already adjusted and is at least the unadjusted paired
randomisation test's p-value (up to Monte-Carlo error). The simultaneous (1 − α) interval of every δ is
δ ± the (1 − α) quantile of the ranges.
"""
from __future__ import annotations

import numpy as np

#: floats of one block of permuted matrices (R_block × T × S)
BLOCK_FLOATS = 4_000_000


def permutation_ranges(X: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """The max − min of the system means of ``n_resamples`` matrices, each row of ``X`` (T × S) permuted
    independently."""
    X = np.asarray(X, dtype=float)
    T, S = X.shape
    step = max(1, BLOCK_FLOATS // (T * S))
    out = np.empty(n_resamples)
    for s in range(0, n_resamples, step):
        r = min(step, n_resamples - s)
        arr = np.broadcast_to(X, (r, T, S)).copy()
        rng.permuted(arr, axis=2, out=arr)
        means = arr.mean(axis=1)  # r × S
        out[s:s + r] = means.max(axis=1) - means.min(axis=1)
    return out


def tukey_p(ranges: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """p-values of observed differences ``delta`` from the resampled ranges."""
    r = np.sort(np.asarray(ranges))
    a = np.abs(np.asarray(delta, dtype=float))
    a = a - 1e-14 * np.maximum(a, 1.0)
    count = r.size - np.searchsorted(r, a, side="left")  # #{range >= |delta|}
    return (count + 1) / (r.size + 1)


def tukey_hsd(X: np.ndarray, a: np.ndarray, b: np.ndarray, n_resamples: int, rng: np.random.Generator,
              alpha: float):
    """(p, half_width): p-value of each pair (a[i], b[i]) (column indices of ``X``) and the half-width of the
    simultaneous (1 − alpha) interval."""
    ranges = permutation_ranges(X, n_resamples, rng)
    means = np.asarray(X, dtype=float).mean(axis=0)
    return tukey_p(ranges, means[a] - means[b]), float(np.quantile(ranges, 1 - alpha))
