"""SIGIR 2013 Tables 1-2 (toy), BV-Test Table 12 (Session track) on a real-format fixture, and the defined
behaviour of the bias-variance library on bad input."""
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from irrepro.papers.bv import biasvariance as bv
from irrepro.papers.bv import session, sigir13, tables
from irrepro.papers.bv import risk
from irrepro.errors import InputError

# SIGIR 2013 Table 1: AP on q1, q2 of the original model A, expansion models B, C and the target model T
TOY = np.array([[0.3, 0.1], [0.6, 0.08], [0.65, 0.03], [0.7, 0.2]])
A, B, C, T = TOY


def test_sigir13_table1():
    t = sigir13.ap_bias_variance(TOY, T)
    assert t["map"].tolist() == pytest.approx([0.2, 0.34, 0.34, 0.45])
    assert t["bias"].tolist() == pytest.approx([0.25, 0.11, 0.11, 0.0])
    assert [risk.robustness_index(x, A) for x in TOY] == [0, 0, 0, 1]
    assert [risk.below_init(x, A) for x in TOY] == [0, 0.5, 0.5, 0]
    # the paper's Var(AP) of A is worked out in the text: [(0.3-0.2)² + (0.1-0.2)²]/2 = 0.01
    assert t.loc[0, "var"] == pytest.approx(0.01) and t.loc[0, "total"] == pytest.approx(0.0725)
    assert t.loc[3, "var"] == pytest.approx(0.0625) and t.loc[3, "total"] == pytest.approx(0.0625)
    # B: the paper prints Var 0.0646 but Bias² + Var 0.0797 = 0.11² + 0.0676: 0.0676 follows from its APs
    assert t.loc[1, "var"] == pytest.approx(0.0676) and t.loc[1, "total"] == pytest.approx(0.0797)
    # C: Var 0.0961 as printed; the paper's Bias² + Var 0.182 does not follow (0.0121 + 0.0961 = 0.1082)
    assert t.loc[2, "var"] == pytest.approx(0.0961) and t.loc[2, "total"] == pytest.approx(0.1082)
    # the text's variant: C = (0.32, 0.11) -> MAP 0.215, <Init 0, Robustness Index 1
    Cv = np.array([0.32, 0.11])
    assert Cv.mean() == pytest.approx(0.215)
    assert risk.below_init(Cv, A) == 0 and risk.robustness_index(Cv, A) == 1


def test_sigir13_table2_and_eq7():
    t = sigir13.rho_bias_variance(TOY, T)
    assert t["bias"].tolist() == pytest.approx([0.25, 0.11, 0.11, 0.0])
    assert t["var"].tolist() == pytest.approx([0.0225, 0.0001, 0.0036, 0.0])
    assert t["total"].tolist() == pytest.approx([0.0850, 0.0122, 0.0157, 0.0])
    # Eq. 7: Var(ρ) + Bias²(ρ) = E(AP − AP_T)²
    assert t["total"].to_numpy() == pytest.approx(((TOY - T) ** 2).mean(axis=1))
    with pytest.raises(InputError, match="target has 3 queries"):
        sigir13.rho_bias_variance(TOY, [0.1, 0.2, 0.3])


def test_robustness_measures_by_hand():
    x, b = np.array([0.5, 0.2, 0.4, 0.1]), np.array([0.3, 0.4, 0.4, 0.0])
    assert risk.robustness_index(x, b) == pytest.approx((2 - 1) / 4)   # a tie counts in neither
    assert risk.below_init(x, b) == pytest.approx(1 / 4)
    with pytest.raises(InputError):
        risk.robustness_index(x, b[:3])


# ------------------------------------------------------------------ bad input of the bias-variance library

