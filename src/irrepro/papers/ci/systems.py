"""Confidence intervals around the metric of any run with few human-labelled queries: empirical bootstrap (the n
human values only), PPI (the paper's λ = 1 and PPI++'s tuned λ) and CRC (the labeler's distributions of every
query plus the n human values), per system and for the per-query difference of each pair of systems.

Setting: a collection's ``N`` judged queries (those with qrels); each chosen system's top ``k`` of each of them is
labelled by the labeler (:func:`system_arrays`); the human grades of the ``n`` labelled queries are all the
methods see of the qrels. The target is the system's mean metric over the ``N`` queries; where the qrels judge
every query (a test collection), that mean by all human labels (``truth``) is reported beside each interval, with
whether the interval covers it.

* ``bootstrap``: :func:`~irrepro.papers.ci.bootstrap.bootstrap_ci` of the n human values.
* ``ppi`` / ``ppi++``: :func:`~irrepro.papers.ci.ppi.ppi_mean_ci` with the predictions of all N queries and the
  errors of the n (``lam=1`` / ``lam="tuned"``).
* ``crc``: λ calibrated on ``batches`` resamples of the n labelled queries
  (:func:`~irrepro.papers.ci.calibration.calibrate_crc`), bounds ``Û_CRC(λ)`` on the N − n other queries
  (Eq. 20); the interval of the mean over all N adds the n known human values:
  ``(Σ_labelled U + (N − n)·bound) / N``.  The difference of two systems has no CRC interval (CRC's λ shifts a
  metric one way; a difference of two metrics is not monotone in it).

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

import re

import numpy as np
import pandas as pd

from irrepro.core.gain import dcg_weights, exp_gain
from irrepro.errors import InputError
from irrepro.papers.ci.bootstrap import bootstrap_ci
from irrepro.papers.ci.calibration import calibrate_crc, crc_interval
from irrepro.papers.ci.crc import crc_query_utility
from irrepro.papers.ci.experiment import covers
from irrepro.papers.ci.metric import DEFAULT_LABEL_GAIN
from irrepro.papers.ci.ppi import ppi_mean_ci, ppi_power_lambda
from irrepro.papers.ci.ranking import _natural, _pred_gain, label_columns, labelled_ranking

METHODS = ("bootstrap", "ppi", "ppi++", "crc")
DIFF_METHODS = ("bootstrap", "ppi", "ppi++")
COLUMNS = ["system", "measure", "method", "n", "N", "estimate", "low", "high", "width", "truth", "covered",
           "lam_low", "lam_high", "ppi_lambda", "note"]
DIFF_COLUMNS = ["system_a", "system_b", "measure", "method", "n", "N", "estimate", "low", "high", "width", "truth",
                "covered", "excludes_zero", "ppi_lambda"]


def parse_measure(name: str) -> tuple[str, int]:
    """``("DCG" | "nDCG", k)`` of a measure name ``DCG@k`` / ``nDCG@k``."""
    m = re.fullmatch(r"(n?DCG)@(\d+)", str(name))
    if not m or int(m.group(2)) < 1:
        raise InputError(f"measure {name!r}: expected DCG@k or nDCG@k (k >= 1)")
    return m.group(1), int(m.group(2))


def systems_pairs(runs: dict, qrels: pd.DataFrame, k: int) -> pd.DataFrame:
    """The pool to label: every system's top ``k`` of each judged query (``labelled_ranking``), one row per distinct
    (query, document) with its human grade (unjudged = 0), sorted by query and document."""
    frames = [labelled_ranking(run, qrels, k) for run in runs.values()]
    pool = pd.concat(frames, ignore_index=True).drop_duplicates(["query_id", "doc_id"])
    pool["_q"] = pool.query_id.map(_natural)
    pool = pool.sort_values(["_q", "doc_id"], kind="mergesort").drop(columns="_q")
    return pool[["query_id", "doc_id", "relevance"]].reset_index(drop=True)


def judged_queries(qrels: pd.DataFrame) -> list:
    """The queries with at least one judgment, in natural order: the N queries of the evaluation."""
    return sorted({str(q) for q in qrels.query_id}, key=_natural)


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


def _ideal(qrels: pd.DataFrame, queries, k: int) -> np.ndarray:
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
                  label_gain: str = DEFAULT_LABEL_GAIN) -> dict:
    """One system's top ``k`` of ``queries`` as arrays: ``grades`` (N, k) the qrels' grades, ``dists`` (N, k, G) label
    distributions, ``mask`` (N, k) (False past a query's last document; also for a query the run misses),
    ``u_true`` / ``u_pred`` (N,) DCG@k by human grades and by the labeler's predicted gain (``label_gain``)."""
    pairs = labelled_ranking(run, qrels, k)
    cols = label_columns(labels)
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
    grades[r, c] = m.relevance.to_numpy()
    dists[r, c] = probs / probs.sum(axis=1, keepdims=True)
    mask[r, c] = True
    w = dcg_weights(k)
    u_true = np.where(mask, exp_gain(grades), 0.0) @ w
    u_pred = _pred_gain(dists, mask, label_gain) @ w
    return {"grades": grades, "dists": dists, "mask": mask, "u_true": u_true, "u_pred": u_pred}


def pool_ideal_pred(pool: pd.DataFrame, labels: pd.DataFrame, queries, k: int,
                    label_gain: str = DEFAULT_LABEL_GAIN) -> np.ndarray:
    """Per query of ``queries``, the ideal DCG@k of the predicted gains of its ``pool`` documents (every chosen
    system's top k, :func:`systems_pairs`): nDCG's normaliser for the predictions (no qrels read)."""
    cols = label_columns(labels)
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


def system_intervals(u_true, u_pred, dists, W, labelled, *, alpha=0.05, n_boot=10_000, n_batches=10_000, seed=0,
                     label_gain=DEFAULT_LABEL_GAIN, key=(0,), mask=None) -> list[dict]:
    """The four intervals (:data:`METHODS`) of one system's mean over the N queries from the human values of the
    ``labelled`` queries (a bool mask or indices) only; ``truth`` = the mean of ``u_true`` over all N; ``note``:
    why a row has no interval (a failed CRC calibration, :func:`crc_failure_note`; ``mask``: the ranked slots).
    Random streams: ``SeedSequence(seed, spawn_key=key + (method index,))``."""
    u_true = np.asarray(u_true, dtype=float)
    u_pred = np.asarray(u_pred, dtype=float)
    N = u_true.size
    L = np.zeros(N, bool)
    L[labelled] = True
    n = int(L.sum())
    T = ~L
    truth = float(u_true.mean())
    rows = []

    def row(method, est, low, high, lam_low=np.nan, lam_high=np.nan, lam=np.nan, note=""):
        rows.append({"method": method, "n": n, "N": N, "estimate": float(est), "low": float(low),
                     "high": float(high), "width": float(high - low), "truth": truth,
                     "covered": bool(covers(low, high, truth)), "lam_low": lam_low, "lam_high": lam_high,
                     "ppi_lambda": lam, "note": note})

    b = bootstrap_ci(u_true[L], alpha, n_boot, rng=_rng(seed, *key, 0))
    row("bootstrap", b.estimate, b.low, b.high)
    p = ppi_mean_ci(u_true[L], u_pred[L], u_pred[T], alpha)
    row("ppi", p.estimate, p.low, p.high, lam=1.0)
    lam = float(ppi_power_lambda(u_true[L], u_pred[L], u_pred))
    p = ppi_mean_ci(u_true[L], u_pred[L], u_pred[T], alpha, lam=lam)
    row("ppi++", p.estimate, p.low, p.high, lam=lam)
    batches = _rng(seed, *key, 3).integers(0, n, size=(int(n_batches), n))
    cal = calibrate_crc(u_true[L], dists[L], batches, alpha, weights=W[L], label_gain=label_gain)
    est, lo, hi = crc_interval(dists[T], cal, weights=W[T], label_gain=label_gain)
    note = crc_failure_note(dists[L], W[L], cal, label_gain, None if mask is None else mask[L]) if cal.failed else ""
    known, m = u_true[L].sum(), T.sum()
    row("crc", (known + m * est) / N, (known + m * lo) / N, (known + m * hi) / N, cal.lam_low, cal.lam_high,
        note=note)
    return rows


def difference_intervals(d_true, d_pred, labelled, *, alpha=0.05, n_boot=10_000, seed=0, key=(1,)) -> list[dict]:
    """Bootstrap, PPI and PPI++ intervals of the mean per-query difference ``d = U_A − U_B`` (``d_pred`` its
    prediction) from the ``labelled`` queries' human differences; ``excludes_zero``: the interval decides which
    system is better at level 1 − α."""
    d_true = np.asarray(d_true, dtype=float)
    d_pred = np.asarray(d_pred, dtype=float)
    N = d_true.size
    L = np.zeros(N, bool)
    L[labelled] = True
    T = ~L
    truth = float(d_true.mean())
    rows = []

    def row(method, est, low, high, lam=np.nan):
        rows.append({"method": method, "n": int(L.sum()), "N": N, "estimate": float(est), "low": float(low),
                     "high": float(high), "width": float(high - low), "truth": truth,
                     "covered": bool(covers(low, high, truth)), "excludes_zero": bool(low > 0 or high < 0),
                     "ppi_lambda": lam})

    b = bootstrap_ci(d_true[L], alpha, n_boot, rng=_rng(seed, *key, 0))
    row("bootstrap", b.estimate, b.low, b.high)
    p = ppi_mean_ci(d_true[L], d_pred[L], d_pred[T], alpha)
    row("ppi", p.estimate, p.low, p.high, 1.0)
    lam = float(ppi_power_lambda(d_true[L], d_pred[L], d_pred))
    p = ppi_mean_ci(d_true[L], d_pred[L], d_pred[T], alpha, lam=lam)
    row("ppi++", p.estimate, p.low, p.high, lam)
    return rows


def evaluate_systems(runs: dict, qrels: pd.DataFrame, labels: pd.DataFrame, labelled_queries, measures, *,
                     alpha=0.05, n_boot=10_000, n_batches=10_000, seed=0, label_gain=DEFAULT_LABEL_GAIN):
    """``(table, differences, per_query)`` for the systems of ``runs`` (name → run frame) on the judged queries of
    ``qrels``, the ``labels`` of every pool pair and the human grades of ``labelled_queries`` (COLUMNS,
    DIFF_COLUMNS; ``per_query``: system, measure, query_id, labelled, u_true, u_pred)."""
    queries = judged_queries(qrels)
    lq = {str(q) for q in labelled_queries}
    unknown = lq - set(queries)
    if unknown:
        raise InputError(f"labelled queries {sorted(unknown)[:3]} have no judgment in the qrels")
    L = np.array([q in lq for q in queries])
    if not (2 <= L.sum() <= len(queries) - 2):
        raise InputError(f"{int(L.sum())} labelled of {len(queries)} queries: need 2 <= n <= N - 2")
    check_grade_scale(qrels, len(label_columns(labels)))
    measures = list(measures)
    ks = sorted({parse_measure(m)[1] for m in measures})
    names = list(runs)
    pool = {k: systems_pairs(runs, qrels, k) for k in ks}
    arrays = {k: {s: system_arrays(runs[s], qrels, labels, queries, k, label_gain) for s in names} for k in ks}
    ideal_t = {k: _ideal(qrels, queries, k) for k in ks}
    ideal_p = {k: pool_ideal_pred(pool[k], labels, queries, k, label_gain) for k in ks}
    rows, drows, per_query = [], [], []
    for mi, measure in enumerate(measures):
        k = parse_measure(measure)[1]
        ma = {s: measure_arrays(arrays[k][s], measure, ideal_t[k], ideal_p[k]) for s in names}
        for si, s in enumerate(names):
            a = ma[s]
            for r in system_intervals(a["u_true"], a["u_pred"], arrays[k][s]["dists"], a["W"], L, alpha=alpha,
                                      n_boot=n_boot, n_batches=n_batches, seed=seed, label_gain=label_gain,
                                      key=(0, mi, si), mask=arrays[k][s]["mask"]):
                rows.append({"system": s, "measure": measure, **r})
            per_query.append(pd.DataFrame({"system": s, "measure": measure, "query_id": queries, "labelled": L,
                                           "u_true": a["u_true"], "u_pred": a["u_pred"]}))
        for i, sa in enumerate(names):
            for j in range(i + 1, len(names)):
                sb = names[j]
                d_true = ma[sa]["u_true"] - ma[sb]["u_true"]
                d_pred = ma[sa]["u_pred"] - ma[sb]["u_pred"]
                for r in difference_intervals(d_true, d_pred, L, alpha=alpha, n_boot=n_boot, seed=seed,
                                              key=(1, mi, i, j)):
                    drows.append({"system_a": sa, "system_b": sb, "measure": measure, **r})
    return (pd.DataFrame(rows, columns=COLUMNS), pd.DataFrame(drows, columns=DIFF_COLUMNS),
            pd.concat(per_query, ignore_index=True))


LONG_COLUMNS = ["kind", "system", "system_b", "measure", "method", "n", "N", "estimate", "low", "high", "width",
                "truth", "covered", "excludes_zero", "lam_low", "lam_high", "ppi_lambda"]


def systems_long(table: pd.DataFrame, diffs: pd.DataFrame) -> pd.DataFrame:
    """The systems table and the difference rows in one frame (``kind`` = ``system`` / ``difference``; a
    difference row is ``system`` − ``system_b``); a ``note`` column last when a row has one (an interval that could
    not be computed, and why)."""
    a = table.assign(kind="system", system_b="", excludes_zero=(table.low > 0) | (table.high < 0))
    b = diffs.rename(columns={"system_a": "system"}).assign(kind="difference", lam_low=np.nan, lam_high=np.nan)
    noted = "note" in table and table.note.fillna("").astype(bool).any()
    return pd.concat([a, b], ignore_index=True)[LONG_COLUMNS + (["note"] if noted else [])]


def write_systems_md(table: pd.DataFrame, diffs: pd.DataFrame, collection: str, labeler: str, labelled, alpha,
                     path) -> None:
    """The systems table as Markdown: each interval beside the value by all human labels, then the differences."""
    lines = [f"# Intervals around each system's metric on {collection}: {len(labelled)} human-labelled queries, "
             f"labels by {labeler}", "",
             f"{1 - alpha:.0%} intervals of the mean over the N judged queries. bootstrap: the n human values only; "
             "ppi / ppi++ (λ = 1 / power-tuned λ): the labels of all N queries corrected by the n; crc: the "
             "labels' distributions calibrated on the n. `truth`: the mean by all human labels (the qrels), which "
             "no interval saw; `covered`: the interval contains it. crc's `estimate`: the n human values with the "
             "labels' own values (λ = 0) for the other N − n queries (CRC calibrates an interval, not a point); † "
             "marks one outside its interval, as biased labels give.", "",
             f"Human-labelled queries: {', '.join(map(str, labelled))}", "",
             "| measure | system | method | estimate | interval | width | all human labels | covered |",
             "|---|---|---|---:|---|---:|---:|---|"]
    notes = []
    for r in table.itertuples():
        note = getattr(r, "note", "")
        if isinstance(note, str) and note:
            notes.append(f"- {r.measure}, {r.system}, {r.method}: {note}.")
            lines.append(f"| {r.measure} | {r.system} | {r.method} | {r.estimate:.4f} | no interval (see below) | — | "
                         f"{r.truth:.4f} | — |")
            continue
        mark = " †" if r.method == "crc" and not r.low <= r.estimate <= r.high else ""
        lines.append(f"| {r.measure} | {r.system} | {r.method} | {r.estimate:.4f}{mark} | [{r.low:.4f}, {r.high:.4f}] | "
                     f"{r.width:.4f} | {r.truth:.4f} | {'yes' if r.covered else 'NO'} |")
    if notes:
        lines += ["", "Rows without an interval:", "", *notes]
    lines += ["", "Differences (per-query A − B): does the interval exclude 0?", "",
              "| measure | A − B | method | estimate | interval | excludes 0 | all human labels | covered |",
              "|---|---|---|---:|---|---|---:|---|"]
    for r in diffs.itertuples():
        lines.append(f"| {r.measure} | {r.system_a} − {r.system_b} | {r.method} | {r.estimate:+.4f} | "
                     f"[{r.low:+.4f}, {r.high:+.4f}] | {'yes' if r.excludes_zero else 'no'} | {r.truth:+.4f} | "
                     f"{'yes' if r.covered else 'NO'} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
