"""The stats stage of one collection: each measure's per-pair table (:func:`compare_measure`, rule
``stats_compare``), then the collection's G-study, discriminative power and swap rates over its measures
(:func:`reliability`, rule ``stats_reliability``). A baseline from another collection or import joins the compared
systems first (:func:`join_baselines`)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from irrepro.core.io import to_markdown
from irrepro.core.scores import to_matrix
from irrepro.stats import gstudy as gs
from irrepro.errors import InputError
from irrepro.stats.paired import RESAMPLED, unattainable
from irrepro.stats.compare import (COLUMNS, baselines, compare, compared_pairs, complete_matrix,
                                     degenerate_notes, ranked, summary)
from irrepro.stats.plan import MEASURE_PATTERN, split_baseline  # noqa: F401  (re-exported)
from irrepro.stats.power import discriminative_power, swap_rates

def measure_seed(seed: int, measure: str, stream: int = 0) -> int:
    """The seed of one measure's resamples: from the configured seed and the measure's name (not its position, so
    that adding a measure changes no other measure's results)."""
    return int(np.random.SeedSequence([seed, stream, *measure.encode()]).generate_state(1)[0])


def join_baselines(scores: pd.DataFrame, collection: str, baseline, others: dict) -> pd.DataFrame:
    """``scores`` with every baseline from another scored id appended, its rows taken from ``others`` ({id: score
    table}) on the topics ``scores`` has, as system ``<id>/<system>`` of ``collection``. A baseline of
    ``collection`` itself, or none, leaves ``scores`` as it is."""
    add = []
    key = f"config key stats.baseline.{collection}"
    for b in baselines(baseline) or []:
        src, system = split_baseline(b, collection, others)
        if src == collection:
            continue
        o = others[src]
        rows = o[(o["system"] == system) & o["topic"].isin(set(scores["topic"]))]
        if not (o["system"] == system).any():
            raise InputError(f"{key}: {b!r}: {src} has no system {system!r} "
                             f"({sorted(set(o['system']))[:10]} ...)")
        if rows.empty:
            raise InputError(f"{key}: {b!r} scored none of {collection}'s topics (e.g. "
                             f"{sorted(set(scores['topic']))[:5]}; it has {sorted(set(o['topic']))[:5]} ...)")
        if b in set(scores["system"]):
            raise InputError(f"{key}: {b!r} is also the name of a system of {collection}")
        add.append(rows.assign(collection=collection, system=b))
    return pd.concat([scores, *add], ignore_index=True) if add else scores


@dataclass
class Comparison:
    table: pd.DataFrame  # per-pair table (COLUMNS, and ``note`` when a pair is degenerate)
    summary: pd.DataFrame | None  # per-system summary (with a ``baseline`` column when baselines are set)
    systems: list  # ranked by mean
    notes: list = field(default_factory=list)  # for the log
    degenerate: list = field(default_factory=list)  # for the log and the summary: pairs without spread
    alpha: float = 0.05  # the significance level of the table
    unattainable: list = field(default_factory=list)  # for the log and the summary: tests that can reject nothing


def summary_markdown(c: Comparison) -> str:
    """The per-system summary as Markdown (with baselines: a section per baseline), then a line per test and
    correction that can reject no pair (``Comparison.unattainable``) and per kind of degenerate pair
    (``Comparison.degenerate``)."""
    if "baseline" not in c.summary:
        text = to_markdown(c.summary)
    else:
        parts = []
        level = f"{100 * (1 - c.alpha):.6g}%"
        for b, g in c.summary.groupby("baseline", sort=False):
            parts.append(f"### Against baseline {b}\n\n{len(g) - 1} systems against {b}: delta = system − "
                         f"baseline (positive: better), [ci_low, ci_high] its {level} paired t-interval, "
                         f"effect_size Cohen's d_z; per test the unadjusted p-value (p) and the p-value adjusted "
                         f"by each correction over this baseline's family (its {len(g) - 1} comparisons under one "
                         f"test); ▲ / ▼: significantly better / worse than the baseline at α = {c.alpha:g}.\n\n"
                         + to_markdown(g.drop(columns="baseline")))
        text = "\n".join(parts)
    if c.unattainable or c.degenerate:
        text += "\n" + "\n".join(f"Note: {n}." for n in c.unattainable + c.degenerate) + "\n"
    return text


def compare_measure(scores: pd.DataFrame, collection: str, measure: str, s: dict) -> Comparison:
    """``s``: tests, corrections, alpha, n_permutations, n_bootstrap, seed, baseline (None, a system or a list;
    a baseline from another collection already joined by :func:`join_baselines`). A measure the score table does
    not hold (an import's filter naming a measure its file lacks) gives an empty table and a note."""
    if measure not in set(scores["measure"]):
        return Comparison(pd.DataFrame(columns=COLUMNS), None, [],
                          [f"no {measure} scores in {collection} (it has {sorted(set(scores['measure']))})"])
    notes = []
    mat, dropped = complete_matrix(to_matrix(scores, measure), f"{collection} {measure}")
    if dropped:
        notes.append(f"{len(dropped)} topics not scored by every system left out "
                     f"({dropped[:5]}{' ...' if len(dropped) > 5 else ''})")
    mat = ranked(mat)
    bases = baselines(s.get("baseline"))
    for b in bases or []:
        if b not in mat.columns:
            raise InputError(f"config key stats.baseline.{collection}: {b!r} has no {measure} scores on the "
                             f"topics every system of {collection} has, or is not a system of {collection} "
                             f"({mat.shape[1]} systems: {list(mat.columns)[:8]} ...)")
    n_pairs = len(mat.columns) * (len(mat.columns) - 1) // 2 if bases is None else len(mat.columns) - 1
    impossible = [why for test in s["tests"] if test in RESAMPLED for corr in s["corrections"]
                  if (why := unattainable(test, corr, n_pairs, len(mat), s[RESAMPLED[test]], s["alpha"]))]
    t = compare(mat, tests=s["tests"], corrections=s["corrections"], alpha=s["alpha"],
                n_permutations=s["n_permutations"], n_bootstrap=s["n_bootstrap"],
                seed=measure_seed(s["seed"], measure), baseline=bases)
    degenerate = degenerate_notes(t)
    return Comparison(t, summary(t, mat, bases, alpha=s["alpha"]), list(mat.columns),
                      notes + impossible + degenerate, degenerate, s["alpha"], impossible)


@dataclass
class Reliability:
    reliability: pd.DataFrame
    curves: dict  # measure -> D-study frame
    power: pd.DataFrame
    swaps: pd.DataFrame


def reliability(scores: pd.DataFrame, tables: dict, s: dict) -> Reliability:
    """G-study, D-study curves, swap rates of every measure in ``tables`` ({measure: per-pair table}) and their
    discriminative power. ``s``: alpha, seed, baseline, d_study_max_topics, reliability_target, swap_sizes,
    swap_repetitions. ``scores`` holds the systems compared (a baseline from another collection joined by
    :func:`join_baselines`); the swap rates are those of the pairs the tables compare (every baseline's, each pair
    once). A measure without scores gets a row of NaN. A ``note`` column follows when a measure's G-study
    is degenerate (a component within rounding of 0, a coefficient undefined: :func:`irrepro.stats.gstudy.notes`)."""
    rel, pw, sw, curves = [], [], [], {}
    have = set(scores["measure"])
    for m, table in tables.items():
        if m not in have:
            rel.append({"measure": m, "n_topics": 0, "n_systems": 0, "clipped": "no scores"})
            continue
        mat = ranked(complete_matrix(to_matrix(scores, m), m)[0])
        X = mat.to_numpy(dtype=float)
        g = gs.gstudy(X)
        comp = {c: g[c] for c in ("var_system", "var_topic", "var_residual")}
        rel.append({"measure": m, **{c: g[c] for c in ("n_topics", "n_systems", "var_system", "var_topic",
                                                       "var_residual", "e_rho2", "phi")},
                    **gs.topics_needed(comp, s["reliability_target"]), "clipped": g["clipped"], "note": g["note"]})
        curves[m] = gs.dstudy(comp, max(s["d_study_max_topics"], X.shape[0]))
        pw.append(discriminative_power(table, s["alpha"]).assign(measure=m))
        a, b = compared_pairs(mat.columns, s.get("baseline"))
        rng = np.random.default_rng(measure_seed(s["seed"], m, stream=1))
        sw.append(swap_rates(X, a, b, s["swap_sizes"], s["swap_repetitions"], rng, s["alpha"]).assign(measure=m))
    cols = ["measure", "n_topics", "n_systems", "var_system", "var_topic", "var_residual", "e_rho2", "phi",
            "topics_e_rho2", "topics_phi", "clipped"]
    power = pd.concat(pw, ignore_index=True) if pw else pd.DataFrame(columns=["measure"])
    power = power.reindex(columns=["measure", "test", "correction", "pairs", "significant", "share"])
    swaps = pd.concat(sw, ignore_index=True) if sw else pd.DataFrame(columns=["measure"])
    swaps = swaps.reindex(columns=["measure", "subset_size", "repetitions", "pairs", "swap_rate",
                                   "significant_per_repetition", "swap_rate_significant"])
    rel = pd.DataFrame(rel)
    if "note" in rel and rel["note"].fillna("").astype(bool).any():  # a degenerate G-study says why
        cols.append("note")
    return Reliability(rel.reindex(columns=cols), curves, power, swaps)
