"""How many human-labelled queries a target interval width needs (the power analysis ppi_py offers as
``ppi_mean_ci``'s sample-size helpers), from the labels at hand: the per-query human values of the n labelled
queries and the predictions of all N.

Widths are the normal-approximation widths ``2·z·se`` (z = Φ⁻¹(1 − α/2)) with the variances estimated on the n
labelled queries (ddof = 1), as a function of a hypothetical number of labelled queries m:

* ``bootstrap`` (≈ the CLT interval of the human values): ``se² = s²_U / m``;
* ``ppi`` (λ = 1): ``se² = s²_{U−Û} / m + s²_Û / N``;
* ``ppi++`` (λ̂ of :func:`~irrepro.papers.ci.ppi.ppi_power_lambda`): ``se² = s²_{U−λ̂Û} / m + λ̂² s²_Û / N``.

``n_needed`` solves ``width(m) <= target`` for the smallest integer m (``inf`` where even m → ∞ cannot reach it:
PPI's prediction term ``s²_Û / N`` does not shrink with m). CRC has no closed-form width; it is planned by the
observed CRC width at n (``crc``: width ∝ 1/√m from the observed, a heuristic stated as such in the table).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from irrepro.core.quantiles import norm_ppf
from irrepro.errors import InputError
from irrepro.papers.ci.ppi import ppi_power_lambda

PLAN_METHODS = ("bootstrap", "ppi", "ppi++", "crc")


def variance_terms(u_labelled, pred_labelled, pred_all, crc_width=None) -> dict:
    """``{method: (a, b)}`` with ``width(m) = 2 z sqrt(a / m + b)`` (``crc``: a from its observed width at n)."""
    u = np.asarray(u_labelled, dtype=float)
    p = np.asarray(pred_labelled, dtype=float)
    pa = np.asarray(pred_all, dtype=float)
    n, N = u.size, pa.size
    if n < 2 or p.size != n:
        raise InputError(f"planning: need >= 2 labelled queries with a prediction each, got {n} and {p.size}")
    lam = float(ppi_power_lambda(u, p, pa))
    out = {"bootstrap": (u.var(ddof=1), 0.0), "ppi": ((u - p).var(ddof=1), pa.var(ddof=1) / N),
           "ppi++": ((u - lam * p).var(ddof=1), lam ** 2 * pa.var(ddof=1) / N)}
    if crc_width is not None and np.isfinite(crc_width):
        out["crc"] = (float(crc_width) ** 2 * n, 0.0)  # (crc_width)^2 = a/n with 2z absorbed below
    return out


def width_curve(terms: dict, ms, alpha=0.05) -> pd.DataFrame:
    """Predicted width for each method and number of labelled queries m: ``method, m, width``."""
    z = norm_ppf(1 - alpha / 2)
    rows = []
    for method, (a, b) in terms.items():
        for m in ms:
            w = np.sqrt(a / m) if method == "crc" else 2 * z * np.sqrt(a / m + b)
            rows.append({"method": method, "m": int(m), "width": float(w)})
    return pd.DataFrame(rows)


def n_needed(terms: dict, width: float, alpha=0.05) -> dict:
    """``{method: smallest m with width(m) <= width}`` (``inf`` if none)."""
    z = norm_ppf(1 - alpha / 2)
    out = {}
    for method, (a, b) in terms.items():
        if method == "crc":
            out[method] = float(np.ceil(a / width ** 2)) if width > 0 else np.inf
            continue
        room = (width / (2 * z)) ** 2 - b
        out[method] = float(max(1.0, np.ceil(a / room))) if room > 0 else np.inf
    return out


def plan_tables(long: pd.DataFrame, per_query: pd.DataFrame, rel_widths, alpha=0.05):
    """``(need, curves)`` from the systems table (``systems_long``) and its per-query values: for each system,
    measure, target width (``rel_widths`` × the PPI estimate) and method the labelled queries needed
    (``n_needed``; ``crc`` scaled from its observed width as 1/√m, a heuristic); and the width curves over m."""
    need, curves = [], []
    sys_rows = long[long.kind == "system"]
    for (s, m), pq in per_query.groupby(["system", "measure"], sort=False):
        rows = sys_rows[(sys_rows.system == s) & (sys_rows.measure == m)].set_index("method")
        lab = pq[pq.labelled.astype(bool)]
        terms = variance_terms(lab.u_true.to_numpy(), lab.u_pred.to_numpy(), pq.u_pred.to_numpy(),
                               crc_width=rows.width.get("crc"))
        n, N = len(lab), len(pq)
        ms = np.unique(np.round(np.geomspace(2, N, 40)).astype(int))
        c = width_curve(terms, np.union1d(ms, [n]), alpha)
        curves.append(c.assign(system=s, measure=m, n=n))
        est = float(rows.estimate["ppi"])
        at_n = c[c.m == n].set_index("method").width
        for rw in rel_widths:
            for method, k in n_needed(terms, rw * est, alpha).items():
                need.append({"system": s, "measure": m, "target_relative": rw, "target_width": rw * est,
                             "method": method, "n_needed": k, "n": n, "N": N, "width_at_n": float(at_n[method]),
                             "reachable_within_N": bool(k <= N)})
    return pd.DataFrame(need), pd.concat(curves, ignore_index=True)


def plan_markdown(need: pd.DataFrame, collection: str, alpha=0.05) -> str:
    """The planning table (``plan_tables``' ``need``) as Markdown, with what its columns mean: the target width,
    how ``n_needed`` is predicted per method, ``inf`` and ``reachable_within_N``."""
    from irrepro.core.io import to_markdown

    n = ", ".join(str(int(v)) for v in sorted(need.n.unique()))
    N = ", ".join(str(int(v)) for v in sorted(need.N.unique()))
    lines = [f"# How many human-labelled queries a target interval width needs on {collection}", "",
             f"Predicted {1 - alpha:.0%} interval width against the number m of human-labelled queries, from the "
             f"n = {n} labelled now (the variances of their human values and labels) and the labels of all N = {N} "
             "queries. `target_width`: `target_relative` × the system's PPI estimate. `n_needed`: the "
             "smallest m whose predicted width is at most the target: bootstrap, PPI and PPI++ from their "
             "normal-approximation widths, CRC by scaling its observed width at n as 1/√m (a heuristic). `inf`: no "
             "m reaches the target (PPI's width has a floor, 2z·sd(Û)/√N: the spread of the labels' own values over "
             "the N queries). `reachable_within_N` is False where n_needed > N: the collection has too few queries "
             "for that width with these labels, however many of them are labelled.", ""]
    return "\n".join(lines) + "\n" + to_markdown(need, "{:.4g}")


DIFF_PLAN_METHODS = ("bootstrap", "ppi", "ppi++")


def difference_power(long: pd.DataFrame, per_query: pd.DataFrame, rel_deltas, alpha=0.05, power=0.8):
    """How many judged queries detect a difference Δ from the baseline with probability ``power``: for each system
    compared with the baseline (the ``difference`` rows of ``long``, :func:`~irrepro.papers.ci.systems.systems_long`),
    measure, Δ = ``rel_deltas`` × the baseline's PPI estimate and method, the smallest m with
    ``(z_{1−α'/2} + z_power)·se(m) <= Δ`` (α' the level the difference rows were computed at, ``alpha_adjusted``:
    Bonferroni over the systems compared). ``se(m)`` as in :func:`variance_terms`, on the per-query differences
    system − baseline (their variances and PPI++'s λ̂ estimated on the n labelled queries). ``inf``: no m reaches Δ
    (PPI's floor ``s²_Û / N``)."""
    diff = long[long.kind == "difference"]
    sysrows = long[long.kind == "system"]
    z_b = norm_ppf(float(power))
    rows = []
    for (s, b, m), d in diff.groupby(["system", "system_b", "measure"], sort=False):
        a_adj = float(d.alpha_adjusted.iloc[0]) if "alpha_adjusted" in d and pd.notna(d.alpha_adjusted.iloc[0]) \
            else alpha
        z_a = norm_ppf(1 - a_adj / 2)
        pa = per_query[(per_query.system == s) & (per_query.measure == m)].set_index("query_id")
        pb = per_query[(per_query.system == b) & (per_query.measure == m)].set_index("query_id").loc[pa.index]
        lab = pa.labelled.astype(bool).to_numpy()
        dt = (pa.u_true - pb.u_true).to_numpy()
        dp = (pa.u_pred - pb.u_pred).to_numpy()
        terms = variance_terms(dt[lab], dp[lab], dp)
        base = sysrows[(sysrows.system == b) & (sysrows.measure == m) & (sysrows.method == "ppi")].estimate
        ref = abs(float(base.iloc[0]))
        for rd in rel_deltas:
            delta = float(rd) * ref
            for method in DIFF_PLAN_METHODS:
                a, bb = terms[method]
                room = (delta / (z_a + z_b)) ** 2 - bb if delta > 0 else -1.0
                k = float(max(2.0, np.ceil(a / room))) if room > 0 else np.inf
                rows.append({"system": s, "baseline": b, "measure": m, "delta_relative": float(rd), "delta": delta,
                             "method": method, "power": float(power), "alpha_adjusted": a_adj, "n_needed": k,
                             "n": int(lab.sum()), "N": len(dp), "reachable_within_N": bool(k <= len(dp))})
    return pd.DataFrame(rows)


def power_markdown(table: pd.DataFrame, collection: str, alpha=0.05) -> str:
    """The difference planning table (:func:`difference_power`) as Markdown with what its columns mean."""
    from irrepro.core.io import to_markdown

    if table.empty:
        return f"# Judged queries needed to detect a difference on {collection}\n\nNo system compared.\n"
    pw = float(table.power.iloc[0])
    lines = [f"# Judged queries needed to detect a difference on {collection}", "",
             f"For each system against the baseline: the number m of judged queries at which a true difference "
             f"`delta` (= `delta_relative` × the baseline's PPI estimate) is detected with probability {pw:.0%} by "
             f"a two-sided interval at level 1 − `alpha_adjusted` (Bonferroni over the systems compared, overall "
             f"α = {alpha:g}): the smallest m with (z(1 − α'/2) + z({pw:g}))·se(m) ≤ delta. se(m) from the variances "
             "of the per-query differences (system − baseline) on the n judged queries: bootstrap ≈ the human "
             "differences alone, ppi / ppi++ the labels' predicted differences of all N corrected by the n. `inf`: "
             "no m reaches delta (PPI's floor: the spread of the predicted differences over the N). "
             "`reachable_within_N` is False where m > N.", ""]
    return "\n".join(lines) + "\n" + to_markdown(table, "{:.4g}")
