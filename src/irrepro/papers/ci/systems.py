"""Confidence intervals around the metric of any run with few human-labelled queries: empirical bootstrap (the n
human values only), PPI (the paper's λ = 1 and PPI++'s tuned λ) and CRC (the labeler's distributions of every
query plus the n human values), per system and for the per-query difference of each pair of systems.

Two modes, one computation:

* **validation** (``queries=None``): a test collection's ``N`` judged queries (those with qrels) are the
  population; ``n`` of them play the human-labelled ones and the methods see only their grades. The mean by all
  human labels (``truth``) is reported beside each interval with whether the interval covers it: a simulation that
  checks the methods on your systems.
* **own queries** (``queries`` = the ``N`` queries of your topics): only the ``n`` judged queries have human
  grades (a qrels file that judges some of the queries, or a list of them); the target is the mean over all ``N``,
  which nothing observes, so ``truth`` and ``covered`` are empty. The guarantees are those of the methods: they
  hold when the judged queries are a uniform random sample of the ``N`` (drawn, not picked).

Each chosen system's top ``k`` of each of the ``N`` queries is labelled by the labeler (:func:`system_arrays`).

**The target** of every interval, in both modes, is the mean over these N queries (not over a population of
queries they stand for): the n judged ones are a uniform random sample of the N drawn without replacement, the
labels of all N are known, so the intervals use the variances of that sampling (:mod:`irrepro.papers.ci.finite`;
width 0 at n = N). The CI paper's own figures (Figs 2–4, Table 1) keep the paper's formulas.

* ``bootstrap``: :func:`~irrepro.papers.ci.finite.bootstrap_interval`, the bootstrap-t of the n human values.
* ``ppi`` / ``ppi++``: :func:`~irrepro.papers.ci.finite.ppi_interval` with the predictions of all N and the errors
  of the n (``lam=1`` / ``lam="tuned"``, the latter with a jackknife standard error). PPI++ gives no interval
  from fewer than :data:`~irrepro.papers.ci.finite.PPI_TUNED_MIN_QUERIES` (40) judged queries: its λ̂, fitted on the
  n it then averages, makes it narrower than its level there (the row's note says so); the bootstrap none from
  fewer than :data:`~irrepro.papers.ci.finite.BOOTSTRAP_MIN_QUERIES` (20).
* ``crc``: λ calibrated on two-stage resamples of the n shaped like the N − n others, bounds ``Û_CRC(λ)`` on the
  N − n other queries (Eq. 20); the interval of the mean over all N adds the n known human values:
  ``(Σ_labelled U + (N − n)·bound) / N`` (:func:`~irrepro.papers.ci.finite.crc_interval_of_mean`); its
  ``estimate`` is the interval's centre (CRC gives no point estimate). With fewer than
  :func:`~irrepro.papers.ci.finite.crc_min_queries` judged queries (20 at α = 0.05) there is no CRC interval: it
  cannot hold its level (the row's note says so). The difference of two systems has no CRC interval (CRC's λ
  shifts a metric one way; a difference of two metrics is not monotone in it).

Differences are each system − the baseline (the first system unless named), Bonferroni-corrected over the systems
compared by default. ``bias`` rows: the labels' metric − the human metric on the labelled queries, per system, with
systems that share the labeler's model flagged (``same_model``): the self-preference a labeler may show.

Measures: ``DCG@k`` (gain ``2^r − 1``, the CI paper's metric) and ``nDCG@k`` (DCG@k over the ideal DCG@k of the
query's qrels for the human values; for the predictions, over the ideal DCG@k of the predicted gains of the
query's pool, i.e. every chosen system's top k — the qrels of an unlabelled query are never read).

Grades: the human values (``truth`` and the n labelled queries' values every interval uses) take the qrels' own
grades. The labels' scale must reach the qrels' top grade (:func:`check_grade_scale`, as the paper's
:func:`~irrepro.papers.ci.ranking.label_matrix` requires): labels on a coarser scale than the qrels cannot predict
the human values, and a truth on grades cut to the labels' scale is not the run's metric.

A CRC calibration can fail (no λ in [−1, 1] meets its bound); the row's interval is then NaN and its ``note`` says
why (:func:`crc_failure_note`), as does the Markdown table.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from irrepro.core.gain import dcg_weights, exp_gain
from irrepro.errors import InputError
from irrepro.papers.ci import finite
from irrepro.papers.ci.crc import crc_query_utility
from irrepro.papers.ci.experiment import covers
from irrepro.papers.ci.metric import DEFAULT_LABEL_GAIN
from irrepro.papers.ci.plan import parse_measure
from irrepro.papers.ci.ranking import _natural, _pred_gain, grade_columns, labelled_ranking
from irrepro.stats import paired

METHODS = ("bootstrap", "ppi", "ppi++", "crc")
DIFF_METHODS = ("bootstrap", "ppi", "ppi++")
#: corrections of the difference intervals over the systems compared with the baseline (each at level 1 − α/m
#: under ``bonferroni``, m the number of comparisons: simultaneous coverage ≥ 1 − α)
CORRECTIONS = ("bonferroni", "none")
COLUMNS = ["system", "measure", "method", "n", "N", "estimate", "low", "high", "width", "truth", "covered",
           "lam_low", "lam_high", "ppi_lambda", "same_model", "note"]
DIFF_COLUMNS = ["system_a", "system_b", "measure", "method", "n", "N", "estimate", "low", "high", "width", "truth",
                "covered", "excludes_zero", "ppi_lambda", "correction", "alpha_adjusted", "note"]
BIAS_COLUMNS = ["system", "measure", "method", "n", "N", "estimate", "low", "high", "width", "same_model"]


def ranked_pairs(run: pd.DataFrame, qrels: pd.DataFrame, k: int, queries=None) -> pd.DataFrame:
    """``query_id, doc_id, rank, relevance``: the run's top ``k`` of each judged query (``queries=None``), or of each
    of ``queries`` (own-queries mode: the queries the qrels do not judge get no grade, NaN), as
    :func:`~irrepro.papers.ci.ranking.labelled_ranking` gives them."""
    return labelled_ranking(run, qrels, k, queries=queries)


def systems_pairs(runs: dict, qrels: pd.DataFrame, k: int, queries=None) -> pd.DataFrame:
    """The pool to label: every system's top ``k`` of each judged query (``queries=None``) or of each of
    ``queries`` (:func:`ranked_pairs`), one row per distinct (query, document) with its human grade (unjudged
    document of a judged query = 0; a query the qrels do not judge: none), sorted by query and document."""
    frames = [ranked_pairs(run, qrels, k, queries) for run in runs.values()]
    pool = pd.concat(frames, ignore_index=True).drop_duplicates(["query_id", "doc_id"])
    pool["_q"] = pool.query_id.map(_natural)
    pool = pool.sort_values(["_q", "doc_id"], kind="mergesort").drop(columns="_q")
    return pool[["query_id", "doc_id", "relevance"]].reset_index(drop=True)


def judged_queries(qrels: pd.DataFrame) -> list:
    """The queries with at least one judgment, in natural order: the N queries of the evaluation."""
    return sorted({str(q) for q in qrels.query_id}, key=_natural)


def topic_queries(topics: pd.DataFrame, where: str = "the topics") -> list:
    """The query ids of a topics table (``query_id`` and, where present, ``text`` columns; row i at line i + 2 of
    its file, after the header), distinct, in natural order: the N queries of the own-queries mode. A query listed
    twice or with an empty text is refused naming ``where`` (the file and its config key) and the line."""
    ids = [str(q).strip() for q in topics["query_id"]]
    seen: dict = {}
    for i, q in enumerate(ids):
        if not q:
            raise InputError(f"{where}, line {i + 2}: an empty query id")
        if q in seen:
            raise InputError(f"{where}, line {i + 2}: query {q!r} listed twice (first at line {seen[q] + 2})")
        seen[q] = i
    if "text" in topics:
        empty = [(i, q) for i, (q, t) in enumerate(zip(ids, topics["text"])) if not str(t).strip()
                 or str(t).strip().lower() == "nan"]
        if empty:
            i, q = empty[0]
            raise InputError(f"{where}, line {i + 2}: query {q!r} has an empty text ({len(empty)} such queries): a "
                             "labeler would label its documents against nothing")
    return sorted(ids, key=_natural)


def check_runs_cover(runs: dict, queries, where: str = "the topics") -> None:
    """Own-queries mode: every system's run ranks documents for every one of the N ``queries``; a query a run has
    no row for would count as a zero for that system (the runs were retrieved on another set of topics), so it is
    refused naming the system, the queries and ``where``."""
    for system, run in runs.items():
        have = {str(q) for q in run["query_id"].unique()}
        missing = [q for q in queries if str(q) not in have]
        if missing:
            raise InputError(f"{where}: {len(missing)} of its {len(queries)} queries have no ranked document in the "
                             f"run of {system} ({', '.join(map(repr, missing[:5]))}{' …' if len(missing) > 5 else ''})"
                             ": a run retrieved for other topics would count them as zeros; retrieve the runs on "
                             "these topics or drop those queries")


def own_judged(qrels: pd.DataFrame, queries, listed=None, where: str = "the qrels"):
    """Own-queries mode: ``(qrels, judged)``, the qrels cut to the judged queries and those queries in natural
    order. The judged queries are ``listed`` (only their qrels are kept, the others' never read) or every query the
    qrels judge; each must have a judgment, be among the topics' ``queries``, and there must be 2 <= n <= N - 2 of
    them (InputError naming ``where``)."""
    topics = {str(q) for q in queries}
    if listed is not None:
        listed = {str(q) for q in listed}
        qrels = qrels[qrels.query_id.astype(str).isin(listed)]
    judged = judged_queries(qrels)
    if listed is not None and listed - set(judged):
        raise InputError(f"labelled queries {sorted(listed - set(judged))[:3]} have no judgment in {where}")
    outside = sorted(set(judged) - topics)
    if outside:
        raise InputError(f"{where} judges queries that are not among the topics' queries: {outside[:3]}")
    if not 2 <= len(judged) <= len(topics) - 2:
        raise InputError(f"{where}: {len(judged)} judged of {len(topics)} queries; need 2 <= n <= N - 2")
    return qrels, judged


def validation_labelled(queries, listed, n: int, seed: int, where: str = "the labelled queries") -> list:
    """Validation mode's human-labelled queries: ``listed`` (each must be among the judged ``queries``; an
    :class:`~irrepro.errors.InputError` naming ``where`` otherwise) or ``n`` of them drawn with ``seed``
    (:func:`draw_queries`)."""
    if listed is None:
        return draw_queries(queries, n, seed)
    missing = sorted(set(listed) - set(queries))
    if missing:
        raise InputError(f"{where}: {missing[:5]} have no judgment in the qrels")
    return list(listed)


def draw_queries(queries, n: int, seed: int) -> list:
    """``n`` of ``queries`` drawn without replacement by ``numpy.random.default_rng(seed)`` (natural order)."""
    queries = list(queries)
    if not (2 <= int(n) <= len(queries) - 2):
        raise InputError(f"n = {n} human-labelled queries: need 2 <= n <= {len(queries) - 2} (of {len(queries)})")
    pick = np.random.default_rng(int(seed)).choice(len(queries), size=int(n), replace=False)
    return sorted((queries[i] for i in pick), key=_natural)


def top_grade(qrels: pd.DataFrame) -> int:
    """The highest grade of ``qrels`` (negative grades count as 0, as in the gains)."""
    return int(max(0, pd.to_numeric(qrels["relevance"]).max()))


def check_grade_scale(qrels: pd.DataFrame, n_grades: int, where: str = "the labels table",
                      collection: str | None = None) -> None:
    """Refuse labels on ``n_grades`` grades (0..G−1) for ``qrels`` that grade higher: their predictions cannot reach
    the human values (InputError; ``where`` names the labels' source, e.g. the config key of the prompt)."""
    top = top_grade(qrels)
    if top >= int(n_grades):
        q = qrels[pd.to_numeric(qrels["relevance"]) == top].iloc[0]
        of = f" of {collection}" if collection else ""
        raise InputError(f"{where} has {int(n_grades)} grades (0..{int(n_grades) - 1}) but the qrels{of} grade up to "
                         f"{top} (e.g. query {q.query_id!s}, document {q.doc_id!s}); label with a prompt whose "
                         f"grades reach {top}")


def ideal_dcg(qrels: pd.DataFrame, queries, k: int) -> np.ndarray:
    """Ideal DCG@k of each query's qrels (max grade per document, negatives as 0)."""
    q = qrels.assign(query_id=qrels.query_id.astype(str), doc_id=qrels.doc_id.astype(str))
    q = q.groupby(["query_id", "doc_id"])["relevance"].max().clip(lower=0).reset_index()
    w = dcg_weights(k)
    out = {}
    for qid, g in q.groupby("query_id"):
        top = np.sort(exp_gain(g.relevance.to_numpy(dtype=float)))[::-1][:k]
        out[qid] = float(top @ w[:top.size])
    return np.array([out.get(x, 0.0) for x in queries])


def system_arrays(run: pd.DataFrame, qrels: pd.DataFrame, labels: pd.DataFrame, queries, k: int,
                  label_gain: str = DEFAULT_LABEL_GAIN, own: bool = False) -> dict:
    """One system's top ``k`` of ``queries`` as arrays: ``grades`` (N, k) the qrels' grades, ``dists`` (N, k, G) label
    distributions, ``mask`` (N, k) (False past a query's last document; also for a query the run misses),
    ``u_true`` / ``u_pred`` (N,) DCG@k by human grades and by the labeler's predicted gain (``label_gain``).
    ``own``: ``queries`` are a topic set's (own-queries mode, :func:`ranked_pairs`): ``u_true`` is NaN for a query
    the qrels do not judge (its grades are 0 and never read)."""
    pairs = ranked_pairs(run, qrels, k, queries if own else None)
    cols = grade_columns(labels)
    lab = labels.assign(query_id=labels.query_id.astype(str), doc_id=labels.doc_id.astype(str))
    lab = lab.drop_duplicates(["query_id", "doc_id"])[["query_id", "doc_id"] + cols]
    m = pairs.merge(lab, on=["query_id", "doc_id"], how="left")
    if m[cols[0]].isna().any():
        ex = m.loc[m[cols[0]].isna(), ["query_id", "doc_id"]].head(3).to_records(index=False).tolist()
        raise InputError(f"{int(m[cols[0]].isna().sum())} ranked pairs have no label, e.g. {ex}")
    qi = {q: i for i, q in enumerate(queries)}
    m = m[m.query_id.isin(qi)]
    N, G = len(queries), len(cols)
    grades = np.zeros((N, k), dtype=int)
    dists = np.zeros((N, k, G))
    dists[:, :, 0] = 1.0
    mask = np.zeros((N, k), dtype=bool)
    r, c = m.query_id.map(qi).to_numpy(), m["rank"].to_numpy() - 1
    probs = m[cols].to_numpy(dtype=float)
    grades[r, c] = m.relevance.fillna(0).to_numpy()
    dists[r, c] = probs / probs.sum(axis=1, keepdims=True)
    mask[r, c] = True
    w = dcg_weights(k)
    u_true = np.where(mask, exp_gain(grades), 0.0) @ w
    if own:
        judged = {str(x) for x in qrels.query_id}
        u_true = np.where([q in judged for q in queries], u_true, np.nan)
    u_pred = _pred_gain(dists, mask, label_gain) @ w
    return {"grades": grades, "dists": dists, "mask": mask, "u_true": u_true, "u_pred": u_pred}


def pool_ideal_pred(pool: pd.DataFrame, labels: pd.DataFrame, queries, k: int,
                    label_gain: str = DEFAULT_LABEL_GAIN) -> np.ndarray:
    """Per query of ``queries``, the ideal DCG@k of the predicted gains of its ``pool`` documents (every chosen
    system's top k, :func:`systems_pairs`): nDCG's normaliser for the predictions (no qrels read)."""
    cols = grade_columns(labels)
    lab = labels.assign(query_id=labels.query_id.astype(str), doc_id=labels.doc_id.astype(str))
    lab = lab.drop_duplicates(["query_id", "doc_id"])
    m = pool[["query_id", "doc_id"]].astype(str).merge(lab[["query_id", "doc_id"] + cols], on=["query_id", "doc_id"])
    P = m[cols].to_numpy(dtype=float)
    P = P / P.sum(axis=1, keepdims=True)
    m["gain"] = _pred_gain(P[:, None, :], np.ones((len(P), 1), bool), label_gain)[:, 0]
    w = dcg_weights(k)
    out = {}
    for qid, g in m.groupby("query_id"):
        top = np.sort(g.gain.to_numpy())[::-1][:k]
        out[qid] = float(top @ w[:top.size])
    return np.array([out.get(x, 0.0) for x in queries])


def measure_arrays(a: dict, measure: str, ideal_true: np.ndarray, ideal_pred: np.ndarray) -> dict:
    """``u_true``, ``u_pred`` and the CRC weights ``W`` (N, k) of one system for ``measure``: DCG@k as
    :func:`system_arrays` gives it, nDCG@k divided by the ideal DCG (qrels for the human values, the predicted
    pool's for the predictions and CRC; a query with ideal 0 has value 0)."""
    kind, k = parse_measure(measure)
    if k != a["mask"].shape[1]:
        raise InputError(f"measure {measure}: the arrays hold the top {a['mask'].shape[1]}, not {k}")
    W = dcg_weights(k)[None, :] * a["mask"]
    if kind == "DCG":
        return {"u_true": a["u_true"], "u_pred": a["u_pred"], "W": W}
    inv_t = np.divide(1.0, ideal_true, out=np.zeros_like(ideal_true), where=ideal_true > 0)
    inv_p = np.divide(1.0, ideal_pred, out=np.zeros_like(ideal_pred), where=ideal_pred > 0)
    return {"u_true": a["u_true"] * inv_t, "u_pred": a["u_pred"] * inv_p, "W": W * inv_p[:, None]}


def _rng(seed, *key):
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=tuple(int(x) for x in key)))


