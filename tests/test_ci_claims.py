"""The CI paper's analyses and claims as library functions (irrepro.papers.ci.analysis, .claims): the pass/fail
thresholds on small hand-made summaries, Fig 4's split, Table 1's values and layout."""
import numpy as np
import pandas as pd
import pytest

from irrepro.papers.ci import analysis, claims
from irrepro.papers.ci.summary import summarise, wilson


def summary(by, rows):
    cols = ["method", by, "width", "coverage", "coverage_lo", "coverage_hi"]
    return pd.DataFrame(rows, columns=cols)


def test_fig2_claims_thresholds():
    s = summary("n", [("bootstrap", 5, 9.0, 0.80, 0.70, 0.88), ("ppi", 5, 8.0, 0.9, 0.8, 0.96),
                      ("crc", 5, 7.0, 0.9, 0.8, 0.96), ("bootstrap", 20, 4.0, 0.93, 0.85, 0.97),
                      ("ppi", 20, 3.5, 0.90, 0.86, 0.949), ("crc", 20, 3.0, 0.96, 0.9, 0.99)])
    v = claims.fig2_claims(s, "c", "l", [5, 20], 0.05)
    assert v["fig2/c/l/ppi_covers_at_max_n"]["value"] is False  # Wilson upper 0.949 < 0.95
    assert v["fig2/c/l/crc_covers_at_max_n"]["value"] is True
    assert v["fig2/c/l/bootstrap_undercovers_at_min_n"]["value"] is True
    assert v["fig2/c/l/crc_narrower_than_bootstrap_at_max_n"]["value"] is True
    assert v["fig2/c/l/ppi_covers_at_max_n"]["note"] == "ppi coverage at n=20: 0.900 (Wilson 0.860-0.949)"
    assert v["fig2/c/l/crc_narrower_than_bootstrap_at_max_n"]["note"] == \
        "mean width at n=20: CRC 3.00, bootstrap 4.00, PPI 3.50"


def test_fig3_claims_thresholds():
    bs = summary("beta", [("ppi", 0.0, 3.0, 0.95, 0.9, 0.98), ("crc", 0.0, 2.0, 0.96, 0.9, 0.99),
                          ("ppi", 1.0, 3.2, 0.90, 0.85, 0.94), ("crc", 1.0, 5.0, 0.97, 0.92, 0.99)])
    zs = summary("zeta", [("ppi", 0.0, 3.0, 0.95, 0.9, 0.98), ("crc", 0.0, 2.0, 0.96, 0.9, 0.99),
                          ("ppi", 1.0, 1.0, 0.95, 0.9, 0.98), ("crc", 1.0, 0.1, 1.0, 0.95, 1.0)])
    v = claims.fig3_claims(bs, zs, "c", "l", [0.0, 1.0], [0.0, 1.0], 0.05)
    assert v["fig3/c/l/coverage_kept_under_bias"] == {
        "value": False, "note": "lowest: ppi at beta=1, coverage 0.900 (Wilson up to 0.940)"}
    assert v["fig3/c/l/crc_wider_under_full_bias"]["value"] is True
    assert v["fig3/c/l/crc_width_vanishes_with_oracle"]["value"] is False  # 0.1 is not < 5% of 2.0
    assert v["fig3/c/l/ppi_narrows_with_oracle"]["value"] is True
    zs.loc[zs.method.eq("crc") & zs.zeta.eq(1.0), "width"] = 0.099
    assert claims.fig3_claims(bs, zs, "c", "l", [0.0, 1.0], [0.0, 1.0], 0.05)[
        "fig3/c/l/crc_width_vanishes_with_oracle"]["value"] is True


