"""Confidence intervals for IR evaluation with LLM relevance labels (Oosterhuis, Jagerman, Qin, Wang & Bendersky,
"Reliable Confidence Intervals for Information Retrieval Evaluation Using Generative A.I.", KDD 2024).

Notation (paper → code)
-----------------------
* ``G`` relevance grades ``r ∈ R = {0, …, G−1}``; a *label distribution* ``P̂(R = r | d, q)`` is an array whose last
  axis (length G) sums to one.  Human labels enter as one-hot distributions (:func:`hard_to_dist`).
* gain ``r' = 2^r − 1`` (Sec. 7, "all labels were transformed accordingly") — :func:`gains`; expected gain
  ``μ̂(d) = Σ_r P̂(r|d) r'`` (Eq. 5) — :func:`expected_gain`.
* rank weights ``ω(rank)``; DCG@k: ``ω(x) = 1/log2(x + 1)`` for ``x ≤ k`` (Eq. 1) — :func:`dcg_weights`.
* per-query metric ``U(q) = Σ_d ω(rank(d|q)) μ(d|q)`` (Eq. 1; with predicted labels Û(q), Eq. 6) —
  :func:`query_utility`.  The ranked documents of ``n`` queries are an array ``dists`` of shape
  ``(n, depth, G)``; ``weights`` broadcasts against ``(n, depth)``.  **Padding**: a query with fewer than ``depth``
  ranked documents gets weight 0 at the missing ranks (:func:`truncate_weights`); the padded distributions must
  still be valid (any distribution, e.g. uniform) — they contribute nothing.
* Methods: empirical bootstrap (:func:`bootstrap_ci`), prediction-powered inference (PPI, Eqs. 7–11,
  :func:`ppi_mean_ci`), conformal risk control (CRC, Eqs. 16–25: :func:`perturb`, :func:`crc_expected_gain`,
  :func:`crc_query_utility`, :func:`calibrate_crc`, :func:`crc_interval`, per query :func:`crc_per_query`).
* LLM-label manipulations of Sec. 8.2/8.3: :func:`adversarial_bias` (β) and :func:`oracle_mix` (ζ).
* The experiment protocol of Figs. 2–3 (random 50:50 validation/test splits, ``n`` human-labelled validation
  queries, three methods, many repetitions): :func:`ci_experiment`.

Randomness only through an explicit ``numpy.random.Generator`` (or a seed given to ``numpy.random.default_rng``).
All functions are pure: arrays in, arrays out.  Bad input raises :class:`irrepro.errors.InputError`
(a ``ValueError``) that names the argument and what was expected.

Vectorisation of the CRC calibration (Eq. 24)
---------------------------------------------
The ``M`` calibration batches ``Q̄_i`` (Sec. 6.2) are index arrays into the ``n`` calibration queries.  Because the
batch metric is a mean, ``Û_CRC(Q̄_i, λ) − U(Q̄_i) = (C (û_λ − u))_i / b`` with ``C`` the ``M × n`` matrix of how
often each query occurs in each batch, ``û_λ`` the per-query CRC values and ``u`` the human values.  Each step of
the search therefore costs one matrix product; instead of bisecting one λ at a time (one matrix–vector product per
step) the search evaluates a grid of ``grid`` λ values in one matrix–matrix product per round (a (grid+1)-ary
search), and after the first round only the batches whose loss can still change inside the bracket; it returns
the same λ as bisection to the requested tolerance ``tol``.  :func:`calibrate_crc_loop` is the literal per-batch
implementation (Python loop over batches, bisection) kept as a reference for tests and for
``workflow/scripts/ci/bench_calibration.py``.  The products are small: on a busy machine run with one BLAS
thread (``OPENBLAS_NUM_THREADS=1``, or Snakemake ``threads: 1``).

Readings of the paper worth knowing
-----------------------------------
* Eq. 24 as printed puts the number of *batches* M in the finite-sample term, so with M = 10,000 the bound is
  positive for any n and the dataset-level calibration never fails; ``correction="queries"`` uses the n distinct
  calibration queries instead (Eq. 15's data points), which fails for n ≤ (1 − α)/α.  Per-query calibration
  (M = n) fails for n ≤ (1 − α)/α = 19 at α = 0.05 either way.
* PPI with the paper's Eq. 8 (labelled predictions counted in the mean prediction) and Eq. 10 (no covariance
  term) under-estimates the variance when predictions and errors covary; ``include_labelled=False`` is the
  textbook (ppi_py) interval over disjoint sets.
* In the Figs. 2–3 protocol the target is the mean over the test half, a second sample: every method's interval
  is built for the variation of n validation queries, so coverage of the test-half mean falls as n approaches
  the test-half size (for a Gaussian estimator roughly ``1 − 2Φ(−z/√(1 + n/N_test))``).
"""
from __future__ import annotations

import logging
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

from irrepro.errors import InputError

log = logging.getLogger(__name__)

