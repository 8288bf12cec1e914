"""Conformal risk control, the dual calibration of λ_low and λ_high (Oosterhuis et al., KDD 2024, Eqs. 20–25),
the CRC interval (Eq. 20) and per-query CRC (Secs. 6.2, 8.4).

Vectorisation (Eq. 24): the M calibration batches ``Q̄_i`` (Sec. 6.2) are index arrays into the ``n`` calibration
queries.  Because the batch metric is a mean, ``Û_CRC(Q̄_i, λ) − U(Q̄_i) = (C (û_λ − u))_i / b`` with ``C`` the
``M × n`` matrix of how often each query occurs in each batch, ``û_λ`` the per-query CRC values and ``u`` the
human values.  Each step of the search therefore costs one matrix product; instead of bisecting one λ at a time the
search evaluates a grid of ``grid`` λ values in one matrix–matrix product per round (a (grid+1)-ary search), and
after the first round only the batches whose loss can still change inside the bracket; it returns the same λ as
bisection to the requested tolerance ``tol``.  The literal per-batch loop (bisection) is the test reference
``tests/reference_crc.py`` (benchmark: ``tests/bench_calibration.py``).  The products are small: on a busy
machine run with one BLAS thread (``OPENBLAS_NUM_THREADS=1``, or Snakemake ``threads: 1``).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from irrepro.errors import InputError
from irrepro.papers.ci.bootstrap import Interval
from irrepro.papers.ci.crc import _CRCKernel, _crc_u
from irrepro.papers.ci.metric import (_LOSS_RTOL, _check_alpha, _check_dist, _check_values, _gain_spec,
                                      _query_weights)


class CRCCalibration(NamedTuple):
    """Result of the dual calibration (Eq. 24).

    ``lam_low``/``lam_high`` ∈ [−1, 1] (NaN when that bound cannot be met); ``failed`` is True when either is NaN
    ("the method explicitly fails to provide a CI", Sec. 5.2); ``bound`` the right-hand side of Eq. 24;
    ``risk_low``/``risk_high`` the empirical risks at the returned λ (each < ``bound``; for a side that failed, the
    risk at its best end λ = ∓1, which is ≥ ``bound``); ``n_batches`` M.
    """
    lam_low: float
    lam_high: float
    failed: bool
    bound: float
    risk_low: float
    risk_high: float
    n_batches: int


def crc_bound(alpha, size):
    """Right-hand side of Eq. 24: ``½ (α − (1 − α)/size)`` — Eq. 15's ``α − (B − α)/n`` with B = 1, halved for the
    two-sided interval (Eq. 22).  ``size`` is M (Eq. 24 as printed) or the number of calibration queries n."""
    return 0.5 * (alpha - (1.0 - alpha) / size)


def sample_batches(n, n_batches=10_000, batch_size=None, *, rng):
    """M calibration batches ``Q̄_i`` of ``batch_size`` (default n) queries drawn with replacement from the n
    calibration queries (Sec. 6.2): an int array (M, batch_size) of indices, ``rng.integers(0, n, (M, b))``."""
    n = int(n)
    if n < 1:
        raise InputError(f"sample_batches: need n >= 1 calibration queries, got {n}")
    b = n if batch_size is None else int(batch_size)
    return np.random.default_rng(rng).integers(0, n, size=(int(n_batches), b))


def single_query_batches(n):
    """The per-query calibration batches ``Q̄_i = {q_i}`` (Sec. 6.2; M = n): ``arange(n)[:, None]``."""
    return np.arange(int(n))[:, None]


def _calibration_inputs(u_true, dists, batches, alpha, weights, gain, correction, label_gain, check_batches=True):
    alpha = _check_alpha(alpha)
    u = _check_values(u_true, "u_true", ndim=1)
    P = _check_dist(dists, "dists", min_ndim=3)
    if P.ndim != 3 or P.shape[0] != u.size:
        raise InputError(f"calibration: dists must have shape (n, depth, G) with n = len(u_true) = {u.size}, "
                         f"got {P.shape}")
    w = _query_weights(weights, P.shape[0], P.shape[1])
    g = _gain_spec(gain, P.shape[-1], label_gain)
    B = np.asarray(batches)
    if B.ndim != 2 or B.shape[0] < 1 or B.shape[1] < 1 or not np.issubdtype(B.dtype, np.integer):
        raise InputError(f"batches must be a 2-d int array (M, batch_size) of query indices, got {B.shape} "
                         f"{B.dtype}")
    if check_batches and ((B < 0).any() or (B >= u.size).any()):
        raise InputError(f"batches: query indices must lie in 0..{u.size - 1}")
    if correction == "batches":
        size = B.shape[0]
    elif correction == "queries":
        size = u.size
    else:
        raise InputError(f"correction must be 'batches' (Eq. 24 as printed: M) or 'queries' (Eq. 15: n), got "
                         f"{correction!r}")
    return alpha, u, P, w, g, B, crc_bound(alpha, size)


def _finish(lam_low, lam_high, risk_low, risk_high, bound, M):
    failed = bool(np.isnan(lam_low) or np.isnan(lam_high))
    return CRCCalibration(float(lam_low), float(lam_high), failed, float(bound), float(risk_low), float(risk_high),
                          int(M))


def _smallest_feasible(D0, lams0, thr, tol, grid, evaluate):
    """Smallest λ with ``#{i: D_i(λ) < 0} < thr`` where every ``D_i`` is non-decreasing in λ.

    ``D0`` (L0, M): D at the increasing grid ``lams0`` (first −1, last 1) for the M batches;
    ``evaluate(rows, lams)`` returns D (L, A) of the given batches at the given λ.  A (grid+1)-ary search on the
    bracket [infeasible, feasible]; only the *active* batches — those whose sign can still change inside the
    bracket — are re-evaluated, so after the first (full) product each round touches a shrinking fraction of the
    M batches.
    Returns ``(λ, count at λ)``; ``(nan, count at λ = 1)`` when no λ ∈ [−1, 1] is feasible.
    """
    cnt = (D0 < 0).sum(axis=1)
    ok = cnt < thr
    if not ok[-1]:
        return np.nan, cnt[-1]
    k = int(np.argmax(ok))
    if k == 0:
        return lams0[0], cnt[0]
    lo, hi, r_hi = lams0[k - 1], lams0[k], cnt[k]
    d_lo, d_hi = D0[k - 1], D0[k]
    rows = np.flatnonzero((d_lo < 0) & (d_hi >= 0))    # sign may change inside (lo, hi]
    base = int((d_hi < 0).sum())                        # losses throughout the bracket
    frac = np.arange(1, grid + 1) / (grid + 1)
    d_lo, d_hi = d_lo[rows], d_hi[rows]
    while hi - lo > tol and rows.size:
        lams = lo + (hi - lo) * frac
        D = evaluate(rows, lams)                        # (grid, A)
        c = base + (D < 0).sum(axis=1)
        ok = np.flatnonzero(c < thr)
        k = int(ok[0]) if ok.size else grid             # first feasible grid point (grid: none, hi stays)
        if k < grid:
            hi, r_hi, d_hi = lams[k], c[k], D[k]
        if k > 0:
            lo, d_lo = lams[k - 1], D[k - 1]
        keep = (d_lo < 0) & (d_hi >= 0)
        base += int((d_hi < 0).sum())
        rows, d_lo, d_hi = rows[keep], d_lo[keep], d_hi[keep]
    return hi, r_hi


def _batch_offsets(M, n):
    """``arange(M)[:, None] * n``: row i's offset into the flattened (M, n) count matrix (kept for the last shape:
    an experiment calibrates many times with the same M and n)."""
    key = (int(M), int(n))
    if _OFFSETS.get("key") != key:
        _OFFSETS.update(key=key, off=np.arange(M)[:, None] * n)
    return _OFFSETS["off"]


_OFFSETS: dict = {}


def batch_counts(batches, n):
    """``C`` (M, n) float: how often each of the n calibration queries occurs in each of the M batches (the matrix
    the calibration multiplies by; computed once where several label sets are calibrated on the same batches)."""
    B = np.asarray(batches)
    M = B.shape[0]
    return np.bincount((_batch_offsets(M, n) + B).ravel(), minlength=M * n).reshape(M, n).astype(float)


def calibrate_crc(u_true, dists, batches, alpha=0.05, *, weights=None, gain=None, correction="batches", tol=1e-6,
                  grid=15, label_gain="expected_gain", check_batches=True, counts=None):
    """Dual CRC calibration of ``λ_low`` and ``λ_high`` (Eqs. 22–24), vectorised over batches and λ.

    ``u_true`` (n,) human per-query values ``U(q)`` of the calibration queries, ``dists`` (n, depth, G) their LLM
    label distributions, ``batches`` (M, b) int indices into the n queries (:func:`sample_batches`, or
    :func:`single_query_batches` for per-query CIs).  With the losses of Eq. 23,

    * ``λ_high`` = the smallest λ ∈ [−1, 1] with ``(1/M) Σ_i 1[Û_CRC(Q̄_i, λ) < U(Q̄_i)] < bound``,
    * ``λ_low``  = the largest  λ ∈ [−1, 1] with ``(1/M) Σ_i 1[Û_CRC(Q̄_i, λ) > U(Q̄_i)] < bound``,

    where ``bound = ½(α − (1 − α)/M)`` (Eq. 24 as printed, ``correction="batches"``) or ``½(α − (1 − α)/n)``
    (``correction="queries"``: Eq. 15's finite-sample term counts the n distinct calibration queries, which is
    what the resampled batches are drawn from).  ``check_batches=False`` skips the range check of the indices (for
    batches drawn by the caller with ``rng.integers(0, n, ...)``, which lie in range); ``counts``: their
    :func:`batch_counts`, where the caller has them already.  λ = ±1 are the limits of
    :func:`perturb`.  If even λ = 1
    (resp. −1) cannot meet the bound (e.g. bound ≤ 0 because M or n is too small), that λ is NaN and ``failed``
    is True.

    Search: both risks are monotone in λ (μ̂_CRC is non-decreasing in λ), so a (grid+1)-ary search brackets each λ
    to ``tol`` (the returned λ is the feasible end of the bracket, so it always meets its bound; it equals the
    bisection of the per-batch loop (``tests/reference_crc.py``) to within ``tol``).  The first round evaluates ``grid + 2`` λ for all
    M batches in one (M × n)·(n × (grid+2)) product (``C``: query counts per batch); later rounds only the
    batches whose loss can still change inside the bracket.
    """
    alpha, u, P, w, g, B, bound = _calibration_inputs(u_true, dists, batches, alpha, weights, gain, correction,
                                                      label_gain, check_batches)
    M, b = B.shape
    n = u.size
    grid = int(grid)
    if grid < 1:
        raise InputError(f"grid must be >= 1, got {grid}")
    # C[i, j] = how often query j occurs in batch i; b·(Û_CRC(Q̄_i, λ) − U(Q̄_i)) = (C (û_λ − u))_i
    C = batch_counts(B, n) if counts is None else counts
    thr = bound * M   # risk < bound  ⇔  number of losses < bound·M

    kernel = _CRCKernel(P, w, *g)

    # a batch whose Û_CRC equals U up to rounding (e.g. one-hot labels equal to the truth) is no loss either way
    atol = _LOSS_RTOL * b * max(1.0, float(np.abs(u).max()))

    def evaluate(rows, lams, sign=1.0):
        X = kernel(sign * lams) - u                    # (L, n) per-query Û_CRC(q, λ) − U(q)
        Cr = C if rows is None else C[rows]
        D = sign * (X @ Cr.T)                          # (L, A)
        D[np.abs(D) <= atol] = 0.0
        return D

    lams0 = np.linspace(-1.0, 1.0, grid + 2)           # symmetric: −lams0[::-1] == lams0
    D0 = evaluate(None, lams0)
    # λ_high: loss 1[D < 0], D non-decreasing in λ → smallest feasible λ
    lam_high, c_high = _smallest_feasible(D0, lams0, thr, tol, grid, evaluate)
    # λ_low: loss 1[D > 0]; with λ' = −λ and D' = −D it is the same search: λ_low = −(smallest feasible λ')
    lam_low, c_low = _smallest_feasible(-D0[::-1], lams0, thr, tol, grid,
                                        lambda rows, lams: evaluate(rows, lams, -1.0))
    return _finish(-lam_low, lam_high, c_low / M, c_high / M, bound, M)


def crc_interval(dists, calibration, *, weights=None, gain=None, axis_mean=True, label_gain="expected_gain"):
    """CRC confidence interval ``C(Q, λ_high, λ_low) = [Û_CRC(Q, λ_low), Û_CRC(Q, λ_high)]`` (Eq. 20).

    ``dists`` (n, depth, G) of the queries Q to bound (no human labels needed), ``calibration`` from
    :func:`calibrate_crc`.  ``axis_mean=True``: dataset-level interval of the mean metric over Q (scalars);
    ``False``: one interval per query (arrays (n,)).  The estimate is the LLM prediction ``Û(Q) = Û_CRC(Q, 0)``.

    If the two searches cross (``λ_low > λ_high``, possible only where Û_CRC is flat in λ, e.g. one-hot labels) the
    interval spans ``[Û_CRC(min λ), Û_CRC(max λ)]``, which meets both calibrated constraints.  A failed calibration
    gives NaN bounds.
    """
    P = _check_dist(dists, "dists", min_ndim=3)
    if P.ndim != 3:
        raise InputError(f"crc_interval: dists must have shape (n, depth, G), got {P.shape}")
    w = _query_weights(weights, P.shape[0], P.shape[1])
    g = _gain_spec(gain, P.shape[-1], label_gain)
    lo_l, hi_l = calibration.lam_low, calibration.lam_high
    if calibration.failed:
        est = _crc_u(P, np.zeros(1), w, *g)[0]
        nan = np.full_like(est, np.nan)
        if axis_mean:
            return Interval(float(est.mean()), np.nan, np.nan)
        return Interval(est, nan, nan.copy())
    lams = np.array([min(lo_l, hi_l), max(lo_l, hi_l), 0.0])
    v = _crc_u(P, lams, w, *g)
    if axis_mean:
        v = v.mean(axis=1)
        return Interval(float(v[2]), float(v[0]), float(v[1]))
    return Interval(v[2], v[0], v[1])


def crc_per_query(u_true_cal, dists_cal, dists_test, alpha=0.05, *, weights_cal=None, weights_test=None, gain=None,
                  tol=1e-6, grid=15, label_gain="expected_gain"):
    """Per-query CRC intervals (Secs. 6.2, 7, 8.4): λ calibrated on the n single-query batches ``Q̄_i = {q_i}``
    (M = n, so the bound is ``½(α − (1 − α)/n)``), then one interval ``[Û_CRC(q, λ_low), Û_CRC(q, λ_high)]`` per
    test query.  Returns ``(Interval of arrays (n_test,), CRCCalibration)``; with n ≤ (1 − α)/α calibration
    queries the bound is ≤ 0 and the calibration fails (NaN intervals).
    """
    u = np.asarray(u_true_cal)
    cal = calibrate_crc(u, dists_cal, single_query_batches(u.size), alpha, weights=weights_cal, gain=gain,
                        correction="batches", tol=tol, grid=grid, label_gain=label_gain)
    return (crc_interval(dists_test, cal, weights=weights_test, gain=gain, axis_mean=False, label_gain=label_gain),
            cal)
