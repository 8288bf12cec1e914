"""Unit tests of irrepro.papers.vb.vbscore (Ding 2025, seed 000): the formulas on hand-computed cases."""
import numpy as np
import pytest

from irrepro.errors import InputError
from irrepro.papers.vb import vbscore as vb


def test_es_and_vb_hand_computed():
    # Jordan case (Sec. 5): pi = (0.8, 0.2); athlete-only list covers intent 0 only
    es = vb.expected_success([0.8, 0.2], [1, 0])
    assert es == pytest.approx(0.8)
    assert vb.vb_score(es, 0) == pytest.approx(0.8)
    assert vb.vb_score(es, 0.5) == pytest.approx(0.8 - 0.5 * 0.4)
    assert vb.vb_score(es, 1) == pytest.approx(0.4)
    assert vb.vb_score(vb.expected_success([0.8, 0.2], [1, 1]), 1) == pytest.approx(1.0)
    # broadcasting ES x alpha
    t = vb.table_from_es([0.169, 0.723], [0, 0.5, 1])
    assert t.shape == (2, 3)
    assert t[0, 2] == pytest.approx(0.169 - np.sqrt(0.169 * 0.831))
    with pytest.raises(InputError):
        vb.vb_score(0.5, -1)


def test_binary_and_dcg_gains():
    # 2 intents, depth 4; intent 0 relevant at ranks 2 and 4, intent 1 never
    rel = np.array([[0, 1, 0, 1], [0, 0, 0, 0]], bool)
    assert vb.binary_gains(rel, 1).tolist() == [0, 0]
    assert vb.binary_gains(rel, 2).tolist() == [1, 0]
    assert vb.binary_gains(rel, 10).tolist() == [1, 0]  # k beyond depth is the whole list
    d = 1 / np.log2(np.arange(2, 6))
    g = vb.dcg_gains(rel, 4, n_relevant=[3, 0])
    assert g[0] == pytest.approx((d[1] + d[3]) / (d[0] + d[1] + d[2]))
    assert g[1] == 0
    # ideal restricted to the list when n_relevant is not given
    assert vb.dcg_gains(rel, 4)[0] == pytest.approx((d[1] + d[3]) / (d[0] + d[1]))
    assert vb.dcg_gains(np.array([[1, 0]], bool), 2)[0] == pytest.approx(1.0)
    with pytest.raises(InputError):
        vb.binary_gains(rel, 0)


def test_softmax_constraints_truncation():
    p = vb.softmax([0.0, np.log(3.0)])
    assert p == pytest.approx([0.25, 0.75])
    assert vb.softmax([1.0, 1.0, 5.0], mask=[True, True, False]) == pytest.approx([0.5, 0.5, 0])
    # high temperature -> uniform
    assert vb.softmax([0.0, 10.0], temperature=1e6) == pytest.approx([0.5, 0.5], abs=1e-5)
    with pytest.raises(InputError):
        vb.softmax([1.0], temperature=0)
    # constraint relaxation: E1 violates nothing, E2 violates one constraint of weight 2
    viol = np.array([[0, 0], [1, 0]])
    assert vb.constraint_penalty(viol, [2, 1]).tolist() == [0, 2]
    pi = vb.pi_from_constraints(viol, [2, 1])
    assert pi == pytest.approx([1 / (1 + np.exp(-2)), np.exp(-2) / (1 + np.exp(-2))])
    pi = np.array([0.5, 0.3, 0.15, 0.05])
    assert vb.truncate(pi, tau=0.1) == pytest.approx(np.array([0.5, 0.3, 0.15, 0]) / 0.95)
    assert vb.truncate(pi, top_k=2) == pytest.approx([0.625, 0.375, 0, 0])
    assert vb.truncate(pi, rho=0.8) == pytest.approx([0.625, 0.375, 0, 0])
    assert vb.truncate(pi, rho=0.81) == pytest.approx(np.array([0.5, 0.3, 0.15, 0]) / 0.95)
    assert vb.truncate(pi, tau=0.9) == pytest.approx([1, 0, 0, 0])  # never drops everything
    # vectorised over rows
    both = vb.truncate(np.stack([pi, pi[::-1]]), top_k=1)
    assert both.tolist() == [[1, 0, 0, 0], [0, 0, 0, 1]]


