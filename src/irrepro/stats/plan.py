"""What a schema cannot check of the ``stats:`` config section: the collections it names exist, their measures are
scored (where the score table's measures are known before the run), their baselines are systems (where the systems
are known before the run: the population of a retrieved collection, the run files of a runs import), a baseline
from another collection (``<id>/<system>``) has the measures compared."""
from __future__ import annotations

import os
import re

from irrepro.core.trec import run_files, run_systems
from irrepro.errors import InputError

# Read when the Snakefile is parsed (once per job on SLURM): this module imports no scipy; the stage imports these.
MEASURE_PATTERN = r"[A-Za-z0-9@._-]+"


def split_baseline(name: str, collection: str, sources) -> tuple[str, str]:
    """``(scored id, system)`` of a baseline of ``collection``: ``<id>/<system>`` names a system of another scored id
    among ``sources`` (a population system of a retrieved collection, another import's system); any other name is a
    system of ``collection`` itself."""
    head, sep, tail = name.partition("/")
    if sep and head != collection and head in sources and tail:
        return head, tail
    return collection, name


def check(config: dict, plan) -> None:
    s = config.get("stats")
    if s is None or not s.get("enabled", True):  # no section: a config not validated against the schemas
        return
    for key in ("baseline", "measures"):
        for c in s.get(key) or {}:
            if c not in plan.all_scored:
                raise InputError(f"config key stats.{key}.{c}: {c!r} is neither in `collections` nor in `imports` "
                                 f"(scored ids: {plan.all_scored})")
    for c, ms in (s.get("measures") or {}).items():
        for i, m in enumerate(ms):
            plan.require_measure(f"stats.measures.{c}[{i}]", c, m)
    for c in plan.all_scored:
        measures(config, plan, c)
    for c, value in (s.get("baseline") or {}).items():
        names = [value] if isinstance(value, str) else list(value)
        for i, b in enumerate(names):
            key = f"stats.baseline.{c}" + ("" if isinstance(value, str) else f"[{i}]")
            src, system = split_baseline(b, c, plan.all_scored)
            known = known_systems(config, plan, src)
            if known is not None and system not in known:
                what = (f"a system of the population of {src}" if src in plan.systems else
                        f"a run of imports.{src}.runs")
                raise InputError(f"config key {key}: {system!r} is not {what} ({known}); a system of another "
                                 f"collection or import is named <id>/<system> (ids: {plan.all_scored})")
            if src != c:
                for m in measures(config, plan, c):
                    plan.require_measure(key, src, m)


def known_systems(config: dict, plan, scored_id: str) -> list | None:
    """The systems of a score table where they are known before the run: a retrieved collection's population, a
    runs import's run files; None for matrix and trec_eval imports (their files name them)."""
    if scored_id in plan.systems:
        return list(plan.systems[scored_id])
    spec = (config.get("imports") or {}).get(scored_id) or {}
    if spec.get("type") == "runs" and spec.get("runs") and os.path.isdir(spec["runs"]):
        return [name for name, _ in run_systems(run_files(spec["runs"]))]
    return None


def baselines(config: dict, collection: str) -> list | None:
    """The baselines of a collection (``stats.baseline.<collection>``, one name or a list) as a list; None without
    one (all pairs)."""
    value = ((config.get("stats") or {}).get("baseline") or {}).get(collection)
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value) or None


def baseline_sources(config: dict, plan, collection: str) -> list:
    """The other scored ids whose score tables a collection's stats rules read: those its baselines name as
    ``<id>/<system>``."""
    out = {split_baseline(b, collection, plan.all_scored)[0] for b in baselines(config, collection) or []}
    return sorted(out - {collection})


COMPARE_KEYS = ("tests", "corrections", "alpha", "n_permutations", "n_bootstrap", "seed")
RELIABILITY_KEYS = ("alpha", "seed", "d_study_max_topics", "reliability_target", "swap_sizes", "swap_repetitions")


def measures(config: dict, plan, collection: str) -> list:
    """The measures compared on a collection: ``stats.measures.<collection>``, else those its score table holds."""
    ms = ((config.get("stats") or {}).get("measures") or {}).get(collection) or plan.measures.get(collection)
    if ms is None:
        raise InputError(f"config key stats.measures.{collection}: imports.{collection} keeps every measure of its "
                         f"file, unknown before the run; name the measures to compare here (or set "
                         f"imports.{collection}.measures)")
    for m in ms:
        if not re.fullmatch(MEASURE_PATTERN, m) or m in ("reliability", "power", "swaps", "dstudy"):
            raise InputError(f"config key stats.measures.{collection}: measure {m!r} cannot name a file "
                             f"(allowed: {MEASURE_PATTERN})")
    return list(ms)


def settings(config: dict, collection: str, keys) -> dict:
    """The settings one rule of the stats stage needs for one collection (``keys``, plus its baselines: a list, or
    None without one)."""
    s = {k: config["stats"][k] for k in keys}
    s["baseline"] = baselines(config, collection)
    return s
