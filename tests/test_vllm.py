"""LLM labels through a real serving engine: vLLM's OpenAI server (the registry's CPU build, in a virtual environment
of its own, installed on first use and reused after), serving the converted SmolLM2-135M, labelled through the
``openai`` backend in scoring mode and compared with the in-process labeler on the same 8 vaswani pairs.

Not skipped where vLLM installs (the test fails, it does not skip, when it cannot). Its cost: vLLM's install
(minutes the first time: the session starts it in the background, tests/conftest.py), two server starts (the
server, its restart after a kill), the in-process labels and the labelling through the server; the degenerate
server is in tests/test_vllm_degenerate.py. The durations of a CI run are in docs/benchmark.md."""
import os
import threading
import time

import numpy as np
import pandas as pd
import pytest

from irrepro import labels as L
from irrepro.labels.prompts import get_prompt

from conftest import CountingLabeler, smollm2_labeler
from vllm_common import (  # noqa: F401 (fixtures)
    LABEL_TOLERANCE, LOGP_TOLERANCE, PROMPT, _cache_rows, _labeler, model_dir, pairs, vllm_python)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def in_process(pairs, model_dir):
    """The in-process SmolLM2 labeler's log-scores and labels on the pairs, and its pairs/s (model loaded, two torch
    threads as the workflow's label jobs use)."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        lab = Recording(smollm2_labeler(batch_size=8, dtype="float32"))  # the server's dtype
        t0 = time.monotonic()
        labels = L.label_pairs(lab, PROMPT, pairs, None, progress=False)
        secs = time.monotonic() - t0
    finally:
        torch.set_num_threads(n)
    return {"labeler": lab.inner, "logp": lab.logp_of(pairs), "labels": labels, "pairs_per_s": len(pairs) / secs}


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
    """Generation mode (chat endpoint, top-20 alternatives per generated position): the prompt's grades are single
    tokens, so a grade among the first position's alternatives has the scoring mode's log-probability. SmolLM2's
    first token is mostly "The" or "[", with a grade in the top 20: the others get the floor (missing_logprob)."""
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
    assert compared >= n  # one of the 2 grades per pair (measured: 6 grades of 6 pairs)
    labels = gen.score(P, pairs["query"][:n].tolist(), pairs["text"][:n].tolist())
    assert labels.shape == (n, P.n_grades) and np.allclose(labels.sum(1), 1)


def test_vllm_server_killed_mid_run_loses_and_repeats_no_label(server, pairs, in_process, tmp_path, caplog):
    """SIGKILL to the server (API and engine processes) once some batches are cached, restart it on the same port:
    the labeler's retries carry the batch in flight over the restart; every pair is labelled once, cached once, and
    the labels are the uninterrupted ones."""
    caplog.set_level("WARNING", logger="irrepro.labels")
    ref = in_process["labels"]
    # four batches of two: one cached, then the kill
    lab = CountingLabeler(_labeler(server.base_url, batch_size=2, retry_delay=1.0, max_retries=10))
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
