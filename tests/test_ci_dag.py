"""Integration: the label stage and the CI paper's outputs in the DAG of config/test.yaml (the shared `dag` run).

Checks the labels tables against the label files they come from, Table 1's BM25 row against an independent
evaluation of the same ranking with ir_measures, the verify table's rows and claims, and that each CI setting is a
param of only the rules it affects.
"""
import json

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import REPO, dry_run_jobs, snakemake
from irrepro.core.evaluation import evaluate_run
from irrepro.core.trec import read_qrels

pytestmark = pytest.mark.integration
V = "results/test"


def _cfg():
    return yaml.safe_load((REPO / "config" / "test.yaml").read_text())


def test_pairs_and_file_labels(dag, mirror):
    cfg = _cfg()
    spec = cfg["labels"]["collections"]["dl19-pool"]
    pairs = pd.read_csv(dag / V / "labels/dl19-pool/pairs.tsv", sep="\t", dtype={"query_id": str, "doc_id": str})
    qrels = read_qrels(dag / V / "collections/dl19-pool/qrels.txt")
    assert pairs.query_id.nunique() == 43 and pairs.groupby("query_id")["rank"].max().max() == spec["depth"]
    judged = set(zip(qrels.query_id, qrels.doc_id))
    assert all(p in judged for p in zip(pairs.query_id, pairs.doc_id))  # judged_only: every pair has a grade
    lab = pd.read_csv(dag / V / "labels/dl19-pool/flant5-large.tsv", sep="\t", dtype={"query_id": str, "doc_id": str})
    assert list(lab.columns) == ["collection", "query_id", "doc_id", "labeler", "prompt_id", "p_0", "p_1", "p_2", "p_3"]
    assert len(lab) == len(pairs) and set(lab.labeler) == {"flant5-large"} and set(lab.prompt_id) == {"trecdl"}
    probs = lab[["p_0", "p_1", "p_2", "p_3"]].to_numpy()
    np.testing.assert_allclose(probs.sum(1), 1, atol=1e-5)
    # the file's hard grade is the mode, with smoothing 0.1 spread over the 4 grades
    f = pd.read_csv(mirror / "artifacts/trec-dl-llm-labels/dl2019_test_4prompts_flant5large.txt", sep=r"\s+",
                    header=None, names=["query_id", "it", "doc_id", "grade"], dtype=str)
    grade = dict(zip(zip(f.query_id, f.doc_id), f.grade.astype(int)))
    expected = np.array([grade[k] for k in zip(lab.query_id, lab.doc_id)])
    assert (probs.argmax(1) == expected).all()
    np.testing.assert_allclose(probs.max(1), 0.9 + 0.1 / 4, atol=1e-5)


def test_computed_labels_are_distributions(dag):
    path = dag / V / "labels/vaswani/smollm2.tsv"
    pytest.importorskip("transformers")
    lab = pd.read_csv(path, sep="\t")
    pairs = pd.read_csv(dag / V / "labels/vaswani/pairs.tsv", sep="\t")
    spec = _cfg()["labels"]["collections"]["vaswani"]
    assert len(lab) == len(pairs) == spec["depth"] * pairs.query_id.nunique()
    assert pairs.query_id.nunique() == spec["max_queries"]
    np.testing.assert_allclose(lab[["p_0", "p_1"]].sum(1), 1, atol=1e-5)


def test_agreement_tables(dag):
    for c, labelers in (("vaswani", ["smollm2", "minilm"]), ("dl19-pool", ["flant5-large", "llama3-70b"])):
        summary = pd.read_csv(dag / V / f"labels/agreement_{c}.csv")
        pairs = pd.read_csv(dag / V / f"labels/{c}/pairs.tsv", sep="\t")
        assert summary.labeler.tolist() == labelers and (summary.pairs == len(pairs)).all()
        assert summary.kappa.between(-1, 1).all() and summary.exact.between(0, 1).all()
        conf = pd.read_csv(dag / V / f"labels/confusion_{c}.csv")
        assert conf.groupby("labeler").sum(numeric_only=True).drop(columns="human").sum(1).eq(len(pairs)).all()
        assert "Cohen" not in summary.columns and (dag / V / f"labels/agreement_{c}.md").read_text().count(
            "Confusion matrix") == len(labelers)
    table = pd.read_csv(dag / V / "labels/agreement.csv")
    assert list(zip(table.collection, table.labeler)) == [("dl19-pool", "flant5-large"), ("dl19-pool", "llama3-70b"),
                                                          ("vaswani", "smollm2"), ("vaswani", "minilm")]
    assert table.pairs_per_s.iloc[:2].isna().all()  # label files: no labelling, no speed
    assert table.per_query_spearman.between(-1, 1).all() and table.kendall_tau_b.between(-1, 1).all()


