"""Importance-sampling evaluation (Schnabel et al., ICTIR 2016): unbiasedness by exact enumeration, optimality of
Q*, coverage of the Eq. 6 interval, and SYNTH's reading that reproduces Table 2."""
import itertools

import numpy as np
import pytest
from scipy import stats

from irrepro.papers.sampling import estimators as s
from irrepro.papers.sampling import synth


def tiny(seed=0, nq=2, nd=3):
    rng = np.random.default_rng(seed)
    u = rng.integers(0, 3, size=(nq, nd)).astype(float)
    u[0, 0] = 2.0  # at least one relevant pair
    r1 = np.stack([rng.permutation(nd) for _ in range(nq)])
    r2 = np.stack([rng.permutation(nd) for _ in range(nq)])
    return u, s.target(r1), s.target(r2), r1, r2


def exact_expectation(est_fn, Q, n):
    """E_Q[estimator] by enumerating every ordered sample of size n (with replacement)."""
    q = Q.ravel()
    total = 0.0
    for combo in itertools.product(range(q.size), repeat=n):
        p = np.prod(q[list(combo)])
        if p > 0:
            total += p * est_fn(np.array([combo]))[0]
    return total


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_estimators_are_unbiased_by_exact_enumeration(seed):
    u, P1, P2, r1, r2 = tiny(seed)
    approx = np.random.default_rng(seed + 10).random(u.shape) + 0.1
    for Q in (s.q_single(approx, P1), s.q_uniform(u.shape), s.q_pair(approx + 0.0, P1, P2 + 1e-3 * (P1 == P2)),
              s.mix_epsilon(s.q_single(approx, P1), 0.01)):
        e = exact_expectation(lambda idx: s.u_hat(u, P1, Q, idx), Q, 2)
        assert e == pytest.approx(s.true_utility(u, P1), rel=1e-10)
    Q = s.q_uniform(u.shape)
    e = exact_expectation(lambda idx: s.delta_hat(u, P1, P2, Q, idx), Q, 2)
    assert e == pytest.approx(s.true_utility(u, P1) - s.true_utility(u, P2), rel=1e-10)


@pytest.mark.parametrize("seed", range(5))
def test_q_star_has_the_smallest_variance(seed):
    rng = np.random.default_rng(seed)
    u = rng.integers(0, 5, size=(20, 30)).astype(float)
    ranks = [np.stack([rng.permutation(30) for _ in range(20)]) for _ in range(4)]
    Ps = [s.target(r) for r in ranks]
    others = [s.q_uniform(u.shape), s.q_single(np.ones_like(u), Ps[0]), s.mix_epsilon(s.q_single(u, Ps[0]), 1e-3),
              s.q_single(rng.random(u.shape) + 0.01, Ps[0])]
    v_star = s.variance_times_n(u, Ps[0], s.q_single(u, Ps[0]))  # Eq. 4 with the true utilities
    assert v_star == pytest.approx(0.0, abs=1e-12)                # zero variance: the textbook optimum
    for Q in others:
        assert s.variance_times_n(u, Ps[0], Q) >= v_star - 1e-12
    # pairwise: Eq. 9 beats the naive average of the two systems and uniform
    W = Ps[0] - Ps[1]
    v_pair = s.variance_times_n(u, W, s.q_pair(u, Ps[0], Ps[1]))
    for Q in (s.q_pair_naive(u, Ps[0], Ps[1]), s.q_uniform(u.shape)):
        assert s.variance_times_n(u, W, Q) >= v_pair - 1e-12
    # k systems vs a baseline (Eq. 11): the sum of variances is smallest under its Q*
    def sum_var(Q):
        return sum(s.variance_times_n(u, P - Ps[0], Q) for P in Ps[1:])
    q11 = s.q_baseline(u, Ps[1:], Ps[0])
    for Q in (s.q_uniform(u.shape), s.q_pair_naive(u, Ps[1], Ps[0]), s.q_ranking(u, Ps)):
        assert sum_var(Q) >= sum_var(q11) - 1e-12


def test_variance_formula_matches_simulation():
    u, P1, _, r1, _ = tiny(3, nq=5, nd=8)
    Q = s.q_uniform(u.shape)
    n = 50
    est = s.u_hat(u, P1, Q, s.draw(Q, n, 20000, 1))
    assert est.var() == pytest.approx(s.variance_times_n(u, P1, Q) / n, rel=0.05)


