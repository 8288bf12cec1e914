"""The plan of P4 (VB-Score): config section ``vb`` checked and resolved into what the rules of
workflow/rules/vb.smk wire (called by :func:`irrepro.plan.resolve`)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from irrepro.errors import InputError

#: the collection whose per-topic claim (E1) and intent-aware checks enter the verify table (reference rows name it)
VERIFY_COLLECTION = "web2012"
#: Fig. 2's cut-offs, when configured (else every configured k)
FIG2_KS = (1, 3, 5, 10)


@dataclass(frozen=True)
class VBPlan:
    collections: tuple  # every configured diversity collection, sorted
    runs: dict  # collection -> {system name: run file}, in config order
    with_runs: tuple  # the collections with at least one run
    verify_collections: tuple  # the collections whose per-topic values enter the verify table
    fig2_ks: tuple  # cut-offs of Fig. 2


def run_name(spec: dict) -> str:
    """A run's system name: ``name``, else the file name of its artifact or path without .gz/.txt/.run."""
    if spec.get("name"):
        return spec["name"]
    src = spec.get("artifact") or spec.get("path") or ""
    name = Path(src).name
    for ext in (".gz", ".txt", ".run"):
        name = name[: -len(ext)] if name.endswith(ext) else name
    return name


def _check(vb: dict) -> None:
    from irrepro.datasets.mirror import ARTIFACTS

    for c, spec in vb["collections"].items():
        names = []
        for i, r in enumerate(spec.get("runs", [])):
            key = f"vb.collections.{c}.runs[{i}]"
            if bool(r.get("artifact")) == bool(r.get("path")):
                raise InputError(f"config key {key}: give exactly one of 'artifact' or 'path'")
            if r.get("artifact") and r["artifact"] not in ARTIFACTS:
                raise InputError(f"config key {key}.artifact: unknown artifact {r['artifact']!r} "
                                 f"(declared artifacts: src/irrepro/data/artifacts.tsv)")
            if r.get("path") and not os.path.isfile(r["path"]):
                raise InputError(f"config key {key}.path: run file {r['path']!r} not found")
            names.append(run_name(r))
        if len(set(names)) != len(names):
            raise InputError(f"config key vb.collections.{c}.runs: two runs have the same name {names}; set 'name'")
    for key, allowed in (("forest_k", "ks"), ("compare_k", "ks"), ("forest_alpha", "alphas")):
        if vb["collections"] and vb[key] not in vb[allowed]:
            raise InputError(f"config key vb.{key}: {vb[key]} must be one of {vb[allowed]}")


def resolve(config: dict, spine) -> VBPlan:
    """Check section ``vb`` (run sources, unique system names, forest_k / compare_k in ks, forest_alpha in
    alphas) and resolve run files: a declared artifact is read from ``<resources_dir>/artifacts/``."""
    vb = config["vb"]
    _check(vb)
    collections = tuple(sorted(vb["collections"]))
    runs = {c: {run_name(r): (f"{spine.res}/artifacts/{r['artifact']}" if r.get("artifact") else r["path"])
                for r in vb["collections"][c].get("runs", [])} for c in collections}
    with_runs = tuple(c for c in collections if runs[c])
    return VBPlan(collections=collections, runs=runs, with_runs=with_runs,
                  verify_collections=tuple(c for c in with_runs if c == VERIFY_COLLECTION),
                  fig2_ks=tuple(k for k in vb["ks"] if k in FIG2_KS) or tuple(vb["ks"]))
