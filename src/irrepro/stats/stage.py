"""The stats stage of one collection: every measure of its score table through :func:`irrepro.stats.compare.compare`,
the G-study, discriminative power and swap rates (what ``workflow/scripts/stats/collection.py`` writes)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from irrepro.core.progress import Progress
from irrepro.core.scores import to_matrix
from irrepro.errors import InputError
from irrepro.stats import gstudy as gs
from irrepro.stats.compare import compare, complete_matrix, pairs, ranked, summary
from irrepro.stats.power import discriminative_power, swap_rates


def file_stem(measure: str) -> str:
    """A measure's file name stem (characters outside [A-Za-z0-9@._-] become _)."""
    return re.sub(r"[^A-Za-z0-9@._-]", "_", measure)


@dataclass
class CollectionStats:
    tables: dict = field(default_factory=dict)  # measure -> per-pair table
    summaries: dict = field(default_factory=dict)  # measure -> per-system summary
    systems: dict = field(default_factory=dict)  # measure -> systems ranked by mean
    reliability: pd.DataFrame | None = None
    curves: dict = field(default_factory=dict)  # measure -> D-study frame
    power: pd.DataFrame | None = None
    swaps: pd.DataFrame | None = None
    notes: list = field(default_factory=list)


def measures_of(scores: pd.DataFrame, wanted, collection: str) -> list:
    have = list(dict.fromkeys(scores["measure"]))
    if not wanted:
        return have
    missing = [m for m in wanted if m not in have]
    if missing:
        raise InputError(f"config key stats.measures.{collection}: {missing} not in the score table "
                         f"(it has {have})")
    return list(wanted)


def analyse(scores: pd.DataFrame, collection: str, s: dict, log=None) -> CollectionStats:
    """``s``: the stats settings (tests, corrections, alpha, n_permutations, n_bootstrap, seed, baseline or None,
    measures or None, d_study_max_topics, reliability_target, swap_sizes, swap_repetitions)."""
    out = CollectionStats()
    rel, pw, sw = [], [], []
    ms = measures_of(scores, s.get("measures"), collection)
    with Progress(len(ms), f"stats {collection}", unit="measures") as prog:
        for k, m in enumerate(ms):
            mat, dropped = complete_matrix(to_matrix(scores, m), f"{collection} {m}")
            if dropped:
                out.notes.append(f"{m}: {len(dropped)} topics not scored by every system left out "
                                 f"({dropped[:5]}{' ...' if len(dropped) > 5 else ''})")
            mat = ranked(mat)
            n_pairs = len(pairs(mat.columns, s.get("baseline"))[0])
            floor = 1 / (1 + min(s["n_permutations"], s["n_bootstrap"]))
            if any(c in ("bonferroni", "holm") for c in s["corrections"]) and floor > s["alpha"] / n_pairs:
                out.notes.append(f"{m}: a resampled p-value is at least {floor:.2g} but Bonferroni/Holm need "
                                 f"{s['alpha'] / n_pairs:.2g} for {n_pairs} pairs: no randomisation or bootstrap pair "
                                 f"can be significant after them (the randomised Tukey HSD is the resampling "
                                 f"test's family-wise correction)")
            seed = int(np.random.SeedSequence([s["seed"], k]).generate_state(1)[0])
            t = compare(mat, tests=s["tests"], corrections=s["corrections"], alpha=s["alpha"],
                        n_permutations=s["n_permutations"], n_bootstrap=s["n_bootstrap"], seed=seed,
                        baseline=s.get("baseline"))
            out.tables[m], out.systems[m] = t, list(mat.columns)
            out.summaries[m] = summary(t, mat, s.get("baseline"))
            X = mat.to_numpy(dtype=float)
            g = gs.gstudy(X)
            comp = {c: g[c] for c in ("var_system", "var_topic", "var_residual")}
            rel.append({"measure": m, **{c: g[c] for c in ("n_topics", "n_systems", "var_system", "var_topic",
                                                           "var_residual", "e_rho2", "phi")},
                        **gs.topics_needed(comp, s["reliability_target"]), "clipped": g["clipped"]})
            out.curves[m] = gs.dstudy(comp, max(s["d_study_max_topics"], X.shape[0]))
            p = discriminative_power(t, s["alpha"])
            pw.append(p.assign(measure=m))
            a, b = pairs(mat.columns, s.get("baseline"))
            sw.append(swap_rates(X, a, b, s["swap_sizes"], s["swap_repetitions"],
                                 np.random.default_rng([s["seed"], k, 1]), s["alpha"]).assign(measure=m))
            prog.advance(1)
    out.reliability = pd.DataFrame(rel)
    out.power = pd.concat(pw, ignore_index=True)[["measure", "test", "correction", "pairs", "significant", "share"]]
    out.swaps = pd.concat(sw, ignore_index=True)
    out.swaps = out.swaps[["measure"] + [c for c in out.swaps.columns if c != "measure"]]
    return out
