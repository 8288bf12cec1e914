"""The self-preference stage's analysis of one (collection, labeler) pool, its Markdown summary and figure (frames in,
frames, text or a matplotlib Figure out)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from irrepro.core.verify import to_markdown
from irrepro.selfpref.bias import GAP_COLUMNS, self_preference_gap, self_preference_table
from irrepro.selfpref.coverage import COVERAGE_COLUMNS, coverage_draws
from irrepro.selfpref.ranking import ranking_agreement
from irrepro.selfpref.scores import label_score_tables

#: the per-system columns the Markdown summary shows
SHOWN = ["collection", "labeler", "system", "same_model", "measure", "by_labels", "by_humans", "bias", "bias_low",
         "bias_high", "rank_by_humans", "rank_by_labels"]


@dataclass
class Analysis:
    """The stage's four tables as lists of per-(collection, labeler) frames, and notes on what was not computed."""
    tables: list = field(default_factory=list)
    gaps: list = field(default_factory=list)
    ranks: list = field(default_factory=list)
    covs: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def add(self, collection: str, labeler: str, runs: dict, qrels: pd.DataFrame, queries, labels: pd.DataFrame,
            flags: dict, labels_of, *, measures, n_boot: int, seed: int, label_gain, coverage_n, draws,
            alpha: float, ci_n_boot: int, batches: int) -> None:
        """One labeler's pool on one collection: ``qrels`` cut to the labeler's ``queries`` (its sample, if any),
        the two score tables (:func:`~irrepro.selfpref.scores.label_score_tables`), each system's bias, the
        same-model gap (when both groups have systems), the ranking agreement, and the coverage of the CI paper's
        intervals over ``draws`` draws of ``coverage_n`` queries (when the labeler labelled at least
        ``coverage_n + 2``), the labels of a draw from ``labels_of(drawn queries)``."""
        c, lab = collection, labeler
        qrels = qrels[qrels.query_id.astype(str).isin(set(queries))]
        by_h, by_l = label_score_tables(runs, qrels, labels, measures, collection=c, label_gain=label_gain)
        kw = dict(labeler=lab, n_boot=n_boot, seed=seed)
        self.tables.append(self_preference_table(by_h, by_l, flags, **kw).assign(collection=c))
        if any(flags.values()) and not all(flags.values()):
            self.gaps.append(self_preference_gap(by_h, by_l, flags, **kw).assign(collection=c))
        else:
            self.notes.append(f"{c}, {lab}: no gap (no compared system shares the labeler's model)")
        self.ranks.append(ranking_agreement(by_h, by_l, flags, labeler=lab).assign(collection=c))
        N = len(set(queries))
        if draws and coverage_n <= N - 2:
            _, table = coverage_draws(runs, qrels, labels_of, flags, measures, n=coverage_n, draws=draws,
                                      seed=seed, labeler=lab, alpha=alpha, n_boot=ci_n_boot, n_batches=batches,
                                      label_gain=label_gain)
            self.covs.append(table.assign(collection=c, n=coverage_n, N=N, draws=draws))
        elif draws:
            self.notes.append(f"{c}, {lab}: no coverage ({N} queries labelled; n = {coverage_n} needs at least "
                              f"{coverage_n + 2})")

    def frames(self) -> dict:
        """``{"table", "gap", "ranking", "coverage"}``: each analysis in one frame, ``collection`` first (an empty
        frame with the columns where nothing was computed)."""
        return {"table": _collection_first(self.tables), "gap": _collection_first(self.gaps, GAP_COLUMNS),
                "ranking": _collection_first(self.ranks), "coverage": _collection_first(self.covs, COVERAGE_COLUMNS)}


def refit_labels(raw: pd.DataFrame, pairs: pd.DataFrame, spec_json: str, prompt_name: str):
    """``labels_of(drawn queries)`` for the coverage draws: the labels of a draw, a calibrated labeler's
    score-to-grade mapping refitted on the drawn queries' human grades only
    (:func:`irrepro.labels.stage.finish_labels`); any other labeler's ``raw`` labels as they are."""
    from irrepro.labels.prompts import get_prompt
    from irrepro.labels.stage import finish_labels, labeler_spec

    def labels_of(drawn):
        return finish_labels(raw, pairs, labeler_spec(spec_json), get_prompt(prompt_name), fit_queries=drawn)

    return labels_of


def _collection_first(frames: list, columns=()) -> pd.DataFrame:
    first = ["collection"]
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=first + list(columns))
    return out[first + [x for x in out.columns if x not in first]]


def summary_markdown(frames: dict, notes: list, *, n_boot: int, seed: int) -> str:
    """The stage's Markdown summary: the same-model gaps, the ranking agreement, the coverage per group, the notes
    and every system's bias (:data:`SHOWN`)."""
    gap, rank, cover, table = frames["gap"], frames["ranking"], frames["coverage"], frames["table"]
    out = ("# Self-preference of the labelers\n\nBias = a system's mean score by the labels − by the human "
           "qrels on the same topics, with its paired bootstrap-t interval over topics "
           f"({n_boot} resamples, seed {seed}). Same-model systems use the labeler's own model.\n\n")
    out += "## Same-model gap (mean bias of same-model systems − mean bias of the others)\n\n"
    out += to_markdown(gap) if len(gap) else "none: no labeler shares its model with a compared system\n"
    out += "\n\n## System ranking by labels vs by humans\n\n" + to_markdown(rank)
    out += "\n\n## Coverage of the CI paper's intervals per group\n\n"
    out += to_markdown(cover) if len(cover) else "not computed (labels.self_preference.coverage.draws)\n"
    for line in notes:
        out += f"\n- {line}"
    return out + "\n\n## Per system\n\n" + to_markdown(table[SHOWN]) + "\n"


def self_preference_figure(table: pd.DataFrame, measure: str, title: str = ""):
    """One panel per (collection, labeler) of :func:`~irrepro.selfpref.bias.self_preference_table` rows of
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
