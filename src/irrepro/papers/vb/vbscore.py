"""VB-Score: variance-bounded evaluation across query intents (Ding 2025, seed 000).

Notation follows the paper. A query Q has intents E_1..E_n with probabilities pi = (pi_1..pi_n), sum 1; a ranked
list S@k gets a per-intent gain g_i(S@k) in [0, 1].

* Expected success (Eq. 1):  ES = sum_i pi_i g_i(S@k).
* Variance-bounded score (Sec. 3.4): VB_alpha = ES - alpha * sqrt(ES (1 - ES)), alpha >= 0.
* Gains (Sec. 3.3): binary coverage g_i = max_{j<=k} 1{d_j relevant to E_i}; DCG gain
  sum_{j<=k} 1{.}/log2(j+1), normalised by the per-intent ideal DCG@k.
* Intent distribution (Sec. 3.2): pi_i ∝ exp(s_i / T) from scores; constraint relaxation
  Delta(E) = sum_j w_j 1[not c_j(E)], pi(E) ∝ exp(-Delta(E)); truncation by threshold tau, top-K or cumulative
  mass rho, then renormalisation.
* Monte Carlo replicas (Algorithm 1, Sec. 3.5) with the normal-approximation CI of Sec. 3.5, bootstrap CIs over
  intents (per query) and over queries (collection level), collection VB@k = mean over queries of VB(Q, S@k).

Arrays are vectorised over leading axes: ``pi`` and ``gains`` have shape (..., n); ragged intent sets are padded
with pi = 0 (padding then contributes nothing). All randomness goes through an explicit seed / Generator.

What the paper claims and what holds (see tests/test_vbscore_claims.py and docs/vb.md):
  A1 says VB_alpha in [0, 1]; in fact VB_alpha in [ES - alpha/2, ES] subset [-alpha/2, 1], and VB_alpha < 0 whenever
  0 < ES < alpha^2/(1+alpha^2) -- the paper's own Table 1 prints negative VB values.
  B1 says VB_alpha is nondecreasing in ES "except possibly in tiny neighbourhoods near 0 and 1"; in fact it
  decreases on (0, p*) with p* = (1 - 1/sqrt(1+alpha^2))/2 (0.146 for alpha = 1) and increases on (p*, 1).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from irrepro.core.gain import discount
from irrepro.core.quantiles import norm_ppf
from irrepro.errors import InputError

__all__ = [
    "expected_success", "vb_score", "var_penalty", "vb_turning_point", "vb_zero_crossing",
    "binary_gains", "dcg_gains", "ideal_dcg", "softmax", "constraint_penalty", "pi_from_constraints",
    "truncate", "monte_carlo_replicas", "replica_ci", "bootstrap_over_intents", "bootstrap_over_queries",
    "percentile_ci", "collection_vb", "table_from_es", "consistent_es_interval", "coverage_case",
]


# --------------------------------------------------------------------------------------------------- the metric
def expected_success(pi, gains) -> np.ndarray:
    """ES = sum_i pi_i g_i(S@k) (Eq. 1), summed over the last axis."""
    pi = np.asarray(pi, dtype=float)
    gains = np.asarray(gains, dtype=float)
    return np.sum(pi * gains, axis=-1)


def var_penalty(es) -> np.ndarray:
    """VarPenalty = sqrt(Var X) = sqrt(ES (1 - ES)) (Sec. 3.4 and Sec. 4 (ii)); ES clipped to [0, 1] for rounding."""
    es = np.clip(np.asarray(es, dtype=float), 0.0, 1.0)
    return np.sqrt(es * (1.0 - es))


def vb_score(es, alpha=1.0) -> np.ndarray:
    """VB_alpha = ES - alpha sqrt(ES (1 - ES)) (Sec. 3.4). Broadcasts ``es`` against ``alpha``."""
    alpha = np.asarray(alpha, dtype=float)
    if np.any(alpha < 0):
        raise InputError(f"alpha must be >= 0, got {alpha}")
    es = np.asarray(es, dtype=float)
    return es - alpha * var_penalty(es)


def vb_turning_point(alpha) -> np.ndarray:
    """The ES at which VB_alpha is smallest: p* = (1 - 1/sqrt(1 + alpha^2)) / 2. VB_alpha decreases on (0, p*)."""
    alpha = np.asarray(alpha, dtype=float)
    return (1.0 - 1.0 / np.sqrt(1.0 + alpha ** 2)) / 2.0


def vb_zero_crossing(alpha) -> np.ndarray:
    """VB_alpha(p) < 0 exactly for 0 < p < alpha^2 / (1 + alpha^2)."""
    alpha = np.asarray(alpha, dtype=float)
    return alpha ** 2 / (1.0 + alpha ** 2)


# ------------------------------------------------------------------------------------------------------- gains
def _check_k(k, depth):
    if int(k) != k or k < 1:
        raise InputError(f"cut-off k must be a positive integer, got {k!r}")
    return min(int(k), depth)


def binary_gains(rel, k: int) -> np.ndarray:
    """Binary coverage g_i(S@k) = max_{j<=k} 1{d_j relevant to E_i} (Sec. 3.3).

    ``rel``: boolean array (..., n_intents, depth); rel[..., i, j] says whether the document at rank j+1 is relevant
    to intent i. Returns (..., n_intents) floats in {0, 1}.
    """
    rel = np.asarray(rel, dtype=bool)
    kk = _check_k(k, rel.shape[-1])
    return rel[..., :kk].any(axis=-1).astype(float)


def ideal_dcg(n_relevant, k: int) -> np.ndarray:
    """Ideal DCG@k of an intent with ``n_relevant`` relevant documents: sum_{j=1}^{min(k, R)} 1/log2(j+1)."""
    n_relevant = np.asarray(n_relevant)
    disc = np.concatenate([[0.0], np.cumsum(discount(np.arange(1, int(k) + 1)))])
    return disc[np.clip(n_relevant, 0, int(k)).astype(int)]


def dcg_gains(rel, k: int, n_relevant=None) -> np.ndarray:
    """DCG gain sum_{j<=k} 1{d_j relevant to E_i}/log2(j+1), divided by the intent's ideal DCG@k (Sec. 3.3).

    ``n_relevant`` (..., n_intents): the number of documents relevant to each intent in the judgments (defines the
    ideal ranking). If None, the relevant documents found in ``rel`` are used (an ideal restricted to the list).
    Intents with no relevant document get gain 0. Returns values in [0, 1].
    """
    rel = np.asarray(rel, dtype=bool)
    kk = _check_k(k, rel.shape[-1])
    disc = discount(np.arange(1, kk + 1))
    dcg = rel[..., :kk].astype(float) @ disc
    if n_relevant is None:
        n_relevant = rel.sum(axis=-1)
    idcg = ideal_dcg(n_relevant, k)
    with np.errstate(invalid="ignore", divide="ignore"):
        g = np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), 0.0)
    return np.clip(g, 0.0, 1.0)


# ------------------------------------------------------------------------------------------ intent distribution
def softmax(scores, temperature: float = 1.0, mask=None) -> np.ndarray:
    """pi_i ∝ exp(s_i / T) over the last axis (Sec. 3.2 step 1). ``mask`` (bool) marks the real candidates: masked
    out entries get probability 0. ``-inf`` scores get 0."""
    if not temperature > 0:
        raise InputError(f"temperature T must be > 0, got {temperature!r}")
    s = np.asarray(scores, dtype=float) / float(temperature)
    if mask is not None:
        s = np.where(np.asarray(mask, dtype=bool), s, -np.inf)
    m = np.max(s, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    tot = e.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tot > 0, e / np.where(tot > 0, tot, 1.0), 0.0)


def constraint_penalty(violations, weights=None) -> np.ndarray:
    """Delta(E) = sum_j w_j 1[not c_j(E)] (Sec. 3.2 step 2). ``violations``: (..., n_candidates, m) 0/1."""
    v = np.asarray(violations, dtype=float)
    w = np.ones(v.shape[-1]) if weights is None else np.asarray(weights, dtype=float)
    if np.any(w < 0):
        raise InputError(f"constraint weights must be >= 0, got {w}")
    return v @ w


def pi_from_constraints(violations, weights=None, mask=None) -> np.ndarray:
    """pi(E) = exp(-Delta(E)) / sum_E' exp(-Delta(E')) (Sec. 3.2 step 2)."""
    return softmax(-constraint_penalty(violations, weights), 1.0, mask=mask)


def truncate(pi, tau: float | None = None, top_k: int | None = None, rho: float | None = None) -> np.ndarray:
    """Negligible-mass removal then renormalisation (Sec. 3.2 step 3a), over the last axis.

    tau: keep pi_i >= tau; top_k: keep the K most probable (ties broken by position); rho: keep the smallest
    prefix of the descending order whose cumulative mass is >= rho. Several criteria are applied in that order
    (the paper calls them alternatives; report which you use). If a rule would drop every candidate, the most
    probable one is kept.
    """
    pi = np.array(pi, dtype=float)
    keep = pi > 0
    order = np.argsort(-pi, axis=-1, kind="stable")
    ranks = np.argsort(order, axis=-1, kind="stable")  # 0 = most probable
    if tau is not None:
        if not 0 <= tau <= 1:
            raise InputError(f"truncation tau must be in [0, 1], got {tau!r}")
        keep &= pi >= tau
    if top_k is not None:
        if int(top_k) != top_k or top_k < 1:
            raise InputError(f"truncation top_k must be a positive integer, got {top_k!r}")
        keep &= ranks < top_k
    if rho is not None:
        if not 0 < rho <= 1:
            raise InputError(f"truncation rho must be in (0, 1], got {rho!r}")
        sorted_pi = np.take_along_axis(pi, order, axis=-1)
        cum = np.cumsum(sorted_pi, axis=-1)
        tot = cum[..., -1:]
        # number kept = 1 + number of prefixes whose mass is still below rho (relative to the total)
        n_keep = 1 + np.sum(cum < rho * tot - 1e-12, axis=-1, keepdims=True)
        keep &= ranks < n_keep
    top = ranks == 0
    keep |= top & ~keep.any(axis=-1, keepdims=True)
    out = np.where(keep, pi, 0.0)
    tot = out.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tot > 0, out / np.where(tot > 0, tot, 1.0), 0.0)


# ---------------------------------------------------------------------------------------- uncertainty (Alg. 1)
def _rng(seed):
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def monte_carlo_replicas(pi, gains, n_replicas: int, seed, alpha=1.0, concentration: float = 50.0,
                         tau=None, top_k=None, rho=None, flip_prob: float = 0.0):
    """Algorithm 1 for one query (or a batch of queries on the leading axes).

    Each replica b perturbs the input side -- pi^(b) ~ Dirichlet(concentration * pi) over the candidates with
    pi_i > 0, then truncated and renormalised -- and re-tags the output: with probability ``flip_prob`` (tagger
    noise) a gain is replaced by 1 - 1{g > 0} (a covered intent becomes uncovered and vice versa). Returns (ES^(b), VB^(b)) of
    shape (n_replicas, ...). ``concentration = inf`` keeps pi fixed. The estimates are the replica means.
    """
    rng = _rng(seed)
    pi = np.asarray(pi, dtype=float)
    gains = np.asarray(gains, dtype=float)
    B = int(n_replicas)
    shape = (B,) + pi.shape
    if np.isinf(concentration):
        pib = np.broadcast_to(pi, shape).copy()
    else:
        if not concentration > 0:
            raise InputError(f"Dirichlet concentration must be > 0, got {concentration!r}")
        # Dirichlet via normalised Gamma draws, vectorised over replicas and queries; padding (pi = 0) stays 0
        a = concentration * pi
        gam = rng.gamma(np.where(a > 0, a, 1.0), size=shape) * (a > 0)
        tot = gam.sum(axis=-1, keepdims=True)
        pib = np.where(tot > 0, gam / np.where(tot > 0, tot, 1.0), np.broadcast_to(pi, shape))
    if tau is not None or top_k is not None or rho is not None:
        pib = truncate(pib, tau=tau, top_k=top_k, rho=rho)
    gb = np.broadcast_to(gains, shape)
    if flip_prob > 0:
        flip = rng.random(shape) < flip_prob
        gb = np.where(flip, 1.0 - (gb > 0), gb)
    es = expected_success(pib, gb)
    return es, vb_score(es, alpha)


def replica_ci(replicas, level: float = 0.95, axis: int = 0):
    """Sec. 3.5: CI = mean ± z_{1-delta/2} sigma_hat / sqrt(B) from the B replica scores. Returns (mean, lo, hi)."""
    r = np.asarray(replicas, dtype=float)
    B = r.shape[axis]
    mean = r.mean(axis=axis)
    sd = r.std(axis=axis, ddof=1) if B > 1 else np.zeros_like(mean)
    z = norm_ppf(0.5 + level / 2)
    half = z * sd / np.sqrt(B)
    return mean, mean - half, mean + half


def percentile_ci(samples, level: float = 0.95, axis: int = 0):
    """Percentile bootstrap interval (lo, hi) along ``axis``."""
    q = [(1 - level) / 2 * 100, (1 + level) / 2 * 100]
    lo, hi = np.percentile(np.asarray(samples, dtype=float), q, axis=axis)
    return lo, hi


def bootstrap_over_intents(pi, gains, n_boot: int, seed, alpha=1.0):
    """Nonparametric bootstrap across intents (Sec. 3.6 D2, per query; Figs 3-4 "across intents").

    Intents are resampled with replacement (uniformly, n draws from the n real intents, where pi > 0); the resampled
    set keeps its pi weights, renormalised. ``pi``, ``gains``: 1-D (one query or one pooled intent population).
    Returns (ES*, VB*) arrays of length n_boot.
    """
    rng = _rng(seed)
    pi = np.asarray(pi, dtype=float)
    gains = np.asarray(gains, dtype=float)
    if pi.ndim != 1 or pi.shape != gains.shape:
        raise InputError("bootstrap_over_intents takes 1-D pi and gains of the same length")
    real = np.flatnonzero(pi > 0)
    if real.size == 0:
        raise InputError("no intent with positive probability")
    idx = real[rng.integers(0, real.size, size=(int(n_boot), real.size))]
    w = pi[idx]
    es = (w * gains[idx]).sum(axis=1) / w.sum(axis=1)
    return es, vb_score(es, alpha)


def bootstrap_over_queries(values, n_boot: int, seed):
    """Resample queries with replacement and average: ``values`` (n_queries, ...) -> (n_boot, ...) means.

    Collection-level CIs of VB@k (Sec. 3.5: "CIs obtained by resampling queries"). Columns (e.g. systems) share
    the same resampled queries, so differences between systems are paired.
    """
    rng = _rng(seed)
    v = np.asarray(values, dtype=float)
    n = v.shape[0]
    if n == 0:
        raise InputError("no queries to resample")
    B = int(n_boot)
    idx = rng.integers(0, n, size=(B, n))
    # resample counts per query (B, n) instead of gathering (B, n, ...): memory O(B n) whatever the columns
    counts = np.zeros((B, n))
    np.add.at(counts, (np.repeat(np.arange(B), n), idx.ravel()), 1.0)
    flat = v.reshape(n, -1)
    return (counts @ flat / n).reshape((B,) + v.shape[1:])


def collection_vb(per_query, axis: int = 0) -> np.ndarray:
    """VB@k(S) = (1/|Q|) sum_Q VB(Q, S@k) (Sec. 3.5, Sec. 4): the macro-average over queries."""
    return np.mean(np.asarray(per_query, dtype=float), axis=axis)


def table_from_es(es: Sequence[float], alphas: Sequence[float]) -> np.ndarray:
    """VB_alpha for every (ES, alpha): shape (len(es), len(alphas)) -- Table 1 recomputed from its ES column."""
    return vb_score(np.asarray(es, dtype=float)[:, None], np.asarray(alphas, dtype=float)[None, :])


def consistent_es_interval(es_printed: float, vb_printed: Sequence[float], alphas: Sequence[float],
                           decimals: int = 3, grid: int = 20001):
    """The unrounded ES values, within half a unit of ``es_printed``'s last digit, whose VB_alpha all round to
    ``vb_printed`` (same precision). Returns (lo, hi) of that set, or None if it is empty (the printed row cannot
    come from Sec. 3.4's formula)."""
    half = 0.5 * 10.0 ** (-decimals)
    es = np.linspace(es_printed - half, es_printed + half, grid)
    es = es[(es >= 0) & (es <= 1)]
    ok = np.ones(es.shape, bool)
    for a, v in zip(alphas, vb_printed):
        ok &= np.abs(vb_score(es, a) - v) <= half + 1e-12
    if not ok.any():
        return None
    return float(es[ok].min()), float(es[ok].max())


def coverage_case(pi: Sequence[float], intents: Sequence[str], covers: Sequence[str], alphas: Sequence[float],
                  dcg_order: Sequence[str] | None = None) -> dict:
    """ES and VB_alpha of a system in a Sec. 5 case study: each intent has one relevant document; ``covers`` lists
    the intents whose document is in S@k. Binary gains, or (``dcg_order``) DCG gains with the documents at ranks
    1, 2, ... in that order (ideal DCG = 1 per intent). Returns {"ES": ..., "VB_<alpha>": ...}."""
    pi = np.asarray(pi, dtype=float)
    if dcg_order is None:
        g = np.array([1.0 if e in covers else 0.0 for e in intents])
    else:
        pos = {e: r for r, e in enumerate(dcg_order, 1)}
        g = np.array([float(discount(pos[e])) if e in covers and e in pos else 0.0 for e in intents])
    es = float(expected_success(pi, g))
    out = {"ES": es}
    for a in alphas:
        out[f"VB_{a:g}"] = float(vb_score(es, a))
    return out
