"""The label stage's steps around label_pairs (irrepro.labels.stage): the spec of a config entry, the pairs with
their texts, the canonical labels table."""
import json

import pandas as pd

from irrepro.labels import HashLabeler, label_pairs
from irrepro.labels.stage import (
    LOCAL_THREADS,
    configured_labeler,
    job_threads,
    labeler_spec,
    pairs_with_texts,
    write_labels,
)


def test_labeler_spec_of_config_entries():
    file_spec = json.dumps({"artifact": "a/b.txt", "backend": "file", "smoothing": 0.1}, sort_keys=True)
    assert labeler_spec(file_spec, ["res/artifacts/a/b.txt"]) == {"backend": "file", "smoothing": 0.1,
                                                                  "path": "res/artifacts/a/b.txt"}
    assert labeler_spec('{"backend": "smollm2"}') == {"backend": "smollm2", "threads": LOCAL_THREADS}
    assert labeler_spec('{"backend": "hf", "model": "m", "threads": 4}')["threads"] == 4
    assert labeler_spec('{"backend": "openai", "model": "m"}') == {"backend": "openai", "model": "m"}


def test_pairs_and_labels_table(tmp_path):
    (tmp_path / "pairs.tsv").write_text("query_id\tdoc_id\trank\trelevance\n01\td1\t1\t2\n01\td2\t2\t0\n7\td1\t1\t1\n")
    (tmp_path / "topics.tsv").write_text("query_id\ttext\n01\tfirst query\n")
    pairs = pairs_with_texts(tmp_path / "pairs.tsv", tmp_path / "topics.tsv", texts=False)
    assert list(pairs.query_id) == ["01", "01", "7"] and list(pairs["query"]) == ["first query"] * 2 + [""]
    assert list(pairs.text) == [""] * 3
    out = label_pairs(HashLabeler(seed=1), "binary", pairs, progress=False)
    write_labels(out, "coll", "myhash", tmp_path / "labels.tsv")
    lines = (tmp_path / "labels.tsv").read_text().splitlines()
    assert lines[0] == "collection\tquery_id\tdoc_id\tlabeler\tprompt_id\tp_0\tp_1"
    assert lines[1].startswith("coll\t01\td1\tmyhash\tbinary\t")
    t = pd.read_csv(tmp_path / "labels.tsv", sep="\t", dtype=str)
    assert all(len(x.replace("0.", "", 1).lstrip("0")) <= 10 for x in t.p_0)  # %.10g
    assert out.labeler.iloc[0] == "hash:1"  # the cache's identity; the table carries the config's name


def test_configured_labeler_is_the_factory_s(tmp_path):
    (tmp_path / "mine.txt").write_text("1 0 d1 2\n")
    labeler, spec = configured_labeler(json.dumps({"backend": "file", "artifact": "x"}), [str(tmp_path / "mine.txt")])
    assert spec["path"] == str(tmp_path / "mine.txt") and labeler.name == "file:mine"


def test_job_threads_are_the_labeler_s():
    """A label job declares the cores its labeler uses: a local model's torch threads, one for a label file or a
    server (a file labeler declaring two would wait for two free cores on a busy workstation)."""
    assert job_threads(json.dumps({"backend": "biencoder", "model": "minilm"})) == LOCAL_THREADS == 2
    assert job_threads(json.dumps({"backend": "smollm2", "threads": 4})) == 4
    assert job_threads(json.dumps({"backend": "hf", "model": "x"})) == LOCAL_THREADS
    assert job_threads(json.dumps({"backend": "file", "artifact": "a/b.txt"})) == 1
    assert job_threads(json.dumps({"backend": "openai", "model": "m"})) == 1
    assert job_threads(json.dumps({"backend": "hash"})) == 1


def test_every_labelling_job_runs_one_sequence_with_its_server(tmp_path, monkeypatch):
    """labelling_job: the labeler, the pairs (a subset's only), one log line and the labelling inside vLLM's
    `serving` for that labeler, whichever stage calls it; the four labelling scripts all go through it (before,
    only the label stage and its shards started a server for a labeler with `serve`, so self-preference and
    ci.systems jobs labelled without one)."""
    import contextlib
    import logging
    from pathlib import Path

    import irrepro.labels.vllm as V
    from irrepro.labels.stage import labelling_job

    (tmp_path / "pairs.tsv").write_text("query_id\tdoc_id\trank\trelevance\n1\td1\t1\t1\n1\td2\t2\t0\n2\td1\t1\t0\n")
    (tmp_path / "topics.tsv").write_text("query_id\ttext\n1\tq one\n2\tq two\n")
    (tmp_path / "mine.txt").write_text("1 0 d1 1\n1 0 d2 0\n2 0 d1 0\n")
    served = []

    @contextlib.contextmanager
    def serving(labeler, log=None):
        served.append(labeler)
        yield
    monkeypatch.setattr(V, "serving", serving)
    log = logging.getLogger("test-labelling-job")
    job = labelling_job(json.dumps({"backend": "file", "artifact": "x"}), [str(tmp_path / "mine.txt")], "binary",
                        tmp_path / "pairs.tsv", tmp_path / "topics.tsv", cache=tmp_path / "c.sqlite", what="mine", log=log,
                        subset=lambda t: t[t.query_id == "1"])
    assert len(served) == 1 and len(job.out) == 2 and list(job.pairs.doc_id) == ["d1", "d2"]
    assert job.stats["pairs"] == 2 and job.spec["backend"] == "file"
    scripts = Path(__file__).parent.parent / "workflow" / "scripts"
    for script in ("labels/label.py", "labels/shard.py", "selfpref/labels.py", "ci/systems_labels.py"):
        text = (scripts / script).read_text()
        assert "labelling_job(" in text and "serving(" not in text and "label_pairs(" not in text, script
