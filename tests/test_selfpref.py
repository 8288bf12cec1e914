"""Self-preference of a labeler (irrepro.selfpref): a synthetic population whose labeler adds a known bias δ
to the systems sharing its model only; Kendall's τ and τ_AP on hand-computed rankings; coverage per group on a
``ci.systems``-shaped table; the score tables from the CI paper's evaluator; input errors."""
import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from irrepro.core.scores import from_matrix
from irrepro.errors import InputError
import irrepro.selfpref as sp
from irrepro.stats.rankcorr import tau_ap
from irrepro.papers.ci import systems as ci_systems

DELTA = 0.1
NOISE = 0.05


def _tables(H, L, same, collection="c", measure="nDCG@10"):
    """Long score tables of topic × system matrices H (humans) and L (labels), systems s00.., topics 1..T."""
    T, S = H.shape
    names = [f"s{j:02d}" for j in range(S)]
    idx = pd.Index([str(t + 1) for t in range(T)], name="topic")
    h = from_matrix(pd.DataFrame(H, index=idx, columns=names), collection, measure)
    lab = from_matrix(pd.DataFrame(L, index=idx, columns=names), collection, measure)
    return h, lab, {n: bool(s) for n, s in zip(names, same)}


def _population(T, S=10, n_same=3, delta=DELTA, noise=NOISE, seed=0):
    """Human per-topic scores: system ability + topic difficulty + interaction; labels: the human score + N(0,
    noise²) + δ for the first ``n_same`` systems (those sharing the labeler's model). The true bias of a system is
    δ or 0."""
    rng = np.random.default_rng(seed)
    ability = np.linspace(0.30, 0.60, S)
    H = ability[None, :] + rng.normal(0, 0.15, (T, 1)) + rng.normal(0, 0.08, (T, S))
    same = np.arange(S) < n_same
    L = H + rng.normal(0, noise, (T, S)) + delta * same[None, :]
    return H, L, same


def test_table_recovers_the_known_bias_of_same_model_systems_only():
    H, L, same = _population(T=60)
    h, lab, flags = _tables(H, L, same)
    t = sp.self_preference_table(h, lab, flags, labeler="judge", n_boot=4000, seed=1)
    assert list(t.columns[:9]) == ["labeler", "system", "same_model", "measure", "by_labels", "by_humans", "bias",
                                   "bias_low", "bias_high"]
    assert list(t.columns) == sp.TABLE_COLUMNS and len(t) == 10 and (t.labeler == "judge").all()
    assert (t.topics == 60).all()
    se = NOISE / np.sqrt(60)
    s, o = t[t.same_model], t[~t.same_model]
    assert len(s) == 3 and set(s.system) == {"s00", "s01", "s02"}
    assert np.allclose(t.bias, t.by_labels - t.by_humans)
    assert np.allclose(t.by_humans, H.mean(0)[[int(x[1:]) for x in t.system]])
    assert (np.abs(s.bias - DELTA) < 4 * se).all() and (np.abs(o.bias) < 4 * se).all()
    assert (s.bias_low > 0).all()  # δ = 0.1 is 15 standard errors: every same-model interval excludes 0
    assert (t.bias_low < t.bias).all() and (t.bias < t.bias_high).all()
    # the t interval is mean ± t_59 · sd / √60 of the per-topic differences; the bootstrap's width is close to it,
    # and on average over the systems both are ≈ 2 · 1.96 · se
    D = (L - H)[:, [int(x[1:]) for x in t.system]]
    assert np.allclose(t.sd, D.std(0, ddof=1))
    wt = (t.t_high - t.t_low).to_numpy()
    wb = (t.bias_high - t.bias_low).to_numpy()
    assert np.allclose(wt, 2 * stats.t.ppf(0.975, 59) * D.std(0, ddof=1) / np.sqrt(60))
    assert np.all((wb / wt > 0.85) & (wb / wt < 1.15)), wb / wt
    assert 0.85 < wb.mean() / (3.92 * se) < 1.15
    # the labels lift the same-model systems in the ranking, never lower them
    assert (s.rank_shift >= 0).all() and s.rank_shift.sum() > 0 and (o.rank_shift <= 0).all()
    g = sp.self_preference_gap(h, lab, flags, labeler="judge", n_boot=4000, seed=1)
    assert list(g.columns) == sp.GAP_COLUMNS and len(g) == 1
    r = g.iloc[0]
    assert (r.same_systems, r.other_systems) == (3, 7)
    assert np.isclose(r.gap, s.bias.mean() - o.bias.mean()) and abs(r.gap - DELTA) < 4 * se
    assert r.gap_low > 0 and r.p_value < 0.01


def test_no_self_preference_no_gap_and_a_common_leniency_is_not_a_gap():
    H, L, same = _population(T=60, delta=0.0, seed=3)
    h, lab, flags = _tables(H, L + 0.2, same)  # lenient to everyone
    t = sp.self_preference_table(h, lab, flags, labeler="j", n_boot=2000, seed=0)
    assert (t.bias_low > 0).all()
    g = sp.self_preference_gap(h, lab, flags, labeler="j", n_boot=2000, seed=0).iloc[0]
    assert abs(g.gap) < 4 * NOISE * np.sqrt(1 / 3 + 1 / 7) / np.sqrt(60)


@pytest.mark.parametrize("T", [10, 25])
def test_interval_covers_the_true_bias_and_gap_at_its_nominal_rate(T):
    """Over 300 independent populations (4 systems each, 1,200 bias intervals, 300 gap intervals) the 95% intervals
    contain each system's true bias (δ or 0) and the true gap δ within [0.93, 0.98] at 10 and 25 topics: the
    symmetric bootstrap-t interval of :func:`irrepro.stats.paired.bootstrap`. (The percentile interval of the
    bootstrap means covers 0.89 of the biases and of the gaps here at 10 topics, 0.92 of the gaps at 25: it uses
    the plug-in spread.)"""
    hits, n, gap_hits = 0, 0, 0
    for rep in range(300):
        H, L, same = _population(T=T, S=4, n_same=2, seed=100 + rep)
        h, lab, flags = _tables(H, L, same)
        t = sp.self_preference_table(h, lab, flags, labeler="j", n_boot=1000, seed=rep)
        truth = np.where(t.same_model, DELTA, 0.0)
        hits += int(((t.bias_low <= truth) & (truth <= t.bias_high)).sum())
        n += len(t)
        g = sp.self_preference_gap(h, lab, flags, labeler="j", n_boot=1000, seed=rep).iloc[0]
        gap_hits += int(g.gap_low <= DELTA <= g.gap_high)
    assert 0.93 <= hits / n <= 0.98, hits / n
    assert 0.93 <= gap_hits / 300 <= 0.98, gap_hits / 300
    # and the check can fail: intervals around the bias of a labeler the test pretends is unbiased miss δ
    H, L, same = _population(T=40, S=4, n_same=2, seed=7)
    h, lab, flags = _tables(H, L, same)
    t = sp.self_preference_table(h, lab, flags, labeler="j", n_boot=1000, seed=0)
    assert not ((t.bias_low <= 0) & (0 <= t.bias_high))[t.same_model].any()


def test_interval_width_shrinks_as_topics_grow():
    widths = []
    for T in (20, 80, 320):
        H, L, same = _population(T=T, seed=T)
        h, lab, flags = _tables(H, L, same)
        t = sp.self_preference_table(h, lab, flags, labeler="j", n_boot=2000, seed=0)
        widths.append(float((t.bias_high - t.bias_low).mean()))
    # width ∝ 1/√T: quadrupling the topics halves it
    assert widths[0] > widths[1] > widths[2]
    for a, b in zip(widths, widths[1:]):
        assert 1.6 < a / b < 2.5, widths


