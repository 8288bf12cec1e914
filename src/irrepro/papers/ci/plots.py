"""Figures of P3 (Oosterhuis et al., KDD 2024): CI width and coverage against the number of human-labelled queries
(Fig. 2), width against adversarial bias β and oracle weight ζ (Fig. 3), per-query CRC intervals (Fig. 4).

Summary frames come from :func:`irrepro.papers.ci.summary.summarise` of runs with one row per (method, setting,
repetition), columns ``method, low, high, width, covered`` plus the setting column (``n``, ``beta`` or ``zeta``);
see :mod:`irrepro.papers.ci.intervals`.
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from irrepro.core.figures import save  # noqa: E402,F401  (scripts call plots.<paper>.save)

METHODS = ["bootstrap", "ppi", "crc"]
LABELS = {"bootstrap": "Bootstrap", "ppi": "PPI", "crc": "CRC"}
COLORS = {"bootstrap": "tab:blue", "ppi": "tab:orange", "crc": "tab:green"}


def _lines(ax, s: pd.DataFrame, by: str, col: str):
    for m in METHODS:
        d = s[s.method == m].sort_values(by)
        if d.empty:
            continue
        ax.plot(d[by], d[col], marker="o", ms=3, color=COLORS[m], label=LABELS[m])
        ax.fill_between(d[by], d[f"{col}_lo"], d[f"{col}_hi"], color=COLORS[m], alpha=0.15, lw=0)


def _legend(ax, band: str, extra=()):
    """The methods' lines, then what the shaded bands (and any reference line in ``extra``) are."""
    h, lab = ax.get_legend_handles_labels()
    h.append(Patch(facecolor="0.5", alpha=0.3, lw=0))
    lab.append(band)
    for handle, text in extra:
        h.append(handle)
        lab.append(text)
    ax.legend(h, lab, fontsize=6.5)


WIDTH_BAND = "band: 2.5–97.5 percentiles of the width\nover the repetitions"


def fig2(summary: pd.DataFrame, title: str, alpha: float = 0.05):
    """Fig. 2: width (top) and coverage (bottom) against the number of human-labelled queries n; each point is the
    mean over the repetitions (:func:`irrepro.papers.ci.summary.summarise`)."""
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(4.4, 6.0), sharex=True)
    _lines(a1, summary, "n", "width")
    _lines(a2, summary, "n", "coverage")
    nominal = a2.axhline(1 - alpha, color="black", ls="--", lw=0.8)
    a1.set_ylabel("mean CI width (DCG@10)")
    a2.set_ylabel("coverage (share of repetitions\nwhose CI holds the true value)")
    a2.set_xlabel("number of human-labelled queries n")
    a2.set_ylim(max(0.0, min(0.7, float(np.nanmin(summary.coverage_lo)) - 0.02)), 1.01)
    fig.suptitle(title, fontsize=9)
    _legend(a1, WIDTH_BAND)
    _legend(a2, "band: 95% Wilson interval of the coverage",
            [(nominal, f"dashed: nominal coverage 1 − α = {1 - alpha:g}")])
    fig.tight_layout()
    return fig