def crc_failure_note(dists, W, cal, label_gain=DEFAULT_LABEL_GAIN, mask=None) -> str:
    """Why a failed CRC calibration (``cal.failed``) gives no interval, from the calibration queries' label
    distributions ``dists`` (n, k, G), weights ``W`` and ranked slots ``mask`` (default: ``W != 0``).

    When ``Û_CRC(q, λ)`` is the same at λ = −1 and λ = 1 for every query, λ has nothing to move: Eqs. 16–18 shift
    probability mass only between grades a label gives some, so one-hot labels (a labeler giving one grade with
    probability 1) leave every λ equally far from the human values. Otherwise the bound is out of reach even at the
    extreme λ (e.g. too few batches for α)."""
    P = np.asarray(dists, dtype=float)
    W = np.asarray(W, dtype=float)
    mask = (W != 0) if mask is None else np.asarray(mask, dtype=bool)
    ends = crc_query_utility(P, np.array([-1.0, 1.0]), weights=W, label_gain=label_gain)
    if np.allclose(ends[0], ends[1], rtol=1e-12, atol=1e-12):
        ranked = P[mask] if mask.any() else P.reshape(-1, P.shape[-1])
        top = ranked.argmax(axis=-1)
        if (ranked.max(axis=-1) >= 1 - 1e-12).all():
            one = f"the labels give every ranked document of the labelled queries grade {int(top[0])} with probability 1"
            what = one if (top == top[0]).all() else "every label puts all its mass on one grade"
        else:
            what = "the labels' predicted values do not depend on λ"
        return (f"no CRC interval: {what}, so CRC's λ has no probability mass to move (it shifts mass only between "
                f"grades a label gives some) and no λ in [-1, 1] meets the bound {cal.bound:.3g}; labels with some "
                "mass on every grade (a file labeler's smoothing) give one")
    sides = [f"{name} {risk:.3g}" for name, lam, risk in (("below", cal.lam_low, cal.risk_low),
                                                            ("above", cal.lam_high, cal.risk_high)) if np.isnan(lam)]
    return (f"no CRC interval: even at the extreme λ the risk ({', '.join(sides)}) is not below the bound "
            f"{cal.bound:.3g} over {cal.n_batches} batches")


