"""BV-Test (Zhang et al., IP&M 2022) Tables 2, 8 and 9 and the data of Fig 1, from systems × topics score matrices.

* Table 2: the toy example of three systems on three topics, Bias² (Eq. 7) with ``c`` = the target system's mean
  and with ``c = 1`` (:func:`table2`);
* Table 8: |ZRisk| against the target system and the Eq. 16 decomposition of Var(ρ) for the top systems
  (:func:`table8`; :func:`table8_tables` for the workflow, with every system for matching the paper's named runs);
* Table 9: the Bias²–Var correlation across systems (Eq. 7) on original and max–min normalised (Eq. 11) scores,
  ungrouped, over random topic groups and over query-difficulty groups (Sec. 5.3.2) (:func:`table9_row`,
  :func:`table9` for several collections);
* Fig 1: Bias², Var and Bias² + Var per system sorted by Bias² (:func:`fig1_data`; the figure is
  ``irrepro.papers.bv.plots.fig1``).

Systems without scores and topics with a missing score are dropped (and logged), never imputed
(``biasvariance.complete_matrix``); an undefined cell is None with the reason in ``note``, never NaN.
"""
from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd

from irrepro.papers.bv.biasvariance import (_check, bias_variance, complete_matrix, difficulty_groups,
                                            maxmin_normalise, pearson, rho_decomposition, tradeoff, tradeoff_groups,
                                            topic_order_groups, tradeoff_random, try_value)
from irrepro.errors import InputError
from irrepro.papers.bv.risk import zrisk

log = logging.getLogger(__name__)

# BV-Test Table 2: three systems f1..f3 on three topics
TABLE2_TOY = np.array([[0.8, 0.9, 0.4], [0.5, 0.6, 0.7], [0.3, 0.6, 0.3]])
TABLE2_SYSTEMS = ["f1", "f2", "f3"]


def table2(X=TABLE2_TOY, systems=TABLE2_SYSTEMS):
    """BV-Test Table 2: per system ``mean``, Bias² with ``c`` = mean of the target system (``bias2_c_target``,
    Eq. 7), ``var``, ``total``, ``c`` and Bias² with ``c = 1`` (``bias2_c_1``). Returns ``(table, values)``."""
    X = np.asarray(X, dtype=float)
    t = bias_variance(X).rename(columns={"bias2": "bias2_c_target"})
    t["bias2_c_1"] = bias_variance(X, c=1)["bias2"]
    t.insert(0, "system", list(systems))
    values = {"table2/target_mean": float(X.max(axis=0).mean())}
    for i, s in enumerate(systems):
        values[f"table2/{s}/mean"] = float(t["mean"][i])
        values[f"table2/{s}/bias2_c_target"] = float(t["bias2_c_target"][i])
        values[f"table2/{s}/bias2_c_1"] = float(t["bias2_c_1"][i])
    return t, values


def _complete(M, what=""):
    """``complete_matrix`` of a topic × system frame, with what it dropped logged."""
    X, systems, topics, dropped = complete_matrix(M)
    if dropped["systems"] or dropped["topics"]:
        log.warning("%sdropped %s", what, dropped)
    return X, systems, topics, dropped


TABLE9_COLUMNS = ["original", "original_norm", "random", "random_norm", "difficulty", "difficulty_norm"]


def table9_row(X, random_size=10, random_groups=50, random_repeats=1000, random_target="group",
               difficulty_size=5, difficulty_target="topic", seed=0, strict: bool = True,
               random_grouping="topic_order", order_size=5, **_ignored) -> dict:
    """One row of BV-Test Table 9 for a systems × topics matrix: the Bias²–Var correlation on the original scores
    and on max–min normalised scores (Eq. 11), ungrouped, over "random" groups and over query-difficulty groups
    (difficulty = the best original score of the topic).

    ``random_grouping``: ``"topic_order"``, the topics in their own order (topic id) cut into consecutive groups of
    ``order_size``, target = mean of the per-topic maxima (deterministic: a standard error of 0); ``"resampled"``,
    ``random_groups`` groups of ``random_size`` topics drawn at random, ``random_repeats`` times, target
    ``random_target`` (the mean over repetitions, with its standard error). docs/bv.md compares both with the paper.

    ``strict=True``: an undefined cell (a single system, constant Bias² or Var, a group size above the number of
    topics) raises ``InputError``. ``strict=False``: the cell is None and ``row["note"]`` says why, per column.
    """
    X = _check(X)
    Xn = maxmin_normalise(X)

    se = {}

    def random(M, s):
        if random_grouping == "topic_order":
            se[s] = 0.0
            return tradeoff_groups(M, topic_order_groups(M, order_size), "topic")
        if random_grouping != "resampled":
            raise InputError(f"unknown random_grouping {random_grouping!r}; expected 'topic_order' or 'resampled'")
        r = np.asarray(tradeoff_random(M, random_size, random_groups, random_repeats, s, random_target), float)
        se[s] = float(r.std(ddof=1) / np.sqrt(len(r))) if len(r) > 1 else None
        return float(r.mean())

    def difficulty(M):
        return tradeoff_groups(M, difficulty_groups(X, difficulty_size), difficulty_target)

    cells = {"original": (tradeoff, X), "original_norm": (tradeoff, Xn), "random": (random, X, seed),
             "random_norm": (random, Xn, seed + 1), "difficulty": (difficulty, X), "difficulty_norm": (difficulty, Xn)}
    row, notes = {}, []
    for col, (fn, *args) in cells.items():
        if strict:
            row[col] = fn(*args)
        else:
            row[col], why = try_value(fn, *args)
            if why:
                notes.append(f"{col}: {why}")
    if not strict:
        row["note"] = "; ".join(notes)
    # the standard error of the random columns' means over the repetitions (the verify tolerance: k s.e.)
    row["random_se"], row["random_norm_se"] = se.get(seed), se.get(seed + 1)
    return row


