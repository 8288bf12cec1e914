"""Figures of the bias–variance papers: BV-Test Fig 1 and Figs 2–3 (Session track), SIGIR 2013 Figs 1–2.

Each function takes the table its figure shows and returns a matplotlib Figure; :func:`save` writes the PDF and the
150-dpi PNG (no ``bbox_inches``, unlike ``irrepro.core.figures.save``: the figures keep their own layout).
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def save(fig, pdf, png) -> None:
    """PDF and 150-dpi PNG of the whole canvas, then close the figure."""
    fig.savefig(pdf)
    fig.savefig(png, dpi=150)
    plt.close(fig)


def fig1(t, r, why, collection: str, measure: str):
    """BV-Test Fig 1: Bias², Var and Bias² + Var per system, systems sorted by Bias² (``tables.fig1_data``)."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    x = np.arange(len(t))
    ax.plot(x, t["bias2"], "o-", ms=3, label="Bias²")
    ax.plot(x, t["var"], "s-", ms=3, label="Var")
    ax.plot(x, t["total"], "^-", ms=3, label="Bias² + Var")
    ax.set_xlabel(f"systems sorted by Bias² ({len(t)} systems)")
    ax.set_ylabel(f"Bias², Var of {measure} (squared {measure} units)")
    c, m = collection, measure
    title = (f"{c}: Bias², Var of {m} (c = mean per-topic max); Pearson r = {r:.3f}" if r is not None
             else f"{c}: Bias², Var of {m}; Pearson r undefined ({why})")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def _kind(n: str) -> str:
    return "RM3 (λ)" if n.startswith("rm3") else "RM1 − rn·D_N" if n.startswith("rm1_rn") else n


def sigir13_figs(t, c_target: float, collection: str):
    """SIGIR 2013 Fig 1 (Bias² vs Var per query model, families joined) and Fig 2 (Bias² + Var per model,
    stacked) from ``sigir13.family_bias_variance``'s table."""
    c = collection
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    for k, g in t.groupby([_kind(n) for n in t.index], sort=False):
        a1.plot(g["bias2"], g["var"], "o-" if len(g) > 1 else "o", ms=5, label=k)
    a1.set_xlabel("Bias²(AP)")
    a1.set_ylabel("Var(AP)")
    a1.set_title(f"{c}: Fig 1 — Bias² vs Var of query models", fontsize=9)
    a1.legend(fontsize=7)
    a1.grid(alpha=0.3)
    a2.bar(range(len(t)), t["bias2"], label="Bias²")
    a2.bar(range(len(t)), t["var"], bottom=t["bias2"], label="Var")
    a2.set_xticks(range(len(t)))
    a2.set_xticklabels(t.index, rotation=90, fontsize=6)
    a2.set_xlabel("query model")
    a2.set_ylabel("Bias²(AP) + Var(AP)")
    a2.set_title(f"{c}: Fig 2 — Bias² + Var (target MAP {c_target:.3f})", fontsize=9)
    a2.legend(fontsize=7)
    fig.tight_layout()
    return fig


def session_figs(per, tracks, measure: str):
    """BV-Test Figs 2–3: per track, Bias² + Var of every system per condition on the scores and on max–min
    normalised scores, systems sorted by the first condition (``session.table12``'s per-system table)."""
    names = sorted(tracks)
    fig, axes = plt.subplots(len(names), 2, figsize=(10, 3.2 * len(names)), squeeze=False)
    for row, name in zip(axes, names):
        d = per[per["track"] == name]
        for ax, col, lab in ((row[0], "total", measure), (row[1], "total_norm", measure + "'")):
            w = d.pivot(index="system", columns="condition", values=col)
            w = w[[c for c in tracks[name]["conditions"] if c in w]]
            w = w.loc[w.iloc[:, 0].sort_values().index]
            x = np.arange(len(w))
            for cond in w.columns:
                ax.plot(x, w[cond], "o-", ms=3, label=cond)
            ax.set_title(f"{name}: Bias² + Var of {lab}", fontsize=9)
            ax.set_xlabel(f"systems sorted by condition {w.columns[0]} ({len(w)} systems)")
            ax.set_ylabel(f"Bias² + Var of {lab}")
            ax.legend(fontsize=7, title="condition", title_fontsize=7)
            ax.grid(alpha=0.3)
    fig.text(0.5, 0.0, f"{measure}': {measure} after max–min normalisation per session", ha="center", va="bottom",
             fontsize=7)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig
