"""Zhang, Song, Wang, Hou (SIGIR 2013): bias–variance of AP and of ρ = AP_T − AP, Tables 1–2 and Figs 1–2.

* Eqs. 1–3 (:func:`ap_bias_variance`): ``Bias(AP) = MAP_T − MAP``, ``Var(AP) = E(AP − MAP)²`` and
  ``Bias² + Var = E(AP − MAP_T)²`` against a target model ``T``;
* Eqs. 4–7 (:func:`rho_bias_variance`): on ``ρ = AP_T − AP``, ``Bias(ρ) = E(ρ) − ρ_T`` (``ρ_T = 0``), ``Var(ρ)``
  and ``E(AP − AP_T)² = Var(ρ) + Bias²(ρ)``;
* Tables 1–2 (:func:`toy_tables`): the paper's toy example of two queries and four models ``SIGIR13_TOY``, with
  the Robustness Index and <Init against the original model A, the text's variant and the text's claims;
* Figs 1–2 (:func:`family_bias_variance`): Bias²(AP), Var(AP) of the query-model family
  (``irrepro.papers.bv.querymodels``) against the target query model's MAP, with the paper's findings checked;
  the figure is ``irrepro.papers.bv.plots.sigir13_figs``.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from irrepro.errors import InputError
from irrepro.papers.bv.biasvariance import _check, bias_variance
from irrepro.papers.bv.risk import below_init, robustness_index

# SIGIR 2013 Table 1 (two queries): AP of the original model A, expansion models B and C, target model T
SIGIR13_TOY = {"A": [0.3, 0.1], "B": [0.6, 0.08], "C": [0.65, 0.03], "T": [0.7, 0.2]}
# the text's variant (Sec. 1): C's APs changed to 0.32 and 0.11
SIGIR13_VARIANT_C = [0.32, 0.11]


def ap_bias_variance(X, target) -> pd.DataFrame:
    """SIGIR 2013 Eqs. 1–3 per model (row of ``X``, models × queries) against the target model's per-query AP
    ``target``: ``bias = MAP_T − MAP`` (Eq. 1), ``var = E(AP − MAP)²`` (Eq. 2, population variance) and
    ``total = bias² + var = E(AP − MAP_T)²`` (Eq. 3)."""
    X = _check(X)
    t = _check(np.atleast_2d(target))[0]
    if t.size != X.shape[1]:
        raise InputError(f"target has {t.size} queries, the models {X.shape[1]}")
    mean = X.mean(axis=1)
    bias = t.mean() - mean
    var = X.var(axis=1)
    return pd.DataFrame({"map": mean, "bias": bias, "var": var, "total": bias ** 2 + var})


def rho_bias_variance(X, target) -> pd.DataFrame:
    """SIGIR 2013 Eqs. 4–7 per model: ``ρ = AP_T − AP`` (Eq. 4), ``bias = E(ρ) − ρ_T`` with ``ρ_T = 0`` (Eq. 5),
    ``var = E(ρ − E(ρ))²`` (Eq. 6) and ``total = var + bias² = E(AP − AP_T)²`` (Eq. 7)."""
    X = _check(X)
    t = _check(np.atleast_2d(target))[0]
    if t.size != X.shape[1]:
        raise InputError(f"target has {t.size} queries, the models {X.shape[1]}")
    rho = t[None, :] - X
    bias = rho.mean(axis=1)
    var = rho.var(axis=1)
    return pd.DataFrame({"bias": bias, "var": var, "total": bias ** 2 + var})



def _table1(X, names, base, target) -> pd.DataFrame:
    t = ap_bias_variance(X, target)
    t.insert(0, "model", names)
    t.insert(1, "ap_q1", X[:, 0])
    t.insert(2, "ap_q2", X[:, 1])
    t.insert(4, "robust_index", [robustness_index(x, base) for x in X])
    t.insert(5, "below_init", [below_init(x, base) for x in X])
    return t


def toy_tables(models=SIGIR13_TOY, original: str = "A", target: str = "T", variant_c=SIGIR13_VARIANT_C):
    """SIGIR 2013 Tables 1 and 2 on ``models`` (model -> [AP q1, AP q2]): ``(table1, table2, values)``.

    Table 1: MAP, Robustness Index and <Init against ``original``, and Bias (Eq. 1), Var (Eq. 2), Bias² + Var
    (Eq. 3) against ``target``; Table 2: the same on ρ = AP_T − AP (Eqs. 4–7). ``values`` holds every cell, the
    text's variant (C's APs ``variant_c``) and the paper's reading of the tables as claims."""
    names = list(models)
    X = np.array([models[m] for m in names], dtype=float)
    base, tgt = X[names.index(original)], X[names.index(target)]
    t1 = _table1(X, names, base, tgt)
    t2 = rho_bias_variance(X, tgt)
    rho = tgt[None, :] - X
    t2.insert(0, "model", names)
    t2.insert(1, "rho_q1", rho[:, 0])
    t2.insert(2, "rho_q2", rho[:, 1])
    values = {}
    for _, r in t1.iterrows():
        for col in ("map", "robust_index", "below_init", "bias", "var", "total"):
            values[f"sigir13/table1/{r['model']}/{col}"] = float(r[col])
    for _, r in t2.iterrows():
        for col in ("bias", "var", "total"):
            values[f"sigir13/table2/{r['model']}/{col}"] = float(r[col])
    # the text's variant: C's APs changed to 0.32 and 0.11
    Xv = X.copy()
    Xv[names.index("C")] = variant_c
    tv = _table1(Xv, names, base, tgt).set_index("model").loc["C"]
    for col in ("map", "below_init", "robust_index"):
        values[f"sigir13/table1_variant/C/{col}"] = float(tv[col])
    # the paper's reading of Table 1: T best overall, B better than C, B and C reduce bias but raise the variance
    # and the total error over A; of Table 2: Var(ρ) of B and C below that of A
    b1, b2 = t1.set_index("model"), t2.set_index("model")
    values["sigir13/table1/claim_T_lowest_total"] = bool(b1["total"].idxmin() == "T")
    values["sigir13/table1/claim_B_better_than_C"] = bool(b1.loc["B", "total"] < b1.loc["C", "total"])
    values["sigir13/table1/claim_BC_less_bias_more_var_and_total_than_A"] = bool(all(
        b1.loc[m, "bias"] < b1.loc["A", "bias"] and b1.loc[m, "var"] > b1.loc["A", "var"]
        and b1.loc[m, "total"] > b1.loc["A", "total"] for m in ("B", "C")))
    values["sigir13/table2/claim_BC_var_rho_below_A"] = bool(
        b2.loc["B", "var"] < b2.loc["A", "var"] and b2.loc["C", "var"] < b2.loc["A", "var"])
    return t1, t2, values


def family_bias_variance(M: pd.DataFrame, collection: str):
    """SIGIR 2013 Figs 1–2 on the query-model family: ``M`` is the topic × model AP frame (``scores.to_matrix``)
    with a ``target`` model. Returns ``(table, c_target, values)``: Bias²(AP), Var(AP) and their sum per model
    (Eq. 7 with ``c`` = the target model's MAP, the paper's third upper-bound setting), and the paper's findings:
    RM less biased but more variable than the original model, how many RM3 (λ) and RM1 − rn·D_N models beat RM
    on both, the target's zero bias, and the Bias²–Var correlation within the λ and rn families."""
    c = collection
    names = list(M.columns)
    c_target = float(M["target"].mean())
    t = bias_variance(M.to_numpy().T, c=c_target)
    t.insert(0, "model", names)
    t = t.set_index("model")
    rm = t.loc["rm1"]
    lam = t[[bool(re.match(r"rm3_lambda", n)) for n in t.index]]
    rn = t[[bool(re.match(r"rm1_rn", n)) for n in t.index]]
    both = lambda d: d[(d["bias2"] < rm["bias2"]) & (d["var"] < rm["var"])]  # noqa: E731
    values = {
        f"sigir13/{c}/rm1_less_bias_than_original": bool(rm["bias2"] < t.loc["original", "bias2"]),
        f"sigir13/{c}/rm1_more_var_than_original": bool(rm["var"] > t.loc["original", "var"]),
        f"sigir13/{c}/rm3_beating_rm1_on_both": int(len(both(lam))),
        f"sigir13/{c}/rn_beating_rm1_on_both": int(len(both(rn))),
        f"sigir13/{c}/target_zero_bias": bool(abs(t.loc["target", "bias2"]) < 1e-12),
        f"sigir13/{c}/rn_bias_var_corr": float(rn["bias2"].corr(rn["var"])) if len(rn) > 2 else None,
        f"sigir13/{c}/rm3_bias_var_corr": float(lam["bias2"].corr(lam["var"])) if len(lam) > 2 else None,
    }
    # the paper's sign claims: negative among the lambda models, positive among the rn models
    for key, fam, sign, what in (("rm3_bias_var_negative", lam, -1, "lambda"), ("rn_bias_var_positive", rn, 1, "rn")):
        r = values[f"sigir13/{c}/{'rm3' if what == 'lambda' else 'rn'}_bias_var_corr"]
        values[f"sigir13/{c}/{key}"] = (
            {"value": bool(sign * r > 0), "note": f"Pearson r = {r:.3f} over {len(fam)} {what} models"}
            if r is not None and np.isfinite(r) else
            {"value": None, "note": f"undefined: {len(fam)} {what} models (a correlation needs 3 or more, "
                                    f"and Bias^2, Var not constant)"})
    return t, c_target, values
