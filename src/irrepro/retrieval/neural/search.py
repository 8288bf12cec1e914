"""Scoring topics against a document index (:func:`search`, :func:`dense_search`, :func:`splade_search`) and
re-ranking a run's top k by a model (:func:`rerank`)."""
from __future__ import annotations

import logging
import time
from typing import Callable, Mapping

import numpy as np
import pandas as pd

from irrepro.errors import InputError
from irrepro.retrieval.neural.docindex import DocIndex, _check_index
from irrepro.retrieval.neural.encoders import Encoder, _dur, _Progress

log = logging.getLogger("irrepro.retrieval")

def _scores(doc_vectors, query_vectors) -> np.ndarray:
    """(n_queries, n_docs) dot products, float64 (a sparse product stays sparse until here)."""
    s = doc_vectors @ query_vectors.T
    s = s.toarray() if hasattr(s, "toarray") else np.asarray(s)
    return np.ascontiguousarray(s.T, dtype=np.float64)


def _top(scores: np.ndarray, tie: np.ndarray, depth: int, positive: bool) -> np.ndarray:
    """Indices of the ``depth`` best scores, best first; equal scores by ``tie`` (ranks of the doc ids)."""
    cand = np.flatnonzero(scores > 0) if positive else np.arange(len(scores))
    if len(cand) > depth:
        kth = np.partition(scores[cand], len(cand) - depth)[len(cand) - depth]
        cand = cand[scores[cand] >= kth]
    return cand[np.lexsort((tie[cand], -scores[cand]))][:depth]