def fig3(beta_summary: pd.DataFrame, zeta_summary: pd.DataFrame, title: str):
    """Fig. 3: width against adversarial bias β (left) and oracle weight ζ (right)."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(7.6, 3.4), sharey=False)
    _lines(a1, beta_summary, "beta", "width")
    _lines(a2, zeta_summary, "zeta", "width")
    a1.set_xlabel("adversarial bias β")
    a2.set_xlabel("oracle weight ζ")
    a1.set_ylabel("mean CI width (DCG@10)")
    a2.set_ylabel("mean CI width (DCG@10)")
    _legend(a1, WIDTH_BAND)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


def fig4(per_query: pd.DataFrame, title: str):
    """Fig. 4: per-query CRC intervals on the test queries, sorted by true DCG (descending), one panel per ζ.
    Green dots: true value covered; red: not covered; blue: the LLM-predicted value (all in the legend)."""
    zetas = sorted(per_query.zeta.unique())
    fig, axes = plt.subplots(1, len(zetas), figsize=(3.4 * len(zetas), 3.2), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, z in zip(axes, zetas):
        d = per_query[per_query.zeta == z].sort_values(["true", "query_id"], ascending=[False, True])
        x = np.arange(len(d))
        ok = d.low.notna().to_numpy()
        ax.vlines(x[ok], d.low[ok], d.high[ok], color="grey", lw=1.5, alpha=0.6, label="CRC interval")
        cov = d.covered.fillna(False).astype(bool).to_numpy()
        ax.scatter(x[cov], d.true[cov], s=8, color="tab:green", zorder=3, label="true value, covered")
        ax.scatter(x[~cov], d.true[~cov], s=8, color="tab:red", zorder=3, label="true value, not covered")
        ax.scatter(x, d.predicted, s=5, color="tab:blue", zorder=2, label="LLM-predicted value")
        ax.set_title(f"ζ = {z:g} (coverage {cov.mean():.2f})", fontsize=8)
        ax.set_xlabel("test queries (by true DCG@10)")
        ax.set_xticks([])
    axes[0].set_ylabel("DCG@10")
    axes[0].legend(fontsize=6.5, loc="upper right")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


SYSTEM_METHODS = ["bootstrap", "ppi", "ppi++", "crc"]
SYSTEM_COLORS = {"bootstrap": "tab:blue", "ppi": "tab:orange", "ppi++": "tab:red", "crc": "tab:green"}


def systems_figure(table: pd.DataFrame, title: str):
    """Per measure (a panel), each system's interval by each method (a bar with the estimate as a dot) and, in the
    validation mode, its value by all human labels (a black diamond)."""
    measures = list(dict.fromkeys(table.measure))
    systems = list(dict.fromkeys(table.system))
    fig, axes = plt.subplots(1, len(measures), figsize=(3.6 * len(measures), 0.9 + 0.75 * len(systems)),
                             squeeze=False)
    for ax, m in zip(axes[0], measures):
        t = table[table.measure == m]
        for i, s in enumerate(systems):
            for j, meth in enumerate(SYSTEM_METHODS):
                r = t[(t.system == s) & (t.method == meth)]
                if r.empty:
                    continue
                y = i + (j - 1.5) * 0.17
                ax.plot([r.low.iloc[0], r.high.iloc[0]], [y, y], color=SYSTEM_COLORS[meth], lw=3,
                        label=meth if i == 0 else None)
                ax.plot(r.estimate.iloc[0], y, "o", color=SYSTEM_COLORS[meth], ms=3)
            truth = t[t.system == s].truth.iloc[0]
            if np.isfinite(truth):  # none in the own-queries mode
                ax.plot(truth, i, "D", color="black", ms=5, label="all human labels" if i == 0 else None)
        ax.set_yticks(range(len(systems)))
        ax.set_yticklabels(systems, fontsize=7)
        ax.set_ylabel("system")
        ax.invert_yaxis()
        ax.set_xlabel(m)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=7, loc="lower center", ncol=len(labels), frameon=False)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def systems_plan_figure(curves: pd.DataFrame, title: str):
    """Predicted interval width against the number of human-labelled queries m: a panel per system (columns) and
    measure (rows), a line per method; the dotted line marks the n labelled now."""
    systems = list(dict.fromkeys(curves.system))
    measures = list(dict.fromkeys(curves.measure))
    fig, axes = plt.subplots(len(measures), len(systems), figsize=(3.6 * len(systems), 2.9 * len(measures) + 0.4),
                             squeeze=False, sharey="row")
    for row, meas in zip(axes, measures):
        for ax, s in zip(row, systems):
            c = curves[(curves.system == s) & (curves.measure == meas)]
            for meth in SYSTEM_METHODS:
                d = c[c.method == meth].sort_values("m")
                if not d.empty:
                    ax.plot(d.m, d.width, color=SYSTEM_COLORS[meth], label=meth, lw=1.2)
            if not c.empty:
                ax.axvline(int(c.n.iloc[0]), color="grey", ls=":", lw=0.8, label="n labelled now")
            ax.set_xscale("log")
            ax.set_title(f"{s}: {meas}", fontsize=8)
            ax.set_xlabel("human-labelled queries m")
        row[0].set_ylabel(f"interval width ({meas})")
    axes[0][0].legend(fontsize=6)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig
