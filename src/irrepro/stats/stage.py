"""The stats stage of one collection: each measure's per-pair table (:func:`compare_measure`, rule
``stats_compare``), then the collection's G-study, discriminative power and swap rates over its measures
(:func:`reliability`, rule ``stats_reliability``)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from irrepro.core.io import to_markdown
from irrepro.core.scores import to_matrix
from irrepro.stats import gstudy as gs
from irrepro.stats.compare import COLUMNS, compare, complete_matrix, degenerate_notes, pairs, ranked, summary
from irrepro.stats.power import discriminative_power, swap_rates

MEASURE_PATTERN = r"[A-Za-z0-9@._-]+"


def measure_seed(seed: int, measure: str, stream: int = 0) -> int:
    """The seed of one measure's resamples: from the configured seed and the measure's name (not its position, so
    that adding a measure changes no other measure's results)."""
    return int(np.random.SeedSequence([seed, stream, *measure.encode()]).generate_state(1)[0])


@dataclass
class Comparison:
    table: pd.DataFrame  # per-pair table (COLUMNS, and ``note`` when a pair is degenerate)
    summary: pd.DataFrame | None  # per-system summary
    systems: list  # ranked by mean
    notes: list = field(default_factory=list)  # for the log
    degenerate: list = field(default_factory=list)  # for the log and the summary: pairs without spread


def summary_markdown(c: Comparison) -> str:
    """The per-system summary as Markdown, then a line per kind of degenerate pair (``Comparison.degenerate``)."""
    text = to_markdown(c.summary)
    if c.degenerate:
        text += "\n" + "\n".join(f"Note: {n}." for n in c.degenerate) + "\n"
    return text


def compare_measure(scores: pd.DataFrame, collection: str, measure: str, s: dict) -> Comparison:
    """``s``: tests, corrections, alpha, n_permutations, n_bootstrap, seed, baseline (or None). A measure the score
    table does not hold (an import's filter naming a measure its file lacks) gives an empty table and a note."""
    if measure not in set(scores["measure"]):
        return Comparison(pd.DataFrame(columns=COLUMNS), None, [],
                          [f"no {measure} scores in {collection} (it has {sorted(set(scores['measure']))})"])
    notes = []
    mat, dropped = complete_matrix(to_matrix(scores, measure), f"{collection} {measure}")
    if dropped:
        notes.append(f"{len(dropped)} topics not scored by every system left out "
                     f"({dropped[:5]}{' ...' if len(dropped) > 5 else ''})")
    mat = ranked(mat)
    n_pairs = len(pairs(mat.columns, s.get("baseline"))[0])
    floor = 1 / (1 + min(s["n_permutations"], s["n_bootstrap"]))
    if any(c in ("bonferroni", "holm") for c in s["corrections"]) and floor > s["alpha"] / n_pairs:
        notes.append(f"a resampled p-value is at least {floor:.2g} but Bonferroni/Holm need "
                     f"{s['alpha'] / n_pairs:.2g} for {n_pairs} pairs: no randomisation or bootstrap pair can be "
                     f"significant after them (the randomised Tukey HSD is the resampling tests' family-wise "
                     f"correction)")
    t = compare(mat, tests=s["tests"], corrections=s["corrections"], alpha=s["alpha"],
                n_permutations=s["n_permutations"], n_bootstrap=s["n_bootstrap"],
                seed=measure_seed(s["seed"], measure), baseline=s.get("baseline"))
    degenerate = degenerate_notes(t)
    return Comparison(t, summary(t, mat, s.get("baseline")), list(mat.columns), notes + degenerate, degenerate)


@dataclass
class Reliability:
    reliability: pd.DataFrame
    curves: dict  # measure -> D-study frame
    power: pd.DataFrame
    swaps: pd.DataFrame


def reliability(scores: pd.DataFrame, tables: dict, s: dict) -> Reliability:
    """G-study, D-study curves, swap rates of every measure in ``tables`` ({measure: per-pair table}) and their
    discriminative power. ``s``: alpha, seed, baseline, d_study_max_topics, reliability_target, swap_sizes,
    swap_repetitions. A measure without scores gets a row of NaN. A ``note`` column follows when a measure's G-study
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
        a, b = pairs(mat.columns, s.get("baseline"))
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
