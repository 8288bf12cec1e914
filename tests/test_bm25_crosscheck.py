"""Cross-check: BM25 per-topic AP on vaswani from PISA agrees with an independent BM25 (bm25s, Robertson variant: idf = log((N - df + .5) / (df + .5)), which is what PISA computes; verified to agree on scores to float32 precision),
fed the same tokens (PISA's own Porter2 tokenizer; stemmed Terrier stopwords removed from queries).

Tolerance: PISA keeps scores in float32, so rankings can differ only at near-ties: we require the mean AP to
agree within 0.001 and each topic's AP within 0.01.
"""
import numpy as np
import pandas as pd
import pytest

bm25s = pytest.importorskip("bm25s")

K1, B = 1.2, 0.75


def test_pisa_bm25_matches_bm25s_on_vaswani(irds_home, tmp_path):
    import ir_datasets
    from pyterrier_pisa import tokenize
    from pyterrier_pisa.stopwords import _STOPWORDS

    from irrepro.datasets import collections as coll
    from irrepro.core.evaluation import evaluate_run
    from irrepro.retrieval.pisa import System, build_index, run_system

    ds = ir_datasets.load("vaswani")
    docs = list(coll.docs_iter(ds))
    topics = coll.topics(ds)
    qrels = coll.qrels(ds)

    idx = build_index(iter(docs), tmp_path / "v.pisa")
    pisa = run_system(idx, System("bm25", (("k1", K1), ("b", B))), topics, depth=1000)

    # PISA stems the stopword list and drops query stems found in it (so 'using' -> 'use' is a stopword)
    stop = {tokenize(w, "porter2")[0] for w in _STOPWORDS["terrier"] if tokenize(w, "porter2")}
    corpus = [tokenize(d["text"], "porter2") for d in docs]
    retriever = bm25s.BM25(k1=K1, b=B, method="robertson")
    retriever.index(corpus, show_progress=False)
    vocab = retriever.vocab_dict
    rows = []
    for qid, text in zip(topics.query_id, topics.text):
        stems = [s for s in tokenize(text, "porter2") if s not in stop]
        ids = sorted({vocab[s] for s in stems if s in vocab})  # PISA scores each distinct query term once
        scores = retriever.get_scores(ids) if ids else np.zeros(len(docs))
        top = np.argsort(-scores, kind="stable")[:1000]
        rows += [(qid, docs[i]["docno"], float(scores[i])) for i in top if scores[i] > 0]
    ours = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])

    ap_pisa = evaluate_run(pisa, qrels, ["AP"]).set_index("topic")["value"]
    ap_ref = evaluate_run(ours, qrels, ["AP"]).set_index("topic")["value"]
    diff = (ap_pisa - ap_ref.reindex(ap_pisa.index)).abs()
    assert len(ap_pisa) == 93
    assert abs(ap_pisa.mean() - ap_ref.mean()) < 0.001, (ap_pisa.mean(), ap_ref.mean())
    assert diff.max() < 0.01, diff.sort_values().tail()
