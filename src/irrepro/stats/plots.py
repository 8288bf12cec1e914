"""Figures of the stats stage: p-value heat maps of one collection × measure, the D-study of one collection."""
from __future__ import annotations

import numpy as np
import pandas as pd

#: p-value classes of the heat maps
BOUNDS = [0, 0.001, 0.01, 0.05, 1.0000001]
CLASSES = ["p < 0.001", "p < 0.01", "p < 0.05", "p ≥ 0.05"]


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _cmap():
    from matplotlib.colors import BoundaryNorm, ListedColormap

    cmap = ListedColormap(["#08306b", "#2171b5", "#9ecae1", "#f7f7f7"])
    cmap.set_bad("white")
    return cmap, BoundaryNorm(BOUNDS, cmap.N)


def _legend(fig, cmap):
    from matplotlib.patches import Patch

    fig.legend(handles=[Patch(facecolor=cmap(i), edgecolor="0.5", label=c) for i, c in enumerate(CLASSES)],
               loc="center left", ncol=1, fontsize=8, title="adjusted p-value", title_fontsize=8,
               bbox_to_anchor=(1.0, 0.5))


def _ticks(ax, names, axis):
    n = len(names)
    step = max(1, int(np.ceil(n / 40)))
    idx = list(range(0, n, step))
    fs = 6 if n <= 40 else 5
    if axis == "x":
        ax.set_xticks(idx, [names[i] for i in idx], rotation=90, fontsize=fs)
    else:
        ax.set_yticks(idx, [names[i] for i in idx], fontsize=fs)


def pvalue_heatmap(table: pd.DataFrame, systems, collection: str, measure: str, baseline: str | None = None):
    """All pairs: one panel per test, a systems × systems matrix (ranked by mean, best first) of the adjusted
    p-value of the first correction. With a baseline: one matrix of systems × tests."""
    plt = _plt()
    cmap, norm = _cmap()
    if table.empty:
        fig, ax = plt.subplots(figsize=(5, 2))
        ax.axis("off")
        ax.text(0.5, 0.5, f"{collection}: no {measure} scores to compare", ha="center", va="center")
        ax.set_title(f"{collection}, {measure}", fontsize=9)
        return fig
    systems = list(systems)
    pos = {s: i for i, s in enumerate(systems)}
    tests = list(dict.fromkeys(table["test"]))
    firsts = {t: table.loc[table["test"] == t, "correction"].iloc[0] for t in tests}
    if baseline is not None:
        others = [s for s in systems if s != baseline]
        M = np.full((len(others), len(tests)), np.nan)
        rows = {s: i for i, s in enumerate(others)}
        for j, t in enumerate(tests):
            g = table[(table["test"] == t) & (table["correction"] == firsts[t])]
            for s, p in zip(g["system_a"], g["p_adjusted"]):
                M[rows[s], j] = p
        fig, ax = plt.subplots(figsize=(1.2 + 0.9 * len(tests), 1.5 + 0.14 * len(others)))
        ax.imshow(M, cmap=cmap, norm=norm, aspect="auto", interpolation="nearest")
        ax.set_xticks(range(len(tests)), [f"{t}\n({firsts[t]})" for t in tests], fontsize=7)
        _ticks(ax, others, "y")
        ax.set_xlabel("test (correction)")
        ax.set_ylabel("system (ranked by mean, best first)")
        ax.set_title(f"{collection}, {measure}: each system against baseline {baseline}", fontsize=9)
        fig.tight_layout()
        _legend(fig, cmap)
        return fig
    n = len(tests)
    cols = min(3, max(n, 1))
    nrows = int(np.ceil(n / cols)) if n else 1
    size = min(5.0, 2.0 + 0.03 * len(systems))
    fig, axes = plt.subplots(nrows, cols, figsize=(size * cols, size * nrows + 0.6), squeeze=False)
    for k, ax in enumerate(axes.flat):
        if k >= n:
            ax.axis("off")
            continue
        t = tests[k]
        g = table[(table["test"] == t) & (table["correction"] == firsts[t])]
        M = np.full((len(systems), len(systems)), np.nan)
        i = g["system_a"].map(pos).to_numpy()
        j = g["system_b"].map(pos).to_numpy()
        M[i, j] = g["p_adjusted"].to_numpy()
        M[j, i] = g["p_adjusted"].to_numpy()
        ax.imshow(M, cmap=cmap, norm=norm, interpolation="nearest")
        if k >= n - cols:  # x tick labels on the bottom row only (rotated labels would run into the titles)
            _ticks(ax, systems, "x")
        else:
            ax.set_xticks([])
        if k % cols == 0:  # y tick labels on the first column only
            _ticks(ax, systems, "y")
        else:
            ax.set_yticks([])
        ax.set_title(f"{t} ({firsts[t]})", fontsize=8)
        if k >= n - cols:
            ax.set_xlabel("system (ranked by mean, best first)", fontsize=7)
        if k % cols == 0:
            ax.set_ylabel("system (ranked by mean, best first)", fontsize=7)
    fig.suptitle(f"{collection}, {measure}: adjusted p-values of all {len(g)} pairs of {len(systems)} systems",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    _legend(fig, cmap)
    return fig


def dstudy_figure(reliability: pd.DataFrame, curves: dict, collection: str, target: float):
    """E ρ² (solid) and Φ (dashed) against the number of topics, one colour per measure; the marker at the number
    of topics for ``target``, the cross at the collection's own number of topics."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, r in enumerate(reliability.itertuples(index=False)):
        if r.measure not in curves:  # no scores
            continue
        c = colours[k % len(colours)]
        d = curves[r.measure]
        ax.plot(d["n_topics"], d["e_rho2"], "-", color=c, lw=1.2,
                label=f"{r.measure}: Eρ² {r.e_rho2:.3f}, Φ {r.phi:.3f} at {r.n_topics} topics")
        ax.plot(d["n_topics"], d["phi"], "--", color=c, lw=1.0)
        ax.plot([r.n_topics, r.n_topics], [r.e_rho2, r.phi], "x", color=c, ms=5)
        for need, mk in ((r.topics_e_rho2, "o"), (r.topics_phi, "s")):
            if need is not None and not pd.isna(need) and need <= d["n_topics"].max():
                ax.plot(need, target, mk, color=c, ms=4, mfc="none")
    ax.axhline(target, color="0.5", lw=0.7, ls=":")
    ax.text(1, target, f" {target}", va="bottom", fontsize=7, color="0.4")
    ax.set_xlabel("number of topics n_t'")
    ax.set_ylabel("coefficient")
    ax.set_ylim(0, 1.01)
    ax.set_title(f"{collection}: D-study, Eρ² (solid) and Φ (dashed); o / □: topics for {target}, x: this collection",
                 fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig
