"""Integration: the DAG on config/test.yaml through Snakemake, offline from the mirror, in a fresh directory.

Also: a second run does nothing; changing one grid value reruns only what depends on it; bad configs and bad
user files fail early with a message naming the key / file:line, and leave no half-written output.
"""
import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from irrepro.core.scores import read_scores, to_matrix

from conftest import dry_run_jobs, snakemake

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.integration


def test_spine_outputs(dag):
    cfg = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
    v = dag / "results" / cfg["version"]
    s = read_scores(v / "scores" / "vaswani.tsv")
    assert list(s.columns) == ["collection", "system", "topic", "measure", "value"]
    assert set(s.measure) == set(cfg["measures"])
    assert s.topic.nunique() == 93
    n_base = 2 + 1 + 1  # bm25 x2, dph, qld x1 in config/test.yaml
    n_neural = len(cfg["population"]["neural"]["systems"])  # minilm-l6-v2 and a re-ranker of BM25
    assert n_neural == 2
    assert s.system.nunique() == 2 * n_base + n_neural  # each classic one with and without RM3
    ap = to_matrix(s, "AP")
    assert ap.notna().all().all() and (ap.values >= 0).all() and (ap.values <= 1).all()
    assert 0.2 < ap["bm25_k1-1.2_b-0.75"].mean() < 0.4  # BM25 MAP on vaswani is about 0.29 at depth 1000
    runs = sorted((v / "runs" / "vaswani").glob("*.run"))
    assert len(runs) == 2 * n_base + n_neural
    first = runs[0].read_text().splitlines()[0].split()
    assert len(first) == 6 and first[1] == "Q0"
    t8 = to_matrix(read_scores(v / "scores" / "trec8-adhoc.tsv"), "AP")
    assert t8.shape[0] == 50
    dl = read_scores(v / "scores" / "trec-dl2019-runs.tsv")
    assert set(dl.measure) == {"AP", "P@10"} and dl.topic.nunique() == 43
    prov = json.loads((v / "provenance.json").read_text())
    assert prov["config"]["version"] == cfg["version"]
    assert {"numpy", "snakemake", "pyterrier-pisa"} <= set(prov["packages"])
    assert any(k.endswith("adhoc8_ap.csv") for k in prov["inputs_md5"])
    assert all(re.fullmatch(r"[0-9a-f]{32}", h) for h in prov["inputs_md5"].values())
    for rule in ("index", "run", "evaluate", "fetch_collection"):
        assert list((v / "logs" / rule).rglob("*.log")), f"no log for rule {rule}"


def test_second_run_does_nothing(dag):
    p = snakemake(dag, "-n", "--cores", "1")
    assert "Nothing to be done" in p.stdout + p.stderr


def test_a_second_config_in_the_same_clone_leaves_the_first_complete(dag):
    """Another version of the test config with other text processing (another index) and one with the same (the
    same index, shared): running both in the test run's directory leaves config/test.yaml with nothing to do."""
    from irrepro.plan import index_key

    cfg = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
    other = {**cfg, "version": "test-stem", "retrieval": {**cfg["retrieval"], "stemmer": "krovetz"}}
    same = {**cfg, "version": "test-same"}
    assert index_key(other, "vaswani") != index_key(cfg, "vaswani") == index_key(same, "vaswani")
    indexes = sorted(p.name for p in (dag / "resources" / "indexes").iterdir())
    for c in (other, same):
        p = dag / f"{c['version']}.yaml"
        p.write_text(yaml.safe_dump(c))
        out = snakemake(dag, "--cores", "2", f"results/{c['version']}/runs/vaswani/bm25_k1-0.9_b-0.75.run", config=p)
        ran = {r for r, _ in dry_run_jobs(out.stdout + out.stderr)}
        assert ("index" in ran) == (c is other), ran  # the same settings reuse the index
        assert (dag / "results" / c["version"] / "runs" / "vaswani" / "bm25_k1-0.9_b-0.75.run").stat().st_size
    assert sorted(p.name for p in (dag / "resources" / "indexes").iterdir()) == sorted(
        indexes + [f"vaswani-{index_key(other, 'vaswani')}.pisa"])
    p = snakemake(dag, "-n", "--cores", "1")
    assert "Nothing to be done" in p.stdout + p.stderr