_TINY = np.finfo(float).tiny
_LOSS_RTOL = 1e-9  # |Û_CRC(Q̄) − U(Q̄)| within this (relative to the largest |U|) counts as equal: no loss
_SUM_TOL = 1e-6


# ====================================================================== metric: ω, gains, Eq. 1/5/6

def dcg_weights(k, depth=None):
    """DCG@k rank weights ``ω(x) = 1/log2(x + 1)`` for ranks ``x = 1..depth`` (Eq. 1 with ω_DCG@K), zero below k.

    ``depth`` defaults to ``k``; a larger ``depth`` pads with zero weights (ranks deeper than the cut-off).
    """
    k = int(k)
    depth = k if depth is None else int(depth)
    if k < 1 or depth < 1:
        raise InputError(f"dcg_weights: k and depth must be >= 1, got k={k}, depth={depth}")
    ranks = np.arange(1, depth + 1, dtype=float)
    return np.where(ranks <= k, 1.0 / np.log2(ranks + 1.0), 0.0)


def truncate_weights(weights, lengths):
    """Per-query weights ``(n, depth)``: ``weights`` (depth,) with zeros at ranks beyond each query's ``lengths``.

    Use this for queries with fewer ranked documents than ``depth`` (their padded label distributions then do not
    count in :func:`query_utility` or any CRC quantity).
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1:
        raise InputError(f"truncate_weights: weights must be 1-d (depth,), got shape {w.shape}")
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or (lengths < 0).any():
        raise InputError("truncate_weights: lengths must be a 1-d array of non-negative ints")
    return np.where(np.arange(w.size)[None, :] < lengths[:, None], w[None, :], 0.0)


def gains(grades):
    """DCG gain ``r' = 2^r − 1`` of grades ``r`` (Sec. 7).  ``gains(np.arange(G))`` is the gain vector of G grades."""
    return np.exp2(np.asarray(grades, dtype=float)) - 1.0


def _gain_vector(gain, G):
    g = gains(np.arange(G)) if gain is None else np.asarray(gain, dtype=float)
    if g.shape != (G,):
        raise InputError(f"gain must have one value per grade (shape ({G},)), got shape {g.shape}")
    if not np.isfinite(g).all():
        raise InputError("gain has NaN/inf values")
    if (np.diff(g) < 0).any():
        raise InputError("gain must be non-decreasing in the grade (CRC's monotonicity in λ relies on it)")
    return g


def _check_dist(dist, name="dist", min_ndim=1):
    P = np.asarray(dist, dtype=float)
    if P.ndim < min_ndim:
        raise InputError(f"{name} must have at least {min_ndim} axes (..., G), got shape {P.shape}")
    if P.shape[-1] < 2:
        raise InputError(f"{name}: the last axis holds the grades and needs G >= 2, got shape {P.shape}")
    if not np.isfinite(P).all():
        raise InputError(f"{name} contains NaN or inf")
    if (P < 0).any():
        raise InputError(f"{name} has negative probabilities")
    s = P.sum(axis=-1)
    if (np.abs(s - 1.0) > _SUM_TOL).any():
        bad = np.unravel_index(np.argmax(np.abs(s - 1.0)), s.shape)
        raise InputError(f"{name}: probabilities over the grades must sum to 1 (±{_SUM_TOL}); "
                         f"at index {tuple(int(i) for i in bad)} they sum to {s[bad]:.6g}")
    return P / s[..., None]


