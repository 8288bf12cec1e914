"""Simulated document collections: per-topic variance of AP (BV-Test Sec. 3.4, after Robertson & Kanoulas 2012).

BV-Test (Zhang et al., IP&M 2022), Section 3.4: the document collection is a sample from a larger population
(Cormack & Lynam 2006), so a system's AP on a topic has a per-topic variance across collection samples. For one
system–topic pair with ``N`` retrieved documents (with scores), ``r`` of them relevant:

1. draw ``r_s ~ Poisson(r)``;
2. draw ``r_s`` scores *with replacement* from the ``r`` relevant retrieved scores and ``N − r_s`` from the
   ``N − r`` non-relevant ones (the bootstrap of Ferro & Sanderson 2019);
3. sort the ``N`` simulated scores in descending order; each carries its label, so a binary metric (AP) applies.

Repeating this ``k`` times (``k = 100`` in the paper) gives ``y_{i,j}``, the AP of system ``i`` on simulated
collection ``j`` (BV-Test Table 3); ``biasvariance.per_topic_bias_variance`` then applies Eq. 12–14, and
``irrepro.papers.bv.simulated`` builds Tables 10–11 of one or more collections.

**How it is computed (exactly the procedure above, without drawing ``N`` scores).** Sorting bootstrap copies of the
original scores reproduces the original order, copies of one document side by side. So a simulated list is fixed
by how many copies each retrieved document gets; AP only needs, for each relevant copy, how many non-relevant copies
precede it. With ``a_g`` copies of the ``g``-th relevant document (``(a_0..a_{r−1}) ~ Multinomial(r_s, 1/r)``) and
``n_h`` non-relevant copies in the segment ``h`` of non-relevant documents lying before it (segment sizes ``m_h``,
``(n_0..n_r) ~ Multinomial(N − r_s, m_h / (N − r))``), the relevant copies of document ``g`` sit at ranks
``A_{g−1} + t + B_g`` (``t = 1..a_g``, ``A_{g−1} = Σ_{h<g} a_h``, ``B_g = Σ_{h≤g} n_h``) and contribute

    Σ_{t=1}^{a_g} (A_{g−1} + t) / (A_{g−1} + t + B_g) = a_g − B_g [ψ(A_{g−1} + B_g + a_g + 1) − ψ(A_{g−1} + B_g + 1)]

(ψ = digamma) to the sum of precisions. Both multinomials are drawn as chains of binomials, vectorised over all
(system, topic, sample) cells at once; cells are sorted by ``r`` so that step ``g`` touches only the cells with
``r > g``. The cost is ``O(k · Σ r)`` instead of ``O(k · S · T · N log N)``. Ties between an original relevant and
non-relevant score keep the run's order (trec_eval's: score descending, docno descending).

**The AP denominator** (the paper does not say): ``unretrieved="poisson"`` (default) adds ``u ~ Poisson(R − r)``
unretrieved relevant documents, ``R`` from the qrels, so the simulated collection has ``R_s = r_s + u ~ Poisson(R)``
relevant documents (Robertson & Kanoulas's population view); ``"fixed"`` adds ``R − r``; ``"retrieved"`` uses
``R_s = r_s`` (the 1000 simulated scores alone). ``AP = 0`` when ``R_s = 0``.

**Shared collection samples** (``shared=True``; not the paper's literal procedure, an option): BV-Test's Table 3 has
one column per collection sample ``dc_j`` for all systems, and ``y_T,j`` is the best system *on that sample*. With
``shared=True`` each relevant document retrieved by some system gets ``c_d ~ Poisson(1)`` copies in sample ``j``
(the Poisson bootstrap), the same for every system, so a system's ``r_s = Σ_d c_d ~ Poisson(r)`` as in the paper,
but systems that retrieve the same relevant documents move together across samples; the non-relevant copies are
drawn per system as above (``N − r_s`` of them, none when ``r_s ≥ N``, so a list may exceed ``N``), and with
``unretrieved="poisson"`` ``R_s`` is the sample's own number of relevant documents (shared). By default
(``shared=False``) every system–topic pair is simulated independently, as Sec. 3.4 describes it, and ``y_T,j``
is the maximum of the systems' ``j``-th draws.

**Defined behaviour on bad or degenerate input.** A topic missing from a run is an empty list (AP 0, as
``trec_eval -c``); a topic no system retrieves a relevant document for has AP 0 in every sample and is reported
as not useful (the paper drops Ad-hoc 1995's topic 201 for this reason); when every retrieved document is relevant
(``N = r``) there are no non-relevant scores to draw and the simulated list holds the ``r_s`` relevant copies only;
``r_s`` is capped at ``N``. ``k < 2`` and a negative relevance threshold raise ``InputError``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd
from scipy.special import digamma

from irrepro.core.scores import topic_key
from irrepro.errors import InputError

UNRETRIEVED = ("poisson", "fixed", "retrieved")


@dataclass
class RelevanceProfile:
    """What the simulation needs of a set of runs on one collection.

    ``systems`` (S), ``topics`` (T); ``n_ret[s, t]`` documents retrieved; ``r[s, t]`` of them relevant;
    ``pos[s, t, :r]`` their 0-based ranks (ascending, padded with -1); ``R[t]`` relevant documents in the qrels;
    ``rel_id[s, t, :r]`` which of the ``U[t]`` relevant documents retrieved by some system each one is (for
    collection samples shared by all systems).
    """
    systems: list
    topics: list
    n_ret: np.ndarray
    r: np.ndarray
    pos: np.ndarray
    R: np.ndarray
    rel_id: np.ndarray | None = None
    U: np.ndarray | None = None

    @property
    def useful(self) -> np.ndarray:
        """Topics on which at least one system retrieved a relevant document."""
        return self.r.max(axis=0) > 0 if self.r.size else np.zeros(len(self.topics), bool)


def read_scored_run(path, system: str | None = None) -> pd.DataFrame:
    """A TREC run file (``qid Q0 docno rank score tag``) as ``query_id, doc_id, score, system``, read with pandas'
    C parser (the simulation reads tens of millions of lines). Any file the fast path cannot vouch for (wrong
    field count, a non-numeric or NaN score, a document twice for a query) is re-read by ``trec.read_run``, whose
    ``InputError`` names the file and line."""
    from irrepro.core.trec import read_run
    try:
        df = pd.read_csv(path, sep=r"\s+", header=None, dtype={0: str, 2: str, 5: str}, engine="c",
                         names=["query_id", "q0", "doc_id", "rank", "score", "tag", "extra"])
        ok = (len(df) > 0 and df["extra"].isna().all() and df["tag"].notna().all()
              and pd.api.types.is_numeric_dtype(df["score"]) and np.isfinite(df["score"].to_numpy(float)).all()
              and not df.duplicated(["query_id", "doc_id"]).any() and (system or df["tag"].nunique() == 1))
    except (ValueError, pd.errors.ParserError):
        ok = False
    if not ok:
        df = read_run(path, system)  # raises InputError with file and line
        return df[["query_id", "doc_id", "score", "system"]]
    df["system"] = system or df["tag"].iloc[0]
    return df[["query_id", "doc_id", "score", "system"]]


def relevance_profile(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame, rel_threshold: int = 1,
                      depth: int | None = None, topics=None) -> RelevanceProfile:
    """Build the :class:`RelevanceProfile` of ``runs`` (system -> frame with ``query_id, doc_id, score``) against
    ``qrels``: a document is relevant when its grade is ``>= rel_threshold`` (subtopic qrels: its best grade).
    Each list is ranked as trec_eval ranks it (score descending, docno descending) and cut at ``depth``.
    ``topics`` defaults to the judged topics (those in the qrels); run topics outside them are ignored.
    """
    if rel_threshold < 1:
        raise InputError(f"relevance threshold must be >= 1, got {rel_threshold}")
    if not runs:
        raise InputError("no runs given")
    q = qrels[["query_id", "doc_id", "relevance"]].copy()
    q["query_id"] = q["query_id"].astype(str)
    q["doc_id"] = q["doc_id"].astype(str)
    q = q.groupby(["query_id", "doc_id"], as_index=False)["relevance"].max()
    rel = q[q["relevance"] >= rel_threshold]
    if topics is None:
        topics = sorted(q["query_id"].unique(), key=topic_key)
    topics = [str(t) for t in topics]
    R = rel.groupby("query_id").size().reindex(topics, fill_value=0).to_numpy(dtype=np.int64)
    systems = list(runs)
    S, T = len(systems), len(topics)
    sizes = [len(runs[s]) for s in systems]
    qid = np.concatenate([runs[s]["query_id"].astype(str).to_numpy(object) for s in systems])
    doc = np.concatenate([runs[s]["doc_id"].astype(str).to_numpy(object) for s in systems])
    score = np.concatenate([runs[s]["score"].to_numpy(float) for s in systems])
    si = np.repeat(np.arange(S, dtype=np.int64), sizes)
    ti = pd.Index(topics).get_indexer(qid).astype(np.int64)
    dcode, docs = pd.factorize(doc, sort=True)          # codes in docno order: ties break by docno descending
    dcode = dcode.astype(np.int64)
    # trec_eval's order within each (system, topic): one run at a time (runs are sorted by system already);
    # a run already in that order, topics in contiguous blocks, is kept as it is
    o = np.empty(si.size, np.int64)
    off = 0
    for n in sizes:
        sl = slice(off, off + n)
        tt, sc, dc = ti[sl], score[sl], dcode[sl]
        same = tt[1:] == tt[:-1]
        ordered = (np.all(~same | (sc[:-1] > sc[1:]) | ((sc[:-1] == sc[1:]) & (dc[:-1] > dc[1:])))
                   and np.count_nonzero(~same) + 1 == np.unique(tt).size) if n else True
        o[sl] = off + (np.arange(n) if ordered else _rank_order(tt, sc, dc))
        off += n
    si, ti, dcode = si[o], ti[o], dcode[o]
    keep = ti >= 0
    si, ti, dcode = si[keep], ti[keep], dcode[keep]
    cell = si * T + ti
    start = np.r_[0, np.flatnonzero(np.diff(cell)) + 1] if cell.size else np.array([], np.int64)
    rank0 = np.arange(cell.size) - np.repeat(start, np.diff(np.r_[start, cell.size]))
    if depth is not None:
        d = rank0 < depth
        si, ti, dcode, rank0 = si[d], ti[d], dcode[d], rank0[d]
    n_ret = np.zeros((S, T), np.int64)
    np.add.at(n_ret, (si, ti), 1)
    nd = max(len(docs), 1)
    rel_t = pd.Index(topics).get_indexer(rel["query_id"].to_numpy(object))
    rel_d = pd.Index(docs).get_indexer(rel["doc_id"].to_numpy(object))
    ok = (rel_t >= 0) & (rel_d >= 0)
    isrel = np.isin(ti * nd + dcode, rel_t[ok].astype(np.int64) * nd + rel_d[ok])
    hs, ht, hp = si[isrel], ti[isrel], rank0[isrel]
    r = np.zeros((S, T), np.int64)
    np.add.at(r, (hs, ht), 1)
    # hits are sorted by (system, topic, rank): their index within the cell is a running count
    hc = hs * T + ht
    first = np.r_[0, np.flatnonzero(np.diff(hc)) + 1] if hc.size else np.array([], np.int64)
    within = np.arange(hc.size) - np.repeat(first, np.diff(np.r_[first, hc.size]))
    pos = np.full((S, T, max(int(r.max()) if r.size else 0, 1)), -1, np.int64)
    pos[hs, ht, within] = hp
    # number the relevant documents some system retrieved, per topic
    hkey = ht * nd + dcode[isrel]
    ukey, inv = np.unique(hkey, return_inverse=True)
    ut = ukey // nd
    ufirst = np.searchsorted(ut, np.arange(T))
    U = np.bincount(ut, minlength=T).astype(np.int64)
    rel_id = np.full(pos.shape, -1, np.int64)
    rel_id[hs, ht, within] = inv.reshape(-1) - ufirst[ut[inv.reshape(-1)]]
    return RelevanceProfile(systems, topics, n_ret, r, pos, R, rel_id, U)


def _small_int(a):
    # numpy's stable sort is a radix sort for integers of 16 bits or less
    return a.astype(np.int16) if a.size and a.min() > -32768 and a.max() < 32768 else a


def _rank_order(t, score, dcode):
    """``np.lexsort((-dcode, -score, t))`` (topic, then score descending, then docno descending) as three stable
    passes, two of them radix sorts."""
    o = np.argsort(_small_int(-dcode), kind="stable")
    o = o[np.argsort(-score[o], kind="stable")]
    return o[np.argsort(_small_int(t[o]), kind="stable")]


def average_precision(profile: RelevanceProfile) -> np.ndarray:
    """AP of every system on every topic of the real collection (``S × T``): ``Σ_g (g+1)/(pos_g+1) / R``.

    The simulation's special case ``r_s = r`` with one copy of each document; equals trec_eval's AP.
    """
    idx = np.arange(profile.pos.shape[2]) + 1.0
    valid = profile.pos >= 0
    prec = np.divide(idx, profile.pos + 1.0, out=np.zeros(profile.pos.shape), where=valid).sum(axis=2)
    R = profile.R[None, :].astype(float)
    return np.divide(prec, R, out=np.zeros_like(prec), where=R > 0)


def simulate_ap(profile: RelevanceProfile, k: int, rng: np.random.Generator,
                unretrieved: str = "poisson", shared: bool = False) -> np.ndarray:
    """AP of every system on ``k`` simulated collections per topic: an array ``S × T × k`` (BV-Test Sec. 3.4).

    ``rng``: a ``numpy.random.Generator`` (the only source of randomness). ``unretrieved``: the AP denominator, see
    the module docstring. ``shared``: see the module docstring (one collection sample per topic and ``j`` for
    every system). Vectorised over all cells; memory ``O(S · T · k)``.
    """
    if k < 2:
        raise InputError(f"the number of simulated collections k must be >= 2 (a variance over samples), got {k}")
    if unretrieved not in UNRETRIEVED:
        raise InputError(f"unknown unretrieved={unretrieved!r}; expected one of {UNRETRIEVED}")
    S, T = profile.r.shape
    r = profile.r.reshape(-1)
    n = profile.n_ret.reshape(-1)
    R = np.broadcast_to(profile.R[None, :], (S, T)).reshape(-1)
    pos = profile.pos.reshape(S * T, -1)
    if (r > n).any() or (R[r > 0] < r[r > 0]).any():
        raise InputError("inconsistent relevance profile: more relevant retrieved than retrieved or than judged")
    order = np.argsort(-r, kind="stable")                 # cells with most relevant documents first
    r, n, R, pos = r[order], n[order], R[order], pos[order]
    C = r.size
    if shared:
        if profile.rel_id is None:
            raise InputError("shared collection samples need the profile's rel_id (build it with relevance_profile)")
        tcell = (order % T).astype(np.int64)
        rid = profile.rel_id.reshape(S * T, -1)[order]
        U = profile.U
        cnt = rng.poisson(1.0, size=(T, max(int(U.max()), 1), k))   # copies of each relevant document, per sample
        # the unretrieved relevant documents of the topic, shared too: Poisson(R - U)
        unret = rng.poisson(np.broadcast_to(np.maximum(profile.R - U, 0)[:, None], (T, k)))
        Rs_topic = np.where(np.arange(cnt.shape[1])[None, :, None] < U[:, None, None], cnt, 0).sum(axis=1) + unret
    # non-relevant segment sizes m_h (h = 0..r): documents between consecutive relevant ones
    P = np.concatenate([np.full((C, 1), -1), np.where(pos >= 0, pos, n[:, None]), n[:, None]], axis=1)
    m = np.clip(np.diff(P, axis=1) - 1, 0, None)          # C x (rmax + 1); sums to n - r
    rmax = int(r[0]) if C else 0
    if shared:
        rs = np.zeros((C, k), np.int64)
        for g in range(rmax):
            a_cells = int(np.searchsorted(-r, -g, side="left"))
            rs[:a_cells] += cnt[tcell[:a_cells], rid[:a_cells, g]]
    else:
        rs = np.minimum(rng.poisson(np.broadcast_to(r[:, None], (C, k))), n[:, None])
    if unretrieved == "poisson" and shared:
        Rs = Rs_topic[tcell]
    elif unretrieved == "poisson":
        Rs = rs + rng.poisson(np.broadcast_to((R - r)[:, None], (C, k)))
    elif unretrieved == "fixed":
        Rs = rs + (R - r)[:, None]
    else:
        Rs = rs.copy()
    nonrel = n - r
    M = np.where(nonrel[:, None] > 0, np.maximum(n[:, None] - rs, 0), 0)  # non-relevant copies to place
    rest_m = np.broadcast_to(nonrel[:, None], (C, k)).astype(np.int64).copy()
    left_a = rs.astype(np.int64).copy()                    # relevant copies still to place
    left_n = M.astype(np.int64)                            # non-relevant copies still to place
    A = np.zeros((C, k), np.int64)                         # relevant copies placed so far
    B = np.zeros((C, k), np.int64)                         # non-relevant copies placed so far
    total = np.zeros((C, k))
    for g in range(rmax):
        a_cells = int(np.searchsorted(-r, -g, side="left"))  # cells with r > g form the prefix [0, a_cells)
        sl = slice(0, a_cells)
        # non-relevant copies in segment g (before relevant document g): Binomial(left, m_g / rest)
        mg = m[sl, g][:, None]
        rm = rest_m[sl]
        p = np.divide(mg, rm, out=np.zeros(rm.shape), where=rm > 0)
        ng = rng.binomial(left_n[sl], np.minimum(p, 1.0))
        left_n[sl] -= ng
        rest_m[sl] -= mg
        B[sl] += ng
        # copies of relevant document g: Binomial(left, 1 / (r - g)); the last one takes the rest
        if shared:
            ag = cnt[tcell[sl], rid[sl, g]]
        else:
            ag = rng.binomial(left_a[sl], 1.0 / (r[sl] - g)[:, None])
            left_a[sl] -= ag
        Ag, Bg = A[sl], B[sl]
        base = Ag + Bg + 1.0
        total[sl] += ag - Bg * (digamma(base + ag) - digamma(base))
        A[sl] += ag
    ap = np.divide(total, Rs, out=np.zeros((C, k)), where=Rs > 0)
    out = np.empty_like(ap)
    out[order] = ap
    return out.reshape(S, T, k)


PER_TOPIC_COLUMNS = ["system", "topic", "R", "r", "n_ret", "ap", "mean", "bias2", "var", "c", "useful"]


def per_topic_table(profile: RelevanceProfile, k: int, rng: np.random.Generator,
                    unretrieved: str = "poisson", shared: bool = False) -> pd.DataFrame:
    """Simulate ``k`` collections per topic and apply Eq. 12 per topic: one row per (system, topic) with the AP on
    the real collection (``ap``), the mean over samples (``mean``), ``bias2``, ``var`` (population variance over
    the ``k`` samples), the topic's target value ``c`` and ``useful`` (some system retrieved a relevant document)."""
    from irrepro.papers.bv.biasvariance import per_topic_bias_variance
    Y = simulate_ap(profile, k, rng, unretrieved, shared)
    bias2, var, c = per_topic_bias_variance(Y)
    S, T = profile.r.shape
    return pd.DataFrame({
        "system": np.repeat(profile.systems, T), "topic": np.tile(profile.topics, S),
        "R": np.tile(profile.R, S), "r": profile.r.reshape(-1), "n_ret": profile.n_ret.reshape(-1),
        "ap": average_precision(profile).reshape(-1), "mean": Y.mean(axis=2).reshape(-1),
        "bias2": bias2.reshape(-1), "var": var.reshape(-1), "c": np.tile(c, S), "useful": np.tile(profile.useful, S),
    })[PER_TOPIC_COLUMNS]
