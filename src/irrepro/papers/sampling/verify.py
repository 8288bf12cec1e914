"""The sampling paper's verify hook (``workflow/resources/reference/sampling.yaml``).

Rows for data the config did not ask for are left out: a SYNTH cell ``<column>/<system>`` of a system not in
``sampling.synth.systems``, a TREC-substitute row ``<collection>/claim/...`` of a collection not in
``sampling.trec.collections``. That is a configuration choice, not a failure; every row of configured data stays,
a value that could not be computed included (``core.verify``: reproduced empty, ok false, the reason).
"""
from __future__ import annotations

from typing import Any, Mapping

from irrepro.papers.sampling.claims import SYNTH_VALUES


def configured(row: Mapping[str, Any], systems, collections) -> bool:
    """Whether a reference row concerns a configured SYNTH system or TREC collection (rows of neither: kept)."""
    parts = row["item"].split("/")
    if len(parts) == 2 and parts[0] in SYNTH_VALUES:
        return parts[1] in systems
    if len(parts) >= 3 and parts[1] == "claim" and parts[0] != "synth":
        return parts[0] in collections
    return True


def prepare(rows: list, values: dict, context: dict):
    """``(rows, values)`` for :func:`irrepro.core.verify.build_verify_table`: the rows of configured data
    (``context``: ``systems``, ``collections``; without a context every row is kept)."""
    if not context:
        return rows, values
    systems, collections = set(context.get("systems", [])), set(context.get("collections", []))
    return [r for r in rows if configured(r, systems, collections)], values
