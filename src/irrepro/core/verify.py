"""The verify table: every number a paper reports that our data lets us reproduce, beside ours.

Reference numbers and tolerances live in ``workflow/resources/reference/<paper>.yaml`` (never in code); rows may be
written flat, as here, or grouped (:func:`load_reference`)::

    - item: table9/adhoc1996/AP        # the table or figure and the cell
      data: trec5-adhoc                 # which data the reproduction used
      paper: 0.0613                     # the paper's number (or true/false for a qualitative claim)
      tolerance: 0.00005                # |reproduced - paper| <= tolerance  => ok
      note: "..."                       # why a row may differ

The paper's scripts compute ``reproduced``: a mapping ``item -> value`` (a number, a bool, or a dict with ``value``
and ``note``/``data``). :func:`build_verify_table` joins them into the columns
``item, data, paper, reproduced, difference, tolerance, ok, note``.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import pandas as pd
import yaml

VERIFY_COLUMNS = ["item", "data", "paper", "reproduced", "difference", "tolerance", "ok", "note"]


def load_reference(path) -> list[dict]:
    """Load a reference YAML: a list of rows, a mapping with key ``rows``, or a mapping with key ``groups``.

    A group shares defaults among its rows: every key of the group except ``rows`` (``data``, ``tolerance``,
    ``note``, ``kind`` ...) is copied into each of its rows that does not set it::

        groups:
          - data: trec5-adhoc
            tolerance: 0.00005
            note: "..."
            rows:
              - {item: table9/adhoc1996/AP, paper: 0.0613}

    Rows keep the file's order (groups in order, then top-level ``rows``). Every row needs ``item`` and ``paper``.
    """
    with open(path) as f:
        ref = yaml.safe_load(f) or []
    rows = expand_groups(ref)
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping) or "item" not in row or "paper" not in row:
            raise ValueError(f"{path}: reference row {i} needs 'item' and 'paper' keys, got {row!r}")
    return rows


def expand_groups(ref) -> list[dict]:
    """The flat rows of a parsed reference document (see :func:`load_reference`)."""
    if isinstance(ref, list):
        return [dict(r) for r in ref]
    rows = []
    for g in ref.get("groups", []) or []:
        shared = {k: v for k, v in g.items() if k != "rows"}
        for r in g.get("rows", []) or []:
            row = dict(r)
            for k, v in shared.items():
                row.setdefault(k, v)
            rows.append(row)
    rows += [dict(r) for r in ref.get("rows", []) or []]
    return rows


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def build_verify_table(reference: list[Mapping[str, Any]], reproduced: Mapping[str, Any]) -> pd.DataFrame:
    """Compare reference rows with reproduced values; one output row per reference row, in reference order.

    A reference row with no reproduced value gets ``ok = False`` and the note "not reproduced". Numeric rows are ok
    when ``|reproduced - paper| <= tolerance`` (tolerance 0 if absent, i.e. exact). Boolean rows (qualitative claims)
    are ok when the claim as reproduced equals the paper's. Reproduced items without a reference row are appended
    with an empty paper value so nothing computed is hidden.
    """
    rows = []
    seen = set()
    for ref in reference:
        item = ref["item"]
        seen.add(item)
        paper = ref["paper"]
        tol = ref.get("tolerance", 0.0)
        note = ref.get("note", "") or ""
        data = ref.get("data", "")
        val = reproduced.get(item)
        if isinstance(val, Mapping):
            note = "; ".join(x for x in [note, val.get("note", "")] if x)
            data = val.get("data", data)
            val = val.get("value")
        if val is None or (_is_number(val) and math.isnan(val)):
            rows.append([item, data, paper, None, None, tol, False, "; ".join(x for x in [note, "not reproduced"] if x)])
            continue
        if isinstance(paper, bool) or isinstance(val, bool):
            ok = bool(val) == bool(paper)
            rows.append([item, data, paper, bool(val), None, None, ok, note])
        elif _is_number(paper) and _is_number(val):
            diff = float(val) - float(paper)
            ok = abs(diff) <= float(tol) + 1e-12
            rows.append([item, data, paper, float(val), diff, tol, ok, note])
        else:
            ok = str(val) == str(paper)
            rows.append([item, data, paper, val, None, tol, ok, note])
    for item, val in reproduced.items():
        if item in seen:
            continue
        note, data = "no paper value", ""
        if isinstance(val, Mapping):
            data = val.get("data", "")
            note = "; ".join(x for x in [val.get("note", ""), note] if x)
            val = val.get("value")
        rows.append([item, data, None, val, None, None, None, note])
    return pd.DataFrame(rows, columns=VERIFY_COLUMNS)


def write_verify_table(table: pd.DataFrame, csv_path, md_path=None) -> None:
    """Write the verify table as CSV (and Markdown for reading)."""
    table.to_csv(csv_path, index=False, float_format="%.6g")
    if md_path:
        with open(md_path, "w") as f:
            f.write(to_markdown(table))


def to_markdown(df: pd.DataFrame, floatfmt: str = "{:.4g}") -> str:
    """A dependency-free Markdown rendering of a small table."""
    def fmt(v):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return ""
        if isinstance(v, float):
            return floatfmt.format(v)
        return str(v).replace("|", "\\|")
    cols = [str(c) for c in df.columns]
    out = ["| " + " | ".join(cols) + " |", "| " + " | ".join("---" for _ in cols) + " |"]
    for row in df.itertuples(index=False):
        out.append("| " + " | ".join(fmt(v) for v in row) + " |")
    return "\n".join(out) + "\n"


def expand_reference(reference: list[Mapping[str, Any]], combos) -> list[dict]:
    """Expand reference rows templated on ``{collection}`` and ``{labeler}`` over the configured
    ``(collection, labeler)`` pairs (rows with only ``{collection}`` once per collection). A fixed row that names
    a collection (``item`` ``table1/dl19-pool/...``, ``data`` ``dl19-pool``) is kept only when that collection is
    configured, so a smaller config does not list the paper's rows for data it did not ask for."""
    combos = [tuple(c) for c in combos]
    collections = list(dict.fromkeys(c for c, _ in combos))
    out = []
    for row in reference:
        text = " ".join(str(row.get(k, "")) for k in ("item", "data"))
        if "{labeler}" in text:
            subs = [{"collection": c, "labeler": l} for c, l in combos]
        elif "{collection}" in text:
            subs = [{"collection": c} for c in collections]
        else:
            data = str(row.get("data", "")).split(" / ")[0]
            if collections and data and data not in collections:
                continue
            subs = [{}]
        for s in subs:
            r = dict(row)
            if "{labeler}" in text and "{collection}" not in text:
                # e.g. table1/dl19-pool/{labeler}/...: only the labelers of that collection
                data = str(row.get("data", "")).split(" / ")[0]
                if data and s["collection"] != data:
                    continue
            for k in ("item", "data", "note"):
                if isinstance(r.get(k), str):
                    r[k] = r[k].replace("{collection}", s.get("collection", "{collection}")).replace(
                        "{labeler}", s.get("labeler", "{labeler}"))
            if r not in out:
                out.append(r)
    return out


def verify_paper(paper: str, reference: list[Mapping[str, Any]], values: Mapping[str, Any],
                 context: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """The verify table of one paper: its ``prepare`` hook (``irrepro.papers.<paper>.verify.prepare(reference,
    values, context) -> (reference, values)``, if the paper has one: matching anonymised systems, expanding
    templated rows ...), then :func:`build_verify_table`."""
    import importlib

    try:
        hook = importlib.import_module(f"irrepro.papers.{paper}.verify")
    except ModuleNotFoundError as e:
        if not f"irrepro.papers.{paper}.verify".startswith(str(e.name)):
            raise
        hook = None
    if hook is not None:
        reference, values = hook.prepare(list(reference), dict(values), dict(context or {}))
    return build_verify_table(reference, values)