def _truth(u_true) -> float:
    """The mean over all N by human labels; NaN where some query has no human value (own-queries mode)."""
    u = np.asarray(u_true, dtype=float)
    return float(u.mean()) if np.isfinite(u).all() else np.nan


def _covered(low, high, truth):
    """Whether the interval contains the truth; None where there is no truth (own-queries mode) and where the method
    gave no interval (its floor refused it: a refusal is not a miss, so an average of ``covered`` over the rows
    that have one is a coverage)."""
    if np.isnan(truth) or not (np.isfinite(low) and np.isfinite(high)):
        return None
    return bool(covers(low, high, truth))


def _bootstrap(values, N, alpha, n_boot, rng):
    """The bootstrap row's interval and note: none (NaN) below :data:`~irrepro.papers.ci.finite.BOOTSTRAP_MIN_QUERIES`
    judged queries."""
    note = finite.bootstrap_note(len(values), alpha)
    if note:
        nan = finite.FiniteInterval(np.nan, np.nan, np.nan, np.nan, np.nan)
        return nan, note
    return finite.bootstrap_interval(values, N, alpha, n_boot, rng=rng), ""


def _ppi_tuned(y_true, y_pred, pred_all, alpha):
    """The PPI++ row's interval and note: none (NaN) below :data:`~irrepro.papers.ci.finite.PPI_TUNED_MIN_QUERIES`
    judged queries."""
    note = finite.ppi_tuned_note(len(y_true), alpha)
    if note:
        return finite.FiniteInterval(np.nan, np.nan, np.nan, np.nan, np.nan), note
    return finite.ppi_interval(y_true, y_pred, pred_all, alpha, lam="tuned"), ""


