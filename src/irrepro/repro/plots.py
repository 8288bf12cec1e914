"""Figures of the repro stage: per-topic differences between an original and a reproduced run."""
from __future__ import annotations

import numpy as np
import pandas as pd

from irrepro.repro.table import common, per_topic


def plot_differences(table: pd.DataFrame, scores: pd.DataFrame, measures, title: str = ""):
    """Per-topic differences (reproduced − original), sorted, one panel per (comparison, setting) row of the
    table and measure column; each panel names the two means and the verdict."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pairs = table.drop_duplicates(["comparison", "setting"])[["comparison", "setting", "original", "reproduced"]]
    measures = list(measures)
    fig, axes = plt.subplots(len(pairs), len(measures), figsize=(3.2 * len(measures), 2.2 * len(pairs)),
                             squeeze=False, sharey="col")
    for i, (_, p) in enumerate(pairs.iterrows()):
        for j, m in enumerate(measures):
            ax = axes[i][j]
            a, b = common(per_topic(scores, p.original, m), per_topic(scores, p.reproduced, m))
            d = np.sort((b - a).to_numpy())
            ax.bar(np.arange(len(d)), d, width=1.0, color=np.where(d >= 0, "tab:blue", "tab:red"))
            ax.axhline(0, color="black", lw=0.5)
            row = table[(table.comparison == p.comparison) & (table.setting == p.setting) & (table.measure == m)]
            r = row.iloc[0]
            ax.set_title(f"{p.comparison}, {p.setting}\n{m}: {r.original_score:.4f} → {r.reproduced_score:.4f} "
                         f"({r.verdict})", fontsize=7)
            ax.set_xticks([])
            ax.set_xlabel(f"topics ({len(d)}), by difference", fontsize=7)
            ax.set_ylabel(f"{m}: reproduced − original", fontsize=7)
            ax.tick_params(labelsize=6)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig
