"""ci.systems in the own-queries mode (N topics, n of them judged, no truth), differences from a baseline with a
correction over the systems compared, the label bias per system with the self-preference flag, and the planning
table of judged queries needed to detect a difference."""
import copy
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from irrepro.core.evaluation import evaluate_run
from irrepro.errors import InputError
from irrepro.papers.ci import finite, sample_size, systems
from irrepro.papers.ci.plan import resolve_systems

from test_ci_systems import _toy

Q = 100


def _own(runs, qrels, labels, judged, **kw):
    """evaluate_systems in the own-queries mode: the topics are all Q queries, the qrels only the judged ones'."""
    own_qrels = qrels[qrels.query_id.isin(judged)]
    kw = {"n_boot": 50, "n_batches": 50, **kw}
    return systems.evaluate_systems(runs, own_qrels, labels, judged, kw.pop("measures", ["DCG@10"]),
                                    queries=[str(i) for i in range(Q)], **kw)


def test_own_queries_ppi_covers_the_mean_over_all_topics():
    """200 random sets of 10 judged queries of 100 topics: PPI's interval for the mean DCG@10 over all 100
    (ir_measures on the full qrels, which the method never sees) covers it at its 95% level within three binomial
    standard errors and not above 0.995 (the variance of a mean over unboundedly many queries covered 0.985 here);
    PPI++ gives no interval from 10 judged queries and says why; the labels' own mean over the topics (biased
    labels, no human correction) misses it almost always. (Measured: PPI 0.935, labels alone 0.000; PPI's median
    width 0.32 of the human values' t interval.)"""
    runs, qrels, labels = _toy(11, Q=Q, docs=20)
    truth = {s: evaluate_run(r, qrels, ["DCG@10"]).value.mean() for s, r in runs.items()}
    rng = np.random.default_rng(0)
    R = 200
    hits = {"ppi": 0, "labels only": 0}
    widths = {"ppi": [], "human t": []}
    for rep in range(R):
        judged = [str(x) for x in rng.choice(Q, 10, replace=False)]
        table, _, per_query, _ = _own(runs, qrels, labels, judged, seed=rep)
        t = table[table.system == "good"].set_index("method")
        hits["ppi"] += t.low["ppi"] <= truth["good"] <= t.high["ppi"]
        assert np.isnan(t.low["ppi++"]) and "no PPI++ interval" in t.note["ppi++"], t.loc["ppi++"]
        widths["ppi"].append(t.width["ppi"])
        pq = per_query[per_query.system == "good"]
        h = pq[pq.labelled].u_true.to_numpy()
        widths["human t"].append(2 * stats.t.ppf(0.975, 9) * h.std(ddof=1) / np.sqrt(10) * np.sqrt(1 - 10 / Q))
        u = pq.u_pred.to_numpy()
        half = stats.t.ppf(0.975, u.size - 1) * u.std(ddof=1) / np.sqrt(u.size)
        hits["labels only"] += abs(u.mean() - truth["good"]) <= half
    se = np.sqrt(0.95 * 0.05 / R)
    assert 0.95 - 3 * se <= hits["ppi"] / R <= 0.995, hits["ppi"] / R
    assert hits["labels only"] / R < 0.5, hits
    # not by being wide: with these labels PPI is narrower than the human values' own interval
    assert np.median(widths["ppi"]) < 0.8 * np.median(widths["human t"]), widths


def test_own_queries_mode_has_no_truth_and_reads_only_the_judged_queries_qrels():
    runs, qrels, labels = _toy(3, Q=Q, docs=20)
    judged = [str(x) for x in range(0, 30, 3)]
    table, diffs, per_query, bias = _own(runs, qrels, labels, judged, measures=["DCG@10", "nDCG@10"])
    assert (table.N == Q).all() and (table.n == 10).all()
    assert table.truth.isna().all() and table.covered.isna().all() and diffs.truth.isna().all()
    assert per_query[~per_query.labelled].u_true.isna().all()
    assert np.isfinite(per_query[per_query.labelled].u_true).all()
    # the full qrels give the same intervals: the other queries' grades are never read ...
    full, *_ = systems.evaluate_systems(runs, qrels, labels, judged, ["DCG@10", "nDCG@10"], n_boot=50,
                                        n_batches=50, queries=[str(i) for i in range(Q)])
    cols = ["estimate", "low", "high"]
    assert np.array_equal(full[cols].to_numpy(), table[cols].to_numpy(), equal_nan=True)
    # ... while the labels of the unjudged queries move PPI (they are part of the estimate over all N)
    moved = labels.copy()
    other = ~moved.query_id.isin(judged)
    moved.loc[other, ["p_0", "p_1", "p_2"]] = moved.loc[other, ["p_2", "p_1", "p_0"]].to_numpy()
    t2, *_ = _own(runs, qrels, moved, judged, measures=["DCG@10", "nDCG@10"])
    ppi = table.method == "ppi"
    assert not np.allclose(t2[ppi].estimate, table[ppi].estimate)
    # validation mode on the same data: N = the judged queries of the qrels, a truth
    val, *_ = systems.evaluate_systems(runs, qrels, labels, judged, ["DCG@10"], n_boot=50, n_batches=50)
    assert val.truth.notna().all() and (val.N == qrels.query_id.nunique()).all()


def test_own_queries_errors():
    runs, qrels, labels = _toy(3, Q=Q, docs=20)
    judged = ["1", "2", "3"]
    with pytest.raises(InputError, match="not among the topics' queries"):
        systems.evaluate_systems(runs, qrels[qrels.query_id.isin(judged)], labels, judged, ["DCG@10"],
                                 queries=[str(i) for i in range(2, Q)])
    with pytest.raises(InputError, match="have no judgment"):
        _own(runs, qrels, labels, judged + ["x"])
    with pytest.raises(InputError, match=r"my.qrels: 1 judged of 100 queries; need 2 <= n <= N - 2"):
        systems.own_judged(qrels, [str(i) for i in range(Q)], ["1"], "my.qrels")
    cut, judged = systems.own_judged(qrels, [str(i) for i in range(Q)], ["3", "1"])
    assert judged == ["1", "3"] and set(cut.query_id) == {"1", "3"}
    with pytest.raises(InputError, match=r"my.tsv \(config key ci.systems.topics\), line 4: query '4' listed twice "
                                          r"\(first at line 2\)"):
        systems.topic_queries(pd.DataFrame({"query_id": ["4", "5", "4"]}), "my.tsv (config key ci.systems.topics)")


def test_own_topics_with_an_empty_text_or_a_query_no_run_retrieved_are_refused():
    """A query with an empty text would be labelled against nothing; a query no run ranks anything for would count
    as a zero for every system (both were accepted silently before): both refused, naming the file, its key, the
    line or the system and the queries."""
    where = "t.tsv (config key ci.systems.topics)"
    topics = pd.DataFrame({"query_id": ["1", "2", "3"], "text": ["heat", "  ", "flutter"]})
    with pytest.raises(InputError, match=r"t.tsv \(config key ci.systems.topics\), line 3: query '2' has an empty "
                                          r"text \(1 such queries\)"):
        systems.topic_queries(topics, where)
    assert systems.topic_queries(topics.assign(text="x"), where) == ["1", "2", "3"]
    runs, _, _ = _toy(2, Q=5, docs=3)
    queries = [str(i) for i in range(5)] + ["999"]
    with pytest.raises(InputError, match=r"t.tsv \(config key ci.systems.topics\): 1 of its 6 queries have no ranked "
                                          r"document in the run of good \('999'\)"):
        systems.check_runs_cover(runs, queries, where)
    systems.check_runs_cover(runs, queries[:-1], where)  # every query ranked: nothing to say


def test_differences_are_system_minus_baseline_with_bonferroni_over_the_systems_compared():
    runs, qrels, labels = _toy(5, Q=40)
    runs["mid"] = runs["good"].assign(rank=runs["good"]["rank"].where(runs["good"]["rank"] > 3, 4 - runs["good"]["rank"]))
    lq = systems.draw_queries(systems.judged_queries(qrels), 10, seed=1)
    _, bon, _, _ = systems.evaluate_systems(runs, qrels, labels, lq, ["DCG@10"], n_boot=200, n_batches=50,
                                            baseline="poor")
    _, none, _, _ = systems.evaluate_systems(runs, qrels, labels, lq, ["DCG@10"], n_boot=200, n_batches=50,
                                             baseline="poor", correction="none")
    assert list(dict.fromkeys(bon.system_a)) == ["good", "mid"] and set(bon.system_b) == {"poor"}
    assert (bon.alpha_adjusted == 0.025).all() and (none.alpha_adjusted == 0.05).all()
    # signed: good − poor is positive, as its truth
    g = bon[(bon.system_a == "good") & (bon.method == "ppi")].iloc[0]
    assert g.estimate > 0 and g.truth > 0 and g.excludes_zero
    # PPI's corrected interval is its uncorrected one widened by t(1 − α/4) / t(1 − α/2) (t on min(n, N − n) − 1
    # = 9 degrees of freedom), the estimate unchanged
    a, b = bon[bon.method == "ppi"], none[none.method == "ppi"]
    assert np.allclose(a.estimate.to_numpy(), b.estimate.to_numpy())
    ratio = stats.t.ppf(1 - 0.0125, 9) / stats.t.ppf(0.975, 9)
    assert np.allclose(a.width.to_numpy(), ratio * b.width.to_numpy())
    with pytest.raises(InputError, match="baseline 'nope'"):
        systems.evaluate_systems(runs, qrels, labels, lq, ["DCG@10"], baseline="nope")


def test_label_bias_recovers_a_labeler_that_overrates_one_system():
    """Labels that move a grade's mass up for the documents one system ranks in its top 10 (a labeler fond of the
    system built on its model): that system's bias interval lies above 0 and above the others', and the table and
    Markdown flag it when it is declared as sharing the model."""
    runs, qrels, labels = _toy(7, Q=60)
    # "mine": good's ranks 11-20 put first
    g = runs["good"]
    runs["mine"] = g.assign(rank=np.where(g["rank"].between(11, 20), g["rank"] - 10,
                                          np.where(g["rank"] <= 10, g["rank"] + 10, g["rank"])))
    top = runs["mine"][runs["mine"]["rank"] <= 10][["query_id", "doc_id"]].assign(fond=True)
    lab = labels.merge(top, on=["query_id", "doc_id"], how="left")
    fond = lab.fond.fillna(False).astype(bool).to_numpy()
    P = lab[["p_0", "p_1", "p_2"]].to_numpy().copy()
    P[fond] = np.column_stack([np.full(fond.sum(), 0.05), P[fond][:, 0] - 0.05, P[fond][:, 1] + P[fond][:, 2]])
    lab[["p_0", "p_1", "p_2"]] = P
    lab = lab.drop(columns="fond")
    lq = systems.draw_queries(systems.judged_queries(qrels), 15, seed=4)
    table, _, per_query, bias = systems.evaluate_systems(
        {"poor": runs["poor"], "good": runs["good"], "mine": runs["mine"]}, qrels, lab, lq, ["DCG@10"],
        n_boot=100, n_batches=50, same_model=["mine"])
    b = bias.set_index("system")
    assert b.low["mine"] > 0 and b.estimate["mine"] > b.high["good"] and b.estimate["mine"] > b.high["poor"]
    # the bias is the labels' minus the humans' metric on the judged queries, as the per-query values give it
    pq = per_query[(per_query.system == "mine") & per_query.labelled]
    assert np.isclose(b.estimate["mine"], (pq.u_pred - pq.u_true).mean())
    assert b.same_model.to_dict() == {"poor": False, "good": False, "mine": True}
    assert table[table.system == "mine"].same_model.all() and not table[table.system != "mine"].same_model.any()
    long = systems.systems_long(table, pd.DataFrame(columns=systems.DIFF_COLUMNS), bias)
    assert set(long.kind) == {"system", "bias"} and long[long.kind == "bias"].shape[0] == 3


def test_markdown_of_the_own_mode_warns_of_a_shared_model(tmp_path):
    runs, qrels, labels = _toy(3, Q=Q, docs=20)
    judged = [str(x) for x in range(0, 30, 3)]
    table, diffs, _, bias = _own(runs, qrels, labels, judged, same_model=["poor"])
    path = tmp_path / "s.md"
    systems.write_systems_md(table, diffs, "vaswani", "minilm", judged, 0.05, path, bias=bias)
    md = path.read_text()
    assert "10 judged of 100 queries" in md and "there is no truth column" in md
    assert "all human labels" not in md and "covered" not in md
    assert "**Self-preference warning**: poor shares a model with the labeler minilm" in md
    assert "| DCG@10 | poor (same model as the labeler) | ppi |" in md
    assert "| DCG@10 | poor | yes |" in md and "| DCG@10 | good | no |" in md


