"""BV-Test Fig 1: Bias², Var and their sum per system, systems sorted by Bias²."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from irrepro.papers.bv.biasvariance import bias_variance, complete_matrix, pearson, try_value  # noqa: E402
from irrepro.core.logs import log_to  # noqa: E402
from irrepro.core.scores import read_scores, to_matrix  # noqa: E402

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    m = sm.params.measure
    X, _, _, dropped = complete_matrix(to_matrix(read_scores(sm.input[0]), m))
    if dropped["systems"] or dropped["topics"]:
        log.warning("dropped %s", dropped)
    t = bias_variance(X).sort_values("bias2", kind="stable").reset_index(drop=True)
    r, why = try_value(pearson, t["bias2"], t["var"])
    fig, ax = plt.subplots(figsize=(7, 3.6))
    x = np.arange(len(t))
    ax.plot(x, t["bias2"], "o-", ms=3, label="Bias²")
    ax.plot(x, t["var"], "s-", ms=3, label="Var")
    ax.plot(x, t["total"], "^-", ms=3, label="Bias² + Var")
    ax.set_xlabel(f"systems sorted by Bias² ({len(t)} systems)")
    ax.set_ylabel(m)
    c = sm.wildcards.collection
    title = (f"{c}: Bias², Var of {m} (c = mean per-topic max); Pearson r = {r:.3f}" if r is not None
             else f"{c}: Bias², Var of {m}; Pearson r undefined ({why})")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(sm.output.pdf)
    fig.savefig(sm.output.png, dpi=150)
