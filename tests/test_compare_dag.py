"""Integration: `irrepro compare` on the test DAG's vaswani runs gives the stats stage's numbers, in seconds."""
import time

import pandas as pd
import pytest

from irrepro.cli import main
from irrepro.stats.experiment import experiment

pytestmark = pytest.mark.integration
V = "results/test"
BASE = "bm25_k1-0.9_b-0.75"


def test_compare_equals_the_stats_stage_on_the_dags_runs(dag, tmp_path, capsys):
    systems = sorted(pd.read_csv(dag / V / "scores/vaswani.tsv", sep="\t").system.unique())
    runs = [dag / V / f"runs/vaswani/{s}.run" for s in systems]
    qrels = dag / V / "collections/vaswani/qrels.txt"
    _, pairs, _ = experiment(runs, qrels, baseline=BASE, measures=["AP", "nDCG@10"], test="t", correction="holm",
                             seed=23, n_permutations=199, n_bootstrap=199, collection="vaswani")
    for m in ("AP", "nDCG@10"):
        st = pd.read_csv(dag / V / f"stats/vaswani/{m}.csv")
        st = st[(st.baseline == BASE) & (st.test == "t") & (st.correction == "holm")].set_index("system_a")
        ours = pairs[pairs.measure == m].set_index("system_a").loc[st.index]
        assert len(st) == len(systems) - 1
        for col in ("mean_a", "mean_b", "delta", "p_value", "p_adjusted", "effect_size"):
            pd.testing.assert_series_equal(ours[col].astype(float), st[col].astype(float), rtol=1e-9, check_names=False)
        assert (ours.significant == st.significant).all()
    # a resampling test too: the stats stage's per-measure seeds and family generators, so the same p-values
    _, pairs, _ = experiment(runs, qrels, baseline=BASE, measures=["AP"], test="randomisation", correction="holm",
                             seed=23, n_permutations=199, n_bootstrap=199, collection="vaswani")
    st = pd.read_csv(dag / V / "stats/vaswani/AP.csv")
    st = st[(st.baseline == BASE) & (st.test == "randomisation") & (st.correction == "holm")].set_index("system_a")
    pd.testing.assert_series_equal(pairs.set_index("system_a").loc[st.index, "p_value"], st.p_value, rtol=1e-9,
                                   check_names=False)
    t0 = time.monotonic()
    assert main(["compare", *map(str, runs), "--qrels", str(qrels), "--baseline", BASE,
                 "--measures", "AP", "nDCG@10", "P@10", "--latex", str(tmp_path / "t.tex")]) == 0
    seconds = time.monotonic() - t0
    assert seconds < 10, seconds
    assert capsys.readouterr().out.count("\n| ") == len(systems) + 1  # the header's separator and a row per system


def test_the_stats_stage_writes_every_measure_in_one_table_per_baseline(dag):
    """stats/<collection>/summary.{csv,md,tex}: irrepro compare's table (pt.Experiment's layout) of every measure,
    one per baseline of stats.baseline, under the first test (t) and the first correction (holm): its values equal
    `experiment`'s on the same runs, and the LaTeX holds one booktabs table per baseline."""
    systems = sorted(pd.read_csv(dag / V / "scores/vaswani.tsv", sep="\t").system.unique())
    runs = [dag / V / f"runs/vaswani/{s}.run" for s in systems]
    qrels = dag / V / "collections/vaswani/qrels.txt"
    table, _, _ = experiment(runs, qrels, baseline=BASE, measures=["AP", "nDCG@10"], test="t", correction="holm",
                             seed=23, n_permutations=199, n_bootstrap=199, collection="vaswani")
    s = pd.read_csv(dag / V / "stats/vaswani/summary.csv", keep_default_na=False, na_values=[""])
    assert list(s.baseline.unique()) == [BASE, "dph"]  # config/test.yaml's stats.baseline.vaswani, in its order
    mine = s[s.baseline == BASE].reset_index(drop=True)
    assert mine.system.iloc[0] == BASE and set(mine.system) == set(table.system)  # the baseline first
    mine, table = mine.set_index("system"), table.set_index("system").loc[mine.system]
    for col in ("AP", "AP Δ", "AP p", "AP p holm", "AP d_z", "nDCG@10", "nDCG@10 Δ", "nDCG@10 p holm"):
        pd.testing.assert_series_equal(mine[col].astype(float), table[col].astype(float), rtol=1e-9, check_names=False)
    assert (mine["AP sig"].fillna("") == table["AP sig"]).all()
    tex = (dag / V / "stats/vaswani/summary.tex").read_text()
    assert tex.count(r"\begin{tabular}") == tex.count(r"\bottomrule") == 2 and tex.count(r"\toprule") == 2
    md = (dag / V / "stats/vaswani/summary.md").read_text()
    assert md.count(f"against baseline {BASE}") == 1 and md.count("against baseline dph") == 1
