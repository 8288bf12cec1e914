"""The stats stage's library (irrepro.stats): paired tests against scipy, corrections against statsmodels, the
randomised Tukey HSD, the G-study against an independent ANOVA and a published example, power and swap rates."""
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from irrepro.core.trec import read_matrix_csv
from irrepro.core.scores import to_matrix
from irrepro.errors import InputError
from irrepro.stats import paired
from irrepro.stats.compare import compare, complete_matrix, ranked
from irrepro.stats.gstudy import dstudy, gstudy, topics_needed
from irrepro.stats.power import discriminative_power, swap_rates
from irrepro.stats.tukey import permutation_ranges, tukey_hsd, tukey_p

ART = "urbano/sigir2019-statistical/adhoc8_ap.csv"
SETTINGS = dict(tests=["t", "wilcoxon", "sign", "randomisation", "bootstrap", "tukey"], corrections=["holm"],
                alpha=0.05, n_permutations=999, n_bootstrap=999, seed=1)


def _mirror_matrix(name=ART, measure="AP"):
    root = os.environ.get("IRREPRO_MIRROR")
    path = Path(root or "/nonexistent") / "artifacts" / name
    if not path.is_file():
        pytest.skip("needs IRREPRO_MIRROR with " + name)
    return to_matrix(read_matrix_csv(path, "trec8-adhoc", measure), measure)


def _independent_anova(mat):
    """E ρ² and Φ from statsmodels' two-way ANOVA (ols + anova_lm), written independently of irrepro.stats."""
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    long = mat.rename_axis(index="topic", columns="system").stack().rename("y").reset_index()
    fit = smf.ols("y ~ C(system) + C(topic)", data=long).fit()
    a = sm.stats.anova_lm(fit, typ=2)
    ms = a["sum_sq"] / a["df"]
    n_t, n_s = mat.shape
    vs = max((ms["C(system)"] - ms["Residual"]) / n_t, 0)
    vt = max((ms["C(topic)"] - ms["Residual"]) / n_s, 0)
    ve = ms["Residual"]
    return vs / (vs + ve / n_t), vs / (vs + (vt + ve) / n_t)


# ---------------------------------------------------------------- paired tests and corrections


def test_trec8_paired_t_and_holm_equal_scipy_and_statsmodels(multipletests):
    mat = _mirror_matrix()
    t = compare(mat, **{**SETTINGS, "tests": ["t"]})
    assert len(t) == 129 * 128 // 2
    ref = np.array([stats.ttest_rel(mat[a], mat[b]).pvalue for a, b in zip(t.system_a, t.system_b)])
    # scipy's NaN: a pair with identical scores on every topic (duplicate runs); p = 1 by our convention
    nan = np.isnan(ref)
    assert all((mat[a] == mat[b]).all() for a, b in zip(t.system_a[nan], t.system_b[nan]))
    assert (t.p_value[nan] == 1).all()
    ref[nan] = 1.0
    np.testing.assert_allclose(t.p_value, ref, rtol=0, atol=1e-9)
    np.testing.assert_allclose(t.p_adjusted, multipletests(ref, method="holm")[1], rtol=0, atol=1e-9)
    # the check can fail: an unpaired test on the same pairs is far from it
    wrong = [stats.ttest_ind(mat[a], mat[b]).pvalue for a, b in zip(t.system_a, t.system_b)]
    assert np.abs(t.p_value - wrong).max() > 1e-3


@pytest.mark.parametrize("T", [10, 20, 60])
def test_wilcoxon_and_sign_equal_scipy_per_pair(T):
    rng = np.random.default_rng(T)
    X = rng.random((T, 6))
    X[:, 1] = np.round(X[:, 1], 1)  # ties of |d| in some pairs
    X[:, 5] = X[:, 4]  # a pair with all differences zero
    X[:3, 3] = X[:3, 2]  # some zero differences
    mat = pd.DataFrame(X, columns=[f"s{i}" for i in range(6)])
    t = compare(mat, **{**SETTINGS, "tests": ["wilcoxon", "sign"], "corrections": ["none"]})
    for r in t.itertuples():
        d = mat[r.system_a] - mat[r.system_b]
        if (d == 0).all():
            assert r.p_value == 1.0
        elif r.test == "wilcoxon":
            assert r.p_value == pytest.approx(stats.wilcoxon(d, zero_method="wilcox").pvalue, abs=1e-12)
        else:
            nz = d[d != 0]
            assert r.p_value == pytest.approx(stats.binomtest(int((nz > 0).sum()), len(nz)).pvalue, abs=1e-12)


@pytest.mark.parametrize("T", [2, 5, 9, 12])
def test_wilcoxon_with_ties_on_few_topics_equals_scipy_bit_for_bit(T, monkeypatch):
    """With zeros or tied |d| and T <= 13 scipy runs a permutation test over all 2^T sign flips; irrepro runs the same
    test on all columns at once with its statistic vectorised: the p-values must be scipy's, bit for bit (the tables
    are compared byte for byte between versions), on columns of every kind, across blocks of columns."""
    from irrepro.stats import paired
    from irrepro.stats.paired import _signed_rank_plus, wilcoxon

    monkeypatch.setattr(paired, "WILCOXON_BLOCK", 6)  # three blocks, the last one short
    rng = np.random.default_rng(T)
    D = rng.integers(-3, 4, size=(T, 17)).astype(float) / 4  # zeros and ties
    D[:, :4] = rng.normal(size=(T, 4))  # no zero or tie: scipy's exact distribution
    D[:, 4] = 0.0
    ref = np.array([1.0 if (d == 0).all() else stats.wilcoxon(d, zero_method="wilcox").pvalue for d in D.T])
    assert np.array_equal(wilcoxon(D), ref)
    # the statistic is scipy's W+; the wrong input: ranks that count the zeros (zero_method "pratt") change it
    d = np.array([0.0, 0.5, -0.5, 1.0, 0.0, 2.0])
    assert _signed_rank_plus(d) == 1.5 + 3 + 4
    assert _signed_rank_plus(d) != stats.wilcoxon(d, zero_method="pratt", alternative="greater").statistic


