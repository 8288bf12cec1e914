"""From run files and qrels to the table a paper prints, in one call: systems as rows, each measure's mean, and
against a baseline the difference, the paired test's p-value, its corrected p-value with ▲ / ▼ and Cohen's d_z —
PyTerrier's ``pt.Experiment(..., baseline=0, correction="holm")`` layout — as a frame, CSV or a booktabs LaTeX table.

The numbers are the workflow's: per-topic scores by :func:`irrepro.core.evaluation.evaluate_runs` (ir_measures,
gdeval.pl for ERR@20, as the ``evaluate`` rule), kept to 6 decimals as its score tables keep them, and the
comparisons by :func:`irrepro.stats.stage.compare_measure` (the ``stats_compare`` job's call, its per-measure seeds
included), so a table from this call equals the stats stage's on the same runs and settings.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from irrepro.errors import InputError

MARKS = {1: "▲", -1: "▼", 0: ""}


def run_paths(runs) -> list[tuple[str, Path]]:
    """``(system, path)`` of ``runs``: a run file or a folder of run files (compressed or not), a list of them, or a
    ``{system: path}`` mapping; system names from the file names (:func:`irrepro.core.trec.run_name`)."""
    from irrepro.core.trec import run_files, run_systems

    if isinstance(runs, dict):
        return [(str(k), Path(v)) for k, v in runs.items()]
    paths = [runs] if isinstance(runs, (str, Path)) else list(runs)
    files = []
    for p in map(Path, paths):
        if p.is_dir():
            files += run_files(p)
        elif p.is_file():
            files.append(p)
        else:
            raise InputError(f"run file or folder {p} not found")
    if not files:
        raise InputError(f"no run files in {', '.join(map(str, paths))}")
    return run_systems(files)


def experiment(runs, qrels, *, baseline: str | None = None, measures=None, test: str = "t",
               correction: str = "holm", alpha: float = 0.05, n_permutations: int = 1000, n_bootstrap: int = 1000,
               seed: int = 0, collection: str = "runs") -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``(table, pairs, scores)`` of ``runs`` (see :func:`run_paths`) on ``qrels`` (a qrels file):

    * ``table``: one row per system (in the order given; the baseline first), per measure its mean, and with a
      baseline ``<m> Δ`` (system − baseline), ``<m> p`` (the paired ``test``), ``<m> p <correction>`` (corrected
      over the systems compared with the baseline: one family per measure) and ``<m> d_z``, and ``<m> sig``
      (▲ significantly better than the baseline, ▼ worse, at ``alpha`` after the correction);
    * ``pairs``: the stats stage's per-pair rows (:data:`irrepro.stats.compare.COLUMNS`) with a ``measure`` column;
    * ``scores``: the per-topic score table (``collection, system, topic, measure, value``), its values to 6
      decimals as the workflow's ``scores/<collection>.tsv`` holds them.
    """
    from irrepro.core.evaluation import DEFAULT_MEASURES, evaluate_runs
    from irrepro.core.trec import read_qrels
    from irrepro.stats.stage import compare_measure

    systems = run_paths(runs)
    names = [s for s, _ in systems]
    if baseline is not None and baseline not in names:
        raise InputError(f"baseline {baseline!r} is not among the runs' systems ({', '.join(names)})")
    measures = list(measures or DEFAULT_MEASURES)
    scores = evaluate_runs(systems, read_qrels(qrels), measures, collection, qrels_path=qrels)
    # the per-topic values as the workflow's score tables hold them (write_scores: 6 decimals), which the stats
    # stage reads: the same digits give the same p-values
    scores["value"] = pd.to_numeric(scores["value"].map("{:.6f}".format))
    settings = {"tests": [test], "corrections": [correction], "alpha": alpha, "n_permutations": n_permutations,
                "n_bootstrap": n_bootstrap, "seed": seed, "baseline": baseline}
    order = ([baseline] if baseline else []) + [s for s in names if s != baseline]
    comparisons = {}
    for m in measures:
        r = compare_measure(scores, collection, m, settings)  # the stats_compare job's own call (its seeds)
        if r.summary is None:
            raise InputError(f"{collection}, {m}: {r.notes[0]}")
        comparisons[m] = r
    table = experiment_table(comparisons, order, baseline=baseline, test=test, correction=correction)
    pairs = (pd.concat([r.table.assign(measure=m) for m, r in comparisons.items()], ignore_index=True)
             if baseline is not None else pd.DataFrame())
    return table, pairs, scores


