"""The empirical (percentile) bootstrap CI of the mean metric, resampling queries (Sec. 7 baseline)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from irrepro.errors import InputError
from irrepro.papers.ci.metric import _check_alpha, _check_values


class Interval(NamedTuple):
    """A confidence interval ``[low, high]`` with its point estimate (arrays for vectorised calls)."""
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray


def bootstrap_ci(values, alpha=0.05, n_boot=10_000, *, rng):
    """Empirical (percentile) bootstrap CI of the mean of per-query values, resampling QUERIES (Sec. 7 baseline).

    ``values`` (..., n): the n human per-query metric values ``U(q_1..q_n)``; leading axes are independent
    repetitions.  For each row (C order) ``rng.integers(0, n, size=(n_boot, n))`` draws the resamples; the interval
    is the ``α/2`` and ``1 − α/2`` quantiles (``numpy.quantile``, linear interpolation) of the ``n_boot`` resample
    means; the estimate is the sample mean (``Û_emp``, Eq. 7).
    """
    alpha = _check_alpha(alpha)
    v = _check_values(values, "values")
    if v.ndim < 1 or v.shape[-1] < 1:
        raise InputError(f"bootstrap_ci: values must have shape (..., n) with n >= 1, got {v.shape}")
    n_boot = int(n_boot)
    if n_boot < 1:
        raise InputError(f"bootstrap_ci: n_boot must be >= 1, got {n_boot}")
    rng = np.random.default_rng(rng)
    n = v.shape[-1]
    flat = v.reshape(-1, n)
    low = np.empty(flat.shape[0])
    high = np.empty(flat.shape[0])
    for i, row in enumerate(flat):
        idx = rng.integers(0, n, size=(n_boot, n))
        means = row[idx].mean(axis=1)
        low[i], high[i] = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    lead = v.shape[:-1]
    return Interval(v.mean(axis=-1), low.reshape(lead), high.reshape(lead))