def test_randomisation_matches_scipy_exact_permutation_test_within_monte_carlo_error():
    rng = np.random.default_rng(3)
    D = rng.normal(0.3, 1.0, size=(10, 4))
    R = 20000
    p = paired.randomisation(D, R, np.random.default_rng(1))
    for j in range(4):
        exact = stats.permutation_test((D[:, j],), np.mean, permutation_type="samples", n_resamples=np.inf).pvalue
        assert abs(p[j] - exact) < 4 * np.sqrt(exact * (1 - exact) / R) + 1e-4, (p[j], exact)


def test_bootstrap_interval_covers_mean_and_p_small_for_a_clear_difference():
    rng = np.random.default_rng(4)
    D = np.column_stack([rng.normal(0.5, 0.2, 50), rng.normal(0.0, 0.2, 50)])
    p, lo, hi = paired.bootstrap(D, 999, np.random.default_rng(2), 0.05)
    assert p[0] == pytest.approx(1 / 1000) and p[1] > 0.05
    assert (lo < D.mean(axis=0)).all() and (D.mean(axis=0) < hi).all()


def test_corrections_order_bh_holm_bonferroni():
    p = np.random.default_rng(5).uniform(0, 0.2, 300) ** 2
    bh, holm, bonf = (paired.adjust(p, c) for c in ("bh", "holm", "bonferroni"))
    assert (bh <= holm + 1e-15).all() and (holm <= bonf + 1e-15).all() and (p <= bh + 1e-15).all()
    assert (bh < holm).any() and (holm < bonf).any()
    assert (paired.adjust(p, "none") == p).all()
    with pytest.raises(ValueError, match="NaN"):
        paired.adjust(np.array([0.1, np.nan]), "holm")


def test_baseline_restricts_the_family_and_changes_adjusted_p():
    mat = ranked(_mirror_matrix())
    base = mat.columns[60]
    full = compare(mat, **{**SETTINGS, "tests": ["t"]})
    bl = compare(mat, **{**SETTINGS, "tests": ["t"]}, baseline=base)
    assert len(bl) == 128 and (bl.system_b == base).all()
    # the same pairs, same raw p-values; Holm over 128 instead of 8,256 pairs: smaller adjusted p-values
    f = full[(full.system_a == base) | (full.system_b == base)]
    def key(df):
        return {frozenset((a, b)): (p, q) for a, b, p, q in zip(df.system_a, df.system_b, df.p_value,
                                                                            df.p_adjusted)}
    fk, bk = key(f), key(bl)
    assert fk.keys() == bk.keys()
    assert all(abs(fk[k][0] - bk[k][0]) < 1e-12 and bk[k][1] <= fk[k][1] + 1e-15 for k in fk)
    assert sum(bk[k][1] < fk[k][1] for k in fk) > 10
    with pytest.raises(InputError, match="baseline"):
        compare(mat, **SETTINGS, baseline="no-such-run")


# ---------------------------------------------------------------- randomised Tukey HSD


def test_tukey_p_at_least_unadjusted_randomisation_p():
    mat = ranked(_mirror_matrix()).iloc[:, ::4]  # 33 systems
    t = compare(mat, **{**SETTINGS, "tests": ["randomisation", "tukey"], "n_permutations": 2000})
    r = t[t.test == "randomisation"].p_value.to_numpy()
    h = t[t.test == "tukey"].p_value.to_numpy()
    se = np.sqrt(np.clip(r * (1 - r), 1e-6, None) / 2000)
    assert (h >= r - 4 * se - 1e-3).all()
    assert (h >= r).mean() > 0.98
    assert (h < 0.05).sum() < (r < 0.05).sum()  # a family-wise test finds fewer pairs


def test_tukey_ranges_by_hand_and_p_formula():
    # 2 topics × 2 systems: the 4 row permutations give system-mean ranges |(a-b)+(c-d)|/2 with signs
    X = np.array([[1.0, 0.0], [0.4, 0.0]])
    ranges = permutation_ranges(X, 4000, np.random.default_rng(0))
    assert set(np.round(ranges, 12)) == {0.7, 0.3}
    assert tukey_p(np.array([0.1, 0.2, 0.3]), np.array([0.2])) == pytest.approx(3 / 4)
    p, half = tukey_hsd(X, np.array([0]), np.array([1]), 999, np.random.default_rng(1), 0.05)
    assert half == pytest.approx(0.7) and p[0] == pytest.approx((1 + (ranges[:999] >= 0.7 - 1e-12).sum()) / 1000,
                                                               abs=0.05)


def test_permuted_labels_negative_case():
    """Each topic's scores shuffled across systems: no system effect is left. The real matrix shows many
    significant pairs and a reliable collection; the shuffled one almost none and E ρ² near 0."""
    mat = ranked(_mirror_matrix()).iloc[:, ::3]
    rng = np.random.default_rng(9)
    shuffled = pd.DataFrame(rng.permuted(mat.to_numpy(), axis=1), index=mat.index, columns=mat.columns)
    real = compare(mat, **{**SETTINGS, "tests": ["t", "tukey"]})
    null = compare(shuffled, **{**SETTINGS, "tests": ["t", "tukey"]})
    def pw(t):
        return discriminative_power(t, 0.05).set_index(["test", "correction"])["share"]
    assert pw(real)[("tukey", "hsd")] > 0.2 and pw(null)[("tukey", "hsd")] < 0.01
    assert pw(null)[("t", "holm")] < 0.01
    assert gstudy(mat.to_numpy())["e_rho2"] > 0.9 and gstudy(shuffled.to_numpy())["e_rho2"] < 0.3


# ---------------------------------------------------------------- G-study / D-study


def test_gstudy_hand_computed_tiny_case():
    # 3 topics × 2 systems: grand mean 0.5; system means 0.6, 0.4; topic means 0.3, 0.5, 0.7
    X = np.array([[0.4, 0.2], [0.6, 0.4], [0.8, 0.6]])
    g = gstudy(X)
    # SS_s = 3·(0.1² + 0.1²) = 0.06, MS_s = 0.06; SS_t = 2·(0.04 + 0 + 0.04) = 0.16, MS_t = 0.08; residual 0
    assert g["ms_system"] == pytest.approx(0.06) and g["ms_topic"] == pytest.approx(0.08)
    assert g["var_residual"] == pytest.approx(0, abs=1e-15)
    assert g["var_system"] == pytest.approx(0.02) and g["var_topic"] == pytest.approx(0.04)
    assert g["e_rho2"] == pytest.approx(1.0)
    assert g["phi"] == pytest.approx(0.02 / (0.02 + 0.04 / 3))
    # a residual: one cell changed by +0.06 (SS_res = 0.06²·(1 − 1/3)(1 − 1/2) = 0.0012, MS_res = 0.0006)
    X[0, 0] += 0.06
    assert gstudy(X)["ms_residual"] == pytest.approx(0.0006)
    assert topics_needed({"var_system": 0.02, "var_topic": 0.04, "var_residual": 0.01}, 0.95) == {
        "topics_e_rho2": 10, "topics_phi": 48}  # 19 · 0.01 / 0.02 = 9.5; 19 · 0.05 / 0.02 = 47.5


def test_gstudy_clips_a_negative_component_and_says_so():
    X = np.array([[0.1, 0.9], [0.9, 0.1], [0.5, 0.5]])  # systems equal on average: MS_s < MS_res
    g = gstudy(X)
    assert g["var_system"] == 0 and "var_system" in g["clipped"]


def test_gstudy_brennan_synthetic_data_set_1():
    """Brennan (2001), Generalizability Theory, Springer, Ch. 2: Synthetic Data Set No. 1 (p × i, 10 persons ×
    12 items); published σ²(p) = .0574, σ²(i) = .0754, σ²(pi) = .1269, Eρ² = .844, Φ = .773 with 12 items.
    Persons are the objects of measurement (our systems), items the conditions (our topics)."""
    persons = [
        [1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0],
        [1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0], [1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0],
        [1, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0], [1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0],
        [1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0], [1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 0],
        [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]]
    g = gstudy(np.array(persons, dtype=float).T)  # rows = items (topics), columns = persons (systems)
    assert round(g["var_system"], 4) == 0.0574 and round(g["var_topic"], 4) == 0.0754
    assert round(g["var_residual"], 4) == 0.1269
    assert round(g["e_rho2"], 3) == 0.844 and round(g["phi"], 3) == 0.773


def test_trec8_ap_coefficients_equal_statsmodels_anova():
    mat = _mirror_matrix()
    g = gstudy(mat.to_numpy())
    rho, phi = _independent_anova(mat)
    assert g["e_rho2"] == pytest.approx(rho, abs=1e-6) and g["phi"] == pytest.approx(phi, abs=1e-6)
    d = dstudy(g, 200)
    assert d.loc[d.n_topics == 50, "e_rho2"].item() == pytest.approx(g["e_rho2"])
    assert d.e_rho2.is_monotonic_increasing and (d.phi <= d.e_rho2 + 1e-15).all()
    # can fail: the coefficients of another measure differ
    rho_p10, _ = _independent_anova(_mirror_matrix("urbano/sigir2019-statistical/adhoc8_p10.csv", "P@10"))
    assert abs(rho_p10 - g["e_rho2"]) > 1e-4


# ---------------------------------------------------------------- power, swaps, incomplete matrices


def test_swap_rates_zero_for_constant_shifts_and_high_for_noise():
    rng = np.random.default_rng(6)
    base = rng.random((40, 1))
    shifted = base + np.arange(5) * 0.1  # every topic: system j better than j-1 by 0.1
    a, b = np.triu_indices(5, 1)
    s = swap_rates(shifted, a, b, [5, 10, 30], 20, np.random.default_rng(0), 0.05)
    assert list(s.subset_size) == [5, 10] and (s.swap_rate == 0).all()  # 30 > 40 / 2 left out
    noise = rng.random((40, 5))
    n = swap_rates(noise, a, b, [5, 10], 200, np.random.default_rng(0), 0.05)
    assert (n.swap_rate > 0.3).all()


def test_complete_matrix_drops_incomplete_topics_and_names_too_few():
    mat = pd.DataFrame({"a": [0.1, np.nan, 0.3, 0.2], "b": [0.2, 0.1, 0.1, 0.3]}, index=["1", "2", "3", "4"])
    out, dropped = complete_matrix(mat, "x AP")
    assert dropped == ["2"] and list(out.index) == ["1", "3", "4"]
    with pytest.raises(InputError, match="x AP: 1 topics"):
        complete_matrix(mat.iloc[:2], "x AP")


# ---------------------------------------------------------------- config checks


def _plan(**stats_cfg):
    from irrepro.plan import Plan

    plan = Plan(version="t", V="results/t", res="res", mirror=None, collections=["vaswani"], imports=["t8"],
                all_scored=["vaswani", "t8"], systems={"vaswani": ["bm25", "dph"]},
                measures={"vaswani": ["AP", "P@10"], "t8": ["AP"]})
    return {"stats": {"enabled": True, **stats_cfg}}, plan


def test_stats_config_names_unknown_collections_systems_and_measures():
    from irrepro.stats.plan import COMPARE_KEYS, check, measures, settings

    check(*_plan(baseline={"vaswani": "dph", "t8": "run3"}, measures={"t8": ["AP"]}))  # fine
    for cfg, msg in [({"baseline": {"vaswan": "dph"}}, r"stats\.baseline\.vaswan: 'vaswan' is neither"),
                     ({"baseline": {"vaswani": "bm26"}}, r"stats\.baseline\.vaswani: 'bm26' is not a system"),
                     ({"measures": {"t8": ["P@10"]}}, r"stats\.measures\.t8\[0\]: 't8' has no 'P@10'")]:
        with pytest.raises(InputError, match=msg):
            check(*_plan(**cfg))
    check(*_plan(enabled=False, baseline={"nope": "x"}))  # a disabled stage checks nothing
    cfg, plan = _plan()
    assert measures(cfg, plan, "vaswani") == ["AP", "P@10"]
    plan.measures["t8"] = None  # a trec_eval import keeping every measure of its file: unknown before the run
    with pytest.raises(InputError, match=r"stats\.measures\.t8: imports\.t8 keeps every measure"):
        check(cfg, plan)
    cfg["stats"]["measures"] = {"t8": ["AP"]}
    assert measures(cfg, plan, "t8") == ["AP"]
    cfg["stats"]["measures"] = {"t8": ["a/b"]}
    with pytest.raises(InputError, match="cannot name a file"):
        measures(cfg, plan, "t8")
    full = {"stats": {"enabled": True, "baseline": {"t8": "run3"}, "tests": ["t"], "corrections": ["holm"],
                      "alpha": 0.05, "n_permutations": 99, "n_bootstrap": 99, "seed": 1}}
    assert settings(full, "t8", COMPARE_KEYS)["baseline"] == ["run3"]  # one name: a list of one
    assert settings(full, "vaswani", COMPARE_KEYS)["baseline"] is None
    full["stats"]["baseline"] = {"t8": ["run3", "vaswani/dph"]}
    assert settings(full, "t8", COMPARE_KEYS)["baseline"] == ["run3", "vaswani/dph"]


def test_a_measure_the_scores_lack_gives_an_empty_table_and_a_note():
    from irrepro.stats.stage import compare_measure, reliability

    s = pd.DataFrame({"collection": "c", "system": ["a", "b", "a", "b"], "topic": ["1", "1", "2", "2"],
                      "measure": "AP", "value": [0.1, 0.2, 0.3, 0.5]})
    r = compare_measure(s, "c", "nDCG@10", {**SETTINGS, "baseline": None})
    assert r.table.empty and r.summary is None and "no nDCG@10 scores in c" in r.notes[0]
    ok = compare_measure(s, "c", "AP", {**SETTINGS, "baseline": None})
    assert len(ok.table) == 6 and ok.systems == ["b", "a"]
    rel = reliability(s, {"AP": ok.table, "nDCG@10": r.table},
                      {"alpha": 0.05, "seed": 1, "baseline": None, "d_study_max_topics": 10,
                       "reliability_target": 0.95, "swap_sizes": [1], "swap_repetitions": 2})
    assert list(rel.reliability.measure) == ["AP", "nDCG@10"] and rel.reliability.clipped.iloc[1] == "no scores"
    assert set(rel.curves) == {"AP"} and set(rel.power.measure) == {"AP"}


# ---------------------------------------------------------------- degenerate statistics

REL_SETTINGS = {"alpha": 0.05, "seed": 1, "baseline": None, "d_study_max_topics": 10, "reliability_target": 0.95,
                "swap_sizes": [2], "swap_repetitions": 2}


def _scores(X, systems=None):
    X = np.asarray(X)
    systems = systems or [f"s{j}" for j in range(X.shape[1])]
    return pd.DataFrame([{"collection": "c", "system": s, "topic": str(t), "measure": "AP", "value": X[t, j]}
                         for t in range(X.shape[0]) for j, s in enumerate(systems)])


def test_gstudy_of_two_identical_systems_is_no_reliability_from_rounding():
    """Two identical systems: σ²_s and σ²_res are 0, and only rounding makes them ±1e-17; E ρ² is undefined (0/0),
    Φ = 0 and no number of topics reaches a target, whatever the rounding (over 50 matrices of six-decimal scores;
    their rounding residues taken as components give E ρ² = 1 and up to 7e31 topics for Φ on many of them)."""
    studies = []
    for seed in range(50):
        x = np.round(np.random.default_rng(seed).random(50), 6)
        X = np.stack([x, x], axis=1)
        studies.append(gstudy(X))
    for seed, g in enumerate(studies):
        assert g["var_system"] == 0 and g["var_residual"] == 0 and g["var_topic"] > 0, seed
        assert np.isnan(g["e_rho2"]) and g["phi"] == 0, seed
        assert topics_needed(g, 0.95) == {"topics_e_rho2": None, "topics_phi": None}
        assert set(g["clipped"].split(",")) <= {"", "var_system", "var_residual"}, (seed, g["clipped"])
    for seed, g in enumerate(studies):
        assert "no variance between systems" in g["note"] and "E ρ² undefined" in g["note"], seed
    # the tolerance is far below real components: scores that differ in the fifth decimal keep theirs
    from irrepro.stats.gstudy import rounding_tolerance

    X[:, 1] = np.round(x + 1e-4 + 1e-5 * np.random.default_rng(0).integers(0, 3, 50), 6)
    g = gstudy(X)
    assert 0 < 100 * rounding_tolerance(X) < min(g["var_system"], g["var_residual"]) and g["note"] == ""


def test_gstudy_of_constant_scores_is_undefined_and_says_so():
    g = gstudy(np.full((10, 3), 0.3))
    assert (g["var_system"], g["var_topic"], g["var_residual"]) == (0, 0, 0)
    assert np.isnan(g["e_rho2"]) and np.isnan(g["phi"])
    assert "every score is 0.3: no variance, E ρ² and Φ undefined" in g["note"]
    # systems constant over the topics but different: a true E ρ² = Φ = 1, one topic suffices
    g = gstudy(np.tile([0.1, 0.2, 0.4], (10, 1)))
    assert g["e_rho2"] == 1 and g["phi"] == 1 and topics_needed(g, 0.95) == {"topics_e_rho2": 1, "topics_phi": 1}
    assert "no residual variance" in g["note"]


def test_reliability_table_has_a_note_column_only_when_a_measure_is_degenerate():
    from irrepro.stats.stage import compare_measure, reliability

    x = np.round(np.random.default_rng(6).random(12), 6)
    s = _scores(np.stack([x, x], axis=1))
    t = compare_measure(s, "c", "AP", {**SETTINGS, "baseline": None}).table
    rel = reliability(s, {"AP": t}, REL_SETTINGS).reliability
    row = rel.iloc[0]
    assert rel.columns[-1] == "note" and "no variance between systems" in row.note
    assert np.isnan(row.e_rho2) and row.phi == 0 and pd.isna(row.topics_phi)
    rng = np.random.default_rng(1)
    s = _scores(rng.random((12, 3)) + [0.0, 0.3, 0.6])
    t = compare_measure(s, "c", "AP", {**SETTINGS, "baseline": None}).table
    rel = reliability(s, {"AP": t}, REL_SETTINGS).reliability
    assert "note" not in rel.columns and rel.columns[-1] == "clipped"


def test_constant_and_identical_differences_have_no_finite_effect_size_and_a_note():
    from irrepro.stats.stage import compare_measure

    x = np.round(np.random.default_rng(3).random(30), 6)
    y = np.round(np.random.default_rng(4).random(30), 6)
    # a: b + 0.1 on every topic (0.1 is not exact in binary: the differences vary at 1e-17); c: b up to rounding
    X = np.stack([x + 0.1, x, (x + 0.1) - 0.1, y], axis=1)
    s = _scores(X, ["a", "b", "c", "d"])
    r = compare_measure(s, "c", "AP", {**SETTINGS, "baseline": None})
    t = r.table.set_index(["system_a", "system_b", "test"])
    const = t.loc[("a", "b")]
    paired_tests = ["t", "wilcoxon", "sign", "randomisation", "bootstrap"]
    assert np.isinf(const.effect_size[paired_tests]).all() and (const.effect_size > 0).all()
    # ES_E2 divides by the residual of all four systems: finite
    assert np.isfinite(const.effect_size["tukey"]) and const.note["tukey"] == ""
    assert const.loc["t", "p_value"] == 0
    assert const.note[paired_tests].str.startswith("the same difference on every topic").all()
    same = t.loc[[k for k in t.index if {k[0], k[1]} == {"b", "c"}]].droplevel([0, 1])
    assert same.effect_size[paired_tests].isna().all() and (same.p_value[paired_tests] == 1).all()
    assert same.note[paired_tests].str.startswith("identical scores on every topic").all()
    # a real pair keeps a finite effect size and no note
    real = t.loc[("a", "d")] if ("a", "d") in t.index else t.loc[("d", "a")]
    assert np.isfinite(real.effect_size).all() and (real.note == "").all()
    from irrepro.stats.stage import summary_markdown

    md = summary_markdown(r)
    assert md.count("Note: ") == 2 and "same difference on every topic" in md and "identical scores" in md
    # non-degenerate: no note column, and the summary is the plain table
    ok = compare_measure(_scores(np.random.default_rng(5).random((20, 3))), "c", "AP",
                         {**SETTINGS, "baseline": None})
    from irrepro.stats.compare import COLUMNS
    assert list(ok.table.columns) == COLUMNS and "note" not in ok.table
    from irrepro.core.io import to_markdown
    assert summary_markdown(ok) == to_markdown(ok.summary)


# ---------------------------------------------------------------- several baselines, baselines of other collections

BL_SETTINGS = {**SETTINGS, "corrections": ["holm", "bh", "bonferroni"], "n_permutations": 199, "n_bootstrap": 199}


def _population(T=40, seed=11):
    """A topic × system matrix with known order: ``good`` = ``base`` + 0.1, ``bad`` = ``base`` − 0.1 (plus noise),
    three noisy systems around ``base``."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.2, 0.6, T)
    cols = {"base": base, "good": base + 0.1 + rng.normal(0, 0.03, T), "bad": base - 0.1 + rng.normal(0, 0.03, T)}
    cols.update({f"n{k}": base + rng.normal(0, 0.05, T) for k in range(3)})
    return pd.DataFrame(cols, index=[str(t) for t in range(1, T + 1)])


def test_two_baselines_give_two_signed_families():
    mat = _population()
    t = compare(mat, **BL_SETTINGS, baseline=["base", "n1"])
    assert list(dict.fromkeys(t.baseline)) == ["base", "n1"]
    for b, fam in t.groupby("baseline"):
        assert (fam.system_b == b).all() and set(fam.system_a) == set(mat.columns) - {b}
        # one row per other system under every paired test × correction and tukey × hsd
        assert len(fam) == (mat.shape[1] - 1) * (5 * 3 + 1)
        # delta = system − baseline, signed
        d = fam.drop_duplicates("system_a").set_index("system_a").delta
        np.testing.assert_allclose(d, (mat[d.index].mean() - mat[b].mean()).to_numpy(), atol=1e-12)
    good, bad = t[t.system_a == "good"], t[t.system_a == "bad"]
    assert (good.delta > 0.05).all() and (bad.delta < -0.05).all()
    assert (good[good.test == "t"].ci_low > 0).all() and (bad[bad.test == "t"].ci_high < 0).all()
    assert (good[good.test == "t"].effect_size > 0).all() and (bad[bad.test == "t"].effect_size < 0).all()
    # the two baselines compared both ways round, each in its own family
    x = t[(t.system_a == "n1") & (t.baseline == "base")].delta.iloc[0]
    y = t[(t.system_a == "base") & (t.baseline == "n1")].delta.iloc[0]
    assert x == pytest.approx(-y) and x != 0
    # a family does not depend on the other baselines: its resamples have their own seed
    alone = compare(mat, **BL_SETTINGS, baseline="base")
    cols = ["system_a", "test", "correction", "p_value", "p_adjusted", "ci_low", "ci_high"]
    pd.testing.assert_frame_equal(alone[cols], t[t.baseline == "base"][cols].reset_index(drop=True))
    # without a baseline: all pairs, the baseline column empty
    allp = compare(mat, **{**BL_SETTINGS, "tests": ["t"]})
    assert (allp.baseline == "").all() and len(allp) == 15 * 3


def test_adjusted_p_of_each_correction_is_multipletests_over_one_baseline_family(multipletests):
    mat = _population(T=25, seed=3)
    t = compare(mat, **BL_SETTINGS, baseline=["base", "good"])
    method = {"holm": "holm", "bh": "fdr_bh", "bonferroni": "bonferroni"}
    for (b, test, corr), fam in t[t.test != "tukey"].groupby(["baseline", "test", "correction"]):
        np.testing.assert_allclose(fam.p_adjusted, multipletests(fam.p_value, method=method[corr])[1], atol=1e-12)
        if test == "t":
            ref = [stats.ttest_rel(mat[a], mat[b]).pvalue for a in fam.system_a]
            np.testing.assert_allclose(fam.p_value, ref, atol=1e-12)
    # the check can fail: the correction over both families together gives other adjusted p-values
    both = t[(t.test == "t") & (t.correction == "holm")]
    assert np.abs(both.p_adjusted.to_numpy() - multipletests(both.p_value, method="holm")[1]).max() > 1e-6


def test_summary_per_baseline_has_delta_interval_and_every_correction():
    from irrepro.stats.stage import compare_measure, summary_markdown

    mat = _population(T=30, seed=5)
    scores = _scores(mat.to_numpy(), list(mat.columns))
    r = compare_measure(scores, "c", "AP", {**BL_SETTINGS, "baseline": ["base", "n0"]})
    sm = r.summary
    assert list(dict.fromkeys(sm.baseline)) == ["base", "n0"]
    for test in ("t", "wilcoxon", "sign", "randomisation", "bootstrap"):
        for c in ("p", "holm", "bh", "bonferroni"):
            assert f"{test} {c}" in sm.columns
    assert "tukey hsd" in sm.columns
    row = sm[(sm.baseline == "base") & (sm.system == "good")].iloc[0]
    ref = stats.ttest_rel(mat["good"], mat["base"])
    ci = ref.confidence_interval(0.95)
    assert row.delta == pytest.approx(mat["good"].mean() - mat["base"].mean())
    assert (row.ci_low, row.ci_high) == (pytest.approx(ci.low), pytest.approx(ci.high))
    d = mat["good"] - mat["base"]
    assert row.effect_size == pytest.approx(d.mean() / d.std(ddof=1))
    fam = r.table[(r.table.baseline == "base") & (r.table.system_a == "good") & (r.table.test == "t")]
    for c in ("holm", "bh", "bonferroni"):
        p = fam[fam.correction == c].p_adjusted.iloc[0]
        assert row[f"t {c}"] == f"{p:.3g}▲"  # significantly better than the baseline
    bad = sm[(sm.baseline == "base") & (sm.system == "bad")].iloc[0]
    assert bad.delta < 0 and bad["t holm"].endswith("▼")
    own = sm[(sm.baseline == "base") & (sm.system == "base")].iloc[0]
    assert own.delta == "baseline" and own["t holm"] == "" and own["mean"] == pytest.approx(mat["base"].mean())
    md = summary_markdown(r)
    assert md.count("### Against baseline") == 2 and "| t p | t holm | t bh | t bonferroni |" in md


def test_an_imported_system_is_compared_with_a_population_baseline():
    from irrepro.stats.stage import compare_measure, join_baselines, reliability

    pop = _population(T=30, seed=8)
    vas = _scores(pop.to_numpy(), list(pop.columns)).assign(collection="vaswani")
    vas["topic"] = (vas["topic"].astype(int) + 1).astype(str)  # topics "1".."30"
    # my runs: topics 1..20 of the same collection; mine_good is better than the population's base
    topics = [str(t) for t in range(1, 21)]
    b = pop["base"].to_numpy()[:20]
    mine = pd.DataFrame([{"collection": "mine", "system": s, "topic": t, "measure": "AP", "value": v}
                         for s, vals in (("mine_good", b + 0.08), ("mine_same", b + np.random.default_rng(1).normal(
                             0, 0.01, 20))) for t, v in zip(topics, vals)])
    joined = join_baselines(mine, "mine", ["vaswani/base"], {"vaswani": vas})
    assert set(joined.system) == {"mine_good", "mine_same", "vaswani/base"}
    assert set(joined[joined.system == "vaswani/base"].topic) == set(topics)  # only the import's topics
    r = compare_measure(joined, "mine", "AP", {**BL_SETTINGS, "baseline": ["vaswani/base"]})
    t = r.table
    assert (t.system_b == "vaswani/base").all() and (t.baseline == "vaswani/base").all()
    good = t[(t.system_a == "mine_good") & (t.test == "t") & (t.correction == "holm")].iloc[0]
    assert good.delta == pytest.approx(0.08) and good.significant and good.n_topics == 20
    rel = reliability(joined, {"AP": t}, {**REL_SETTINGS, "baseline": ["vaswani/base"]})
    assert rel.reliability.n_systems.iloc[0] == 3
    # a name whose head is no other id is a system of the collection itself
    assert join_baselines(mine, "mine", ["mine_good"], {}) is mine
    with pytest.raises(InputError, match=r"config key stats\.baseline\.mine: 'vaswani/bm99': vaswani has no "
                                         r"system 'bm99'"):
        join_baselines(mine, "mine", ["vaswani/bm99"], {"vaswani": vas})
    far = vas.assign(topic="x" + vas["topic"])
    with pytest.raises(InputError, match=r"stats\.baseline\.mine: 'vaswani/base' scored none of mine's topics"):
        join_baselines(mine, "mine", ["vaswani/base"], {"vaswani": far})
    # a baseline a matrix import turns out not to have: named by its config key at run time
    with pytest.raises(InputError, match=r"config key stats\.baseline\.mine: 'run9'"):
        compare_measure(mine, "mine", "AP", {**BL_SETTINGS, "baseline": ["run9"]})


def test_baseline_config_errors_name_the_key(tmp_path):
    from irrepro.stats.plan import baseline_sources, check

    check(*_plan(baseline={"vaswani": ["dph", "bm25"], "t8": ["vaswani/bm25", "run3"]}))  # fine
    for cfg, msg in [
            ({"baseline": {"vaswani": ["dph", "bm26"]}},
             r"^config key stats\.baseline\.vaswani\[1\]: 'bm26' is not a system of the population of vaswani"),
            ({"baseline": {"t8": ["vaswani/bm26"]}},
             r"^config key stats\.baseline\.t8\[0\]: 'bm26' is not a system of the population of vaswani"),
            ({"baseline": {"t8": "vaswani/bm25"}, "measures": {"t8": ["AP"]}}, None),
            ({"baseline": {"vaswani": ["t8/run3"]}, "measures": {"vaswani": ["P@10"]}},
             r"^config key stats\.baseline\.vaswani\[0\]: 't8' has no 'P@10' scores"),
            ({"baseline": {"vaswan": ["dph"]}}, r"^config key stats\.baseline\.vaswan: 'vaswan' is neither")]:
        if msg is None:
            check(*_plan(**cfg))
            continue
        with pytest.raises(InputError, match=msg):
            check(*_plan(**cfg))
    cfg, plan = _plan(baseline={"t8": ["vaswani/bm25", "vaswani/dph", "run3"]})
    assert baseline_sources(cfg, plan, "t8") == ["vaswani"] and baseline_sources(cfg, plan, "vaswani") == []
    # a runs import's systems are its run files, known before the run
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ("mine1.run", "mine2.run"):
        (runs / name).write_text("1 Q0 d1 1 1.0 x\n")
    cfg, plan = _plan(baseline={"t8": ["mine3"]})
    cfg["imports"] = {"t8": {"type": "runs", "runs": str(runs)}}
    with pytest.raises(InputError, match=r"stats\.baseline\.t8\[0\]: 'mine3' is not a run of imports\.t8\.runs "
                                         r"\(\['mine1', 'mine2'\]\)"):
        check(cfg, plan)
    cfg["stats"]["baseline"] = {"t8": ["mine2"]}
    check(cfg, plan)


def test_baseline_schema_takes_a_name_or_a_list():
    from irrepro.schema import validate_config

    schemas = Path(__file__).resolve().parents[1] / "workflow" / "schemas"
    for value in ("dph", ["dph", "vaswani/bm25"]):
        validate_config({"version": "t", "stats": {"baseline": {"vaswani": value}}}, schemas)
    for value in ([], ["dph", "dph"], 3):
        with pytest.raises(InputError, match=r"^config key stats\.baseline\.vaswani: .* is not"):
            validate_config({"version": "t", "stats": {"baseline": {"vaswani": value}}}, schemas)


def test_effect_heatmap_shows_signed_differences_and_marks_significance():
    import matplotlib.pyplot as plt

    from irrepro.stats.plots import effect_heatmap

    mat = _population(T=30, seed=2)
    t = compare(mat, **{**BL_SETTINGS, "tests": ["t"], "corrections": ["holm", "bh"]}, baseline=["base", "n2"])
    systems = list(ranked(mat).columns)
    fig = effect_heatmap(t, systems, "c", "AP", alpha=0.05)
    panels = [a for a in fig.axes if a.images]
    assert [a.get_title() for a in panels] == ["against base", "against n2"]
    ax = panels[0]
    im = ax.images[0]
    lo, hi = im.get_clim()
    assert lo == pytest.approx(-hi) and hi > 0  # diverging, centred at 0
    rows = [s for s in systems if s != "base"]
    M = np.asarray(im.get_array())
    fam = t[t.baseline == "base"]
    for j, corr in enumerate(["holm", "bh"]):
        h = fam[fam.correction == corr].set_index("system_a").loc[rows]
        np.testing.assert_allclose(M[:, j], h.delta, atol=1e-12)
    assert M[rows.index("good"), 0] > 0 and M[rows.index("bad"), 0] < 0
    marked = {(int(round(y)), int(round(x))) for x, y in ax.collections[0].get_offsets()}
    want = {(rows.index(s), j) for j, corr in enumerate(["holm", "bh"])
            for s, sig in fam[fam.correction == corr][["system_a", "significant"]].itertuples(index=False) if sig}
    assert marked == want and want
    plt.close(fig)
    # all pairs: row − column, antisymmetric, marks on both sides
    allp = compare(mat, **{**BL_SETTINGS, "tests": ["t"], "corrections": ["holm"]})
    fig = effect_heatmap(allp, systems, "c", "AP", alpha=0.05)
    ax = [a for a in fig.axes if a.images][0]
    M = np.asarray(ax.images[0].get_array())
    i, j = systems.index("good"), systems.index("bad")
    assert M[i, j] == pytest.approx(mat["good"].mean() - mat["bad"].mean()) and M[j, i] == pytest.approx(-M[i, j])
    marked = {(int(round(y)), int(round(x))) for x, y in ax.collections[0].get_offsets()}
    assert (i, j) in marked and (j, i) in marked
    plt.close(fig)


def _null_pairs(T, P, seed):
    """P null pairs on T topics, IR-like: per topic a difficulty shared by both systems, scores in [0, 1] drawn the
    same way for both (exchangeable, so every test's null holds), with many ties at 0."""
    rng = np.random.default_rng(seed)
    difficulty = rng.beta(0.7, 1.5, (T, P))
    a = np.clip(difficulty + rng.normal(0, 0.12, (T, P)), 0, 1)
    b = np.clip(difficulty + rng.normal(0, 0.12, (T, P)), 0, 1)
    return a - b


@pytest.mark.parametrize("T", [10, 25])
def test_every_paired_test_holds_its_size_at_the_default_resamples(T):
    """Type-I error at alpha = 0.05 on 4,000 null pairs (Monte-Carlo s.e. 0.0034): every test at most 0.05 + 3 s.e.,
    at the defaults users get (1,000 resamples). The unstudentised bootstrap statistic (|m* - mean| >= |mean|, the
    plug-in spread) rejects 0.094 and 0.076 of these null pairs at 10 and 25 topics: it fails this bound."""
    D = _null_pairs(T, 4000, T)
    bound = 0.05 + 3 * np.sqrt(0.05 * 0.95 / D.shape[1])
    rng = np.random.default_rng(0)
    sizes = {"t": paired.paired_t(D), "wilcoxon": paired.wilcoxon(D), "sign": paired.sign(D),
             "randomisation": paired.randomisation(D, 1000, rng), "bootstrap": paired.bootstrap(D, 1000, rng, 0.05)[0]}
    sizes = {k: float((p < 0.05).mean()) for k, p in sizes.items()}
    assert all(v <= bound for v in sizes.values()), sizes


@pytest.mark.parametrize("T", [10, 25])
def test_bootstrap_interval_covers_at_its_level_and_inverts_the_test(T):
    """The symmetric bootstrap-t interval of the mean difference covers the true difference (0 here) within [0.93,
    0.98] on 4,000 pairs, and holds 0 exactly when the test does not reject (up to the p-value's 1 / (B + 1))."""
    D = _null_pairs(T, 4000, 100 + T)
    p, lo, hi = paired.bootstrap(D, 1000, np.random.default_rng(2), 0.05)
    covered = (lo <= 0) & (0 <= hi)
    assert 0.93 <= covered.mean() <= 0.98, covered.mean()
    clear = np.abs(p - 0.05) > 2 / 1001
    assert (covered[clear] == (p[clear] >= 0.05)).all()
    shifted = D + 0.5 * D.std(axis=0, ddof=1)  # a true difference of half an sd: rejected far more often
    p2, lo2, hi2 = paired.bootstrap(shifted, 1000, np.random.default_rng(2), 0.05)
    assert (p2 < 0.05).mean() > 0.2 > (p < 0.05).mean()
    assert np.allclose(hi2 - lo2, hi - lo)  # a shift moves the interval, its width is the differences' spread


def test_holm_holds_the_family_wise_error_for_every_test():
    """Holm over the 45 pairs of 10 exchangeable systems on 25 topics, 300 families: the family-wise error of every
    test at most 0.065 (0.05 + 3 Monte-Carlo s.e. of 0.0126)."""
    rng = np.random.default_rng(7)
    F, S, T = 300, 10, 25
    difficulty = rng.beta(0.7, 1.5, (F, T, 1))
    X = np.clip(difficulty + rng.normal(0, 0.12, (F, T, S)), 0, 1)
    a, b = np.triu_indices(S, 1)
    D = (X[:, :, a] - X[:, :, b]).transpose(1, 0, 2).reshape(T, -1)  # T x (F * 45), family by family
    tests = {"t": paired.paired_t(D), "wilcoxon": paired.wilcoxon(D), "sign": paired.sign(D),
             "randomisation": paired.randomisation(D, 1000, rng), "bootstrap": paired.bootstrap(D, 1000, rng, 0.05)[0]}
    for name, p in tests.items():
        fwer = np.mean([(paired.holm(f) < 0.05).any() for f in p.reshape(F, -1)])
        assert fwer <= 0.065, (name, fwer)


def test_a_resampling_test_that_can_reject_nothing_says_why_with_its_real_floor():
    """Holm's first pair is significant when m p < alpha, so a test whose smallest p-value equals alpha / m rejects
    nothing (the boundary counts); a sign-flip test on T topics never gives p below 2^(1 - T), so on 10 topics over
    496 pairs no number of resamples helps, and the note says so instead of advising more resamples."""
    assert paired.p_floor("randomisation", 1000, 10) == 2.0 ** -9 and paired.p_floor("bootstrap", 1000, 10) == 1 / 1001
    assert paired.p_floor("t", 1000, 10) == 0.0
    # the boundary: R = 999 gives p >= 0.001 = alpha / 50
    assert paired.unattainable("bootstrap", "holm", 50, 30, 999, 0.05).startswith("no pair can be significant")
    assert paired.unattainable("bootstrap", "holm", 49, 30, 999, 0.05) == ""
    few = paired.unattainable("randomisation", "holm", 496, 10, 50_000, 0.05)
    assert "no number of resamples helps" in few and "15 topics or more" in few
    assert paired.unattainable("randomisation", "holm", 20, 10, 1000, 0.05) == ""  # 0.00195 < 0.0025
    many = paired.unattainable("randomisation", "bonferroni", 496, 93, 1000, 0.05)
    assert "with 9920 resamples or more (stats.n_permutations)" in many
    assert paired.unattainable("randomisation", "bh", 496, 10, 1000, 0.05) == ""  # BH's threshold grows with k
    # what it predicts happens: on 10 clearly separated systems over 10 topics, no randomisation pair survives Holm
    rng = np.random.default_rng(0)
    X = np.linspace(0.1, 0.9, 10)[None, :] + rng.normal(0, 0.01, (10, 10))
    a, b = np.triu_indices(10, 1)
    D = X[:, a] - X[:, b]
    p = paired.randomisation(D, 5000, rng)
    assert (paired.holm(p) >= 0.05).all() and (paired.holm(paired.paired_t(D)) < 0.05).all()
    assert paired.unattainable("randomisation", "holm", D.shape[1], 10, 5000, 0.05)  # 45 pairs: 2^-9 > 0.0011


def test_the_stats_summary_says_which_test_can_reject_nothing():
    from irrepro.core.scores import from_matrix
    from irrepro.stats.stage import compare_measure, summary_markdown

    rng = np.random.default_rng(1)
    mat = pd.DataFrame(np.linspace(0.1, 0.9, 8)[None, :] + rng.normal(0, 0.05, (12, 8)),
                       index=[f"q{i}" for i in range(12)], columns=[f"s{i}" for i in range(8)])
    s = {"tests": ["t", "randomisation", "bootstrap"], "corrections": ["holm"], "alpha": 0.05, "n_permutations": 199,
         "n_bootstrap": 1999, "seed": 0, "baseline": None}
    c = compare_measure(from_matrix(mat, "c", "AP"), "c", "AP", s)
    text = summary_markdown(c)
    assert "Note: no pair can be significant: randomisation's smallest p-value on 12 topics with 199 resamples" in text
    assert "bootstrap's" not in text  # 1 / 2000 < 0.05 / 28
    assert len(c.unattainable) == 1 and c.unattainable[0] in c.notes


def test_a_mostly_tied_pair_has_no_bootstrap_interval_and_says_why():
    """Two of 43 topics differ: 13% of the resamples draw only tied topics and have no spread, so the bootstrap-t
    quantile is infinite: no interval (NaN) and a note naming the reason, once, in the summary; its p-value counts
    those resamples as extreme (conservative). Three differing topics leave 4.4% without spread: an interval."""
    from irrepro.stats.compare import compare, degenerate_notes

    D = np.zeros((43, 2))
    D[:2, 0] = [0.1, 0.2]
    D[:3, 1] = [0.1, 0.2, -0.05]
    p, lo, hi = paired.bootstrap(D, 999, np.random.default_rng(0), 0.05)
    assert np.isnan([lo[0], hi[0]]).all() and np.isfinite([lo[1], hi[1]]).all() and lo[1] < 0 < hi[1]
    assert p[0] >= (41 / 43) ** 43  # at least the share of resamples without spread is "as extreme"
    rng = np.random.default_rng(0)
    mat = pd.DataFrame(rng.uniform(0, 1, (43, 3)), columns=list("abc"))
    mat["d"] = mat["a"]
    mat.loc[:1, "d"] += [0.1, 0.2]
    t = compare(mat, tests=["t", "bootstrap"], corrections=["holm"], alpha=0.05, n_permutations=99,
                n_bootstrap=999, seed=0)
    row = t[(t.test == "bootstrap") & (t.system_a == "d") & (t.system_b == "a")].iloc[0]
    assert np.isnan(row.ci_low) and row.note == paired.NO_INTERVAL
    assert t[(t.test == "t") & (t.system_a == "d") & (t.system_b == "a")].iloc[0].note == ""
    assert degenerate_notes(t) == [f"1 pair(s) (bootstrap; e.g. d vs a): {paired.NO_INTERVAL}"]