def _zero_width_note(r, n: int, N: int, values) -> str:
    """Why an interval from n < N judged queries has width 0 (``""`` otherwise): the values it averages or
    resamples do not vary over the judged queries, so it says nothing about the N − n others."""
    if n >= N or not (np.isfinite(r.low) and np.isfinite(r.high)) or r.high > r.low:
        return ""
    v = np.asarray(values, dtype=float)
    return (f"zero width from n = {n} of N = {N} judged queries: the values it uses do not vary over the judged "
            f"queries (all {v[0]:.4g}; e.g. qrels with one grade only, or labels that match them exactly), so it "
            "cannot show the uncertainty about the others; judge queries that differ")


def system_intervals(u_true, u_pred, dists, W, labelled, *, alpha=0.05, n_boot=10_000, n_batches=10_000, seed=0,
                     label_gain=DEFAULT_LABEL_GAIN, key=(0,), mask=None) -> list[dict]:
    """The four intervals (:data:`METHODS`) of one system's mean over the N queries from the human values of the
    ``labelled`` queries (a bool mask or indices) only, each with the variance of that target
    (:mod:`irrepro.papers.ci.finite`: sampling the n of the N without replacement); ``truth`` = the mean of
    ``u_true`` over all N (NaN where ``u_true`` is NaN outside the labelled queries: own-queries mode, ``covered``
    then None); ``note``: why a row has no interval (the bootstrap, PPI++ or CRC with too few judged queries, or a failed
    CRC calibration, :func:`crc_failure_note`; ``mask``: the ranked slots).
    ``estimate``: bootstrap's the mean of the n human values, PPI's and PPI++'s their point estimates, CRC's its
    interval's centre (CRC gives no point estimate).
    Random streams: ``SeedSequence(seed, spawn_key=key + (method index,))``."""
    u_true = np.asarray(u_true, dtype=float)
    u_pred = np.asarray(u_pred, dtype=float)
    N = u_true.size
    L = np.zeros(N, bool)
    L[labelled] = True
    n = int(L.sum())
    if not np.isfinite(u_true[L]).all():
        raise InputError("a labelled query has no human value")
    truth = _truth(u_true)
    rows = []

    def row(method, r, note="", lam_low=np.nan, lam_high=np.nan):
        note = note or _zero_width_note(r, n, N, u_true[L] if method in ("bootstrap", "crc")
                                        else u_true[L] - (1.0 if np.isnan(r.lam) else r.lam) * u_pred[L])
        rows.append({"method": method, "n": n, "N": N, "estimate": float(r.estimate), "low": float(r.low),
                     "high": float(r.high), "width": float(r.high - r.low), "truth": truth,
                     "covered": _covered(r.low, r.high, truth), "lam_low": lam_low, "lam_high": lam_high,
                     "ppi_lambda": r.lam, "note": note})

    row("bootstrap", *_bootstrap(u_true[L], N, alpha, n_boot, _rng(seed, *key, 0)))
    row("ppi", finite.ppi_interval(u_true[L], u_pred[L], u_pred, alpha, lam=1.0))
    row("ppi++", *_ppi_tuned(u_true[L], u_pred[L], u_pred, alpha))
    c = finite.crc_interval_of_mean(u_true[L], dists, W, L, alpha, n_batches, rng=_rng(seed, *key, 3),
                                    label_gain=label_gain)
    cal, note = c.calibration, c.note
    if cal is not None and cal.failed:
        note = crc_failure_note(dists[L], W[L], cal, label_gain, None if mask is None else mask[L])
    row("crc", c.interval, note, np.nan if cal is None else cal.lam_low, np.nan if cal is None else cal.lam_high)
    return rows


