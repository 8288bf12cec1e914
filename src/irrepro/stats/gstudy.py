"""Reliability of a test collection by generalizability theory (Brennan 2001, "Generalizability Theory", Ch. 2-4;
Bodoff & Li, SIGIR 2007; Urbano, Marrero & Martín, SIGIR 2013): the systems × topics crossed design.

G-study: the two-way ANOVA without replication of the score matrix (n_s systems, n_t topics) gives mean squares
MS_s, MS_t and MS_res (the system-topic interaction confounded with error), and the random-effects variance
components

    σ²_s = (MS_s − MS_res) / n_t,   σ²_t = (MS_t − MS_res) / n_s,   σ²_res = MS_res.

A negative estimate (sampling error when the true component is small) is set to 0, as is usual (Brennan 2001,
Sec. 3.4); so is an estimate within rounding error of 0 (:func:`rounding_tolerance`: two identical systems leave
σ²_s and σ²_res at ±1e-17 or so, which taken as is give E ρ² = 1 and 1e31 topics); ``clipped`` names the components
that were, ``note`` (:func:`notes`) what a zero component leaves undefined. D-study with n_t' topics:

    E ρ² = σ²_s / (σ²_s + σ²_res / n_t')                 (generalizability coefficient, relative decisions)
    Φ    = σ²_s / (σ²_s + (σ²_t + σ²_res) / n_t')        (dependability index, absolute decisions)

and the number of topics for a target coefficient c solves these for n_t':
n_t' = c / (1 − c) · σ²_res / σ²_s (E ρ²) and c / (1 − c) · (σ²_t + σ²_res) / σ²_s (Φ), rounded up.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd


def rounding_tolerance(X: np.ndarray) -> float:
    """The largest magnitude a variance component of ``X`` can get from floating-point rounding alone.

    Every sum of squares of the decomposition is a sum of n = n_t·n_s terms bounded by ΣX², so its rounding error
    is at most about n·eps·ΣX² (recursive summation); SS_res, obtained by subtracting SS_s and SS_t from the total,
    adds three such errors. A component divides sums of squares by at least (n_s − 1)(n_t − 1) (its mean squares'
    degrees of freedom times n_t or n_s), so it is exact up to 4·n·eps·ΣX² / ((n_s − 1)(n_t − 1)). Pairwise
    summation keeps the actual error far below this bound (about 1% of n·eps·mean(X²) on degenerate matrices),
    and real components of scores with six decimals are many orders above it."""
    X = np.asarray(X, dtype=float)
    n_t, n_s = X.shape
    return 4 * X.size * float(np.finfo(float).eps) * float((X ** 2).sum()) / ((n_s - 1) * (n_t - 1))


def gstudy(X: np.ndarray) -> dict:
    """Variance components and coefficients of a topic-by-system matrix ``X`` (rows topics, columns systems; no
    missing cells). A component below 0 or within :func:`rounding_tolerance` of it is set to 0 and named in
    ``clipped``; ``note`` says which coefficients and numbers of topics that leaves undefined (:func:`notes`)."""
    X = np.asarray(X, dtype=float)
    n_t, n_s = X.shape
    if n_t < 2 or n_s < 2:
        raise ValueError(f"a G-study needs at least 2 topics and 2 systems, got {n_t} × {n_s}")
    if np.isnan(X).any():
        raise ValueError("a G-study needs a complete matrix (a NaN cell)")
    grand = X.mean()
    ss_s = n_t * ((X.mean(axis=0) - grand) ** 2).sum()
    ss_t = n_s * ((X.mean(axis=1) - grand) ** 2).sum()
    ss_res = ((X - grand) ** 2).sum() - ss_s - ss_t
    ms_s, ms_t = ss_s / (n_s - 1), ss_t / (n_t - 1)
    ms_res = ss_res / ((n_s - 1) * (n_t - 1))
    raw = {"var_system": (ms_s - ms_res) / n_t, "var_topic": (ms_t - ms_res) / n_s, "var_residual": ms_res}
    tol = rounding_tolerance(X)
    rounding = [k for k, v in raw.items() if v != 0 and abs(v) <= tol]
    clipped = [k for k, v in raw.items() if v < 0 or k in rounding]
    comp = {k: 0.0 if k in clipped else v for k, v in raw.items()}
    out = {"n_topics": n_t, "n_systems": n_s, **comp, "ms_system": ms_s, "ms_topic": ms_t, "ms_residual": ms_res,
           "clipped": ",".join(clipped)}
    out.update(coefficients(comp, n_t))
    out["note"] = notes(comp, rounding, tol, X)
    return out


def notes(comp: dict, rounding, tol: float, X: np.ndarray) -> str:
    """What a reader of the G-study row must know when a component is 0: the components set to 0 from rounding
    alone (``rounding``, within ``tol``), and the coefficients and numbers of topics that no variance leaves
    undefined. Empty for a matrix with variance between systems and residual variance."""
    s, t, e = comp["var_system"], comp["var_topic"], comp["var_residual"]
    out = []
    if rounding:
        out.append(f"{', '.join(rounding)} within rounding error of 0 (|σ²| <= {tol:.2g}): set to 0")
    if s == 0 and t == 0 and e == 0:
        out.append(f"every score is {X.flat[0]:.6g}: no variance, E ρ² and Φ undefined")
    elif s == 0:
        out.append("no variance between systems (σ²_s = 0): " + ("E ρ² undefined (σ²_res = 0 too), " if e == 0 else
                                                                   "E ρ² = 0, ")
                   + "Φ = 0, no number of topics reaches the target")
    elif e == 0:
        out.append("no residual variance (σ²_res = 0): E ρ² = 1 with any number of topics"
                   + (", Φ too" if t == 0 else ""))
    return "; ".join(out)


def coefficients(comp: dict, n_topics) -> dict:
    """E ρ² and Φ with ``n_topics`` topics (a number or an array) from the variance components."""
    s, t, e = comp["var_system"], comp["var_topic"], comp["var_residual"]
    n = np.asarray(n_topics, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(s + e / n > 0, s / (s + e / n), np.nan)
        phi = np.where(s + (t + e) / n > 0, s / (s + (t + e) / n), np.nan)
    if rho.ndim == 0:
        return {"e_rho2": float(rho), "phi": float(phi)}
    return {"e_rho2": rho, "phi": phi}


def topics_needed(comp: dict, target: float) -> dict:
    """Topics needed for E ρ² and Φ to reach ``target`` (None when σ²_s = 0: never)."""
    s, t, e = comp["var_system"], comp["var_topic"], comp["var_residual"]
    k = target / (1 - target)
    if s <= 0:
        return {"topics_e_rho2": None, "topics_phi": None}
    return {"topics_e_rho2": max(1, math.ceil(k * e / s - 1e-9)), "topics_phi": max(1, math.ceil(k * (t + e) / s - 1e-9))}


def dstudy(comp: dict, max_topics: int) -> pd.DataFrame:
    """E ρ² and Φ for 1..max_topics topics."""
    n = np.arange(1, max_topics + 1)
    c = coefficients(comp, n)
    return pd.DataFrame({"n_topics": n, "e_rho2": c["e_rho2"], "phi": c["phi"]})
