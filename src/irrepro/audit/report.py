"""The judge audit's Markdown summary and figure (frames in, text or a matplotlib Figure out)."""
from __future__ import annotations

import numpy as np
import pandas as pd


def _ci(v, lo, hi) -> str:
    return "–" if not np.isfinite(v) else f"{v:.3f} [{lo:.2f}, {hi:.2f}]"


def same_model_ranks(means: pd.DataFrame, same_model: dict) -> pd.DataFrame:
    """``collection, labeler, measure, population, system, rank_humans, rank_labels``: the rank (1 = best) of each
    system that shares the labeler's model, by human means and by label means, in its population."""
    rows = []
    for (c, lab, m, pop), g in means.groupby(["collection", "labeler", "measure", "population"], sort=False):
        flags = (same_model.get(c) or {}).get(lab) or {}
        rh = g.humans.rank(ascending=False, method="min").astype(int)
        rl = g.labels.rank(ascending=False, method="min").astype(int)
        for s, a, b in zip(g.system, rh, rl):
            if flags.get(s):
                rows.append({"collection": c, "labeler": lab, "measure": m, "population": pop, "system": s,
                             "rank_humans": int(a), "rank_labels": int(b), "systems": len(g)})
    return pd.DataFrame(rows, columns=["collection", "labeler", "measure", "population", "system", "rank_humans",
                                       "rank_labels", "systems"])


def summary_markdown(rankings: pd.DataFrame, decisions: pd.DataFrame, same: pd.DataFrame, *, alpha: float,
                     n_boot: int) -> str:
    """Per collection and labeler: the rank correlations (all systems and the top k by humans, both populations)
    and the decision counts, then the ranks of the systems that share the labeler's model."""
    out = ["# Judge audit: would the labels change the conclusions?", "",
           "τ_b and τ_AP between the systems ordered by label-based and by human-based means over these topics "
           "(τ_AP: the human ranking is the truth; a swap near the top costs more). τ_b's interval "
           f"({1 - alpha:.0%}) is for the τ_b of the systems' means over topics like these: the range the pair "
           f"orders known at that level allow (simultaneous bootstrap intervals, {n_boot} resamples; 'pairs "
           "known': the pairs both score tables order). Top k: the k best systems by humans. `judge-reranked`: every system's top k re-ranked by the labeler's "
           "expected grade (the judge used as a ranker). Decisions: every pair of systems under the stats stage's "
           "tests and corrections, on human scores and on label scores.", ""]
    for (c, lab), g in rankings.groupby(["collection", "labeler"], sort=False):
        out += [f"## {c}, {lab}", "", "| measure | population | top | systems | τ_b [interval] | τ_AP | pairs known |",
                "| --- | --- | --- | ---: | --- | ---: | ---: |"]
        for r in g.itertuples():
            out.append(f"| {r.measure} | {r.population} | {r.top} | {r.systems} | {_ci(r.tau_b, r.low, r.high)} | "
                       f"{r.tau_ap:.3f} | {r.pairs_known} of {r.pairs} |")
        d = decisions[(decisions.collection == c) & (decisions.labeler == lab)]
        out += ["", "| measure | population | test | correction | pairs | both significant, same | neither | "
                "humans only (missed) | labels only (false discovery) | opposite |",
                "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in d.itertuples():
            miss = "" if not np.isfinite(r.missed) else f" ({r.missed:.0%})"
            fd = "" if not np.isfinite(r.false_discoveries) else f" ({r.false_discoveries:.0%})"
            out.append(f"| {r.measure} | {r.population} | {r.test} | {r.correction} | {r.pairs} | {r.both_same} | "
                       f"{r.both_none} | {r.humans_only}{miss} | {r.labels_only}{fd} | {r.opposite} |")
        notes = sorted({f"{r.test} with {r.correction}: {r.note}" for r in d.itertuples()
                        if isinstance(r.note, str) and r.note})
        out += [""] + [f"- {n}" for n in notes] if notes else []
        s = same[(same.collection == c) & (same.labeler == lab)]
        if len(s):
            out += ["", "Systems that share the labeler's model (rank by humans → rank by labels, of all systems):", ""]
            for r in s.itertuples():
                out.append(f"- {r.system} ({r.measure}, {r.population}): {r.rank_humans} → {r.rank_labels} of "
                           f"{r.systems}")
        out.append("")
    return "\n".join(out)


def audit_figure(means: pd.DataFrame, rankings: pd.DataFrame, measure: str):
    """One panel per collection and labeler: each system's mean ``measure`` by humans (x) and by labels (y), the
    systems as they are (circles) and re-ranked by the judge (triangles), with each population's τ_b in the
    legend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = means[means.measure == measure]
    units = list(dict.fromkeys(zip(m.collection, m.labeler)))
    fig, axes = plt.subplots(1, len(units), figsize=(3.8 * len(units), 3.8), squeeze=False)
    for ax, (c, lab) in zip(axes[0], units):
        for pop, marker, color in (("as-is", "o", "tab:blue"), ("judge-reranked", "^", "tab:red")):
            g = m[(m.collection == c) & (m.labeler == lab) & (m.population == pop)]
            r = rankings[(rankings.collection == c) & (rankings.labeler == lab) & (rankings.measure == measure)
                         & (rankings.population == pop) & (rankings.top == "all")]
            tau = float(r.tau_b.iloc[0]) if len(r) else np.nan
            ax.scatter(g.humans, g.labels, marker=marker, s=18, color=color, alpha=0.8, label=f"{pop}: τ_b {tau:.2f}")
        ax.set_title(f"{c}, {lab}", fontsize=10)
        ax.set_xlabel(f"{measure} by humans")
        ax.set_ylabel(f"{measure} by labels")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    fig.suptitle(f"Systems' mean {measure} by human qrels and by LLM labels", fontsize=11)
    fig.tight_layout()
    return fig