def difference_intervals(d_true, d_pred, labelled, *, alpha=0.05, n_boot=10_000, seed=0, key=(1,)) -> list[dict]:
    """Bootstrap, PPI and PPI++ intervals at level 1 − ``alpha`` of the mean over the N queries of the per-query
    difference ``d = U_system − U_baseline`` (``d_pred`` its prediction) from the ``labelled`` queries' human
    differences (:mod:`irrepro.papers.ci.finite`); ``excludes_zero``: the interval decides which system is better
    at that level."""
    d_true = np.asarray(d_true, dtype=float)
    d_pred = np.asarray(d_pred, dtype=float)
    N = d_true.size
    L = np.zeros(N, bool)
    L[labelled] = True
    truth = _truth(d_true)
    rows = []

    def row(method, r, note=""):
        note = note or _zero_width_note(r, int(L.sum()), N, d_true[L] if method == "bootstrap"
                                        else d_true[L] - (1.0 if np.isnan(r.lam) else r.lam) * d_pred[L])
        rows.append({"method": method, "n": int(L.sum()), "N": N, "estimate": float(r.estimate),
                     "low": float(r.low), "high": float(r.high), "width": float(r.high - r.low), "truth": truth,
                     "covered": _covered(r.low, r.high, truth), "excludes_zero": bool(r.low > 0 or r.high < 0),
                     "ppi_lambda": r.lam, "note": note})

    row("bootstrap", *_bootstrap(d_true[L], N, alpha, n_boot, _rng(seed, *key, 0)))
    row("ppi", finite.ppi_interval(d_true[L], d_pred[L], d_pred, alpha, lam=1.0))
    row("ppi++", *_ppi_tuned(d_true[L], d_pred[L], d_pred, alpha))
    return rows


