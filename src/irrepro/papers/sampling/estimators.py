"""Unbiased comparative evaluation by importance sampling (Schnabel, Swaminathan, Frazier & Joachims, ICTIR 2016).

Notation: ``u[x, y]`` utilities (only sampled pairs are ever judged), ``P[s][x, y] = λ(y | S_s(x)) / |X|`` the target
weights of system ``s`` (Eq. 2: ``U(S) = Σ_{x,y} u P``), ``Q[x, y]`` a sampling distribution over pairs (sums to 1).
Arrays are queries × items; a pair index is the flat index into them.

* metrics as (λ, u) pairs (Table 1): :func:`dcg_weights`, :func:`prec_weights`, :func:`rbp_weights`,
  :func:`gain_weights` map 0-based ranks to λ;
* estimators: Û (Eq. 3) :func:`u_hat`, Δ̂ (Eq. 7) :func:`delta_hat`, CLT interval (Eq. 6) :func:`confidence_interval`;
* samplers: Q* for one system (Eq. 4), for a pair (Eq. 9), k systems vs a baseline (Eq. 11), ranking k systems
  (Eq. 13), each from (approximate) utilities ũ; QP (ũ = 1), uniform, the naive pairwise heuristic of prior work,
  ε-mixtures for reuse (Sec. 3.7) and the balance-heuristic mixture of Eq. 5;
* exact variance Σ(Q)·n of the estimators (Eq. 8, 10) for the analytic Tables 5–7;
* deterministic baselines ShallowPool and DeepPool.

The experiments of Sec. 7 (Tables 2–7, Figs 1–3) are in :mod:`.experiments`, the TREC substitute in :mod:`.trec`,
SYNTH in :mod:`.synth`, the workflow's tables and claims in :mod:`.tables` and :mod:`.claims`.

Sampling is with replacement and vectorised over trials (:func:`draw`: two-level inverse-CDF sampling, a multinomial
over segments of Q, then a ``searchsorted`` in each segment's CDF for the draws of all trials, dealt out to the
trials at random).
"""
from __future__ import annotations

import numpy as np

from irrepro.core.quantiles import t_ppf


# ------------------------------------------------------------------ metrics (λ as a function of the 0-based rank)

def dcg_weights(ranks, k=None, base=2.0):
    """DCG@k: λ = 1 / log_base(rank + 2) for 0-based rank < k (Table 1). SYNTH's Table 2 needs base e.

    Computed as ``log(base) / log(rank + 2)`` for any base (not :func:`irrepro.core.gain.discount`, which is
    ``1 / log2(rank + 1)`` for 1-based ranks): a different floating-point operation, and the outputs of the sampling
    paper depend on these exact bits."""
    r = np.asarray(ranks)
    w = np.log(base) / np.log(r + 2.0)
    return w if k is None else np.where(r < k, w, 0.0)


def prec_weights(ranks, k):
    """Prec@k: λ = 1/k for the top k."""
    return np.where(np.asarray(ranks) < k, 1.0 / k, 0.0)


def gain_weights(ranks, k):
    """Gain@k: λ = 1 for the top k."""
    return np.where(np.asarray(ranks) < k, 1.0, 0.0)


def rbp_weights(ranks, p=0.8):
    """RBP(p): λ = (1 − p) p^rank."""
    return (1 - p) * p ** np.asarray(ranks, dtype=float)


def target(ranks, metric=dcg_weights, **kw) -> np.ndarray:
    """``P(x, y | S) = λ(y | S(x)) / |X|`` from a system's rank matrix (queries × items)."""
    lam = metric(ranks, **kw)
    return lam / lam.shape[0]


def true_utility(u, P) -> float:
    """``U(S) = Σ u P`` (Eq. 2): the mean over queries of the metric."""
    return float(np.sum(u * P))


# ------------------------------------------------------------------ sampling distributions

def _normalise(w, name="Q"):
    w = np.asarray(w, dtype=float)
    if (w < 0).any():
        raise ValueError(f"{name} has negative mass")
    s = w.sum()
    if s <= 0:
        raise ValueError(f"{name} has no mass")
    return w / s


def q_single(u_approx, P):
    """Q* for one system (Eq. 4): ∝ ũ · P(x, y | S)."""
    return _normalise(u_approx * P)


def q_pair(u_approx, P1, P2):
    """Q* for Δ(S, S') (Eq. 9): ∝ ũ · |P(x,y|S) − P(x,y|S')|."""
    return _normalise(u_approx * np.abs(P1 - P2))


