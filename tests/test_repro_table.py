"""The reproducibility table (irrepro.repro.table): a reproduction identical to its original is OK with KTU, RBO 1
and RMSE 0; a shifted one fails its verdict; an original without effect gets no ER; two result folders are
"identical" only when every shared run and score table is."""
import numpy as np
import pandas as pd
import pytest

from irrepro.core.scores import write_scores
from irrepro.core.trec import write_run
from irrepro.repro.plots import plot_differences
from irrepro.repro.table import COLUMNS, Comparison, compare_versions, repro_table

TOPICS = [str(t) for t in range(1, 21)]


def _run(seed, n=30):
    rng = np.random.default_rng(seed)
    return pd.DataFrame([(t, f"d{d}", float(s)) for t in TOPICS
                         for d, s in zip(rng.permutation(60)[:n], np.sort(rng.random(n))[::-1])],
                        columns=["query_id", "doc_id", "score"])


def _scores(values: dict):
    """{system: per-topic AP array} -> canonical score table (AP and a second measure, AP / 2)."""
    rows = [(s, t, m, v * f) for s, arr in values.items() for t, v in zip(TOPICS, arr)
            for m, f in (("AP", 1.0), ("P@10", 0.5))]
    return pd.DataFrame(rows, columns=["system", "topic", "measure", "value"]).assign(collection="c")


def _setup(repro_shift=0.0, advanced_effect=0.05):
    rng = np.random.default_rng(0)
    base = rng.uniform(0.2, 0.5, len(TOPICS))
    runs = {"o-b": _run(1), "o-a": _run(2), "r-b": _run(1), "r-a": _run(3)}
    scores = _scores({"o-b": base, "o-a": base + advanced_effect, "r-b": base + repro_shift,
                      "r-a": base + advanced_effect})
    return runs, scores, Comparison("orig vs repro", ("o-b", "o-a"), ("r-b", "r-a"))


def test_identical_reproduction_is_ok_with_perfect_agreement():
    runs, scores, c = _setup()
    t = repro_table([c], runs, scores, ["AP", "P@10"], depth=30)
    assert list(t.columns) == COLUMNS and len(t) == 4
    b = t[(t.setting == "baseline") & (t.measure == "AP")].iloc[0]
    assert b.verdict == "OK" and b.ktu == pytest.approx(1.0) and b.rbo > 0.99 and b.rmse == 0.0
    assert b.topics == len(TOPICS) and b.difference == 0.0
    a = t[(t.setting == "advanced") & (t.measure == "AP")].iloc[0]
    assert a.ktu < 0.5  # other documents in another order (independent permutations)
    assert t.er.tolist() == pytest.approx([1.0] * 4) and (t.er_note == "").all()


def test_a_shifted_reproduction_fails_and_moves_er():
    runs, scores, c = _setup(repro_shift=0.01)
    t = repro_table([c], runs, scores, ["AP"], depth=30)
    b = t[t.setting == "baseline"].iloc[0]
    assert b.verdict == "FAIL" and b.difference == pytest.approx(0.01) and b.rmse == pytest.approx(0.01)
    assert b.p_value < 1e-6
    # reproduced effect 0.05 - 0.01 against the original's 0.05
    assert t.er.iloc[0] == pytest.approx(0.04 / 0.05)


def test_no_original_effect_no_er():
    runs, scores, c = _setup(advanced_effect=0.0)
    t = repro_table([c], runs, scores, ["AP"], depth=30)
    assert t.er.isna().all() and t.er_note.str.len().gt(0).all()


def test_plot_has_a_panel_per_setting_and_measure():
    runs, scores, c = _setup()
    t = repro_table([c], runs, scores, ["AP", "P@10"], depth=30)
    fig = plot_differences(t, scores, ["AP", "P@10"])
    assert len(fig.axes) == 4


def _folder(root, runs, scores):
    for name, run in runs.items():
        (root / "runs" / "c").mkdir(parents=True, exist_ok=True)
        write_run(run, root / "runs" / "c" / f"{name}.run")
    (root / "scores").mkdir(exist_ok=True)
    write_scores(scores, root / "scores" / "c.tsv")
    return root


def test_compare_versions_says_identical_only_when_it_is(tmp_path):
    runs, scores, _ = _setup()
    a = _folder(tmp_path / "a", runs, scores)
    b = _folder(tmp_path / "b", runs, scores)
    t, s = compare_versions(a, b, depth=30)
    assert s["identical"] and s["runs"] == 4 and (t.verdict == "OK").all() and (t.ktu == 1.0).all()
    c = _folder(tmp_path / "c", {**runs, "o-b": _run(9)}, scores)  # one run's documents differ
    t, s = compare_versions(a, c, depth=30)
    assert not s["identical"] and s["identical_runs"] == 3
    assert t[t.original == "a/o-b"].ktu.iloc[0] < 0.5
    d = _folder(tmp_path / "d", {k: v for k, v in runs.items() if k != "o-a"}, scores)
    t, s = compare_versions(a, d, depth=30)
    assert not s["identical"] and s["only_in_a"] == ["c/o-a.run"]


