"""The experiments of Schnabel et al. (ICTIR 2016, Sec. 7) built on :mod:`.estimators`.

* Tables 2–4 (:func:`single_system_experiment`): true U(S) (Eq. 2), ShallowPool, DeepPool, Û(S) (Eq. 3) under
  the approximate Q* (Eq. 4), QP and uniform sampling, CI half-width (Eq. 6) and coverage;
* Tables 5–7 (:func:`comparative_variances`): the exact Σ(Q)·n (Eqs. 8, 10) of the naive sampler and of Q* for a
  pair (Eq. 9), k systems against a baseline (Eq. 11) and ranking k systems (Eq. 13);
* Figs 1–3 (:func:`comparative_accuracy`): accuracy of the sampled comparisons against the judgment budget.
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from irrepro.core.progress import Progress
from irrepro.papers.sampling.estimators import (approx_utility_rank, confidence_interval, deep_pool, delta_hat, draw,
                                                pool_mask, q_baseline, q_naive_multi, q_pair, q_pair_naive,
                                                q_ranking, q_single, q_support, q_uniform, shallow_pool, target,
                                                true_utility, u_hat, variance_times_n)


# ------------------------------------------------------------------ SYNTH experiment (Tables 2–4)

def single_system_experiment(u, ranks: dict, n: int, trials: int, seed: int, base=np.e, pool_depth=None,
                             alpha=0.05, approx=approx_utility_rank, target_fn=None, depth=None):
    """Tables 2–4 of the paper for every system: true U(S); ShallowPool; DeepPool mean ± sd; Û(S) under the
    approximate Q* (Eq. 4) mean ± sd; sd of Û under Q*, QP (ũ = 1) and uniform; mean 95% CI half-width (Eq. 6)
    and empirical coverage, and the standard errors the verify tolerances are made of: ``true_se`` and
    ``shallow_se`` over queries (sd of the per-query metric / sqrt(|X|)) and ``ci_halfwidth_sd`` over trials.
    Returns a frame, one row per system."""
    rng = np.random.default_rng(seed)
    pool_depth = pool_depth or u.shape[1]
    if target_fn is None:
        Ps = {s: target(r, base=base) for s, r in ranks.items()}
    else:
        Ps = {s: target_fn(r, depth) for s, r in ranks.items()}
    unif = q_uniform(u.shape)
    pooled = pool_mask(list(ranks.values()), pool_depth)
    rows = []
    progress = Progress(len(ranks), f"Tables 2-4 ({trials} trials, n={n})", unit="systems")
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
        # standard errors over users (a regenerated SYNTH draws new users): per-query metric = |X| * row sum
        nq = u.shape[0]
        per_q = nq * np.sum(u * P, axis=1)
        per_q_shallow = nq * np.sum(np.where(r < max(int(n // nq), 0), u, 0.0) * P, axis=1)
        rows.append({"system": s, "true": true, "shallow": shallow_pool(u, r, P, n),
                     "true_se": float(per_q.std(ddof=1) / np.sqrt(nq)),
                     "shallow_se": float(per_q_shallow.std(ddof=1) / np.sqrt(nq)),
                     "ci_halfwidth_sd": float(np.std(hi - est, ddof=1)),
                     "deep_mean": deep.mean(), "deep_sd": deep.std(ddof=1),
                     "u_hat_mean": est.mean(), "u_hat_sd": sd["q_star"],
                     "sd_q_star": sd["q_star"], "sd_q_p": sd["q_p"], "sd_q_unif": sd["q_unif"],
                     "ci_halfwidth": float(np.mean(hi - est)),
                     "coverage": float(np.mean((lo <= true) & (true <= hi)))})
        progress.advance()
    progress.close()
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ comparative evaluation (Tables 5–7, Figs 1–3)

def comparison_sets(true_u: dict, window: int = 5):
    """Systems sorted by true U (best first); adjacent pairs and sliding windows of ``window`` systems
    (Sec. 7.1: "compare adjacent systems ... and a sliding window of five systems", the middle one the baseline)."""
    order = sorted(true_u, key=true_u.get, reverse=True)
    pairs = list(zip(order[:-1], order[1:]))
    windows = [order[i:i + window] for i in range(0, max(len(order) - window + 1, 1))] if len(order) >= 2 else []
    return order, pairs, windows


# Tables 5–7: (table, comparison problem of comparative_variances' keys "<problem>_<sampler>/<approx|true>")
PROBLEMS = (("table5", "pair"), ("table6", "base"), ("table7", "rank"))


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
            qn = q_support(q_naive_multi(ut, Pw))        # one sampler, k − 1 + k variances: its support once
            res["base_naive"].append(sum(variance_times_n(u, Ps[s] - Ps[base], support=qn) for s in others)
                                     / len(others))
            qb = q_support(q_baseline(ut, [Ps[s] for s in others], Ps[base]))
            res["base_qstar"].append(sum(variance_times_n(u, Ps[s] - Ps[base], support=qb) for s in others)
                                     / len(others))
            tau = sum(Pw) / len(Pw)
            res["rank_naive"].append(sum(variance_times_n(u, Ps[s] - tau, support=qn) for s in w) / len(w))
            qr = q_support(q_ranking(ut, Pw))
            res["rank_qstar"].append(sum(variance_times_n(u, Ps[s] - tau, support=qr) for s in w) / len(w))
        nq = u.shape[0]
        for k, v in res.items():
            out[f"{k}/{label}"] = float(np.mean(v)) / nq if v else float("nan")
    return out


def kendall_tau_rows(x, y) -> np.ndarray:
    """Kendall's τ-b of each row of ``x`` (rows × k) with ``y`` (k values), with the same floating-point result as
    ``scipy.stats.kendalltau(row, y).statistic``: (concordant − discordant pairs) / sqrt(pairs not tied in x) /
    sqrt(pairs not tied in y), clipped to [−1, 1]; NaN where either side is all ties, has fewer than two values or
    contains NaN. The pair counts are integers, so counting them over the k(k−1)/2 pairs directly gives the same
    numerator and denominators as scipy's sort-based count."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float).ravel()
    k = y.size
    i, j = np.triu_indices(k, 1)
    xi, xj = x[:, i], x[:, j]
    sx = (xi > xj).astype(np.int64) - (xi < xj)          # sign of each pair's difference; 0 = tie
    sy = (y[i] > y[j]).astype(np.int64) - (y[i] < y[j])
    tot = k * (k - 1) // 2
    xtie = np.count_nonzero(sx == 0, axis=1)
    ytie = int(np.count_nonzero(sy == 0))
    con_minus_dis = sx @ sy if tot else np.zeros(x.shape[0], dtype=np.int64)
    undefined = (xtie == tot) | (ytie == tot) | np.isnan(x).any(axis=1) | bool(np.isnan(y).any())
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    tau = np.minimum(1.0, np.maximum(-1.0, tau))
    tau[undefined] = np.nan
    return tau