def test_confidence_interval_covers():
    rng = np.random.default_rng(5)
    u = rng.integers(0, 5, size=(200, 100)).astype(float)
    r = np.stack([rng.permutation(100) for _ in range(200)])
    P = s.target(r)
    Q = s.q_single(s.approx_utility_rank(r), P)
    est, lo, hi = s.confidence_interval(u, P, Q, s.draw(Q, 1000, 400, 7))
    true = s.true_utility(u, P)
    cover = np.mean((lo <= true) & (true <= hi))
    assert 0.92 <= cover <= 0.98, cover


def test_support_is_checked():
    u = np.array([[1.0, 1.0]])
    P = np.array([[0.5, 0.5]])
    with pytest.raises(ValueError, match="support"):
        s.variance_times_n(u, P, np.array([[1.0, 0.0]]))


def test_balance_heuristic_mixture():
    Q1, Q2 = np.array([[0.5, 0.5]]), np.array([[0.9, 0.1]])
    assert s.balance_mixture([Q1, Q2], [1, 3]).tolist() == [[0.8, 0.2]]


def test_synth_systems_and_table2_reading():
    order = np.array([[3, 1, 0, 2]])
    assert synth.system_order(order, "SHIFT-1").tolist() == [[2, 3, 1, 0]]  # pushed past the end re-enter first
    assert synth.system_order(order, "REV-2").tolist() == [[1, 3, 0, 2]]
    # the reading that reproduces Table 2's true U(S) (per-pair categorical, linear gain, natural-log discount),
    # on a scaled-down SYNTH: OPT above every other system
    u, ranks = synth.synth(n_users=300, n_items=2000, seed=4)
    vals = {k: s.true_utility(u, s.target(r, base=np.e)) for k, r in ranks.items()}
    assert abs(vals["OPT"] / 284.40 - 1) < 0.02
    assert max(vals, key=vals.get) == "OPT"


@pytest.mark.parametrize("shape", [(7, 5), (3, 5000), (1, 1)])
def test_draw_samples_from_q(shape, monkeypatch):
    """The two-level sampler draws from Q: chi-square goodness of fit of many draws (several segments, empty
    segments and zero-mass pairs included), exact sample sizes, independent trials, deterministic per seed."""
    monkeypatch.setattr(s, "_BLOCK", 8)                       # many small segments, a partial last one
    rng = np.random.default_rng(11)
    Q = rng.random(shape) ** 3
    Q.ravel()[::4] = 0.0                                      # zero-mass pairs
    if Q.size > 1:
        Q.ravel()[8:16] = 0.0                                 # an empty segment
    else:
        Q[:] = 1.0
    Q /= Q.sum()
    idx = s.draw(Q, 500, 400, 3)
    assert idx.shape == (400, 500) and idx.dtype.kind == "i"
    assert np.array_equal(idx, s.draw(Q, 500, 400, 3))
    q = Q.ravel()
    counts = np.bincount(idx.ravel(), minlength=q.size)
    assert counts.size == q.size and counts[q == 0].sum() == 0
    pos = q > 0
    if pos.sum() > 1:
        expected = q[pos] * idx.size
        chi2 = ((counts[pos] - expected) ** 2 / expected).sum()
        assert stats.chi2.sf(chi2, pos.sum() - 1) > 1e-3
        # each trial on its own is a sample from Q too (no trial gets a biased slice of the draws)
        half = q.size // 2
        p = q[:half].sum()                                    # draws per trial in the first half: Binomial(500, p)
        per_trial = (idx < half).sum(axis=1)
        assert per_trial.mean() == pytest.approx(500 * p, abs=4 * np.sqrt(500 * p * (1 - p) / 400))
        assert per_trial.var() == pytest.approx(500 * p * (1 - p), rel=0.3)
    # the estimator is unbiased under the sampler
    u = np.arange(q.size, dtype=float).reshape(shape) % 3
    P = np.where(Q > 0, 1.0 / Q.size, 0.0)
    est = s.u_hat(u, P, Q, idx)
    assert est.mean() == pytest.approx(s.true_utility(u, P), abs=4 * est.std() / np.sqrt(400) + 1e-12)


def test_draw_rejects_bad_q():
    with pytest.raises(ValueError):
        s.draw(np.zeros((2, 2)), 3)
    with pytest.raises(ValueError):
        s.draw(np.array([[0.5, -0.1, 0.6]]), 3)


