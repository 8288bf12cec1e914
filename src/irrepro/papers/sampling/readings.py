"""Readings of Table 4's CI half-width (Schnabel et al., ICTIR 2016, Eq. 6), computed side by side on one SYNTH.

Eq. 6 leaves choices open that could move the mean half-width of Table 4: the quantile (``t_{α/2}`` with n − 1
degrees of freedom, or the normal 1.96 the text quotes), the denominator of σ̂ (the printed n − 1, or n), the n
under the square root (the draws, or the distinct pairs judged when draws repeat a pair), and the 0-based or 1-based
rank in ũ = 4 (1 − rank / 2000). :func:`halfwidth_readings` computes every one of them on the same draws (same
seed) as Table 4, the half-width's expectation without Monte-Carlo noise (``z · sqrt(Var_Q(z) / n)``), and the
expectation on further SYNTH draws (another seed), so that the effect of each reading is measured, not argued.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from irrepro.core.quantiles import norm_ppf, t_ppf
from irrepro.papers.sampling.estimators import approx_utility_rank, draw, q_single, target

#: reading -> what it computes; ``eq6`` is the reading Table 4 uses (:func:`.estimators.confidence_interval`)
READINGS = {
    "eq6": "t quantile (n - 1 df), sigma-hat with n - 1, n draws (Table 4's reading)",
    "z": "normal quantile 1.96 instead of t",
    "ddof0": "sigma-hat with denominator n",
    "distinct": "n = distinct pairs judged (a pair drawn twice is judged once)",
    "rank1": "u-tilde = 4 (1 - rank / 2000) with 1-based rank",
    "expected": "z sqrt(Var_Q(z) / n): the half-width's expectation, no Monte-Carlo",
}


def _z(u, P, Q):
    """z = u P / Q over all pairs (0 where Q = 0)."""
    Qf = np.asarray(Q, float).ravel()
    return np.divide(np.asarray(u, float).ravel() * np.asarray(P, float).ravel(), Qf, out=np.zeros_like(Qf),
                     where=Qf > 0)


def expected_halfwidth(u, P, Q, n: int, alpha=0.05) -> float:
    """``z_{α/2} · sqrt(Var_Q[z] / n)``, the half-width of Eq. 6 without sampling noise."""
    z, q = _z(u, P, Q), np.asarray(Q, float).ravel()
    mu = float(z @ q)
    return float(norm_ppf(1 - alpha / 2) * np.sqrt(float(((z - mu) ** 2) @ q) / n))


def sampled_halfwidths(u, P, Q, idx, alpha=0.05) -> dict:
    """Mean half-width over the trials (rows of ``idx``) under the sampled readings of :data:`READINGS`."""
    z = _z(u, P, Q)[np.asarray(idx)]
    n = z.shape[-1]
    sd1, sd0 = z.std(axis=-1, ddof=1), z.std(axis=-1, ddof=0)
    distinct = np.array([np.unique(row).size for row in np.asarray(idx)], float)
    t, zq = t_ppf(1 - alpha / 2, n - 1), norm_ppf(1 - alpha / 2)
    return {"eq6": float(np.mean(t * sd1 / np.sqrt(n))), "z": float(np.mean(zq * sd1 / np.sqrt(n))),
            "ddof0": float(np.mean(t * sd0 / np.sqrt(n))),
            "distinct": float(np.mean(t * sd1 / np.sqrt(distinct)))}


def halfwidth_readings(u, ranks: dict, n: int, trials: int, seed: int, base=np.e, alpha=0.05,
                       other_data=()) -> pd.DataFrame:
    """One row per (system, reading): the mean CI half-width of Table 4 and its ratio to the ``eq6`` reading.

    The sampled readings share one set of ``trials`` × ``n`` draws from Q* per system (generator seeded with
    ``seed``), so their differences carry no Monte-Carlo noise of their own; ``eq6`` is Table 4's reading on fresh
    draws (equal to Table 4's column within its Monte-Carlo error, sd of the half-widths / sqrt(trials)). ``other_data`` is a
    sequence of ``(label, u, ranks)``: further SYNTH draws whose expected half-width is added as reading
    ``data:<label>`` (the spread a regenerated SYNTH alone causes)."""
    rng = np.random.default_rng(seed)
    rows = []
    for s, r in ranks.items():
        P = target(r, base=base)
        q_star = q_single(approx_utility_rank(r), P)
        idx = draw(q_star, n, trials, rng)
        vals = sampled_halfwidths(u, P, q_star, idx, alpha)
        r1 = np.asarray(r) + 1.0
        vals["rank1"] = expected_halfwidth(u, P, q_single(4.0 * (1.0 - r1 / r.shape[1]), P), n, alpha)
        vals["expected"] = expected_halfwidth(u, P, q_star, n, alpha)
        for label, u2, ranks2 in other_data:
            P2 = target(ranks2[s], base=base)
            vals[f"data:{label}"] = expected_halfwidth(u2, P2, q_single(approx_utility_rank(ranks2[s]), P2), n, alpha)
        rows += [{"system": s, "reading": k, "ci_halfwidth": v, "ratio_to_eq6": v / vals["eq6"]}
                 for k, v in vals.items()]
    return pd.DataFrame(rows)
