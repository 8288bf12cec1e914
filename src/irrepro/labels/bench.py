"""How close a local labeler runs to the machine's arithmetic limit, measured in one process.

:func:`gemm_peak` is the peak: GFLOP/s of a square float32 ``torch.matmul`` on the labeler's thread count.
:func:`bench_labeler` labels the same pairs under each ``share_prefix`` mode (``"batch"``: only the prefix
common to the prompts of one call), in the order and the calls of :func:`~irrepro.labels.labelling.label_pairs`, and reports per mode: pairs/s, tokens computed per pair, and the achieved rate

    achieved = 2 · N · T / t  (GFLOP/s),

N the non-embedding parameters (one multiply-add per parameter per token; attention scores and the output layer,
run at one position per row, are left out), T the tokens computed (shared prefixes once + rows with padding), t
the wall time; achieved / peak is the fraction of the GEMM peak the labeler reaches on the tokens it computes. The
modes' log-probabilities and labels are compared with the first mode's.

A bi-encoder (:class:`~irrepro.labels.backends.biencoder.BiEncoderLabeler`) has no prompt modes: :func:`bench_encoder`
loads it (timed), encodes the pairs in :func:`~irrepro.labels.labelling.label_pairs`' order and reports pairs/s with and
without the load and the same achieved rate, T being the word pieces encoded (padding excluded; each query once),
against the GEMM peak in the labeler's dtype.

CLI (prints one JSON object): ``python -m irrepro.labels.bench PAIRS.tsv --prompt cranfield --n 160`` with a TSV
of columns query_id, doc_id, query, text, or the label stage's pairs with ``--topics
results/v1/collections/cranfield/topics.tsv --dataset cranfield``; ``--labeler '{"backend": "biencoder", "dtype":
"bfloat16"}'`` for the bi-encoder.
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
import pandas as pd

from irrepro.labels.base import softmax
from irrepro.labels.prefix import PrefixStore, TokenStats
from irrepro.labels.prompts import get_prompt


def gemm_peak(threads: int = 2, n: int = 2048, repeats: int = 5, dtype: str = "float32") -> float:
    """GFLOP/s of ``torch.matmul`` on two n × n matrices of ``dtype``, ``threads`` torch threads (best of
    ``repeats``)."""
    import torch
    prev = torch.get_num_threads()
    torch.set_num_threads(int(threads))
    try:
        a, b = torch.randn(n, n).to(getattr(torch, dtype)), torch.randn(n, n).to(getattr(torch, dtype))
        torch.matmul(a, b)
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            torch.matmul(a, b)
            best = min(best, time.perf_counter() - t)
    finally:
        torch.set_num_threads(prev)
    return 2.0 * n ** 3 / best / 1e9


def non_embedding_params(model) -> int:
    """Parameters of ``model`` outside its input embedding (tied output layers are counted once, as embeddings)."""
    emb = model.get_input_embeddings().weight
    return sum(p.numel() for p in model.parameters() if p is not emb)


def _ordered(pairs: pd.DataFrame) -> list[int]:
    """The order of :func:`~irrepro.labels.labelling.label_pairs`: shortest query + text first."""
    q, t = pairs["query"].astype(str).tolist(), pairs["text"].astype(str).tolist()
    return sorted(range(len(pairs)), key=lambda i: len(q[i]) + len(t[i]))


def bench_labeler(labeler, prompt, pairs: pd.DataFrame, modes=("batch", True), threads: int = 2,
                  peak: float | None = None) -> dict:
    """Label ``pairs`` (columns query, text) with a :class:`~irrepro.labels.backends.hf.HFLabeler` under each
    ``share_prefix`` mode, ``labeler.batch_size`` pairs per call, and compare (see the module docstring).

    The modes take turns call by call (each with its own cold prefix store), so a change of machine load hits
    them alike. Returns ``{"peak_gflops", "non_embedding_params", "pairs", "load_avg", "load_avg_end", "modes":
    {mode: {pairs_per_s, tokens_per_pair, prompt_tokens_per_pair, prefix_tokens, prefixes_computed,
    distinct_prefixes, padding_share, achieved_gflops, achieved_over_peak, seconds, max_abs_diff_logp,
    max_abs_diff_labels}}}`` (differences against the first mode); ``peak`` is measured (:func:`gemm_peak`)
    unless given.
    """
    import torch
    prompt = get_prompt(prompt)
    torch.set_num_threads(int(threads))
    peak = gemm_peak(threads) if peak is None else float(peak)
    N = non_embedding_params(labeler.model)
    res = {"peak_gflops": peak, "non_embedding_params": N, "pairs": len(pairs), "threads": int(threads),
           "load_avg": list(os.getloadavg()), "modes": {}}
    saved, saved_store = labeler.share_prefix, labeler.prefixes
    q, d = pairs["query"].astype(str).tolist(), pairs["text"].astype(str).tolist()
    order = _ordered(pairs)
    bs = labeler.batch_size
    stores = {m: PrefixStore(labeler._extend_cache) for m in modes}  # cold: nothing shared between modes
    stats = {m: TokenStats() for m in modes}
    secs = dict.fromkeys(modes, 0.0)
    lp = {m: np.empty((len(pairs), prompt.n_grades)) for m in modes}
    try:
        for i in range(0, len(order), bs):  # the modes take turns on each call: the same machine load for all
            idx = order[i:i + bs]
            for m in modes:
                labeler.share_prefix, labeler.prefixes, labeler.stats = m, stores[m], stats[m]
                t0 = time.perf_counter()
                lp[m][idx] = labeler.log_scores(prompt, [q[j] for j in idx], [d[j] for j in idx])
                secs[m] += time.perf_counter() - t0
    finally:
        labeler.share_prefix, labeler.prefixes, labeler.stats = saved, saved_store, TokenStats()
    ref = lp[modes[0]]
    for m in modes:
        s, dt = stats[m], secs[m]
        achieved = 2.0 * N * s.computed_tokens / dt / 1e9
        res["modes"][str(m)] = {
            "seconds": dt, "pairs_per_s": len(pairs) / dt, "tokens_per_pair": s.computed_tokens / len(pairs),
            "prompt_tokens_per_pair": s.prompt_tokens / len(pairs),
            "prefix_tokens": s.prefix_tokens, "prefixes_computed": sum(stores[m].computed.values()),
            "distinct_prefixes": len(stores[m].computed),
            "padding_share": 1.0 - (s.real_tokens + s.prefix_tokens) / max(s.computed_tokens, 1),
            "achieved_gflops": achieved, "achieved_over_peak": achieved / peak,
            "max_abs_diff_logp": float(np.abs(lp[m] - ref).max()),
            "max_abs_diff_labels": float(np.abs(softmax(lp[m]) - softmax(ref)).max()),
        }
    res["load_avg_end"] = list(os.getloadavg())
    return res


def bench_encoder(spec: dict, pairs: pd.DataFrame, threads: int = 2, peak: float | None = None) -> dict:
    """Load a bi-encoder from its :func:`~irrepro.labels.factory.make_labeler` ``spec`` and encode ``pairs``
    (columns query, text) ``batch_size`` documents at a time, shortest first; see the module docstring. Returns
    ``{"load_seconds", "seconds", "pairs", "pairs_per_s", "pairs_per_s_with_load", "tokens", "tokens_per_pair",
    "non_embedding_params", "achieved_gflops", "peak_gflops", "achieved_over_peak", "dtype", "load_avg",
    "load_avg_end"}``."""
    import torch

    from irrepro.labels.factory import make_labeler

    torch.set_num_threads(int(threads))
    dtype = spec.get("dtype", "float32")
    peak = gemm_peak(threads, dtype=dtype) if peak is None else float(peak)
    res = {"dtype": dtype, "threads": int(threads), "load_avg": list(os.getloadavg())}
    t0 = time.perf_counter()
    lab = make_labeler({**spec, "threads": threads})
    res["load_seconds"] = time.perf_counter() - t0
    # the embeddings are look-ups; the pooler (a dense layer on [CLS]) is not used by mean pooling
    N = sum(p.numel() for name, p in lab.model.named_parameters() if "embeddings" not in name and "pooler" not in name)
    order = _ordered(pairs)
    q, d = pairs["query"].astype(str).tolist(), pairs["text"].astype(str).tolist()
    lab.tokens = 0
    t0 = time.perf_counter()
    for i in range(0, len(order), lab.batch_size):
        idx = order[i:i + lab.batch_size]
        lab.similarities([q[j] for j in idx], [d[j] for j in idx])
    dt = time.perf_counter() - t0
    achieved = 2.0 * N * lab.tokens / dt / 1e9
    res.update(seconds=dt, pairs=len(pairs), pairs_per_s=len(pairs) / dt,
               pairs_per_s_with_load=len(pairs) / (dt + res["load_seconds"]), tokens=lab.tokens,
               tokens_per_pair=lab.tokens / len(pairs), non_embedding_params=N, achieved_gflops=achieved,
               peak_gflops=peak, achieved_over_peak=achieved / peak, load_avg_end=list(os.getloadavg()))
    return res


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pairs", help="TSV with columns query_id, doc_id, query, text; or a label stage pairs.tsv "
                                  "with --topics and --dataset")
    ap.add_argument("--topics", help="topics.tsv of the collection (texts of the queries)")
    ap.add_argument("--dataset", help="ir_datasets id of the documents (with --topics)")
    ap.add_argument("--home", default="resources/ir_datasets", help="IR_DATASETS_HOME (with --topics)")
    ap.add_argument("--jsonl", help="the documents as JSONL (a collection's docs_artifact) instead of ir_datasets'")
    ap.add_argument("--prompt", default="cranfield")
    ap.add_argument("--labeler", default='{"backend": "smollm2"}', help="make_labeler spec (JSON)")
    ap.add_argument("--n", type=int, default=None, help="first n pairs only")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--modes", default="batch,query", help="share_prefix modes: false, batch, query")
    a = ap.parse_args(argv)
    from irrepro.labels.factory import make_labeler
    if a.topics:
        from irrepro.labels.stage import pairs_with_texts
        pairs = pairs_with_texts(a.pairs, a.topics, texts=True, dataset=a.dataset, home=a.home, jsonl=a.jsonl)
    else:
        pairs = pd.read_csv(a.pairs, sep="\t", dtype=str, keep_default_na=False)
    if a.n:
        pairs = pairs.head(a.n)
    spec = json.loads(a.labeler)
    if spec.get("backend") == "biencoder":
        print(json.dumps(bench_encoder(spec, pairs, threads=a.threads), indent=1))
        return
    spec.setdefault("threads", a.threads)
    lab = make_labeler(spec)
    modes = [{"false": False, "query": True}.get(m, m) for m in a.modes.split(",")]
    print(json.dumps(bench_labeler(lab, a.prompt, pairs, modes=modes, threads=a.threads), indent=1))


if __name__ == "__main__":
    main()
