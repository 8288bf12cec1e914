"""What a schema cannot check of the ``stats:`` config section: the collections it names exist, their measures are
scored (where the score table's measures are known before the run)."""
from __future__ import annotations

import re

from irrepro.errors import InputError
from irrepro.stats.stage import MEASURE_PATTERN


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
    for c, b in (s.get("baseline") or {}).items():
        if c in plan.systems and b not in plan.systems[c]:
            raise InputError(f"config key stats.baseline.{c}: {b!r} is not a system of the population "
                             f"({plan.systems[c]})")


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
    """The settings one rule of the stats stage needs for one collection (``keys``, plus its baseline)."""
    s = {k: config["stats"][k] for k in keys}
    s["baseline"] = (config["stats"].get("baseline") or {}).get(collection)
    return s
