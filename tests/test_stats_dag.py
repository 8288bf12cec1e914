"""Integration: the stats stage in the DAG of config/test.yaml (the shared `dag` run): a folder per collection and
import; vaswani AP's paired t p-values and Holm / BH adjustments (a family per baseline) equal scipy / statsmodels
recomputed from the score table; the TREC DL 2019 runs against a BM25 of the judged pool's population (a baseline
from another collection); TREC-8 ad hoc AP's E ρ² and Φ equal statsmodels' two-way ANOVA."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from irrepro.core.scores import read_scores, to_matrix

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.integration
CFG = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
V = Path("results") / CFG["version"]


def test_every_collection_and_import_has_its_stats(dag):
    for c in [*CFG["collections"], *CFG["imports"]]:
        d = dag / V / "stats" / c
        for f in ("reliability.csv", "power.csv", "swaps.csv", "dstudy.png", "dstudy.pdf"):
            assert (d / f).is_file(), d / f
        measures = set(read_scores(dag / V / "scores" / f"{c}.tsv").measure)
        rel = pd.read_csv(d / "reliability.csv")
        assert set(rel.measure) == measures
        for m in measures:
            t = pd.read_csv(d / f"{m}.csv")
            assert set(t.test) == set(CFG["stats"].get("tests", ["t", "wilcoxon", "sign", "randomisation",
                                                                   "bootstrap", "tukey"]))
            assert ((t.p_value >= 0) & (t.p_value <= 1)).all() and (t.p_adjusted >= t.p_value - 1e-12).all()
            assert (d / f"{m}.png").is_file() and (d / f"{m}.md").is_file()


def test_vaswani_ap_t_and_holm_equal_scipy_statsmodels(dag, multipletests):
    mat = to_matrix(read_scores(dag / V / "scores" / "vaswani.tsv"), "AP")
    t = pd.read_csv(dag / V / "stats" / "vaswani" / "AP.csv", keep_default_na=False)
    bases = CFG["stats"]["baseline"]["vaswani"]
    assert len(bases) >= 2 and list(dict.fromkeys(t.baseline)) == bases
    md = (dag / V / "stats" / "vaswani" / "AP.md").read_text()
    for base in bases:
        tt = t[(t.test == "t") & (t.correction == "holm") & (t.baseline == base)]
        assert (tt.system_b == base).all() and len(tt) == mat.shape[1] - 1  # the baseline's family
        ref = np.array([stats.ttest_rel(mat[a], mat[b]).pvalue for a, b in zip(tt.system_a, tt.system_b)])
        np.testing.assert_allclose(tt.p_value, ref, rtol=0, atol=1e-9)
        np.testing.assert_allclose(tt.p_adjusted, multipletests(ref, method="holm")[1], rtol=0, atol=1e-9)
        bh = t[(t.test == "t") & (t.correction == "bh") & (t.baseline == base)]
        np.testing.assert_allclose(bh.p_adjusted, multipletests(ref, method="fdr_bh")[1], rtol=0, atol=1e-9)
        # signed: system − baseline
        np.testing.assert_allclose(tt.delta, (mat[tt.system_a].mean() - mat[base].mean()).to_numpy(), atol=1e-9)
        assert f"### Against baseline {base}" in md
    assert "| t p | t holm | t bh |" in md


def test_imported_runs_against_a_population_baseline(dag):
    base = CFG["stats"]["baseline"]["trec-dl2019-runs"][0]
    src, system = base.split("/", 1)
    runs = read_scores(dag / V / "scores" / "trec-dl2019-runs.tsv")
    pool = to_matrix(read_scores(dag / V / "scores" / f"{src}.tsv"), "AP")[system]
    mat = to_matrix(runs, "AP")
    t = pd.read_csv(dag / V / "stats" / "trec-dl2019-runs" / "AP.csv", keep_default_na=False)
    tt = t[(t.test == "t") & (t.correction == "holm")]
    assert (tt.system_b == base).all() and (tt.baseline == base).all() and set(tt.system_a) == set(mat.columns)
    topics = mat.join(pool.rename(base)).dropna().index  # the topics every run and the baseline have
    assert len(topics) == tt.n_topics.iloc[0] > 10
    want = mat.loc[topics, tt.system_a].mean() - pool[topics].mean()
    np.testing.assert_allclose(tt.delta, want.to_numpy(), atol=1e-9)
    ref = [stats.ttest_rel(mat.loc[topics, a], pool[topics]).pvalue for a in tt.system_a]
    np.testing.assert_allclose(tt.p_value, ref, rtol=0, atol=1e-9)


def test_trec8_ap_reliability_equals_statsmodels_anova(dag):
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    mat = to_matrix(read_scores(dag / V / "scores" / "trec8-adhoc.tsv"), "AP")
    long = mat.rename_axis(index="topic", columns="system").stack().rename("y").reset_index()
    a = sm.stats.anova_lm(smf.ols("y ~ C(system) + C(topic)", data=long).fit(), typ=2)
    ms = a["sum_sq"] / a["df"]
    n_t, n_s = mat.shape
    vs, vt, ve = (ms["C(system)"] - ms["Residual"]) / n_t, (ms["C(topic)"] - ms["Residual"]) / n_s, ms["Residual"]
    rel = pd.read_csv(dag / V / "stats" / "trec8-adhoc" / "reliability.csv").set_index("measure").loc["AP"]
    assert rel.n_topics == 50 and rel.n_systems == 129
    assert rel.e_rho2 == pytest.approx(vs / (vs + ve / n_t), abs=1e-6)
    assert rel.phi == pytest.approx(vs / (vs + (vt + ve) / n_t), abs=1e-6)