def test_confidence_interval_is_eq6_with_t_and_n_minus_1():
    """Table 4's reading of Eq. 6: t_{α/2} with n − 1 df and σ̂ with n − 1. On n = 5 draws each alternative reading
    (normal quantile, σ̂ with n) gives a visibly different half-width, so swapping either fails here."""
    u = np.array([[4.0, 0.0, 1.0, 2.0]])
    P = np.array([[0.4, 0.3, 0.2, 0.1]])
    Q = np.array([[0.25, 0.25, 0.25, 0.25]])
    idx = np.array([[0, 1, 2, 3, 0]])
    est, lo, hi = s.confidence_interval(u, P, Q, idx)
    z = (u * P / Q).ravel()[idx[0]]
    expected = stats.t.ppf(0.975, 4) * z.std(ddof=1) / np.sqrt(5)
    assert hi[0] - est[0] == pytest.approx(expected, rel=1e-12)
    assert est[0] - lo[0] == pytest.approx(expected, rel=1e-12)
    for wrong in (1.96 * z.std(ddof=1) / np.sqrt(5), stats.t.ppf(0.975, 4) * z.std(ddof=0) / np.sqrt(5)):
        assert abs((hi[0] - est[0]) / wrong - 1) > 0.05


def test_halfwidth_readings_measure_what_they_name():
    """Each reading of Table 4's half-width is what its name says: the quantile and denominator readings differ
    from Eq. 6 by exactly their factor, ``expected`` is the no-noise half-width the sampled one scatters around,
    and ``eq6`` is the function Table 4 uses."""
    from irrepro.papers.sampling.experiments import single_system_experiment
    from irrepro.papers.sampling.readings import READINGS, halfwidth_readings

    u, ranks = synth.synth(n_users=100, n_items=400, seed=3)
    n, trials = 400, 200
    df = halfwidth_readings(u, ranks, n, trials, seed=9, other_data=[("again", *synth.synth(100, 400, seed=4))])
    assert set(df.reading) == set(READINGS) | {"data:again"}
    w = df.pivot(index="system", columns="reading", values="ci_halfwidth")
    t, zq = stats.t.ppf(0.975, n - 1), stats.norm.ppf(0.975)
    assert np.allclose(w["z"] / w["eq6"], zq / t, rtol=1e-12)
    assert np.allclose(w["ddof0"] / w["eq6"], np.sqrt((n - 1) / n), rtol=1e-9)
    assert (w["distinct"] >= w["eq6"]).all()            # fewer distinct pairs than draws: a wider interval
    # eq6 is Table 4's column (other draws of the same size: equal within Monte-Carlo error)
    t4 = single_system_experiment(u, ranks, n=n, trials=trials, seed=1).set_index("system").reindex(w.index)
    se = t4["ci_halfwidth_sd"] / np.sqrt(trials)
    assert ((w["eq6"] - t4["ci_halfwidth"]).abs() <= 4 * np.sqrt(2) * se).all()
    # the sampled mean half-width scatters around the exact expectation (skewed z: within 3% at n = 400)
    assert ((w["eq6"] / w["expected"] - 1).abs() < 0.03).all()


def test_tables57_monte_carlo_error_is_the_spread_over_further_synth_draws():
    """Tables 5-7's analytic cells vary only with the SYNTH draw: their s.e. (of ours minus the paper's, two
    independent draws) is sqrt(2) x the sd of each cell over further draws, written beside every value."""
    from irrepro.errors import InputError
    from irrepro.papers.sampling import claims, tables
    from irrepro.papers.sampling.experiments import comparative_variances

    cfg = {"users": 60, "items": 40, "alpha": [0.54, 0.25, 0.175, 0.03, 0.005], "dirichlet": "per_pair",
           "gain": "linear", "log_base": np.e, "systems": ["OPT", "REV-10", "SHIFT-5"]}
    seeds = tables.replicate_seeds(3, 3)
    assert seeds == (1003, 2003, 3003)
    se = tables.synth_replicate_se(cfg, seeds, window=3)
    draws = []
    for seed in seeds:
        u, _, Ps, approx = tables.synth_matrices(cfg, seed)
        draws.append(comparative_variances(u, Ps, approx, window=3))
    for k, v in se.items():
        assert v == pytest.approx(np.sqrt(2) * np.std([d[k] for d in draws], ddof=1)) and v > 0, k
    with pytest.raises(InputError, match="two or more further SYNTH draws"):
        tables.synth_replicate_se(cfg, seeds[:1], window=3)
    u, _, Ps, approx = tables.synth_matrices(cfg, 3)
    var, table, _ = tables.comparative(u, Ps, approx, 3, [1], 2, 3)
    values = claims.comparative_values("synth", table, var, se)
    assert values["synth/table5/naive/approx_u"] == {"value": var["pair_naive/approx"], "se": se["pair_naive/approx"]}
    assert values["synth/table7/qstar/true_u"]["se"] == se["rank_qstar/true"]
    assert isinstance(claims.comparative_values("vaswani", table, var)["vaswani/table6/naive/true_u"], float)