def search(model: Encoder, index: DocIndex, topics: pd.DataFrame, depth: int) -> pd.DataFrame:
    """Score every document of ``index`` for each topic (``query_id, text``) with ``model`` (the model that
    encoded the index) and keep the ``depth`` best: ``query_id, doc_id, score``, best first, equal scores by doc
    id. A sparse model returns only documents with a positive score (those that share a term with the query, as an
    inverted index would)."""
    _check_index(index, model)
    if int(depth) < 1:
        raise InputError(f"depth {depth!r}: expected a positive integer")
    t0 = time.monotonic()
    q = model.encode_queries(list(topics["text"]))
    tie = np.argsort(np.argsort(index.doc_ids, kind="stable"), kind="stable")
    qids, dids, scores = [], [], []
    step = max(1, 2 ** 22 // max(len(index), 1))  # bound the (queries, documents) score block to ~32 MB
    for b in range(0, len(topics), step):
        block = _scores(index.vectors, q[b:b + step])
        for j, row in enumerate(block):
            top = _top(row, tie, int(depth), positive=index.kind == "sparse")
            qids += [str(topics["query_id"].iloc[b + j])] * len(top)
            dids.append(index.doc_ids[top])
            scores.append(row[top])
    log.info("%s: %d queries over %d documents in %.1fs", model.name, len(topics), len(index),
             time.monotonic() - t0)
    return pd.DataFrame({"query_id": pd.Series(qids, dtype=object),
                         "doc_id": pd.Series(np.concatenate(dids) if dids else [], dtype=object),
                         "score": np.concatenate(scores) if scores else np.zeros(0)})


def dense_search(model: Encoder, index: DocIndex, topics: pd.DataFrame, depth: int) -> pd.DataFrame:
    """:func:`search` for a dense model (exhaustive inner product: the cosine for normalised encodings)."""
    if index.kind != "dense":
        raise InputError(f"dense_search on a {index.kind} index ({index.model}); use splade_search")
    return search(model, index, topics, depth)


def splade_search(model: Encoder, index: DocIndex, topics: pd.DataFrame, depth: int) -> pd.DataFrame:
    """:func:`search` for a sparse model (dot product of sparse vectors over all documents)."""
    if index.kind != "sparse":
        raise InputError(f"splade_search on a {index.kind} index ({index.model}); use dense_search")
    return search(model, index, topics, depth)


def _doc_texts(docs_text, ids: list[str]) -> dict[str, str]:
    if callable(docs_text):
        return dict(docs_text(ids))
    return {i: docs_text[i] for i in ids if i in docs_text}


def rerank(run: pd.DataFrame, docs_text: Mapping[str, str] | Callable[[list[str]], Mapping[str, str]],
           topics: pd.DataFrame, model: Encoder, k: int, index: DocIndex | None = None) -> pd.DataFrame:
    """Re-rank the top ``k`` documents of each query of ``run`` (``query_id, doc_id, score``; ranked by score,
    equal scores by doc id) by ``model``'s score of query and document (dot product of the encodings: the cosine
    for e5 and MiniLM). Every document of ``run`` is kept: the top ``k`` take the model's scores, ordered by them
    (equal scores keep their first-stage order); the rest keep their order below, with scores min(top k) - 1,
    min(top k) - 2, ... (a run's later documents stay later). Queries keep the run's order.

    ``docs_text``: ``{docno: text}``, or a callable ``ids -> {docno: text}`` (e.g.
    :class:`irrepro.datasets.collections.DocText`); a document without text is an error. Each distinct document is
    encoded once; with ``index`` (the same model's :class:`DocIndex`), documents it holds are not encoded again.
    A topic without a text, or a run query missing from ``topics``, is an error."""
    if int(k) < 1:
        raise InputError(f"re-rank k {k!r}: expected a positive integer")
    k = int(k)
    if index is not None:
        _check_index(index, model)
    text_of = dict(zip(topics["query_id"].astype(str), topics["text"]))
    r = run[["query_id", "doc_id", "score"]].copy()
    r["query_id"] = r["query_id"].astype(str)
    r["doc_id"] = r["doc_id"].astype(str)
    missing = sorted(set(r["query_id"]) - set(text_of))
    if missing:
        raise InputError(f"run queries without a topic text: {missing[:5]}")
    qpos = {q: i for i, q in enumerate(dict.fromkeys(r["query_id"]))}  # queries stay in the run's order
    r["qpos"] = r["query_id"].map(qpos)
    r = r.sort_values(["qpos", "score", "doc_id"], ascending=[True, False, True], kind="stable")
    r["rank"] = r.groupby("query_id", sort=False).cumcount()
    top = r[r["rank"] < k]
    qids = list(dict.fromkeys(top["query_id"]))
    need = sorted(set(top["doc_id"]))
    row_of: dict[str, int] = {}
    parts = []
    if index is not None:
        pos = {d: i for i, d in enumerate(index.doc_ids.tolist())}
        have = [d for d in need if d in pos]
        if have:
            rows = [pos[d] for d in have]
            parts.append(index.vectors[rows])
            row_of.update((d, i) for i, d in enumerate(have))
        need = [d for d in need if d not in pos]
    if need:
        texts = _doc_texts(docs_text, need)
        lacking = [d for d in need if d not in texts]
        if lacking:
            raise InputError(f"no text for documents {lacking[:5]} ({len(lacking)} in all) to re-rank")
        t0 = time.monotonic()
        vec = model.encode_docs([texts[d] for d in need], _Progress(f"re-ranking: encoding documents ({model.name})",
                                                                    len(need)))
        log.info("re-ranking: encoded %d documents with %s in %s", len(need), model.name,
                 _dur(time.monotonic() - t0))
        base = len(row_of)
        row_of.update((d, base + i) for i, d in enumerate(need))
        parts.append(vec)
    if parts and hasattr(parts[0], "tocsr"):
        import scipy.sparse as sp
        dvec = sp.vstack(parts).tocsr()
    else:
        dvec = np.concatenate(parts) if parts else np.zeros((0, 1), np.float32)
    qvec = model.encode_queries([text_of[q] for q in qids])
    qrow = {q: i for i, q in enumerate(qids)}
    out = []
    for qid, g in r.groupby("query_id", sort=False):
        head, tail = g[g["rank"] < k], g[g["rank"] >= k]
        d = dvec[[row_of[x] for x in head["doc_id"]]]
        s = _scores(d, qvec[[qrow[qid]]])[0]
        order = np.lexsort((head["rank"].to_numpy(), -s))
        out.append(pd.DataFrame({"query_id": qid, "doc_id": head["doc_id"].to_numpy()[order], "score": s[order]}))
        if len(tail):
            low = float(s.min()) if len(s) else 0.0
            out.append(pd.DataFrame({"query_id": qid, "doc_id": tail["doc_id"].to_numpy(),
                                     "score": low - 1.0 - np.arange(len(tail), dtype=np.float64)}))
    if not out:
        return pd.DataFrame({"query_id": [], "doc_id": [], "score": []})
    return pd.concat(out, ignore_index=True)