def test_topic_resamples_are_drawn_once_and_shared_by_every_system():
    H, L, same = _population(T=30, S=5, n_same=2, seed=11)
    H = np.column_stack([H, H[:, 0]])  # s05 is a copy of s00 with labels shifted by a constant
    L = np.column_stack([L, L[:, 0] + 1.0])
    same = np.append(same, True)
    h, lab, flags = _tables(H, L, same)
    a = sp.self_preference_table(h, lab, flags, labeler="j", n_boot=500, seed=5).set_index("system")
    # the same per-topic differences (up to a constant) get the same interval only if they see the same resamples
    assert np.allclose(a.loc["s05", ["bias_low", "bias_high"]].to_numpy() - 1.0,
                       a.loc["s00", ["bias_low", "bias_high"]].to_numpy())
    # leaving systems out does not change another system's interval; the same seed repeats, another differs
    keep = ["s00", "s01", "s03"]
    b = sp.self_preference_table(h[h.system.isin(keep)], lab[lab.system.isin(keep)],
                                 {s: flags[s] for s in keep}, labeler="j", n_boot=500, seed=5).set_index("system")
    assert np.allclose(a.loc[keep, ["bias_low", "bias_high"]], b.loc[keep, ["bias_low", "bias_high"]])
    c = sp.self_preference_table(h, lab, flags, labeler="j", n_boot=500, seed=6).set_index("system")
    assert not np.allclose(a.bias_low, c.bias_low)
    pd.testing.assert_frame_equal(a, sp.self_preference_table(h, lab, flags, labeler="j", n_boot=500,
                                                              seed=5).set_index("system"))


def test_several_measures_one_row_per_system_and_measure():
    H, L, same = _population(T=20, S=4, n_same=1)
    h1, l1, flags = _tables(H, L, same, measure="AP")
    h2, l2, _ = _tables(2 * H, 2 * L, same, measure="nDCG@10")
    h, lab = pd.concat([h1, h2]), pd.concat([l1, l2])
    t = sp.self_preference_table(h, lab, flags, labeler="j", n_boot=300, seed=0)
    assert len(t) == 8 and set(t.measure) == {"AP", "nDCG@10"}
    a, b = (t[t.measure == m].set_index("system").sort_index() for m in ("AP", "nDCG@10"))
    assert np.allclose(2 * a.bias, b.bias) and np.allclose(2 * a.bias_low, b.bias_low)  # same resamples
    only = sp.self_preference_table(h, lab, flags, labeler="j", measures="AP", n_boot=300, seed=0)
    assert set(only.measure) == {"AP"}


# ------------------------------------------------------------------------------------------------ rankings

def _tau_ap_strict(truth, estimate):
    """The textbook formula for strict rankings, written directly: walk down the estimated ranking."""
    order = np.argsort(-np.asarray(estimate), kind="stable")
    N = len(order)
    s = 0.0
    for i in range(1, N):
        x = order[i]
        s += sum(truth[y] > truth[x] for y in order[:i]) / i
    return 2 * s / (N - 1) - 1


def test_tau_ap_hand_computed_swap_at_the_top_costs_more_than_at_the_bottom():
    truth = np.array([4.0, 3.0, 2.0, 1.0])  # A > B > C > D
    assert tau_ap(truth, truth) == pytest.approx(1.0)
    assert tau_ap(truth, -truth) == pytest.approx(-1.0)
    top = np.array([3.0, 4.0, 2.0, 1.0])     # B, A, C, D: C(2..4) = 0, 2, 3 → 2/3 · (0/1 + 2/2 + 3/3) − 1 = 1/3
    bottom = np.array([4.0, 3.0, 1.0, 2.0])  # A, B, D, C: C(2..4) = 1, 2, 2 → 2/3 · (1 + 1 + 2/3) − 1 = 7/9
    assert tau_ap(truth, top) == pytest.approx(1 / 3)
    assert tau_ap(truth, bottom) == pytest.approx(7 / 9)
    # Kendall's τ sees one discordant pair of six either way: 1 − 2/6
    assert stats.kendalltau(truth, top).statistic == pytest.approx(2 / 3)
    assert stats.kendalltau(truth, bottom).statistic == pytest.approx(2 / 3)
    rng = np.random.default_rng(0)
    for _ in range(50):
        t, e = rng.permutation(7).astype(float), rng.permutation(7).astype(float)
        assert tau_ap(t, e) == pytest.approx(_tau_ap_strict(t, e))


def test_tau_ap_with_ties_is_the_expectation_over_random_tie_breaks():
    # hand: truth A > B > C, the estimate ties A and B on top: orders ABC (1) and BAC (0) → 0.5
    assert tau_ap([3.0, 2.0, 1.0], [2.0, 2.0, 1.0]) == pytest.approx(0.5)
    assert tau_ap([1.0, 1.0, 1.0], [3.0, 2.0, 1.0]) == pytest.approx(0.0)  # truth all tied: no information
    rng = np.random.default_rng(1)
    for _ in range(40):
        t = rng.integers(0, 3, 5).astype(float)
        e = rng.integers(0, 3, 5).astype(float)
        exp = np.mean([_tau_ap_strict(a, b) for a in _tie_breaks(t) for b in _tie_breaks(e)])
        assert tau_ap(t, e) == pytest.approx(exp)


def _tie_breaks(scores):
    """Every strict version of ``scores`` that breaks its ties (each order within each tied group once)."""
    scores = np.asarray(scores, dtype=float)
    groups = [np.flatnonzero(scores == v) for v in np.unique(scores)]
    out = []
    for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
        s = scores * 10
        for order in orders:
            s[list(order)] += np.arange(len(order))
        out.append(s)
    return out


def test_ranking_agreement_identical_reversed_and_without_same_model():
    H, L, same = _population(T=30, S=6, n_same=2, delta=0.0, noise=0.0)
    h, lab, flags = _tables(H, H, same)
    r = sp.ranking_agreement(h, lab, flags, labeler="j")
    assert list(r.columns) == sp.AGREEMENT_COLUMNS
    assert list(r.subset) == list(sp.SUBSETS) and list(r.systems) == [6, 4]
    assert np.allclose(r.tau, 1.0) and np.allclose(r.tau_ap, 1.0) and (r.discordant == 0).all()
    h, lab, flags = _tables(H, -H, same)
    r = sp.ranking_agreement(h, lab, flags, labeler="j")
    assert np.allclose(r.tau, -1.0) and np.allclose(r.tau_ap, -1.0)
    assert list(r.discordant) == [15, 6]
    # only the same-model systems (the two weakest by humans) are displaced: the labels put them on top
    L = H.copy()
    L[:, :2] += 1.0
    h, lab, flags = _tables(H, L, same)
    r = sp.ranking_agreement(h, lab, flags, labeler="j").set_index("subset")
    assert r.loc["all", "tau"] < 0.5 and r.loc["all", "tau_ap"] < 0.5
    assert r.loc["without_same_model", "tau"] == pytest.approx(1.0)
    assert r.loc["without_same_model", "tau_ap"] == pytest.approx(1.0)
    # τ of the population against scipy's tau-b on the means; τ_AP against the strict formula
    mh, ml = H.mean(0), L.mean(0)
    assert r.loc["all", "tau"] == pytest.approx(stats.kendalltau(mh, ml).statistic)
    assert r.loc["all", "tau_ap"] == pytest.approx(_tau_ap_strict(mh, ml))


# ------------------------------------------------------------------------------------------------ coverage

def test_coverage_by_group_on_a_ci_systems_table():
    rows = []
    #             system, method, low, high, truth  (s1, s2 share the labeler's model)
    for s, m, lo, hi, tr in [("s1", "ppi", 0.0, 1.0, 0.5), ("s2", "ppi", 0.0, 1.0, 1.5), ("s3", "ppi", 0.0, 1.0, 0.2),
                             ("s1", "crc", np.nan, np.nan, 0.5), ("s2", "crc", 0.0, 2.0, 1.5),
                             ("s3", "crc", 0.3, 1.0, 0.2), ("s4", "ppi", 0.1, 0.2, 0.2), ("s4", "crc", 0, 1, 0.2)]:
        rows.append({c: np.nan for c in ci_systems.COLUMNS} | {"system": s, "measure": "DCG@10", "method": m,
                                                                "low": lo, "high": hi, "truth": tr, "note": ""})
    table = pd.DataFrame(rows, columns=ci_systems.COLUMNS)
    # the long CSV of ci.systems adds difference rows, which are not per-system intervals
    diff = pd.DataFrame([{"system": "s1", "system_b": "s2", "measure": "DCG@10", "method": "ppi", "low": 5.0,
                          "high": 6.0, "truth": 0.0}])
    long = ci_systems.systems_long(table, diff.assign(kind="difference", n=10, N=20, estimate=0, width=1,
                                                      covered=False, excludes_zero=True, ppi_lambda=1.0)
                                   .rename(columns={"system": "system_a"}))
    flags = {"s1": True, "s2": True, "s3": False, "s4": False}
    for t in (table, long):
        c = sp.coverage_by_group(t, flags, labeler="judge")
        assert list(c.columns) == ["labeler", "measure"] + sp.COVERAGE_COLUMNS
        c = c.set_index(["method", "group"])
        assert tuple(c.loc[("ppi", "same_model"), ["intervals", "covered", "no_interval"]]) == (2, 1, 0)
        assert tuple(c.loc[("ppi", "other"), ["intervals", "covered", "no_interval"]]) == (2, 2, 0)  # 0.2 ≤ 0.2
        assert tuple(c.loc[("crc", "same_model"), ["intervals", "covered", "no_interval"]]) == (1, 1, 1)
        assert tuple(c.loc[("crc", "other"), ["intervals", "covered", "no_interval"]]) == (2, 1, 0)
        assert c.loc[("ppi", "same_model"), "coverage"] == 0.5
        lo, hi = c.loc[("ppi", "same_model"), ["coverage_low", "coverage_high"]]
        assert lo < 0.5 < hi
    with pytest.raises(InputError, match="no flag.*s4"):
        sp.coverage_by_group(table, {"s1": True, "s2": True, "s3": False})
    with pytest.raises(InputError, match=r"lacks columns \['truth'\]"):
        sp.coverage_by_group(table.drop(columns="truth"), flags)
    with pytest.raises(InputError, match="no truth"):
        sp.coverage_by_group(table.assign(truth=np.nan), flags)


