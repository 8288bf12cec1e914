"""The judge audit (irrepro.audit): rank correlations against scipy and the exact τ_AP, decisions against scipy's
paired t-test and statsmodels' Holm, the judge as a ranker, and inputs that must turn each result false."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from irrepro.audit.decisions import decision_audit, pair_decisions
from irrepro.audit.rankings import kendall_b_rows, ranking_audit, tau_ap_rows
from irrepro.audit.rerank import condensed, expected_grade, judge_reranked
from irrepro.errors import InputError
from irrepro.stats.rankcorr import tau_ap

SETTINGS = dict(tests=["t"], corrections=["holm"], alpha=0.05, n_permutations=100, n_bootstrap=100, seed=0)


def test_kendall_b_rows_is_scipys_tau_b_with_ties():
    rng = np.random.default_rng(0)
    H = rng.integers(0, 4, (50, 7)).astype(float)  # many ties
    L = rng.integers(0, 4, (50, 7)).astype(float)
    H[0] = 1.0  # a constant row: NaN, as scipy gives
    got = kendall_b_rows(H, L)
    want = [stats.kendalltau(h, lab, variant="b").statistic for h, lab in zip(H, L)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert np.isnan(got[0])


def test_tau_ap_rows_is_tau_ap_with_and_without_ties():
    rng = np.random.default_rng(1)
    T = rng.normal(size=(40, 9))
    E = rng.normal(size=(40, 9))
    E[::3] = np.round(E[::3])  # ties in the estimate on every third row
    T[1::4] = np.round(T[1::4])  # and in the truth on others
    np.testing.assert_allclose(tau_ap_rows(T, E), [tau_ap(t, e) for t, e in zip(T, E)], rtol=0, atol=1e-12)
    assert tau_ap_rows(T[:1], T[:1])[0] == pytest.approx(1.0) and tau_ap_rows(T[:1], -T[:1])[0] == pytest.approx(-1)


def _population(T=30, S=6, seed=0, noise=0.05):
    rng = np.random.default_rng(seed)
    mu = np.linspace(0.2, 0.6, S)
    return mu + rng.normal(0, 0.1, (T, 1)) + rng.normal(0, noise, (T, S))


def test_labels_equal_to_the_qrels_agree_on_everything():
    H = _population()
    r = ranking_audit(H, H.copy(), tops=(3, 5, 10), n_boot=200, seed=1)
    assert list(r.top) == ["all", "3", "5"]  # a top as large as the population is the population
    assert (r.tau_b == 1).all() and (r.tau_ap == 1).all() and (r.high == 1).all()
    assert (r.pairs_known == r.pairs).all() and (r.low == 1).all()  # systems 0.08 apart on 30 topics: all known
    frame = pd.DataFrame(H, columns=[f"s{i}" for i in range(H.shape[1])])
    d = decision_audit(pair_decisions(frame, frame.copy(), **SETTINGS))
    assert d.loc[0, "pairs"] == 15 and d.loc[0, "both_same"] + d.loc[0, "both_none"] == 15
    assert d.loc[0, ["humans_only", "labels_only", "opposite"]].sum() == 0 and d.loc[0, "missed"] == 0


def test_swapping_two_systems_scores_flips_exactly_their_decision():
    """Labels that give system a's documents b's grades and b's a's: by labels a and b trade places. a and b are
    both far better than the rest and significantly apart, so their pair turns 'opposite' and no other pair moves."""
    H = _population(T=40, S=5, noise=0.02)
    H[:, 3] += 0.5
    H[:, 4] += 0.6
    L = H.copy()
    L[:, [3, 4]] = H[:, [4, 3]]
    cols = list("vwxab")
    d = pair_decisions(pd.DataFrame(H, columns=cols), pd.DataFrame(L, columns=cols), **SETTINGS)
    flipped = d[d.kind != "both_same"]
    assert flipped[["x", "y", "kind", "humans", "labels"]].values.tolist() == [["a", "b", "opposite", -1, 1]]
    r = ranking_audit(H, L, tops=(2,), n_boot=100)
    assert r.set_index("top").loc["2", "tau_b"] == -1 and r.set_index("top").loc["all", "tau_b"] == pytest.approx(0.8)


def test_decision_counts_are_scipys_t_test_with_statsmodels_holm(multipletests):
    rng = np.random.default_rng(3)
    H = _population(T=25, S=7, seed=3, noise=0.08)
    L = H + rng.normal(0, 0.15, H.shape) + np.linspace(0, 0.08, 7)  # noisy, lenient to the later systems
    cols = [f"s{i}" for i in range(7)]
    got = decision_audit(pair_decisions(pd.DataFrame(H, columns=cols), pd.DataFrame(L, columns=cols), **SETTINGS))

    def decisions(X):
        i, j = np.triu_indices(7, 1)
        p = np.array([stats.ttest_rel(X[:, a], X[:, b]).pvalue for a, b in zip(i, j)])
        sig = multipletests(p, alpha=0.05, method="holm")[0]
        return np.where(sig, np.sign(X[:, i].mean(0) - X[:, j].mean(0)), 0)
    h, lab = decisions(H), decisions(L)
    want = {"both_same": int(((h != 0) & (h == lab)).sum()), "both_none": int(((h == 0) & (lab == 0)).sum()),
            "humans_only": int(((h != 0) & (lab == 0)).sum()), "labels_only": int(((h == 0) & (lab != 0)).sum()),
            "opposite": int(((h != 0) & (lab != 0) & (h != lab)).sum())}
    assert got.iloc[0][list(want)].to_dict() == want
    assert 0 < want["both_same"] < 21 and want["humans_only"] + want["labels_only"] > 0  # not a trivial case


def test_ranking_interval_holds_its_level_at_two_topic_set_sizes():
    """The interval of τ_b against the τ_b of the population means (systems and labels fixed, topics drawn), where
    the labels reorder close systems: a 90% interval over 200 topic samples of 25 and of 60 topics covers at least
    90% less 2 binomial standard errors (0.021 each), and is not the whole range. The percentile bootstrap of the
    sample τ_b, computed on the same samples, does not hold the level at 25 topics (the reason it is not used)."""
    rng = np.random.default_rng(7)
    S = 8
    mu_h = np.linspace(0.30, 0.44, S)
    mu_l = mu_h + np.array([0.00, 0.03, -0.02, 0.01, 0.02, -0.03, 0.0, 0.01])
    truth = stats.kendalltau(mu_h, mu_l).statistic
    for T in (25, 60):
        hits, widths, pct = [], [], []
        for rep in range(200):
            topic = rng.normal(0, 0.15, (T, 1))
            H = mu_h + topic + rng.normal(0, 0.06, (T, S))
            L = mu_l + topic + rng.normal(0, 0.06, (T, S))
            r = ranking_audit(H, L, tops=(), n_boot=300, seed=rep, alpha=0.10).iloc[0]
            hits.append(r.low <= truth <= r.high)
            widths.append(r.high - r.low)
            W = np.random.default_rng(rep).multinomial(T, np.full(T, 1 / T), size=300) / T
            lo, hi = np.quantile(kendall_b_rows(W @ H, W @ L), [0.05, 0.95])
            pct.append(lo <= truth <= hi)
        assert np.mean(hits) >= 0.9 - 2 * 0.021, (T, np.mean(hits), truth)
        assert np.mean(widths) < (1.6 if T == 25 else 1.1), (T, np.mean(widths))
        if T == 25:
            assert np.mean(pct) < 0.85, np.mean(pct)


def test_judge_reranked_orders_by_expected_grade_and_keeps_ties_in_run_order():
    run = pd.DataFrame({"query_id": ["1"] * 4 + ["2"] * 2, "doc_id": list("abcdxy"), "rank": [1, 2, 3, 4, 1, 2],
                        "score": [4, 3, 2, 1, 2, 1]})
    labels = pd.DataFrame({"query_id": ["1"] * 4 + ["2"] * 2, "doc_id": list("abcdxy"),
                           "p_0": [1, 0.5, 0.0, 0.5, 0.2, 0.2], "p_1": [0, 0.5, 1.0, 0.5, 0.8, 0.8]})
    g = expected_grade(labels)
    r = judge_reranked(run, g, k=3)  # d is below the top 3: left out
    assert r[r.query_id == "1"].doc_id.tolist() == ["c", "b", "a"] and r[r.query_id == "2"].doc_id.tolist() == ["x", "y"]
    assert r.groupby("query_id")["rank"].apply(list).tolist() == [[1, 2, 3], [1, 2]]
    with pytest.raises(InputError, match="1 ranked pairs have no label"):
        judge_reranked(run, g.drop(("2", "y")), k=3)


def test_condensed_keeps_the_judged_documents_of_each_query_in_run_order():
    run = pd.DataFrame({"query_id": ["1", "1", "1", "2"], "doc_id": ["a", "b", "c", "a"], "rank": [1, 2, 3, 1]})
    qrels = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["c", "a", "b"], "relevance": [1, 0, 1]})
    c = condensed(run, qrels)
    assert c[["query_id", "doc_id", "rank"]].values.tolist() == [["1", "a", 1], ["1", "c", 2]]


# ---------------------------------------------------------------- the plan of labels.audit (config/config.yaml)

def _config():
    import yaml

    from irrepro.schema import validate_config
    from conftest import REPO

    c = yaml.safe_load((REPO / "config/config.yaml").read_text())
    validate_config(c, REPO / "workflow/schemas")
    return c


def test_the_default_audit_covers_dl19_file_labels_and_vaswani_minilm():
    from irrepro.plan import resolve

    c = _config()
    plan = resolve(c, check_ids=False)
    au = plan.stages["audit"]
    dl, va = au["collections"]["dl19-pool"], au["collections"]["vaswani"]
    assert dl["labelers"] == ["minilm", "flant5-large", "llama3-70b"] and dl["judged_only"]
    assert va["labelers"] == ["minilm", "smollm2"] and not va["judged_only"] and va["sample"] == {"smollm2": 10}
    assert va["systems"] == plan.systems["vaswani"] and dl["systems"] == plan.systems["dl19-pool"]
    assert sorted(s for s, f in va["same_model"]["minilm"].items() if f) == [
        "bm25_k1-0.9_b-0.4+minilm-l6-v2-rerank_k-100", "minilm-l6-v2"]
    assert not any(dl["same_model"]["flant5-large"].values())
    # the decisions use the stats stage's tests and corrections unless labels.audit names its own
    assert au["settings"]["tests"] == c["stats"]["tests"] and au["settings"]["corrections"] == c["stats"]["corrections"]
    c["labels"]["audit"]["tests"] = ["t"]
    assert resolve(c, check_ids=False).stages["audit"]["settings"]["tests"] == ["t"]


@pytest.mark.parametrize("edit, match", [
    (lambda c: c["labels"]["audit"].update(collections=["nowhere"]), r"labels.audit.collections\[0\]: 'nowhere'"),
    (lambda c: c["labels"]["audit"].update(measures=["DCG@20"]), r"labels.audit.measures\[0\].*depth is 10"),
    (lambda c: c["labels"]["audit"].update(labelers=["gpt"]), r"labels.audit.labelers\[0\]: 'gpt' is not a labeler"),
    (lambda c: c["labels"]["audit"].update(labelers=["flant5-large"]),
     r"labels.audit.collections\[1\]: none of labels.audit.labelers labels vaswani"),
])
def test_audit_config_errors_name_the_key(edit, match):
    from irrepro.plan import resolve

    c = _config()
    edit(c)
    with pytest.raises(InputError, match=match):
        resolve(c, check_ids=False)


def test_a_resampling_test_that_cannot_pass_holm_says_so():
    """199 permutations give p >= 1/200 = 0.005; Holm's first threshold over 21 pairs is 0.05 / 21 = 0.0024: no pair
    can be significant, and the row says why. With 999 (p >= 0.001) one can; the t-test is never flagged."""
    H = _population(T=30, S=7, noise=0.02)
    frame = pd.DataFrame(H, columns=[f"s{i}" for i in range(7)])
    few = {**SETTINGS, "tests": ["t", "randomisation"], "n_permutations": 199}
    d = decision_audit(pair_decisions(frame, frame.copy(), **few), few, topics=30).set_index("test")
    assert d.loc["randomisation", "both_same"] == 0 and d.loc["t", "both_same"] > 0
    assert d.loc["randomisation", "note"].startswith(
        "no pair can be significant: randomisation's smallest p-value on 30 topics with 199 resamples, 0.005, is "
        "not below holm's first threshold alpha / 21 pairs = 0.0024; with 420 resamples or more")
    assert d.loc["t", "note"] == ""
    many = {**few, "n_permutations": 999}
    d = decision_audit(pair_decisions(frame, frame.copy(), **many), many, topics=30).set_index("test")
    assert d.loc["randomisation", "note"] == "" and d.loc["randomisation", "both_same"] > 0


def test_spread_reads_what_makes_labels_reject_more_often():
    """Label-based differences with the human means but half their per-topic spread: sd ratio 0.5, mean ratio 1,
    the median |t| twice the humans'."""
    from irrepro.audit.decisions import spread

    H = _population(T=40, S=6, noise=0.08)
    L = H.mean(axis=1, keepdims=True) + 0.5 * (H - H.mean(axis=1, keepdims=True)) + 0.5 * H.mean(axis=0)
    s = spread(H, L)
    assert s["sd_ratio"] == pytest.approx(0.5) and s["mean_ratio"] == pytest.approx(1.0)
    assert s["t_labels"] == pytest.approx(2 * s["t_humans"])


# ------------------------------------------------------------------ the audit's label job after self-preference's

def _jobs_for(tmp_path, config, target):
    """``{rule: [wildcard strings]}`` of the jobs a dry run of ``target`` needs in an empty folder."""
    from conftest import dry_run_jobs, snakemake

    jobs: dict = {}
    for rule, wildcards in dry_run_jobs(snakemake(tmp_path, "-n", "--cores", "1", target, config=config).stdout):
        jobs.setdefault(rule, []).append(wildcards)
    return jobs


def test_the_audits_label_job_waits_for_the_self_preference_label_job(tmp_path):
    """Where self-preference labels the same (collection, labeler), the audit's label job needs that job's labels
    (so it finds the shared pairs in the label cache instead of labelling them side by side); where it does not
    (the wrong input: the config without labels.self_preference), the audit's label job does not need it."""
    import yaml

    from conftest import TEST_CONFIG

    target = "results/test/labels/audit/vaswani/minilm/labels.tsv"
    jobs = _jobs_for(tmp_path / "with", TEST_CONFIG, target)
    assert "collection=vaswani, labeler=minilm" in jobs.get("labels_selfpref_labels", []), jobs
    config = yaml.safe_load(TEST_CONFIG.read_text())
    del config["labels"]["self_preference"]
    without = tmp_path / "without.yaml"
    without.write_text(yaml.safe_dump(config))
    jobs = _jobs_for(tmp_path / "without", without, target)
    assert "labels_audit_labels" in jobs and "labels_selfpref_labels" not in jobs, jobs


def test_dry_run_jobs_reads_each_jobs_rule_and_wildcards():
    from conftest import dry_run_jobs

    out = ("rule a:\n    input: x\n    wildcards: collection=vaswani, labeler=minilm\n"
           "localrule b:\n    output: y\n\nrule a:\n    wildcards: collection=cranfield\n")
    assert dry_run_jobs(out) == [["a", "collection=vaswani, labeler=minilm"], ["b", ""], ["a", "collection=cranfield"]]
    assert dry_run_jobs("Nothing to be done.\n    wildcards: x=1\n") == []  # a wildcards line of no job: no job
