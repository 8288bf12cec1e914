"""LLM labels through a real serving engine: vLLM's OpenAI server (the registry's CPU build, in a virtual environment
of its own, installed on first use and reused after), serving the converted SmolLM2-135M, labelled through the
``openai`` backend in scoring mode and compared with the in-process labeler on the same 24 vaswani pairs.

Not skipped where vLLM installs (the test fails, it does not skip, when it cannot). Its cost: vLLM's install
(about 80 s, the first time), three server starts (a degenerate server, the server, its restart after a kill), the
in-process labels and the labelling through the server; the durations of a CI run are in docs/benchmark.md."""
import os
import sqlite3
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from irrepro import labels as L
from irrepro.labels.base import LabelerError
from irrepro.labels.prompts import get_prompt

from conftest import CountingLabeler, smollm2_labeler

pytestmark = pytest.mark.slow

PROMPT = "trecdl"
#: vLLM and the in-process labeler compute the same float32 model with different kernels (vLLM's CPU attention,
#: fused RMSNorm and SiLU-and-multiply, its own GEMM blocking; torch's eager ops in-process), so the same sums are
#: added in another order. float32 rounds each of the ~100 sums along a token's path through 30 layers by eps32 =
#: 1.2e-7 relative; on logits of magnitude ~20 that accumulates to ~1e-4 at most in log P(s_r), and measured here
#: max |Δ log P| = 5.4e-5 (12 pairs x 3 prompts, 2026-11-25). A real difference is far larger: bfloat16 weights
#: (eps 7.8e-3) move log P by 1e-2 and more, another token sequence (a missing system prompt, the suffix tokenised
#: with the prompt) by 1e-1 and more, and another pair's document (the shifted comparison below) by about 1.
LOGP_TOLERANCE = 1e-3
#: on the labels (the softmax over grades): |Δp_r| <= |Δ log P| summed over two grades, times p <= 1
LABEL_TOLERANCE = 2 * LOGP_TOLERANCE
N_QUERIES, PER_QUERY = 6, 4
SMOLLM2_VOCABULARY = 49152


@pytest.fixture(scope="module")
def vllm_python(tmp_path_factory):
    from irrepro.labels.vllm import ensure_vllm

    t0 = time.monotonic()
    python = ensure_vllm()
    print(f"vLLM environment {python.parent.parent} ready in {time.monotonic() - t0:.1f} s")
    return python


@pytest.fixture(scope="module")
def model_dir():
    for module in ("torch", "transformers", "gguf"):
        pytest.importorskip(module)
    from irrepro.labels.smollm2 import converted_smollm2

    return converted_smollm2()


@pytest.fixture(scope="module")
def pairs(irds_home):
    """24 vaswani pairs: 6 queries x (2 judged relevant + 2 judged for other queries), texts from ir_datasets."""
    import ir_datasets

    from irrepro.datasets import collections as coll

    ds = ir_datasets.load("vaswani")
    topics = coll.topics(ds).set_index("query_id").text
    qrels = coll.qrels(ds)
    qids = sorted(qrels.query_id.unique(), key=int)[:N_QUERIES]
    rows = []
    for i, q in enumerate(qids):
        own = qrels[qrels.query_id == q].doc_id.tolist()[:PER_QUERY // 2]
        other = qrels[qrels.query_id == qids[(i + 1) % len(qids)]].doc_id.tolist()
        other = [d for d in other if d not in own][:PER_QUERY - len(own)]
        rows += [(q, d) for d in own + other]
    docs = {d.doc_id: " ".join(d.text.split()) for d in ds.docs_store().get_many_iter({d for _, d in rows})}
    df = pd.DataFrame(rows, columns=["query_id", "doc_id"])
    df["query"] = df.query_id.map(topics)
    df["text"] = df.doc_id.map(docs)
    assert len(df) == N_QUERIES * PER_QUERY and df.text.str.len().min() > 0
    return df


@pytest.fixture(scope="module")
def in_process(pairs, model_dir):
    """The in-process SmolLM2 labeler's log-scores and labels on the pairs, and its pairs/s (model loaded, two torch
    threads as the workflow's label jobs use)."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        lab = Recording(smollm2_labeler(batch_size=8))
        t0 = time.monotonic()
        labels = L.label_pairs(lab, PROMPT, pairs, None, progress=False)
        secs = time.monotonic() - t0
    finally:
        torch.set_num_threads(n)
    return {"labeler": lab.inner, "logp": lab.logp_of(pairs), "labels": labels, "pairs_per_s": len(pairs) / secs}


def _serve(python, model, tmp_path, **kw):
    from irrepro.labels.vllm import VLLMServer

    return VLLMServer(python, model, name="smollm2", log_path=tmp_path / "vllm.log", **kw)


def _labeler(url, **kw):
    return L.OpenAILabeler("smollm2", url, api_key_env=None, mode="score", concurrency=4, batch_size=8, **kw)


def _cache_rows(path) -> list:
    if not Path(path).exists():
        return []
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute("SELECT labeler, prompt_hash, query_id, doc_id FROM labels").fetchall()
    except sqlite3.OperationalError:  # the table is not there yet
        return []
    finally:
        con.close()


class Recording(CountingLabeler):
    """Also keeps the log-scores behind the labels (the labels are their softmax, as the wrapped labeler's are)."""

    def __init__(self, inner):
        super().__init__(inner)
        self.logp = {}

    def score(self, prompt, queries, docs, *, query_ids=None, doc_ids=None):
        self.calls.extend(zip(query_ids, doc_ids))
        logp = self.inner.log_scores(prompt, queries, docs)
        self.logp.update(zip(zip(query_ids, doc_ids), logp))
        return L.softmax(logp)

    def logp_of(self, pairs):
        return np.array([self.logp[k] for k in zip(pairs.query_id, pairs.doc_id)])


def test_vllm_degenerate_server_is_refused(vllm_python, model_dir, pairs, tmp_path):
    """The converted folder as the project wrote it before the tied embedding was saved under both names: vLLM
    loads model.embed_tokens.weight, finds it absent, keeps an uninitialised embedding and answers every prompt with
    HTTP 200 and the uniform distribution. label_pairs must refuse it and cache nothing."""
    from safetensors import safe_open
    from safetensors.torch import save_file

    bad = tmp_path / "no-embedding"
    bad.mkdir()
    for f in model_dir.iterdir():
        if f.name not in ("model.safetensors", "SHA256SUMS"):
            (bad / f.name).symlink_to(f)
    with safe_open(str(model_dir / "model.safetensors"), "pt") as f:
        save_file({k: f.get_tensor(k) for k in f.keys() if k != "model.embed_tokens.weight"},
                  str(bad / "model.safetensors"), metadata={"format": "pt"})
    with _serve(vllm_python, bad, tmp_path) as srv:
        lab = _labeler(srv.base_url)
        few = pairs.iloc[:16]
        logp = lab.log_scores(PROMPT, few["query"].tolist()[:3], few["text"].tolist()[:3])
        # what the engine answers: log(1/vocabulary) for every grade of every pair
        np.testing.assert_allclose(logp, -np.log(SMOLLM2_VOCABULARY), atol=1e-3)
        cache = tmp_path / "c.sqlite"
        with pytest.raises(LabelerError, match="do not depend on its input"):
            L.label_pairs(lab, PROMPT, few, cache, progress=False)
        assert _cache_rows(cache) == []  # not one of its labels is served later
        # too few pairs to judge: a two-pair run is labelled (and cached) as it comes
        out = L.label_pairs(lab, PROMPT, pairs.iloc[:2], cache, progress=False)
        assert len(out) == 2 and len(_cache_rows(cache)) == 2
    assert srv.proc.poll() is not None  # stopped


@pytest.fixture(scope="module")
def server(vllm_python, model_dir, tmp_path_factory):
    """The server as a label job starts it: an ``openai`` labeler configured with ``serve`` (make_labeler), run
    inside :func:`irrepro.labels.vllm.serving`, which points the labeler at the server and stops it at the end."""
    from irrepro.labels.vllm import serving

    log = tmp_path_factory.mktemp("vllm") / "vllm.log"
    lab = L.make_labeler({"backend": "openai", "model": "smollm2", "mode": "score", "api_key_env": None,
                          "serve": {"model": "smollm2", "python": str(vllm_python), "log": str(log)}})
    t0 = time.monotonic()
    with serving(lab) as srv:
        print(f"vLLM server ready in {time.monotonic() - t0:.1f} s at {lab.base_url}")
        assert lab.base_url == srv.base_url and srv.model == str(model_dir)
        yield srv
    assert srv.proc.poll() is not None  # stopped


def test_vllm_labels_agree_with_the_in_process_labeler(server, pairs, in_process, tmp_path):
    lab = Recording(_labeler(server.base_url))
    cache = tmp_path / "c.sqlite"
    t0 = time.monotonic()
    out = L.label_pairs(lab, PROMPT, pairs, cache, progress=False)
    engine_pairs_per_s = len(pairs) / (time.monotonic() - t0)
    print(f"\n{len(pairs)} pairs, prompt {PROMPT}: vLLM (scoring mode, 4 requests at a time) "
          f"{engine_pairs_per_s:.2f} pairs/s; in-process SmolLM2 (2 threads) {in_process['pairs_per_s']:.2f} "
          f"pairs/s; load average {os.getloadavg()}")
    # the server's tokens are the in-process labeler's: same chat template, same suffix tokens
    hf, P = in_process["labeler"], get_prompt(PROMPT)
    q, d = pairs["query"][0], pairs["text"][0]
    assert lab.inner.prompt_tokens(P, q, d) == hf.tokenizer(hf.prompt_text(P, q, d), add_special_tokens=False).input_ids
    assert lab.inner.suffix_tokens(P) == hf.suffix_token_ids(P)
    # the scores agree within float32 kernel rounding; another pair's scores do not
    logp = lab.logp_of(pairs)
    diff = np.abs(logp - in_process["logp"])
    print(f"max |Δ log P| {diff.max():.3g}, max |Δ label| "
          f"{np.abs(out.filter(like='p_').to_numpy() - in_process['labels'].filter(like='p_').to_numpy()).max():.3g}")
    assert diff.max() <= LOGP_TOLERANCE, diff.max()
    np.testing.assert_allclose(out.filter(like="p_").to_numpy(), in_process["labels"].filter(like="p_").to_numpy(),
                               atol=LABEL_TOLERANCE, rtol=0)
    shifted = np.abs(logp - np.roll(in_process["logp"], 1, axis=0)).max(axis=1)
    assert np.median(shifted) > 10 * LOGP_TOLERANCE, shifted
    # the cache holds every pair once; a second run asks the server for nothing
    rows = _cache_rows(cache)
    assert len(rows) == len(set(rows)) == len(pairs)
    assert sorted(lab.calls) == sorted(zip(pairs.query_id, pairs.doc_id))
    again = CountingLabeler(_labeler(server.base_url))
    pd.testing.assert_frame_equal(L.label_pairs(again, PROMPT, pairs, cache, progress=False), out)
    assert again.calls == []


def test_vllm_generation_mode_reads_the_same_first_token(server, pairs, in_process):
    """Generation mode (chat endpoint, top-20 alternatives per generated position): trecdl's grades are single
    tokens, so a grade among the first position's alternatives has the scoring mode's log-probability. SmolLM2's
    first token is mostly "The" or "[", with some grades in the top 20: the others get the floor (missing_logprob)."""
    gen = L.OpenAILabeler("smollm2", server.base_url, api_key_env=None, top_logprobs=20, max_tokens=1,
                          missing_logprob="floor")
    P = get_prompt(PROMPT)
    assert all(len(s) == 1 for s in in_process["labeler"].suffix_token_ids(P))
    n = 6
    compared = 0
    for i, (q, d) in enumerate(zip(pairs["query"][:n], pairs["text"][:n])):
        first = dict(gen.positions(gen._post(gen.request_body(P, q, d)))[0])
        for r, s in enumerate(P.suffixes):
            if s in first:
                compared += 1
                assert abs(first[s] - in_process["logp"][i, r]) <= LOGP_TOLERANCE, (i, s, first[s])
    assert compared >= n  # about 2 of the 4 grades per pair
    labels = gen.score(P, pairs["query"][:n].tolist(), pairs["text"][:n].tolist())
    assert labels.shape == (n, 4) and np.allclose(labels.sum(1), 1)


def test_vllm_server_killed_mid_run_loses_and_repeats_no_label(server, pairs, in_process, tmp_path, caplog):
    """SIGKILL to the server (API and engine processes) once some batches are cached, restart it on the same port:
    the labeler's retries carry the batch in flight over the restart; every pair is labelled once, cached once, and
    the labels are the uninterrupted ones."""
    caplog.set_level("WARNING", logger="irrepro.labels")
    pairs, ref = pairs.iloc[:24], in_process["labels"].iloc[:24]  # three batches: one cached, then the kill
    lab = CountingLabeler(_labeler(server.base_url, retry_delay=1.0, max_retries=10))
    cache = tmp_path / "c.sqlite"
    seen, done = {}, threading.Event()

    def crash_and_restart():
        while len(_cache_rows(cache)) < lab.batch_size:
            if done.wait(0.05):  # labelling ended (or failed) first
                return
        seen["cached_at_kill"] = len(_cache_rows(cache))
        server.kill()
        seen["killed"] = time.monotonic()
        server.start()
        seen["restart_s"] = server.wait()

    t = threading.Thread(target=crash_and_restart, daemon=True)
    t.start()
    try:
        out = L.label_pairs(lab, PROMPT, pairs, cache, progress=False)
    finally:
        done.set()
        t.join(timeout=600)
    assert "killed" in seen and 0 < seen["cached_at_kill"] < len(pairs), seen
    print(f"\nkilled with {seen['cached_at_kill']} of {len(pairs)} pairs cached; restarted in {seen['restart_s']:.1f} s")
    assert any("retrying" in r.getMessage() for r in caplog.records)  # the server was gone for a while
    rows = _cache_rows(cache)
    assert len(rows) == len(set(rows)) == len(pairs)  # none lost, none twice
    assert sorted(lab.calls) == sorted(zip(pairs.query_id, pairs.doc_id))  # each pair labelled once
    np.testing.assert_allclose(out.filter(like="p_").to_numpy(), ref.filter(like="p_").to_numpy(),
                               atol=LABEL_TOLERANCE, rtol=0)
