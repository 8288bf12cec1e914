"""The record of one run that built something (irrepro.core.provenance.record_run): the result files written since
the run began, with their md5, and nothing for a run that wrote none."""
import hashlib
import json
import os

from irrepro.core.provenance import record_run


def test_a_run_records_what_it_wrote_and_only_that(tmp_path):
    root = tmp_path / "results" / "v1"
    old, new = root / "stats/old.csv", root / "bv/fig1.pdf"
    for p in (old, new, root / "logs/bv/fig1.log", root / "benchmarks/bv/fig1.tsv"):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(p.name)
    os.utime(old, (1_000, 1_000))  # written before the run began
    os.utime(new, (2_500, 2_500))  # during the run
    out = record_run(root, started=2_000, config={"version": "v1", "labels": {"seed": 3}}, command=["snakemake", "x"],
                     now=3_000)
    r = json.loads(out.read_text())
    assert out.parent == root / "provenance" and out.name.startswith("19700101T005000Z-")
    # the figure, not the older table, the log or the benchmark (records of the run, not results)
    assert r["outputs_md5"] == {"bv/fig1.pdf": hashlib.md5(b"fig1.pdf").hexdigest()}
    assert r["run"]["command"] == ["snakemake", "x"] and r["seeds"] == {"labels.seed": 3}
    assert r["run"]["started"] == "1970-01-01T00:33:20+00:00"
    # a run that wrote no result (nothing to do) leaves no record: the records themselves (the one above, written
    # now) are not results
    assert record_run(root, started=5_000, config={}) is None
    assert len(list((root / "provenance").iterdir())) == 1


def test_ir_metadata_stages_follow_the_system_name():
    from irrepro.core.irmetadata import stages

    assert stages("bm25_k1-0.9_b-0.4") == [{"name": "bm25_k1-0.9_b-0.4", "method": "BM25",
                                           "params": {"k1": 0.9, "b": 0.4}}]
    s = stages("qld_mu-1000+rm3_fb-10_terms-20_lambda-0.5")
    assert s[1]["params"] == {"fb": 10, "terms": 20, "lambda": 0.5} and s[1]["expands"] == "qld_mu-1000"
    s = stages("bm25_k1-0.9_b-0.4+minilm-l6-v2-rerank_k-100", neural_models=["minilm-l6-v2"])
    assert s[1]["params"] == {"k": 100} and s[1]["reranks"] == "bm25_k1-0.9_b-0.4" and "MiniLM" in s[1]["method"]
    # without knowing the model the stage is a method of that name (unknown, named as it is), not MiniLM's
    assert stages("bm25_k1-0.9_b-0.4+minilm-l6-v2-rerank_k-100")[1]["method"] == "minilm-l6-v2-rerank"


def test_ir_metadata_names_each_stages_toolkit_and_the_files_md5(tmp_path):
    from irrepro.core.irmetadata import TOOLKITS, ir_metadata

    f = tmp_path / "run"
    f.write_text("1 Q0 d 1 1.0 x\n")

    def meta(system):
        return ir_metadata(system, "c", run=f, topics=f, qrels=f, dataset="vaswani", depth=10,
                           neural_models=["minilm-l6-v2"])
    classic, rerank, dense = (meta(s)["platform"]["software"]["retrieval toolkit"] for s in (
        "bm25_k1-0.9_b-0.4+rm3_fb-10_terms-20_lambda-0.5", "bm25_k1-0.9_b-0.4+minilm-l6-v2-rerank_k-100",
        "minilm-l6-v2"))
    assert classic == [TOOLKITS["classic"]] and rerank == [TOOLKITS["classic"], TOOLKITS["neural"]]
    assert dense == [TOOLKITS["neural"]]
    m = meta("dph")
    assert m["data"]["run md5"] == hashlib.md5(f.read_bytes()).hexdigest() and m["method"]["depth"] == 10
    assert m["research goal"] == {"description": None} and m["actor"] == {"team": None}  # left for the user
