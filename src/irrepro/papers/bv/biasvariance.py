"""Bias–variance decomposition of IR evaluation scores (BV-Test, Zhang et al. IP&M 2022).

A score matrix ``X`` has one row per system ``i`` and one column per topic (or topic group) ``j``.

* target system (BV-Test Table 1): ``x_T[j] = max_i x[i, j]``; target value ``c = mean_j x_T[j]`` (or ``c = 1``);
* Eq. 7:  ``E(x_i − c)² = Bias²(x_i) + Var(x_i)`` with ``Bias²(x_i) = (x̄_i − c)²`` and
  ``Var(x_i) = E(x_i − x̄_i)²`` — the *population* variance over topics (``ddof = 0``), which is what makes Eq. 7
  an identity; ``ddof`` is a parameter for other conventions (:func:`bias_variance`);
* Eq. 11 (max–min normalisation per topic): ``x'[i, j] = (x[i, j] − min_i x[i, j]) / (max_i − min_i)``
  (:func:`maxmin_normalise`);
* Eq. 16: ``ρ_i = x_T − x_i`` and ``Var(ρ_i) = Var(x_T) + Var(x_i) − 2 Cov(x_T, x_i)`` (:func:`rho_decomposition`);
* topic grouping (Sec. 5.3.2): random groups of ``size`` topics drawn ``n_groups`` times, repeated ``R`` times,
  or fixed groups of consecutive topics ordered by difficulty (the best score on the topic); a group's score is
  the mean of its topics' scores (MAP of the group) (:func:`tradeoff_random`, :func:`tradeoff_groups`);
* per-topic bias–variance over simulated collections (BV-Test Sec. 3.4, Eq. 12–14): for one topic, ``y_{i,j}`` is
  system ``i``'s score on collection sample ``j``; ``y_T,j = max_i y_{i,j}``, ``c = ȳ_T`` and Eq. 12
  ``E(y_i − c)² = Bias²(y_i) + Var(y_i)`` (:func:`per_topic_bias_variance`); Eq. 13/14 average ``Bias²`` and
  ``Var`` over topics (Tables 10, 11: :func:`averaged_tradeoff`, :func:`per_topic_tradeoff`).

The tables built on these are in ``irrepro.papers.bv.tables`` (BV-Test Tables 2, 8, 9), ``.simulated`` (Tables
10–11), ``.session`` (Table 12) and ``.sigir13`` (SIGIR 2013 Eqs. 1–7, Tables 1–2).

Functions take numpy arrays (systems × topics) and return arrays or frames. Bad input has defined behaviour, and
no function returns NaN:

* a NaN or infinite cell raises ``InputError`` naming the cell; :func:`complete_matrix` is the documented way
  to get a complete matrix from a topic × system frame (drops systems without any score, then topics missing a
  score, and reports what it dropped);
* a constant topic (max = min) normalises to 0 for every system (Eq. 11 is 0/0 there; the topic carries no
  information about the systems);
* a correlation across systems is undefined for a single system or when Bias² or Var is constant:
  ``InputError``; :func:`try_value` turns such an error into ``(None, reason)`` for tables that report the cell
  as not defined with the reason instead of failing;
* a group size larger than the number of topics raises ``InputError`` (never a group with repeated topics);
* a variance with ``ddof`` needs more than ``ddof`` topics (``InputError``, never the NaN numpy would return).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from irrepro.errors import InputError


def _check(X) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise InputError(f"score matrix must be 2-D (systems x topics), got shape {X.shape}")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise InputError(f"score matrix is empty: shape {X.shape}")
    bad = ~np.isfinite(X)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        what = "NaN" if np.isnan(X[i, j]) else "an infinite value"
        raise InputError(f"score matrix has {what} (first at system row {i}, topic column {j}); "
                         f"drop the topic or system, or impute explicitly (see complete_matrix)")
    return X


def _check_ddof(n: int, ddof: int) -> None:
    if n - ddof <= 0:
        raise InputError(f"a variance with ddof={ddof} needs more than {ddof} topics, got {n}")


def complete_matrix(M: pd.DataFrame):
    """A complete systems × topics array from a topic × system frame (``scores.to_matrix``) with missing cells.

    Drops the systems with no score at all, then every topic on which some remaining system has no score (a
    run that skipped a topic is not scored 0 behind the user's back). Returns ``(X, systems, topics, dropped)``
    with ``dropped = {"systems": [...], "topics": [...]}``; ``InputError`` when nothing is left.
    """
    M = M.astype(float)
    empty = [s for s in M.columns if M[s].isna().all()]
    M = M.drop(columns=empty)
    incomplete = [t for t in M.index if M.loc[t].isna().any()]
    M = M.drop(index=incomplete)
    if M.shape[0] == 0 or M.shape[1] == 0:
        raise InputError(f"no complete topic x system scores left after dropping {len(empty)} systems without "
                         f"scores and {len(incomplete)} topics with missing scores")
    return M.to_numpy().T, list(M.columns), list(M.index), {"systems": empty, "topics": incomplete}


def try_value(fn, *args, **kwargs):
    """``(fn(*args, **kwargs), "")``, or ``(None, reason)`` when ``fn`` raises ``InputError`` (an undefined cell)."""
    try:
        return fn(*args, **kwargs), ""
    except InputError as e:
        return None, str(e)


def target_scores(X) -> np.ndarray:
    """``x_T[j] = max_i x[i, j]``: the per-topic best system (BV-Test Table 1)."""
    return _check(X).max(axis=0)


def bias_variance(X, c: float | str = "target", ddof: int = 0) -> pd.DataFrame:
    """Eq. 7 per system: columns ``mean, bias2, var, total`` (``total = bias2 + var``).

    ``c``: ``"target"`` (mean of the per-topic maximum), ``1`` (the metric's maximum) or any number.
    """
    X = _check(X)
    _check_ddof(X.shape[1], ddof)
    cval = float(target_scores(X).mean()) if c == "target" else float(c)
    mean = X.mean(axis=1)
    bias2 = (mean - cval) ** 2
    var = X.var(axis=1, ddof=ddof)
    return pd.DataFrame({"mean": mean, "bias2": bias2, "var": var, "total": bias2 + var, "c": cval})


def maxmin_normalise(X) -> np.ndarray:
    """Eq. 11 per topic. A constant topic (max = min) maps to 0 for every system."""
    X = _check(X)
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = hi - lo
    out = np.zeros_like(X)
    ok = span > 0
    out[:, ok] = (X[:, ok] - lo[ok]) / span[ok]
    return out


def pearson(a, b) -> float:
    """Pearson correlation; ``InputError`` when it is undefined (fewer than 2 systems or a constant vector)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.size < 2:
        raise InputError("a correlation across systems needs at least 2 systems")
    if np.std(a) == 0 or np.std(b) == 0:
        raise InputError("correlation undefined: Bias² or Var is constant across systems")
    return float(np.corrcoef(a, b)[0, 1])


def tradeoff(X, c="target", ddof: int = 0) -> float:
    """Pearson correlation across systems between Bias² and Var (BV-Test Table 9)."""
    bv = bias_variance(X, c, ddof)
    return pearson(bv["bias2"], bv["var"])


def rho_decomposition(X, ddof: int = 0) -> pd.DataFrame:
    """Eq. 16 per system: ``var_rho = var_T + var_i − 2 cov`` with ``ρ_i = x_T − x_i``.

    Columns ``var_rho, var_x, cov, var_T``; ``var_rho`` is computed directly from ρ and equals the decomposition.
    """
    X = _check(X)
    xt = X.max(axis=0)
    n = X.shape[1]
    _check_ddof(n, ddof)
    dx = X - X.mean(axis=1, keepdims=True)
    dt = xt - xt.mean()
    cov = dx @ dt / (n - ddof)
    var_x = (dx ** 2).sum(axis=1) / (n - ddof)
    var_t = (dt ** 2).sum() / (n - ddof)
    rho = xt[None, :] - X
    var_rho = rho.var(axis=1, ddof=ddof)
    return pd.DataFrame({"var_rho": var_rho, "var_x": var_x, "cov": cov, "var_T": var_t})


def group_random(X, size: int, n_groups: int, repeats: int, seed: int) -> np.ndarray:
    """Random topic groups (Sec. 5.3.2): ``repeats × systems × n_groups`` group means, each group ``size`` topics
    drawn without replacement, groups drawn independently. Vectorised over repeats and groups."""
    X = _check(X)
    n = X.shape[1]
    if size > n:
        raise InputError(f"group size {size} exceeds the number of topics {n}")
    rng = np.random.default_rng(seed)
    # a random permutation per (repeat, group); its first `size` entries are the group's topics
    keys = rng.random((repeats, n_groups, n))
    idx = np.argpartition(keys, size - 1, axis=2)[:, :, :size]            # R x G x size
    onehot = np.zeros((repeats, n_groups, n))
    np.put_along_axis(onehot, idx, 1.0 / size, axis=2)
    return np.einsum("sn,rgn->rsg", X, onehot)


DIFFICULTY_TIES = {
    "topic": "ties by topic (file) order, ascending (the default)",
    "topic_desc": "ties by topic order, descending",
    "mean_asc": "ties by the topic's mean score, lowest first",
    "mean_desc": "ties by the topic's mean score, highest first",
}


def difficulty_groups(X, size: int, ties: str = "topic") -> list[np.ndarray]:
    """Topic indices of fixed groups of ``size`` consecutive topics ordered by difficulty (the best score on the
    topic, hardest first; tied maxima ordered by ``ties``, one of :data:`DIFFICULTY_TIES`); a last, smaller group
    keeps the remainder."""
    X = _check(X)
    n = X.shape[1]
    if size > n:
        raise InputError(f"group size {size} exceeds the number of topics {n}")
    ids, mean = np.arange(n), X.mean(axis=0)
    second = {"topic": ids, "topic_desc": -ids, "mean_asc": mean, "mean_desc": -mean}
    if ties not in second:
        raise InputError(f"unknown tie order {ties!r}; expected one of {sorted(second)}")
    order = np.lexsort((ids, second[ties], X.max(axis=0)))
    return [order[k:k + size] for k in range(0, n, size)]


def difficulty_readings(X, size: int = 5, target: str = "topic") -> dict:
    """Table 9's query-difficulty cells (original and max–min normalised scores) under each tie order of
    :data:`DIFFICULTY_TIES`, and two further readings (the other grouping ``target`` of :func:`tradeoff_groups`;
    difficulty = the topic's mean score instead of its best), with the number of tied per-topic maxima:
    ``{reading: (difficulty, difficulty_norm)}`` and ``"tied_maxima"``."""
    X = _check(X)
    Xn = maxmin_normalise(X)
    out = {"tied_maxima": int(X.shape[1] - np.unique(X.max(axis=0)).size)}
    for ties in DIFFICULTY_TIES:
        g = difficulty_groups(X, size, ties)
        out[ties] = (tradeoff_groups(X, g, target), tradeoff_groups(Xn, g, target))
    g = difficulty_groups(X, size)
    other = "group" if target == "topic" else "topic"
    out[f"target={other}"] = (tradeoff_groups(X, g, other), tradeoff_groups(Xn, g, other))
    by_mean = np.argsort(X.mean(axis=0), kind="stable")
    g = [by_mean[k:k + size] for k in range(0, X.shape[1], size)]
    out["difficulty=mean score"] = (tradeoff_groups(X, g, target), tradeoff_groups(Xn, g, target))
    return out


def tradeoff_groups(X, groups, target: str = "topic", ddof: int = 0) -> float:
    """Bias²–Var correlation over topic groups (group score = mean of its topics).

    ``target="topic"``: the target system is the per-topic best (BV-Test Table 1), so its group score is the mean
    of the per-topic maxima in the group and ``c`` their mean; ``target="group"``: the target takes the best group
    mean. The "topic" reading reproduces BV-Test Table 9's query-difficulty columns on TREC-5..7 to 4 decimals.
    """
    X = _check(X)
    G = np.stack([X[:, g].mean(axis=1) for g in groups], axis=1)
    if target == "topic":
        c = float(np.mean([X[:, g].max(axis=0).mean() for g in groups]))
    elif target == "group":
        c = float(G.max(axis=0).mean())
    else:
        raise InputError(f"unknown grouping target {target!r}; expected 'topic' or 'group'")
    return pearson((G.mean(axis=1) - c) ** 2, G.var(axis=1, ddof=ddof))


def tradeoff_random(X, size: int, n_groups: int, repeats: int, seed: int, target: str = "group",
                    ddof: int = 0) -> np.ndarray:
    """Bias²–Var correlation for each of ``repeats`` random groupings (vectorised): an array of ``repeats``.

    Reading of Sec. 5.3.2: "10 topics are randomly extracted from the entire topic set as a group and 50 topic
    groups are used", repeated 1000 times — groups drawn independently (they may overlap). ``target`` as in
    :func:`tradeoff_groups` ("group": best group mean; "topic": mean of per-topic maxima).
    """
    X = _check(X)
    G = group_random(X, size, n_groups, repeats, seed)                      # R x S x G
    mean = G.mean(axis=2)
    if target == "group":
        cval = G.max(axis=1).mean(axis=1, keepdims=True)
    elif target == "topic":
        cval = np.full((repeats, 1), X.max(axis=0).mean())  # each topic's max, averaged over groups and topics
    else:
        raise InputError(f"unknown grouping target {target!r}; expected 'topic' or 'group'")
    bias2 = (mean - cval) ** 2
    var = G.var(axis=2, ddof=ddof)
    b = bias2 - bias2.mean(axis=1, keepdims=True)
    v = var - var.mean(axis=1, keepdims=True)
    den = np.sqrt((b ** 2).sum(axis=1) * (v ** 2).sum(axis=1))
    if (den == 0).any():
        raise InputError("correlation undefined for some random grouping (constant Bias² or Var)")
    return (b * v).sum(axis=1) / den



# --- per-topic bias–variance over simulated document collections (BV-Test Sec. 3.4, Eqs. 12–14) ---------------

def per_topic_bias_variance(Y, ddof: int = 0):
    """Eq. 12 on every topic: ``Y`` is ``systems × topics × k`` (score of system ``i`` on topic ``t`` in collection
    sample ``j``, BV-Test Table 3). Per topic, ``y_T,j = max_i y_{i,j}`` and ``c = mean_j y_T,j``;
    ``Bias²(y_i) = (ȳ_i − c)²`` and ``Var(y_i)`` is the variance over the ``k`` samples (``ddof = 0`` makes
    Eq. 12 an identity). Returns ``(bias2, var, c)`` of shapes ``S × T``, ``S × T`` and ``T``.
    """
    Y = np.asarray(Y, dtype=float)
    if Y.ndim != 3 or min(Y.shape) < 1:
        raise InputError(f"per-topic scores must be 3-D (systems x topics x samples), got shape {Y.shape}")
    if not np.isfinite(Y).all():
        raise InputError("per-topic scores have NaN or infinite values")
    _check_ddof(Y.shape[2], ddof)
    c = Y.max(axis=0).mean(axis=1)                                     # T
    mean = Y.mean(axis=2)
    return (mean - c[None, :]) ** 2, Y.var(axis=2, ddof=ddof), c


def averaged_tradeoff(bias2, var, topics=None) -> float:
    """BV-Test Table 10: Pearson correlation across systems of ``mean_t Bias²`` (Eq. 13) and ``mean_t Var``
    (Eq. 14), over the topic columns ``topics`` (a boolean mask or indices; all by default)."""
    bias2, var = np.asarray(bias2, float), np.asarray(var, float)
    if topics is not None:
        bias2, var = bias2[:, topics], var[:, topics]
    if bias2.shape[1] == 0:
        raise InputError("no topic left to average Bias² and Var over (no topic has a relevant retrieved document)")
    return pearson(bias2.mean(axis=1), var.mean(axis=1))


def per_topic_tradeoff(bias2, var) -> pd.DataFrame:
    """BV-Test Table 11: per topic, the Pearson correlation across systems of ``Bias²`` and ``Var``.

    Columns ``pearson`` (None where undefined) and ``note`` (why: a single system, or constant Bias² or Var, e.g.
    a topic on which every system scores 0 in every sample); never NaN.
    """
    bias2, var = np.asarray(bias2, float), np.asarray(var, float)
    rows = [try_value(pearson, bias2[:, t], var[:, t]) for t in range(bias2.shape[1])]
    return pd.DataFrame({"pearson": pd.Series([v for v, _ in rows], dtype=object),
                         "note": [n for _, n in rows]})
