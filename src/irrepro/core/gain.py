"""The one definition of DCG's rank discount and graded gain used by every paper.

DCG@k = Σ_{i ≤ k} g(r_i) · d(i) with the rank discount ``d(i) = 1 / log2(i + 1)`` and the exponential gain
``g(r) = 2^r − 1`` (Järvelin & Kekäläinen 2002; Burges et al. 2005). Oosterhuis et al. (KDD 2024) write it as rank
weights ω_DCG@K (Eq. 1); Schnabel et al. (ICTIR 2016) as λ(rank); Ding (2025) uses the binary gain with the same
discount.
"""
from __future__ import annotations

import numpy as np

from irrepro.errors import InputError


def discount(ranks) -> np.ndarray:
    """``1 / log2(rank + 1)`` for 1-based ranks (float64)."""
    return 1.0 / np.log2(np.asarray(ranks, dtype=float) + 1.0)


def dcg_weights(k, depth=None) -> np.ndarray:
    """DCG@k rank weights ``ω(x) = 1/log2(x + 1)`` for ranks ``x = 1..depth`` (default ``k``), zero below ``k``."""
    k = int(k)
    depth = k if depth is None else int(depth)
    if k < 1 or depth < 1:
        raise InputError(f"dcg_weights: k and depth must be >= 1, got k={k}, depth={depth}")
    ranks = np.arange(1, depth + 1, dtype=float)
    return np.where(ranks <= k, 1.0 / np.log2(ranks + 1.0), 0.0)


def exp_gain(grades) -> np.ndarray:
    """The exponential gain ``2^r − 1`` of relevance grades."""
    return 2.0 ** np.asarray(grades, dtype=float) - 1.0