def q_pair_naive(u_approx, P1, P2):
    """The heuristic of prior work (Yilmaz et al.): ∝ ũ · (P + P') / 2."""
    return _normalise(u_approx * (P1 + P2) / 2)


def q_baseline(u_approx, Ps, P0):
    """Q* for k systems against a baseline (Eq. 11): ∝ ũ · sqrt(Σ_j (P_j − P_0)²)."""
    return _normalise(u_approx * np.sqrt(sum((P - P0) ** 2 for P in Ps)))


def q_ranking(u_approx, Ps):
    """Q* for ranking k systems (Eq. 13): the baseline is the mean system τ = (1/k) Σ_j P_j."""
    tau = sum(Ps) / len(Ps)
    return q_baseline(u_approx, Ps, tau)


def q_naive_multi(u_approx, Ps):
    """The naive multi-system heuristic (mixture importance sampling): ∝ ũ · Σ_j P_j."""
    return _normalise(u_approx * sum(Ps))


def q_uniform(shape):
    return np.full(shape, 1.0 / np.prod(shape))


def mix_epsilon(Q, eps):
    """Q ∝ Q + ε (Sec. 3.7): full support so that the judgments can be reused for any new system."""
    return _normalise(Q + eps)


def balance_mixture(Qs, counts):
    """Eq. 5, the balance heuristic: data drawn n_i times from Q_i is weighted by Q = Σ n_i Q_i / Σ n_i."""
    counts = np.asarray(counts, dtype=float)
    return sum(c * q for c, q in zip(counts, Qs)) / counts.sum()


def approx_utility_rank(ranks, top=4.0, n_items=None):
    """The paper's ũ_S(x, y) = 4 (1 − rank / 2000) for SYNTH (0-based rank, so every item keeps ũ > 0)."""
    n_items = n_items or ranks.shape[1]
    return top * (1.0 - np.asarray(ranks, float) / n_items)


def approx_utility_trec(ranks):
    """The paper's ũ_S(x, y) = 16 / (rank + 34) for TREC (1-based rank)."""
    return 16.0 / (np.asarray(ranks, float) + 1 + 34)


# ------------------------------------------------------------------ sampling and estimators

_BLOCK = 8192   # segment length of the two-level sampler: a segment's CDF (64 KB) stays in the CPU cache


def draw(Q, n, trials=1, rng=None) -> np.ndarray:
    """``trials × n`` flat pair indices drawn i.i.d. with replacement from Q (two-level inverse-CDF sampling).

    The flat Q is cut into segments of ``_BLOCK`` consecutive pairs (about four SYNTH users each). Level 1: how many
    of the ``trials · n`` draws fall in each segment, one multinomial with the segments' masses. Level 2: within a
    segment, inverse-CDF look-ups (``searchsorted``, sorted uniforms) in that segment's CDF, built once for all
    trials: a short, cache-resident search instead of one in a CDF over all pairs. This gives ``trials · n`` i.i.d.
    draws from Q, in segment order; a uniformly random arrangement of trial labels (n of each) then deals them out to
    the trials, so each trial is an i.i.d. sample of size n from Q and the trials are independent. Within a trial the
    indices come out sorted (the draws are exchangeable: the order changes no estimate, and sorted gathers are
    cache-friendly). A pair with Q = 0 is never drawn. All randomness comes from ``rng``: deterministic per seed."""
    rng = np.random.default_rng(rng)
    q = np.asarray(Q, float).ravel()
    size, block, total_n = q.size, _BLOCK, trials * n
    if not size or q.min() < 0:
        raise ValueError("Q must be non-empty and non-negative")
    mass = np.add.reduceat(q, np.arange(0, size, block))
    if not mass.sum() > 0:
        raise ValueError("Q has no mass")
    per_seg = rng.multinomial(total_n, mass / mass.sum())
    uni = rng.random(total_n)
    items = np.empty(total_n, dtype=np.intp)                            # segment order
    cdf_buf = np.empty(block)
    pos = 0
    for b in np.flatnonzero(per_seg).tolist():
        c, s = int(per_seg[b]), b * block
        seg = q[s:s + block]
        cdf = np.cumsum(seg, out=cdf_buf[:seg.size])
        keys = uni[pos:pos + c]
        keys.sort()
        keys *= cdf[-1]           # u < 1 gives u · cdf[-1] < cdf[-1] in floating point: a pair with Q > 0 is found
        np.add(np.searchsorted(cdf, keys, side="right"), s, out=items[pos:pos + c])
        pos += c
    # small integer labels: a cheap shuffle, and a radix sort for the stable argsort
    dtype = np.int8 if trials < 2 ** 7 else np.int16 if trials < 2 ** 15 else np.intp
    labels = np.repeat(np.arange(trials, dtype=dtype), n)
    rng.shuffle(labels)
    return items[np.argsort(labels, kind="stable")].reshape(trials, n)