def test_changing_one_grid_value_reruns_only_its_dependents(dag, tmp_path):
    cfg = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
    cfg["population"]["qld"]["mu"] = [1500]
    p = tmp_path / "changed.yaml"
    p.write_text(yaml.safe_dump(cfg))
    out = snakemake(dag, "-n", "--cores", "1", config=p)
    jobs = dry_run_jobs(out.stdout)
    runs = sorted(w for r, w in jobs if r == "run")
    assert runs == sorted(f"collection={c}, system={s}" for c in cfg["collections"]
                          for s in ("qld_mu-1500", "qld_mu-1500+rm3_fb-5_terms-10_lambda-0.5")), runs
    rules = {r for r, _ in jobs}
    assert not rules & {"index", "fetch_collection", "fetch_artifact", "import_scores"}, rules
    assert "evaluate" in rules


def _write_cfg(tmp_path, **changes):
    cfg = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
    cfg.update(changes)
    p = tmp_path / "cfg.yaml"
    p.write_text(yaml.safe_dump(cfg))
    return p


def test_unknown_collection_id_is_a_clear_error(tmp_path):
    p = _write_cfg(tmp_path, collections={"x": {"ir_datasets": "no-such-dataset"}})
    r = snakemake(tmp_path, "-n", config=p, check=False)
    assert r.returncode != 0
    assert "collections.x.ir_datasets: unknown ir_datasets id 'no-such-dataset'" in r.stdout + r.stderr


def test_grid_value_out_of_range_is_a_clear_error(tmp_path):
    cfg = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
    cfg["population"]["bm25"]["b"] = [1.5]
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(cfg))
    r = snakemake(tmp_path, "-n", config=p, check=False)
    assert r.returncode != 0
    assert "1.5 is greater than the maximum of 1" in r.stdout + r.stderr


def test_malformed_user_run_fails_with_file_and_line_and_no_output(tmp_path, mirror):
    runs = tmp_path / "myruns"
    runs.mkdir()
    (runs / "good.run").write_text("1 Q0 d1 1 2.0 good\n1 Q0 d2 2 1.0 good\n")
    (runs / "bad.run").write_text("1 Q0 d1 1 2.0 bad\n1 Q0 d2 two 1.0 bad\n")
    (tmp_path / "q.txt").write_text("1 0 d1 1\n1 0 d2 0\n")
    # only the spine: the paper, stats, repro and neural sections of config/test.yaml name collections this config
    # drops
    population = {k: v for k, v in yaml.safe_load((REPO / "config" / "test.yaml").read_text())["population"].items()
                  if k != "neural"}
    p = _write_cfg(tmp_path, collections={}, papers=[], querymodels={"collections": []}, stats={},
                   repro={"enabled": False}, population=population, imports={
        "mine": {"type": "runs", "runs": str(runs), "qrels": str(tmp_path / "q.txt"), "measures": ["AP"]}})
    r = snakemake(tmp_path, "--cores", "1", "results/test/scores/mine.tsv", config=p, check=False)
    assert r.returncode != 0
    assert f"{runs / 'bad.run'}:2: rank 'two' is not an integer" in r.stdout + r.stderr
    assert not (tmp_path / "results/test/scores/mine.tsv").exists()
    # fixed, and with a topic the qrels do not judge: a clear error too
    (runs / "bad.run").write_text("1 Q0 d1 1 2.0 bad\n7 Q0 d2 1 1.0 bad\n")
    r = snakemake(tmp_path, "--cores", "1", "results/test/scores/mine.tsv", config=p, check=False)
    assert r.returncode != 0 and "topic(s) of the run are not in the qrels" in r.stdout + r.stderr
    # and correct files import
    (runs / "bad.run").write_text("1 Q0 d2 1 2.0 bad\n1 Q0 d1 2 1.0 bad\n")
    snakemake(tmp_path, "--cores", "1", "results/test/scores/mine.tsv", config=p)
    m = to_matrix(read_scores(tmp_path / "results/test/scores/mine.tsv"), "AP")
    assert m.loc["1", "good"] == 1.0 and m.loc["1", "bad"] == 0.5


