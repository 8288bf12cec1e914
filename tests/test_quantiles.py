"""irrepro.core.quantiles against scipy.stats: the same bits on a grid of probabilities and degrees of freedom, the
edges (0, 1, 1/2, outside [0, 1], NaN, df <= 0, df = inf) included, and scipy.stats not imported by the module."""
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from irrepro.core.quantiles import norm_cdf, norm_ppf, t_ppf

Q = np.concatenate([[0.0, 1e-300, 1e-12, 0.001, 0.025, 0.05, 0.1, 0.5, 0.9, 0.95, 0.975, 0.999, 1 - 1e-12, 1.0,
                     -0.1, 1.1, np.nan], np.linspace(0, 1, 101)])
DF = np.array([0.5, 1, 2, 3, 4, 9, 19, 29, 99, 999, 1e6, np.inf, 0, -1, np.nan])


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True) and np.array_equal(
        np.signbit(a), np.signbit(b))


def test_norm_equals_scipy_stats_bit_for_bit():
    assert same(norm_ppf(Q), stats.norm.ppf(Q))
    for q in Q:
        assert same(norm_ppf(q), stats.norm.ppf(q)), q
        assert type(norm_ppf(float(q))) is type(stats.norm.ppf(float(q)))
    x = np.concatenate([np.linspace(-40, 40, 801), [0.0, -0.0, np.inf, -np.inf, np.nan]])
    assert same(norm_cdf(x), stats.norm.cdf(x))
    assert same(norm_cdf(1.2345), stats.norm.cdf(1.2345))


def test_t_equals_scipy_stats_bit_for_bit():
    qq, dd = np.meshgrid(Q, DF)
    assert same(t_ppf(qq, dd), stats.t.ppf(qq, dd))
    for df in DF:
        assert same(t_ppf(0.975, df), stats.t.ppf(0.975, df)), df
    n = np.arange(1, 60)  # as the figure and table code call it: one quantile per sample size
    assert same(t_ppf(1 - 0.05 / 2, np.maximum(n - 1, 1)), stats.t.ppf(1 - 0.05 / 2, np.maximum(n - 1, 1)))


@pytest.mark.parametrize("wrong", ["q", "df"])
def test_a_swapped_argument_is_seen(wrong):
    """The comparison above fails for the mistake most likely here: stdtrit's (df, q) order passed as (q, df)."""
    from scipy import special

    got = special.stdtrit(0.975, 9.0) if wrong == "q" else special.stdtrit(9.0, 0.975)
    assert same(got, stats.t.ppf(0.975, 9.0)) == (wrong == "df")


def test_the_module_does_not_import_scipy_stats():
    code = "import sys, irrepro.core.quantiles as q; q.t_ppf(0.9, 3); print('scipy.stats' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "False"
