"""SIGIR 2013 (Zhang, Song, Wang, Hou) Tables 1 and 2: the toy AP example of two queries and four models.

Table 1: MAP, Robustness Index and <Init against the original model A, and Bias(AP) = MAP_T − MAP (Eq. 1),
Var(AP) (Eq. 2), Bias² + Var (Eq. 3). Table 2: the same on ρ = AP_T − AP (Eqs. 4–7). Also the text's variant
where C's APs become 0.32 and 0.11.
"""
import json

import numpy as np
import pandas as pd

from irrepro.papers.bv.biasvariance import ap_bias_variance, rho_bias_variance
from irrepro.core.logs import log_to
from irrepro.papers.bv.risk import below_init, robustness_index
from irrepro.core.verify import to_markdown

sm = snakemake  # noqa: F821
models = json.loads(sm.params.models)      # model -> [AP q1, AP q2], the paper's Table 1
names = list(models)
X = np.array([models[m] for m in names], dtype=float)
base, target = X[names.index(sm.params.original)], X[names.index(sm.params.target)]


def table1(X, names):
    t = ap_bias_variance(X, target)
    t.insert(0, "model", names)
    t.insert(1, "ap_q1", X[:, 0])
    t.insert(2, "ap_q2", X[:, 1])
    t.insert(4, "robust_index", [robustness_index(x, base) for x in X])
    t.insert(5, "below_init", [below_init(x, base) for x in X])
    return t


with log_to(sm.log[0]) as log:
    t1 = table1(X, names)
    t2 = rho_bias_variance(X, target)
    rho = target[None, :] - X
    t2.insert(0, "model", names)
    t2.insert(1, "rho_q1", rho[:, 0])
    t2.insert(2, "rho_q2", rho[:, 1])
    for t, csv, md in ((t1, sm.output.t1_csv, sm.output.t1_md), (t2, sm.output.t2_csv, sm.output.t2_md)):
        t.round(6).to_csv(csv, index=False)
        with open(md, "w") as f:
            f.write(to_markdown(t.round(4)))
    values = {}
    for _, r in t1.iterrows():
        for col in ("map", "robust_index", "below_init", "bias", "var", "total"):
            values[f"sigir13/table1/{r['model']}/{col}"] = float(r[col])
    for _, r in t2.iterrows():
        for col in ("bias", "var", "total"):
            values[f"sigir13/table2/{r['model']}/{col}"] = float(r[col])
    # the text's variant: C's APs changed to 0.32 and 0.11
    Xv = X.copy()
    Xv[names.index("C")] = json.loads(sm.params.variant_c)
    tv = table1(Xv, names).set_index("model").loc["C"]
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
    log.info("Table 1:\n%s\nTable 2:\n%s", t1.round(4), t2.round(4))
    json.dump(values, open(sm.output.values, "w"), indent=1, sort_keys=True)
