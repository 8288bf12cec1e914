"""irrepro compare / irrepro.compare: pt.Experiment's table from run files and qrels, checked against ir_measures,
scipy and statsmodels, its LaTeX's structure, the command line, and the examples of docs/compare.md."""
import re

import ir_measures
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import irrepro
from conftest import REPO
from irrepro.cli import main
from irrepro.core.trec import read_qrels, read_run
from irrepro.stats.experiment import experiment, to_latex

DATA = REPO / "tests/data/trec_eval"
RUNS = [DATA / f"{n}.run" for n in ("alpha", "beta", "gamma")]


def test_the_table_is_ir_measures_means_and_scipys_t_test_with_holm(multipletests):
    table, pairs, scores = experiment(RUNS, DATA / "qrels.txt", baseline="beta", measures=["AP", "nDCG@10"])
    assert table.system.tolist() == ["beta", "alpha", "gamma"]  # the baseline first, then the order given
    qrels = read_qrels(DATA / "qrels.txt")
    q = [ir_measures.Qrel(str(r.query_id), str(r.doc_id), int(r.relevance)) for r in qrels.itertuples()]
    per = {}
    for p in RUNS:
        run = read_run(p)
        r = [ir_measures.ScoredDoc(str(x.query_id), str(x.doc_id), float(x.score)) for x in run.itertuples()]
        # to 6 decimals, as the workflow's score tables (which the stats stage reads) hold them
        per[p.stem] = {m: {x.query_id: float(f"{x.value:.6f}")
                           for x in ir_measures.iter_calc([ir_measures.parse_measure(m)], q, r)}
                       for m in ("AP", "nDCG@10")}
    t = table.set_index("system")
    for m in ("AP", "nDCG@10"):
        topics = sorted(per["beta"][m])
        base = np.array([per["beta"][m][x] for x in topics])
        p_raw = []
        for s in ("alpha", "gamma"):
            v = np.array([per[s][m][x] for x in topics])
            assert t.loc[s, m] == pytest.approx(v.mean(), abs=1e-12)
            assert t.loc[s, f"{m} Δ"] == pytest.approx(v.mean() - base.mean(), abs=1e-12)
            p_raw.append(stats.ttest_rel(v, base).pvalue)
            assert t.loc[s, f"{m} p"] == pytest.approx(p_raw[-1], rel=1e-9)
        np.testing.assert_allclose(t.loc[["alpha", "gamma"], f"{m} p holm"], multipletests(p_raw, method="holm")[1],
                                   rtol=1e-9)
        assert np.isnan(t.loc["beta", f"{m} Δ"]) and t.loc["beta", f"{m} sig"] == ""
    assert set(pairs.system_b) == {"beta"} and set(scores.system) == {"alpha", "beta", "gamma"}


def test_marks_follow_the_corrected_p_value_and_the_sign(tmp_path):
    """A run that ranks each topic's relevant documents first (better than alpha on every topic) and one that ranks
    them last: ▲ / ▼ exactly where the corrected p-value is below alpha, by the sign of Δ; none at a tiny alpha."""
    qrels = read_qrels(DATA / "qrels.txt")
    alpha_run = read_run(RUNS[0])
    grade = dict(zip(zip(qrels.query_id.astype(str), qrels.doc_id.astype(str)), qrels.relevance))
    for name, sign in (("best", 1), ("worst", -1)):
        with open(tmp_path / f"{name}.run", "w") as f:
            for q, g in alpha_run.groupby("query_id"):
                docs = sorted(g.doc_id, key=lambda d: -sign * grade.get((str(q), str(d)), 0))
                for i, d in enumerate(docs):
                    f.write(f"{q} Q0 {d} {i + 1} {len(docs) - i} {name}\n")
    runs = [RUNS[0], tmp_path / "best.run", tmp_path / "worst.run"]
    for alpha in (0.2, 1e-9):
        table, _, _ = experiment(runs, DATA / "qrels.txt", baseline="alpha", measures=["AP"], alpha=alpha)
        for _, r in table.iloc[1:].iterrows():
            want = ("▲" if r["AP Δ"] > 0 else "▼") if r["AP p holm"] < alpha else ""
            assert r["AP sig"] == want, (alpha, r.to_dict())
        if alpha == 0.2:
            assert table["AP sig"].tolist() == ["", "▲", "▼"], table
        else:
            assert (table["AP sig"] == "").all()


