"""The query-model family of Zhang et al., SIGIR 2013 (Sec. 4, "Model Settings"), for bias–variance evaluation.

Every model is a weighted query ``P(w|θ)`` built from the original query and the top ``n`` feedback documents
``D`` of the initial ranking by the original query model; documents are then ranked by the KL-divergence model
(equivalently, query likelihood with Dirichlet smoothing and a weighted query, here PISA's ``qld``):

* ``original``    — ``P(w|θ_Q)``, the maximum-likelihood original query model;
* ``rm1``         — the expanded model RM (RM1 of Lavrenko & Croft), from all of ``D``, documents weighted by
  ``P(d|Q)``;
* ``rm3_lambda-λ`` — the combined model ``λ P(w|θ_Q) + (1 − λ) P(w|θ_RM)``, λ ∈ (0, 1) (λ → 0: towards RM);
* ``rm1_rn-r``    — RM1 after removing a fraction ``r`` of the non-relevant feedback documents ``D_N`` "along the
  initial ranking": we remove the ``round(r·|D_N|)`` highest-ranked non-relevant ones (our reading; the paper does
  not say which end of the ranking goes first). ``r = 1`` leaves only the relevant (and unjudged) documents;
* ``target``      — Eq. 10: ``P(w|θ_T) = Σ_{d ∈ D_R} P(w|d) / |D_R|``, relevant feedback documents only, with
  uniform document weights. A query with no relevant feedback document keeps its original query model (the
  paper is silent on this case).

Unjudged feedback documents count as non-relevant (TREC convention). ``build_query_model`` is pure; ``run_family``
runs every model of the family on a PISA index.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from irrepro.retrieval import rm3


@dataclass(frozen=True)
class QueryModel:
    kind: str           # original | rm1 | rm3 | rm1_rn | target
    value: float | None = None

    @property
    def name(self) -> str:
        if self.kind == "rm3":
            return f"rm3_lambda-{self.value:g}"
        if self.kind == "rm1_rn":
            return f"rm1_rn-{self.value:g}"
        return self.kind


def family(lambdas: Sequence[float], rns: Sequence[float]) -> list[QueryModel]:
    """The family in the paper's order: original, RM, combined models, RM with D_N removed, target."""
    return ([QueryModel("original"), QueryModel("rm1")] + [QueryModel("rm3", float(l)) for l in lambdas]
            + [QueryModel("rm1_rn", float(r)) for r in rns] + [QueryModel("target")])


def build_query_model(model: QueryModel, query_tokens: Sequence[str], fb_tokens: Sequence[Sequence[str]],
                      fb_scores: Sequence[float], fb_relevant: Sequence[bool], n_terms: int = 100,
                      fb_weighting: str = "softmax") -> dict[str, float]:
    """``P(w|θ)`` of one model for one query.

    ``fb_tokens``/``fb_scores``/``fb_relevant``: the feedback documents in initial-ranking order, their first-pass
    scores and whether the qrels judge them relevant.
    """
    q = rm3.query_model(query_tokens)
    rel = np.asarray(fb_relevant, dtype=bool)
    if model.kind == "original":
        return q
    if model.kind == "target":
        idx = np.flatnonzero(rel)
        if idx.size == 0:
            return q
        return rm3.relevance_model([fb_tokens[i] for i in idx], np.full(idx.size, 1.0 / idx.size), n_terms)
    keep = np.ones(len(fb_tokens), dtype=bool)
    if model.kind == "rm1_rn":
        nonrel = np.flatnonzero(~rel)
        k = int(round(model.value * nonrel.size))
        keep[nonrel[:k]] = False
    idx = np.flatnonzero(keep)
    if idx.size == 0:
        return q
    w = rm3.feedback_weights(np.asarray(fb_scores, dtype=float)[idx], fb_weighting)
    rm = rm3.relevance_model([fb_tokens[i] for i in idx], w, n_terms)
    if model.kind in ("rm1", "rm1_rn"):
        return rm or q
    if model.kind == "rm3":
        return rm3.interpolate(q, rm, model.value)
    raise ValueError(f"unknown query model {model.kind!r}")