def test_repro_versions_command(tmp_path, capsys):
    from irrepro.cli import main

    runs, scores, _ = _setup()
    a = _folder(tmp_path / "a", runs, scores)
    b = _folder(tmp_path / "b", runs, scores)
    assert main(["repro-versions", str(a), str(b)]) == 0
    assert capsys.readouterr().out.startswith("identical: 4 run files and 1 score tables")
    swapped = runs["o-b"].copy()
    top = swapped.groupby("query_id").score.idxmax()
    swapped.loc[top, "score"] = -1.0  # every topic's first document last: same documents, other order
    c = _folder(tmp_path / "c", {**runs, "o-b": swapped}, scores)
    assert main(["repro-versions", str(a), str(c), "-o", str(tmp_path / "t.csv")]) == 1
    out = capsys.readouterr().out
    assert "scores of the shared runs 8 OK, 0 OKish, 0 FAIL; 1 runs rank their documents differently (KTU < 1)" in out
    assert len(pd.read_csv(tmp_path / "t.csv")) == 8


def test_repro_versions_compares_every_score_table_and_names_what_is_on_one_side(tmp_path, capsys):
    """An import's score table (no runs behind it) that differs, or exists on one side only, and a measure one
    side's table has and the other's not: never "identical" (only run-backed tables were compared before), each
    named, exit status 1. A KTU just below 1 is never printed as 1."""
    from irrepro.cli import _ktu_cell, main
    from irrepro.core.scores import write_scores

    runs, scores, _ = _setup()
    a = _folder(tmp_path / "a", runs, scores)
    imp = pd.DataFrame({"collection": "imp", "system": "x", "topic": ["1", "2"], "measure": "AP", "value": [0.1, 0.2]})
    write_scores(imp, a / "scores" / "imp.tsv")
    b = _folder(tmp_path / "b", runs, scores)
    write_scores(imp.assign(value=[0.1, 0.25]), b / "scores" / "imp.tsv")
    t, s = compare_versions(a, b, depth=30)
    assert not s["identical"] and s["differing_tables"] == ["imp"] and s["score_tables"] == 2
    assert main(["repro-versions", str(a), str(b)]) == 1
    assert "score tables that differ: imp" in capsys.readouterr().out
    c = _folder(tmp_path / "c", runs, scores)  # the import missing
    t, s = compare_versions(a, c, depth=30)
    assert not s["identical"] and s["tables_only_in_a"] == ["imp"]
    assert main(["repro-versions", str(a), str(c)]) == 1
    assert f"only in {a}: 1 score tables (imp)" in capsys.readouterr().out
    d = _folder(tmp_path / "d", runs, scores)
    write_scores(pd.concat([imp, imp.assign(measure="P@10")]), d / "scores" / "imp.tsv")
    assert compare_versions(a, d, depth=30)[1]["measures_only"] == {"imp": {"a": [], "b": ["P@10"]}}
    assert main(["repro-versions", str(a), str(d)]) == 1
    assert f"score table imp: measures only in {d}: P@10" in capsys.readouterr().out
    e = _folder(tmp_path / "e", runs, scores)
    write_scores(imp, e / "scores" / "imp.tsv")
    assert compare_versions(a, e, depth=30)[1]["identical"]
    assert _ktu_cell(0.9999997) == "0.999999" and _ktu_cell(1.0) == "1" and _ktu_cell(0.5) == "0.500000"


def test_an_original_effect_within_its_noise_gives_no_er():
    """The original's baseline → advanced effect is 2e-4 (above the printed precision) in topic noise of 0.02: its
    t interval holds 0, ER's Fieller set is unbounded, and the point ratio is not reported."""
    runs, _, c = _setup()
    rng = np.random.default_rng(1)
    base = rng.uniform(0.2, 0.5, len(TOPICS))
    noise = rng.normal(0, 0.02, len(TOPICS))
    noise -= noise.mean()  # the mean effect is exactly 2e-4
    scores = _scores({"o-b": base, "o-a": base + 2e-4 + noise, "r-b": base, "r-a": base + 0.03 + noise})
    t = repro_table([c], runs, scores, ["AP"], depth=30)
    assert t.original_effect.iloc[0] == pytest.approx(2e-4)
    assert t.er.isna().all() and t.er_low.isna().all()
    assert t.er_note.str.contains("not distinguishable from 0").all()
    assert (t.original_effect_low < 0).all() and (t.original_effect_high > 0).all()
