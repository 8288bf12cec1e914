"""Figures of P4 (VB-Score): ES/VB across cut-offs (Fig. 2) and forest plots with bootstrap CIs (Figs 3-4)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from irrepro.core.figures import save  # noqa: E402,F401  (scripts call plots.<paper>.save)


def fig_across_k(summary: pd.DataFrame, ks, alphas, gain="binary", prior="uniform", collection: str = ""):
    """Fig. 2: one panel per measure (ES, VB_alpha), x = k, one line per system (means over the topics of
    ``collection``)."""
    d = summary[(summary.gain == gain) & (summary.prior == prior) & summary.k.isin(ks)]
    measures = [("ES", 0.0)] + [(f"VB$_{{{a:g}}}$", a) for a in alphas if a > 0]
    fig, axes = plt.subplots(1, len(measures), figsize=(3.6 * len(measures), 3.4), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, (label, a) in zip(axes, measures):
        da = d[np.isclose(d.alpha, a)] if a > 0 else d[np.isclose(d.alpha, d.alpha.min())]
        col = "VB" if a > 0 else "ES"
        for system, s in da.groupby("system"):
            s = s.sort_values("k")
            ax.plot(s.k, s[col], marker="o", label=system)
        ax.axhline(0, color="grey", lw=0.6)
        ax.set_xticks(list(ks))
        ax.set_xlabel("cut-off k")
        ax.set_title(label)
    axes[0].set_ylabel(f"mean over topics ({gain} gain, {prior} prior)")
    axes[-1].legend(fontsize=7, loc="best", title="system", title_fontsize=7)
    where = f"{collection}: " if collection else ""
    fig.suptitle(f"{where}ES and VB against the cut-off k, one line per system", fontsize=9)
    fig.tight_layout()
    return fig


def fig_forest(forest: pd.DataFrame, measure: str, alpha: float, gain="binary", level=0.95, collection: str = ""):
    """Figs 3-4: point estimate and CI per system; CIs over queries (uniform and mass priors) and over pooled
    intents (uniform over all topic-subtopic pairs, the paper's student-pipeline setting). The legend sits above
    the axes, clear of the x-axis label; the title names ``collection``."""
    d = forest[(forest.gain == gain) & np.isclose(forest.alpha, alpha)]
    systems = sorted(d.system.unique())
    variants = [("queries", "uniform"), ("queries", "mass"), ("intents", "pooled")]
    variants = [v for v in variants if ((d.ci_over == v[0]) & (d.prior == v[1])).any()]
    fig, ax = plt.subplots(figsize=(6.0, 1.2 + 0.16 * len(systems) * max(1, len(variants))))
    offs = np.linspace(-0.25, 0.25, len(variants)) if len(variants) > 1 else [0.0]
    for (over, prior), off, mk in zip(variants, offs, ["o", "s", "D"]):
        v = d[(d.ci_over == over) & (d.prior == prior)].set_index("system").reindex(systems)
        y = np.arange(len(systems)) + off
        est, lo, hi = v[measure].to_numpy(), v[f"{measure}_lo"].to_numpy(), v[f"{measure}_hi"].to_numpy()
        ax.errorbar(est, y, xerr=[est - lo, hi - est], fmt=mk, capsize=3, label=f"CI over {over} ({prior} prior)")
    ax.axvline(0, color="grey", lw=0.8, ls="--")
    ax.set_yticks(np.arange(len(systems)))
    ax.set_yticklabels(systems)
    ax.invert_yaxis()
    k = int(d.k.iloc[0]) if len(d) else 0
    name = "ES" if measure == "ES" else f"VB$_{{{alpha:g}}}$"
    ax.set_xlabel(f"{name}@{k} ({gain} gain) with {int(level * 100)}% bootstrap CI")
    ax.set_ylabel("system")
    where = f"{collection}: " if collection else ""
    ax.set_title(f"{where}{name}@{k} per system", fontsize=9)
    ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.08), ncol=1, frameon=False)
    fig.set_figheight(fig.get_figheight() + 0.2 * len(variants) + 0.3)
    fig.tight_layout()
    return fig