def label_bias(u_true, u_pred, labelled, alpha=0.05) -> dict:
    """How far the labels' metric is from the human one on the ``labelled`` queries: the mean of ``u_pred − u_true``
    over them with its t interval at level 1 − ``alpha`` (``estimate, low, high, width, n``). A labeler that
    overrates a system (e.g. one built on the labeler's own model) shows as a positive bias."""
    L = np.zeros(np.size(u_true), bool)
    L[labelled] = True
    d = np.asarray(u_pred, dtype=float)[L] - np.asarray(u_true, dtype=float)[L]
    mean, low, high, _ = paired.t_interval(d[:, None], alpha)
    return {"n": d.size, "estimate": float(mean[0]), "low": float(low[0]), "high": float(high[0]),
            "width": float(high[0] - low[0])}


def evaluate_systems(runs: dict, qrels: pd.DataFrame, labels: pd.DataFrame, labelled_queries, measures, *,
                     alpha=0.05, n_boot=10_000, n_batches=10_000, seed=0, label_gain=DEFAULT_LABEL_GAIN,
                     queries=None, baseline=None, correction="bonferroni", same_model=()):
    """``(table, differences, per_query, bias)`` for the systems of ``runs`` (name → run frame), the ``labels`` of
    every pool pair and the human grades of ``labelled_queries`` (COLUMNS, DIFF_COLUMNS, BIAS_COLUMNS;
    ``per_query``: system, measure, query_id, labelled, u_true, u_pred).

    ``queries``: None for the validation mode (the N queries are those ``qrels`` judge, ``truth`` their mean by all
    human labels), or the N queries of your topics (own-queries mode: ``qrels`` need judge only the labelled ones,
    which must be among ``queries``; no truth).
    Differences: each system − ``baseline`` (default: the first system), in the order of ``runs``, with intervals at
    level 1 − α/m under ``correction="bonferroni"`` (m = the number of systems compared with the baseline; α under
    ``"none"``). ``same_model``: the systems that share a model with the labeler (a column of the table and of the
    bias rows: the labeler may overrate them)."""
    own = queries is not None
    lq = {str(q) for q in labelled_queries}
    if own:
        queries = [str(q) for q in queries]
        qrels, _ = own_judged(qrels, queries, lq)  # the qrels of the other queries are never read
    else:
        queries = judged_queries(qrels)
        unknown = lq - set(queries)
        if unknown:
            raise InputError(f"labelled queries {sorted(unknown)[:3]} have no judgment in the qrels")
    L = np.array([q in lq for q in queries])
    if not (2 <= L.sum() <= len(queries) - 2):
        raise InputError(f"{int(L.sum())} labelled of {len(queries)} queries: need 2 <= n <= N - 2")
    check_grade_scale(qrels, len(grade_columns(labels)))
    if correction not in CORRECTIONS:
        raise InputError(f"correction {correction!r}: expected one of {', '.join(CORRECTIONS)}")
    measures = list(measures)
    ks = sorted({parse_measure(m)[1] for m in measures})
    names = list(runs)
    baseline = names[0] if baseline is None else baseline
    if baseline not in names:
        raise InputError(f"baseline {baseline!r} is not among the systems {names}")
    compared = [s for s in names if s != baseline]
    alpha_d = alpha / len(compared) if correction == "bonferroni" else alpha
    same = {str(s) for s in same_model}
    pool = {k: systems_pairs(runs, qrels, k, queries if own else None) for k in ks}
    arrays = {k: {s: system_arrays(runs[s], qrels, labels, queries, k, label_gain, own=own) for s in names}
              for k in ks}
    ideal_t = {k: ideal_dcg(qrels, queries, k) for k in ks}
    ideal_p = {k: pool_ideal_pred(pool[k], labels, queries, k, label_gain) for k in ks}
    rows, drows, brows, per_query = [], [], [], []
    bi = names.index(baseline)
    for mi, measure in enumerate(measures):
        k = parse_measure(measure)[1]
        ma = {s: measure_arrays(arrays[k][s], measure, ideal_t[k], ideal_p[k]) for s in names}
        for si, s in enumerate(names):
            a = ma[s]
            for r in system_intervals(a["u_true"], a["u_pred"], arrays[k][s]["dists"], a["W"], L, alpha=alpha,
                                      n_boot=n_boot, n_batches=n_batches, seed=seed, label_gain=label_gain,
                                      key=(0, mi, si), mask=arrays[k][s]["mask"]):
                rows.append({"system": s, "measure": measure, **r, "same_model": s in same})
            b = label_bias(a["u_true"], a["u_pred"], L, alpha)
            brows.append({"system": s, "measure": measure, "method": "labels - humans", "N": len(queries), **b,
                          "same_model": s in same})
            per_query.append(pd.DataFrame({"system": s, "measure": measure, "query_id": queries, "labelled": L,
                                           "u_true": a["u_true"], "u_pred": a["u_pred"]}))
        for s in compared:
            i = names.index(s)
            d_true = ma[s]["u_true"] - ma[baseline]["u_true"]
            d_pred = ma[s]["u_pred"] - ma[baseline]["u_pred"]
            for r in difference_intervals(d_true, d_pred, L, alpha=alpha_d, n_boot=n_boot, seed=seed,
                                          key=(1, mi, i, bi)):
                drows.append({"system_a": s, "system_b": baseline, "measure": measure, **r,
                              "correction": correction, "alpha_adjusted": alpha_d})
    return (pd.DataFrame(rows, columns=COLUMNS), pd.DataFrame(drows, columns=DIFF_COLUMNS),
            pd.concat(per_query, ignore_index=True), pd.DataFrame(brows, columns=BIAS_COLUMNS))


