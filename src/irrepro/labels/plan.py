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
    order), the ones analyses that need every pair's label (the CI paper) use. The ``labels.self_preference`` and
    ``labels.audit`` sections are stages of their own (``Plan.stages``: :mod:`irrepro.selfpref.plan`,
    :mod:`irrepro.audit.plan`).
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
    )


def _label_files(spec: dict, res: str) -> list:
    if spec["backend"] != "file":
        return []
    return [f"{res}/artifacts/{spec['artifact']}" if spec.get("artifact") else spec["path"]]
