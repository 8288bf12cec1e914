"""Confidence intervals with LLM labels (Oosterhuis et al., KDD 2024): bootstrap, PPI (against ppi_py), CRC
perturbation (Eqs. 16–21), dual calibration (vectorised == per-batch loop, minimality, failure), label
manipulations (β, ζ), the Figs. 2–3 protocol and bad input."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from irrepro.errors import InputError
from irrepro.papers.ci import intervals as iv
from irrepro.papers.ci.experiment import _splits
from reference_crc import calibrate_crc_loop


# ---------------------------------------------------------------------------------------------------- fixtures

def synth(N, depth=10, G=4, seed=0, bias=0.5, noise=1.0, sharp=2.0):
    """N queries with true grades (query-specific relevance rates) and noisy, upward-biased LLM distributions."""
    rng = np.random.default_rng(seed)
    rate = rng.beta(1, 2, N)[:, None]
    true = rng.binomial(G - 1, np.repeat(rate, depth, 1))
    logits = (sharp * (np.arange(G) == true[..., None]) + rng.normal(0, noise, (N, depth, G))
              + bias * np.arange(G))
    d = np.exp(logits)
    d /= d.sum(-1, keepdims=True)
    U = (iv.gains(true) * iv.dcg_weights(depth)).sum(-1)
    return U, d, true


def random_dists(rng, shape, G=4, zeros=False):
    d = rng.dirichlet(np.ones(G) * 0.7, size=shape)
    if zeros:
        d[rng.random(d.shape) < 0.3] = 0.0
        d[..., 1] += (d.sum(-1) == 0)   # keep every row valid
        d /= d.sum(-1, keepdims=True)
    return d


# ---------------------------------------------------------------------------------------------------- metric

def test_dcg_weights_gains_and_query_utility():
    w = iv.dcg_weights(10)
    assert w[0] == 1.0 and w[1] == pytest.approx(1 / np.log2(3)) and w[9] == pytest.approx(1 / np.log2(11))
    assert np.array_equal(iv.dcg_weights(3, depth=5)[3:], [0.0, 0.0])
    assert np.array_equal(iv.gains([0, 1, 2, 3]), [0, 1, 3, 7])
    rng = np.random.default_rng(0)
    d = random_dists(rng, (6, 5))
    # Eq. 1/5 by explicit loops
    ref = [sum(w[r] * sum(d[q, r, g] * (2 ** g - 1) for g in range(4)) for r in range(5)) for q in range(6)]
    assert np.allclose(iv.query_utility(d, iv.dcg_weights(5)), ref)
    assert np.allclose(iv.expected_gain(d), d @ [0, 1, 3, 7])
    # padding: ranks beyond a query's length have weight 0 and do not count, whatever their distribution
    lengths = np.array([5, 3, 0, 5, 1, 2])
    W = iv.truncate_weights(iv.dcg_weights(5), lengths)
    d2 = d.copy()
    d2[1, 3:] = [0, 0, 0, 1]
    u = iv.query_utility(d2, W)
    assert u[2] == 0.0
    assert u[1] == pytest.approx(sum(w[r] * d[1, r] @ [0, 1, 3, 7] for r in range(3)))


def test_hard_to_dist_smoothing():
    p = iv.hard_to_dist(np.array([[0, 3], [1, 2]]), 4, smoothing=0.2)
    assert p.shape == (2, 2, 4)
    assert np.allclose(p.sum(-1), 1)
    assert np.allclose(p[0, 1], [0.05, 0.05, 0.05, 0.85])
    assert np.array_equal(iv.hard_to_dist([2], 3), [[0.0, 0.0, 1.0]])
    with pytest.raises(InputError, match="0..3"):
        iv.hard_to_dist([4], 4)
    with pytest.raises(InputError, match="smoothing"):
        iv.hard_to_dist([1], 4, smoothing=1.5)


# ---------------------------------------------------------------------------------------------------- bootstrap

def test_bootstrap_matches_naive_loop_and_scipy():
    rng = np.random.default_rng(3)
    vals = rng.gamma(2.0, 2.0, size=(3, 25))
    ci = iv.bootstrap_ci(vals, alpha=0.1, n_boot=2000, rng=np.random.default_rng(7), kind="percentile")
    basic = iv.bootstrap_ci(vals, alpha=0.1, n_boot=2000, rng=np.random.default_rng(7))  # the default
    assert np.allclose(basic.low, 2 * vals.mean(1) - ci.high) and np.allclose(basic.high, 2 * vals.mean(1) - ci.low)
    # naive: one resample at a time, same documented stream (one (n_boot, n) draw per row)
    g = np.random.default_rng(7)
    for i, row in enumerate(vals):
        idx = g.integers(0, 25, size=(2000, 25))
        means = sorted(np.mean([row[j] for j in b]) for b in idx)
        lo, hi = np.percentile(means, [5, 95])
        assert ci.low[i] == pytest.approx(lo, abs=1e-12) and ci.high[i] == pytest.approx(hi, abs=1e-12)
        assert ci.estimate[i] == pytest.approx(row.mean())
    # an independent implementation with other random draws agrees to Monte-Carlo error
    for kind in ("percentile", "basic"):
        big = iv.bootstrap_ci(vals[0], alpha=0.05, n_boot=20000, rng=np.random.default_rng(1), kind=kind)
        ref = stats.bootstrap((vals[0],), np.mean, n_resamples=20000, method=kind, rng=np.random.default_rng(2))
        assert big.low == pytest.approx(ref.confidence_interval.low, abs=0.08)
        assert big.high == pytest.approx(ref.confidence_interval.high, abs=0.08)


# ---------------------------------------------------------------------------------------------------- PPI

@pytest.mark.parametrize("seed", range(4))
def test_ppi_equals_ppi_py(seed):
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(seed)
    n, Nu = rng.integers(5, 60), rng.integers(20, 300)
    Y = rng.normal(3, 2, n)
    Yhat = Y + rng.normal(0.5, 1, n)
    Yu = rng.normal(3.4, 2.2, Nu)
    alpha = [0.05, 0.1, 0.2, 0.01][seed]
    # ppi_py averages the predictions over Yhat_unlabeled only and uses ddof=0 (np.std)
    lo, hi = ppi_py.ppi_mean_ci(Y, Yhat, Yu, alpha=alpha, lam=1)
    ours = iv.ppi_mean_ci(Y, Yhat, Yu, alpha, include_labelled=False, ddof=0)
    assert ours.low == pytest.approx(float(np.squeeze(lo)), abs=1e-10)
    assert ours.high == pytest.approx(float(np.squeeze(hi)), abs=1e-10)
    est = ppi_py.ppi_mean_pointestimate(Y, Yhat, Yu, lam=1)
    assert ours.estimate == pytest.approx(float(np.squeeze(est)), abs=1e-10)
    # the paper's convention (Eq. 8: mean prediction over all N queries of Q) = ppi_py with the labelled
    # predictions added to its unlabelled set
    lo, hi = ppi_py.ppi_mean_ci(Y, Yhat, np.concatenate([Yhat, Yu]), alpha=alpha, lam=1)
    paper0 = iv.ppi_mean_ci(Y, Yhat, Yu, alpha, include_labelled=True, ddof=0)
    assert paper0.low == pytest.approx(float(np.squeeze(lo)), abs=1e-10)
    assert paper0.high == pytest.approx(float(np.squeeze(hi)), abs=1e-10)
    # default ddof=1: Eq. 10 written out
    paper = iv.ppi_mean_ci(Y, Yhat, Yu, alpha)
    pred = np.concatenate([Yhat, Yu])
    N = pred.size
    s_pred = sum((p - pred.mean()) ** 2 for p in pred) / (N - 1)
    e = Y - Yhat
    s_err = sum((x - e.mean()) ** 2 for x in e) / (n - 1)
    z = stats.norm.ppf(1 - alpha / 2)
    half = z * np.sqrt(s_err / n + s_pred / N)
    assert paper.estimate == pytest.approx(pred.sum() / N + e.sum() / n, abs=1e-12)
    assert (paper.low, paper.high) == pytest.approx((paper.estimate - half, paper.estimate + half), abs=1e-12)
    # vectorised over repetitions
    stacked = iv.ppi_mean_ci(np.stack([Y, Y[::-1]]), np.stack([Yhat, Yhat[::-1]]), np.stack([Yu, Yu]), alpha)
    assert stacked.low[0] == pytest.approx(paper.low) and stacked.high[1] == pytest.approx(paper.high)


def test_ppi_is_unbiased_and_covers_the_population_mean():
    rng = np.random.default_rng(11)
    pop_true = rng.gamma(2.0, 3.0, 5000)
    pop_pred = 0.6 * pop_true + 4.0 + rng.normal(0, 1.5, pop_true.size)   # biased predictions
    mu = pop_true.mean()
    R, n, Nu = 8000, 60, 200
    lab = rng.integers(0, pop_true.size, (R, n))
    unl = rng.integers(0, pop_true.size, (R, Nu))
    for include in (True, False):
        ci = iv.ppi_mean_ci(pop_true[lab], pop_pred[lab], pop_pred[unl], 0.05, include_labelled=include)
        se_mc = ci.estimate.std() / np.sqrt(R)
        assert abs(ci.estimate.mean() - mu) < 4 * se_mc                   # Eq. 9: unbiased either way
        cover = ((ci.low <= mu) & (mu <= ci.high)).mean()
        if include:
            # the paper's Eq. 8 counts the labelled predictions in the mean prediction too, but Eq. 10 ignores
            # their covariance with the error term: here cov(pred, error) > 0, so σ̂ is a little too small
            assert ci.se.mean() < 0.96 * ci.estimate.std() and cover >= 0.91
        else:
            # disjoint labelled / unlabelled sets (ppi_py's convention): the textbook CLT interval
            assert ci.se.mean() == pytest.approx(ci.estimate.std(), rel=0.03) and 0.94 <= cover <= 0.96
    assert abs(pop_pred[unl].mean(1).mean() - mu) > 50 * se_mc             # predictions alone are biased


# ---------------------------------------------------------------------------------------------------- CRC perturbation

def test_perturb_worked_example_and_identity():
    P = np.array([0.1, 0.2, 0.3, 0.4])
    assert np.allclose(iv.perturb(P, 0.25), np.array([0, 0.05, 0.3, 0.4]) / 0.75)       # Eq. 16 Q_high
    assert np.allclose(iv.perturb(P, -0.25), np.array([0.1, 0.2, 0.3, 0.15]) / 0.75)    # Q_low
    assert np.allclose(iv.perturb(P, 0.35), np.array([0, 0, 0.25, 0.4]) / 0.65)         # spills to grade 1
    rng = np.random.default_rng(0)
    d = random_dists(rng, (7, 5))
    assert np.allclose(iv.perturb(d, 0.0), d, atol=1e-15)
    out = iv.perturb(d, np.array([0.0, 0.3, -0.3]))
    assert out.shape == (3, 7, 5, 4)
    assert np.allclose(out[0], d, atol=1e-15)


def test_mu_crc_is_monotone_and_probabilities_stay_valid():
    rng = np.random.default_rng(1)
    d = random_dists(rng, (40,), G=5, zeros=True)
    lam = np.concatenate([[-1, -1 + 1e-15, -1 + 1e-9], np.linspace(-1, 1, 801), [1 - 1e-9, 1 - 1e-15, 1]])
    lam.sort()
    Q = iv.perturb(d, lam)
    assert np.isfinite(Q).all() and (Q >= 0).all()
    assert np.allclose(Q.sum(-1), 1.0)
    mu = iv.crc_expected_gain(d, lam)                                     # Eq. 19, (L, 40)
    assert (np.diff(mu, axis=0) >= -1e-9).all()
    d6 = random_dists(rng, (6, 10), zeros=True)
    u = iv.crc_query_utility(d6, lam)
    assert u.shape == (lam.size, 6) and (np.diff(u, axis=0) >= -1e-9).all()
    # the calibration's kernel agrees with Eq. 19 summed with the DCG weights (Eq. 1)
    assert np.allclose(u, (iv.crc_expected_gain(d6, lam) * iv.dcg_weights(10)).sum(-1))


def test_perturb_limits_at_plus_minus_one():
    P = np.array([[0.1, 0.2, 0.3, 0.4],
                  [0.5, 0.5, 0.0, 0.0],    # no mass on the top grades
                  [0.0, 0.0, 0.2, 0.8]])   # no mass on the bottom grades
    assert np.array_equal(iv.perturb(P, 1.0), [[0, 0, 0, 1], [0, 1, 0, 0], [0, 0, 0, 1]])
    assert np.array_equal(iv.perturb(P, -1.0), [[1, 0, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0]])
    # continuity: λ → ±1 approaches the same limit
    assert np.allclose(iv.perturb(P, 1 - 1e-9), iv.perturb(P, 1.0), atol=1e-6)
    assert np.allclose(iv.perturb(P, -1 + 1e-9), iv.perturb(P, -1.0), atol=1e-6)
    # Eq. 21: with strictly positive distributions the metric tends to its min / max possible value
    rng = np.random.default_rng(2)
    d = random_dists(rng, (5, 10))
    w = iv.dcg_weights(10)
    u = iv.crc_query_utility(d, np.array([-1.0, 0.0, 1.0]), w)
    assert np.allclose(u[0], 0.0) and np.allclose(u[2], 7 * w.sum())
    assert np.allclose(u[1], iv.query_utility(d, w))                       # Û_CRC(Q, 0) = Û(Q)
    with pytest.raises(InputError, match=r"\[-1, 1\]"):
        iv.perturb(P, 1.5)


# ---------------------------------------------------------------------------------------------------- calibration

def _risks(u, d, B, lam):
    """Direct Eq. 24 risks at one λ (loop over batches)."""
    uc = iv.crc_query_utility(d, np.array([lam]))[0]
    bm, bt = uc[B].mean(1), u[B].mean(1)
    return (bm < bt).mean(), (bm > bt).mean()


@pytest.mark.parametrize("seed,n,M,correction", [(0, 8, 200, "batches"), (1, 12, 150, "queries"),
                                                 (2, 6, 250, "batches")])
def test_vectorised_calibration_equals_the_loop(seed, n, M, correction):
    U, d, _ = synth(n, depth=6, seed=seed, bias=[0.5, -0.7, 0.0][seed])
    B = iv.sample_batches(n, M, rng=np.random.default_rng(seed))
    tol = 1e-6
    vec = iv.calibrate_crc(U, d, B, 0.1, correction=correction, tol=tol)
    ref = calibrate_crc_loop(U, d, B, 0.1, correction=correction, tol=tol)
    assert not vec.failed and not ref.failed
    assert vec.lam_low == pytest.approx(ref.lam_low, abs=tol)
    assert vec.lam_high == pytest.approx(ref.lam_high, abs=tol)
    assert vec.bound == ref.bound
    # both satisfy their bound, and are minimal / maximal: a step of 2·tol further violates it
    for c in (vec, ref):
        hi_risk, _ = _risks(U, d, B, c.lam_high)
        _, lo_risk = _risks(U, d, B, c.lam_low)
        assert hi_risk < c.bound and lo_risk < c.bound
        assert hi_risk == pytest.approx(c.risk_high) and lo_risk == pytest.approx(c.risk_low)
        if c.lam_high > -1:
            assert _risks(U, d, B, c.lam_high - 2 * tol)[0] >= c.bound
        if c.lam_low < 1:
            assert _risks(U, d, B, c.lam_low + 2 * tol)[1] >= c.bound
    # per-query batches (M = n) agree as well
    Uq, dq, _ = synth(40, depth=5, seed=seed + 5)
    S = iv.single_query_batches(40)
    a, b = iv.calibrate_crc(Uq, dq, S, 0.2), calibrate_crc_loop(Uq, dq, S, 0.2)
    assert (a.lam_low, a.lam_high) == pytest.approx((b.lam_low, b.lam_high), abs=1e-6)


def test_crc_fails_explicitly_when_the_bound_cannot_be_met():
    U, d, _ = synth(30, seed=4)
    # per-query calibration with n = 10 single-query batches: ½(α − (1 − α)/10) < 0 for α = 0.05
    ci, cal = iv.crc_per_query(U[:10], d[:10], d[10:], 0.05)
    assert cal.failed and np.isnan(cal.lam_low) and np.isnan(cal.lam_high) and cal.bound < 0
    assert np.isnan(ci.low).all() and np.isnan(ci.high).all()
    assert calibrate_crc_loop(U[:10], d[:10], iv.single_query_batches(10), 0.05).failed
    # n = 2 queries: Eq. 24 as printed uses M = 10,000 batches, bound > 0, and λ = ±1 always meets it
    B = iv.sample_batches(2, 10_000, rng=np.random.default_rng(0))
    ok = iv.calibrate_crc(U[:2], d[:2], B, 0.05)
    assert not ok.failed and ok.bound == pytest.approx(0.5 * (0.05 - 0.95 / 10_000))
    lo, hi = iv.crc_interval(d[10:], ok)[1:]
    assert np.isfinite([lo, hi]).all() and lo <= hi
    # ... while Eq. 15's finite-sample term with the n = 2 distinct queries makes the bound negative: failure
    bad = iv.calibrate_crc(U[:2], d[:2], B, 0.05, correction="queries")
    assert bad.failed and bad.bound < 0
    assert np.isnan(iv.crc_interval(d[10:], bad).low)
    # with 40 single-query batches and α = 0.1 the bound is positive and per-query intervals exist
    Ub, db, _ = synth(80, seed=5)
    ci, cal = iv.crc_per_query(Ub[:40], db[:40], db[40:], 0.1)
    assert not cal.failed and ci.low.shape == (40,) and (ci.low <= ci.high).all()
    assert ((ci.low <= Ub[40:]) & (Ub[40:] <= ci.high)).mean() > 0.75


# ---------------------------------------------------------------------------------------------------- β and ζ

def test_adversarial_bias():
    rng = np.random.default_rng(0)
    d = random_dists(rng, (4, 3), G=4)
    assert np.allclose(iv.adversarial_bias(d, 0.0), d)
    assert np.allclose(iv.adversarial_bias(d, 0.5), 0.25)
    assert np.allclose(iv.adversarial_bias(d, 1.0), (1 - d) / 3)
    assert np.allclose(iv.adversarial_bias(d, 0.3).sum(-1), 1)
    with pytest.raises(InputError, match="beta"):
        iv.adversarial_bias(d, 1.2)


def test_oracle_mix_and_crc_widths_shrink_to_zero():
    U, d, true = synth(120, seed=6, noise=1.5)
    assert np.array_equal(iv.oracle_mix(d, true, 1.0), iv.hard_to_dist(true, 4))
    assert np.allclose(iv.oracle_mix(d, true, 0.0), d)
    B = iv.sample_batches(60, 2000, rng=np.random.default_rng(0))
    widths = []
    for zeta in (0.0, 0.5, 0.9, 0.99, 1.0):
        dz = iv.oracle_mix(d, true, zeta)
        cal = iv.calibrate_crc(U[:60], dz[:60], B, 0.05)
        ci = iv.crc_interval(dz[60:], cal)
        assert ci.low <= U[60:].mean() <= ci.high
        widths.append(ci.high - ci.low)
    assert all(a > b for a, b in zip(widths[:-1], widths[1:-1] + [widths[-1] + 1e-12]))
    assert widths[-2] < 0.1 * widths[0] and widths[-1] == pytest.approx(0.0, abs=1e-12)


# ---------------------------------------------------------------------------------------------------- protocol

def test_ci_experiment_table_determinism_and_streams():
    U, d, _ = synth(60, seed=7)
    kw = dict(repetitions=12, seed=3, n_boot=300, n_batches=300, split="resplit")
    df = iv.ci_experiment(U, d, [5, 10], **kw)
    assert list(df.columns) == iv.RESULT_COLUMNS
    assert len(df) == 3 * 2 * 12 and set(df.method) == {"bootstrap", "ppi", "crc"}
    assert ((df.low <= df.target) & (df.target <= df.high) == df.covered).all()
    assert np.allclose(df.width, df.high - df.low)
    pd.testing.assert_frame_equal(df, iv.ci_experiment(U, d, [5, 10], **kw))
    # the result for one n does not depend on which other n were requested
    alone = iv.ci_experiment(U, d, [10], **kw)
    pd.testing.assert_frame_equal(alone.reset_index(drop=True),
                                  df[df.n == 10].reset_index(drop=True))
    # ... nor on which other methods were requested
    crc_only = iv.ci_experiment(U, d, [5, 10], methods=["crc"], **kw)
    pd.testing.assert_frame_equal(crc_only.reset_index(drop=True),
                                  df[df.method == "crc"].reset_index(drop=True))
    # target = mean over a test half of 30 queries: one of the C(60, 30) means of U
    t = df[(df.method == "ppi") & (df.n == 5)].target.to_numpy()
    assert len(np.unique(t)) == 12 and (t >= np.sort(U)[:30].mean()).all() and (t <= np.sort(U)[30:].mean()).all()
    assert not df.failed.any()
    # stratified split: each group is halved between validation and test
    groups = np.repeat([0, 1, 2], 20)
    val, test = _splits(60, 5, groups, np.random.default_rng(0), "resplit")
    for r in range(5):
        assert np.array_equal(np.bincount(groups[val[r]]), [10, 10, 10])
        assert sorted(np.concatenate([val[r], test[r]])) == list(range(60))


def test_label_sets_sharing_one_experiment_give_the_tables_of_separate_experiments():
    """ci_experiments (Fig 3's settings in one call: the streams, the bootstrap and each repetition's CRC batches
    computed once) returns, for each label set, the table of its own ci_experiment call, bit for bit; and the sets
    really differ, so a shared result handed to every set would fail."""
    from irrepro.papers.ci.distributions import adversarial_bias
    from irrepro.papers.ci.experiment import ci_experiments

    U, d, _ = synth(50, seed=11)
    sets = [d, adversarial_bias(d, 0.5), adversarial_bias(d, 1.0)]
    kw = dict(repetitions=8, seed=4, n_boot=200, n_batches=200)
    together = ci_experiments(U, sets, [6, 12], **kw)
    assert len(together) == 3
    for one, labels in zip(together, sets):
        pd.testing.assert_frame_equal(one, iv.ci_experiment(U, labels, [6, 12], **kw), check_exact=True)
    crc = [t[t.method == "crc"].low.to_numpy() for t in together]
    assert not np.array_equal(crc[0], crc[1]) and not np.array_equal(crc[1], crc[2])
    boot = [t[t.method == "bootstrap"].reset_index(drop=True) for t in together]
    pd.testing.assert_frame_equal(boot[0], boot[2])  # human values only: one interval for every set


def test_ci_experiment_coverage_with_biased_noisy_labels():
    U, d, _ = synth(600, seed=8, bias=0.8, noise=1.5)
    df = iv.ci_experiment(U, d, [30], repetitions=200, seed=1, n_boot=1000, n_batches=2000,
                          methods=("ppi", "crc"))
    cover = df.groupby("method").covered.mean()
    assert cover["ppi"] >= 0.88 and cover["crc"] >= 0.88
    # the biased LLM prediction alone misses the truth in most repetitions
    crc = df[df.method == "crc"]
    assert ((crc.estimate - crc.target).abs() > 0.05 * crc.target).mean() > 0.5


def test_bad_input_is_rejected():
    U, d, _ = synth(20, seed=9)
    with pytest.raises(ValueError, match="NaN"):
        iv.ci_experiment(np.where(np.arange(20) == 3, np.nan, U), d, [4])
    with pytest.raises(ValueError, match=r"\(N, depth, G\)"):
        iv.ci_experiment(U, d[:19], [4])
    with pytest.raises(ValueError, match="alpha"):
        iv.ci_experiment(U, d, [4], alpha=1.5)
    with pytest.raises(ValueError, match="validation half"):
        iv.ci_experiment(U, d, [11])
    with pytest.raises(ValueError, match="sum to 1"):
        iv.query_utility(d * 1.1)
    with pytest.raises(ValueError, match="NaN"):
        iv.perturb(np.array([0.5, np.nan]), 0.1)
    with pytest.raises(ValueError, match="same shape"):
        iv.ppi_mean_ci(U[:5], U[:4], U)
    with pytest.raises(ValueError, match="alpha"):
        iv.ppi_mean_ci(U[:5], U[:5], U, alpha=0)
    with pytest.raises(ValueError, match="alpha"):
        iv.bootstrap_ci(U, alpha=-0.1, rng=0)
    with pytest.raises(ValueError, match="broadcast"):
        iv.calibrate_crc(U, d, iv.single_query_batches(20), weights=np.ones(3))
    with pytest.raises(ValueError, match="indices"):
        iv.calibrate_crc(U, d, np.array([[0, 25]]))
    with pytest.raises(ValueError, match="correction"):
        iv.calibrate_crc(U, d, np.array([[0, 1]]), correction="nope")
    with pytest.raises(ValueError, match="non-decreasing"):
        iv.query_utility(d, gain=[3, 2, 1, 0])


def test_calibration_with_perfect_one_hot_labels_does_not_fail_on_rounding():
    # labels equal to the truth (oracle weight ζ = 1): Û_CRC(Q̄, λ) = U(Q̄) for every λ up to rounding, so every λ
    # meets both bounds and the interval has width 0 (it used to fail: rounding made every batch a "loss")
    rng = np.random.default_rng(11)
    grades = rng.integers(0, 4, size=(30, 10))
    dists = np.eye(4)[grades]
    w = iv.dcg_weights(10)
    u = (2.0 ** grades - 1) @ w  # the human DCG, summed another way than the CRC kernel sums it
    assert np.abs(u - iv.query_utility(dists, w)).max() < 1e-12
    batches = iv.sample_batches(30, 2000, rng=rng)
    cal = iv.calibrate_crc(u, dists, batches, 0.05, weights=w)
    loop = calibrate_crc_loop(u, dists, batches[:200], 0.05, weights=w)
    assert not cal.failed and not loop.failed
    ci = iv.crc_interval(dists, cal, weights=w)
    assert ci.high - ci.low == pytest.approx(0.0, abs=1e-9) and ci.low <= u.mean() + 1e-9


def test_experiment_target_all_is_the_dataset_mean_and_covers_more():
    rng = np.random.default_rng(5)
    N = 60
    grades = rng.integers(0, 4, size=(N, 10))
    noisy = np.clip(grades + rng.integers(-1, 2, size=grades.shape), 0, 3)
    dists = 0.7 * np.eye(4)[noisy] + 0.3 / 4
    u = (2.0 ** grades - 1) @ iv.dcg_weights(10)
    kw = dict(repetitions=200, seed=3, n_boot=500, n_batches=500, methods=("bootstrap",), split="resplit")
    t = iv.ci_experiment(u, dists, [30], **kw)
    a = iv.ci_experiment(u, dists, [30], target="all", **kw)
    assert np.allclose(a.target, u.mean())
    assert np.allclose(a.low, t.low) and np.allclose(a.high, t.high)  # same intervals, other target
    assert a.covered.mean() > t.covered.mean()  # n = N/2 labelled queries are half of "all"
    with pytest.raises(InputError):
        iv.ci_experiment(u, dists, [30], target="both", **kw)


def test_zero_width_interval_at_the_truth_covers_it():
    # oracle labels (ζ = 1): CRC's interval has width 0 at U(Q_test), summed in another order than the target
    rng = np.random.default_rng(2)
    grades = rng.integers(0, 4, size=(40, 10))
    u = (2.0 ** grades - 1) @ iv.dcg_weights(10)
    r = iv.ci_experiment(u, np.eye(4)[grades], [10], repetitions=50, seed=1, n_boot=200, n_batches=200,
                         methods=("crc",))
    assert np.allclose(r.width, 0) and r.covered.all()
    assert iv.covers(1.0, 1.0, 1.0 + 1e-13) and not iv.covers(1.0, 1.0, 1.0 + 1e-6)