LONG_COLUMNS = ["kind", "system", "system_b", "measure", "method", "n", "N", "estimate", "low", "high", "width",
                "truth", "covered", "excludes_zero", "lam_low", "lam_high", "ppi_lambda", "same_model", "correction",
                "alpha_adjusted"]


def systems_long(table: pd.DataFrame, diffs: pd.DataFrame, bias: pd.DataFrame | None = None) -> pd.DataFrame:
    """The systems table, the difference rows and the label-bias rows in one frame (``kind`` = ``system`` /
    ``difference`` / ``bias``; a difference row is ``system`` − ``system_b``, the baseline); a ``note`` column last
    when a row has one (an interval that could not be computed, and why)."""
    a = table.assign(kind="system", system_b="", excludes_zero=(table.low > 0) | (table.high < 0))
    b = diffs.rename(columns={"system_a": "system"}).assign(kind="difference", lam_low=np.nan, lam_high=np.nan)
    parts = [a, b]
    if bias is not None and len(bias):
        parts.append(bias.assign(kind="bias", system_b="", excludes_zero=(bias.low > 0) | (bias.high < 0)))
    noted = any("note" in t and t.note.fillna("").astype(bool).any() for t in (table, diffs))
    out = pd.concat(parts, ignore_index=True)
    return out.reindex(columns=LONG_COLUMNS + (["note"] if noted else []))


