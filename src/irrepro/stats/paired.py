"""Paired tests of the mean difference between two systems over the same topics, for many pairs at once.

Every function takes ``D``, a (T × P) matrix of per-topic differences (column p: system a minus system b of pair
p), and returns one p-value per pair (two-sided). The parametric and rank tests are scipy's, vectorised over
columns; the resampling tests draw one set of resamples shared by all pairs, so that R resamples of all P pairs are
one (R × T) @ (T × P) product:

- ``t``: paired t-test (``scipy.stats.ttest_rel``).
- ``wilcoxon``: Wilcoxon signed-rank test (``scipy.stats.wilcoxon``; zero differences dropped, Wilcox's method).
- ``sign``: sign test, the exact binomial test of #(d > 0) among the non-zero d against 1/2 (equal to
  ``scipy.stats.binomtest``, computed from the binomial CDF for all pairs at once).
- ``randomisation``: paired randomisation (permutation) test: the signs of the differences flipped at random;
  p = (1 + #{|mean of flipped d| ≥ |mean d|}) / (1 + R) (Phipson & Smyth 2010), as ``scipy.stats.permutation_test``
  with ``permutation_type='samples'`` computes it.
- ``bootstrap``: studentised paired bootstrap test with the null imposed (Sakai 2006; Efron & Tibshirani 1993,
  Algorithm 16.2): the centred differences resampled with replacement, p = (1 + #{|t*| ≥ |t|}) / (1 + B) with t the
  paired t statistic; its interval is the symmetric bootstrap-t interval it inverts. (Comparing unstudentised
  bootstrap means, |m* − mean d| ≥ |mean d|, rejects twice as often as it should on 10 topics: its spread is the
  plug-in one, too small for few topics.)

A pair whose differences are all zero gets p = 1 under every test. The Monte-Carlo standard error of a resampled
p-value is sqrt(p (1 − p) / R): 0.0069 at p = 0.05 with R = 1000.
"""
from __future__ import annotations

import numpy as np
from scipy import stats

TESTS = ("t", "wilcoxon", "sign", "randomisation", "bootstrap")
#: pairs per block of the resampling tests: R × block floats in memory at once
BLOCK = 4096


def _rel_tol(x):
    # scipy's permutation_test compares with a relative tolerance so that resamples equal to the observed
    # statistic up to rounding count as "at least as extreme"
    return 1e-14 * np.maximum(np.abs(x), 1.0)


def t_interval(D: np.ndarray, alpha: float):
    """(mean, low, high, sd): the paired t-interval of the mean difference at level 1 − alpha, per column."""
    n = D.shape[0]
    m = D.mean(axis=0)
    sd = D.std(axis=0, ddof=1)
    h = stats.t.ppf(1 - alpha / 2, n - 1) * sd / np.sqrt(n)
    return m, m - h, m + h, sd