def test_bv_outputs_and_verify(dag):
    """BV-Test on the real TREC-8 ad hoc and Web 2012 matrices: Table 9's original-data cells to 4 decimals."""
    v = dag / "results" / "test" / "bv"
    t = pd.read_csv(v / "verify.csv").set_index("item")
    for item in ("table9/trec8-adhoc/original", "table9/trec-web2012/original", "table9/trec-web2012/original_norm",
                 "table9/trec8-adhoc/difficulty", "table2/f3/bias2_c_1"):
        assert str(t.loc[item, "ok"]) == "True", t.loc[item]
    assert abs(float(t.loc["table9/trec8-adhoc/original", "reproduced"]) - (-0.9162)) < 5e-5
    # the row the paper most likely mistyped is shown, not hidden
    assert str(t.loc["table9/trec8-adhoc/original_norm", "ok"]) == "False"
    assert (v / "fig1_vaswani.png").stat().st_size > 10_000
    assert (v / "sigir13_figs_vaswani.png").exists()


def test_repro_table_is_recomputable_from_its_runs_and_scores(dag):
    """results/test/repro/vaswani.csv: Lucene (two analyzers) against PISA at two BM25 settings, every number read
    back from the run files and the per-topic scores the stage wrote."""
    from irrepro.core.trec import read_run
    from irrepro.repro import effect_ratio, effect_ratio_interval, ktu, rbo

    v = dag / "results" / "test"
    t = pd.read_csv(v / "repro" / "vaswani.csv")
    cfg = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
    assert len(t) == 2 * 2 * len(cfg["measures"]) and set(t.verdict) <= {"OK", "OKish", "FAIL"}
    assert set(t.comparison) == {"lucene-default vs pisa", "lucene-terrier vs pisa"}
    scores = read_scores(v / "repro" / "scores" / "vaswani.tsv")

    def run(name):
        p = v / "repro" / "runs" / "vaswani" / f"{name}.run"
        return read_run(p if p.exists() else v / "runs" / "vaswani" / f"{name}.run")

    def per_topic(name, m):
        return scores[(scores.system == name) & (scores.measure == m)].set_index("topic").value.sort_index()

    for (o, r), g in t.groupby(["original", "reproduced"]):
        assert o.startswith("lucene-") and not r.startswith("lucene-")
        assert g.ktu.iloc[0] == pytest.approx(ktu(run(o), run(r), depth=100).mean, rel=1e-5)
        assert g.rbo.iloc[0] == pytest.approx(rbo(run(o), run(r), depth=100).mean, rel=1e-5)
        for _, row in g.iterrows():
            assert row.original_score == pytest.approx(per_topic(o, row.measure).mean(), rel=1e-5)
            assert row.reproduced_score == pytest.approx(per_topic(r, row.measure).mean(), rel=1e-5)
    for (comp, m), g in t.groupby(["comparison", "measure"]):
        g = g.set_index("setting")
        args = [per_topic(g.loc[s, k], m) for k in ("original", "reproduced") for s in ("baseline", "advanced")]
        er, ci = effect_ratio(*args), effect_ratio_interval(*args)
        assert g.original_effect.iloc[0] == pytest.approx(er.original_effect, rel=1e-5, abs=1e-9)
        if ci.bounded:  # ER reported with its Fieller interval
            assert g.er.iloc[0] == pytest.approx(er.value, rel=1e-5)
            assert g.er_low.iloc[0] == pytest.approx(ci.low, rel=1e-5, abs=1e-9)
        else:  # the original effect's t interval holds 0: no ER, and the note says why
            assert g.er.isna().all() and g.er_note.str.contains("not distinguishable from 0").all()
    # the PISA runs compared are the population's own files
    assert (v / "runs" / "vaswani" / "bm25_k1-0.9_b-0.75.run").exists()
