"""Scatter/gather labelling (irrepro.labels.shards): the labels table is byte-identical whatever the shard size or
the order the shards come in, a killed shard resumes from its own cache file without relabelling, central-cache
pairs are never relabelled, and no two shards share a file."""
import sqlite3

import numpy as np
import pandas as pd
import pytest

from irrepro.errors import InputError
from irrepro.labels import HashLabeler, label_pairs
from irrepro.labels.plan import shard_cache_path
from irrepro.labels.shards import (gather_shards, label_shard, merge_into_cache, read_shard, shard_count,
                                   shard_hashes, shard_pairs, shard_plan, with_input_hashes, write_shard)
from irrepro.labels.stage import write_labels
from irrepro.models.device import resolve_device

N = 23  # distinct pairs; one more row repeats a pair


def _pairs():
    rows = [(f"q{i % 5}", f"d{i:02d}") for i in range(N)] + [("q0", "d00")]
    t = pd.DataFrame(rows, columns=["query_id", "doc_id"])
    t["query"], t["text"] = "query " + t.query_id, "the text of " + t.doc_id
    return t


class Counting(HashLabeler):
    """A hash labeler counting the pairs it scores; with ``fail_after``, raising once it has scored that many
    (a job killed midway: the batches before were committed)."""

    def __init__(self, fail_after=None, **kw):
        super().__init__(**kw)
        self.scored, self.fail_after = 0, fail_after

    def score(self, prompt, queries, docs, **kw):
        if self.fail_after is not None and self.scored >= self.fail_after:
            raise RuntimeError("killed")
        self.scored += len(queries)
        return super().score(prompt, queries, docs, **kw)


def _cache_rows(path):
    con = sqlite3.connect(path)
    rows = con.execute("SELECT labeler, prompt_hash, query_id, doc_id, input_hash, prompt_id, probs FROM labels "
                       "ORDER BY query_id, doc_id").fetchall()
    con.close()
    return rows


def _single(tmp_path):
    d = tmp_path / "single"
    d.mkdir()
    out = label_pairs(HashLabeler(seed=3, batch_size=4), "trecdl", _pairs(), cache_path=d / "cache.sqlite",
                      progress=False)
    write_labels(out, "coll", "h", d / "h.tsv")
    return (d / "h.tsv").read_bytes(), _cache_rows(d / "cache.sqlite")


@pytest.mark.parametrize("size", [1, 7, N, None])
def test_gathered_table_and_cache_are_the_single_job_s(tmp_path, size):
    want_table, want_cache = _single(tmp_path)
    pairs = _pairs()
    plan = shard_plan(pairs, size)
    n = plan["shards"]
    assert plan["pairs"] == N and n == {1: N, 7: 4, N: 1, None: 1}[size]
    tables = []
    for i in reversed(range(n)):  # the order the shards finish does not matter
        part = shard_pairs(pairs, i, n, size)
        out, counts = label_shard(HashLabeler(seed=3, batch_size=4), "trecdl", part,
                                  tmp_path / f"shard-{i}.sqlite", tmp_path / "central.sqlite", progress=False)
        assert counts["labelled"] == counts["pairs"] and counts["resumed"] == counts["central"] == 0
        write_shard(with_input_hashes(out, part), tmp_path / f"shard-{i}.tsv")
        tables.append(read_shard(tmp_path / f"shard-{i}.tsv"))
    assert sum(len(t) for t in tables) == N
    table = gather_shards(pairs, tables)
    write_labels(table, "coll", "h", tmp_path / "h.tsv")
    assert (tmp_path / "h.tsv").read_bytes() == want_table
    assert merge_into_cache(table, shard_hashes(tables), "trecdl", tmp_path / "central.sqlite") == N
    assert _cache_rows(tmp_path / "central.sqlite") == want_cache  # the single job's rows, input hashes included
    assert merge_into_cache(table, shard_hashes(tables), "trecdl", tmp_path / "central.sqlite") == 0  # nothing new
    with pytest.raises(InputError, match="without the input_hash column"):
        shard_hashes([t.drop(columns="input_hash") for t in tables])


def test_shards_partition_the_distinct_pairs_in_file_order():
    pairs = _pairs()
    parts = [shard_pairs(pairs, i, 4, 7) for i in range(4)]
    assert [len(p) for p in parts] == [7, 7, 7, 2]
    got = [(q, d) for p in parts for q, d in zip(p.query_id, p.doc_id)]
    assert got == list(dict.fromkeys(zip(pairs.query_id, pairs.doc_id)))
    assert shard_count(0, 7) == 1 and shard_count(14, 7) == 2 and shard_count(15, 7) == 3
    with pytest.raises(InputError, match="make 4 shards"):
        shard_pairs(pairs, 0, 3, 7)  # a stale shard plan
    with pytest.raises(InputError, match="pairs in no shard"):
        gather_shards(pairs, [read_shard_like(parts[0])])
    with pytest.raises(InputError, match="pairs in two shards"):
        gather_shards(pairs, [read_shard_like(p) for p in parts + parts[:1]])


def read_shard_like(part):
    out = label_pairs(HashLabeler(), "binary", part, progress=False)
    return out


def test_killed_shard_resumes_without_relabelling(tmp_path):
    pairs = shard_pairs(_pairs(), 1, 2, 12)  # 11 pairs
    cache = tmp_path / "shard-1-of-2.sqlite"
    with pytest.raises(RuntimeError, match="killed"):
        label_shard(Counting(seed=3, batch_size=4, fail_after=8), "trecdl", pairs, cache, progress=False)
    assert len(_cache_rows(cache)) == 8  # two batches committed before the kill
    again = Counting(seed=3, batch_size=4)
    out, counts = label_shard(again, "trecdl", pairs, cache, tmp_path / "central.sqlite", progress=False)
    assert counts == {"pairs": 11, "resumed": 8, "central": 0, "labelled": 3}
    assert again.scored == 3  # only the pairs the killed run had not committed
    fresh = label_pairs(HashLabeler(seed=3), "trecdl", pairs, progress=False)
    pd.testing.assert_frame_equal(out, fresh)


def test_central_cache_pairs_are_copied_not_relabelled(tmp_path):
    pairs = shard_pairs(_pairs(), 0, 1, None)
    central = tmp_path / "central.sqlite"
    label_pairs(HashLabeler(seed=3), "trecdl", pairs.iloc[:5], cache_path=central, progress=False)
    lab = Counting(seed=3)
    out, counts = label_shard(lab, "trecdl", pairs, tmp_path / "s.sqlite", central, progress=False)
    assert counts == {"pairs": N, "resumed": 0, "central": 5, "labelled": N - 5} and lab.scored == N - 5
    assert np.allclose(out.filter(like="p_").sum(axis=1), 1)
    assert len(_cache_rows(central)) == 5  # the shard never writes the central cache


def test_no_two_shards_share_a_file():
    paths = {shard_cache_path("res/labels/cache.sqlite", c, lab, i, n)
             for c in ("a", "b") for lab in ("x", "y") for n in (1, 2, 3) for i in range(n)}
    assert len(paths) == 2 * 2 * 6
    assert shard_cache_path("res/labels/cache.sqlite", "a", "x", 2, 3) == "res/labels/cache.shards/a/x/shard-2-of-3.sqlite"


def test_device_auto(monkeypatch):
    torch = pytest.importorskip("torch")
    assert resolve_device("cpu") == "cpu" and resolve_device(None) is None
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda"


def test_no_pairs_make_one_empty_shard_and_the_single_job_s_table(tmp_path):
    pairs = _pairs().iloc[:0]
    assert shard_plan(pairs, 7) == {"pairs": 0, "shard_size": 7, "shards": 1}
    out, counts = label_shard(HashLabeler(), "binary", shard_pairs(pairs, 0, 1, 7), tmp_path / "s.sqlite",
                              tmp_path / "central.sqlite", progress=False)
    assert counts["pairs"] == 0 and not (tmp_path / "central.sqlite").exists()
    write_shard(out, tmp_path / "s.tsv")
    write_labels(gather_shards(pairs, [read_shard(tmp_path / "s.tsv")]), "c", "h", tmp_path / "a.tsv")
    write_labels(label_pairs(HashLabeler(), "binary", pairs, progress=False), "c", "h", tmp_path / "b.tsv")
    assert (tmp_path / "a.tsv").read_bytes() == (tmp_path / "b.tsv").read_bytes()
