"""Figures of the sampling paper: Figs 1–3, accuracy of the sampled comparisons against the judgment budget."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PANELS = (("pair_accuracy", "Fig 1: pairwise sign accuracy"), ("baseline_accuracy", "Fig 2: accuracy vs baseline"),
          ("kendall_tau", "Fig 3: Kendall's τ"))


def fig_accuracy(acc, data: str):
    """Figs 1–3 side by side: naive sampler and Q* against the budget n (log x axis), from
    :func:`irrepro.papers.sampling.experiments.comparative_accuracy`."""
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    for ax, (col, title) in zip(axes, PANELS):
        for sampler, label in (("naive", "naive"), ("qstar", "Q* (ours)")):
            a = acc[acc.sampler == sampler]
            ax.plot(a.budget, a[col], "o-", label=label)
        ax.set_xscale("log")
        ax.set_xlabel("judgments n")
        ax.set_title(f"{data}: {title}", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def save(fig, pdf, png):
    """PDF and 150-dpi PNG of the whole canvas (no tight bounding box, unlike irrepro.core.figures.save)."""
    fig.savefig(pdf)
    fig.savefig(png, dpi=150)
    plt.close(fig)