def run_family(index, topics: pd.DataFrame, qrels: pd.DataFrame, models: Sequence[QueryModel], doc_text,
               fb_docs: int = 30, n_terms: int = 100, depth: int = 1000, mu: float = 1000.0,
               fb_weighting: str = "softmax", progress=None) -> dict[str, pd.DataFrame]:
    """Run every model of the family; returns ``{model name: run frame (query_id, doc_id, score)}``."""
    from irrepro.retrieval.pisa import analyze

    relevant = {(q, d) for q, d, r in zip(qrels.query_id.astype(str), qrels.doc_id, qrels.relevance) if r > 0}
    q = topics.rename(columns={"query_id": "qid", "text": "query"})[["qid", "query"]]
    first = index.qld(mu=mu, num_results=fb_docs)(q).sort_values(["qid", "score", "docno"],
                                                                  ascending=[True, False, False])
    texts = doc_text(sorted(set(first["docno"])))
    analysed = {d: analyze(t) for d, t in texts.items()}
    per_query = {}
    for qid, text in zip(topics.query_id.astype(str), topics.text):
        stems, surf = analyze(text)
        fb = first[first.qid == qid]
        docs = list(fb.docno)
        surface: dict[str, dict[str, int]] = {}
        for st, sf in [(stems, surf)] + [analysed.get(d, ([], [])) for d in docs]:
            for a, b in zip(st, sf):
                surface.setdefault(a, {}).setdefault(b, 0)
                surface[a][b] += 1
        per_query[qid] = (stems, [analysed.get(d, ([], []))[0] for d in docs], fb.score.to_numpy(),
                          [(qid, d) in relevant for d in docs], surface)
    retriever = index.qld(mu=mu, num_results=depth, query_weighted=True)
    out = {}
    for i, model in enumerate(models, 1):
        rows = []
        for qid, (stems, fbt, fbs, fbr, surface) in per_query.items():
            qm = build_query_model(model, stems, fbt, fbs, fbr, n_terms, fb_weighting)
            toks = {}
            for stem, w in qm.items():
                forms = surface.get(stem) or {stem: 1}
                form = min(forms.items(), key=lambda kv: (-kv[1], kv[0]))[0]
                toks[form] = toks.get(form, 0.0) + w
            rows.append({"qid": qid, "query_toks": toks or {"": 1.0}})
        res = retriever(pd.DataFrame(rows))
        out[model.name] = res.rename(columns={"qid": "query_id", "docno": "doc_id"})[["query_id", "doc_id", "score"]]
        if progress:
            progress(i, len(models), model.name)
    return out


def score_family(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame, measures: Sequence[str],
                 collection: str) -> pd.DataFrame:
    """Per-topic scores (``scores.write_scores`` layout) of every model's run: ``measures`` per topic, with the
    model as ``system``."""
    from irrepro.core.evaluation import evaluate_run
    frames = []
    for name, run in runs.items():
        ev = evaluate_run(run, qrels, measures)
        ev["system"], ev["collection"] = name, collection
        frames.append(ev)
    return pd.concat(frames, ignore_index=True)


def run_collection(collection: str, index_path, topics_path, qrels_path, dataset: str, docs_jsonl, home,
                   lambdas: Sequence[float], rns: Sequence[float], fb_docs: int = 30, n_terms: int = 100,
                   depth: int = 1000, mu: float = 1000.0, fb_weighting: str = "softmax",
                   measures: Sequence[str] = ("AP",)) -> pd.DataFrame:
    """The SIGIR 2013 family on one collection with documents (config ``querymodels``): runs every model of
    :func:`family` on the PISA index (documents' text from ``ir_datasets`` under ``home``, or the JSONL
    ``docs_jsonl``) and returns the per-topic scores of :func:`score_family`."""
    import logging
    import os

    from irrepro.core.trec import read_qrels
    from irrepro.datasets import collections as coll

    log = logging.getLogger(__name__)
    os.environ["IR_DATASETS_HOME"] = os.path.abspath(home)
    from pyterrier_pisa import PisaIndex

    topics = pd.read_csv(topics_path, sep="\t", dtype=str, keep_default_na=False)
    qrels = read_qrels(qrels_path)
    doc_text = coll.DocText(dataset, jsonl=docs_jsonl)
    runs = run_family(PisaIndex(str(index_path), threads=1), topics, qrels, family(lambdas, rns), doc_text,
                      fb_docs=fb_docs, n_terms=n_terms, depth=depth, mu=mu, fb_weighting=fb_weighting,
                      progress=lambda i, n, name: log.info("[%d/%d] ran %s", i, n, name))
    doc_text.close()
    scores = score_family(runs, qrels, measures, collection)
    ap = scores.query("measure == @measures[0]").groupby("system")["value"].mean()
    log.info("mean %s per model:\n%s", measures[0], ap.round(4).to_string())
    return scores
