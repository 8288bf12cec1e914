"""The judge audit's plan: the ``labels.audit`` config section checked against the spine and the label stage,
resolved into what ``workflow/rules/audit.smk`` wires (:func:`resolve`, called by :func:`irrepro.plan.resolve` as
``Plan.stages["audit"]``)."""
from __future__ import annotations

from irrepro.errors import InputError
from irrepro.papers.ci.plan import check_pool_measures


def resolve(config: dict, spine) -> dict:
    """``labels.audit`` resolved: ``{"collections": {collection: {"systems": [...], "labelers": [...], "sample":
    {labeler: n}, "judged_only": bool, "same_model": {labeler: {system: bool}}}}, "settings": {...}}``; the tests
    and corrections default to the stats stage's (``stats.tests``, ``stats.corrections``); same-model systems by
    :func:`irrepro.plan.same_model` (``spine.same_model``). Every labeler of the
    collection may be audited, file labels too (their labels are looked up, not computed)."""
    lc = config["labels"]
    au = lc.get("audit") or {}
    st = config.get("stats") or {}
    settings = {k: au.get(k) for k in ("depth", "measures", "tops", "n_boot", "seed")}
    settings["tests"] = list(au.get("tests") or st.get("tests") or ["t"])
    settings["corrections"] = list(au.get("corrections") or st.get("corrections") or ["holm"])
    out = {"collections": {}, "settings": settings}
    if not au.get("collections"):
        return out
    check_pool_measures(au, "labels.audit")
    for i, c in enumerate(au["collections"]):
        if c not in lc["collections"]:
            raise InputError(f"config key labels.audit.collections[{i}]: {c!r} is not under labels.collections "
                             f"({sorted(lc['collections'])})")
        systems = list(spine.systems[c])
        if len(systems) < 2:
            raise InputError(f"config key labels.audit.collections[{i}]: {c} has {len(systems)} population system; "
                             "an audit compares at least 2")
        labelers = list(lc["collections"][c]["labelers"])
        if au.get("labelers") is not None:
            for j, n in enumerate(au["labelers"]):
                if n not in lc["labelers"]:
                    raise InputError(f"config key labels.audit.labelers[{j}]: {n!r} is not a labeler under "
                                     "labels.labelers")
            labelers = [n for n in labelers if n in au["labelers"]]
        if not labelers:
            raise InputError(f"config key labels.audit.collections[{i}]: none of labels.audit.labelers labels {c} "
                             f"(labels.collections.{c}.labelers: {lc['collections'][c]['labelers']})")
        flags = {n: {s: spine.same_model(s, n) for s in systems} for n in labelers}
        sample = {n: k for n, k in (lc["collections"][c].get("sample") or {}).items() if n in labelers}
        out["collections"][c] = {"systems": systems, "labelers": labelers, "sample": sample,
                                 "judged_only": bool(lc["collections"][c].get("judged_only")), "same_model": flags}
    return out
