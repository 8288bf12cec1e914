"""The values and claims of the sampling paper's verify table (items of workflow/resources/reference/sampling.yaml).

Thresholds: Û(S) is unbiased when its mean over the trials is within 3 standard errors (sd / sqrt(trials)) of
the true U(S) (Eq. 2); ShallowPool is biased low when below half the true U(S); coverage of the 95% CIs (Eq. 6) is
near 95% when the coverage pooled over systems and trials is within 3 binomial standard errors of 0.95.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from irrepro.papers.sampling.experiments import PROBLEMS

SYNTH_VALUES = ("true", "shallow", "deep_mean", "deep_sd", "u_hat_mean", "u_hat_sd", "sd_q_star", "sd_q_p",
                "sd_q_unif", "ci_halfwidth", "coverage")
TRUE_ORDER = ["OPT", "REV-75", "SHIFT-5", "REV-150", "SHIFT-7"]   # Table 2's order of the true U(S)


def _unbiased(df: pd.DataFrame, se) -> bool:
    """Mean of Û within 3 standard errors ``se`` of the true U(S), for every system."""
    return bool(((df["u_hat_mean"] - df["true"]).abs() <= 3 * se).all())


def _sd_order(df: pd.DataFrame) -> bool:
    return bool(((df.sd_q_star < df.sd_q_p) & (df.sd_q_p < df.sd_q_unif)).all())


def synth_standard_errors(r: dict, trials: int) -> dict:
    """Per Table 2–4 column of one system row, the standard error of (ours − the paper's): both are estimates of
    the same quantity on an independent SYNTH draw (users) and independent trials of the same size, so each
    s.e. is sqrt(2) times ours. Over users: ``true_se``, ``shallow_se``; over trials: a mean's sd / sqrt(T), an
    sd's sd / sqrt(2 (T - 1)), a coverage's binomial s.e. at the nominal 0.95."""
    r2, t = 2 ** 0.5, trials
    se_sd = lambda sd: r2 * sd / np.sqrt(2 * (t - 1))  # noqa: E731
    return {"true": r2 * r["true_se"], "shallow": r2 * r["shallow_se"],
            "deep_mean": r2 * np.hypot(r["true_se"], r["deep_sd"] / np.sqrt(t)),
            "u_hat_mean": r2 * np.hypot(r["true_se"], r["u_hat_sd"] / np.sqrt(t)),
            **{k: se_sd(r[k]) for k in ("deep_sd", "u_hat_sd", "sd_q_star", "sd_q_p", "sd_q_unif")},
            "ci_halfwidth": r2 * r["ci_halfwidth_sd"] / np.sqrt(t),
            "coverage": r2 * np.sqrt(0.95 * 0.05 / t)}


def synth_values(df: pd.DataFrame, trials: int) -> dict:
    """Tables 2–4 on SYNTH: ``<column>/<system>`` for every cell, each with the standard error its verify
    tolerance is made of (:func:`synth_standard_errors`), and the claims ``claim/...``."""
    values = {}
    for r in df.to_dict(orient="records"):
        se = synth_standard_errors(r, trials) if "true_se" in r else {}
        for k in SYNTH_VALUES:
            values[f"{k}/{r['system']}"] = ({"value": float(r[k]), "se": float(se[k])} if k in se
                                            else float(r[k]))
    d = df.set_index("system")
    values["claim/u_hat_unbiased"] = _unbiased(d, d["u_hat_sd"] / (trials ** 0.5))
    values["claim/shallow_pool_biased_low"] = bool((df["shallow"] < 0.5 * df["true"]).all())
    values["claim/q_star_lt_q_p_lt_q_unif"] = _sd_order(df)
    values["claim/true_order_as_paper"] = list(d["true"].sort_values(ascending=False).index) == TRUE_ORDER
    # pooled over systems and trials: within 3 binomial s.e. of 0.95 (a coverage of 1.0, CIs too wide, fails)
    pooled, m = float(df.coverage.mean()), len(df) * trials
    half = 3 * np.sqrt(0.95 * 0.05 / m)
    values["claim/coverage_near_95"] = {
        "value": bool(abs(pooled - 0.95) <= half),
        "note": f"pooled coverage {pooled:.3f} over {m} intervals; accepted [{0.95 - half:.3f}, "
                f"{min(0.95 + half, 1):.3f}] (3 binomial s.e. around 0.95)"}
    return values


def comparative_values(data: str, table: pd.DataFrame, var: dict, se: dict | None = None) -> dict:
    """Tables 5–7 on ``data``: ``<data>/<table>/<sampler>/<approx_u|true_u>`` and the claim that Q* has a lower
    variance than the naive sampler in every cell. ``se``: the cells' Monte-Carlo error by the keys of ``var``
    (:func:`irrepro.papers.sampling.tables.synth_replicate_se`), written beside each value for its tolerance."""
    problem = dict(PROBLEMS)
    values = {}
    for r in table.to_dict(orient="records"):
        for k in ("approx_u", "true_u"):
            v = float(r[k])
            key = f"{problem[r['table']]}_{r['sampler']}/{k.removesuffix('_u')}"
            values[f"{data}/{r['table']}/{r['sampler']}/{k}"] = (
                {"value": v, "se": float(se[key])} if se is not None else v)
    values[f"{data}/claim/qstar_beats_naive_everywhere"] = bool(all(
        var[f"{p}_qstar/{u}"] < var[f"{p}_naive/{u}"] for p in ("pair", "base", "rank") for u in ("approx", "true")))
    return values


def trec_values(data: str, t24: pd.DataFrame, trials: int) -> dict:
    """Tables 2–4 on the TREC substitute: Û unbiased, sd under Q* < QP < uniform, Û's sd below DeepPool's."""
    return {f"{data}/claim/u_hat_unbiased": _unbiased(t24, t24["u_hat_sd"] / np.sqrt(trials)),
            f"{data}/claim/q_star_lt_q_p_lt_q_unif": _sd_order(t24),
            f"{data}/claim/q_star_sd_below_deep_pool": bool((t24.u_hat_sd < t24.deep_sd).all())}
