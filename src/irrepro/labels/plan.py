"""The label stage's plan: the ``labels`` config section checked against the spine and resolved into what the rules
of ``workflow/rules/labels.smk`` wire (:func:`resolve`, called by :func:`irrepro.plan.resolve`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from irrepro.errors import InputError
from irrepro.labels.prompts import get_prompt


@dataclass(frozen=True)
class LabelsPlan:
    """What the label rules need.

    ``collections``: the labelled collections (sorted); ``labelers``: every configured labeler name (sorted);
    ``cache``: the SQLite label cache; ``tables``: collection -> its labels tables (one per labeler, in config
    order); ``files``: labeler -> the label file it reads (backend ``file``: the artifact's local path or the
    configured path; else none); ``specs``: labeler -> its config as canonical JSON (a param: changing the model,
    the smoothing, ... relabels); ``prompt_hashes``: collection -> the content hash of its prompt (a param:
    editing a prompt relabels); ``shard_size``: pairs per label shard job (None: one ``labels`` job per collection
    and labeler, no shards); ``shards``: the ``labels.shards`` section (the shard jobs' resources); ``samples``:
    collection -> {labeler: number of queries} for the labelers that label a query sample of the pairs only
    (``labels.collections.<c>.sample``); ``complete``: collection -> the labelers that label every pair (config
    order), the ones analyses that need every pair's label (the CI paper) use; ``selfpref``: the
    ``labels.self_preference`` section resolved (:func:`resolve_self_preference`); ``audit``: the ``labels.audit``
    section resolved (:func:`resolve_audit`).
    """
    collections: list
    labelers: list
    cache: str
    tables: dict
    files: dict
    specs: dict
    prompt_hashes: dict
    shard_size: int | None = None
    shards: dict | None = None
    samples: dict | None = None
    complete: dict | None = None
    selfpref: dict | None = None
    audit: dict | None = None

    def shard_cache(self, collection: str, labeler: str, shard: int, shards: int) -> str:
        """The SQLite file only shard ``shard`` of ``shards`` of (collection, labeler) writes."""
        return shard_cache_path(self.cache, collection, labeler, shard, shards)


def shard_cache_path(cache: str, collection: str, labeler: str, shard: int, shards: int) -> str:
    """``<cache without .sqlite>.shards/<collection>/<labeler>/shard-<i>-of-<n>.sqlite``: beside the central cache
    (not versioned, like it), one file per (collection, labeler, shard, shard count)."""
    stem = cache[: -len(".sqlite")] if cache.endswith(".sqlite") else cache
    return f"{stem}.shards/{collection}/{labeler}/shard-{int(shard)}-of-{int(shards)}.sqlite"


def resolve(config: dict, spine) -> LabelsPlan:
    """Check the ``labels`` section against the spine (retrieved collections, the population's systems) and resolve
    it; every error is an :class:`~irrepro.errors.InputError` naming the dotted config key."""
    lc = config["labels"]
    for c, spec in lc["collections"].items():
        if c not in spine.collections:
            raise InputError(f"config key labels.collections: {c!r} is not a retrieved collection (collections: "
                             f"{spine.collections})")
        if spec["system"] not in spine.systems[c]:
            raise InputError(f"config key labels.collections.{c}.system: {spec['system']!r} is not in the population "
                             f"(e.g. {spine.systems[c][:3]})")
        for name in spec["labelers"]:
            if name not in lc["labelers"]:
                raise InputError(f"config key labels.collections.{c}.labelers: {name!r} is not defined under "
                                 f"labels.labelers")
        for name in spec.get("sample") or {}:
            if name not in spec["labelers"]:
                raise InputError(f"config key labels.collections.{c}.sample: {name!r} is not one of the collection's "
                                 f"labelers {spec['labelers']}")
        if all(name in (spec.get("sample") or {}) for name in spec["labelers"]):
            raise InputError(f"config key labels.collections.{c}.sample: every labeler of {c} labels a sample; at "
                             "least one must label every pair (the pairs table's queries)")
    for name, spec in lc["labelers"].items():
        if spec["backend"] == "file" and not (spec.get("artifact") or spec.get("path")):
            raise InputError(f"config key labels.labelers.{name}: backend file needs `artifact` or `path`")
    hashes = {}
    for c, spec in lc["collections"].items():
        try:
            hashes[c] = get_prompt(spec["prompt"]).hash
        except InputError as e:
            raise InputError(f"config key labels.collections.{c}.prompt: {e}") from None
    collections = sorted(lc["collections"])
    return LabelsPlan(
        collections=collections,
        labelers=sorted(lc["labelers"]),
        cache=lc["cache"] or f"{spine.res}/labels/cache.sqlite",
        tables={c: [f"{spine.V}/labels/{c}/{name}.tsv" for name in lc["collections"][c]["labelers"]]
                for c in collections},
        files={name: _label_files(spec, spine.res) for name, spec in lc["labelers"].items()},
        specs={name: json.dumps(spec, sort_keys=True) for name, spec in lc["labelers"].items()},
        prompt_hashes=hashes,
        shard_size=(lc.get("shards") or {}).get("size"),
        shards=dict(lc.get("shards") or {}),
        samples={c: dict(lc["collections"][c].get("sample") or {}) for c in collections},
        complete={c: [n for n in lc["collections"][c]["labelers"] if n not in (lc["collections"][c].get("sample") or {})]
                  for c in collections},
        selfpref=resolve_self_preference(config, spine),
        audit=resolve_audit(config, spine),
    )


#: a labeler backend's model -> the neural retrieval models (irrepro.retrieval.neural.MODELS) that are that model
LABELER_MODELS = {("biencoder", "minilm"): ("minilm-l6-v2",)}


def labeler_models(spec: dict) -> tuple:
    """The neural retrieval models a labeler config entry shares its weights with (none for file labels)."""
    return LABELER_MODELS.get((spec.get("backend"), spec.get("model", "minilm" if spec.get("backend") == "biencoder"
                                                                     else None)), ())


def system_models(system: str) -> tuple:
    """The neural models a system uses (its neural first stage and its re-rankers); none for a PISA system."""
    from irrepro.retrieval import neural

    try:
        sy = neural.parse_system(system)
    except InputError:
        return ()
    return tuple(dict.fromkeys(([sy.first] if sy.neural_first else []) + [r.model for r in sy.rerank]))


def _check_pool_measures(section: dict, key: str) -> None:
    """Each of ``section``'s measures is the CI evaluator's DCG@k / nDCG@k with k within its pool ``depth``; an
    error names ``<key>.measures[i]``."""
    from irrepro.papers.ci.plan import parse_measure

    depth = int(section.get("depth", 10))
    for i, m in enumerate(section.get("measures", [])):
        try:
            _, k = parse_measure(m)
        except InputError as e:
            raise InputError(f"config key {key}.measures[{i}]: {e}") from None
        if k > depth:
            raise InputError(f"config key {key}.measures[{i}]: {m} needs the top {k}; depth is {depth}")


def resolve_self_preference(config: dict, spine) -> dict:
    """``labels.self_preference`` resolved: ``{collection: {"systems": [...], "labelers": [...], "sample": {labeler:
    n}, "same_model": {labeler: {system: bool}}}}`` plus the shared settings under ``"settings"``. The labelers
    are the collection's computed ones (every backend but ``file``); a system shares a labeler's model when one of
    its neural models is the labeler's (:func:`labeler_models`) or ``same_model`` lists it."""
    lc = config["labels"]
    sp = lc.get("self_preference") or {}
    out = {"collections": {}, "settings": {k: sp.get(k) for k in ("depth", "measures", "n_boot", "seed", "coverage")}}
    if not sp.get("collections"):
        return out
    _check_pool_measures(sp, "labels.self_preference")
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
            mine = set(labeler_models(lc["labelers"][n]))
            extra = declared.get(n, [])
            for j, s in enumerate(extra):
                if s not in systems:
                    raise InputError(f"config key labels.self_preference.same_model.{n}[{j}]: {s!r} is not among "
                                     f"the compared systems of {c}")
            flags[n] = {s: bool(mine & set(system_models(s))) or s in extra for s in systems}
        sample = {n: k for n, k in (lc["collections"][c].get("sample") or {}).items() if n in labelers}
        out["collections"][c] = {"systems": systems, "labelers": labelers, "sample": sample, "same_model": flags}
    return out


def resolve_audit(config: dict, spine) -> dict:
    """``labels.audit`` resolved: ``{"collections": {collection: {"systems": [...], "labelers": [...], "sample":
    {labeler: n}, "judged_only": bool, "same_model": {labeler: {system: bool}}}}, "settings": {...}}``; the tests
    and corrections default to the stats stage's (``stats.tests``, ``stats.corrections``). Every labeler of the
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
    _check_pool_measures(au, "labels.audit")
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
        flags = {n: {s: bool(set(labeler_models(lc["labelers"][n])) & set(system_models(s))) for s in systems}
                 for n in labelers}
        sample = {n: k for n, k in (lc["collections"][c].get("sample") or {}).items() if n in labelers}
        out["collections"][c] = {"systems": systems, "labelers": labelers, "sample": sample,
                                 "judged_only": bool(lc["collections"][c].get("judged_only")), "same_model": flags}
    return out


def _label_files(spec: dict, res: str) -> list:
    if spec["backend"] != "file":
        return []
    return [f"{res}/artifacts/{spec['artifact']}" if spec.get("artifact") else spec["path"]]
