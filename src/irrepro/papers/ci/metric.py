"""The metric of Oosterhuis et al. (KDD 2024): rank weights ω, gains r' = 2^r − 1, expected gain (Eq. 5) and the
per-query utility U(q) / Û(q) (Eqs. 1, 6), plus the input checks every interval method shares.

The ranked documents of ``n`` queries are an array ``dists`` of shape ``(n, depth, G)``; ``weights`` broadcasts
against ``(n, depth)``.  **Padding**: a query with fewer than ``depth`` ranked documents gets weight 0 at the
missing ranks (:func:`truncate_weights`); the padded distributions must still be valid — they contribute nothing.
The DCG discount is the project's one definition, :func:`irrepro.core.gain.dcg_weights`.
"""
from __future__ import annotations

import numpy as np

from irrepro.core.gain import dcg_weights
from irrepro.errors import InputError

__all__ = ["dcg_weights", "truncate_weights", "gains", "expected_gain", "query_utility", "LABEL_GAINS"]

#: How a label distribution becomes a document's gain (``ci.label_gain``):
#: ``expected_gain`` — the text's Eq. 5 on transformed labels, ``μ̂(d) = E_P[2^r − 1] = Σ_r P(r) (2^r − 1)``;
#: ``gain_of_expected_grade`` — the authors' code (``datasets.py``: ``_per_query_dcg(per_doc_pred_label)``),
#: ``2^{E_P[r]} − 1``. By Jensen the second is never larger; both are non-decreasing in the CRC λ (Eq. 19).
#: Human (one-hot) labels give the same gain under both.
LABEL_GAINS = ("expected_gain", "gain_of_expected_grade")
#: The default of the analyses (``ci.label_gain``): the authors' code behind Figs 2-4 (``datasets.py``; their Fig 1,
#: ``curves.py``, uses E_P[2^r − 1]). The equation-level functions (:func:`expected_gain`, :func:`query_utility`,
#: CRC) default to Eq. 5.
DEFAULT_LABEL_GAIN = "gain_of_expected_grade"

_TINY = np.finfo(float).tiny
_LOSS_RTOL = 1e-9  # |Û_CRC(Q̄) − U(Q̄)| within this (relative to the largest |U|) counts as equal: no loss
_SUM_TOL = 1e-6


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


def _gain_spec(gain, G, label_gain="expected_gain"):
    """``(v, link)``: a document's gain is ``link(Σ_r P(r) v_r)`` — ``(gain vector, None)`` for
    ``expected_gain``, ``(0..G−1, 2^x − 1)`` for ``gain_of_expected_grade`` (which takes no custom ``gain``)."""
    if label_gain == "expected_gain":
        return _gain_vector(gain, G), None
    if label_gain == "gain_of_expected_grade":
        if gain is not None:
            raise InputError("label_gain='gain_of_expected_grade' uses 2^E[r] - 1 and takes no custom gain vector")
        return np.arange(G, dtype=float), gains
    raise InputError(f"label_gain must be one of {LABEL_GAINS}, got {label_gain!r}")


def _link(x, link):
    return x if link is None else link(x)


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


def expected_gain(dist, gain=None, label_gain="expected_gain"):
    """``μ̂(d) = Σ_r P̂(R=r|d) r'`` (Eq. 5, with the DCG gain ``r' = 2^r − 1`` unless ``gain`` is given);
    ``label_gain="gain_of_expected_grade"``: ``2^{Σ_r P̂(r) r} − 1`` (the authors' code, see :data:`LABEL_GAINS`).

    ``dist`` (..., G) → (...).
    """
    P = _check_dist(dist)
    v, link = _gain_spec(gain, P.shape[-1], label_gain)
    return _link(P @ v, link)


def query_utility(dists, weights=None, gain=None, label_gain="expected_gain"):
    """Per-query metric ``U(q) = Σ_d ω(rank(d|q)) μ(d|q)`` (Eq. 1; Û(q) of Eq. 6 with predicted labels).

    ``dists`` (..., n, depth, G) label distributions of each query's ranked documents (rank 1 first);
    ``weights`` ω broadcastable to (..., n, depth), default DCG over all ``depth`` ranks (zero weight = padding).
    ``label_gain``: see :data:`LABEL_GAINS`.  Returns (..., n).
    """
    P = _check_dist(dists, "dists", min_ndim=3)
    v, link = _gain_spec(gain, P.shape[-1], label_gain)
    w = dcg_weights(P.shape[-2]) if weights is None else _check_values(weights, "weights")
    try:
        return np.sum(_link(P @ v, link) * w, axis=-1)
    except ValueError:
        raise InputError(f"weights of shape {np.shape(w)} do not broadcast to dists[..., :, :, 0] "
                         f"{P.shape[:-1]}") from None
