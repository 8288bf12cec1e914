"""How many human-labelled queries a target interval width needs (the power analysis ppi_py offers as
``ppi_mean_ci``'s sample-size helpers), from the labels at hand: the per-query human values of the n labelled
queries and the predictions of all N.

The target is the intervals' (:mod:`irrepro.papers.ci.finite`): the mean over the N queries. With m of them judged
(drawn without replacement) the widths are ``2·t·se(m)``, ``se(m)² = (1 − m/N)·a / m``, t the quantile of
:func:`~irrepro.papers.ci.finite.t_quantile` (``min(m, N − m) − 1`` degrees of freedom), and ``a`` a variance
estimated on the n labelled queries (ddof = 1):

* ``bootstrap`` (≈ the t interval of the human values): ``a = s²_U``;
* ``ppi`` (λ = 1): ``a = s²_{U−Û}``;
* ``ppi++`` (λ̂ of :func:`~irrepro.papers.ci.finite.power_lambda`): ``a = s²_{U−λ̂Û}``.

``n_needed`` is the smallest integer m whose width is at most the target and from which the method gives an
interval at all (:func:`~irrepro.papers.ci.finite.min_queries`: 20 judged queries for the bootstrap and CRC at
α = 0.05, 40 for PPI++; below that its planned width is NaN, as its row in the systems table is); every target is
reachable by m = N (the mean is then known: width 0). CRC has no closed-form width; it is planned from its observed width at n,
scaled as the others scale, by ``sqrt((1 − m/N)/m)`` (a heuristic, stated as such in the table).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from irrepro.core.quantiles import norm_ppf
from irrepro.errors import InputError
from irrepro.papers.ci.finite import min_queries, power_lambda, t_quantile

PLAN_METHODS = ("bootstrap", "ppi", "ppi++", "crc")


def variance_terms(u_labelled, pred_labelled, pred_all, crc_width=None, alpha=0.05) -> dict:
    """``{method: a}`` with ``se(m)² = (1 − m/N)·a / m`` (``crc``: ``a`` such that its observed width at n is
    ``2·t·se(n)`` at level 1 − ``alpha``); ``N`` is ``len(pred_all)``."""
    u = np.asarray(u_labelled, dtype=float)
    p = np.asarray(pred_labelled, dtype=float)
    pa = np.asarray(pred_all, dtype=float)
    n, N = u.size, pa.size
    if n < 2 or p.size != n:
        raise InputError(f"planning: need >= 2 labelled queries with a prediction each, got {n} and {p.size}")
    lam = float(power_lambda(u, p))
    out = {"bootstrap": float(u.var(ddof=1)), "ppi": float((u - p).var(ddof=1)),
           "ppi++": float((u - lam * p).var(ddof=1))}
    if crc_width is not None and np.isfinite(crc_width) and n < N:
        out["crc"] = float((crc_width / (2 * t_quantile(alpha, n, N))) ** 2 * n / (1 - n / N))
    return out


def planned_width(a: float, m, N: int, alpha=0.05) -> np.ndarray:
    """``2·t·sqrt((1 − m/N)·a/m)`` for each m (0 at m = N)."""
    m = np.atleast_1d(np.asarray(m, dtype=int))
    t = t_quantile(alpha, m, N)
    return 2 * t * np.sqrt(np.clip(1 - m / N, 0, None) * a / m)


def width_curve(terms: dict, ms, N: int, alpha=0.05) -> pd.DataFrame:
    """Predicted width for each method and number of labelled queries m (2 ≤ m ≤ N): ``method, m, width`` (NaN
    below the method's :func:`~irrepro.papers.ci.finite.min_queries`: no interval there)."""
    ms = np.asarray(ms, dtype=int)
    rows = []
    for method, a in terms.items():
        widths = np.where(ms >= min_queries(method, alpha), planned_width(a, ms, N, alpha), np.nan)
        for m, w in zip(ms, widths):
            rows.append({"method": method, "m": int(m), "width": float(w)})
    return pd.DataFrame(rows)


def n_needed(terms: dict, width: float, N: int, alpha=0.05) -> dict:
    """``{method: smallest m in 2..N with width(m) <= width}`` and at least the method's
    :func:`~irrepro.papers.ci.finite.min_queries` (N at most: the mean of all N is known)."""
    ms = np.arange(2, int(N) + 1)
    out = {}
    for method, a in terms.items():
        ok = (planned_width(a, ms, N, alpha) <= width) & (ms >= min_queries(method, alpha))
        out[method] = float(ms[np.argmax(ok)]) if ok.any() else float(N)
    return out


def plan_tables(long: pd.DataFrame, per_query: pd.DataFrame, rel_widths, alpha=0.05):
    """``(need, curves)`` from the systems table (``systems_long``) and its per-query values: for each system,
    measure, target width (``rel_widths`` × the PPI estimate) and method the labelled queries needed
    (:func:`n_needed`; ``crc`` scaled from its observed width, a heuristic); and the width curves over m."""
    need, curves = [], []
    sys_rows = long[long.kind == "system"]
    for (s, m), pq in per_query.groupby(["system", "measure"], sort=False):
        rows = sys_rows[(sys_rows.system == s) & (sys_rows.measure == m)].set_index("method")
        lab = pq[pq.labelled.astype(bool)]
        terms = variance_terms(lab.u_true.to_numpy(), lab.u_pred.to_numpy(), pq.u_pred.to_numpy(),
                               crc_width=rows.width.get("crc"), alpha=alpha)
        n, N = len(lab), len(pq)
        ms = np.unique(np.round(np.geomspace(2, N, 40)).astype(int))
        c = width_curve(terms, np.union1d(ms, [n]), N, alpha)
        curves.append(c.assign(system=s, measure=m, n=n))
        est = float(rows.estimate["ppi"])
        at_n = c[c.m == n].set_index("method").width
        for rw in rel_widths:
            for method, k in n_needed(terms, rw * est, N, alpha).items():
                need.append({"system": s, "measure": m, "target_relative": rw, "target_width": rw * est,
                             "method": method, "n_needed": k, "n": n, "N": N, "width_at_n": float(at_n[method])})
    return pd.DataFrame(need), pd.concat(curves, ignore_index=True)


def plan_markdown(need: pd.DataFrame, collection: str, alpha=0.05) -> str:
    """The planning table (``plan_tables``' ``need``) as Markdown, with what its columns mean: the target, the
    target width and how ``n_needed`` is predicted per method."""
    from irrepro.core.io import to_markdown

    n = ", ".join(str(int(v)) for v in sorted(need.n.unique()))
    N = ", ".join(str(int(v)) for v in sorted(need.N.unique()))
    lines = [f"# How many human-labelled queries a target interval width needs on {collection}", "",
             f"Predicted {1 - alpha:.0%} interval width of the mean over the N = {N} queries against the number m "
             f"of them human-labelled (drawn at random), from the n = {n} labelled now (the variances of their "
             "human values and labels) and the labels of all N. `target_width`: `target_relative` × the system's "
             "PPI estimate. `n_needed`: the smallest m whose predicted width 2·t·sqrt((1 − m/N)·a/m) is at most the "
             "target (a: the variance of the human values for the bootstrap, of the labels' errors for PPI and "
             "PPI++; t on min(m, N − m) − 1 degrees of freedom); CRC by scaling its observed width at n the same "
             "way (a heuristic). n_needed is at least the fewest judged queries the method gives an interval from "
             f"(bootstrap {min_queries('bootstrap', alpha)}, PPI++ {min_queries('ppi++', alpha)}, CRC "
             f"{min_queries('crc', alpha)}; `width_at_n` is empty below it). With m = N the mean is known (width 0), "
             "so n_needed is at most N.", ""]
    return "\n".join(lines) + "\n" + to_markdown(need, "{:.4g}")


DIFF_PLAN_METHODS = ("bootstrap", "ppi", "ppi++")


def difference_power(long: pd.DataFrame, per_query: pd.DataFrame, rel_deltas, alpha=0.05, power=0.8):
    """How many judged queries detect a difference Δ from the baseline with probability ``power``: for each system
    compared with the baseline (the ``difference`` rows of ``long``, :func:`~irrepro.papers.ci.systems.systems_long`),
    measure, Δ = ``rel_deltas`` × the baseline's PPI estimate and method, the smallest m with
    ``(z_{1−α'/2} + z_power)·se(m) <= Δ`` (α' the level the difference rows were computed at, ``alpha_adjusted``:
    Bonferroni over the systems compared; normal quantiles). ``se(m)² = (1 − m/N)·a/m`` as in
    :func:`variance_terms`, on the per-query differences system − baseline (their variances and PPI++'s λ̂
    estimated on the n labelled queries): ``m = ⌈a / (r + a/N)⌉``, ``r = (Δ / (z_{1−α'/2} + z_power))²``, at
    least the method's :func:`~irrepro.papers.ci.finite.min_queries` and at most N."""
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
        N = len(dp)
        base = sysrows[(sysrows.system == b) & (sysrows.measure == m) & (sysrows.method == "ppi")].estimate
        ref = abs(float(base.iloc[0]))
        for rd in rel_deltas:
            delta = float(rd) * ref
            for method in DIFF_PLAN_METHODS:
                a = terms[method]
                r = (delta / (z_a + z_b)) ** 2
                floor = min_queries(method, a_adj)
                k = float(min(N, max(floor, np.ceil(a / (r + a / N))))) if delta > 0 else float(N)
                rows.append({"system": s, "baseline": b, "measure": m, "delta_relative": float(rd), "delta": delta,
                             "method": method, "power": float(power), "alpha_adjusted": a_adj, "n_needed": k,
                             "n": int(lab.sum()), "N": N})
    return pd.DataFrame(rows)


def power_markdown(table: pd.DataFrame, collection: str, alpha=0.05) -> str:
    """The difference planning table (:func:`difference_power`) as Markdown with what its columns mean."""
    from irrepro.core.io import to_markdown

    if table.empty:
        return f"# Judged queries needed to detect a difference on {collection}\n\nNo system compared.\n"
    pw = float(table.power.iloc[0])
    lines = [f"# Judged queries needed to detect a difference on {collection}", "",
             f"For each system against the baseline: the number m of judged queries (of the N, drawn at random) at "
             f"which a true difference `delta` (= `delta_relative` × the baseline's PPI estimate) in the mean over "
             f"the N is detected with probability {pw:.0%} by a two-sided interval at level 1 − `alpha_adjusted` "
             f"(Bonferroni over the systems compared, overall α = {alpha:g}): the smallest m with (z(1 − α'/2) + "
             f"z({pw:g}))·se(m) ≤ delta, se(m)² = (1 − m/N)·a/m. a: the variance of the per-query differences "
             "(system − baseline) on the n judged queries for the bootstrap, of the labels' errors on those "
             "differences for ppi / ppi++. n_needed is at least the fewest judged queries the method gives an "
             f"interval from (bootstrap {min_queries('bootstrap')}, PPI++ {min_queries('ppi++')}). With m = N the "
             "difference is known, so n_needed is at most N.", ""]
    return "\n".join(lines) + "\n" + to_markdown(table, "{:.4g}")
