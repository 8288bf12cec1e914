"""Intervals of the mean over a finite set of N queries from the human values of n of them: the target of
``ci.systems`` (your N queries, n judged).

The n judged queries are a uniform random sample drawn without replacement from the N; the predictions ``Û`` of
all N are known. The target is ``θ = (1/N) Σ_{i≤N} U_i``, a fixed number; only the choice of the n is random. Its
estimators then have the variances of sampling without replacement (Cochran 1977, ch. 2 and 7):

* the mean of the n human values: ``(1 − n/N) S²_U / n``;
* PPI's ``mean_N(Û) + mean_n(U − Û)`` (a difference estimator): ``(1 − n/N) S²_{U−Û} / n`` — the predictions'
  mean over the N is known exactly, so it adds no variance (the ``s²_Û / N`` term of the paper's Eq. 10 is the
  error of a mean over an unbounded population of queries, not of these N);
* PPI++'s ``λ mean_N(Û) + mean_n(U − λÛ)``: ``(1 − n/N) S²_{U−λÛ} / n``, least at ``λ = Cov(U, Û) / Var(Û)``.

``S²`` are the variances over the N, estimated on the n (ddof 1). At n = N every width is 0: the mean is known.

Small samples. The error of each estimate is ``(m/N)(mean_n − mean_m)`` of a per-query value (m = N − n the
unjudged queries): a two-sample comparison whose smaller side sets its tails, so the intervals take Student's t
with ``min(n, m) − 1`` degrees of freedom (:func:`t_quantile`); with n = 85 of 100 a t on n − 1 degrees of freedom
covered 0.93–0.945 of simulated draws. PPI++'s λ̂ is fitted on the same n values it corrects, which makes the
plug-in variance optimistic at small n (0.87–0.90 coverage at n = 10 measured): its standard error is the
jackknife's (leave one judged query out, refit λ̂, recompute the estimate), which for PPI's fixed λ = 1 is exactly
the plug-in one. The bootstrap is the bootstrap-t (studentised) of the n human values, its spread rescaled by
``sqrt(1 − n/N)``: the basic bootstrap's quantiles cover 0.88–0.90 at n = 10 on right-skewed per-query values.

CRC (Oosterhuis et al., KDD 2024) calibrates λ on resampled batches of the n and bounds the mean of the m = N − n
others: the batches here are a two-stage (predictive) bootstrap, a resample of the n and from it m queries, so a
batch mean varies as ``mean_m(T) − mean_n(L)`` does under the split, ``S²(1/n + 1/m)`` (the paper's batches of n
from the n vary as ``S²/n``: too little once m < n, and never the n's own noise). Its risk bound is Eq. 15's with
the n calibration queries, ``½(α − (1 − α)/n)``: with n ≤ (1 − α)/α there is no interval (it cannot hold its
level), said in the row's note.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from irrepro.core.quantiles import t_ppf
from irrepro.errors import InputError
from irrepro.papers.ci.metric import _check_alpha, _check_values


class FiniteInterval(NamedTuple):
    """An interval of the mean over the N queries: ``estimate``, ``low``, ``high``, ``se`` (its standard error;
    NaN for the bootstrap and CRC) and ``lam`` (PPI's weight of the predictions; NaN where there is none)."""
    estimate: float
    low: float
    high: float
    se: float
    lam: float


def sampling_fraction(n: int, N: int) -> float:
    """``n / N``, checked: 2 ≤ n ≤ N."""
    n, N = int(n), int(N)
    if not 2 <= n <= N:
        raise InputError(f"need 2 <= n <= N judged queries, got n = {n} of N = {N}")
    return n / N


def t_quantile(alpha: float, n, N: int):
    """``t_{d}(1 − α/2)`` with ``d = min(n, N − n) − 1`` (at least 1): the two-sided quantile of an interval of the
    mean over N from n of them (see the module's text); ``n`` may be an array (an array of quantiles)."""
    n = np.asarray(n, dtype=int)
    d = np.maximum(1, np.minimum(n, int(N) - n) - 1)
    q = t_ppf(1 - _check_alpha(alpha) / 2, d)
    return float(q) if np.ndim(q) == 0 else q


def power_lambda(y_true, y_pred):
    """PPI++'s weight for the mean over the N: ``Cov(U, Û) / Var(Û)`` on the n judged queries (the λ minimising
    ``S²_{U−λÛ}``), clipped to [0, 1]; 0 where the predictions do not vary. Leading axes are independent rows."""
    yt = np.asarray(y_true, dtype=float)
    yp = np.asarray(y_pred, dtype=float)
    ypc = yp - yp.mean(axis=-1, keepdims=True)
    var = (ypc ** 2).sum(axis=-1)
    cov = ((yt - yt.mean(axis=-1, keepdims=True)) * ypc).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        lam = np.where(var > 0, cov / np.where(var > 0, var, 1.0), 0.0)
    return np.clip(lam, 0.0, 1.0)


def _ppi_estimate(yt, yp, pred_mean, lam):
    return lam * pred_mean + (yt - np.asarray(lam)[..., None] * yp).mean(axis=-1)


def ppi_interval(y_true, y_pred, pred_all, alpha=0.05, lam=1.0) -> FiniteInterval:
    """PPI (``lam=1``), PPI++ (``lam="tuned"``: :func:`power_lambda` fitted on the n) or a fixed λ in [0, 1] for the
    mean over the N queries: ``y_true``, ``y_pred`` (n,) the judged queries' human values and predictions,
    ``pred_all`` (N,) the predictions of all N (the judged ones among them).
    ``θ̂ = λ·mean_N(Û) + mean_n(U − λÛ)``; a fixed λ: ``se = sqrt((1 − n/N) s²_{U−λÛ} / n)``; a tuned λ: ``se`` the
    jackknife's over the n (λ̂ refitted without each query) times ``sqrt(1 − n/N)``; ``θ̂ ± t·se``
    (:func:`t_quantile`)."""
    yt = _check_values(y_true, "y_true", ndim=1)
    yp = _check_values(y_pred, "y_pred", ndim=1)
    pa = _check_values(pred_all, "pred_all", ndim=1)
    if yt.size != yp.size:
        raise InputError(f"ppi_interval: {yt.size} human values but {yp.size} predictions")
    n, N = yt.size, pa.size
    f = sampling_fraction(n, N)
    pm = float(pa.mean())
    if isinstance(lam, str):
        if lam != "tuned":
            raise InputError(f"ppi_interval: lam must be a number in [0, 1] or 'tuned', got {lam!r}")
        lam = float(power_lambda(yt, yp))
        est = float(_ppi_estimate(yt, yp, pm, lam))
        keep = ~np.eye(n, dtype=bool)                      # row i: every judged query but the i-th
        YT, YP = yt[None, :].repeat(n, 0)[keep].reshape(n, n - 1), yp[None, :].repeat(n, 0)[keep].reshape(n, n - 1)
        loo = _ppi_estimate(YT, YP, pm, power_lambda(YT, YP))
        var = (n - 1) / n * ((loo - loo.mean()) ** 2).sum()
    else:
        lam = float(lam)
        if not 0.0 <= lam <= 1.0:
            raise InputError(f"ppi_interval: lam must lie in [0, 1], got {lam}")
        est = float(_ppi_estimate(yt, yp, pm, lam))
        var = (yt - lam * yp).var(ddof=1) / n
    se = float(np.sqrt(max(0.0, 1.0 - f) * var))
    h = t_quantile(alpha, n, N) * se
    return FiniteInterval(est, est - h, est + h, se, lam)


def bootstrap_interval(values, N: int, alpha=0.05, n_boot=10_000, *, rng) -> FiniteInterval:
    """The bootstrap-t (studentised) interval of the n human ``values`` for the mean over the N queries: with ``m``
    their mean, ``s`` their standard error ``sd/√n`` and ``t*`` = (resample mean − m) / resample standard error over
    ``rng.integers(0, n, (n_boot, n))`` (resamples without spread left out), ``[m − q_{1−α/2}(t*)·c, m −
    q_{α/2}(t*)·c]`` with ``c = s·sqrt(1 − n/N)`` (sampling without replacement). Its quantiles follow the skew of
    the values, which a symmetric interval misses at small n. ``se``: ``c``. Width 0 at n = N."""
    v = _check_values(values, "values", ndim=1)
    n = v.size
    f = sampling_fraction(n, N)
    n_boot = int(n_boot)
    if n_boot < 1:
        raise InputError(f"bootstrap_interval: n_boot must be >= 1, got {n_boot}")
    m = float(v.mean())
    c = float(v.std(ddof=1) / np.sqrt(n) * np.sqrt(max(0.0, 1.0 - f)))
    x = v[np.random.default_rng(rng).integers(0, n, size=(n_boot, n))]
    se = x.std(axis=1, ddof=1) / np.sqrt(n)
    ok = se > 0
    if c == 0 or not ok.any():                      # no spread in the values (or n = N): nothing to resample
        return FiniteInterval(m, m, m, c, np.nan)
    t = (x[ok].mean(axis=1) - m) / se[ok]
    q_lo, q_hi = np.quantile(t, [alpha / 2, 1 - alpha / 2])
    return FiniteInterval(m, float(m - q_hi * c), float(m - q_lo * c), c, np.nan)


#: the fewest judged queries the bootstrap gives an interval from: on right-skewed per-query values (DCG@10 over
#: queries) its bootstrap-t covered 0.935 of 6,000 draws of n = 10 of N = 100 at the 95% level, 0.947–0.953 at
#: n = 20 (tests/test_ci_systems_coverage.py's population; docs/ci.md)
BOOTSTRAP_MIN_QUERIES = 20


def bootstrap_note(n: int, alpha=0.05) -> str:
    """Why the bootstrap gives no interval from ``n`` judged queries (``""`` where it gives one)."""
    if int(n) >= BOOTSTRAP_MIN_QUERIES:
        return ""
    return (f"no bootstrap interval: resampling n = {int(n)} judged queries cannot hold its {1 - alpha:.0%} level on "
            f"skewed per-query values (it needs n >= {BOOTSTRAP_MIN_QUERIES}); PPI uses the labels of all N")


#: the fewest judged queries PPI++ gives an interval from: its λ̂ is fitted on the same n queries it then averages,
#: and at small n its interval is narrower than its level. Measured by tests/bench_ppi_tuned.py (4,000 draws a cell,
#: N = 100, 200, 500, two label noises; docs/ci.md): below 95% by more than three binomial standard errors in 7 of
#: the 12 cells with n <= 25 (0.917-0.938), in none of the 6 with n >= 40 (0.940-0.951); PPI (λ = 1) held in all.
PPI_TUNED_MIN_QUERIES = 40


def ppi_tuned_note(n: int, alpha=0.05) -> str:
    """Why PPI++ gives no interval from ``n`` judged queries (``""`` where it gives one)."""
    if int(n) >= PPI_TUNED_MIN_QUERIES:
        return ""
    return (f"no PPI++ interval: a λ fitted on n = {int(n)} judged queries cannot hold its {1 - alpha:.0%} level "
            f"(it needs n >= {PPI_TUNED_MIN_QUERIES}); PPI (λ = 1) holds with few judged queries")


def min_queries(method: str, alpha=0.05) -> int:
    """The fewest judged queries ``method`` (``bootstrap``, ``ppi``, ``ppi++``, ``crc``) gives an interval from."""
    floors = {"bootstrap": BOOTSTRAP_MIN_QUERIES, "ppi": 2, "ppi++": PPI_TUNED_MIN_QUERIES,
              "crc": crc_min_queries(alpha)}
    if method not in floors:
        raise InputError(f"min_queries: unknown method {method!r}; expected one of {sorted(floors)}")
    return floors[method]


def crc_min_queries(alpha=0.05) -> int:
    """The fewest judged queries CRC's bound ``½(α − (1 − α)/n)`` is positive with: the smallest n > (1 − α)/α."""
    a = _check_alpha(alpha)
    return int(np.floor((1 - a) / a + 1e-12)) + 1


def predictive_counts(n: int, m: int, n_batches: int, *, rng) -> np.ndarray:
    """``C`` (M, n) float: how often each of the n judged queries occurs in each of M batches of m queries, drawn
    in two stages: a resample of the n (n draws with replacement), then m draws with replacement from it. A batch's
    mean of any per-query value x then varies about the n's mean as ``s²_x (1/n + 1/m)`` — as the mean of the m
    unjudged queries varies about the n's under a random split."""
    n, m, M = int(n), int(m), int(n_batches)
    if n < 1 or m < 1 or M < 1:
        raise InputError(f"predictive_counts: need n, m, M >= 1, got {n}, {m}, {M}")
    g = np.random.default_rng(rng)
    first = g.multinomial(n, np.full(n, 1.0 / n), size=M)
    return g.multinomial(m, first / n).astype(float)


class CRCResult(NamedTuple):
    """:func:`crc_interval_of_mean`: the interval (NaN bounds where there is none), the calibration (None where the
    bound is not positive) and why there is no interval (``""`` where there is one)."""
    interval: FiniteInterval
    calibration: object
    note: str


def crc_interval_of_mean(u_judged, dists, W, judged, alpha=0.05, n_batches=10_000, *, rng,
                         label_gain="gain_of_expected_grade") -> CRCResult:
    """CRC's interval of the mean over all N queries: λ calibrated on :func:`predictive_counts` batches of the
    m = N − n unjudged queries' size drawn from the n ``judged`` (a bool mask of the N, or indices; ``u_judged``
    their human values in that order), with the bound ``½(α − (1 − α)/n)`` (``correction="queries"``); then
    ``(Σ_judged U + m·[Û_CRC(unjudged, λ_low), Û_CRC(unjudged, λ_high)]) / N``. ``dists`` (N, k, G), ``W`` (N, k)
    of all N. With n < :func:`crc_min_queries` no interval (the note says so); a failed calibration
    (``calibration.failed``) leaves NaN bounds and no note: why it failed is the caller's to say."""
    from irrepro.papers.ci.calibration import calibrate_crc, crc_interval

    P = np.asarray(dists, dtype=float)
    N = P.shape[0]
    L = np.zeros(N, bool)
    L[judged] = True
    n, m = int(L.sum()), int(N - L.sum())
    u = _check_values(u_judged, "u_judged", ndim=1)
    if u.size != n:
        raise InputError(f"crc_interval_of_mean: {u.size} human values for {n} judged queries")
    sampling_fraction(n, N)
    if m == 0:
        t = float(u.mean())
        return CRCResult(FiniteInterval(t, t, t, np.nan, np.nan), None, "")
    need = crc_min_queries(alpha)
    if n < need:
        nan = FiniteInterval(np.nan, np.nan, np.nan, np.nan, np.nan)
        return CRCResult(nan, None, f"no CRC interval: it cannot hold its {1 - alpha:.0%} level with n = {n} judged "
                                    f"queries (its risk bound ½(α − (1 − α)/n) is positive from n = {need})")
    C = predictive_counts(n, m, n_batches, rng=rng)
    cal = calibrate_crc(u, P[L], None, alpha, weights=W[L], correction="queries", label_gain=label_gain, counts=C)
    _, lo, hi = crc_interval(P[~L], cal, weights=W[~L], label_gain=label_gain)
    known = float(u.sum())
    low, high = (known + m * lo) / N, (known + m * hi) / N
    return CRCResult(FiniteInterval((low + high) / 2, low, high, np.nan, np.nan), cal, "")
