"""The CRC calibration's search (irrepro.papers.ci.calibration.calibrate_crc / calibrate_crc_sets) returns, bit for
bit, the λ and risks of the plain (grid+1)-ary search that evaluates every λ of every grid (``every_point`` below):
on random inputs, with ties (repeated queries and batches, labels equal to the truth), λ at the bounds, failed
calibrations, no losses at all, and with each of the search's shortcuts forced (every value taken as too close to
the loss threshold, wrong predictions of the deciding λ, products with all of C or with the active rows only)."""
import numpy as np
import pytest

import irrepro.papers.ci.calibration as cal
from irrepro.papers.ci.calibration import _calibration_inputs, batch_counts, calibrate_crc, calibrate_crc_sets
from irrepro.papers.ci.crc import _CRCKernel
from irrepro.papers.ci.metric import _LOSS_RTOL, dcg_weights, query_utility
from irrepro.papers.ci.distributions import hard_to_dist


def every_point(u_true, dists, batches, alpha, *, weights=None, label_gain="expected_gain", correction="batches",
                tol=1e-6, grid=15):
    """The (grid+1)-ary search, every λ of every grid evaluated: ``(lam_low, lam_high, risk_low, risk_high)``.

    D at a grid is the product of the grid's per-query values with the count rows of the batches still active
    (``(Û_CRC(λ) − U) C[rows]ᵀ``, the grid's λ in one product); a batch is a loss where D < −atol (λ_high) or
    D > atol (λ_low, searched as λ' = −λ with D' = −D).  The first grid is −1..1 in ``grid + 2`` steps; each round
    splits the bracket [last infeasible, first feasible] into ``grid + 1`` parts and keeps the batches whose loss
    can still change inside the new bracket.
    """
    _, u, P, w, g, B, bound = _calibration_inputs(u_true, dists, batches, alpha, weights, None, correction,
                                                  label_gain)
    M, b = B.shape
    C = batch_counts(B, u.size)
    thr = bound * M
    kernel = _CRCKernel(P, w, *g)
    cut = -_LOSS_RTOL * b * max(1.0, float(np.abs(u).max()))
    lams0 = np.linspace(-1.0, 1.0, grid + 2)
    frac = np.arange(1, grid + 1) / (grid + 1)
    D0 = (kernel(lams0) - u) @ C.T
    found = []
    for sign, D in ((1.0, D0), (-1.0, -D0[::-1])):
        counts = [int(np.sum(d < cut)) for d in D]
        if not counts[-1] < thr:
            found.append((np.nan, counts[-1]))
            continue
        k = next(j for j, c in enumerate(counts) if c < thr)
        if k == 0:
            found.append((lams0[0], counts[0]))
            continue
        lo, hi, r_hi = lams0[k - 1], lams0[k], counts[k]
        rows = [i for i in range(M) if D[k - 1][i] < cut <= D[k][i]]
        base = sum(1 for i in range(M) if D[k][i] < cut)
        d_lo, d_hi = D[k - 1][rows], D[k][rows]
        while hi - lo > tol and rows:
            lams = lo + (hi - lo) * frac
            Dg = sign * ((kernel(sign * lams) - u) @ C[rows].T)
            counts = [base + int(np.sum(d < cut)) for d in Dg]
            k = next((j for j, c in enumerate(counts) if c < thr), grid)
            if k < grid:
                hi, r_hi, d_hi = lams[k], counts[k], Dg[k]
            if k > 0:
                lo, d_lo = lams[k - 1], Dg[k - 1]
            keep = [a for a in range(len(rows)) if d_lo[a] < cut <= d_hi[a]]
            base += sum(1 for a in range(len(rows)) if d_hi[a] < cut)
            rows, d_lo, d_hi = [rows[a] for a in keep], d_lo[keep], d_hi[keep]
        found.append((hi, r_hi))
    (lam_high, c_high), (lam_low, c_low) = found
    return float(-lam_low), float(lam_high), c_low / M, c_high / M


def same(cal_result, ref):
    got = (cal_result.lam_low, cal_result.lam_high, cal_result.risk_low, cal_result.risk_high)
    return all((np.isnan(a) and np.isnan(b)) or a == b for a, b in zip(got, ref))


