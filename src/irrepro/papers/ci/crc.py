"""Conformal risk control, the perturbation (Oosterhuis et al., KDD 2024, Eqs. 16–19): optimistic / pessimistic
label distributions ``P̂_CRC(R=r|d, λ)`` and the per-query metric under them, ``Û_CRC(q, λ)``."""
from __future__ import annotations

import numpy as np

from irrepro.errors import InputError
from irrepro.papers.ci.metric import _TINY, _check_dist, _gain_spec, _link, _query_weights


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


def crc_expected_gain(dist, lam, gain=None, label_gain="expected_gain"):
    """``μ̂_CRC(d, λ) = Σ_r P̂_CRC(R=r|d, λ) r'`` (Eq. 19); non-decreasing in λ.  → ``lam.shape + dist.shape[:-1]``.
    ``label_gain="gain_of_expected_grade"``: ``2^{E_{P̂_CRC}[r]} − 1`` (the authors' code)."""
    P = _check_dist(dist)
    g, link = _gain_spec(gain, P.shape[-1], label_gain)
    lam = np.asarray(lam, dtype=float)
    if not np.isfinite(lam).all() or (np.abs(lam) > 1).any():
        raise InputError("crc_expected_gain: lam must lie in [-1, 1]")
    return _link(_perturb(P, lam) @ g, link)


class _CRCKernel:
    """Per-query ``Û_CRC(q, λ)`` for fixed P (n, depth, G), ω (n, depth), gains g (G,) (and ``link`` applied to the
    mean of g, :func:`~irrepro.papers.ci.metric._gain_spec`): cumulative sums are computed once, then each call
    maps λ (L,) → (L, n) with Eqs. 16–19 and Eq. 1 (the hot loop of the calibration)."""

    def __init__(self, P, w, g, link=None):
        self.P = P
        csum = np.cumsum(P, axis=-1)
        zero = np.zeros(P.shape[:-1] + (1,))
        self.below = np.concatenate([zero, csum[..., :-1]], axis=-1)
        rc = np.cumsum(P[..., ::-1], axis=-1)[..., ::-1]
        self.above = np.concatenate([rc[..., 1:], zero], axis=-1)
        self.w = w
        self.g2 = np.stack([g, np.ones_like(g)], axis=1)                      # (G, 2): numerator, normaliser
        self.link = link

    def __call__(self, lam):
        lam = np.asarray(lam, dtype=float).reshape(-1, 1, 1, 1)
        m = np.maximum(1.0 - np.abs(lam), _TINY)
        Q = np.clip(m - np.where(lam >= 0, self.above, self.below), 0.0, self.P)
        nd = Q.reshape(-1, Q.shape[-1]) @ self.g2                             # Σ_r Q(r) r', Σ_r Q(r)
        mu = _link(nd[:, 0] / nd[:, 1], self.link).reshape(Q.shape[:-1])       # μ̂_CRC(d, λ), Eq. 19
        return np.sum(mu * self.w, axis=-1)


def _crc_u(P, lam, w, g, link=None):
    """Unchecked per-query ``Û_CRC(q, λ)``: P (n, depth, G), lam (L,), w (n, depth) → (L, n)."""
    return _CRCKernel(P, w, g, link)(lam)


def crc_query_utility(dists, lam, weights=None, gain=None, label_gain="expected_gain"):
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
    g, link = _gain_spec(gain, P.shape[-1], label_gain)
    return _crc_u(P, lam.ravel(), w, g, link).reshape(lam.shape + (P.shape[0],))
