"""The bias–variance papers' part of the workflow plan (``PLAN.papers["bv"]`` in ``workflow/rules/bv.smk``).

:func:`resolve` checks what the schema (``workflow/schemas/bv.schema.yaml``) cannot: every collection named in
``bv`` has a score table with the measure it is used with (``irrepro.plan.Plan.require_measure``), every simulated
collection has run files with scores, every Session-track file exists; and derives what the rules wire. Errors
name the dotted config key (:class:`irrepro.errors.InputError`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from irrepro.core.trec import run_files
from irrepro.errors import InputError


def _files(directory) -> list[str]:
    return [str(p) for p in run_files(directory)]


@dataclass(frozen=True)
class BVPlan:
    """What the bias–variance rules wire."""

    table9: dict  # collection -> measure (BV-Test Table 9)
    fig1: dict  # collection -> measure (one Fig 1 each)
    table8: str | None  # the collection of Table 8, or None
    simulation: tuple  # collections simulated (Tables 10-11)
    simulation_imports: dict  # simulated import of type runs -> {"runs": [files], "qrels": file}
    sigir13: tuple  # collections of the SIGIR 2013 query-model family (config querymodels.collections)
    table12_tracks: tuple  # Session-track names (Table 12), empty: not requested
    table12_inputs: tuple  # every file the Session tracks read
    values: tuple  # names of the values files under bv/values/ (the verify table's inputs, in order)


def resolve(config: dict, spine) -> BVPlan:
    """Check the ``bv`` section against the spine (``irrepro.plan.Plan``) and resolve it into a :class:`BVPlan`."""
    bv = config["bv"]
    table9 = dict(bv["table9"]["collections"])
    fig1 = dict(bv["fig1"]["collections"])
    table8 = bv["table8"]["collection"]
    sim = list(bv["simulation"]["collections"])
    tracks = bv["table12"]["tracks"]
    for c, m in table9.items():
        spine.require_measure("bv.table9.collections", c, m)
    for c, m in fig1.items():
        spine.require_measure("bv.fig1.collections", c, m)
    if table8:
        spine.require_measure("bv.table8.collection", table8, bv["table8"]["measure"])
    sim_imports = {}
    for c in sim:
        if c in spine.collections:
            continue
        spec = config["imports"].get(c, {})
        if spec.get("type") != "runs":
            raise InputError(f"config key bv.simulation.collections: {c!r} is neither a retrieved collection (config "
                             f"`collections`) nor an import of type runs; the simulation resamples run files with "
                             f"scores")
        sim_imports[c] = {"runs": _files(spec["runs"]), "qrels": spec["qrels"]}
    inputs = []
    for t, spec in sorted(tracks.items()):
        for k in ("qrels", "runs"):
            if not Path(spec[k]).exists():
                raise InputError(f"config key bv.table12.tracks.{t}.{k}: {spec[k]!r} does not exist")
        inputs.append(spec["qrels"])
        if spec.get("topic_map"):
            inputs.append(spec["topic_map"])
        inputs += _files(spec["runs"])
    sigir13 = tuple(config["querymodels"]["collections"])
    values = (["table2"] + (["table9"] if table9 else []) + (["table8"] if table8 else [])
              + [f"sigir13_{c}" for c in sigir13] + ["sigir13_tables"]
              + (["table10", "table11"] if sim else []) + (["table12"] if tracks else []))
    return BVPlan(table9=table9, fig1=fig1, table8=table8, simulation=tuple(sim), simulation_imports=sim_imports,
                  sigir13=sigir13, table12_tracks=tuple(sorted(tracks)), table12_inputs=tuple(inputs),
                  values=tuple(values))
