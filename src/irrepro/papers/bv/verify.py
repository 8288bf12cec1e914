"""The bias–variance papers' part of the verify table (``workflow/resources/reference/bv.yaml``).

BV-Test Table 8's runs are named in the paper but anonymised in the public matrix: each named run is matched to the
anonymised system with the closest Var(x_i) (to the 4 decimals the paper prints), and that match is in the note.
The ``var_x`` rows are therefore ``kind: key`` in the reference file (shown, never counted as reproduced); only the
other columns of a matched system are checks.
Reference rows whose data this run did not compute are left out (e.g. ``config/test.yaml`` has two of the Table 9
collections), except those marked ``always``.
"""
from __future__ import annotations

from typing import Any, Mapping

TABLE8_COLUMNS = ("abs_zrisk", "var_rho", "var_x", "cov")


def match_table8(rows: list[Mapping[str, Any]], systems: list[Mapping[str, Any]]) -> dict:
    """Values ``table8/<run>/<column>`` of the paper's named runs: each reference row ``table8/<run>/var_x`` is
    matched to the system of ``systems`` (``tables.table8_tables``' ``table8/_all``) with the closest ``var_x``."""
    values = {}
    for r in rows:
        parts = r["item"].split("/")
        if parts[0] == "table8" and parts[2] == "var_x":
            best = min(systems, key=lambda s: abs(s["var_x"] - r["paper"]))
            for key in TABLE8_COLUMNS:
                values[f"table8/{parts[1]}/{key}"] = {
                    "value": best[key], "note": f"matched to anonymised {best['system']} by Var(x_i)",
                    "system": best["system"]}
    return values


def prepare(rows: list[Mapping[str, Any]], values: Mapping[str, Any], context: Mapping[str, Any] | None = None):
    """``(rows, values)`` for ``core.verify.build_verify_table``: the Table 8 matches added to the values (the
    helper entry ``table8/_all`` removed), and only the reference rows whose item this run computed or that are
    marked ``always``. ``context`` is unused."""
    values = dict(values)
    allsys = values.pop("table8/_all", None)
    if allsys:
        values.update(match_table8(rows, allsys))
    return [r for r in rows if r["item"] in values or r.get("always")], values