def table8(X, systems, top: int = 8, ddof: int = 1) -> pd.DataFrame:
    """BV-Test Table 8 for the ``top`` systems by mean score: |ZRisk| (α = 0, baseline = the target system) and
    the Eq. 16 decomposition of Var(ρ)."""
    X = _check(X)
    xt = X.max(axis=0)
    d = rho_decomposition(X, ddof)
    d.insert(0, "system", list(systems))
    d.insert(1, "mean", X.mean(axis=1))
    d.insert(2, "abs_zrisk", [abs(zrisk(x, xt, 0.0)) for x in X])
    return d.sort_values("mean", ascending=False, kind="stable").head(top).reset_index(drop=True)


def table8_tables(M: pd.DataFrame, top: int = 8, ddof: int = 1):
    """BV-Test Table 8 from a topic × system frame (``scores.to_matrix``): ``(table, values)`` with the ``top``
    systems, and ``values["table8/_all"]`` every system (rounded to 8 decimals) for matching the paper's named
    runs to the anonymised matrix (``irrepro.papers.bv.verify.prepare``)."""
    X, systems, _, _ = _complete(M)
    t = table8(X, systems, top=top, ddof=ddof)
    full = table8(X, systems, top=len(systems), ddof=ddof)
    return t, {"table8/_all": full.round(8).to_dict(orient="records")}


def table9(matrices, seed: int = 0, **settings):
    """BV-Test Table 9 on several collections: ``matrices`` is a list of ``(collection, measure, M)`` with ``M`` a
    topic × system frame. Returns ``(table, markdown_table, values)``: one row per collection (undefined cells
    None, never NaN, rounded to 6 decimals; to 4 in the Markdown one) and ``values["table9/<c>/<column>"]``.
    ``settings``: the keyword arguments of :func:`table9_row`."""
    rows, values = [], {}
    for c, measure, M in matrices:
        X, _, _, dropped = complete_matrix(M)
        if dropped["systems"] or dropped["topics"]:
            log.warning("%s: dropped %d systems without %s and %d topics with a missing score: %s", c,
                        len(dropped["systems"]), measure, len(dropped["topics"]), dropped)
        t = time.perf_counter()
        # an undefined cell (e.g. fewer topics than a group size) is left empty with the reason in `note`
        r = table9_row(X, seed=seed, strict=False, **settings)
        log.info("%s (%s, %d systems x %d topics): %s in %.2f s", c, measure, X.shape[0], X.shape[1],
                 {k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}, time.perf_counter() - t)
        rows.append({"collection": c, "measure": measure, "systems": X.shape[0], "topics": X.shape[1],
                     **{k: v for k, v in r.items() if not k.endswith("_se")}})
        whys = dict(w.split(": ", 1) for w in r["note"].split("; ") if ": " in w) if r.get("note") else {}
        for k in TABLE9_COLUMNS:  # an undefined cell is a value None with the reason: a row, never a silence
            v = {"value": r[k], "note": whys.get(k, "")} if r[k] is None else r[k]
            if r[k] is not None and r.get(f"{k}_se") is not None:
                v = {"value": r[k], "se": r[f"{k}_se"]}
            values[f"table9/{c}/{k}"] = v
    t9 = pd.DataFrame(rows)
    for k in TABLE9_COLUMNS:  # keep undefined cells None (empty), never NaN
        t9[k] = pd.Series([None if r[k] is None else round(r[k], 6) for r in rows], dtype=object)
    md = t9.assign(**{k: [None if v is None else round(v, 4) for v in t9[k]] for k in TABLE9_COLUMNS})
    return t9, md, values


def fig1_data(M: pd.DataFrame):
    """BV-Test Fig 1 from a topic × system frame: ``(table, r, why)`` with Eq. 7 per system sorted by Bias²
    (stable) and the Pearson correlation of Bias² and Var (None with the reason ``why`` where undefined)."""
    X, _, _, _ = _complete(M)
    t = bias_variance(X).sort_values("bias2", kind="stable").reset_index(drop=True)
    r, why = try_value(pearson, t["bias2"], t["var"])
    return t, r, why
