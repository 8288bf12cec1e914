"""Figures of the label stage: each function takes frames and returns a matplotlib Figure."""
from __future__ import annotations

import numpy as np
import pandas as pd

#: the agreement figure's panels: column of :func:`irrepro.labels.agreement.agreement_table` -> axis label
PANELS = {"spearman": "Spearman ρ (pooled)", "per_query_spearman": "mean per-query Spearman ρ",
          "kendall_tau_b": "Kendall τ_b", "weighted_kappa": "weighted κ (quadratic)"}


def agreement_figure(table: pd.DataFrame, title: str = ""):
    """One panel per agreement statistic (:data:`PANELS`): a bar per labeler within each collection, 0 marked (a
    labeler at chance sits on it; the pairs behind each bar are in the table)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    collections = list(dict.fromkeys(table.collection))
    labelers = list(dict.fromkeys(table.labeler))
    colors = {lab: plt.get_cmap("tab10")(i % 10) for i, lab in enumerate(labelers)}
    fig, axes = plt.subplots(1, len(PANELS), figsize=(3.6 * len(PANELS), 3.6), sharey=True)
    width = 0.8 / max(len(labelers), 1)
    for ax, (col, label) in zip(np.atleast_1d(axes), PANELS.items()):
        for i, lab in enumerate(labelers):
            t = table[table.labeler == lab].set_index("collection")
            x = [j + (i - (len(labelers) - 1) / 2) * width for j, c in enumerate(collections) if c in t.index]
            y = [t.loc[c, col] for c in collections if c in t.index]
            ax.bar(x, np.nan_to_num(np.asarray(y, dtype=float)), width=width * 0.95, color=colors[lab], label=lab)
        ax.axhline(0, color="black", lw=0.8)
        ax.set_xticks(range(len(collections)), collections, rotation=20)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("collection")
        ax.set_ylim(min(-0.2, float(np.nanmin(table[list(PANELS)].to_numpy(dtype=float))) - 0.05), 1.0)
        ax.grid(axis="y", alpha=0.3)
    np.atleast_1d(axes)[0].set_ylabel("agreement with the human grades")
    fig.legend(*np.atleast_1d(axes)[0].get_legend_handles_labels(), loc="lower center", ncol=len(labelers),
               bbox_to_anchor=(0.5, -0.08), frameon=False)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig
