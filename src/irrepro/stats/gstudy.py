"""Reliability of a test collection by generalizability theory (Brennan 2001, "Generalizability Theory", Ch. 2-4;
Bodoff & Li, SIGIR 2007; Urbano, Marrero & Martín, SIGIR 2013): the systems × topics crossed design.

G-study: the two-way ANOVA without replication of the score matrix (n_s systems, n_t topics) gives mean squares
MS_s, MS_t and MS_res (the system-topic interaction confounded with error), and the random-effects variance
components

    σ²_s = (MS_s − MS_res) / n_t,   σ²_t = (MS_t − MS_res) / n_s,   σ²_res = MS_res.

A negative estimate (sampling error when the true component is small) is set to 0, as is usual (Brennan 2001,
Sec. 3.4); ``clipped`` names the components that were. D-study with n_t' topics:

    E ρ² = σ²_s / (σ²_s + σ²_res / n_t')                 (generalizability coefficient, relative decisions)
    Φ    = σ²_s / (σ²_s + (σ²_t + σ²_res) / n_t')        (dependability index, absolute decisions)

and the number of topics for a target coefficient c solves these for n_t':
n_t' = c / (1 − c) · σ²_res / σ²_s (E ρ²) and c / (1 − c) · (σ²_t + σ²_res) / σ²_s (Φ), rounded up.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd


def gstudy(X: np.ndarray) -> dict:
    """Variance components and coefficients of a topic-by-system matrix ``X`` (rows topics, columns systems; no
    missing cells)."""
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
    clipped = [k for k, v in raw.items() if v < 0]
    comp = {k: max(v, 0.0) for k, v in raw.items()}
    out = {"n_topics": n_t, "n_systems": n_s, **comp, "ms_system": ms_s, "ms_topic": ms_t, "ms_residual": ms_res,
           "clipped": ",".join(clipped)}
    out.update(coefficients(comp, n_t))
    return out


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
