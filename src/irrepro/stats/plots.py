"""Figures of the stats stage: heat maps of the signed differences between the systems of one collection × measure
with their significance, the D-study of one collection."""
from __future__ import annotations

import numpy as np
import pandas as pd

#: the mark of a significant comparison
MARK = "*"
#: the height of a system's row in the heat map of the baselines (inches)
ROW_IN = 0.14


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _cmap():
    import matplotlib

    return matplotlib.colormaps["RdBu"].with_extremes(bad="0.85")  # red: worse, blue: better


def _ticks(ax, names, axis):
    n = len(names)
    step = max(1, int(np.ceil(n / 40)))
    idx = list(range(0, n, step))
    fs = 6 if n <= 40 else 5
    if axis == "x":
        ax.set_xticks(idx, [names[i] for i in idx], rotation=90, fontsize=fs)
    else:
        ax.set_yticks(idx, [names[i] for i in idx], fontsize=fs)


def _marks(ax, sig: np.ndarray, cell_in: float):
    """A star on every significant cell (rows i, columns j of ``sig``), sized to the cells (``cell_in``: the
    smaller side of a cell, in inches)."""
    i, j = np.nonzero(sig)
    side = 0.6 * 72 * cell_in  # points
    ax.scatter(j, i, marker=MARK, s=float(np.clip(side ** 2, 2.0, 60.0)), c="black", edgecolors="white",
               linewidths=0.3)


def _colorbar(fig, im, axes, measure, what, alpha, first):
    cb = fig.colorbar(im, ax=axes, shrink=0.8, pad=0.02, fraction=0.04)
    cb.set_label(f"{measure} difference: {what}\n{MARK}: adjusted p < {alpha:g} ({first})", fontsize=8)
    cb.ax.set_xlabel(f"Δ {measure}", fontsize=7)
    cb.ax.tick_params(labelsize=7)
    return cb


def _title(ax, text: str, fontsize: float):
    """The axes title, at the top of the axes (y = 1, where matplotlib's automatic placement puts it when no tick
    labels are above the axes, as in every heat map here). Given explicitly, the placement is not recomputed at every
    draw and tight-bbox pass (which measures every tick label of the axes again each time)."""
    ax.set_title(text, fontsize=fontsize, y=1.0)


def _limit(values) -> float:
    v = np.abs(np.asarray(values, dtype=float))
    v = v[np.isfinite(v)]
    m = float(v.max()) if v.size else 0.0
    return m if m > 0 else 1.0


def effect_heatmap(table: pd.DataFrame, systems, collection: str, measure: str, *, alpha: float):
    """The signed mean differences of the per-pair table (:func:`irrepro.stats.compare.compare`) on a diverging
    colour map centred at 0 (blue: better, red: worse), a star where the adjusted p-value is below ``alpha``.

    All pairs (column ``baseline`` empty): one panel per test, a systems × systems matrix (ranked by mean, best
    first) of row − column, the stars of the test's first correction. With baselines: one panel per baseline, the
    other systems (rows, ranked) × every test and correction (columns) of system − baseline, a star for each
    correction."""
    plt = _plt()
    cmap = _cmap()
    if table.empty:
        fig, ax = plt.subplots(figsize=(5, 2))
        ax.axis("off")
        ax.text(0.5, 0.5, f"{collection}: no {measure} scores to compare", ha="center", va="center")
        _title(ax, f"{collection}, {measure}", 9)
        return fig
    systems = list(systems)
    pos = {s: i for i, s in enumerate(systems)}
    lim = _limit(table["delta"])
    bases = [b for b in dict.fromkeys(table["baseline"]) if isinstance(b, str) and b]
    tests = list(dict.fromkeys(table["test"]))
    firsts = {t: table.loc[table["test"] == t, "correction"].iloc[0] for t in tests}
    if bases:
        cols = list(dict.fromkeys(zip(table["test"], table["correction"])))
        others = [[s for s in systems if s != b] for b in bases]
        rows_max = max(len(o) for o in others)
        fig, axes = plt.subplots(1, len(bases), squeeze=False, layout="constrained",
                                 figsize=(1.6 + (0.4 * len(cols) + 1.6) * len(bases), 2.0 + ROW_IN * rows_max))
        for k, (b, ax) in enumerate(zip(bases, axes.flat)):
            g = table[table["baseline"] == b]
            rows = {s: i for i, s in enumerate(others[k])}
            M = np.full((len(others[k]), len(cols)), np.nan)
            S = np.zeros(M.shape, dtype=bool)
            for j, (t, corr) in enumerate(cols):
                h = g[(g["test"] == t) & (g["correction"] == corr)]
                r = h["system_a"].map(rows).to_numpy()
                M[r, j] = h["delta"].to_numpy()
                S[r, j] = h["significant"].to_numpy(dtype=bool)
            im = ax.imshow(M, cmap=cmap, vmin=-lim, vmax=lim, aspect="auto", interpolation="nearest")
            _marks(ax, S, 0.8 * ROW_IN)
            ax.set_xticks(range(len(cols)), [f"{t}\n{corr}" for t, corr in cols], fontsize=6, rotation=90)
            _ticks(ax, others[k], "y")
            ax.set_xlabel("test, correction", fontsize=7)
            ax.set_ylabel("system", fontsize=7)
            _title(ax, f"against {b}", 8)
        fig.suptitle(f"{collection}, {measure}: each system − baseline (systems ranked by mean, best first)",
                     fontsize=9)
        _colorbar(fig, im, axes.ravel().tolist(), measure, "system − baseline", alpha, "each correction")
        return fig
    n = len(tests)
    ncols = min(3, max(n, 1))
    nrows = int(np.ceil(n / ncols)) if n else 1
    size = min(6.0, 2.0 + 0.1 * len(systems))
    fig, axes = plt.subplots(nrows, ncols, figsize=(size * ncols + 1.2, size * nrows + 0.8), squeeze=False,
                             layout="constrained")
    for k, ax in enumerate(axes.flat):
        if k >= n:
            ax.axis("off")
            continue
        t = tests[k]
        g = table[(table["test"] == t) & (table["correction"] == firsts[t])]
        M = np.full((len(systems), len(systems)), np.nan)
        S = np.zeros(M.shape, dtype=bool)
        i = g["system_a"].map(pos).to_numpy()
        j = g["system_b"].map(pos).to_numpy()
        d = g["delta"].to_numpy(dtype=float)
        sig = g["significant"].to_numpy(dtype=bool)
        M[i, j], M[j, i] = d, -d
        S[i, j], S[j, i] = sig, sig
        im = ax.imshow(M, cmap=cmap, vmin=-lim, vmax=lim, interpolation="nearest")
        _marks(ax, S, 0.8 * size / len(systems))
        if k >= n - ncols:  # x tick labels on the bottom row only (rotated labels would run into the titles)
            _ticks(ax, systems, "x")
            ax.set_xlabel("column system", fontsize=7)
        else:
            ax.set_xticks([])
        if k % ncols == 0:  # y tick labels on the first column only
            _ticks(ax, systems, "y")
            ax.set_ylabel("row system", fontsize=7)
        else:
            ax.set_yticks([])
        _title(ax, f"{t} ({firsts[t]})", 8)
    fig.suptitle(f"{collection}, {measure}: mean difference row − column of all {len(g)} pairs of {len(systems)} "
                 f"systems (ranked by mean, best first)", fontsize=10)
    _colorbar(fig, im, axes.ravel().tolist(), measure, "row − column", alpha, "first correction")
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