def test_power_table_matches_the_normal_formula_and_shrinks_with_delta():
    runs, qrels, labels = _toy(9, Q=60)
    lq = systems.draw_queries(systems.judged_queries(qrels), 12, seed=0)
    table, diffs, per_query, bias = systems.evaluate_systems(runs, qrels, labels, lq, ["DCG@10"], n_boot=100,
                                                             n_batches=50)
    long = systems.systems_long(table, diffs, bias)
    power = sample_size.difference_power(long, per_query, [0.05, 0.1, 0.3], alpha=0.05, power=0.8)
    assert set(power.method) == {"bootstrap", "ppi", "ppi++"} and set(power.system) == {"poor"}
    assert set(power.baseline) == {"good"}
    # bootstrap: the smallest m with (z_{1-α/2} + z_0.8)² (1 − m/N) s²/m <= Δ², s² the variance of the human
    # differences: m = ceil(s² / (r + s²/N)), r = Δ² / (z_{1-α/2} + z_0.8)²
    a = per_query[per_query.system == "poor"].set_index("query_id")
    b = per_query[per_query.system == "good"].set_index("query_id").loc[a.index]
    d = (a.u_true - b.u_true)[a.labelled.astype(bool)].to_numpy()
    base = table[(table.system == "good") & (table.method == "ppi")].estimate.iloc[0]
    for r in power[power.method == "bootstrap"].itertuples():
        delta = r.delta_relative * base
        assert np.isclose(r.delta, delta)
        s2, N = d.var(ddof=1), len(a)
        m = np.ceil(s2 / (delta ** 2 / (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) ** 2 + s2 / N))
        floor = finite.BOOTSTRAP_MIN_QUERIES  # the bootstrap gives no interval from fewer judged queries
        assert r.n_needed == min(N, max(floor, m))
        ms = np.arange(2, N + 1)
        ok = ((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) ** 2 * (1 - ms / N) * s2 / ms <= delta ** 2) & (
            ms >= floor)
        assert r.n_needed == ms[np.argmax(ok)]  # the smallest m that detects it, found by trying every m
    for meth in ("bootstrap", "ppi", "ppi++"):
        n = power[power.method == meth].n_needed.to_numpy()
        assert (np.diff(n) <= 0).all(), (meth, n)  # a larger difference needs no more queries
    md = sample_size.power_markdown(power, "toy", 0.05)
    assert md.count("| poor | good |") == len(power) and "80%" in md


def test_the_plan_resolves_the_own_mode_baseline_and_same_model(tmp_path):
    from irrepro.plan import same_model

    spine = SimpleNamespace(collections=["vaswani"], systems={"vaswani": ["bm25", "qld", "minilm-rerank"]},
                            V="results/x",
                            same_model=lambda s, lab: same_model(s, lab, base["labels"]["labelers"][lab]))
    qrels = tmp_path / "q.txt"
    qrels.write_text("".join(f"{q} 0 d{q} {q % 2}\n" for q in range(1, 7)))  # 6 judged queries, grades 0 and 1
    base = {"labels": {"labelers": {"minilm": {"backend": "biencoder", "model": "minilm"}},
                       "collections": {"vaswani": {"prompt": "binary"}}},
            "imports": {},
            "ci": {"systems": {"collection": "vaswani", "systems": ["bm25", "qld", "minilm-rerank"],
                               "labeler": "minilm", "n": 10, "queries": None, "seed": 0, "measures": ["DCG@10"],
                               "plan_widths": [0.1]}}}
    r = resolve_systems(base, spine)
    assert r["mode"] == "validation" and r["baseline"] == "bm25" and r["correction"] == "bonferroni"
    assert r["qrels"] == "results/x/collections/vaswani/qrels.txt" and r["same_model"] == ["minilm-rerank"]
    cfg = copy.deepcopy(base)
    cfg["ci"]["systems"].update(mode="own", qrels=str(qrels), baseline="qld", same_model=["bm25"])
    r = resolve_systems(cfg, spine)
    assert r["qrels"] == str(qrels) and r["topics"] == "results/x/collections/vaswani/topics.tsv"
    assert r["baseline"] == "qld" and r["same_model"] == ["bm25", "minilm-rerank"]
    # a calibrated labeler fits on the queries the qrels judge: too few for its folds, or one grade only, is refused
    # by the plan (before anything is labelled; the job failed after labelling before), naming file, labeler and key
    two, zeros = tmp_path / "two.txt", tmp_path / "zeros.txt"
    two.write_text("1 0 d1 1\n2 0 d2 0\n")
    zeros.write_text("".join(f"{q} 0 d{q} 0\n" for q in range(1, 7)))
    for path, match in ((two, rf"ci.systems.qrels \({two}: the queries it judges\): labeler 'minilm' fits its "
                              r"score-to-grade mapping on the labelled queries in 5 folds: label at least 5 queries "
                              r"\(got 2\)"),
                        (zeros, rf"ci.systems.qrels: no judgment in {zeros} is above grade 0; labeler 'minilm'")):
        cfg = copy.deepcopy(base)
        cfg["ci"]["systems"].update(mode="own", qrels=str(path))
        with pytest.raises(InputError, match=match):
            resolve_systems(cfg, spine)
    for change, match in ((dict(mode="own"), "mode own needs the qrels"),
                          (dict(mode="own", qrels=str(tmp_path / "none.txt")), "not found"),
                          (dict(qrels=str(qrels)), "only read in mode own"),
                          (dict(baseline="x"), "ci.systems.baseline: 'x'"),
                          (dict(same_model=["x"]), r"ci.systems.same_model: \['x'\]")):
        cfg = copy.deepcopy(base)
        cfg["ci"]["systems"].update(change)
        with pytest.raises(InputError, match=match):
            resolve_systems(cfg, spine)
