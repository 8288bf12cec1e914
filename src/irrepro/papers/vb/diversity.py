"""TREC Web diversity data as VB-Score intents (P4, Ding 2025 on real data).

Intents of a topic = its subtopics that have at least one relevant judged document (grade >= ``min_relevance``);
the qrels' second column carries the subtopic id (ir_datasets' ``subtopic_id``), as ir_measures/ndeval expect.
Two intent distributions per topic: uniform over the intents, and "judged mass": pi_i ∝ exp(log(m_i) / T), i.e.
proportional to the subtopic's judged relevant mass m_i when T = 1 (the paper's softmax with temperature,
Sec. 3.2, applied to log-mass scores), then optionally truncated (tau / top-K / rho) and renormalised.

Functions here are pure (DataFrames in and out) except :func:`load_diversity`, which reads ir_datasets (the caller
sets ``IR_DATASETS_HOME`` first, e.g. with :func:`irrepro.datasets.mirror.ensure_ir_datasets_home`).
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from irrepro.core.scores import topic_key
from irrepro.core.verify import to_markdown
from irrepro.errors import InputError
from irrepro.papers.vb import vbscore as vbs

INTENT_COLUMNS = ["query_id", "subtopic", "n_rel", "mass", "pi_uniform", "pi_mass"]
PRIORS = ("uniform", "mass")
GAINS = ("binary", "dcg")


def load_diversity(dataset_id: str):
    """Topics and per-subtopic qrels of an ir_datasets diversity collection.

    Returns (topics, qrels): topics ``query_id, text`` (the query field), qrels ``query_id, iteration, doc_id,
    relevance`` with ``iteration`` = subtopic id.
    """
    import ir_datasets

    from irrepro.datasets.collections import store_lock

    ds = ir_datasets.load(dataset_id)
    with store_lock(dataset_id):  # ir_datasets may extract the topics and qrels on first use
        topics = pd.DataFrame([(q.query_id, " ".join(str(getattr(q, "query", getattr(q, "title", ""))).split()))
                               for q in ds.queries_iter()], columns=["query_id", "text"])
        qiter = list(ds.qrels_iter())
    rows = []
    for q in qiter:
        sub = getattr(q, "subtopic_id", None)
        if sub is None:
            raise InputError(f"{dataset_id!r} has no per-subtopic qrels (use the '/diversity' variant)")
        rows.append((q.query_id, str(sub), q.doc_id, int(q.relevance)))
    qrels = pd.DataFrame(rows, columns=["query_id", "iteration", "doc_id", "relevance"])
    return topics, qrels


def intents_from_qrels(qrels: pd.DataFrame, min_relevance: int = 1, mass: str = "count",
                       temperature: float = 1.0, tau=None, top_k=None, rho=None) -> pd.DataFrame:
    """The intent table: one row per (topic, subtopic with >= 1 relevant document).

    ``mass``: ``count`` (number of relevant documents) or ``grade`` (sum of their grades). ``pi_uniform`` = 1/n;
    ``pi_mass`` = softmax(log m / T) (Sec. 3.2, step 1). The truncation (tau, top_k, rho; Sec. 3.2 step 3a) is
    applied to both distributions, then each is renormalised; truncated intents keep a row with pi = 0.
    """
    if mass not in ("count", "grade"):
        raise InputError(f"vb.mass must be 'count' or 'grade', got {mass!r}")
    rel = qrels[qrels["relevance"] >= min_relevance]
    if rel.empty:
        raise InputError(f"no judgment with relevance >= {min_relevance}")
    g = rel.groupby(["query_id", "iteration"], sort=False)
    t = pd.DataFrame({"n_rel": g.size(), "grade": g["relevance"].sum()}).reset_index()
    t = t.rename(columns={"iteration": "subtopic"})
    t["mass"] = (t["n_rel"] if mass == "count" else t["grade"]).astype(float)
    t["_q"] = t["query_id"].map(topic_key)
    t["_s"] = t["subtopic"].map(topic_key)
    t = t.sort_values(["_q", "_s"], kind="mergesort").reset_index(drop=True)
    pu = np.empty(len(t))
    pm = np.empty(len(t))
    for _, idx in t.groupby("query_id", sort=False).indices.items():
        n = len(idx)
        u = vbs.truncate(np.full(n, 1.0 / n), tau=tau, top_k=top_k, rho=rho)
        m = vbs.truncate(vbs.softmax(np.log(t["mass"].to_numpy()[idx]), temperature), tau=tau, top_k=top_k, rho=rho)
        pu[idx] = u
        pm[idx] = m
    t["pi_uniform"] = pu
    t["pi_mass"] = pm
    return t[INTENT_COLUMNS]


def relevance_tensor(run: pd.DataFrame, qrels: pd.DataFrame, intents: pd.DataFrame, depth: int,
                     min_relevance: int = 1):
    """Arrays for scoring one run: topics (list), pi (dict prior -> (Q, N)), n_rel (Q, N), rel (Q, N, depth).

    ``run`` is ranked as :func:`irrepro.core.trec.sort_run` ranks it (column ``rank``, 1-based). rel[q, i, j] is True
    when the document at rank j+1 for topic q is relevant (grade >= min_relevance) to intent i. Topics are those of
    ``intents``; a topic the run does not retrieve for gets an all-False row (ES = 0). Padding intents have pi = 0.
    """
    topics = list(dict.fromkeys(intents["query_id"]))
    qpos = {q: i for i, q in enumerate(topics)}
    slot = intents.groupby("query_id", sort=False).cumcount().to_numpy()
    N = int(slot.max()) + 1 if len(slot) else 0
    Q = len(topics)
    qi = intents["query_id"].map(qpos).to_numpy()
    pi = {}
    for p in PRIORS:
        a = np.zeros((Q, N))
        a[qi, slot] = intents[f"pi_{p}"].to_numpy()
        pi[p] = a
    n_rel = np.zeros((Q, N), dtype=int)
    n_rel[qi, slot] = intents["n_rel"].to_numpy()
    rel = np.zeros((Q, N, depth), dtype=bool)
    r = run[run["rank"] <= depth][["query_id", "doc_id", "rank"]]
    key = intents[["query_id", "subtopic"]].assign(_slot=slot)
    q = qrels[qrels["relevance"] >= min_relevance].rename(columns={"iteration": "subtopic"})
    hits = r.merge(q[["query_id", "subtopic", "doc_id"]], on=["query_id", "doc_id"])
    hits = hits.merge(key, on=["query_id", "subtopic"])
    if len(hits):
        rel[hits["query_id"].map(qpos).to_numpy(), hits["_slot"].to_numpy(), hits["rank"].to_numpy() - 1] = True
    return topics, pi, n_rel, rel


def gains_at(rel, n_rel, k: int, gain: str) -> np.ndarray:
    """Per-intent gains (Q, N) at cut-off k: ``binary`` or ``dcg`` (normalised by the intent's ideal DCG@k)."""
    if gain == "binary":
        return vbs.binary_gains(rel, k)
    if gain == "dcg":
        return vbs.dcg_gains(rel, k, n_relevant=n_rel)
    raise InputError(f"unknown gain {gain!r}; expected one of {GAINS}")


def per_topic_es(run: pd.DataFrame, qrels: pd.DataFrame, intents: pd.DataFrame, ks: Sequence[int],
                 gains: Iterable[str] = GAINS, priors: Iterable[str] = PRIORS, min_relevance: int = 1) -> pd.DataFrame:
    """ES(Q, S@k) for every topic x gain x prior x k: columns ``topic, gain, prior, k, es``."""
    ks = sorted(int(k) for k in ks)
    topics, pi, n_rel, rel = relevance_tensor(run, qrels, intents, max(ks), min_relevance)
    out = []
    for gain in gains:
        for k in ks:
            g = gains_at(rel, n_rel, k, gain)
            for prior in priors:
                es = vbs.expected_success(pi[prior], g)
                out.append(pd.DataFrame({"topic": topics, "gain": gain, "prior": prior, "k": k, "es": es}))
    return pd.concat(out, ignore_index=True)


def pooled_intent_gains(run: pd.DataFrame, qrels: pd.DataFrame, intents: pd.DataFrame, k: int, gain: str = "binary",
                        min_relevance: int = 1) -> np.ndarray:
    """Gains of every (topic, intent) pair at cut-off k, flattened: the paper's student-pipeline setting (one intent
    population, uniform prior) for bootstrap CIs "across intents" (Figs 3-4)."""
    topics, pi, n_rel, rel = relevance_tensor(run, qrels, intents, int(k), min_relevance)
    g = gains_at(rel, n_rel, int(k), gain)
    return g[pi["uniform"] > 0]


def diversity_measures(run: pd.DataFrame, qrels: pd.DataFrame, measures: Sequence[str]) -> pd.DataFrame:
    """Intent-aware measures (alpha-nDCG@k, ERR-IA@k, ...) per topic via ir_measures + pyndeval.

    The subtopic goes in the qrel's iteration field (else ndeval sees one subtopic per query). Returns
    ``topic, measure, value`` for the judged topics; topics the run misses score 0.
    """
    import ir_measures

    parsed = [ir_measures.parse_measure(m) for m in measures]
    names = {p: m for p, m in zip(parsed, measures)}
    qr = [ir_measures.Qrel(str(q), d, int(r), str(it))
          for q, it, d, r in zip(qrels.query_id, qrels.iteration, qrels.doc_id, qrels.relevance)]
    rn = [ir_measures.ScoredDoc(str(q), d, float(s)) for q, d, s in zip(run.query_id, run.doc_id, run.score)]
    rows = [(m.query_id, names.get(m.measure, str(m.measure)), float(m.value)) for m in ir_measures.iter_calc(parsed, qr, rn)]
    df = pd.DataFrame(rows, columns=["topic", "measure", "value"])
    judged = sorted(set(qrels.loc[qrels.relevance > 0, "query_id"].astype(str)), key=topic_key)
    full = pd.MultiIndex.from_product([judged, list(measures)], names=["topic", "measure"])
    return df.set_index(["topic", "measure"]).reindex(full, fill_value=0.0).reset_index()


def intents_summary(collections: Sequence[str], intents: Sequence[pd.DataFrame],
                    topics: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Per collection: topics, intents per topic, single-intent topics, and how peaked the judged-mass prior is
    (mean over topics of max pi and of the entropy / log(n), 1 = uniform; topics with one intent left out)."""
    rows = []
    for c, it, tp in zip(collections, intents, topics):
        n = it.groupby("query_id").size()
        pm = it[it.pi_mass > 0].groupby("query_id")["pi_mass"]
        ent = pm.apply(lambda p: float(-(p * np.log(p)).sum()))
        norm_ent = (ent / np.log(n.reindex(ent.index)).replace(0, np.nan)).dropna()
        rows.append(dict(collection=c, topics=len(tp), topics_with_intents=len(n), intents=len(it),
                         intents_per_topic_mean=n.mean(), intents_per_topic_min=n.min(), intents_per_topic_max=n.max(),
                         single_intent_topics=int((n == 1).sum()), mass_pi_max_mean=pm.max().mean(),
                         mass_pi_norm_entropy_mean=norm_ent.mean()))
    return pd.DataFrame(rows)


def intents_summary_markdown(df: pd.DataFrame) -> str:
    return ("# Intents (subtopics with a relevant document) of the TREC Web diversity topics\n\n"
            "`mass_pi_*`: the judged-mass prior; max probability and entropy / log(n) (1 = uniform), "
            "means over topics with more than one intent for the entropy.\n\n" + to_markdown(df))