def test_monte_carlo_and_cis_are_seeded_and_sane():
    pi = np.array([0.5, 0.3, 0.2])
    g = np.array([1.0, 0.0, 1.0])
    es1, vb1 = vb.monte_carlo_replicas(pi, g, 500, seed=1, alpha=1, concentration=100)
    es2, _ = vb.monte_carlo_replicas(pi, g, 500, seed=1, alpha=1, concentration=100)
    assert np.array_equal(es1, es2)
    assert es1.shape == (500,)
    assert abs(es1.mean() - 0.7) < 0.01
    mean, lo, hi = vb.replica_ci(es1)
    assert lo < 0.7 < hi and hi - lo < 0.02
    # infinite concentration: pi fixed, every replica equals the exact score
    es_fixed, vb_fixed = vb.monte_carlo_replicas(pi, g, 10, seed=0, concentration=np.inf)
    assert es_fixed == pytest.approx(0.7) and vb_fixed == pytest.approx(vb.vb_score(0.7, 1))
    # batched over queries with padding (pi = 0 rows stay inert)
    PI = np.array([[0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3]])
    G = np.array([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]])
    esb, _ = vb.monte_carlo_replicas(PI, G, 200, seed=3)
    assert esb.shape == (200, 2)
    assert np.allclose(esb[:, 1], 1.0)
    assert abs(esb[:, 0].mean() - 0.5) < 0.05
    # bootstrap over intents: uniform pi -> ES* = share of covered intents in the resample
    es_b, vb_b = vb.bootstrap_over_intents(np.full(4, 0.25), np.array([1, 1, 0, 0.0]), 2000, seed=5)
    assert set(np.round(es_b * 4).astype(int)) <= set(range(5))
    assert abs(es_b.mean() - 0.5) < 0.02
    lo, hi = vb.percentile_ci(es_b)
    assert lo <= 0.5 <= hi
    # bootstrap over queries: paired columns, mean preserved
    vals = np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.9]])
    bq = vb.bootstrap_over_queries(vals, 3000, seed=2)
    assert bq.shape == (3000, 2)
    assert bq.mean(axis=0) == pytest.approx(vals.mean(axis=0), abs=0.01)
    assert vb.collection_vb(vals).tolist() == pytest.approx([0.3, 0.5])


def test_table1_consistency_and_case_studies():
    # Group 3 of Table 1: ES 0.004 printed; VB cells -0.029 / -0.062 need an unrounded ES near 0.0044
    iv = vb.consistent_es_interval(0.004, [0.004, -0.029, -0.062], [0.0, 0.5, 1.0])
    assert iv is not None and 0.0043 < iv[0] <= iv[1] <= 0.0045 + 1e-12
    assert abs(vb.vb_score(0.004, 1.0) - (-0.062)) > 0.0005  # cell-by-cell from the rounded ES it misses
    # a row no ES can produce
    assert vb.consistent_es_interval(0.5, [0.5, 0.4, 0.0], [0.0, 0.5, 1.0]) is None
    r = vb.coverage_case([0.8, 0.2], ["a", "b"], ["a"], [0, 0.5, 1])
    assert r["ES"] == pytest.approx(0.8) and r["VB_1"] == pytest.approx(0.4) and r["VB_0.5"] == pytest.approx(0.6)
    r = vb.coverage_case([0.2, 0.8], ["m", "s"], ["m", "s"], [1], dcg_order=["s", "m"])
    assert r["ES"] == pytest.approx(0.8 + 0.2 / np.log2(3))
