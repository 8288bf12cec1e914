"""The self-preference stage's plan: the ``labels.self_preference`` config section checked against the spine and the
label stage, resolved into what ``workflow/rules/selfpref.smk`` wires (:func:`resolve`, called by
:func:`irrepro.plan.resolve` as ``Plan.stages["selfpref"]``)."""
from __future__ import annotations

from irrepro.errors import InputError
from irrepro.papers.ci.plan import check_pool_measures


def resolve(config: dict, spine) -> dict:
    """``labels.self_preference`` resolved: ``{collection: {"systems": [...], "labelers": [...], "sample": {labeler:
    n}, "same_model": {labeler: {system: bool}}}}`` plus the shared settings under ``"settings"``. The labelers
    are the collection's computed ones (every backend but ``file``); a system shares a labeler's model when
    :func:`irrepro.plan.same_model` says so (``spine.same_model``) or ``labels.self_preference.same_model`` lists it."""
    lc = config["labels"]
    sp = lc.get("self_preference") or {}
    out = {"collections": {}, "settings": {k: sp.get(k) for k in ("depth", "measures", "n_boot", "seed", "coverage")}}
    if not sp.get("collections"):
        return out
    check_pool_measures(sp, "labels.self_preference")
    declared = sp.get("same_model") or {}
    for name in declared:
        if name not in lc["labelers"]:
            raise InputError(f"config key labels.self_preference.same_model: {name!r} is not a labeler under "
                             "labels.labelers")
    for i, c in enumerate(sp["collections"]):
        if c not in lc["collections"]:
            raise InputError(f"config key labels.self_preference.collections[{i}]: {c!r} is not under "
                             f"labels.collections ({sorted(lc['collections'])})")
        systems = list(sp.get("systems") or spine.systems[c])
        for j, s in enumerate(systems):
            if s not in spine.systems[c]:
                raise InputError(f"config key labels.self_preference.systems[{j}]: {s!r} is not a system of {c}'s "
                                 f"population")
        labelers = [n for n in lc["collections"][c]["labelers"] if lc["labelers"][n]["backend"] != "file"]
        if sp.get("labelers") is not None:
            for j, n in enumerate(sp["labelers"]):
                if n not in labelers:
                    raise InputError(f"config key labels.self_preference.labelers[{j}]: {n!r} is not a computed "
                                     f"labeler of {c} (labels.collections.{c}.labelers without file labels: "
                                     f"{labelers})")
            labelers = [n for n in labelers if n in sp["labelers"]]
        if not labelers:
            raise InputError(f"config key labels.self_preference.collections[{i}]: {c} has no computed labeler "
                             f"(labels.collections.{c}.labelers are all file labels)")
        flags = {}
        for n in labelers:
            extra = declared.get(n, [])
            for j, s in enumerate(extra):
                if s not in systems:
                    raise InputError(f"config key labels.self_preference.same_model.{n}[{j}]: {s!r} is not among "
                                     f"the compared systems of {c}")
            flags[n] = {s: spine.same_model(s, n) or s in extra for s in systems}
        sample = {n: k for n, k in (lc["collections"][c].get("sample") or {}).items() if n in labelers}
        out["collections"][c] = {"systems": systems, "labelers": labelers, "sample": sample, "same_model": flags}
    return out
