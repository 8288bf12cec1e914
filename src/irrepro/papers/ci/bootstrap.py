"""The empirical bootstrap CI of the mean metric, resampling queries (Sec. 7 baseline): the basic bootstrap of the
paper and the authors' code (default), or the percentile interval."""
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


BOOTSTRAPS = ("basic", "percentile")


def bootstrap_ci(values, alpha=0.05, n_boot=10_000, *, rng, kind="basic"):
    """Empirical bootstrap CI of the mean of per-query values, resampling QUERIES (Sec. 7 baseline).

    ``values`` (..., n): the n human per-query metric values ``U(q_1..q_n)``; leading axes are independent
    repetitions.  For each row (C order) ``rng.integers(0, n, size=(n_boot, n))`` draws the resamples; with
    ``q_p`` the ``p`` quantile (``numpy.quantile``, linear interpolation) of the ``n_boot`` resample means and
    ``m`` the sample mean (the estimate, ``Û_emp``, Eq. 7):

    * ``kind="basic"`` (default; the paper's "empirical bootstrap", the authors' ``methods.bootstrap``: the mean
      minus the quantiles of δ = resample mean − m): ``[2m − q_{1−α/2}, 2m − q_{α/2}]``;
    * ``kind="percentile"``: ``[q_{α/2}, q_{1−α/2}]``.

    The two agree for a symmetric bootstrap distribution; on right-skewed per-query DCG the percentile interval
    sits further right, i.e. misses low true means more often.
    """
    if kind not in BOOTSTRAPS:
        raise InputError(f"bootstrap_ci: kind must be one of {BOOTSTRAPS}, got {kind!r}")
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
    est = v.mean(axis=-1)
    low, high = low.reshape(lead), high.reshape(lead)
    if kind == "basic":
        low, high = 2 * est - high, 2 * est - low
    return Interval(est, low, high)
