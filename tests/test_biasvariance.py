"""Bias–variance evaluation (BV-Test, SIGIR 2013) and risk measures, on worked examples from the papers."""
import numpy as np
import pytest

from irrepro.papers.bv import biasvariance as bv
from irrepro.papers.bv import risk
from irrepro.errors import InputError

# BV-Test Table 2 (toy example): three systems, three topics
T2 = np.array([[0.8, 0.9, 0.4], [0.5, 0.6, 0.7], [0.3, 0.6, 0.3]])


def test_table2_target_and_bias():
    assert bv.target_scores(T2).tolist() == [0.8, 0.9, 0.7]
    t = bv.bias_variance(T2)  # c = mean of per-topic max = 0.8
    assert t["c"].iloc[0] == pytest.approx(0.8)
    assert t["mean"].tolist() == pytest.approx([0.7, 0.6, 0.4])
    assert t["bias2"].tolist() == pytest.approx([0.01, 0.04, 0.16])  # the text: 0.01, 0.04, 0.16
    assert bv.bias_variance(T2, c=1)["bias2"].tolist() == pytest.approx([0.09, 0.16, 0.36])  # 0.09, 0.16, 0.36


def test_eq7_is_an_identity_with_population_variance():
    rng = np.random.default_rng(0)
    X = rng.random((5, 20))
    t = bv.bias_variance(X)
    mse = ((X - t["c"].iloc[0]) ** 2).mean(axis=1)
    assert t["total"].to_numpy() == pytest.approx(mse)


def test_eq16_rho_decomposition():
    rng = np.random.default_rng(1)
    X = rng.random((6, 30))
    for ddof in (0, 1):
        d = bv.rho_decomposition(X, ddof)
        assert d["var_rho"].to_numpy() == pytest.approx((d["var_T"] + d["var_x"] - 2 * d["cov"]).to_numpy())


def test_maxmin_normalisation_and_constant_topic():
    X = np.array([[0.2, 0.5, 0.3], [0.6, 0.5, 0.1]])
    n = bv.maxmin_normalise(X)
    assert n[:, 0].tolist() == [0, 1] and n[:, 2].tolist() == [1, 0]
    assert n[:, 1].tolist() == [0, 0]  # constant topic: defined as 0, never NaN
    t = bv.bias_variance(n)
    assert t["c"].iloc[0] == pytest.approx(2 / 3)


def test_bad_input_is_defined():
    with pytest.raises(InputError, match="NaN"):
        bv.bias_variance(np.array([[0.1, np.nan]]))
    with pytest.raises(InputError, match="at least 2 systems"):
        bv.tradeoff(np.array([[0.1, 0.2, 0.3]]))
    with pytest.raises(InputError, match="group size 10 exceeds the number of topics 3"):
        bv.difficulty_groups(T2, 10)
    with pytest.raises(InputError, match="exceeds"):
        bv.tradeoff_random(T2, 10, 5, 2, seed=0)


def test_random_grouping_vectorised_matches_a_loop():
    rng = np.random.default_rng(3)
    X = rng.random((7, 12))
    G = bv.group_random(X, size=4, n_groups=5, repeats=3, seed=42)
    assert G.shape == (3, 7, 5)
    # every group mean is a mean of 4 distinct topics' scores: recover them per group by brute force
    keys = np.random.default_rng(42).random((3, 5, 12))
    for r in range(3):
        for g in range(5):
            topics = np.argsort(keys[r, g])[:4]
            assert G[r, :, g] == pytest.approx(X[:, topics].mean(axis=1))
    corr = bv.tradeoff_random(X, 4, 5, 3, seed=42)
    for r in range(3):
        Gr = G[r]
        c = Gr.max(axis=0).mean()
        assert corr[r] == pytest.approx(bv.pearson((Gr.mean(1) - c) ** 2, Gr.var(1)))


def test_difficulty_groups_hardest_first():
    X = np.array([[0.9, 0.1, 0.5, 0.3], [0.8, 0.2, 0.4, 0.0]])
    groups = bv.difficulty_groups(X, 2)
    assert [g.tolist() for g in groups] == [[1, 3], [2, 0]]


def test_risk_measures_by_hand():
    x = np.array([0.5, 0.2, 0.4])
    b = np.array([0.3, 0.4, 0.4])
    # deltas +0.2, -0.2, 0 ; URisk_0 = 0 ; URisk_1 = (0.2 + 2*(-0.2 + 0))/3
    assert risk.urisk(x, b) == pytest.approx(0.0)
    assert risk.urisk(x, b, alpha=1) == pytest.approx(-0.2 / 3)
    r = np.array([0.2, -0.4, 0.0])
    assert risk.trisk(x, b, alpha=1) == pytest.approx(r.mean() / (r.std(ddof=1) / np.sqrt(3)))
    # ZRisk by hand: totals S_x = 1.1, S_b = 1.1, N = 2.2 -> e_q = (x_q + b_q) / 2
    e = (x + b) / 2
    z = (x - e) / np.sqrt(e)
    assert risk.zrisk(x, b) == pytest.approx(z.sum())
    assert risk.zrisk(x, b, alpha=2) == pytest.approx(z[z > 0].sum() + 3 * z[z <= 0].sum())
    from scipy.stats import norm
    assert risk.georisk(x, b) == pytest.approx(np.sqrt(x.mean() * norm.cdf(z.sum() / 3)))
    with pytest.raises(InputError):
        risk.urisk(x, b, alpha=-1)
    with pytest.raises(InputError, match="equal-length"):
        risk.zrisk(x, b[:2])


def test_table9_original_data_on_real_trec5(mirror):
    """BV-Test Table 9, Ad-Hoc1996 (TREC-5), original data: AP -0.8792, AP' -0.8141, query difficulty -0.7875 /
    -0.4884 — the public Urbano matrix is the paper's data, so these match to 4 decimals."""
    from irrepro.core.scores import to_matrix
    from irrepro.core.trec import read_matrix_csv
    X = to_matrix(read_matrix_csv(mirror / "artifacts/urbano/sigir2019-statistical/adhoc5_ap.csv", "t5", "AP"),
                  "AP").to_numpy().T
    Xn = bv.maxmin_normalise(X)
    assert round(bv.tradeoff(X), 4) == -0.8792
    assert round(bv.tradeoff(Xn), 4) == -0.8141
    assert round(bv.tradeoff_groups(X, bv.difficulty_groups(X, 5)), 4) == -0.7875
    # difficulty is the best *original* score of the topic (after normalisation every topic's best is 1)
    assert round(bv.tradeoff_groups(Xn, bv.difficulty_groups(X, 5)), 4) == -0.4884
