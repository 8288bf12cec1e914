"""Integration: the judge audit in the DAG of config/test.yaml (the shared `dag` run), recomputed from the
per-topic score tables it writes with scipy and statsmodels."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from irrepro.core.scores import read_scores, to_matrix
from irrepro.stats.rankcorr import tau_ap

pytestmark = pytest.mark.integration
V = "results/test"
UNITS = [("dl19-pool", "flant5-large"), ("vaswani", "minilm")]


def test_audit_tables_figure_and_score_tables(dag):
    r = pd.read_csv(dag / V / "labels/audit_rankings.csv", dtype={"top": str})
    d = pd.read_csv(dag / V / "labels/audit_decisions.csv")
    assert sorted(set(zip(r.collection, r.labeler))) == UNITS == sorted(set(zip(d.collection, d.labeler)))
    assert set(r.population) == set(d.population) == {"as-is", "judge-reranked"}
    assert (r.low <= r.tau_b + 1e-12).all() and (r.tau_b <= r.high + 1e-12).all()
    assert (d[["both_same", "both_none", "humans_only", "labels_only", "opposite"]].sum(axis=1) == d.pairs).all()
    assert (dag / V / "labels/audit.png").stat().st_size > 10_000 and "## vaswani, minilm" in (
        dag / V / "labels/audit.md").read_text()
    scores = pd.read_csv(dag / V / "scores/vaswani.tsv", sep="\t")
    for c, lab in UNITS:
        for name in (lab, f"{lab}.humans"):
            t = pd.read_csv(dag / V / f"labels/scores/{c}/{name}.tsv", sep="\t")
            assert list(t.columns) == list(scores.columns) and set(t.measure) == {"DCG@2", "nDCG@2"}
            read_scores(dag / V / f"labels/scores/{c}/{name}.tsv")  # a table the stats stage reads


@pytest.mark.parametrize("collection, labeler", UNITS)
def test_audit_recomputed_from_the_per_topic_tables(dag, multipletests, collection, labeler):
    """τ_b (scipy), τ_AP and the t-test + Holm decision counts (scipy, statsmodels) of the systems as they are,
    recomputed from the two per-topic tables the audit wrote, equal its rows."""
    r = pd.read_csv(dag / V / "labels/audit_rankings.csv", dtype={"top": str})
    d = pd.read_csv(dag / V / "labels/audit_decisions.csv")
    base = dag / V / f"labels/scores/{collection}/{labeler}"
    by_l, by_h = read_scores(f"{base}.tsv"), read_scores(f"{base}.humans.tsv")
    for m in ("DCG@2", "nDCG@2"):
        H, L = to_matrix(by_h, m), to_matrix(by_l, m)
        L = L.loc[H.index, H.columns]
        row = r[(r.collection == collection) & (r.labeler == labeler) & (r.measure == m) & (r.population == "as-is")
                & (r.top == "all")].iloc[0]
        assert row.tau_b == pytest.approx(stats.kendalltau(H.mean(), L.mean(), variant="b").statistic, abs=1e-12)
        assert row.tau_ap == pytest.approx(tau_ap(H.mean().to_numpy(), L.mean().to_numpy()), abs=1e-12)
        S = H.shape[1]
        i, j = np.triu_indices(S, 1)

        def decisions(X):
            X = X.to_numpy()
            with np.errstate(invalid="ignore", divide="ignore"):
                p = np.array([stats.ttest_rel(X[:, a], X[:, b]).pvalue for a, b in zip(i, j)])
            p = np.where(np.isnan(p), 1.0, p)  # identical systems: no difference
            return np.where(multipletests(p, alpha=0.05, method="holm")[0],
                            np.sign(X[:, i].mean(0) - X[:, j].mean(0)), 0)
        h, lab = decisions(H), decisions(L)
        want = {"pairs": len(i), "both_same": int(((h != 0) & (h == lab)).sum()),
                "both_none": int(((h == 0) & (lab == 0)).sum()), "humans_only": int(((h != 0) & (lab == 0)).sum()),
                "labels_only": int(((h == 0) & (lab != 0)).sum()), "opposite": int(((h != 0) & (lab != 0) & (h != lab)).sum())}
        got = d[(d.collection == collection) & (d.labeler == labeler) & (d.measure == m) & (d.population == "as-is")
                & (d.test == "t") & (d.correction == "holm")].iloc[0]
        assert {k: int(got[k]) for k in want} == want, (m, want)
