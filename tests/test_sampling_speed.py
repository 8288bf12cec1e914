"""The fast paths of the sampling paper's Tables 5–7 and Figs 1–3 give the same bits as the plain computations."""
import warnings

import numpy as np
import pytest
from scipy.stats import kendalltau

from irrepro.papers.sampling import estimators as s
from irrepro.papers.sampling.experiments import kendall_tau_rows


def _same_bits(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return bool(np.all((a.view(np.int64) == b.view(np.int64)) | (np.isnan(a) & np.isnan(b))))


@pytest.mark.parametrize("kind", ["continuous", "ties", "nan_inf", "tiny"])
def test_kendall_tau_rows_matches_scipy_bit_for_bit(kind):
    rng = np.random.default_rng(len(kind))
    for k in range(1, 8):
        if kind == "continuous":
            x, y = rng.normal(size=(30, k)), rng.normal(size=k)
        elif kind == "ties":
            x, y = rng.integers(0, 3, size=(30, k)).astype(float), rng.integers(0, 3, size=k).astype(float)
        elif kind == "nan_inf":
            x = rng.choice([-np.inf, np.inf, 0.0, -0.0, 1.0, np.nan], size=(30, k))
            y = rng.integers(0, 2, size=k).astype(float)
        else:
            x, y = rng.normal(size=(30, k)) * 1e-300, rng.normal(size=k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = [kendalltau(row, y)[0] for row in x]
        assert _same_bits(kendall_tau_rows(x, y), ref)


def test_variance_times_n_with_a_precomputed_support_is_the_same():
    rng = np.random.default_rng(3)
    u = rng.integers(0, 5, size=(40, 50)).astype(float)
    ranks = [np.stack([rng.permutation(50) for _ in range(40)]) for _ in range(3)]
    Ps = [s.target(r, metric=s.dcg_weights, k=10) for r in ranks]
    Q = s.q_baseline(u + 1, Ps[1:], Ps[0])
    assert (Q == 0).any()
    sup = s.q_support(Q)
    for P in Ps[1:]:
        assert s.variance_times_n(u, P - Ps[0], support=sup) == s.variance_times_n(u, P - Ps[0], Q)
    with pytest.raises(ValueError, match="lacks support"):
        s.variance_times_n(u, Ps[0], support=sup)
