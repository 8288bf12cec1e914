"""The TREC substitute of the sampling paper (Sec. 7.2): our population's runs on a collection with (near-)complete
judgments, as users × items matrices like SYNTH's."""
from __future__ import annotations

import numpy as np


def trec_matrices(runs: dict, qrels, depth: int = 100, binary: bool = True):
    """The TREC substitute: runs truncated to ``depth``; items per query = the union of the systems' retrieved
    documents (unretrieved pairs get P = 0); u = relevance from the qrels (unjudged = 0; binary by default, as the
    paper's TREC data). Returns ``u`` (queries × items), ``ranks`` {system: 0-based rank, ``depth`` = not
    retrieved} and the query ids."""
    rel = {(q, d): r for q, d, r in zip(qrels.query_id.astype(str), qrels.doc_id, qrels.relevance)}
    queries = sorted(set.intersection(*[set(r.query_id.astype(str)) for r in runs.values()]))
    top = {s: {q: list(g.sort_values("rank")["doc_id"].head(depth)) for q, g in r.groupby(r.query_id.astype(str))}
           for s, r in runs.items()}
    items = {q: sorted(set().union(*[top[s].get(q, []) for s in runs])) for q in queries}
    width = max(len(v) for v in items.values())
    u = np.zeros((len(queries), width))
    ranks = {s: np.full((len(queries), width), depth, dtype=np.int64) for s in runs}
    for i, q in enumerate(queries):
        pos = {d: j for j, d in enumerate(items[q])}
        for d, j in pos.items():
            g = max(rel.get((q, d), 0), 0)
            u[i, j] = (1.0 if g > 0 else 0.0) if binary else float(g)
        for s in runs:
            for k, d in enumerate(top[s].get(q, [])):
                ranks[s][i, pos[d]] = k
    return u, ranks, queries


def target_depth(ranks, depth, base=2.0):
    """P for a run truncated at ``depth`` (rank == depth marks 'not retrieved': weight 0)."""
    lam = np.where(ranks < depth, np.log(base) / np.log(ranks + 2.0), 0.0)
    return lam / lam.shape[0]