def u_hat(u, P, Q, idx) -> np.ndarray:
    """Û_n(S) (Eq. 3) for each row of sampled indices: mean of z = u P / Q (z = 0 where Q = 0). z is computed for
    every pair and then gathered when there are more draws than pairs, else computed from the gathered values."""
    Qf = np.asarray(Q, float).ravel()
    uf, Pf = np.asarray(u, float).ravel(), np.asarray(P, float).ravel()
    idx = np.asarray(idx)
    if idx.size >= Qf.size:
        z = np.divide(uf * Pf, Qf, out=np.zeros_like(Qf), where=Qf > 0)
        return z[idx].mean(axis=-1)
    Qg = np.take(Qf, idx)
    z = np.divide(np.take(uf, idx) * np.take(Pf, idx), Qg, out=np.zeros_like(Qg), where=Qg > 0)
    return z.mean(axis=-1)


def delta_hat(u, P1, P2, Q, idx) -> np.ndarray:
    """Δ̂_n(S, S') (Eq. 7): mean of u (P − P') / Q."""
    z = u.ravel()[idx] * (P1.ravel()[idx] - P2.ravel()[idx]) / Q.ravel()[idx]
    return z.mean(axis=-1)


def confidence_interval(u, P, Q, idx, alpha=0.05, P2=None):
    """Eq. 6: Û ± t_{α/2} σ̂ / sqrt(n), σ̂ the sample standard deviation of z = u P / Q (or u (P − P') / Q)."""
    diff = np.take(P.ravel(), idx) if P2 is None else np.take(P.ravel(), idx) - np.take(P2.ravel(), idx)
    z = np.take(u.ravel(), idx) * diff / np.take(Q.ravel(), idx)
    n = z.shape[-1]
    est = z.mean(axis=-1)
    half = t_ppf(1 - alpha / 2, n - 1) * z.std(axis=-1, ddof=1) / np.sqrt(n)
    return est, est - half, est + half


def q_support(Q):
    """What :func:`variance_times_n` needs of Q, for reuse across the W it is called with: the mask Q > 0, the
    values of Q there (in flat order) and the flat indices where Q = 0."""
    q = np.asarray(Q, float).ravel()
    pos = q > 0
    return pos, q[pos], np.flatnonzero(~pos)


def variance_times_n(u, W, Q=None, support=None) -> float:
    """Exact Σ(Q) · n = Var_Q[z] with z = u W / Q (W = P for Û, P − P' for Δ̂). Pairs with Q = 0 must have u W = 0.
    ``support``: :func:`q_support` of Q, given instead of Q when the caller has it already."""
    u, W = (np.asarray(a, float).ravel() for a in (u, W))
    pos, q_pos, zero = q_support(Q) if support is None else support
    num = u * W
    if np.any(num[zero] != 0):
        raise ValueError("Q lacks support where u·W ≠ 0: the estimator would be biased")
    mu = num.sum()
    return float((num[pos] ** 2 / q_pos).sum() - mu ** 2)


# ------------------------------------------------------------------ deterministic pooling baselines

def shallow_pool(u, ranks, P, n):
    """ShallowPool: judge the top b' = n / |X| items of each query; unjudged items count as 0."""
    b = max(int(n // u.shape[0]), 0)
    judged = ranks < b
    return float(np.sum(np.where(judged, u, 0.0) * P))


def pool_mask(ranks_all, pool_depth):
    """Pairs in the pool: the union of every system's top ``pool_depth``."""
    pooled = np.zeros(ranks_all[0].shape, dtype=bool)
    for r in ranks_all:
        pooled |= r < pool_depth
    return pooled


def deep_pool(u, pooled, P, n, rng=None):
    """DeepPool: judge every pooled item (``pooled``, see :func:`pool_mask`) of l' = n / b random queries (b = the
    mean pool size per query), and average the metric over those queries (unbiased for U(S), high variance)."""
    rng = np.random.default_rng(rng)
    b = pooled.sum(axis=1).mean()
    n_q = max(int(n // b), 1)
    qs = rng.choice(u.shape[0], size=n_q, replace=False)
    per_query = np.sum(np.where(pooled[qs], u[qs], 0.0) * P[qs], axis=1) * u.shape[0]
    return float(per_query.mean())