def test_bad_input_has_defined_behaviour():
    # NaN and inf: InputError naming the cell
    with pytest.raises(InputError, match=r"NaN \(first at system row 1, topic column 0\)"):
        bv.tradeoff(np.array([[0.1, 0.2], [np.nan, 0.3]]))
    with pytest.raises(InputError, match="infinite"):
        bv.maxmin_normalise(np.array([[0.1, np.inf], [0.2, 0.3]]))
    # ddof = 1 with one topic: InputError, never numpy's NaN
    with pytest.raises(InputError, match="ddof=1 needs more than 1"):
        bv.bias_variance(np.array([[0.2], [0.3]]), ddof=1)
    # a constant topic: normalised to 0 for every system, and the rest is computed
    X = np.array([[0.2, 0.5, 0.4, 0.1], [0.4, 0.5, 0.1, 0.3], [0.9, 0.5, 0.2, 0.2]])
    Xn = bv.maxmin_normalise(X)
    assert (Xn[:, 1] == 0).all() and np.isfinite(bv.tradeoff(Xn))
    # every topic constant: correlation undefined -> InputError (not NaN); try_value gives the reason
    flat = np.tile([[0.3, 0.4]], (3, 1))
    v, why = bv.try_value(bv.tradeoff, bv.maxmin_normalise(flat))
    assert v is None and "constant" in why
    # a single system
    with pytest.raises(InputError, match="at least 2 systems"):
        tables.table9_row(X[:1], random_size=2, random_groups=2, random_repeats=3, difficulty_size=2)
    # fewer topics than a group size
    with pytest.raises(InputError, match="group size 5 exceeds the number of topics 4"):
        tables.table9_row(X, random_size=5, random_groups=3, random_repeats=3, difficulty_size=2)
    with pytest.raises(InputError, match="group size 9 exceeds"):
        bv.difficulty_groups(X, 9)


def test_complete_matrix_drops_and_reports():
    M = pd.DataFrame({"s1": [0.1, 0.2, np.nan, 0.4], "s2": [0.3, 0.1, 0.2, 0.5], "s3": [np.nan] * 4},
                     index=["t1", "t2", "t3", "t4"])
    X, systems, topics, dropped = bv.complete_matrix(M)
    assert systems == ["s1", "s2"] and topics == ["t1", "t2", "t4"]
    assert dropped == {"systems": ["s3"], "topics": ["t3"]}
    assert X.tolist() == [[0.1, 0.2, 0.4], [0.3, 0.1, 0.5]]
    with pytest.raises(InputError, match="no complete"):
        bv.complete_matrix(pd.DataFrame({"s": [np.nan, np.nan]}))


# ------------------------------------------------------------------ Table 12 on a Session-track fixture

SESSION = Path(__file__).parent / "data" / "session"


def _session_inputs():
    from irrepro.core.trec import read_qrels, read_run
    runs = {p.name: read_run(p, system=p.name) for p in sorted((SESSION / "runs").iterdir())}
    tmap = dict(line.split() for line in (SESSION / "sessiontopicmap.txt").read_text().splitlines()
                if line and not line.startswith("#"))
    return runs, read_qrels(SESSION / "qrels.txt"), tmap