def test_fig4_claims_thresholds():
    per_query = pd.DataFrame({"zeta": [0.0] * 20 + [0.5] * 20, "covered": [True] * 18 + [False] * 2 + [True] * 20,
                              "width": [2.0] * 20 + [1.0] * 20})
    v = claims.fig4_claims(per_query, "c", "l", [0.0, 0.5], 0.05)
    assert v["fig4/c/l/per_query_coverage"] == {"value": wilson(18, 20)[1] >= 0.95,
                                                "note": "18/20 test queries covered"}
    assert v["fig4/c/l/per_query_widths_shrink_with_oracle"] is True


def test_fig4_split_and_fig3_n():
    cal, test = analysis.fig4_split(11, seed=5)
    assert len(cal) == 5 and len(test) == 6 and sorted(np.concatenate([cal, test])) == list(range(11))
    perm = np.random.default_rng(np.random.SeedSequence(5, spawn_key=(4,))).permutation(11)
    assert list(cal) == list(perm[:5]) and list(test) == list(perm[5:])
    cal3, test3 = analysis.fig4_split(11, seed=5, n_cal=3)
    assert list(cal3) == list(cal[:3]) and list(test3) == list(test)
    assert list(analysis.fig4_split(11, seed=5, n_cal=50)[0]) == list(cal)
    assert analysis.fig3_n(11, None) == 5 and analysis.fig3_n(11, 3) == 3 and analysis.fig3_n(11, 9) == 5


def test_fig2_runs_drops_n_beyond_the_validation_half():
    rng = np.random.default_rng(0)
    N, depth, G = 12, 3, 2
    dists = rng.dirichlet(np.ones(G), size=(N, depth))
    u_true = rng.random(N)
    w = np.ones((N, depth))
    u_pred = (dists @ [0.0, 1.0] * w).sum(1)
    kw = dict(repetitions=2, seed=0, alpha=0.1, n_boot=100, batches=100, target="all")
    ns, runs = analysis.fig2_runs(u_true, dists, w, u_pred, n_values=[2, 4, 8], **kw)
    assert ns == [2, 4] and set(runs.n) == {2, 4}
    ns, _ = analysis.fig2_runs(u_true, dists, w, u_pred, n_values=[7, 8], **kw)
    assert ns == [6]
    s = summarise(runs, "n")
    assert list(s.columns[:2]) == ["method", "n"] and set(s.method) == {"bootstrap", "ppi", "crc"}


def test_table1_values_and_layout():
    pairs = pd.DataFrame({"query_id": ["1"] * 3 + ["2"] * 3, "doc_id": list("abcdef"), "rank": [1, 2, 3] * 2,
                          "relevance": [1, 0, 0, 1, 0, 1]})

    def labels(p1):  # P(grade 1) of each pair
        return pd.DataFrame({"query_id": pairs.query_id, "doc_id": pairs.doc_id, "p_0": 1 - np.array(p1),
                             "p_1": p1})

    long, results = analysis.table1_long(pairs, {"x": labels([0.9, 0.1, 0.8, 0.2, 0.3, 0.6]),
                                                 "y": labels([0.5] * 6)}, "c", 10)
    assert list(long.columns) == ["collection", "labeler", "ranker", "human", "llm"]
    assert len(long) == 8  # 2 labelers x 4 rankers
    v = claims.table1_values(long, results, "c")
    assert v["table1/c/human/Perfect"] == pytest.approx((1 + 1 + 1 / np.log2(3)) / 2)  # q2: grades 1, 1 first
    assert v["table1/c/human_order_Random<BM25<Perfect"] is True
    assert v["table1/c/x/llm_labels_overrate_BM25"] == (results["x"]["BM25"]["llm"] > results["x"]["BM25"]["human"])
    assert v["table1/c/y/human/LLM"] == results["y"]["LLM"]["human"]
    wide = analysis.table1_wide(long, ["x", "y"])
    assert list(wide.ranker) == ["Random", "BM25", "LLM ranker (x)", "LLM ranker (y)", "Perfect"]
    assert list(wide.columns) == ["ranker", "human labels", "x labels", "y labels"]
    assert wide.loc[2, "y labels"] is None or np.isnan(wide.loc[2, "y labels"])  # x's ranker judged by y: empty
