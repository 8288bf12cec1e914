"""Relevance models RM1 and RM3 for pseudo-relevance feedback (Lavrenko & Croft 2001; Abdul-Jaleel et al. 2004).

PyTerrier's RM3 is Terrier (Java) code, so irrepro implements the models here, in plain Python on token lists, and
feeds the expanded query to PISA as a weighted query. Pure functions: tokens and weights in, term weights out.

Notation (Zhang et al., SIGIR 2013, Sec. 4; Lavrenko & Croft 2001):

* query model      ``P(w|θ_Q) = c(w, Q) / |Q|``
* RM1              ``P(w|θ_R) ∝ Σ_{d ∈ F} P(w|d) · P(d|Q)``, with ``P(w|d) = c(w, d) / |d|`` and ``P(d|Q)`` the
  feedback document's weight (its normalised retrieval score by default), truncated to the ``n_terms`` most
  probable terms and renormalised;
* RM3              ``P(w|θ'_Q) = λ · P(w|θ_Q) + (1 − λ) · P(w|θ_R)``  (λ = weight of the original query).
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping, Sequence

import numpy as np


def query_model(tokens: Sequence[str]) -> dict[str, float]:
    """Maximum-likelihood query model ``c(w, Q)/|Q|``. Empty queries give an empty model."""
    c = Counter(tokens)
    n = sum(c.values())
    return {w: k / n for w, k in sorted(c.items())} if n else {}


def feedback_weights(scores: Sequence[float], method: str = "score") -> np.ndarray:
    """``P(d|Q)`` for the feedback documents from their first-pass retrieval scores.

    ``score``: scores shifted to be non-negative and normalised to sum 1 (Anserini's convention);
    ``softmax``: ``exp(score)`` normalised (the query-likelihood reading, scores being log-probabilities);
    ``uniform``: every feedback document weighs the same.
    """
    s = np.asarray(scores, dtype=float)
    if s.size == 0:
        return s
    if method == "uniform":
        w = np.ones_like(s)
    elif method == "softmax":
        w = np.exp(s - s.max())
    elif method == "score":
        w = s - min(0.0, s.min())
        if w.sum() <= 0:
            w = np.ones_like(s)
    else:
        raise ValueError(f"unknown feedback weighting {method!r}; expected score, softmax or uniform")
    return w / w.sum()


def relevance_model(doc_tokens: Sequence[Sequence[str]], doc_weights: Sequence[float], n_terms: int = 100,
                    stopwords: Iterable[str] = ()) -> dict[str, float]:
    """RM1: ``P(w|θ_R) ∝ Σ_d P(w|d) P(d|Q)`` over the feedback documents, top ``n_terms`` terms, renormalised.

    Ties in weight are broken by the term (alphabetically) so the model is deterministic.
    """
    if len(doc_tokens) != len(doc_weights):
        raise ValueError("doc_tokens and doc_weights differ in length")
    stop = set(stopwords)
    acc: dict[str, float] = {}
    for toks, wd in zip(doc_tokens, doc_weights):
        toks = [t for t in toks if t not in stop]
        if not toks or wd == 0:
            continue
        inv = float(wd) / len(toks)
        for t, k in Counter(toks).items():
            acc[t] = acc.get(t, 0.0) + k * inv
    if not acc:
        return {}
    top = sorted(acc.items(), key=lambda kv: (-kv[1], kv[0]))[:n_terms]
    z = sum(v for _, v in top)
    return {t: v / z for t, v in top}


def interpolate(original: Mapping[str, float], expansion: Mapping[str, float], lam: float) -> dict[str, float]:
    """RM3: ``λ · P(w|θ_Q) + (1 − λ) · P(w|θ_R)``. ``lam`` = 1 gives the original query, 0 gives RM1."""
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"RM3 interpolation weight must be in [0, 1], got {lam}")
    terms = sorted(set(original) | set(expansion))
    out = {t: lam * original.get(t, 0.0) + (1 - lam) * expansion.get(t, 0.0) for t in terms}
    return {t: v for t, v in out.items() if v > 0}