def test_table1_bm25_row_matches_ir_measures(dag):
    pairs = pd.read_csv(dag / V / "labels/dl19-pool/pairs.tsv", sep="\t", dtype={"query_id": str, "doc_id": str})
    run = pairs.assign(score=-pairs["rank"].astype(float))
    qrels = read_qrels(dag / V / "collections/dl19-pool/qrels.txt")
    dcg = evaluate_run(run, qrels, ["DCG@10"])
    t = pd.read_csv(dag / V / "ci/table1_dl19-pool.csv")
    ours = t[(t.ranker == "BM25") & (t.labeler == "flant5-large")].human.iloc[0]
    assert ours == pytest.approx(dcg.value.mean(), abs=1e-3)
    # Perfect >= every ranker by human labels; each LLM ranker is the best by its own labels
    for labeler, d in t.groupby("labeler"):
        d = d.set_index("ranker")
        assert d.loc["Perfect", "human"] >= d.human.max() - 1e-9
        assert d.loc["LLM", "llm"] >= d.llm.max() - 1e-9


def test_ci_verify_rows_and_figures(dag):
    cfg = _cfg()
    v = pd.read_csv(dag / V / "ci/verify.csv")
    combos = [(c, l) for c in cfg["ci"]["collections"] for l in cfg["labels"]["collections"][c]["labelers"]]
    for c, l in combos:
        for claim in ("ppi_covers_at_mid_n", "crc_covers_at_mid_n", "ppi_covers_at_max_n", "crc_covers_at_max_n",
                      "crc_narrower_than_bootstrap_at_max_n"):
            row = v[v["item"] == f"fig2/{c}/{l}/{claim}"]
            assert len(row) == 1 and str(row.reproduced.iloc[0]) in ("True", "False"), claim
        assert (dag / V / f"ci/fig2_{c}_{l}.png").stat().st_size > 10_000
        assert (dag / V / f"ci/fig4_{c}_{l}.png").exists()
        s = pd.read_csv(dag / V / f"ci/fig2_{c}_{l}.csv")
        assert set(s.method) == {"bootstrap", "ppi", "crc"}
        assert (s.runs == cfg["ci"]["repetitions"]).all()
        assert s.coverage.between(0, 1).all() and (s.width > 0).all()
        # more labelled queries, narrower bootstrap intervals
        b = s[s.method == "bootstrap"].sort_values("n")
        assert b.width.iloc[-1] < b.width.iloc[0]
    assert not v.reproduced.isna().any(), v[v.reproduced.isna()]
    # the human-label Table 1 row of TREC-DL is there with the paper's number
    row = v[v["item"] == "table1/dl19-pool/human/BM25"].iloc[0]
    assert float(row.paper) == 8.25 and 5 < float(row.reproduced) < 15
    vals = json.loads((dag / V / "ci/values/table1_dl19-pool.json").read_text())
    assert vals["table1/dl19-pool/human_order_Random<BM25<Perfect"] is True


def test_changing_fig4_zetas_reruns_only_fig4(dag, tmp_path):
    """ci.fig4_zetas is a param of ci_fig4 only: Fig 2, Fig 3 and Table 1 are not scheduled again."""
    cfg = _cfg()
    cfg["ci"]["fig4_zetas"] = [0.0, 0.25]
    p = tmp_path / "changed.yaml"
    p.write_text(yaml.safe_dump(cfg))
    for triggers in ([], ["--rerun-triggers", "params"]):
        jobs = dry_run_jobs(snakemake(dag, "-n", "--cores", "1", *triggers, config=p).stdout)
        rules = {r for r, _ in jobs}
        fig4 = sorted(w for r, w in jobs if r == "ci_fig4")
        combos = [(c, l) for c in cfg["ci"]["collections"] for l in cfg["labels"]["collections"][c]["labelers"]]
        assert fig4 == sorted(f"collection={c}, labeler={l}" for c, l in combos), fig4
        # what consumes Fig 4's outputs (the verify table, its summary, the targets) may follow, and provenance.json,
        # which records the whole config by design, and the cost table, which follows every job; nothing else
        assert rules <= {"ci_fig4", "verify", "verify_summary", "provenance", "cost", "ci_all", "all"}, rules


@pytest.mark.parametrize("key, value, affected", [
    ("split", "resplit", {"ci_fig2", "ci_fig3"}),
    ("target", "all", {"ci_fig2", "ci_fig3"}),
    ("bootstrap", "percentile", {"ci_fig2", "ci_fig3"}),
    # the self-preference and judge-audit score tables are the CI paper's evaluator's, with its label gain
    ("label_gain", "expected_gain", {"ci_table1", "ci_fig2", "ci_fig3", "ci_fig4", "labels_self_preference",
                                     "labels_audit_one", "labels_audit"}),
])
def test_protocol_keys_rerun_only_what_they_change(dag, tmp_path, key, value, affected):
    """The protocol keys (docs/ci.md, "Readings") are params of exactly the rules they change."""
    cfg = _cfg()
    cfg["ci"][key] = value
    p = tmp_path / "changed.yaml"
    p.write_text(yaml.safe_dump(cfg))
    jobs = dry_run_jobs(snakemake(dag, "-n", "--cores", "1", config=p).stdout)
    rules = {r for r, _ in jobs}
    assert affected <= rules, (key, rules)
    assert rules <= affected | {"verify", "verify_summary", "provenance", "cost", "ci_all", "all"}, (key, rules)