def write_systems_md(table: pd.DataFrame, diffs: pd.DataFrame, collection: str, labeler: str, labelled, alpha,
                     path, bias: pd.DataFrame | None = None) -> None:
    """The systems table as Markdown: each interval (beside the value by all human labels in the validation mode),
    the differences from the baseline and the labels' bias per system (systems sharing the labeler's model
    flagged)."""
    own = table.truth.isna().all()
    N = int(table.N.iloc[0]) if len(table) else 0
    same = sorted(set(table.system[table.same_model.astype(bool)])) if "same_model" in table else []
    if own:
        lines = [f"# Intervals around each system's metric on {collection}: {len(labelled)} judged of {N} queries, "
                 f"labels by {labeler}", "",
                 f"{1 - alpha:.0%} intervals of the mean over all N = {N} queries of the topics, from the human grades "
                 f"of the n = {len(labelled)} judged queries and the labels of all N. Nothing observes that mean, so "
                 "there is no truth column: the intervals cover it at their nominal rate when the judged queries are "
                 "a uniform random sample of the N."]
    else:
        lines = [f"# Intervals around each system's metric on {collection}: {len(labelled)} human-labelled queries, "
                 f"labels by {labeler}", "",
                 f"{1 - alpha:.0%} intervals of the mean over the N judged queries (validation mode: the other "
                 "queries' human grades are hidden from every method and shown as `all human labels`; `covered`: "
                 "the interval contains it)."]
    lines += ["", "bootstrap: the n human values only (estimate: their mean); ppi / ppi++ (λ = 1 / power-tuned λ): "
              "the labels of all N queries corrected by the n (estimate: the PPI point estimate); crc: the labels' "
              "distributions calibrated on the n (CRC calibrates an interval, not a point: its estimate is the "
              "interval's centre).", "", f"Human-labelled queries: {', '.join(map(str, labelled))}", ""]
    if same:
        lines += [f"**Self-preference warning**: {', '.join(same)} share{'s' if len(same) == 1 else ''} a model with "
                  f"the labeler {labeler}; a labeler tends to overrate systems built on its own model, so their "
                  "label-based intervals (ppi, ppi++, crc) may be off. The label bias on the judged queries is below.",
                  ""]
    if own:
        lines += ["| measure | system | method | estimate | interval | width |", "|---|---|---|---:|---|---:|"]
    else:
        lines += ["| measure | system | method | estimate | interval | width | all human labels | covered |",
                  "|---|---|---|---:|---|---:|---:|---|"]
    notes = []
    for r in table.itertuples():
        note = getattr(r, "note", "")
        truth = "" if own else f" {r.truth:.4f} |"
        name = f"{r.system} (same model as the labeler)" if getattr(r, "same_model", False) else r.system
        if isinstance(note, str) and note:
            notes.append(f"- {r.measure}, {r.system}, {r.method}: {note}.")
            lines.append(f"| {r.measure} | {name} | {r.method} | — | no interval (see below) | — |{truth}"
                         f"{'' if own else ' — |'}")
            continue
        cov = "" if own else f" {'yes' if r.covered else 'NO'} |"
        lines.append(f"| {r.measure} | {name} | {r.method} | {r.estimate:.4f} | [{r.low:.4f}, {r.high:.4f}] | "
                     f"{r.width:.4f} |{truth}{cov}")
    if notes:
        lines += ["", "Rows without an interval:", "", *notes]
    if len(diffs):
        corr = diffs.correction.iloc[0]
        m = diffs.system_a.nunique()
        level = 1 - float(diffs.alpha_adjusted.iloc[0])
        how = (f"Bonferroni-corrected over the {m} system{'s' if m > 1 else ''} compared: each interval at "
               f"{level:.2%}, all together at ≥ {1 - alpha:.0%}" if corr == "bonferroni" and m > 1
               else f"{level:.0%} intervals")
        lines += ["", f"Differences from the baseline {diffs.system_b.iloc[0]} (per-query system − baseline; {how}): "
                  "does the interval exclude 0?", ""]
        if own:
            lines += ["| measure | system − baseline | method | estimate | interval | excludes 0 |",
                      "|---|---|---|---:|---|---|"]
        else:
            lines += ["| measure | system − baseline | method | estimate | interval | excludes 0 | all human labels | "
                      "covered |", "|---|---|---|---:|---|---|---:|---|"]
        dnotes = []
        for r in diffs.itertuples():
            note = getattr(r, "note", "")
            if isinstance(note, str) and note:
                dnotes.append(f"- {r.measure}, {r.system_a} − {r.system_b}, {r.method}: {note}.")
                tail = "" if own else f" {r.truth:+.4f} | — |"
                lines.append(f"| {r.measure} | {r.system_a} − {r.system_b} | {r.method} | — | no interval (see "
                             f"below) | — |{tail}")
                continue
            tail = "" if own else f" {r.truth:+.4f} | {'yes' if r.covered else 'NO'} |"
            lines.append(f"| {r.measure} | {r.system_a} − {r.system_b} | {r.method} | {r.estimate:+.4f} | "
                         f"[{r.low:+.4f}, {r.high:+.4f}] | {'yes' if r.excludes_zero else 'no'} |{tail}")
        if dnotes:
            lines += ["", "Differences without an interval:", "", *dnotes]
    if bias is not None and len(bias):
        lines += ["", f"Label bias on the {len(labelled)} judged queries (the labels' metric − the human metric, "
                  f"mean over the judged queries with its {1 - alpha:.0%} t interval; positive: the labels overrate "
                  "the system):", "", "| measure | system | same model as the labeler | bias | interval |",
                  "|---|---|---|---:|---|"]
        for r in bias.itertuples():
            lines.append(f"| {r.measure} | {r.system} | {'yes' if r.same_model else 'no'} | {r.estimate:+.4f} | "
                         f"[{r.low:+.4f}, {r.high:+.4f}] |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
