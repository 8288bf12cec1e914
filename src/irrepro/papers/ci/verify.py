"""The CI paper's verify table (contract of the generic verify rule): the reference rows templated on
``{collection}`` / ``{labeler}`` are expanded over the configured (collection, labeler) pairs
(:func:`irrepro.core.verify.expand_reference`); rows naming a collection apply only when it is configured."""
from __future__ import annotations

from irrepro.core.verify import expand_reference


def prepare(rows: list, values: dict, context: dict):
    """``(rows, values)`` for :func:`irrepro.core.verify.build_verify_table`: ``rows`` expanded over
    ``context["combos"]`` (a list of ``[collection, labeler]``), ``values`` unchanged."""
    return expand_reference(rows, context.get("combos", [])), values
