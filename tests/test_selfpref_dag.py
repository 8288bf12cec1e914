"""Integration (config/test.yaml's DAG): the neural systems are ordinary population systems (run files, the score
table), their document encodings lie under their content key, and labels/self_preference.* is recomputable from
the run files, the qrels and the pool's labels."""
import json

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import REPO
from irrepro.core.trec import read_qrels, read_run
import irrepro.selfpref as sp
from irrepro.plan import resolve
from irrepro.schema import validate_config

pytestmark = pytest.mark.integration
V = "results/test"


def _plan():
    c = yaml.safe_load((REPO / "config/test.yaml").read_text())
    validate_config(c, REPO / "workflow/schemas")
    return c, resolve(c, check_ids=False)


def test_neural_systems_are_population_systems(dag):
    config, plan = _plan()
    neural = config["population"]["neural"]["systems"]
    scores = pd.read_csv(dag / V / "scores/vaswani.tsv", sep="\t", dtype=str)
    assert set(neural) <= set(scores.system) and set(scores.system) == set(plan.systems["vaswani"])
    for s in neural:
        run = read_run(dag / V / f"runs/vaswani/{s}.run")
        assert run.groupby("query_id").size().max() == config["retrieval"]["depth"]
    index = dag / plan.neural_index("vaswani", "minilm-l6-v2")
    meta = json.loads((index / "meta.json").read_text())
    # config/test.yaml's population.neural.max_docs, in float32 (no dtype in the settings: the default)
    assert meta["n_docs"] == config["population"]["neural"]["max_docs"] == 1000 and "dtype" not in meta["settings"]
    assert set(read_run(dag / V / f"runs/vaswani/{neural[0]}.run").doc_id) <= set(np.load(index / "doc_ids.npy"))
    # the re-ranker keeps BM25's documents below its top 20 in BM25's order
    bm25 = read_run(dag / V / "runs/vaswani/bm25_k1-0.9_b-0.75.run")
    rr = read_run(dag / V / f"runs/vaswani/{neural[1]}.run")
    q = bm25.query_id.iloc[0]
    a = bm25[bm25.query_id == q].sort_values("rank").doc_id.tolist()
    b = rr[rr.query_id == q].sort_values("rank").doc_id.tolist()
    assert set(a[:20]) == set(b[:20]) and a[20:] == b[20:] and a[:20] != b[:20]


def test_self_preference_is_recomputable_from_runs_qrels_and_labels(dag):
    config, plan = _plan()
    spc = plan.stages["selfpref"]
    settings, (c, spec), = spc["settings"], *spc["collections"].items()
    table = pd.read_csv(dag / V / "labels/self_preference.csv", dtype={"system": str})
    assert list(table.columns[:10]) == ["collection", "labeler", "system", "same_model", "measure", "by_labels",
                                        "by_humans", "bias", "bias_low", "bias_high"]
    assert set(table.labeler) == set(spec["labelers"]) == {"minilm"}
    assert len(table) == len(spec["systems"]) * len(settings["measures"])
    flags = spec["same_model"]["minilm"]
    assert dict(zip(table.system, table.same_model)) == flags and sum(flags.values()) == 2
    labels = pd.read_csv(dag / V / f"labels/{c}/self_preference/minilm/labels.tsv", sep="\t",
                         dtype={"query_id": str, "doc_id": str})
    runs = {s: read_run(dag / V / f"runs/{c}/{s}.run") for s in spec["systems"]}
    qrels = read_qrels(dag / V / f"collections/{c}/qrels.txt")
    h, lab = sp.label_score_tables(runs, qrels, labels, settings["measures"], collection=c,
                                   label_gain=config["ci"]["label_gain"])
    want = sp.self_preference_table(h, lab, flags, labeler="minilm", n_boot=settings["n_boot"],
                                    seed=settings["seed"])
    got = table.drop(columns="collection")
    key = ["measure", "system"]
    pd.testing.assert_frame_equal(got.sort_values(key).reset_index(drop=True)[want.columns],
                                  want.sort_values(key).reset_index(drop=True), check_dtype=False)
    # the labels cover every pair of every system's top `depth` (an unlabelled pair would have been an error)
    pool = pd.read_csv(dag / V / f"labels/{c}/self_preference/minilm/pairs.tsv", sep="\t", dtype=str)
    assert len(pool) == len(labels) and set(pool.query_id) == set(qrels.query_id.astype(str))
    rank = pd.read_csv(dag / V / "labels/self_preference_ranking.csv")
    assert set(rank.subset) == {"all", "without_same_model"}
    assert (rank[rank.subset == "without_same_model"].systems == 2).all()
    cov = pd.read_csv(dag / V / "labels/self_preference_coverage.csv")
    draws = settings["coverage"]["draws"]
    n = cov.groupby(["measure", "method", "group"]).apply(lambda g: int((g.intervals + g.no_interval).sum()))
    assert set(n.xs("same_model", level="group")) == {2 * draws} and set(n.xs("other", level="group")) == {2 * draws}
    assert np.isfinite(pd.read_csv(dag / V / "labels/self_preference_gap.csv").gap).all()
    assert (dag / V / "labels/self_preference.png").stat().st_size > 10_000


