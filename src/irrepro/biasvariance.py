"""Bias–variance evaluation of IR systems (Zhang et al., SIGIR 2013; Zhang et al., IP&M 2022 "BV-Test").

A score matrix ``X`` has one row per system ``i`` and one column per topic (or topic group) ``j``.

* target system (BV-Test Table 1): ``x_T[j] = max_i x[i, j]``; target value ``c = mean_j x_T[j]`` (or ``c = 1``);
* Eq. 7:  ``E(x_i − c)² = Bias²(x_i) + Var(x_i)`` with ``Bias²(x_i) = (x̄_i − c)²`` and
  ``Var(x_i) = E(x_i − x̄_i)²`` — the *population* variance over topics (``ddof = 0``), which is what makes Eq. 7
  an identity; ``ddof`` is a parameter for other conventions;
* Eq. 11 (max–min normalisation per topic): ``x'[i, j] = (x[i, j] − min_i x[i, j]) / (max_i − min_i)``;
* Eq. 16: ``ρ_i = x_T − x_i`` and ``Var(ρ_i) = Var(x_T) + Var(x_i) − 2 Cov(x_T, x_i)``;
* topic grouping (Sec. 5.3.2): random groups of ``size`` topics drawn ``n_groups`` times, repeated ``R`` times,
  or fixed groups of consecutive topics ordered by difficulty (the best score on the topic); a group's score is
  the mean of its topics' scores (MAP of the group).

Functions take numpy arrays (systems × topics) and return arrays or frames. Bad input has defined behaviour:
NaN cells raise ``InputError`` (drop or impute them explicitly first); a constant topic (max = min) normalises
to 0 for every system (it carries no information about the systems), and a single system has an undefined
correlation (NaN is never returned silently: ``InputError`` is raised).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .errors import InputError


def _check(X) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise InputError(f"score matrix must be 2-D (systems x topics), got shape {X.shape}")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise InputError(f"score matrix is empty: shape {X.shape}")
    if np.isnan(X).any():
        i, j = np.argwhere(np.isnan(X))[0]
        raise InputError(f"score matrix has NaN (first at system row {i}, topic column {j}); "
                         f"drop the topic or system, or impute explicitly")
    return X


def target_scores(X) -> np.ndarray:
    """``x_T[j] = max_i x[i, j]``: the per-topic best system (BV-Test Table 1)."""
    return _check(X).max(axis=0)


def bias_variance(X, c: float | str = "target", ddof: int = 0) -> pd.DataFrame:
    """Eq. 7 per system: columns ``mean, bias2, var, total`` (``total = bias2 + var``).

    ``c``: ``"target"`` (mean of the per-topic maximum), ``1`` (the metric's maximum) or any number.
    """
    X = _check(X)
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
    if n - ddof <= 0:
        raise InputError(f"variance with ddof={ddof} needs more than {ddof} topics")
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


def difficulty_groups(X, size: int) -> list[np.ndarray]:
    """Topic indices of fixed groups of ``size`` consecutive topics ordered by difficulty (the best score on the
    topic, hardest first; ties by topic order); a last, smaller group keeps the remainder."""
    X = _check(X)
    n = X.shape[1]
    if size > n:
        raise InputError(f"group size {size} exceeds the number of topics {n}")
    order = np.argsort(X.max(axis=0), kind="stable")
    return [order[k:k + size] for k in range(0, n, size)]


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


TABLE9_COLUMNS = ["original", "original_norm", "random", "random_norm", "difficulty", "difficulty_norm"]


def table9_row(X, random_size=10, random_groups=50, random_repeats=1000, random_target="group",
               difficulty_size=5, difficulty_target="topic", seed=0, **_ignored) -> dict:
    """One row of BV-Test Table 9 for a systems × topics matrix: the Bias²–Var correlation on the original scores
    and on max–min normalised scores (Eq. 11), ungrouped, over random groups (mean over repetitions) and over
    query-difficulty groups (difficulty = the best original score of the topic)."""
    X = _check(X)
    Xn = maxmin_normalise(X)
    groups = difficulty_groups(X, difficulty_size)
    return {
        "original": tradeoff(X),
        "original_norm": tradeoff(Xn),
        "random": float(tradeoff_random(X, random_size, random_groups, random_repeats, seed, random_target).mean()),
        "random_norm": float(tradeoff_random(Xn, random_size, random_groups, random_repeats, seed + 1,
                                             random_target).mean()),
        "difficulty": tradeoff_groups(X, groups, difficulty_target),
        "difficulty_norm": tradeoff_groups(Xn, groups, difficulty_target),
    }


def table8(X, systems, top: int = 8, ddof: int = 1) -> pd.DataFrame:
    """BV-Test Table 8 for the ``top`` systems by mean score: |ZRisk| (α = 0, baseline = the target system) and
    the Eq. 16 decomposition of Var(ρ)."""
    from .risk import zrisk
    X = _check(X)
    xt = X.max(axis=0)
    d = rho_decomposition(X, ddof)
    d.insert(0, "system", list(systems))
    d.insert(1, "mean", X.mean(axis=1))
    d.insert(2, "abs_zrisk", [abs(zrisk(x, xt, 0.0)) for x in X])
    return d.sort_values("mean", ascending=False, kind="stable").head(top).reset_index(drop=True)
