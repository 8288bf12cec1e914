"""The table builders the bias–variance workflow scripts call: BV-Test Tables 2, 8, 9, Fig 1's data, Tables 10-11,
Table 12 from files, SIGIR 2013 Tables 1-2 and Figs 1-2, and the query-model family's scoring."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from irrepro.errors import InputError
from irrepro.papers.bv import biasvariance as bv
from irrepro.papers.bv import querymodels, session, sigir13, simulated, tables
from irrepro.papers.bv.simulation import RelevanceProfile, per_topic_table

SESSION = Path(__file__).parent / "data" / "session"


def _frame(X, systems=None, topics=None):
    """A topic × system frame (scores.to_matrix layout) of a systems × topics array."""
    X = np.asarray(X, float)
    return pd.DataFrame(X.T, index=topics or [f"t{j}" for j in range(X.shape[1])],
                        columns=systems or [f"s{i}" for i in range(X.shape[0])])


def test_table2_is_the_papers_toy_example():
    t, values = tables.table2()
    assert t.columns.tolist() == ["system", "mean", "bias2_c_target", "var", "total", "c", "bias2_c_1"]
    assert values["table2/target_mean"] == pytest.approx(0.8)
    assert [values[f"table2/{s}/bias2_c_target"] for s in ("f1", "f2", "f3")] == pytest.approx([0.01, 0.04, 0.16])
    assert [values[f"table2/{s}/bias2_c_1"] for s in ("f1", "f2", "f3")] == pytest.approx([0.09, 0.16, 0.36])


def test_table9_builder_rows_values_and_undefined_cells():
    rng = np.random.default_rng(1)
    big, small = _frame(rng.random((6, 12))), _frame(rng.random((4, 6)))
    small.iloc[0, 0] = np.nan  # a missing score: the topic is dropped, never imputed
    settings = {"random_size": 8, "random_groups": 3, "random_repeats": 4, "difficulty_size": 3,
                "random_grouping": "resampled"}
    t9, md, values = tables.table9([("a", "AP", big), ("b", "ERR@20", small)], seed=3, **settings)
    assert t9["collection"].tolist() == ["a", "b"] and t9["topics"].tolist() == [12, 5]
    # 5 topics < random groups of 8: the random cells of b are None (not NaN) with the reason, and no value
    assert t9.loc[1, "random"] is None and "group size 8 exceeds the number of topics 5" in t9.loc[1, "note"]
    # ... and a value None with that reason, so the verify row shows it (a row, never a silence)
    assert values["table9/b/random"]["value"] is None and "exceeds the number of topics 5" in \
        values["table9/b/random"]["note"] and "table9/b/original" in values
    row = tables.table9_row(big.to_numpy().T, seed=3, **settings)
    assert values["table9/a/difficulty"] == row["difficulty"]
    assert t9.loc[0, "original"] == round(row["original"], 6) and md.loc[0, "original"] == round(row["original"], 4)


def test_table8_tables_top_systems_and_every_system():
    rng = np.random.default_rng(2)
    M = _frame(rng.random((5, 10)), systems=["a", "b", "c", "d", "e"])
    M["empty"] = np.nan  # a system without scores is dropped
    t, values = tables.table8_tables(M, top=2, ddof=1)
    assert len(t) == 2 and t["mean"].is_monotonic_decreasing
    allsys = values["table8/_all"]
    assert [s["system"] for s in allsys] == t["system"].tolist() + [s["system"] for s in allsys[2:]]
    assert sorted(s["system"] for s in allsys) == ["a", "b", "c", "d", "e"]
    d = bv.rho_decomposition(M.drop(columns="empty").to_numpy().T, ddof=1)
    assert allsys[0]["var_x"] == pytest.approx(d.loc[list("abcde").index(allsys[0]["system"]), "var_x"], abs=1e-8)


def test_fig1_data_sorted_by_bias2():
    t, r, why = tables.fig1_data(_frame([[0.1, 0.2, 0.3], [0.5, 0.4, 0.6], [0.9, 0.8, 0.7]]))
    assert t["bias2"].is_monotonic_increasing and isinstance(r, float) and why == ""
    t, r, why = tables.fig1_data(_frame([[0.1, 0.2, 0.3]]))
    assert r is None and "at least 2 systems" in why


def test_sigir13_toy_tables_values_and_claims():
    t1, t2, values = sigir13.toy_tables()
    assert t1.columns.tolist() == ["model", "ap_q1", "ap_q2", "map", "robust_index", "below_init", "bias", "var",
                                   "total"]
    assert t2.columns.tolist() == ["model", "rho_q1", "rho_q2", "bias", "var", "total"]
    assert values["sigir13/table1/B/var"] == pytest.approx(0.0676)
    assert values["sigir13/table2/C/var"] == pytest.approx(0.0036)
    assert values["sigir13/table1_variant/C/map"] == pytest.approx(0.215)
    assert values["sigir13/table1_variant/C/robust_index"] == 1
    assert all(v is True for k, v in values.items() if "claim" in k) and len([k for k in values if "claim" in k]) == 4
    # B as good as the target T (ties go to the first model): the claim that T is best turns false
    models = dict(sigir13.SIGIR13_TOY, B=[0.7, 0.2])
    _, _, v = sigir13.toy_tables(models)
    assert v["sigir13/table1/claim_T_lowest_total"] is False


def test_sigir13_family_findings():
    # two topics; the target has zero bias, RM less biased and more variable than the original model
    M = pd.DataFrame({"original": [0.2, 0.2], "rm1": [0.1, 0.5], "rm3_lambda-0.5": [0.25, 0.3],
                      "rm1_rn-1": [0.3, 0.4], "target": [0.4, 0.5]}, index=["1", "2"])
    t, c, values = sigir13.family_bias_variance(M, "x")
    assert c == pytest.approx(0.45) and t.index.tolist() == M.columns.tolist()
    assert values["sigir13/x/target_zero_bias"] is True
    assert values["sigir13/x/rm1_less_bias_than_original"] is True
    assert values["sigir13/x/rm1_more_var_than_original"] is True
    assert values["sigir13/x/rm3_beating_rm1_on_both"] == 0 and values["sigir13/x/rn_beating_rm1_on_both"] == 1
    assert values["sigir13/x/rn_bias_var_corr"] is None  # fewer than 3 rn models


def _per_topic():
    prof = RelevanceProfile(["a", "b", "c"], ["1", "2", "3"], np.full((3, 3), 20),
                            np.array([[2, 1, 0], [1, 2, 0], [2, 2, 0]]),
                            np.array([[[0, 4], [1, -1], [-1, -1]], [[3, -1], [0, 7], [-1, -1]],
                                      [[1, 2], [2, 9], [-1, -1]]]), np.array([3, 3, 2]))
    return per_topic_table(prof, 50, np.random.default_rng(0))


def test_tables_10_and_11_builders(tmp_path):
    df = _per_topic()
    simulated.write_per_topic(df, tmp_path / "x.tsv")
    back = simulated.read_per_topic(tmp_path / "x.tsv")
    assert back["topic"].tolist() == df["topic"].tolist()
    t, values = simulated.table10([("x", back)])
    assert t.loc[0, "useful_topics"] == 2 and values["table10/x/pearson"]["data"] == "x"
    assert values["table10/x/negative"] == (values["table10/x/pearson"]["value"] < 0)
    t11, summary, md, v11 = simulated.table11([("x", back), ("y", back)])
    assert t11["collection"].tolist() == ["x", "x", "y", "y"] and t11["topic"].tolist() == ["1", "2"] * 2
    assert summary["collection"].tolist() == ["x", "y"]
    assert md.startswith("Summary") and "\nx\n\n" in md and "\ny\n\n" in md
    assert set(v11) == {f"table11/{c}/{k}" for c in "xy"
                        for k in ("share_negative", "share_strong", "median", "all_negative", "mostly_strong")}


def test_simulated_run_names():
    assert simulated.run_name("/d/input.CWI.run.gz") == "CWI"
    assert simulated.run_name("bm25.run") == "bm25" and simulated.run_name("x.txt") == "x.txt"


def test_table12_from_files_and_topic_map(tmp_path):
    tracks = {"session2011": {"qrels": str(SESSION / "qrels.txt"), "runs": str(SESSION / "runs"),
                              "topic_map": str(SESSION / "sessiontopicmap.txt"), "conditions": ["RL1", "RL2", "RL3"]}}
    table, per, md, values = session.table12(tracks)
    assert table.columns.tolist() == ["track", "condition", "measure", "systems", "sessions", "pearson",
                                      "pearson_norm", "note"]
    assert table["condition"].tolist() == ["RL1", "RL2", "RL3"] and (per["track"] == "session2011").all()
    assert md.startswith("nDCG@10 and nDCG@10' (max-min normalised); target = per-session maximum within the "
                         "condition\n\n")
    assert sum(values[f"fig_session/session2011/best/{c}"] for c in ("RL1", "RL2", "RL3")) == 3
    assert "fig_session/session2011/better_than_RL1" in values
    bad = tmp_path / "map.txt"
    bad.write_text("# comment\n1 1\n2\n")
    with pytest.raises(InputError, match=r"map.txt:3: expected 'session topic'"):
        session.read_topic_map(bad)
    assert session.read_topic_map(SESSION / "sessiontopicmap.txt")["1"]


def test_score_family_layout():
    run = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["d1", "d2", "d3"], "score": [2.0, 1.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["d2", "d3"], "relevance": [1, 1]})
    s = querymodels.score_family({"original": run, "target": run}, qrels, ["AP"], "toy")
    assert set(s["system"]) == {"original", "target"} and (s["collection"] == "toy").all()
    ap = s[s.system == "original"].set_index("topic")["value"]
    assert ap["1"] == pytest.approx(0.5) and ap["2"] == pytest.approx(1.0)


def test_table12_undefined_cells_are_verify_rows(tmp_path):
    """One system per condition: every correlation is undefined, and each is a verify row with the reason."""
    import shutil

    from irrepro.core.verify import build_verify_table, load_reference, scorecard
    runs = tmp_path / "runs"
    runs.mkdir()
    for c in ("RL1", "RL2", "RL3"):
        shutil.copy(SESSION / "runs" / f"input.CWIpostRW.{c}", runs)
    tracks = {"session2011": {"qrels": str(SESSION / "qrels.txt"), "runs": str(runs),
                              "topic_map": str(SESSION / "sessiontopicmap.txt"), "conditions": ["RL1", "RL2", "RL3"]}}
    values = session.table12(tracks)[3]
    assert values["table12/session2011/RL1/score"]["value"] is None
    ref = [r for r in load_reference(Path(__file__).parents[1] / "workflow/resources/reference/bv.yaml")
           if r["item"].startswith("table12/session2011/RL1/")]
    t = build_verify_table(ref, values)
    t = t[t["paper"].notna()]  # the reference rows (computed-only items are appended as info)
    assert len(t) == 2 and (t["ok"] == False).all() and t["note"].str.contains("needs at least 2 systems").all()  # noqa: E712
    assert scorecard(t)["not_reproducible"] == 2