def _ndcg10(run_lines, grades):
    """trec_eval's nDCG@10 by hand: gain = grade, discount log2(rank + 1), ideal from all judged grades."""
    ranked = sorted(run_lines, key=lambda x: (x[1], x[0]), reverse=True)[:10]   # score, then docno, descending
    dcg = sum(grades.get(d, 0) / math.log2(i + 2) for i, (d, _) in enumerate(ranked))
    ideal = sorted(grades.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def test_session_run_names():
    assert session.session_run_name("input.CWIpostRW.RL1") == ("CWIpostRW", "RL1")
    assert session.session_run_name("input.uogTrSeS.RL4.gz") == ("uogTrSeS", "RL4")
    with pytest.raises(InputError, match="does not match"):
        session.session_run_name("myrun.txt")


def test_table12_on_session_fixture():
    runs, qrels, tmap = _session_inputs()
    scores = session.session_scores(runs, qrels, "nDCG@10", topic_map=tmap)
    assert sorted(scores["condition"].unique()) == ["RL1", "RL2", "RL3"]
    assert sorted(scores["topic"].unique()) == ["1", "2", "3", "4", "5"]      # sessions, not topics
    # every score equals nDCG@10 by hand, through the session -> topic map
    q = {}
    for line in (SESSION / "qrels.txt").read_text().split("\n"):
        if line:
            t, _, d, g = line.split()
            q.setdefault(t, {})[d] = int(g)
    for name, run in runs.items():
        system, cond = session.session_run_name(name)
        for s in ["1", "2", "3", "4", "5"]:
            sub = run[run["query_id"] == s]
            lines = list(zip(sub["doc_id"], sub["score"]))
            got = scores[(scores.system == system) & (scores.condition == cond) & (scores.topic == s)]["value"]
            assert float(got.iloc[0]) == pytest.approx(_ndcg10(lines, q[tmap[s]]), abs=1e-9), (name, s)
    # ICTNET11SS.RL3 did not answer session 5: 0
    assert scores.query("system == 'ICTNET11SS' and condition == 'RL3' and topic == '5'")["value"].iloc[0] == 0
    table, per = session.session_tradeoffs(scores, ["RL1", "RL2", "RL3"])
    for cond in ["RL1", "RL2", "RL3"]:
        M = scores[scores.condition == cond].pivot(index="system", columns="topic", values="value")
        X = M.to_numpy()
        c = X.max(axis=0).mean()
        b2, v = (X.mean(axis=1) - c) ** 2, X.var(axis=1)
        row = table.set_index("condition").loc[cond]
        assert row["pearson"] == pytest.approx(np.corrcoef(b2, v)[0, 1])
        lo, hi = X.min(axis=0), X.max(axis=0)
        Xn = np.where(hi > lo, (X - lo) / np.where(hi > lo, hi - lo, 1), 0)
        cn = Xn.max(axis=0).mean()
        assert row["pearson_norm"] == pytest.approx(np.corrcoef((Xn.mean(1) - cn) ** 2, Xn.var(1))[0, 1])
        assert row["systems"] == 3 and row["sessions"] == 5
    # per system: one best condition each, against the track-wide target
    assert per.groupby("system")["best"].sum().tolist() == [1, 1, 1]
    full = scores.pivot_table(index="topic", columns=["condition", "system"], values="value")
    c_all = full.max(axis=1).mean()
    x = full[("RL2", "uogTrSeS")].to_numpy()
    r = per.set_index(["condition", "system"]).loc[("RL2", "uogTrSeS")]
    assert r["total"] == pytest.approx((x.mean() - c_all) ** 2 + x.var())
    # the track-wide target reading is available and differs in c only
    t2, _ = session.session_tradeoffs(scores, ["RL1", "RL2", "RL3"], target="track")
    assert len(t2) == 3 and all(v is None or -1 <= v <= 1 for v in t2["pearson"])


def test_table12_bad_input():
    runs, qrels, tmap = _session_inputs()
    scores = session.session_scores(runs, qrels, "nDCG@10", topic_map=tmap)
    with pytest.raises(InputError, match=r"no runs for condition\(s\) \['RL4'\]"):
        session.session_tradeoffs(scores, ["RL1", "RL4"])
    # a condition with a single system: the cell is None with the reason, not NaN, and the others are computed
    one = scores[~((scores.condition == "RL2") & (scores.system != "uogTrSeS"))]
    t, _ = session.session_tradeoffs(one, ["RL1", "RL2", "RL3"])
    r = t.set_index("condition").loc["RL2"]
    assert r["pearson"] is None and "at least 2 systems" in r["note"]
    assert t.set_index("condition").loc["RL1", "pearson"] is not None
    dup = dict(runs)
    dup["input.CWIpostRW.RL1.gz"] = runs["input.CWIpostRW.RL1"]
    with pytest.raises(InputError, match="both system 'CWIpostRW', condition 'RL1'"):
        session.session_scores(dup, qrels, "nDCG@10", topic_map=tmap)
    with pytest.raises(InputError, match="topic map"):
        session.session_scores(runs, qrels, "nDCG@10", topic_map={"1": "999"})


@pytest.mark.integration
def test_table12_rule_runs_on_user_session_runs(tmp_path, mirror):
    """The rule, requested by naming its file, on the fixture configured as a user would (bv.table12.tracks)."""
    from conftest import TEST_CONFIG, snakemake
    cfg = yaml.safe_load(TEST_CONFIG.read_text())
    cfg["bv"]["table12"] = {"tracks": {"session2011": {
        "qrels": str(SESSION / "qrels.txt"), "runs": str(SESSION / "runs"),
        "topic_map": str(SESSION / "sessiontopicmap.txt"), "conditions": ["RL1", "RL2", "RL3"]}}}
    cfgfile = tmp_path / "config.yaml"
    cfgfile.write_text(yaml.safe_dump(cfg))
    wd = tmp_path / "work"
    dry = snakemake(wd, "-n", "--config", "papers=[bv]", config=cfgfile)
    assert "bv_table12" in dry.stdout
    snakemake(wd, "--cores", "1", "results/test/bv/table12.csv", "--config", "papers=[bv]", config=cfgfile)
    out = wd / "results" / "test" / "bv"
    t = pd.read_csv(out / "table12.csv")
    assert t["condition"].tolist() == ["RL1", "RL2", "RL3"] and (t["track"] == "session2011").all()
    values = json.loads((out / "values" / "table12.json").read_text())
    assert set(values) >= {"table12/session2011/RL1/score", "table12/session2011/RL1/score_norm"}
    assert (out / "fig_session.png").stat().st_size > 0
    # without tracks the rule is not requested
    dry = snakemake(wd, "-n", "--config", "papers=[bv]")
    assert "bv_table12" not in dry.stdout


def test_table9_row_leaves_undefined_cells_empty_with_the_reason():
    rng = np.random.default_rng(0)
    X = rng.random((5, 8))
    strict = tables.table9_row(X, random_size=4, random_groups=3, random_repeats=5, difficulty_size=2)
    loose = tables.table9_row(X, random_size=4, random_groups=3, random_repeats=5, difficulty_size=2, strict=False)
    assert loose.pop("note") == "" and loose == strict
    # 8 topics, random groups of 10: the random columns are undefined, the others computed
    r = tables.table9_row(X, random_size=10, random_groups=3, random_repeats=5, difficulty_size=2, strict=False)
    assert r["random"] is None and r["random_norm"] is None
    assert "random: group size 10 exceeds the number of topics 8" in r["note"]
    assert all(isinstance(r[k], float) and np.isfinite(r[k]) for k in ("original", "original_norm", "difficulty"))


def test_difficulty_tie_orders():
    """Tied per-topic maxima are ordered by topic (the default: the table9_row cells); each other tie order gives
    other groups, so swapping the default fails; without ties every tie order gives the same cells."""
    X = np.array([[0.9, 0.2, 0.5, 0.2, 0.7, 0.5], [0.1, 0.1, 0.3, 0.0, 0.2, 0.4], [0.4, 0.0, 0.1, 0.0, 0.3, 0.2]])
    # maxima 0.9, 0.2, 0.5, 0.2, 0.7, 0.5: topics 1 and 3 tie, 2 and 5 tie
    assert [list(g) for g in bv.difficulty_groups(X, 2)] == [[1, 3], [2, 5], [4, 0]]
    assert [list(g) for g in bv.difficulty_groups(X, 2, "topic_desc")] == [[3, 1], [5, 2], [4, 0]]
    assert [list(g) for g in bv.difficulty_groups(X, 3, "mean_asc")][0] == [3, 1, 2]      # means t3 0.067 < t1 0.1
    assert [list(g) for g in bv.difficulty_groups(X, 3, "mean_desc")][0] == [1, 3, 5]
    with pytest.raises(InputError, match="tie order"):
        bv.difficulty_groups(X, 2, "random")
    r = bv.difficulty_readings(X, size=3)
    assert r["tied_maxima"] == 2
    row = tables.table9_row(X, random_size=2, random_groups=2, random_repeats=3, difficulty_size=3)
    assert r["topic"] == pytest.approx((row["difficulty"], row["difficulty_norm"]), abs=1e-12)
    assert r["mean_desc"] != pytest.approx(r["topic"], abs=1e-6)   # other groups: {1, 3, 5} vs {1, 3, 2}
    no_ties = X + np.array([0.0, 0.01, 0.02, 0.03, 0.04, 0.05])
    r = bv.difficulty_readings(no_ties, size=3)
    assert r["tied_maxima"] == 0
    assert all(r[t] == r["topic"] for t in bv.DIFFICULTY_TIES)