def test_clustered_proportion_by_hand():
    from irrepro.papers.ci.summary import clustered_proportion, wilson
    # 3 draws of 5 intervals: 3, 5, 4 covered. p = 12/15 = 0.8, residuals −1, 1, 0,
    # var = 3/2 · 2 / 15² = 1/75, half-width t_{2, 0.975} · sqrt(1/75) = 4.302653 · 0.115470 = 0.496828
    lo, hi = clustered_proportion([3, 5, 4], [5, 5, 5])
    assert lo == pytest.approx(0.8 - 4.302652729749464 * np.sqrt(1 / 75)) and hi == 1.0  # clipped
    assert lo == pytest.approx(0.303172, abs=1e-6)
    # unequal draws: k = 2, 7, 1 of n = 4, 8, 2; p = 10/14, residuals 2 − 40/14, 7 − 80/14, 1 − 20/14
    k, n = np.array([2, 7, 1]), np.array([4, 8, 2])
    p = 10 / 14
    var = 3 / 2 * ((k - p * n) ** 2).sum() / 14 ** 2
    h = stats.t.ppf(0.975, 2) * np.sqrt(var)
    assert clustered_proportion(k, n) == pytest.approx((p - h, min(p + h, 1.0)))
    # a draw without intervals is no cluster: the same as without it (D = 3, not 4)
    assert clustered_proportion([2, 0, 7, 1], [4, 0, 8, 2]) == pytest.approx((p - h, min(p + h, 1.0)))
    # variance 0: all covered, one draw, or every draw at the same coverage -> Wilson of p·D of D draws
    assert clustered_proportion([10] * 20, [10] * 20) == pytest.approx(wilson(20, 20))
    assert clustered_proportion([0] * 20, [10] * 20) == pytest.approx(wilson(0, 20))
    assert clustered_proportion([1], [2]) == pytest.approx(wilson(0.5, 1))
    assert clustered_proportion([1, 2], [3, 6]) == pytest.approx(wilson(2 / 3, 2))
    assert np.isnan(clustered_proportion([], [])).all() and np.isnan(clustered_proportion([0], [0])).all()
    # 90%: t_{D−1, 0.95}
    assert clustered_proportion(k, n, level=0.90)[0] == pytest.approx(p - stats.t.ppf(0.95, 2) * np.sqrt(var))