def _check_values(x, name, ndim=None):
    a = np.asarray(x, dtype=float)
    if ndim is not None and a.ndim != ndim:
        raise InputError(f"{name} must be {ndim}-d, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise InputError(f"{name} contains NaN or inf (at {int(np.flatnonzero(~np.isfinite(a.ravel()))[0])} "
                         f"in flattened order)")
    return a


def _check_alpha(alpha):
    a = float(alpha)
    if not (0.0 < a < 1.0):
        raise InputError(f"alpha must lie in (0, 1), got {alpha}")
    return a


def _query_weights(weights, n, depth):
    if weights is None:
        return np.broadcast_to(dcg_weights(depth), (n, depth))
    w = _check_values(weights, "weights")
    try:
        w = np.broadcast_to(w, (n, depth))
    except ValueError:
        raise InputError(f"weights of shape {w.shape} do not broadcast to (n_queries, depth) = {(n, depth)}") \
            from None
    return w


def expected_gain(dist, gain=None):
    """``μ̂(d) = Σ_r P̂(R=r|d) r'`` (Eq. 5, with the DCG gain ``r' = 2^r − 1`` unless ``gain`` is given).

    ``dist`` (..., G) → (...).
    """
    P = _check_dist(dist)
    return P @ _gain_vector(gain, P.shape[-1])


def query_utility(dists, weights=None, gain=None):
    """Per-query metric ``U(q) = Σ_d ω(rank(d|q)) μ(d|q)`` (Eq. 1; Û(q) of Eq. 6 with predicted labels).

    ``dists`` (..., n, depth, G) label distributions of each query's ranked documents (rank 1 first);
    ``weights`` ω broadcastable to (..., n, depth), default DCG over all ``depth`` ranks (zero weight = padding).
    Returns (..., n).
    """
    P = _check_dist(dists, "dists", min_ndim=3)
    g = _gain_vector(gain, P.shape[-1])
    w = dcg_weights(P.shape[-2]) if weights is None else _check_values(weights, "weights")
    try:
        return np.sum((P @ g) * w, axis=-1)
    except ValueError:
        raise InputError(f"weights of shape {np.shape(w)} do not broadcast to dists[..., :, :, 0] "
                         f"{P.shape[:-1]}") from None


# ====================================================================== label distributions

def hard_to_dist(labels, n_grades, smoothing=0.0):
    """One-hot distribution of integer grades, smoothed: ``p = (1 − ε)·onehot(label) + ε/G``.

    Used for labels read from files (human qrels, or an LLM that outputs a single grade).  ``ε = smoothing ∈ [0,1]``;
    ``ε = 0`` is the plain one-hot (the paper's Sec. 9 notes that some smoothing helps CRC).  (...) → (..., G).
    """
    G = int(n_grades)
    if G < 2:
        raise InputError(f"hard_to_dist: n_grades must be >= 2, got {n_grades}")
    eps = float(smoothing)
    if not (0.0 <= eps <= 1.0):
        raise InputError(f"hard_to_dist: smoothing must lie in [0, 1], got {smoothing}")
    lab = np.asarray(labels)
    if not np.issubdtype(lab.dtype, np.integer):
        if not np.isfinite(lab.astype(float)).all() or (lab.astype(float) != np.round(lab.astype(float))).any():
            raise InputError("hard_to_dist: labels must be integer grades (no NaN, no fractions)")
        lab = lab.astype(int)
    if (lab < 0).any() or (lab >= G).any():
        raise InputError(f"hard_to_dist: labels must lie in 0..{G - 1}, got range {lab.min()}..{lab.max()}")
    onehot = (lab[..., None] == np.arange(G)).astype(float)
    return (1.0 - eps) * onehot + eps / G


def adversarial_bias(dist, beta):
    """Adversarially biased labels (Sec. 8.2): ``P̂_β(r) = ((1 − β) P̂(r) + β (1 − P̂(r))) / Z``.

    ``Z = (1 − β) + β (G − 1)`` normalises.  β = 0: unchanged; β = ½: uniform; β = 1: the inverse ``(1 − P̂)/(G − 1)``.
    """
    b = float(beta)
    if not (0.0 <= b <= 1.0):
        raise InputError(f"adversarial_bias: beta must lie in [0, 1], got {beta}")
    P = _check_dist(dist)
    Q = (1.0 - b) * P + b * (1.0 - P)
    return Q / Q.sum(axis=-1, keepdims=True)


def oracle_mix(dist, true_grades, zeta):
    """Oracle-enhanced labels (Sec. 8.3): ``(1 − ζ) P̂ + ζ · onehot(true grade)``; ζ = 1 gives the human labels."""
    z = float(zeta)
    if not (0.0 <= z <= 1.0):
        raise InputError(f"oracle_mix: zeta must lie in [0, 1], got {zeta}")
    P = _check_dist(dist)
    t = np.asarray(true_grades)
    if t.shape != P.shape[:-1]:
        raise InputError(f"oracle_mix: true_grades shape {t.shape} must equal dist.shape[:-1] = {P.shape[:-1]}")
    return (1.0 - z) * P + z * hard_to_dist(t, P.shape[-1])


# ====================================================================== bootstrap

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


# ====================================================================== PPI (Eqs. 7–11)

class PPIInterval(NamedTuple):
    """PPI interval (Eq. 11): ``estimate ± z·se`` with ``se = sqrt(σ̂²_error/n + σ̂²_pred/N)`` (Eq. 10)."""
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    se: np.ndarray


def ppi_mean_ci(y_true, y_pred, y_pred_unlabelled, alpha=0.05, *, include_labelled=True, ddof=1):
    """Prediction-powered CI for the mean metric (Eqs. 8, 10, 11).

    ``y_true`` (..., n) human values ``U(q_i)`` and ``y_pred`` (..., n) predictions ``Û(q_i)`` of the n labelled
    queries; ``y_pred_unlabelled`` (..., N_u) predictions of the queries without human labels.

    The paper's ``Q`` holds N queries, the first n of them labelled, and the mean prediction of Eq. 8 runs over ALL
    N of them: with ``include_labelled=True`` (default, the paper) the prediction set is ``y_pred ∪
    y_pred_unlabelled`` (N = n + N_u).  ``ppi_py.ppi_mean_ci(Y, Yhat, Yhat_unlabeled, lam=1)`` averages the
    predictions over ``Yhat_unlabeled`` only; ``include_labelled=False`` reproduces that convention.

    ``Û_PPI = mean(pred over the N) + mean(U − Û over the n)`` (Eq. 8);
    ``σ̂² = σ̂²_pred/N + σ̂²_error/n`` with sample variances of ``ddof`` (Eq. 10 divides by N − 1 and n − 1: ddof=1;
    ppi_py uses ddof=0); interval ``Û_PPI ± Φ⁻¹(1 − α/2) σ̂`` (Eq. 11, 1.96 for α = 0.05).
    Leading axes are independent repetitions.
    """
    alpha = _check_alpha(alpha)
    yt = _check_values(y_true, "y_true")
    yp = _check_values(y_pred, "y_pred")
    yu = _check_values(y_pred_unlabelled, "y_pred_unlabelled")
    if yt.shape != yp.shape or yt.ndim < 1:
        raise InputError(f"ppi_mean_ci: y_true {yt.shape} and y_pred {yp.shape} must have the same shape (..., n)")
    if yu.ndim != yt.ndim or yu.shape[:-1] != yt.shape[:-1]:
        raise InputError(f"ppi_mean_ci: y_pred_unlabelled {yu.shape} must have the leading shape of y_true "
                         f"{yt.shape[:-1]} and one last axis of unlabelled queries")
    ddof = int(ddof)
    n = yt.shape[-1]
    pred = np.concatenate([yp, yu], axis=-1) if include_labelled else yu
    N = pred.shape[-1]
    if n <= ddof or N <= ddof:
        raise InputError(f"ppi_mean_ci: need more than ddof={ddof} labelled (got n={n}) and prediction (got "
                         f"N={N}) queries")
    err = yt - yp
    est = pred.mean(axis=-1) + err.mean(axis=-1)
    se = np.sqrt(pred.var(axis=-1, ddof=ddof) / N + err.var(axis=-1, ddof=ddof) / n)
    z = stats.norm.ppf(1 - alpha / 2)
    return PPIInterval(est, est - z * se, est + z * se, se)


# ====================================================================== CRC: perturbation (Eqs. 16–19)

def _perturb(P, lam):
    """Unchecked Eqs. 16–18: P (..., G) normalised, lam any shape → lam.shape + P.shape."""
    lam = np.asarray(lam, dtype=float)
    lam_b = lam.reshape(lam.shape + (1,) * P.ndim)
    # keep the top (λ ≥ 0) or bottom (λ < 0) m = 1 − |λ| of the mass, i.e. remove |λ| from the bottom / top.
    # Q_high(r) = P(r) − max(0, min(P(r), λ − Σ_{r'<r} P(r'))) = clip(m − Σ_{r'>r} P(r'), 0, P(r)); Q_low mirrored.
    m = np.maximum(1.0 - np.abs(lam_b), _TINY)   # m = tiny at λ = ±1: the limit (one-hot on the extreme grade > 0)
    csum = np.cumsum(P, axis=-1)
    zero = np.zeros(P.shape[:-1] + (1,))
    below = np.concatenate([zero, csum[..., :-1]], axis=-1)                   # Σ_{r' < r} P(r')
    rc = np.cumsum(P[..., ::-1], axis=-1)[..., ::-1]
    above = np.concatenate([rc[..., 1:], zero], axis=-1)                      # Σ_{r' > r} P(r')
    ref = np.where(lam_b >= 0, above, below)
    Q = np.clip(m - ref, 0.0, P)
    return Q / Q.sum(axis=-1, keepdims=True)                                  # Eq. 17


def perturb(dist, lam):
    """Optimistic / pessimistic label distribution ``P̂_CRC(R=r|d, λ)`` (Eqs. 16–18).

    λ ≥ 0: ``Q̂_high(r) = P̂(r) − max(0, min(P̂(r), λ − Σ_{r'<r} P̂(r')))`` removes λ of probability mass from the
    lowest grades upwards; λ < 0: ``Q̂_low`` removes |λ| from the highest grades downwards; both renormalised
    (Eq. 17).  λ = 0 returns P̂.

    Limits λ → ±1 (all mass removed): the renormalised remainder concentrates on the highest (λ → 1) / lowest
    (λ → −1) grade *that has positive probability*; λ = ±1 returns this limit (no NaN).  With strictly positive
    distributions (softmax scores, or smoothing ε > 0) this is the top / bottom grade, so the metric tends to its
    maximum / minimum possible value as Eq. 21 states.

    ``dist`` (..., G), ``lam`` any shape in [−1, 1] → ``lam.shape + dist.shape``.
    """
    P = _check_dist(dist)
    lam = np.asarray(lam, dtype=float)
    if not np.isfinite(lam).all() or (np.abs(lam) > 1).any():
        raise InputError("perturb: lam must lie in [-1, 1]")
    return _perturb(P, lam)


def crc_expected_gain(dist, lam, gain=None):
    """``μ̂_CRC(d, λ) = Σ_r P̂_CRC(R=r|d, λ) r'`` (Eq. 19); non-decreasing in λ.  → ``lam.shape + dist.shape[:-1]``."""
    P = _check_dist(dist)
    g = _gain_vector(gain, P.shape[-1])
    lam = np.asarray(lam, dtype=float)
    if not np.isfinite(lam).all() or (np.abs(lam) > 1).any():
        raise InputError("crc_expected_gain: lam must lie in [-1, 1]")
    return _perturb(P, lam) @ g


class _CRCKernel:
    """Per-query ``Û_CRC(q, λ)`` for fixed P (n, depth, G), ω (n, depth), gains g (G,): cumulative sums are computed
    once, then each call maps λ (L,) → (L, n) with Eqs. 16–19 and Eq. 1 (the hot loop of the calibration)."""

    def __init__(self, P, w, g):
        self.P = P
        csum = np.cumsum(P, axis=-1)
        zero = np.zeros(P.shape[:-1] + (1,))
        self.below = np.concatenate([zero, csum[..., :-1]], axis=-1)
        rc = np.cumsum(P[..., ::-1], axis=-1)[..., ::-1]
        self.above = np.concatenate([rc[..., 1:], zero], axis=-1)
        self.w = w
        self.g2 = np.stack([g, np.ones_like(g)], axis=1)                      # (G, 2): numerator, normaliser

    def __call__(self, lam):
        lam = np.asarray(lam, dtype=float).reshape(-1, 1, 1, 1)
        m = np.maximum(1.0 - np.abs(lam), _TINY)
        Q = np.clip(m - np.where(lam >= 0, self.above, self.below), 0.0, self.P)
        nd = Q.reshape(-1, Q.shape[-1]) @ self.g2                             # Σ_r Q(r) r', Σ_r Q(r)
        mu = (nd[:, 0] / nd[:, 1]).reshape(Q.shape[:-1])                       # μ̂_CRC(d, λ), Eq. 19
        return np.sum(mu * self.w, axis=-1)


def _crc_u(P, lam, w, g):
    """Unchecked per-query ``Û_CRC(q, λ)``: P (n, depth, G), lam (L,), w (n, depth) → (L, n)."""
    return _CRCKernel(P, w, g)(lam)


def crc_query_utility(dists, lam, weights=None, gain=None):
    """Per-query ``Û_CRC(q, λ) = Σ_d ω(rank d) μ̂_CRC(d, λ)`` (Eqs. 1, 6 with μ̂ replaced by Eq. 19).

    ``dists`` (n, depth, G), ``lam`` (L,) (or scalar) → (L, n) (or (n,)).  Many λ at once, vectorised.
    """
    P = _check_dist(dists, "dists", min_ndim=3)
    if P.ndim != 3:
        raise InputError(f"crc_query_utility: dists must have shape (n, depth, G), got {P.shape}")
    lam = np.asarray(lam, dtype=float)
    if not np.isfinite(lam).all() or (np.abs(lam) > 1).any():
        raise InputError("crc_query_utility: lam must lie in [-1, 1]")
    w = _query_weights(weights, P.shape[0], P.shape[1])
    g = _gain_vector(gain, P.shape[-1])
    return _crc_u(P, lam.ravel(), w, g).reshape(lam.shape + (P.shape[0],))


# ====================================================================== CRC: dual calibration (Eqs. 22–25)

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


def _calibration_inputs(u_true, dists, batches, alpha, weights, gain, correction):
    alpha = _check_alpha(alpha)
    u = _check_values(u_true, "u_true", ndim=1)
    P = _check_dist(dists, "dists", min_ndim=3)
    if P.ndim != 3 or P.shape[0] != u.size:
        raise InputError(f"calibration: dists must have shape (n, depth, G) with n = len(u_true) = {u.size}, "
                         f"got {P.shape}")
    w = _query_weights(weights, P.shape[0], P.shape[1])
    g = _gain_vector(gain, P.shape[-1])
    B = np.asarray(batches)
    if B.ndim != 2 or B.shape[0] < 1 or B.shape[1] < 1 or not np.issubdtype(B.dtype, np.integer):
        raise InputError(f"batches must be a 2-d int array (M, batch_size) of query indices, got {B.shape} "
                         f"{B.dtype}")
    if (B < 0).any() or (B >= u.size).any():
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


def calibrate_crc(u_true, dists, batches, alpha=0.05, *, weights=None, gain=None, correction="batches", tol=1e-6,
                  grid=15):
    """Dual CRC calibration of ``λ_low`` and ``λ_high`` (Eqs. 22–24), vectorised over batches and λ.

    ``u_true`` (n,) human per-query values ``U(q)`` of the calibration queries, ``dists`` (n, depth, G) their LLM
    label distributions, ``batches`` (M, b) int indices into the n queries (:func:`sample_batches`, or
    :func:`single_query_batches` for per-query CIs).  With the losses of Eq. 23,

    * ``λ_high`` = the smallest λ ∈ [−1, 1] with ``(1/M) Σ_i 1[Û_CRC(Q̄_i, λ) < U(Q̄_i)] < bound``,
    * ``λ_low``  = the largest  λ ∈ [−1, 1] with ``(1/M) Σ_i 1[Û_CRC(Q̄_i, λ) > U(Q̄_i)] < bound``,

    where ``bound = ½(α − (1 − α)/M)`` (Eq. 24 as printed, ``correction="batches"``) or ``½(α − (1 − α)/n)``
    (``correction="queries"``: Eq. 15's finite-sample term counts the n distinct calibration queries, which is
    what the resampled batches are drawn from).  λ = ±1 are the limits of :func:`perturb`.  If even λ = 1
    (resp. −1) cannot meet the bound (e.g. bound ≤ 0 because M or n is too small), that λ is NaN and ``failed``
    is True.

    Search: both risks are monotone in λ (μ̂_CRC is non-decreasing in λ), so a (grid+1)-ary search brackets each λ
    to ``tol`` (the returned λ is the feasible end of the bracket, so it always meets its bound; it equals the
    bisection of :func:`calibrate_crc_loop` to within ``tol``).  The first round evaluates ``grid + 2`` λ for all
    M batches in one (M × n)·(n × (grid+2)) product (``C``: query counts per batch); later rounds only the
    batches whose loss can still change inside the bracket.
    """
    alpha, u, P, w, g, B, bound = _calibration_inputs(u_true, dists, batches, alpha, weights, gain, correction)
    M, b = B.shape
    n = u.size
    grid = int(grid)
    if grid < 1:
        raise InputError(f"grid must be >= 1, got {grid}")
    # C[i, j] = how often query j occurs in batch i; b·(Û_CRC(Q̄_i, λ) − U(Q̄_i)) = (C (û_λ − u))_i
    C = np.bincount((np.arange(M)[:, None] * n + B).ravel(), minlength=M * n).reshape(M, n).astype(float)
    thr = bound * M   # risk < bound  ⇔  number of losses < bound·M

    kernel = _CRCKernel(P, w, g)

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


def calibrate_crc_loop(u_true, dists, batches, alpha=0.05, *, weights=None, gain=None, correction="batches",
                       tol=1e-6):
    """Reference implementation of :func:`calibrate_crc`: bisection, and for every λ a Python loop over the M
    batches computing ``Û_CRC(Q̄_i, λ)`` from the batch's label distributions and ``U(Q̄_i)`` literally (Eq. 24).

    Same inputs and result (λ to within ``tol``); slow — for tests and benchmarks only.
    """
    alpha, u, P, w, g, B, bound = _calibration_inputs(u_true, dists, batches, alpha, weights, gain, correction)
    M = B.shape[0]
    thr = bound * M
    lam1 = np.empty(1)

    atol = _LOSS_RTOL * max(1.0, float(np.abs(u).max()))  # equal up to rounding: no loss (as calibrate_crc)

    def losses(lam):
        lam1[0] = lam
        hi = lo = 0
        for idx in B:
            u_crc = _crc_u(P[idx], lam1, w[idx], g)[0].mean()   # Û_CRC(Q̄_i, λ)
            u_batch = u[idx].mean()                              # U(Q̄_i)
            hi += u_crc < u_batch - atol
            lo += u_crc > u_batch + atol
        return hi, lo

    h_m1, l_m1 = losses(-1.0)
    h_p1, l_p1 = losses(1.0)
    # λ_high: smallest feasible
    if not h_p1 < thr:
        lam_high, r_high = np.nan, h_p1
    elif h_m1 < thr:
        lam_high, r_high = -1.0, h_m1
    else:
        a, z, r_high = -1.0, 1.0, h_p1
        while z - a > tol:
            mid = 0.5 * (a + z)
            h, _ = losses(mid)
            if h < thr:
                z, r_high = mid, h
            else:
                a = mid
        lam_high = z
    # λ_low: largest feasible
    if not l_m1 < thr:
        lam_low, r_low = np.nan, l_m1
    elif l_p1 < thr:
        lam_low, r_low = 1.0, l_p1
    else:
        a, z, r_low = -1.0, 1.0, l_m1
        while z - a > tol:
            mid = 0.5 * (a + z)
            _, lo = losses(mid)
            if lo < thr:
                a, r_low = mid, lo
            else:
                z = mid
        lam_low = a
    return _finish(lam_low, lam_high, r_low / M, r_high / M, bound, M)


def crc_interval(dists, calibration, *, weights=None, gain=None, axis_mean=True):
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
    g = _gain_vector(gain, P.shape[-1])
    lo_l, hi_l = calibration.lam_low, calibration.lam_high
    if calibration.failed:
        est = _crc_u(P, np.zeros(1), w, g)[0]
        nan = np.full_like(est, np.nan)
        if axis_mean:
            return Interval(float(est.mean()), np.nan, np.nan)
        return Interval(est, nan, nan.copy())
    lams = np.array([min(lo_l, hi_l), max(lo_l, hi_l), 0.0])
    v = _crc_u(P, lams, w, g)
    if axis_mean:
        v = v.mean(axis=1)
        return Interval(float(v[2]), float(v[0]), float(v[1]))
    return Interval(v[2], v[0], v[1])


def crc_per_query(u_true_cal, dists_cal, dists_test, alpha=0.05, *, weights_cal=None, weights_test=None, gain=None,
                  tol=1e-6, grid=15):
    """Per-query CRC intervals (Secs. 6.2, 7, 8.4): λ calibrated on the n single-query batches ``Q̄_i = {q_i}``
    (M = n, so the bound is ``½(α − (1 − α)/n)``), then one interval ``[Û_CRC(q, λ_low), Û_CRC(q, λ_high)]`` per
    test query.  Returns ``(Interval of arrays (n_test,), CRCCalibration)``; with n ≤ (1 − α)/α calibration
    queries the bound is ≤ 0 and the calibration fails (NaN intervals).
    """
    u = np.asarray(u_true_cal)
    cal = calibrate_crc(u, dists_cal, single_query_batches(u.size), alpha, weights=weights_cal, gain=gain,
                        correction="batches", tol=tol, grid=grid)
    return crc_interval(dists_test, cal, weights=weights_test, gain=gain, axis_mean=False), cal


# ====================================================================== experiment protocol (Figs. 2–3)

def covers(low, high, value):
    """``low ≤ value ≤ high`` up to rounding (1e-9 relative): an interval of width 0 around an exactly known value
    (e.g. CRC with labels equal to the truth) covers it even when the two sums were added up in another order."""
    low, high, value = (np.asarray(x, dtype=float) for x in (low, high, value))
    eps = _LOSS_RTOL * np.maximum(1.0, np.abs(value))
    return (low <= value + eps) & (value <= high + eps)


RESULT_COLUMNS = ["method", "n", "repetition", "estimate", "low", "high", "width", "covered", "target", "failed",
                  "lam_low", "lam_high"]
METHODS = ("bootstrap", "ppi", "crc")


def _splits(N, repetitions, groups, rng):
    """(R, n_val) validation queries in random order and (R, n_test) test queries: a random 50:50 split (within
    each group when ``groups`` is given: stratified, as the paper's per-year TREC-DL split)."""
    R = repetitions
    if groups is None:
        perm = np.argsort(rng.random((R, N)), axis=1)
        n_val = N // 2
        return perm[:, :n_val], perm[:, n_val:]
    groups = np.asarray(groups)
    val, test = [], []
    for gval in np.unique(groups):
        members = np.flatnonzero(groups == gval)
        order = members[np.argsort(rng.random((R, members.size)), axis=1)]
        h = members.size // 2
        val.append(order[:, :h])
        test.append(order[:, h:])
    val = np.concatenate(val, axis=1)
    test = np.concatenate(test, axis=1)
    shuffle = np.argsort(rng.random(val.shape), axis=1)
    return np.take_along_axis(val, shuffle, axis=1), test


def ci_experiment(u_true, dists, n_values, *, weights=None, u_pred=None, gain=None, repetitions=500, seed=0,
                  alpha=0.05, n_boot=10_000, n_batches=10_000, groups=None, methods=METHODS, correction="batches",
                  tol=1e-6, grid=15, target="test"):
    """The experiment of Sec. 7 / Figs. 2–3: CI width and coverage of bootstrap, PPI and CRC.

    ``target``: what coverage is measured against — ``"test"`` (the paper's text: "the true performance on the
    test-set", the mean true value over the test half) or ``"all"`` (the mean over all N queries, validation and
    test: the dataset's true DCG, a reading under which an interval from n ≈ N/2 queries is not judged against a
    second, independent sample).

    Inputs: ``u_true`` (N,) human per-query metric values (e.g. DCG@10 of BM25 from the qrels); ``dists``
    (N, depth, G) LLM label distributions of each query's ranked documents; ``weights`` ω (default DCG over
    ``depth``; (N, depth) for padded queries); ``u_pred`` (N,) LLM-predicted per-query values (default
    ``query_utility(dists, weights, gain)``, Eq. 6); ``n_values`` the numbers n of human-labelled queries.

    Each repetition r (shared by all n and methods — common random numbers, so the curves over n are smooth):
    a random 50:50 split of the N queries into validation (⌊N/2⌋, or ⌊half⌋ of each group in ``groups``) and test
    halves; the n human-labelled queries are the first n of a random order of the validation half (drawn without
    replacement; nested across n).  The **target** is the mean true value over the TEST half.

    * ``bootstrap``: percentile bootstrap (``n_boot`` resamples) of the n human values (:func:`bootstrap_ci`).
    * ``ppi``: Eq. 11 on Q = the n labelled validation queries (true and predicted values) plus the test half
      (predictions only): mean prediction over these n + N_test queries, mean error over the n, ddof = 1
      (:func:`ppi_mean_ci`).  The unlabelled rest of the validation half is not used (by any method).
    * ``crc``: λ calibrated (:func:`calibrate_crc`) on ``n_batches`` batches of n queries drawn with replacement
      from the n labelled validation queries, interval ``[Û_CRC(Q_test, λ_low), Û_CRC(Q_test, λ_high)]`` from the
      LLM labels of the test half (Eq. 20).  A failed calibration gives ``failed=True``, NaN low/high/width and
      ``covered=False``.

    Random streams: splits from ``SeedSequence(seed, spawn_key=(0,))``, the draws of method k (its index in
    ``METHODS``) for n from ``SeedSequence(seed, spawn_key=(1, n, k))``, so a result does not depend on which other
    n or methods were requested.
    Returns a DataFrame with columns ``RESULT_COLUMNS`` (one row per method × n × repetition); ``covered`` is
    ``low ≤ target ≤ high``.
    """
    alpha = _check_alpha(alpha)
    u_true = _check_values(u_true, "u_true", ndim=1)
    N = u_true.size
    P = _check_dist(dists, "dists", min_ndim=3)
    if P.ndim != 3 or P.shape[0] != N:
        raise InputError(f"dists must have shape (N, depth, G) with N = len(u_true) = {N}, got {P.shape}")
    W = np.ascontiguousarray(_query_weights(weights, N, P.shape[1]))
    g = _gain_vector(gain, P.shape[-1])
    if u_pred is None:
        u_pred = np.sum((P @ g) * W, axis=-1)
    u_pred = _check_values(u_pred, "u_pred", ndim=1)
    if u_pred.size != N:
        raise InputError(f"u_pred must have length N = {N}, got {u_pred.size}")
    methods = tuple(methods)
    unknown = set(methods) - set(METHODS)
    if unknown:
        raise InputError(f"unknown methods {sorted(unknown)}; expected a subset of {METHODS}")
    if groups is not None and np.shape(groups) != (N,):
        raise InputError(f"groups must have shape (N,) = ({N},), got {np.shape(groups)}")
    R = int(repetitions)
    if R < 1:
        raise InputError(f"repetitions must be >= 1, got {repetitions}")
    if int(n_batches) < 1 or int(n_boot) < 1:
        raise InputError(f"n_batches and n_boot must be >= 1, got {n_batches}, {n_boot}")
    val, test = _splits(N, R, groups, np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0,))))
    n_val = val.shape[1]
    n_values = [int(x) for x in np.atleast_1d(n_values)]
    for n in n_values:
        if n < 2 or n > n_val:
            raise InputError(f"n = {n} human-labelled queries: need 2 <= n <= {n_val} (the size of the validation "
                             f"half of N = {N} queries)")
    if target == "test":
        target = u_true[test].mean(axis=1)
    elif target == "all":
        target = np.full(R, u_true.mean())
    else:
        raise InputError(f"target must be 'test' or 'all', got {target!r}")
    reps = np.arange(R)
    frames = []
    for n in n_values:
        lab = val[:, :n]

        def stream(method):
            return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1, n, METHODS.index(method))))

        def frame(method, est, low, high, failed=False, lam_low=np.nan, lam_high=np.nan):
            low = np.asarray(low, dtype=float)
            high = np.asarray(high, dtype=float)
            return pd.DataFrame({
                "method": method, "n": n, "repetition": reps, "estimate": est, "low": low, "high": high,
                "width": high - low, "covered": covers(low, high, target), "target": target,
                "failed": failed, "lam_low": lam_low, "lam_high": lam_high})

        if "bootstrap" in methods:
            b = bootstrap_ci(u_true[lab], alpha, n_boot, rng=stream("bootstrap"))
            frames.append(frame("bootstrap", b.estimate, b.low, b.high))
        if "ppi" in methods:
            p = ppi_mean_ci(u_true[lab], u_pred[lab], u_pred[test], alpha, include_labelled=True, ddof=1)
            frames.append(frame("ppi", p.estimate, p.low, p.high))
        if "crc" in methods:
            est, lo, hi = np.empty(R), np.empty(R), np.empty(R)
            lam_lo, lam_hi, failed = np.empty(R), np.empty(R), np.zeros(R, bool)
            rng = stream("crc")
            for r in range(R):
                q = lab[r]
                batches = rng.integers(0, n, size=(int(n_batches), n))
                cal = calibrate_crc(u_true[q], P[q], batches, alpha, weights=W[q], gain=g, correction=correction,
                                    tol=tol, grid=grid)
                t = test[r]
                ci = crc_interval(P[t], cal, weights=W[t], gain=g)
                est[r], lo[r], hi[r] = ci
                lam_lo[r], lam_hi[r], failed[r] = cal.lam_low, cal.lam_high, cal.failed
            frames.append(frame("crc", est, lo, hi, failed, lam_lo, lam_hi))
        log.info("ci_experiment: n = %d done (%d repetitions, methods %s)", n, R, ",".join(methods))
    return pd.concat(frames, ignore_index=True)[RESULT_COLUMNS]
