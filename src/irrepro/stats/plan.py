"""What a schema cannot check of the ``stats:`` config section: the collections it names exist, their measures are
scored (where the score table's measures are known before the run)."""
from __future__ import annotations

from irrepro.errors import InputError


def check(config: dict, plan) -> None:
    s = config.get("stats") or {}
    if not s.get("enabled", True):
        return
    for key in ("baseline", "measures"):
        for c in s.get(key) or {}:
            if c not in plan.all_scored:
                raise InputError(f"config key stats.{key}.{c}: {c!r} is neither in `collections` nor in `imports` "
                                 f"(scored ids: {plan.all_scored})")
    for c, ms in (s.get("measures") or {}).items():
        for i, m in enumerate(ms):
            plan.require_measure(f"stats.measures.{c}[{i}]", c, m)
    for c, b in (s.get("baseline") or {}).items():
        if c in plan.systems and b not in plan.systems[c]:
            raise InputError(f"config key stats.baseline.{c}: {b!r} is not a system of the population "
                             f"({plan.systems[c]})")


def settings(config: dict, collection: str) -> dict:
    """The settings of one collection's stats job (its baseline and measures picked out)."""
    s = dict(config["stats"])
    s["baseline"] = (s.get("baseline") or {}).get(collection)
    s["measures"] = (s.get("measures") or {}).get(collection)
    s.pop("enabled", None)
    return s