def test_coverage_interval_is_clustered_by_draw():
    """A draw's systems share its queries: when they are covered or missed together, the 200 rows of 20 draws ×
    10 systems carry the information of 20 draws, and the interval must be about √10 times wider than a Wilson
    interval over the rows."""
    from irrepro.papers.ci.summary import wilson
    draws, systems, hit = 20, [f"s{i}" for i in range(10)], 15  # draws 0..14 cover every system, 15..19 none
    rows = [{"system": s, "method": "ppi", "measure": "DCG@10", "low": 0.0, "high": 1.0,
             "truth": 0.5 if d < hit else 2.0, "draw": d} for d in range(draws) for s in systems + ["own"]]
    table = pd.DataFrame(rows)
    flags = {s: False for s in systems} | {"own": True}
    c = sp.coverage_by_group(table, flags).set_index("group")
    o = c.loc["other"]
    assert (o.intervals, o.covered, o.coverage) == (200, 150, 0.75)
    width = o.coverage_high - o.coverage_low
    rlo, rhi = wilson(150, 200)
    assert width >= 2.5 * (rhi - rlo)
    assert o.coverage_low < hit / draws < o.coverage_high
    # by hand: residuals 10 − 7.5 = 2.5 (15 draws), −7.5 (5 draws); var = 20/19 · 375 / 200²
    h = stats.t.ppf(0.975, draws - 1) * np.sqrt(draws / (draws - 1) * (15 * 2.5 ** 2 + 5 * 7.5 ** 2) / 200 ** 2)
    assert (o.coverage_low, o.coverage_high) == pytest.approx((0.75 - h, 0.75 + h))
    # one system per draw gives the same interval: the draws, not the rows, are the sample
    s = c.loc["same_model"]
    assert (s.intervals, s.covered) == (20, 15)
    assert (s.coverage_low, s.coverage_high) == pytest.approx((o.coverage_low, o.coverage_high))
    # a failed interval counts in no_interval, not in its draw's intervals
    gone = table.assign(low=np.where((table.draw == 0) & (table.system == "s0"), np.nan, table.low))
    g = sp.coverage_by_group(gone, flags).set_index("group").loc["other"]
    assert (g.intervals, g.covered, g.no_interval) == (199, 149, 1)
    # without a draw column the table is one draw: the Wilson interval of one observation
    one = sp.coverage_by_group(table[table.draw.isin([0, 19])].drop(columns="draw"), flags).set_index("group")
    assert one.loc["other", "coverage"] == 0.5
    assert (one.loc["other", "coverage_low"], one.loc["other", "coverage_high"]) == pytest.approx(wilson(0.5, 1))


# ------------------------------------------------------------------------------------------------ score tables

def _toy_runs():
    qrels = pd.DataFrame({"query_id": ["1", "1", "1", "2", "2"], "doc_id": ["a", "b", "c", "a", "d"],
                          "relevance": [2, 0, 1, 1, 2]})
    runs = {"x": pd.DataFrame({"query_id": ["1", "1", "1", "2", "2"], "doc_id": ["a", "b", "c", "d", "a"],
                               "rank": [1, 2, 3, 1, 2], "score": [3.0, 2, 1, 2, 1]}),
            "y": pd.DataFrame({"query_id": ["1", "1", "2", "2"], "doc_id": ["c", "a", "a", "e"],
                               "rank": [1, 2, 1, 2], "score": [2.0, 1, 2, 1]})}
    pairs = pd.concat(runs.values())[["query_id", "doc_id"]].drop_duplicates()
    return runs, qrels, pairs


