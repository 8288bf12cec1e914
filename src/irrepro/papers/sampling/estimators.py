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

Sampling is with replacement and vectorised over trials (:func:`draw`: two-level inverse-CDF sampling, a multinomial
over segments of Q, then a ``searchsorted`` in each segment's CDF for the draws of all trials, dealt out to the
trials at random).
"""
from __future__ import annotations

import numpy as np
from scipy import stats


# ------------------------------------------------------------------ metrics (λ as a function of the 0-based rank)

def dcg_weights(ranks, k=None, base=2.0):
    """DCG@k: λ = 1 / log_base(rank + 2) for 0-based rank < k (Table 1). SYNTH's Table 2 needs base e."""
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


def q_uniform(shape):
    return np.full(shape, 1.0 / np.prod(shape))


def mix_epsilon(Q, eps):
    """Q ∝ Q + ε (Sec. 3.7): full support so that the judgments can be reused for any new system."""
    return _normalise(Q + eps)


def balance_mixture(Qs, counts):
    """Eq. 5, the balance heuristic: data drawn n_i times from Q_i is weighted by Q = Σ n_i Q_i / Σ n_i."""
    counts = np.asarray(counts, dtype=float)
    return sum(c * q for c, q in zip(counts, Qs)) / counts.sum()


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
    half = stats.t.ppf(1 - alpha / 2, n - 1) * z.std(axis=-1, ddof=1) / np.sqrt(n)
    return est, est - half, est + half


def variance_times_n(u, W, Q) -> float:
    """Exact Σ(Q) · n = Var_Q[z] with z = u W / Q (W = P for Û, P − P' for Δ̂). Pairs with Q = 0 must have u W = 0."""
    u, W, Q = (np.asarray(a, float).ravel() for a in (u, W, Q))
    num = u * W
    pos = Q > 0
    if np.any((~pos) & (num != 0)):
        raise ValueError("Q lacks support where u·W ≠ 0: the estimator would be biased")
    mu = num.sum()
    return float((num[pos] ** 2 / Q[pos]).sum() - mu ** 2)


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


# ------------------------------------------------------------------ SYNTH experiment (Tables 2–4)

def approx_utility_rank(ranks, top=4.0, n_items=None):
    """The paper's ũ_S(x, y) = 4 (1 − rank / 2000) for SYNTH (0-based rank, so every item keeps ũ > 0)."""
    n_items = n_items or ranks.shape[1]
    return top * (1.0 - np.asarray(ranks, float) / n_items)


def approx_utility_trec(ranks):
    """The paper's ũ_S(x, y) = 16 / (rank + 34) for TREC (1-based rank)."""
    return 16.0 / (np.asarray(ranks, float) + 1 + 34)


def single_system_experiment(u, ranks: dict, n: int, trials: int, seed: int, base=np.e, pool_depth=None,
                             alpha=0.05, approx=approx_utility_rank, target_fn=None, depth=None):
    """Tables 2–4 of the paper for every system: true U(S); ShallowPool; DeepPool mean ± sd; Û(S) under the
    approximate Q* (Eq. 4) mean ± sd; sd of Û under Q*, QP (ũ = 1) and uniform; mean 95% CI half-width (Eq. 6)
    and empirical coverage. Returns a list of dict rows."""
    import pandas as pd
    rng = np.random.default_rng(seed)
    pool_depth = pool_depth or u.shape[1]
    if target_fn is None:
        Ps = {s: target(r, base=base) for s, r in ranks.items()}
    else:
        Ps = {s: target_fn(r, depth) for s, r in ranks.items()}
    unif = q_uniform(u.shape)
    pooled = pool_mask(list(ranks.values()), pool_depth)
    rows = []
    for s, r in ranks.items():
        P = Ps[s]
        true = true_utility(u, P)
        q_star = q_single(approx(r), P)
        q_p = q_single(np.ones_like(u), P)
        idx = draw(q_star, n, trials, rng)
        est, lo, hi = confidence_interval(u, P, q_star, idx, alpha)
        sd = {"q_star": est.std(ddof=1)}
        for name, Q in (("q_p", q_p), ("q_unif", unif)):
            sd[name] = u_hat(u, P, Q, draw(Q, n, trials, rng)).std(ddof=1)
        deep = np.array([deep_pool(u, pooled, P, n, rng) for _ in range(trials)])
        rows.append({"system": s, "true": true, "shallow": shallow_pool(u, r, P, n),
                     "deep_mean": deep.mean(), "deep_sd": deep.std(ddof=1),
                     "u_hat_mean": est.mean(), "u_hat_sd": sd["q_star"],
                     "sd_q_star": sd["q_star"], "sd_q_p": sd["q_p"], "sd_q_unif": sd["q_unif"],
                     "ci_halfwidth": float(np.mean(hi - est)),
                     "coverage": float(np.mean((lo <= true) & (true <= hi)))})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ comparative evaluation (Tables 5–7, Figs 1–3)