def make_inputs(seed, n, depth=6, G=4, M=600, b=None, *, ties=False, bias=0.5):
    """n queries with true grades of a query-specific relevance rate and noisy LLM distributions shifted by
    ``bias`` grades; ``ties``: repeated queries, labels equal to the truth for some queries, repeated batches."""
    rng = np.random.default_rng(seed)
    rate = rng.beta(1, 2, n)[:, None]
    true = rng.binomial(G - 1, np.repeat(rate, depth, 1))
    logits = 2.0 * (np.arange(G) == true[..., None]) + rng.normal(0, 1, (n, depth, G)) + bias * np.arange(G)
    dists = np.exp(logits)
    dists /= dists.sum(-1, keepdims=True)
    if ties:
        dists[: n // 4] = hard_to_dist(true[: n // 4], G)        # labels equal to the truth: Û_CRC = U
        dists[-2:], true[-2:] = dists[:2], true[:2]               # repeated queries
    u = query_utility(hard_to_dist(true, G), dcg_weights(depth))
    B = rng.integers(0, n, size=(M, n if b is None else b))
    if ties:
        B[M // 2:M // 2 + M // 5] = B[: M // 5]                   # repeated batches
    return u, dists, B


CASES = [
    # seed, n, depth, G, M, b, ties, bias, grid, tol, label_gain, correction
    (0, 20, 6, 4, 600, None, False, 0.5, 15, 1e-6, "expected_gain", "batches"),
    (1, 40, 10, 2, 3000, None, True, 0.0, 15, 1e-6, "gain_of_expected_grade", "batches"),
    (2, 12, 5, 5, 900, 30, True, -1.0, 15, 1e-6, "expected_gain", "queries"),
    (3, 7, 4, 3, 200, None, False, 2.0, 3, 1e-4, "gain_of_expected_grade", "batches"),
    (4, 30, 8, 4, 1500, 10, True, 0.3, 1, 1e-3, "expected_gain", "batches"),
    (5, 3, 3, 2, 50, None, False, 0.0, 15, 1e-6, "expected_gain", "batches"),
    (6, 25, 10, 4, 2000, None, False, -0.5, 7, 1e-6, "gain_of_expected_grade", "queries"),
    (7, 60, 10, 4, 5000, None, True, 0.8, 15, 1e-6, "gain_of_expected_grade", "batches"),
    (8, 10, 5, 3, 400, None, False, 0.2, 15, 0.2, "expected_gain", "batches"),   # tol wider than the first grid
]


@pytest.mark.parametrize("seed,n,depth,G,M,b,ties,bias,grid,tol,label_gain,correction", CASES)
def test_search_equals_every_point(seed, n, depth, G, M, b, ties, bias, grid, tol, label_gain, correction):
    u, dists, B = make_inputs(seed, n, depth, G, M, b, ties=ties, bias=bias)
    kw = dict(label_gain=label_gain, correction=correction, tol=tol, grid=grid)
    ref = every_point(u, dists, B, 0.1, **kw)
    assert same(calibrate_crc(u, dists, B, 0.1, **kw), ref)
    # several label sets side by side: each that of its own search
    sets = [dists, make_inputs(seed + 100, n, depth, G, M, b, ties=ties, bias=bias + 1.0)[1], dists[:, :, ::-1]]
    for d, c in zip(sets, calibrate_crc_sets(u, sets, B, 0.1, **kw)):
        assert same(c, every_point(u, d, B, 0.1, **kw))


def test_bounds_failures_and_no_losses():
    u, dists, B = make_inputs(11, 15, M=800, ties=True)
    # labels equal to the truth everywhere: no batch is a loss on either side, λ_high = −1 and λ_low = 1
    G = dists.shape[-1]
    true = np.argmax(dists, axis=-1)
    exact = hard_to_dist(true, G)
    u_exact = query_utility(exact, dcg_weights(dists.shape[1]))
    c = calibrate_crc(u_exact, exact, B, 0.1)
    assert (c.lam_low, c.lam_high, c.risk_low, c.risk_high) == (1.0, -1.0, 0.0, 0.0)
    assert same(c, every_point(u_exact, exact, B, 0.1))
    # human values all 0: Û_CRC ≥ U, never a loss for λ_high (−1); λ_low somewhere inside
    zero = np.zeros_like(u)
    c = calibrate_crc(zero, dists, B, 0.1)
    assert c.lam_high == -1.0 and same(c, every_point(zero, dists, B, 0.1))
    # human values at their maximum: λ_low = 1 ... λ_high at the top end or failed
    top = np.full_like(u, u.max() * 10)
    c = calibrate_crc(top, dists, B, 0.1)
    assert c.lam_low == 1.0 and same(c, every_point(top, dists, B, 0.1))
    assert np.isnan(c.lam_high) and c.failed
    # a bound ≤ 0 (10 batches at α = 0.05): both sides fail
    c = calibrate_crc(u, dists, B[:10], 0.05)
    assert c.failed and np.isnan(c.lam_low) and np.isnan(c.lam_high) and same(c, every_point(u, dists, B[:10], 0.05))
    # per-query batches (M = n = 40 > 19)
    u40, d40, _ = make_inputs(12, 40)
    S = cal.single_query_batches(40)
    assert same(calibrate_crc(u40, d40, S, 0.05), every_point(u40, d40, S, 0.05))


FORCED = {
    "every value near the loss threshold": dict(_ROUNDING_MARGIN=1e15),
    "first-grid prediction from one batch": dict(_PREDICT_BATCHES=1),
    "products with all of C": dict(_JOINT_RATIO=1e12),
    "products with the active rows": dict(_JOINT_RATIO=0),
}


@pytest.mark.parametrize("forced", list(FORCED))
def test_shortcuts_forced(forced, monkeypatch):
    for name, value in FORCED[forced].items():
        monkeypatch.setattr(cal, name, value)
    for case in CASES[:4] + CASES[6:7]:
        seed, n, depth, G, M, b, ties, bias, grid, tol, label_gain, correction = case
        u, dists, B = make_inputs(seed, n, depth, G, M, b, ties=ties, bias=bias)
        kw = dict(label_gain=label_gain, correction=correction, tol=tol, grid=grid)
        assert same(calibrate_crc(u, dists, B, 0.1, **kw), every_point(u, dists, B, 0.1, **kw))


@pytest.mark.parametrize("margin", [64, 1e10, 1e12])
def test_wrong_predictions(margin, monkeypatch):
    """Random predictions of the deciding λ (the windows then miss and the points beyond them decide), with the
    default and with wider margins around the loss threshold (some windows or the points beyond them then take
    the reference product)."""
    rng = np.random.default_rng(5)
    monkeypatch.setattr(cal, "_ROUNDING_MARGIN", margin)
    first, rounds = cal._predict_first, cal._predict_round
    monkeypatch.setattr(cal, "_predict_first", lambda D, *a: rng.integers(0, D.shape[1] + 1, D.shape[0]))
    monkeypatch.setattr(cal, "_predict_round",
                        lambda dlo, dhi, pf, base, cut, thr, grid: rng.integers(0, grid + 1, base.size))
    for case in CASES:
        seed, n, depth, G, M, b, ties, bias, grid, tol, label_gain, correction = case
        u, dists, B = make_inputs(seed, n, depth, G, M, b, ties=ties, bias=bias)
        kw = dict(label_gain=label_gain, correction=correction, tol=tol, grid=grid)
        sets = [dists, dists[:, :, ::-1]]
        for d, c in zip(sets, calibrate_crc_sets(u, sets, B, 0.1, **kw)):
            assert same(c, every_point(u, d, B, 0.1, **kw))
    assert first is not cal._predict_first and rounds is not cal._predict_round


def test_predictions():
    """The predicted first feasible points: counts scaled from a sample on the first grid; on a round's grid the
    batches' D interpolated linearly between the bracket's ends."""
    D = np.array([[[-1.0, -1.0, -1.0, 1.0], [-1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]])   # (1, 3 points, 4)
    assert cal._predict_first(D, 0.0, 2.5 * 10 / 4, 10).tolist() == [1]       # counts 3, 1, 0 of 4 → 7.5, 2.5, 0
    assert cal._predict_first(D, 0.0, 0.0, 10).tolist() == [3]               # nothing below 0: none feasible
    # one search, grid 3 (inner points at ¼, ½, ¾): crossings at 0.1, 0.6, 0.9 of the bracket
    dlo, dhi = np.full(3, -1.0), np.array([9.0, 2 / 3, 1 / 9])
    pf = np.zeros(3, dtype=np.intp)
    assert cal._predict_round(dlo, dhi, pf, np.array([0]), 0.0, 1.5, 3).tolist() == [2]   # losses 2, 2, 1
    assert cal._predict_round(dlo, dhi, pf, np.array([5]), 0.0, 1.5, 3).tolist() == [3]   # never below 1.5