def test_label_score_tables_use_the_ci_evaluator():
    runs, qrels, pairs = _toy_runs()
    g = pairs.merge(qrels, how="left").relevance.fillna(0).astype(int).to_numpy()
    onehot = pairs.assign(p_0=(g == 0) * 1.0, p_1=(g == 1) * 1.0, p_2=(g == 2) * 1.0)
    h, lab = sp.label_score_tables(runs, qrels, onehot, ["DCG@3", "nDCG@3"], collection="toy")
    assert list(h.columns) == ["collection", "system", "topic", "measure", "value"] and len(h) == 8
    # labels equal to the human grades give the human values (DCG; nDCG too, the pool holds every relevant doc)
    assert np.allclose(h.value, lab.value)
    v = h.set_index(["system", "topic", "measure"]).value
    assert v[("x", "1", "DCG@3")] == pytest.approx(3 + 1 / 2)  # grades 2, 0, 1 at ranks 1..3
    assert v[("y", "2", "DCG@3")] == pytest.approx(1.0)  # a (1) then e (unjudged)
    assert v[("x", "1", "nDCG@3")] == pytest.approx(3.5 / (3 + 1 / np.log2(3)))
    # a label of a: p = (0, .5, .5) → E[r] = 1.5 → gain 2^1.5 − 1 (the CI analyses' default label gain)
    soft = onehot.copy()
    soft.loc[soft.doc_id == "a", ["p_0", "p_1", "p_2"]] = [0.0, 0.5, 0.5]
    _, lab = sp.label_score_tables(runs, qrels, soft, "DCG@3", collection="toy")
    w = lab.set_index(["system", "topic"]).value
    assert w[("x", "1")] == pytest.approx(2 ** 1.5 - 1 + 1 / 2)
    assert w[("y", "2")] == pytest.approx(2 ** 1.5 - 1)
    _, lab = sp.label_score_tables(runs, qrels, soft, "DCG@3", collection="toy", label_gain="expected_gain")
    assert lab.set_index(["system", "topic"]).value[("y", "2")] == pytest.approx(0.5 * 1 + 0.5 * 3)
    # the tables feed the self-preference table directly
    t = sp.self_preference_table(h[h.measure == "DCG@3"], lab, {"x": False, "y": True}, labeler="soft", n_boot=100)
    assert len(t) == 2
    with pytest.raises(InputError, match="grade"):
        sp.label_score_tables(runs, qrels, onehot.drop(columns="p_2"), "DCG@3", collection="toy")


# ------------------------------------------------------------------------------------------------ errors

def test_input_errors_name_what_is_wrong():
    H, L, same = _population(T=10, S=4, n_same=1)
    h, lab, flags = _tables(H, L, same)
    kw = {"labeler": "j", "n_boot": 50}
    with pytest.raises(InputError, match=r"by_labels lacks 1 system\(s\) that by_humans has: \['s03'\]"):
        sp.self_preference_table(h, lab[lab.system != "s03"], flags, **kw)
    with pytest.raises(InputError, match=r"by_humans lacks 1 topic\(s\) that by_labels has: \['7'\]"):
        sp.self_preference_table(h[h.topic != "7"], lab, flags, **kw)
    with pytest.raises(InputError, match=r"by_labels: 1 \(system, topic\) cell.*system 's01' on topic '3'"):
        sp.self_preference_table(h, lab[~((lab.system == "s01") & (lab.topic == "3"))], flags, **kw)
    with pytest.raises(InputError, match=r"by_labels has no scores for measure\(s\) \['AP'\]"):
        sp.self_preference_table(h.assign(measure="AP"), lab, flags, measures="AP", **kw)
    with pytest.raises(InputError, match="different measures"):
        sp.ranking_agreement(h.assign(measure="AP"), lab, flags, labeler="j")
    with pytest.raises(InputError, match="no flag for 1 system.*s02"):
        sp.self_preference_table(h, lab, {k: v for k, v in flags.items() if k != "s02"}, **kw)
    with pytest.raises(InputError, match="absent from the score tables.*s99"):
        sp.ranking_agreement(h, lab, flags | {"s99": True}, labeler="j")
    with pytest.raises(InputError, match="True or False"):
        sp.self_preference_table(h, lab, flags | {"s00": "yes"}, **kw)
    with pytest.raises(InputError, match="at least 2"):
        sp.self_preference_table(h[h.topic == "1"], lab[lab.topic == "1"], flags, **kw)
    with pytest.raises(InputError, match="n_boot"):
        sp.self_preference_table(h, lab, flags, labeler="j", n_boot=0)
    with pytest.raises(InputError, match="duplicate score"):
        sp.self_preference_table(pd.concat([h, h.iloc[:1]]), lab, flags, **kw)
    with pytest.raises(InputError, match="several collections"):
        sp.self_preference_table(pd.concat([h, h.assign(collection="d")]), lab, flags, **kw)
    with pytest.raises(InputError, match="lacks columns"):
        sp.self_preference_table(h.drop(columns="topic"), lab, flags, **kw)
    with pytest.raises(InputError, match="needs same-model and other systems"):
        sp.self_preference_gap(h, lab, {k: False for k in flags}, **kw)
    with pytest.raises(InputError, match="same items"):
        tau_ap([1, 2, 3], [1, 2])