def q_naive_multi(u_approx, Ps):
    """The naive multi-system heuristic (mixture importance sampling): ∝ ũ · Σ_j P_j."""
    return _normalise(u_approx * sum(Ps))


def comparison_sets(true_u: dict, window: int = 5):
    """Systems sorted by true U (best first); adjacent pairs and sliding windows of ``window`` systems
    (Sec. 7.1: "compare adjacent systems ... and a sliding window of five systems", the middle one the baseline)."""
    order = sorted(true_u, key=true_u.get, reverse=True)
    pairs = list(zip(order[:-1], order[1:]))
    windows = [order[i:i + window] for i in range(0, max(len(order) - window + 1, 1))] if len(order) >= 2 else []
    return order, pairs, windows


def comparative_variances(u, Ps: dict, approx: dict, window: int = 5) -> dict:
    """Tables 5–7: Σ(Q)·n (Eqs. 8, 10), averaged over the comparison sets, for the naive sampler and the paper's
    Q*, each built from the approximate utilities ũ (mean of the systems' ũ) and from the true utilities u*.

    Scale: the paper's printed numbers are Σ(Q)·n / |X| (the variance times the per-query budget), and for the
    k-system problems the *mean* rather than the sum of the k variances: with that scaling our SYNTH values agree
    with all twelve SYNTH cells of Tables 5–7 within a few percent (docs/sampling.md). We report that scale."""
    true = {s: true_utility(u, P) for s, P in Ps.items()}
    _, pairs, windows = comparison_sets(true, window)
    out = {}
    for label, util in (("approx", None), ("true", u)):
        res = {"pair_naive": [], "pair_qstar": [], "base_naive": [], "base_qstar": [], "rank_naive": [],
               "rank_qstar": []}
        for a, b in pairs:
            ut = util if util is not None else (approx[a] + approx[b]) / 2
            W = Ps[a] - Ps[b]
            res["pair_naive"].append(variance_times_n(u, W, q_pair_naive(ut, Ps[a], Ps[b])))
            res["pair_qstar"].append(variance_times_n(u, W, q_pair(ut, Ps[a], Ps[b])))
        for w in windows:
            ut = util if util is not None else sum(approx[s] for s in w) / len(w)
            base = w[len(w) // 2]
            others = [s for s in w if s != base]
            Pw = [Ps[s] for s in w]
            qn = q_naive_multi(ut, Pw)
            res["base_naive"].append(sum(variance_times_n(u, Ps[s] - Ps[base], qn) for s in others) / len(others))
            qb = q_baseline(ut, [Ps[s] for s in others], Ps[base])
            res["base_qstar"].append(sum(variance_times_n(u, Ps[s] - Ps[base], qb) for s in others) / len(others))
            tau = sum(Pw) / len(Pw)
            res["rank_naive"].append(sum(variance_times_n(u, Ps[s] - tau, qn) for s in w) / len(w))
            qr = q_ranking(ut, Pw)
            res["rank_qstar"].append(sum(variance_times_n(u, Ps[s] - tau, qr) for s in w) / len(w))
        nq = u.shape[0]
        for k, v in res.items():
            out[f"{k}/{label}"] = float(np.mean(v)) / nq if v else float("nan")
    return out


def comparative_accuracy(u, Ps: dict, approx: dict, budgets, trials: int, seed: int, window: int = 5) -> "pd.DataFrame":
    """Figs 1–3: for each budget n, mean sign accuracy of Δ̂ over adjacent pairs (Fig 1), mean accuracy of the
    comparisons against the baseline over sliding windows (Fig 2), and mean Kendall's τ of the ranking by Δ̂(S, τ)
    (Fig 3), for the naive sampler and the paper's Q* (approximate utilities)."""
    import pandas as pd
    from scipy.stats import kendalltau
    rng = np.random.default_rng(seed)
    true = {s: true_utility(u, P) for s, P in Ps.items()}
    _, pairs, windows = comparison_sets(true, window)
    rows = []
    for n in budgets:
        for sampler in ("naive", "qstar"):
            acc1 = []
            for a, b in pairs:
                ut = (approx[a] + approx[b]) / 2
                Q = q_pair_naive(ut, Ps[a], Ps[b]) if sampler == "naive" else q_pair(ut, Ps[a], Ps[b])
                d = delta_hat(u, Ps[a], Ps[b], Q, draw(Q, n, trials, rng))
                acc1.append(np.mean(np.sign(d) == np.sign(true[a] - true[b])))
            acc2, taus = [], []
            for w in windows:
                ut = sum(approx[s] for s in w) / len(w)
                base = w[len(w) // 2]
                others = [s for s in w if s != base]
                Pw = [Ps[s] for s in w]
                Q = q_naive_multi(ut, Pw) if sampler == "naive" else q_baseline(ut, [Ps[s] for s in others], Ps[base])
                idx = draw(Q, n, trials, rng)
                for s in others:
                    d = delta_hat(u, Ps[s], Ps[base], Q, idx)
                    acc2.append(np.mean(np.sign(d) == np.sign(true[s] - true[base])))
                Qr = q_naive_multi(ut, Pw) if sampler == "naive" else q_ranking(ut, Pw)
                idx = draw(Qr, n, trials, rng)
                tau = sum(Pw) / len(Pw)
                est = np.stack([delta_hat(u, Ps[s], tau, Qr, idx) for s in w], axis=1)   # trials × systems
                t_true = [true[s] for s in w]
                taus += [kendalltau(e, t_true)[0] for e in est]
            rows.append({"budget": n, "sampler": sampler, "pair_accuracy": float(np.mean(acc1)) if acc1 else np.nan,
                         "baseline_accuracy": float(np.mean(acc2)) if acc2 else np.nan,
                         "kendall_tau": float(np.nanmean(taus)) if taus else np.nan})
    return pd.DataFrame(rows)


def trec_matrices(runs: dict, qrels, depth: int = 100, binary: bool = True):
    """The TREC substitute: runs truncated to ``depth``; items per query = the union of the systems' retrieved
    documents (unretrieved pairs get P = 0); u = relevance from the qrels (unjudged = 0; binary by default, as the
    paper's TREC data). Returns ``u`` (queries × items), ``ranks`` {system: 0-based rank, ``depth`` = not
    retrieved} and the query ids."""
    rel = {(q, d): r for q, d, r in zip(qrels.query_id.astype(str), qrels.doc_id, qrels.relevance)}
    queries = sorted(set.intersection(*[set(r.query_id.astype(str)) for r in runs.values()]))
    top = {s: {q: list(g.sort_values("rank")["doc_id"].head(depth)) for q, g in r.groupby(r.query_id.astype(str))}
           for s, r in runs.items()}
    items = {q: sorted(set().union(*[top[s].get(q, []) for s in runs])) for q in queries}
    width = max(len(v) for v in items.values())
    u = np.zeros((len(queries), width))
    ranks = {s: np.full((len(queries), width), depth, dtype=np.int64) for s in runs}
    for i, q in enumerate(queries):
        pos = {d: j for j, d in enumerate(items[q])}
        for d, j in pos.items():
            g = max(rel.get((q, d), 0), 0)
            u[i, j] = (1.0 if g > 0 else 0.0) if binary else float(g)
        for s in runs:
            for k, d in enumerate(top[s].get(q, [])):
                ranks[s][i, pos[d]] = k
    return u, ranks, queries


def target_depth(ranks, depth, base=2.0):
    """P for a run truncated at ``depth`` (rank == depth marks 'not retrieved': weight 0)."""
    lam = np.where(ranks < depth, np.log(base) / np.log(ranks + 2.0), 0.0)
    return lam / lam.shape[0]
