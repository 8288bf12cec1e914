"""Label distributions (Oosterhuis et al., KDD 2024): hard labels as smoothed one-hot distributions, and the
manipulations of Secs. 8.2/8.3 — adversarial bias β (:func:`adversarial_bias`) and oracle weight ζ
(:func:`oracle_mix`)."""
from __future__ import annotations

import numpy as np

from irrepro.errors import InputError
from irrepro.papers.ci.metric import _check_dist


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