def comparative_accuracy(u, Ps: dict, approx: dict, budgets, trials: int, seed: int, window: int = 5) -> pd.DataFrame:
    """Figs 1–3: for each budget n, mean sign accuracy of Δ̂ over adjacent pairs (Fig 1), mean accuracy of the
    comparisons against the baseline over sliding windows (Fig 2), and mean Kendall's τ of the ranking by Δ̂(S, τ)
    (Fig 3), for the naive sampler and the paper's Q* (approximate utilities)."""
    rng = np.random.default_rng(seed)
    true = {s: true_utility(u, P) for s, P in Ps.items()}
    _, pairs, windows = comparison_sets(true, window)
    # The samplers depend on the comparison set and the sampler, not on the budget: each is built once, on first
    # use, and reused for every budget (the draws, and their order, are those of a loop that rebuilds them).
    @functools.cache
    def pair_q(a, b, sampler):
        ut = (approx[a] + approx[b]) / 2
        return q_pair_naive(ut, Ps[a], Ps[b]) if sampler == "naive" else q_pair(ut, Ps[a], Ps[b])

    @functools.cache
    def window_qs(w: tuple, sampler):
        """(sampler for the comparisons with the baseline, sampler for the ranking, the mean system τ)."""
        ut = sum(approx[s] for s in w) / len(w)
        base = w[len(w) // 2]
        others = [s for s in w if s != base]
        Pw = [Ps[s] for s in w]
        if sampler == "naive":
            Q = Qr = q_naive_multi(ut, Pw)
        else:
            Q, Qr = q_baseline(ut, [Ps[s] for s in others], Ps[base]), q_ranking(ut, Pw)
        return Q, Qr, sum(Pw) / len(Pw)

    rows = []
    progress = Progress(2 * len(budgets), f"Figs 1-3 ({trials} trials)", unit="budget x sampler")
    for n in budgets:
        for sampler in ("naive", "qstar"):
            acc1 = []
            for a, b in pairs:
                Q = pair_q(a, b, sampler)
                d = delta_hat(u, Ps[a], Ps[b], Q, draw(Q, n, trials, rng))
                acc1.append(np.mean(np.sign(d) == np.sign(true[a] - true[b])))
            acc2, taus = [], []
            for w in windows:
                Q, Qr, tau = window_qs(tuple(w), sampler)
                base = w[len(w) // 2]
                others = [s for s in w if s != base]
                idx = draw(Q, n, trials, rng)
                for s in others:
                    d = delta_hat(u, Ps[s], Ps[base], Q, idx)
                    acc2.append(np.mean(np.sign(d) == np.sign(true[s] - true[base])))
                idx = draw(Qr, n, trials, rng)
                est = np.stack([delta_hat(u, Ps[s], tau, Qr, idx) for s in w], axis=1)   # trials × systems
                taus.append(kendall_tau_rows(est, [true[s] for s in w]))
            rows.append({"budget": n, "sampler": sampler, "pair_accuracy": float(np.mean(acc1)) if acc1 else np.nan,
                         "baseline_accuracy": float(np.mean(acc2)) if acc2 else np.nan,
                         "kendall_tau": float(np.nanmean(np.concatenate(taus))) if taus else np.nan})
            progress.advance()
    progress.close()
    return pd.DataFrame(rows)
