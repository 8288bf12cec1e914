"""ci.systems' intervals hold their level for the mean over the N queries at every share of judged queries: a fixed
population of N = 100 synthetic queries with informative (biased, noisy) labels, 600 random sets of n judged
queries at n/N = 0.1, 0.5 and 0.85, every method through :func:`irrepro.papers.ci.systems.system_intervals`."""
import functools

import numpy as np
import pytest

from irrepro.core.gain import dcg_weights, exp_gain
from irrepro.papers.ci import finite, systems
from irrepro.papers.ci.ranking import _pred_gain

N, R, K, G, ALPHA = 100, 600, 10, 4, 0.05
#: three binomial standard errors of a coverage rate at the level from R draws: a method at its level lands
#: outside with probability 0.0027
TOL = 3 * np.sqrt(ALPHA * (1 - ALPHA) / R)
#: a method whose coverage is above this is wider than its level needs (the old variance of PPI, for a mean over
#: unboundedly many queries, covered 1.000 at n/N = 0.85)
CEILING = 0.995


def population(seed=0, noise=1.0):
    """N queries' human values U (DCG@10 of graded documents, right-skewed over queries), label distributions
    biased one grade up and blurred by ``noise``, the labels' values Û, the DCG weights."""
    rng = np.random.default_rng(seed)
    rate = rng.beta(1.0, 2.5, size=N)
    grades = np.zeros((N, K), int)
    for g in range(1, G):
        grades += rng.random((N, K)) < rate[:, None] * 0.7 ** g
    grades = np.minimum(grades, G - 1)
    logits = -(np.arange(G)[None, None, :] - grades[..., None]) ** 2 + rng.normal(0, noise, (N, K, G))
    logits = logits + 0.4 * np.arange(G)
    P = np.exp(logits)
    P /= P.sum(-1, keepdims=True)
    w = dcg_weights(K)
    u = exp_gain(grades) @ w
    up = _pred_gain(P, np.ones((N, K), bool), "gain_of_expected_grade") @ w
    return u, up, P, np.broadcast_to(w, (N, K)).copy()


@functools.lru_cache(maxsize=None)
def _draws(share, seed=0, noise=1.0, draws=R, resamples=500):
    """``(U, Û, n, rows)``: the rows of :func:`systems.system_intervals` (``resamples`` bootstrap resamples and CRC
    batches) for ``draws`` random sets of n = share·N judged queries, each row with its ``draw`` (computed once per
    share for both tests; tests/bench_coverage.py runs it with more draws)."""
    u, up, P, W = population(seed, noise)
    n = round(share * N)
    rng = np.random.default_rng(100 + seed)
    rows = []
    for r in range(draws):
        judged = rng.choice(N, n, replace=False)
        for row in systems.system_intervals(u, up, P, W, judged, alpha=ALPHA, n_boot=resamples,
                                            n_batches=resamples, seed=r):
            rows.append(dict(row, draw=r))
    return u, up, n, rows


@pytest.mark.parametrize("share", [0.1, 0.5, 0.85])
def test_every_method_holds_its_level_or_says_it_cannot(share):
    """Coverage of the mean over the N within 3 binomial standard errors of 95% and not above 0.995, for every
    method at every n/N; CRC and the bootstrap with fewer than 20 judged queries, PPI++ with fewer than 40, give no
    interval and say so (PPI++ covered 0.917-0.938 in 7 of 12 cells with n <= 25, tests/bench_ppi_tuned.py). On the variances of
    a mean over unboundedly many queries (the paper's PPI and bootstrap) and CRC calibrated on batches of the n,
    coverage was 0.49 (CRC) and 1.000 (PPI, bootstrap) at n/N = 0.85."""
    u, _, n, rows = _draws(share)
    truth = u.mean()
    for method in systems.METHODS:
        got = [r for r in rows if r["method"] == method]
        assert len(got) == R
        if n < finite.min_queries(method, ALPHA):
            assert all(np.isnan(r["low"]) and "cannot hold its 95% level" in r["note"] for r in got), method
            continue
        assert all(r["note"] == "" for r in got), method
        cov = np.mean([r["low"] <= truth <= r["high"] for r in got])
        assert 1 - ALPHA - TOL <= cov <= CEILING, (method, n, cov)


def test_ppi_width_is_the_finite_population_formula():
    """PPI's width against 2·t·sqrt((1 − n/N)·S²/n) with S² the variance of the label errors U − Û over all N (the
    variance of the target's estimator): the root mean square width over the draws within 10% at each n/N (s² of
    the n is unbiased for S² under sampling without replacement; the median would read the skew of s² at n = 10).
    It was 1.1× to 5.2× on the variance of a mean over unboundedly many queries."""
    for share in (0.1, 0.5, 0.85):
        u, up, n, rows = _draws(share)
        rows = [r for r in rows if r["method"] == "ppi"]
        S2 = (u - up).var(ddof=1)
        exact = 2 * finite.t_quantile(ALPHA, n, N) * np.sqrt((1 - n / N) * S2 / n)
        ratio = np.sqrt(np.mean(np.square([r["width"] for r in rows]))) / exact
        assert 0.9 <= ratio <= 1.1, (share, ratio)


def test_a_known_mean_has_width_zero():
    """n = N: every query judged, the mean is known: bootstrap and PPI give it with width 0."""
    u, up, *_ = population()
    b = finite.bootstrap_interval(u, N, rng=0)
    p = finite.ppi_interval(u, up, up)
    assert b.low == b.high == pytest.approx(u.mean(), abs=1e-12)
    assert p.low == p.high == pytest.approx(u.mean(), abs=1e-12)
