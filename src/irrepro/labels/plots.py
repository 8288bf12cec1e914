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


def self_preference_figure(table: pd.DataFrame, measure: str, title: str = ""):
    """One panel per (collection, labeler) of :func:`irrepro.labels.selfpref.self_preference_table` rows of
    ``measure``: each system's bias (score by labels − score by humans) with its interval over topics, systems
    ordered by their human score (best at the top), same-model systems in red, 0 marked (no bias)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = table[table.measure == measure]
    keys = list(dict.fromkeys(zip(t.collection, t.labeler)))
    n_sys = max((len(t[(t.collection == c) & (t.labeler == lab)]) for c, lab in keys), default=1)
    fig, axes = plt.subplots(1, max(len(keys), 1), figsize=(5.6 * max(len(keys), 1), 1.6 + 0.22 * n_sys),
                             squeeze=False)
    for ax, (c, lab) in zip(axes[0], keys):
        d = t[(t.collection == c) & (t.labeler == lab)].sort_values("by_humans", kind="mergesort")
        y = np.arange(len(d))
        same = d.same_model.to_numpy(dtype=bool)
        err = np.vstack([d.bias - d.bias_low, d.bias_high - d.bias]).clip(min=0)
        for mask, color, label in ((~same, "tab:blue", "other systems"), (same, "tab:red", "same model as labeler")):
            if mask.any():
                ax.errorbar(d.bias[mask], y[mask], xerr=err[:, mask], fmt="o", color=color, ms=4, capsize=2,
                            label=label)
        ax.axvline(0, color="black", lw=0.8)
        ax.set_yticks(y, d.system, fontsize=6)
        ax.set_title(f"{c}, labeler {lab} ({int(d.topics.iloc[0])} topics)", fontsize=9)
        ax.set_xlabel(f"bias of {measure}: by labels − by humans")
        ax.set_ylabel("system (best by humans at the top)")
        ax.set_ylim(-0.7, len(d) + 1.3)  # room for the legend above the systems
        ax.grid(axis="x", alpha=0.3)
        ax.legend(loc="upper center", fontsize=7, ncol=2)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig
