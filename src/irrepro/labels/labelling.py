"""Labelling a table of pairs through the cache (:func:`label_pairs`): no pair labelled twice, every batch
committed as soon as it is done (an interrupted run resumes where it stopped)."""
from __future__ import annotations

import logging
import sys
import time

import numpy as np
import pandas as pd

from irrepro.errors import InputError
from irrepro.labels.base import Labeler, LabelerError, label_columns
from irrepro.labels.cache import LabelCache, input_hashes
from irrepro.labels.prompts import get_prompt

log = logging.getLogger("irrepro.labels")

PAIR_COLUMNS = ["query_id", "doc_id", "query", "text"]


#: a labeler that gives pairs of this many distinct (query, text) inputs the same distribution is refused
#: (:class:`DegeneracyCheck`). Fewer are not judged: the fake servers of the tests answer every request alike, and
#: two or three documents may well get one label from a model that saturates; eight documents of different text
#: whose every grade's log-probability agrees within DEGENERATE_TOLERANCE do not come from a model that read them
DEGENERATE_PAIRS = 8
#: on log p (p floored at 1e-300): padding, batch composition and memory alignment move a model's float32 outputs by
#: far less (SmolLM2 on config/test.yaml, 8 pairs labelled again in another batch: max |Δp| 2.4e-7, 2026-11-25);
#: different documents move SmolLM2's log-probabilities by 1e-2 and more (tests/test_vllm.py)
DEGENERATE_TOLERANCE = 1e-5


class DegeneracyCheck:
    """Refuses a labeler whose distributions do not depend on its input: a server serving a model whose weights did
    not load (vLLM with a missing embedding tensor answers every prompt with the uniform distribution and HTTP 200),
    a backend whose parsing never finds the grades, a prompt whose document never reaches the model.

    Rows are fed with their inputs (:meth:`add`); the check is decided as soon as one row differs from the first
    by more than :data:`DEGENERATE_TOLERANCE` in some grade's log-probability (the labeler reads its input), and
    fails — :class:`~irrepro.labels.base.LabelerError` — when :data:`DEGENERATE_PAIRS` distinct inputs all gave
    the first row's distribution. :func:`label_pairs` holds the labels back from the cache until it is decided."""

    def __init__(self, name: str, min_inputs: int = DEGENERATE_PAIRS, tolerance: float = DEGENERATE_TOLERANCE):
        self.name, self.min_inputs, self.tolerance = name, int(min_inputs), float(tolerance)
        self.ref = None
        self.inputs: set = set()
        self.decided = False

    def add(self, inputs: list, probs: np.ndarray) -> None:
        if self.decided or not len(probs):
            return
        logp = np.log(np.maximum(np.asarray(probs, dtype=float), 1e-300))
        if self.ref is None:
            self.ref = logp[0]
        same = np.abs(logp - self.ref).max(axis=1) <= self.tolerance
        if not same.all():
            self.decided = True
            return
        self.inputs.update(inputs)
        if len(self.inputs) >= self.min_inputs:
            p = np.exp(self.ref)
            raise LabelerError(f"labeler {self.name!r} gave {len(self.inputs)} pairs of different query or document "
                               f"text the same distribution {np.round(p, 6).tolist()} (every grade's "
                               f"log-probability within {self.tolerance:g}): its labels do not depend on its input, "
                               "no label is written. A model whose weights did not load (e.g. vLLM serving a folder "
                               "without model.embed_tokens.weight answers log(1/vocabulary) for every token), a "
                               "server reply without the grades, or a prompt without the document gives this")


def label_pairs(labeler: Labeler, prompt, pairs: pd.DataFrame, cache_path=None, batch_size: int | None = None,
                progress: bool = True, log_interval: float = 10.0, stats: dict | None = None) -> pd.DataFrame:
    """Label (query, document) pairs through the cache: ``DataFrame[query_id, doc_id, labeler, prompt_id, p_0…]``.

    ``pairs`` has columns ``query_id, doc_id, query, text`` (ids are compared as strings); the result has one row
    per input row, in input order (repeated pairs are labelled once). A pair is cached under its ids and the
    :func:`~irrepro.labels.cache.input_hash` of its query and document texts, so a label is served only for the texts
    it was computed from. Pairs already in the cache at ``cache_path``
    under (``labeler.cache_key``, ``prompt.hash``) are not labelled again; the others are labelled ``batch_size`` at a
    time (default ``labeler.batch_size``) in the labeler's :meth:`~irrepro.labels.base.Labeler.order_key` order
    (shortest texts first, less padding; a bi-encoder's pairs of one document together), and each batch is committed to the
    cache before the next starts, so a killed run loses at most the batch in flight (and, until the first labels
    that differ, the batches held back by :class:`DegeneracyCheck`: a labeler that gives :data:`DEGENERATE_PAIRS`
    pairs of different texts one and the same distribution is refused with
    :class:`~irrepro.labels.base.LabelerError`, and none of its labels is cached; labelers with
    ``check_degenerate = False`` are not checked). Shows a tqdm bar on stderr
    (``progress``) and logs (logger ``irrepro.labels``) a line with pairs/s at most every ``log_interval`` seconds
    and at the end. The ``labeler`` column holds ``labeler.cache_key`` (the canonical table's writer replaces it by
    the config's name). The caller adds the ``collection`` column of the canonical labels table. ``stats``: a dict
    that gets ``pairs`` (distinct), ``cached`` and ``labelled`` counts and ``seconds`` spent labelling.
    """
    prompt = get_prompt(prompt)
    missing = [c for c in PAIR_COLUMNS if c not in pairs.columns]
    if missing:
        raise InputError(f"pairs table lacks the column(s) {missing}; expected {PAIR_COLUMNS}")
    qids = pairs["query_id"].astype(str).tolist()
    dids = pairs["doc_id"].astype(str).tolist()
    queries, texts = pairs["query"].astype(str).tolist(), pairs["text"].astype(str).tolist()
    keys = list(zip(qids, dids, input_hashes(queries, texts)))
    first = {}
    for i, k in enumerate(keys):
        first.setdefault(k, i)
    bs = int(batch_size if batch_size is not None else (getattr(labeler, "batch_size", None) or 8))
    if bs < 1:
        raise InputError(f"batch_size {batch_size!r}: expected a positive integer")
    G = prompt.n_grades
    with LabelCache(cache_path) as cache:
        key = labeler.cache_key
        got = cache.get(key, prompt.hash, list(first), n_grades=prompt.n_grades)
        if cache.bad_rows:
            log.warning("%s / %s: %d cached label(s) in %s are not distributions over %d grades (non-finite, "
                        "negative or not summing to 1); they are labelled again", labeler.name, prompt.id,
                        cache.bad_rows, cache_path, prompt.n_grades)
        todo = [k for k in first if k not in got]
        todo.sort(key=lambda k: labeler.order_key(queries[first[k]], texts[first[k]]))
        total = len(todo)
        log.info("%s / %s@%s: %d pairs, %d cached, %d to label (batch size %d)", key, prompt.id,
                 prompt.hash, len(first), len(first) - total, total, bs)
        bar = None
        if progress and total:
            from tqdm.auto import tqdm
            bar = tqdm(total=total, desc=f"labels {labeler.name} {prompt.id}", unit="pair", file=sys.stderr,
                       dynamic_ncols=True)
        t0 = last = time.time()
        done_since = 0
        check = DegeneracyCheck(labeler.name) if getattr(labeler, "check_degenerate", True) else None
        held: list = []  # batches labelled before the check is decided: not yet in the cache

        def commit(ks, ps):
            if check is None or check.decided:
                cache.put(key, prompt, ks, ps)
            else:
                held.append((ks, ps))
        try:
            for b in range(0, total, bs):
                chunk = todo[b:b + bs]
                idx = [first[k] for k in chunk]
                tb = time.time()
                probs = np.asarray(labeler.score(prompt, [queries[i] for i in idx], [texts[i] for i in idx],
                                                 query_ids=[k[0] for k in chunk], doc_ids=[k[1] for k in chunk]),
                                   dtype=float)
                if probs.shape != (len(chunk), G):
                    raise RuntimeError(f"labeler {labeler.name!r} returned shape {probs.shape}, expected "
                                       f"{(len(chunk), G)}")
                ok = ~np.isnan(probs).any(axis=1)  # NaN rows (e.g. FileLabeler missing='nan') are not cached
                if ok.any():
                    ks = [k for k, o in zip(chunk, ok) if o]
                    if check is not None and not check.decided:
                        check.add([(queries[first[k]], texts[first[k]]) for k in ks], probs[ok])
                        if check.decided:  # the labeler reads its input: what was held back goes to the cache
                            for hk, hp in held:
                                cache.put(key, prompt, hk, hp)
                            held.clear()
                    commit(ks, probs[ok])
                got.update(zip(chunk, probs))
                if bar is not None:
                    bar.update(len(chunk))
                now = time.time()
                done_since += len(chunk)
                if now - last >= log_interval or b + bs >= total:
                    log.info("%s / %s: %d/%d labelled, %.2f pairs/s (last batch %.2f pairs/s)", labeler.name,
                             prompt.id, b + len(chunk), total, done_since / max(now - last, 1e-9),
                             len(chunk) / max(now - tb, 1e-9))
                    last, done_since = now, 0
            if held:  # fewer than DEGENERATE_PAIRS distinct inputs, all alike: too few to judge
                for hk, hp in held:
                    cache.put(key, prompt, hk, hp)
        finally:
            if bar is not None:
                bar.close()
        if stats is not None:
            stats.update(pairs=len(first), cached=len(first) - total, labelled=total, seconds=time.time() - t0)
        if total:
            dt = time.time() - t0
            log.info("%s / %s: labelled %d pairs in %.1f s (%.2f pairs/s)", labeler.name, prompt.id, total, dt,
                     total / max(dt, 1e-9))
    p = np.array([got[k] for k in keys], dtype=float).reshape(len(keys), G)
    out = pd.DataFrame({"query_id": qids, "doc_id": dids, "labeler": key, "prompt_id": prompt.id},
                       index=pairs.index)
    for r, c in enumerate(label_columns(G)):
        out[c] = p[:, r]
    return out.reset_index(drop=True)
