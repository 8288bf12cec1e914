"""Does a labeler order the systems as humans do? Kendall's τ_b and τ_AP between the systems' mean scores by labels
and by humans, over all systems and over the top k systems by humans, with an interval for τ_b.

**What the interval covers.** Topics are the sample; the systems and the labels are fixed. The target is the τ_b
between the systems' population means (over topics like these) by humans and by labels, of the systems in the row
(all, or the top k by these topics' human means). Kendall's τ between means is not a smooth statistic: noise in
the means shuffles close systems, so a sample τ is biased towards 0 and a percentile bootstrap around it misses
the target (in tests/test_audit.py's simulation a nominal 90% percentile interval covered 76% at 25 topics and 88%
at 60). The interval here holds its level instead, conservatively: every pairwise difference of means, by humans
and by labels (2 · S(S−1)/2 of them), gets a simultaneous (1 − α) interval from a studentised max-|t| bootstrap
over topics (``n_boot`` resamples, vectorised; Romano & Wolf 2005's single-step max-t); a pair's order is known
where both its intervals exclude 0, and the interval of τ_b is [known − unknown, known + unknown] / pairs, with
known the sum of the known pairs' concordance (±1) and unknown the number of the others. When all the simultaneous
intervals hold — probability ≥ 1 − α — the target lies inside, for any row, the data-selected top k included.
It is wide with few topics or close systems: that is how little the topics say about the order. τ_AP is given
without an interval (no interval of it was shown to hold its level). Population means are taken as distinct (ties
between systems' population means have probability 0 with continuous scores).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from irrepro.stats.rankcorr import tau_ap

COLUMNS = ["top", "systems", "tau_b", "low", "high", "tau_ap", "pairs", "pairs_known"]


def kendall_b_rows(H, L) -> np.ndarray:
    """Kendall's τ_b of each row pair of two ``R x N`` arrays (scipy's ``kendalltau(variant="b")`` row by row):
    Σ sign(h_i − h_j) sign(l_i − l_j) over pairs i < j, divided by √(pairs untied in h · pairs untied in l); NaN
    where either row is constant."""
    H, L = np.atleast_2d(np.asarray(H, float)), np.atleast_2d(np.asarray(L, float))
    iu = np.triu_indices(H.shape[1], 1)
    sh = np.sign(H[:, :, None] - H[:, None, :])[:, iu[0], iu[1]]
    sl = np.sign(L[:, :, None] - L[:, None, :])[:, iu[0], iu[1]]
    den = np.sqrt((sh != 0).sum(axis=1) * (sl != 0).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (sh * sl).sum(axis=1) / np.where(den > 0, den, 1.0), np.nan)


def tau_ap_rows(truth, estimate) -> np.ndarray:
    """:func:`~irrepro.stats.rankcorr.tau_ap` of each row pair of two ``R x N`` arrays (``truth`` the reference
    ranking): vectorised over the rows whose estimate has no ties, the function itself on the others."""
    T, E = np.atleast_2d(np.asarray(truth, float)), np.atleast_2d(np.asarray(estimate, float))
    R, N = T.shape
    if N < 2:
        return np.full(R, np.nan)
    corr = (T[:, :, None] > T[:, None, :]) + 0.5 * (T[:, :, None] == T[:, None, :])  # [r, y, x]: y above x is right
    above = E[:, :, None] > E[:, None, :]                                            # y strictly above x by estimate
    c_above = (corr * above).sum(axis=1)
    n_above = above.sum(axis=1)                                                      # rank of x - 1 without ties
    with np.errstate(invalid="ignore", divide="ignore"):
        total = np.where(n_above > 0, c_above / np.maximum(n_above, 1), 0.0).sum(axis=1)
    out = 2.0 * total / (N - 1) - 1.0
    tied = np.array([len(np.unique(e)) < N for e in E])
    for r in np.flatnonzero(tied):
        out[r] = tau_ap(T[r], E[r])
    return out


def _top(means_h, k):
    """Indices of the top ``k`` columns of each row by human mean (ties by column order)."""
    return np.argsort(-means_h, axis=1, kind="stable")[:, :k]


def pair_signs(H, L, *, n_boot: int = 1000, seed: int = 0, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """``(humans, labels)``: S x S matrices of the order of each pair of systems known at simultaneous level
    1 − α (+1: the row's system has the higher population mean, −1 lower, 0 not known), from the studentised
    max-|t| bootstrap over topics of all pairwise differences of both score matrices (``H``, ``L``: topics x
    systems). A pair whose per-topic difference does not vary is known exactly: the sign of its mean (0 for
    identical systems)."""
    H, L = np.asarray(H, float), np.asarray(L, float)
    T, S = H.shape
    i, j = np.triu_indices(S, 1)
    D = np.concatenate([H[:, i] - H[:, j], L[:, i] - L[:, j]], axis=1)                        # T x 2P
    m, se = D.mean(axis=0), D.std(axis=0, ddof=1) / np.sqrt(T)
    W = np.random.default_rng(seed).multinomial(T, np.full(T, 1.0 / T), size=n_boot) / T      # R x T
    mb = W @ D
    seb = np.sqrt(np.maximum(W @ (D * D) - mb * mb, 0.0) * T / (T - 1) / T)
    varies = se > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(mb - m) / np.where(seb > 0, seb, np.inf)
    c = float(np.quantile(t[:, varies].max(axis=1), 1 - alpha)) if varies.any() else 0.0
    sign = np.where(~varies, np.sign(m), np.where(m - c * se > 0, 1, np.where(m + c * se < 0, -1, 0)))
    out = []
    for part in (sign[: len(i)], sign[len(i):]):
        M = np.zeros((S, S), dtype=int)
        M[i, j], M[j, i] = part, -part
        out.append(M)
    return out[0], out[1]


def tau_bounds(sign_h, sign_l, idx) -> tuple[float, float, int, int]:
    """``(low, high, pairs, known)``: the range of τ_b over the systems ``idx`` that the known pair orders allow
    (:func:`pair_signs`)."""
    idx = np.asarray(idx)
    a, b = np.triu_indices(len(idx), 1)
    sh, sl = sign_h[idx[a], idx[b]], sign_l[idx[a], idx[b]]
    known = (sh != 0) & (sl != 0)
    k, u, n = int((sh * sl)[known].sum()), int((~known).sum()), len(a)
    return (k - u) / n, (k + u) / n, n, int(known.sum())


def ranking_audit(H, L, *, tops=(5, 10, 20), n_boot: int = 1000, seed: int = 0, alpha: float = 0.05) -> pd.DataFrame:
    """Rows (:data:`COLUMNS`) for all systems (``top = "all"``) and each ``k`` of ``tops`` smaller than the number
    of systems: ``H``, ``L`` are topics x systems arrays (the same topics and systems, complete) of per-topic scores
    by humans and by labels; the top k are the k best systems by these topics' human means (ties by column
    order). ``tau_b``, ``tau_ap``: of these topics' means; ``low, high``: the interval of τ_b (module docstring);
    ``pairs_known``: the pairs whose order both score tables establish at that level."""
    H, L = np.asarray(H, float), np.asarray(L, float)
    T, S = H.shape
    mh, ml = H.mean(axis=0)[None], L.mean(axis=0)[None]
    sign_h, sign_l = pair_signs(H, L, n_boot=n_boot, seed=seed, alpha=alpha)
    rows = []
    for k in [None] + sorted({int(k) for k in tops if int(k) < S}):
        idx = np.arange(S) if k is None else _top(mh, k)[0]
        h, lab = mh[:, idx], ml[:, idx]
        lo, hi, n, known = tau_bounds(sign_h, sign_l, idx)
        rows.append({"top": "all" if k is None else str(k), "systems": len(idx),
                     "tau_b": float(kendall_b_rows(h, lab)[0]), "low": lo, "high": hi,
                     "tau_ap": float(tau_ap_rows(h, lab)[0]), "pairs": n, "pairs_known": known})
    return pd.DataFrame(rows, columns=COLUMNS)