def paired_t(D: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        p = stats.ttest_rel(D, np.zeros_like(D), axis=0).pvalue
    m, sd = D.mean(axis=0), D.std(axis=0, ddof=1)
    # constant differences: no variance; p = 1 if they are all zero, else 0 (scipy gives NaN)
    const = sd == 0
    p = np.where(const, np.where(m == 0, 1.0, 0.0), p)
    return p


def wilcoxon(D: np.ndarray) -> np.ndarray:
    """scipy's test per column, with scipy's own choice of method made per column (its ``method='auto'`` decides
    once for all columns of a vectorised call): exact with at most 50 topics and no zero or tied |d|; else the normal
    approximation with continuity correction (a permutation test of the 2^T sign flips when T ≤ 13)."""
    T = D.shape[0]
    p = np.ones(D.shape[1])
    nonzero = (D != 0).any(axis=0)
    srt = np.sort(np.abs(D), axis=0)
    dirty = (D == 0).any(axis=0) | (np.diff(srt, axis=0) == 0).any(axis=0)
    exact = nonzero & ~dirty & (T <= 50)
    approx = nonzero & ~exact
    with np.errstate(divide="ignore", invalid="ignore"):
        if exact.any():
            p[exact] = stats.wilcoxon(D[:, exact], axis=0, zero_method="wilcox", method="exact").pvalue
        if approx.any() and T > 13:
            p[approx] = stats.wilcoxon(D[:, approx], axis=0, zero_method="wilcox", method="asymptotic").pvalue
        elif approx.any():
            p[approx] = _wilcoxon_permutation(D[:, approx])
    return p


def _signed_rank_plus(d: np.ndarray, axis: int = -1) -> np.ndarray:
    """Wilcoxon's W+ along ``axis`` with zeros dropped (``zero_method="wilcox"``): the sum of the average ranks of
    |d| among the non-zero d, over the positive d. Ranks are multiples of 1/2, so the sums are exact in float64
    whatever their order: the values equal scipy's own statistic bit for bit."""
    a = np.abs(d)
    r = stats.rankdata(np.where(d == 0, np.inf, a), method="average", axis=axis)  # zeros rank last, unused
    return np.sum((d > 0) * r, axis=axis)


def _wilcoxon_permutation(D: np.ndarray) -> np.ndarray:
    """What ``scipy.stats.wilcoxon(D[:, j], zero_method="wilcox")`` gives for columns with zeros or tied |d| and
    T <= 13 (scipy's method "auto" then runs ``permutation_test`` over all 2^T sign flips), for all columns in one
    call: the same enumeration, the same statistic and the same p-value formula, with the statistic vectorised
    (scipy's own is applied one permutation at a time: 140 ms per column here, about 2,000 columns per audit of 32
    systems on 10 topics). tests/test_stats.py compares it with scipy's per-column call bit for bit."""
    p = np.empty(D.shape[1])
    for s in range(0, D.shape[1], WILCOXON_BLOCK):  # 2^13 x 64 x 13 float64: 55 MB at most
        p[s:s + WILCOXON_BLOCK] = stats.permutation_test(
            (D[:, s:s + WILCOXON_BLOCK],), _signed_rank_plus, permutation_type="samples", vectorized=True,
            n_resamples=9999, alternative="two-sided", axis=0).pvalue
    return p


#: columns per call of :func:`_wilcoxon_permutation`
WILCOXON_BLOCK = 64


def sign(D: np.ndarray) -> np.ndarray:
    k = (D > 0).sum(axis=0)
    n = (D != 0).sum(axis=0)
    p = np.minimum(1.0, 2.0 * stats.binom.cdf(np.minimum(k, n - k), n, 0.5))
    return np.where(n == 0, 1.0, p)


def randomisation(D: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Sign-flip test: one (R × T) matrix of ±1 shared by all pairs. The R × block matrices of resampled means are
    transformed in place (no temporaries of their size)."""
    T, P = D.shape
    signs = rng.integers(0, 2, size=(n_resamples, T)).astype(float) * 2 - 1
    obs = np.abs(D.mean(axis=0))
    count = np.zeros(P)
    for s in range(0, P, BLOCK):
        block = signs @ D[:, s:s + BLOCK]  # R × block
        np.abs(block, out=block)
        block /= T
        count[s:s + BLOCK] = (block >= obs[s:s + BLOCK] - _rel_tol(obs[s:s + BLOCK])).sum(axis=0)
    return (count + 1) / (n_resamples + 1)


def bootstrap(D: np.ndarray, n_resamples: int, rng: np.random.Generator, alpha: float):
    """(p, low, high): the studentised paired bootstrap test with the null imposed and the interval it inverts; one
    (B × T) matrix of resample counts shared by all pairs.

    The differences are centred, z = d − mean(d) (the null imposed), resampled with replacement, and each resample's
    t* = mean(z*) / (sd(z*) / sqrt(T)) is compared with the observed t = mean(d) / (sd(d) / sqrt(T)):
    p = (1 + #{|t*| ≥ |t|}) / (1 + B) (Sakai 2006's bootstrap test; Efron & Tibshirani 1993, Algorithm 16.2). The
    interval is the symmetric bootstrap-t interval of the mean difference, mean ± c · sd / sqrt(T) with c the
    (1 − alpha) quantile of |t*| (Hall 1988): the set of shifts the test would not reject, so the interval holds 0
    exactly when p ≥ alpha, up to the ``1 +`` of the p-value. A resample without spread has t* = 0 when its mean
    is 0 and an infinite |t*| otherwise (counted as extreme: the test stays conservative); where more than alpha of
    the resamples have none (differences mostly tied, e.g. P@10 or RR with most topics equal) the quantile c is
    infinite and the interval is NaN (:data:`NO_INTERVAL` says why). Constant differences: p = 1 and the interval
    [0, 0] when they are 0; otherwise p = 1 / (1 + B) and the interval the constant itself."""
    T, P = D.shape
    W = rng.multinomial(T, np.full(T, 1.0 / T), size=n_resamples).astype(float)  # B × T counts
    obs = D.mean(axis=0)
    const = (D == D[:1]).all(axis=0)  # exactly constant differences: no spread, whatever the mean's rounding
    se = np.where(const, 0.0, D.std(axis=0, ddof=1) / np.sqrt(T))
    with np.errstate(divide="ignore", invalid="ignore"):
        t_obs = np.abs(np.where(se > 0, obs / np.where(se > 0, se, 1.0), np.where(obs == 0, 0.0, np.inf)))
    p, lo, hi = np.empty(P), np.empty(P), np.empty(P)
    for s in range(0, P, BLOCK):
        sl = slice(s, s + BLOCK)
        Z = np.where(const[sl], 0.0, D[:, sl] - obs[sl])
        mz = W @ Z  # B × block, sums
        mz /= T
        var = W @ (Z * Z)
        var /= T
        var -= mz * mz
        np.maximum(var, 0.0, out=var)
        var /= T - 1  # (T / (T - 1)) x plug-in variance, over T: the squared standard error of the mean
        with np.errstate(divide="ignore", invalid="ignore"):
            np.divide(np.abs(mz), np.sqrt(var, out=var), out=mz)
        np.nan_to_num(mz, copy=False, nan=0.0, posinf=np.inf)
        t = t_obs[sl]
        finite = np.isfinite(t)
        thr = np.where(finite, t - _rel_tol(np.where(finite, t, 0.0)), t)  # an infinite t is matched by inf only
        p[sl] = ((mz >= thr).sum(axis=0) + 1) / (n_resamples + 1)
        with np.errstate(invalid="ignore"):
            c = np.quantile(mz, 1 - alpha, axis=0, overwrite_input=True)
        c[~np.isfinite(c)] = np.nan  # more than alpha of the resamples without spread: no interval
        half = np.where(se[sl] > 0, c * se[sl], 0.0)
        lo[sl], hi[sl] = obs[sl] - half, obs[sl] + half
    zero = ~(D != 0).any(axis=0)
    p[zero] = 1.0
    return p, lo, hi


#: why :func:`bootstrap` gives a pair no interval (NaN bounds)
NO_INTERVAL = ("bootstrap-t gives no interval: more than alpha of the resamples have no spread (the differences are "
               "mostly tied), so its quantile of |t*| is infinite")

CORRECTIONS = {"none": None, "bonferroni": "bonferroni", "holm": "holm", "bh": "fdr_bh"}
#: the resampling tests and the setting that gives their number of resamples
RESAMPLED = {"randomisation": "n_permutations", "bootstrap": "n_bootstrap"}


def p_floor(test: str, resamples: int, topics: int) -> float:
    """The smallest p-value a resampling test can give: 1 / (R + 1) from R resamples, and for the sign-flip
    randomisation test at least 2^(1 − T) too (on T topics only 2^T sign patterns exist, and the observed one and
    its mirror are always as extreme); 0 for the other tests (their p-values are not bounded away from 0)."""
    if test not in RESAMPLED:
        return 0.0
    floor = 1.0 / (int(resamples) + 1)
    return max(floor, 2.0 ** (1 - int(topics))) if test == "randomisation" else floor


def unattainable(test: str, correction: str, pairs: int, topics: int, resamples: int, alpha: float) -> str:
    """Why no pair of a family of ``pairs`` can be significant under ``test`` and ``correction`` whatever the scores
    (``""`` when one can). Under Bonferroni and Holm the first pair is significant when pairs x p < alpha, so none
    can be once the test's smallest p-value (:func:`p_floor`) is at least alpha / pairs; the advice says what would
    make it attainable: more resamples when the resamples are the floor, and otherwise that none helps (the
    topics are: at least log2(2 pairs / alpha) of them)."""
    if test not in RESAMPLED or correction not in ("holm", "bonferroni"):
        return ""
    floor, first = p_floor(test, resamples, topics), float(alpha) / int(pairs)
    if floor < first:
        return ""
    why = (f"no pair can be significant: {test}'s smallest p-value on {topics} topics with {resamples} resamples, "
           f"{floor:.2g}, is not below {correction}'s first threshold alpha / {pairs} pairs = {first:.2g}")
    if test == "randomisation" and 2.0 ** (1 - int(topics)) >= first:
        need = int(np.floor(np.log2(2 * int(pairs) / float(alpha)))) + 1
        return (why + f"; no number of resamples helps: {topics} topics allow 2^{topics} sign patterns, so p >= "
                f"2^(1 - {topics}) = {2.0 ** (1 - int(topics)):.2g} (it needs {need} topics or more, or fewer "
                f"pairs: baselines instead of all pairs, or the randomised Tukey HSD, family-wise by construction)")
    need = int(np.ceil(int(pairs) / float(alpha)))
    return why + (f"; with {need} resamples or more (stats.{RESAMPLED[test]}) a rejection becomes possible, and "
                  "power needs several times that")




def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values: sorted ascending, the i-th smallest (from 0) times (m − i), made
    non-decreasing by a running maximum, capped at 1, back in the input order.

    The same operations in the same order as statsmodels' ``multipletests(p, method="holm")``, so the same floats
    (ties included: equal p-values get equal adjusted values whatever their sorted order), without the full garbage
    collection that statsmodels runs on every Holm call (a tenth of a second or more once matplotlib is loaded)."""
    p = np.asarray(p, dtype=float)
    order = np.argsort(p)
    adjusted = np.maximum.accumulate(np.take(p, order) * np.arange(p.size, 0, -1))
    adjusted[adjusted > 1] = 1
    out = np.empty_like(adjusted)
    out[order] = adjusted
    return out


def adjust(p: np.ndarray, correction: str) -> np.ndarray:
    """Adjusted p-values of one family: none, bonferroni, holm (:func:`holm`), bh (Benjamini–Hochberg false discovery
    rate; bonferroni and bh by statsmodels ``multipletests``)."""
    p = np.asarray(p, dtype=float)
    if correction not in CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}; one of {list(CORRECTIONS)}")
    if CORRECTIONS[correction] is None or p.size == 0:
        return p.copy()
    if np.isnan(p).any():
        raise ValueError("a p-value of the family is NaN; it would be left out of the family's size")
    if correction == "holm":
        return holm(p)
    from statsmodels.stats.multitest import multipletests

    return multipletests(p, method=CORRECTIONS[correction])[1]