def test_a_damaged_index_is_refused_by_name_and_encoded_again_at_the_next_run(dag, tmp_path):
    """A neural_run job that finds its index damaged (32 flipped bytes in vectors.npy) fails naming the file and
    moves the index folder aside; the next run then finds neural_index's output missing and schedules it again.
    On a copy of the shared run (the copy keeps mtimes: only what the damage concerns is rerun)."""
    import shutil

    from conftest import snakemake

    for part in ("results", "resources", ".snakemake"):
        shutil.copytree(dag / part, tmp_path / part, symlinks=True)
    _, plan = _plan()
    index = tmp_path / plan.neural_index("vaswani", "minilm-l6-v2")
    f = index / "vectors.npy"
    raw = bytearray(f.read_bytes())
    raw[-40:-8] = bytes(b ^ 0xFF for b in raw[-40:-8])
    f.write_bytes(bytes(raw))
    target = f"{V}/runs/vaswani/minilm-l6-v2.run"
    # --forcerun and --rerun-triggers take every value up to the next option: the target after --cores
    out = snakemake(tmp_path, "--forcerun", "neural_run", "--rerun-triggers", "mtime", "--cores", "1", target,
                    check=False)
    assert out.returncode != 0
    log = (tmp_path / f"{V}/logs/neural_run/vaswani/minilm-l6-v2.log").read_text()
    rel = f.relative_to(tmp_path)  # the job's paths are relative to its working directory
    assert f"{rel}: does not match the sha256 meta.json records" in log and f"moved aside to {index.relative_to(tmp_path)}.damaged-" in log, log[-2000:]
    assert not index.exists() and len(list(index.parent.glob(f"{index.name}.damaged-*"))) == 1
    dry = snakemake(tmp_path, "-n", "--rerun-triggers", "mtime", "--cores", "1", target).stdout
    assert "neural_index" in dry and "neural_run" in dry, dry[-2000:]


def test_every_population_run_has_its_ir_metadata(dag):
    """runs/<collection>/ir-metadata/<system>.yml (ir_metadata 0.1, PRIMAD): the run's md5, the collection's
    topics and qrels md5s, each ranking stage with its parameters, the code's commit; research goal and actor left
    for the user."""
    import hashlib

    config, plan = _plan()
    for s in plan.systems["vaswani"]:
        meta = yaml.safe_load((dag / V / f"runs/vaswani/ir-metadata/{s}.yml").read_text())
        run = (dag / V / f"runs/vaswani/{s}.run").read_bytes()
        assert meta["tag"] == s and meta["data"]["run md5"] == hashlib.md5(run).hexdigest()
        assert meta["data"]["test collection"]["qrels md5"] == hashlib.md5(
            (dag / V / "collections/vaswani/qrels.txt").read_bytes()).hexdigest()
        assert meta["method"]["depth"] == config["retrieval"]["depth"]
        assert [st["name"] for st in meta["method"]["retrieval"]] == s.split("+")
        assert set(meta) >= {"platform", "research goal", "implementation", "method", "actor", "data"}
    rr = yaml.safe_load((dag / V / "runs/vaswani/ir-metadata/bm25_k1-0.9_b-0.75+minilm-l6-v2-rerank_k-10.yml")
                        .read_text())["method"]["retrieval"]
    assert rr[1]["params"] == {"k": 10} and rr[1]["reranks"] == "bm25_k1-0.9_b-0.75"
