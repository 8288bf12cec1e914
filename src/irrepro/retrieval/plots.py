"""Figures of the system population of one collection."""
from __future__ import annotations

import numpy as np
import pandas as pd

from irrepro.core.quantiles import t_ppf


def mean_with_ci(matrix: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Mean over topics per system with a Student-t (1 − α) interval: columns ``mean, lo, hi``, sorted by mean."""
    n = matrix.notna().sum()
    mean = matrix.mean()
    se = matrix.std(ddof=1) / np.sqrt(n)
    h = se * t_ppf(1 - alpha / 2, np.maximum(n - 1, 1))
    out = pd.DataFrame({"mean": mean, "lo": mean - h, "hi": mean + h, "topics": n})
    return out.sort_values("mean")


def population_figure(scores: pd.DataFrame, measures, collection: str):
    """One panel per measure: mean over topics per system with 95% t-intervals, RM3 systems highlighted.
    Rows are the same system in every panel, sorted by the first measure."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from irrepro.core.scores import to_matrix

    measures = [m for m in measures if m in set(scores["measure"])]
    n_sys = scores["system"].nunique()
    fig, axes = plt.subplots(1, len(measures), figsize=(3.2 * len(measures), 0.22 * n_sys + 1.5), sharey=False,
                             squeeze=False)
    order = mean_with_ci(to_matrix(scores, measures[0])).index  # every panel in the first measure's order
    for ax, m in zip(axes[0], measures):
        t = mean_with_ci(to_matrix(scores, m)).reindex(order)
        y = np.arange(len(t))
        rm3 = np.array(["+rm3" in s for s in t.index])
        ax.errorbar(t["mean"], y, xerr=[t["mean"] - t["lo"], t["hi"] - t["mean"]], fmt="none", ecolor="0.6", lw=1)
        ax.scatter(t["mean"][~rm3], y[~rm3], s=14, color="C0", label="first stage", zorder=3)
        ax.scatter(t["mean"][rm3], y[rm3], s=14, color="C3", label="+RM3", zorder=3)
        ax.set_yticks(y)
        ax.set_yticklabels(t.index if ax is axes[0][0] else [], fontsize=6)
        ax.set_title(m, fontsize=9)
        ax.set_xlabel(f"mean {m} over topics")
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_ylabel(f"system (sorted by mean {measures[0]})")
    axes[0][0].legend(fontsize=7, loc="lower right")
    fig.suptitle(f"{collection}: mean over {scores['topic'].nunique()} topics with 95% t-intervals", fontsize=9)
    fig.tight_layout()
    return fig
