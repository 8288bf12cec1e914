"""Figures of the sampling paper: Figs 1–3, accuracy of the sampled comparisons against the judgment budget."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

#: the panels: column of :func:`irrepro.papers.sampling.experiments.comparative_accuracy`, title, y-axis label
PANELS = (("pair_accuracy", "Fig 1: pairwise sign accuracy", "share of adjacent system pairs\nwith the true sign of Δ"),
          ("baseline_accuracy", "Fig 2: accuracy vs baseline",
           "share of comparisons with the\nwindow's baseline with the true sign"),
          ("kendall_tau", "Fig 3: Kendall's τ", "Kendall's τ of the estimated\nranking with the true ranking"))
SAMPLERS = (("naive", "naive sampler"), ("qstar", "Q* (the paper's sampler)"))


def fig_accuracy(acc, data: str, trials: int | None = None):
    """Figs 1–3 side by side: naive sampler and Q* against the budget n (log x axis, a tick at every budget), from
    :func:`irrepro.papers.sampling.experiments.comparative_accuracy`; each point is the mean over ``trials``
    sampled judgment sets."""
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
    budgets = sorted(acc.budget.unique())
    for ax, (col, title, ylabel) in zip(axes, PANELS):
        for (sampler, label), mk in zip(SAMPLERS, ("o", "s")):
            a = acc[acc.sampler == sampler].sort_values("budget")
            ax.plot(a.budget, a[col], marker=mk, ms=4, label=label)
        ax.set_xscale("log")
        ax.set_xticks(budgets, [f"{b:g}" for b in budgets], fontsize=7, rotation=45)
        ax.minorticks_off()
        ax.set_xlabel("judgments n (log scale)")
        ax.set_ylabel(ylabel, fontsize=8)
        ax.set_title(f"{data}: {title}", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    each = f"mean over {trials} trials" if trials else "mean over the trials"
    fig.suptitle(f"{data}: accuracy of sampled comparisons against the judgment budget (each point: {each})",
                 fontsize=9)
    fig.tight_layout()
    return fig


def save(fig, pdf, png):
    """PDF and 150-dpi PNG of the whole canvas (no tight bounding box, unlike irrepro.core.figures.save)."""
    fig.savefig(pdf)
    fig.savefig(png, dpi=150)
    plt.close(fig)
