"""SIGIR 2013 Figs 1–2 on the query-model family: Bias²(AP), Var(AP) and their sum per model; the target value is
the MAP of the target query model (the paper's third upper-bound setting, a real target model)."""
import json
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from irrepro.papers.bv.biasvariance import bias_variance  # noqa: E402
from irrepro.core.logs import log_to  # noqa: E402
from irrepro.core.scores import read_scores, to_matrix  # noqa: E402

sm = snakemake  # noqa: F821
c = sm.wildcards.collection
with log_to(sm.log[0]) as log:
    M = to_matrix(read_scores(sm.input[0]), "AP")
    names = list(M.columns)
    c_target = float(M["target"].mean())
    t = bias_variance(M.to_numpy().T, c=c_target)
    t.insert(0, "model", names)
    t = t.set_index("model")
    t.round(6).to_csv(sm.output.csv)
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
    log.info("%s", values)
    json.dump(values, open(sm.output.values, "w"), indent=1, sort_keys=True)

    def kind(n):
        return "RM3 (λ)" if n.startswith("rm3") else "RM1 − rn·D_N" if n.startswith("rm1_rn") else n
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    for k, g in t.groupby([kind(n) for n in t.index], sort=False):
        a1.plot(g["bias2"], g["var"], "o-" if len(g) > 1 else "o", ms=5, label=k)
        a2.plot(range(len(t))[:0], [], "o")
    a1.set_xlabel("Bias²(AP)")
    a1.set_ylabel("Var(AP)")
    a1.set_title(f"{c}: Fig 1 — Bias² vs Var of query models", fontsize=9)
    a1.legend(fontsize=7)
    a1.grid(alpha=0.3)
    a2.bar(range(len(t)), t["bias2"], label="Bias²")
    a2.bar(range(len(t)), t["var"], bottom=t["bias2"], label="Var")
    a2.set_xticks(range(len(t)))
    a2.set_xticklabels(t.index, rotation=90, fontsize=6)
    a2.set_title(f"{c}: Fig 2 — Bias² + Var (target MAP {c_target:.3f})", fontsize=9)
    a2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(sm.output.pdf)
    fig.savefig(sm.output.png, dpi=150)