def test_latex_is_a_booktabs_table_with_the_best_in_bold_and_the_marks():
    table = pd.DataFrame({"system": ["bm25_base", "x&y", "z"], "AP": [0.2, 0.31, 0.25], "AP sig": ["", "▲", "▼"],
                          "P@10": [0.4, 0.3, 0.5], "P@10 sig": ["", "", "▼"]})
    tex = to_latex(table, ["AP", "P@10"], baseline="bm25_base", test="t", correction="holm", alpha=0.05)
    lines = tex.splitlines()
    assert lines[:4] == [r"\begin{table}", r"\centering", r"\begin{tabular}{lrr}", r"\toprule"]
    assert [x for x in lines if x in (r"\toprule", r"\midrule", r"\bottomrule")] == [r"\toprule", r"\midrule",
                                                                                  r"\bottomrule"]
    body = lines[lines.index(r"\midrule") + 1:lines.index(r"\bottomrule")]
    assert len(body) == 3 and all(re.sub(r"\\&", "", x).count("&") == 2 and x.endswith(r"\\") for x in body)
    assert body[0].startswith(r"bm25\_base (baseline) & 0.2000 & 0.4000")
    assert body[1].startswith(r"x\&y & \textbf{0.3100}$^{\uparrow}$ & 0.3000")
    assert body[2] == r"z & 0.2500$^{\downarrow}$ & \textbf{0.5000}$^{\downarrow}$ \\"
    assert tex.count("{") == tex.count("}") and r"better / worse than bm25\_base (paired t test" in tex


def test_the_command_prints_and_writes_the_table(tmp_path, capsys):
    csv, tex = tmp_path / "t.csv", tmp_path / "t.tex"
    assert main(["compare", *map(str, RUNS), "--qrels", str(DATA / "qrels.txt"), "--baseline", "alpha",
                 "--measures", "AP", "-o", str(csv), "--latex", str(tex)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| system | AP | AP Δ | AP p | AP p holm | AP d_z | AP sig |") and "▲ / ▼" in out
    assert pd.read_csv(csv).system.tolist() == ["alpha", "beta", "gamma"]
    assert tex.read_text().startswith(r"\begin{table}")
    assert main(["compare", *map(str, RUNS), "--qrels", str(DATA / "qrels.txt"), "--baseline", "bm25"]) == 2
    assert "baseline 'bm25' is not among the runs' systems (alpha, beta, gamma)" in capsys.readouterr().err
    assert main(["compare", str(DATA), "--qrels", str(DATA / "qrels.txt")]) == 2  # a folder with a README
    assert "README.md:1: expected 6 fields" in capsys.readouterr().err


def test_the_package_call_is_the_table():
    t = irrepro.compare({"a": RUNS[0], "b": RUNS[1]}, DATA / "qrels.txt", baseline="a", measures=["AP"])
    assert t.system.tolist() == ["a", "b"] and list(t.columns)[:3] == ["system", "AP", "AP Δ"]


def test_the_docs_examples_run(monkeypatch, capsys):
    """Every Python block of docs/compare.md runs as it is, from the repository's root."""
    monkeypatch.chdir(REPO)
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "docs/compare.md").read_text(), re.S)
    assert len(blocks) >= 2
    for b in blocks:
        exec(compile(b, "docs/compare.md", "exec"), {})
    assert r"\begin{tabular}" in capsys.readouterr().out