def experiment_table(comparisons: dict, order, *, baseline: str | None = None, test: str = "t",
                     correction: str = "holm") -> pd.DataFrame:
    """The table of :func:`experiment` from comparisons already made (``{measure: Comparison}`` of
    :func:`irrepro.stats.stage.compare_measure`, as the stats stage makes them): one row per system of ``order``,
    per measure its mean and, against ``baseline``, the rows of ``test`` under ``correction`` (a comparison made
    with several tests, corrections or baselines keeps those)."""
    table = pd.DataFrame({"system": list(order)})
    for m, r in comparisons.items():
        t = r.table
        means = pd.concat([t.set_index("system_a").mean_a, t.set_index("system_b").mean_b])
        table[m] = means.groupby(level=0).first().reindex(order).to_numpy()
        if baseline is None:
            continue
        p = t[(t.system_b == baseline) & (t.test == test) & (t.correction == correction)]
        if p.empty:
            raise InputError(f"{m}: no comparison with baseline {baseline!r} under the {test} test and {correction} "
                             f"(tests {sorted(set(t.test))}, corrections {sorted(set(t.correction.dropna()))})")
        by = p.set_index("system_a").reindex(order)
        table[f"{m} Δ"] = by.delta.to_numpy()
        table[f"{m} p"] = by.p_value.to_numpy()
        table[f"{m} p {correction}"] = by.p_adjusted.to_numpy()
        table[f"{m} d_z"] = by.effect_size.to_numpy()
        sig = by.significant.fillna(False).astype(bool).to_numpy()
        table[f"{m} sig"] = [MARKS[(d > 0) - (d < 0)] if s else "" for d, s in zip(by.delta.fillna(0), sig)]
    return table


#: LaTeX's special characters in text and what stands for each
_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
        "~": r"\textasciitilde{}", "^": r"\^{}"}


def _tex(s) -> str:
    return "".join(_TEX.get(c, c) for c in str(s))


def to_latex(table: pd.DataFrame, measures, *, baseline: str | None, test: str, correction: str, alpha: float,
             digits: int = 4) -> str:
    """A booktabs LaTeX table of :func:`experiment`'s ``table``: one row per system, one column per measure (its
    mean), the best mean of each column in bold, ``$^{\\uparrow}$`` / ``$^{\\downarrow}$`` marking a system
    significantly better / worse than the baseline, and a caption that says what the marks mean. Needs the
    ``booktabs`` package only."""
    measures = list(measures)
    lines = [r"\begin{table}", r"\centering", r"\begin{tabular}{l" + "r" * len(measures) + "}", r"\toprule",
             "System & " + " & ".join(_tex(m) for m in measures) + r" \\", r"\midrule"]
    best = {m: table[m].max() for m in measures}
    for _, r in table.iterrows():
        cells = []
        for m in measures:
            v = f"{r[m]:.{digits}f}"
            if r[m] == best[m]:
                v = rf"\textbf{{{v}}}"
            mark = r.get(f"{m} sig", "")
            v += {"▲": r"$^{\uparrow}$", "▼": r"$^{\downarrow}$"}.get(mark, "")
            cells.append(v)
        name = _tex(str(r["system"])) + (" (baseline)" if r["system"] == baseline else "")
        lines.append(name + " & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    caption = "Mean over topics; best per column in bold."
    if baseline is not None:
        caption += (rf" $\uparrow$ / $\downarrow$: significantly better / worse than {_tex(baseline)} (paired "
                    f"{_tex(test)} test, {_tex(correction)}-corrected over the {len(table) - 1} systems compared "
                    f"with it, $\\alpha = {alpha:g}$).")
    lines += [rf"\caption{{{caption}}}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def stage_summary(comparisons: dict, settings: dict, collection: str) -> tuple[pd.DataFrame, str, str]:
    """The stats stage's combined table of one collection (every measure in one table, pt.Experiment's layout):
    ``(csv frame, Markdown, LaTeX)``. Without baselines the means of every system; with baselines (``stats.baseline``)
    one table per baseline (the frame's ``baseline`` column) under the first of ``stats.tests`` other than the
    Tukey HSD and the first of ``stats.corrections``. ``comparisons``: ``{measure: Comparison}`` with a summary
    (none: a table of no rows that says so)."""
    from irrepro.core.io import to_markdown
    from irrepro.stats.compare import baselines

    if not comparisons:
        return pd.DataFrame({"system": []}), f"No comparison of {collection}: no measure compares two systems.\n", ""
    systems = next(iter(comparisons.values())).systems
    bases = baselines(settings.get("baseline")) or [None]
    test = next((t for t in settings["tests"] if t != "tukey"), "t")
    correction = settings["corrections"][0]
    frames, md, tex = [], [], []
    measures = list(comparisons)
    for b in bases:
        order = ([b] if b else []) + [s for s in systems if s != b]
        t = experiment_table(comparisons, order, baseline=b, test=test, correction=correction)
        frames.append(t.assign(baseline=b or "") if b else t)
        head = (f"All measures of {collection}: mean over topics" + (
            f"; against baseline {b}: Δ = system − baseline, p of the paired {test} test, p {correction}-corrected "
            f"over the {len(order) - 1} systems compared with it, Cohen's d_z; ▲ / ▼ significantly better / worse "
            f"at α = {settings['alpha']:g}" if b else "") + ".")
        md.append(f"{head}\n\n{to_markdown(t, '{:.4g}')}")
        tex.append(to_latex(t, measures, baseline=b, test=test, correction=correction, alpha=settings["alpha"]))
    return pd.concat(frames, ignore_index=True), "\n\n".join(md) + "\n", "\n".join(tex)
