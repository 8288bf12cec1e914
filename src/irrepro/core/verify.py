"""The verify table: every number a paper reports that our data lets us reproduce, beside ours.

Reference numbers and tolerances live in ``workflow/resources/reference/<paper>.yaml`` (never in code); rows may be
written flat, as here, or grouped (:func:`load_reference`)::

    - item: table9/adhoc1996/AP        # the table or figure and the cell
      kind: check                       # check (default) | key | claim | info, see KINDS
      data: trec5-adhoc                 # which data the reproduction used
      paper: 0.0613                     # the paper's number (or true/false for a qualitative claim)
      tolerance: 0.00005                # |reproduced - paper| <= tolerance  => ok
      basis: "half a unit of the printed 4 decimals"   # where the tolerance comes from (required if > 0)
      note: "..."                       # context
      explained: "..."                  # why the row is known to differ (a data difference, a paper typo ...)

A row may give ``tolerance_se: k``: the tolerance is then k times the standard error that the reproduced value
carries (``{"value": x, "se": s}``, k s.e. of our own Monte-Carlo replicates) plus the row's ``tolerance`` if any
(e.g. half a unit of the printed precision).

The paper's scripts compute ``reproduced``: a mapping ``item -> value`` (a number, a bool, None for a cell that
could not be computed, or a dict with ``value`` and ``note``/``data``/``se``). :func:`build_verify_table` joins
them into :data:`VERIFY_COLUMNS`; :func:`scorecard` counts what can fail.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import pandas as pd
import yaml

from irrepro.errors import InputError

VERIFY_COLUMNS = ["item", "kind", "data", "paper", "reproduced", "difference", "tolerance", "basis", "ok", "note"]
# check: an independent comparison that can fail (counted); key: used to match data, never evidence (its ok is
# shown, never counted); claim: a qualitative statement of the paper tested on our data (counted apart); info:
# context, no verdict.
KINDS = ("check", "key", "claim", "info")
EXPLAINED = "explained: "
SCORECARD_COLUMNS = ["paper", "checks", "reproduced", "differs_explained", "differs_unexplained",
                     "not_reproducible", "claims", "claims_hold", "keys", "info"]


def load_reference(path) -> list[dict]:
    """Load a reference YAML: a list of rows, a mapping with key ``rows``, or a mapping with key ``groups``.

    A group shares defaults among its rows: every key of the group except ``rows`` (``data``, ``tolerance``,
    ``basis``, ``note``, ``kind`` ...) is copied into each of its rows that does not set it::

        groups:
          - data: trec5-adhoc
            tolerance: 0.00005
            basis: "half a unit of the printed 4 decimals"
            rows:
              - {item: table9/adhoc1996/AP, paper: 0.0613}

    Rows keep the file's order (groups in order, then top-level ``rows``). Every row is checked by
    :func:`check_reference` (errors name the file and the item).
    """
    with open(path) as f:
        ref = yaml.safe_load(f) or []
    rows = expand_groups(ref)
    check_reference(rows, path)
    return rows


def check_reference(rows: list, where="reference") -> None:
    """Raise ``InputError`` (naming ``where`` and the item) for a row without ``item``/``paper``, an unknown
    ``kind``, or a ``check``/``claim`` row whose tolerance (``tolerance`` > 0 or ``tolerance_se``) has no
    ``basis``: no tolerance goes underived."""
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping) or "item" not in row or "paper" not in row:
            raise InputError(f"reference row {i} needs 'item' and 'paper' keys, got {row!r}", path=where)
        kind = row.get("kind", "check")
        if kind not in KINDS:
            raise InputError(f"item {row['item']!r}: unknown kind {kind!r} (one of {', '.join(KINDS)})", path=where)
        tol = row.get("tolerance", 0) or 0
        if isinstance(row["paper"], bool):  # a true/false claim has no tolerance
            continue
        if kind in ("check", "claim") and (tol > 0 or row.get("tolerance_se")) and not row.get("basis"):
            raise InputError(f"item {row['item']!r}: tolerance {row.get('tolerance', '')}"
                             f"{' tolerance_se ' + str(row['tolerance_se']) if row.get('tolerance_se') else ''}"
                             " without a 'basis' (say where it comes from: printed precision, k s.e. of our "
                             "replicates, a documented data difference)", path=where)


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


def _join(*parts) -> str:
    return "; ".join(str(p) for p in parts if p)


def build_verify_table(reference: list[Mapping[str, Any]], reproduced: Mapping[str, Any]) -> pd.DataFrame:
    """Compare reference rows with reproduced values; one output row per reference row, in reference order.

    Every reference row appears: one with no reproduced value (absent, None or NaN: a cell that could not be
    computed) has ``reproduced`` empty, ``ok = False`` and the reason in ``note`` (the value's own note, else
    "not reproduced"). Numeric rows are ok when ``|reproduced - paper| <= tolerance`` (0 if absent, i.e. exact;
    ``tolerance_se: k`` = k times the value's ``se``). Boolean rows (qualitative claims) are ok when the claim as
    reproduced equals the paper's. ``info`` rows get no verdict (``ok`` empty). A row's ``explained`` text is
    put first in its note as ``explained: ...`` (see :func:`scorecard`). Reproduced items without a reference row
    are appended as ``info`` with an empty paper value so nothing computed is hidden.
    """
    rows = []
    seen = set()
    for ref in reference:
        item = ref["item"]
        seen.add(item)
        kind = ref.get("kind", "check")
        paper = ref["paper"]
        tol = ref.get("tolerance", 0.0)
        basis = ref.get("basis", "") or ""
        note = _join(EXPLAINED + ref["explained"] if ref.get("explained") else "", ref.get("note", ""))
        data = ref.get("data", "")
        val = reproduced.get(item)
        se = None
        if isinstance(val, Mapping):
            note = _join(note, val.get("note", ""))
            data = val.get("data", data)
            se = val.get("se")
            val = val.get("value")
        if ref.get("tolerance_se") is not None and not isinstance(paper, bool):
            k = float(ref["tolerance_se"])
            if _is_number(se) and not math.isnan(se):
                floor = float(tol or 0.0)  # a fixed part (e.g. half a printed unit) added to the k s.e.
                tol = floor + k * float(se)
                basis = _join(basis, f"{k:g} x s.e. {float(se):.3g}" + (f" + {floor:g}" if floor else ""))
            elif val is not None:
                tol, note = None, _join(note, "no standard error reproduced for its tolerance")
            else:
                tol = None
        verdict = (lambda ok: None) if kind == "info" else bool
        if val is None or (_is_number(val) and math.isnan(val)):
            rows.append([item, kind, data, paper, None, None, tol, basis, verdict(False),
                         _join(note, "" if isinstance(reproduced.get(item), Mapping)
                               and reproduced[item].get("note") else "not reproduced")])
            continue
        if isinstance(paper, bool) or isinstance(val, bool):
            ok = bool(val) == bool(paper)
            rows.append([item, kind, data, paper, bool(val), None, None, basis, verdict(ok), note])
        elif _is_number(paper) and _is_number(val):
            diff = float(val) - float(paper)
            ok = tol is not None and abs(diff) <= float(tol) + 1e-12
            rows.append([item, kind, data, paper, float(val), diff, tol, basis, verdict(ok), note])
        else:
            ok = str(val) == str(paper)
            rows.append([item, kind, data, paper, val, None, tol, basis, verdict(ok), note])
    for item, val in reproduced.items():
        if item in seen:
            continue
        note, data = "no paper value", ""
        if isinstance(val, Mapping):
            data = val.get("data", "")
            note = _join(val.get("note", ""), note)
            val = val.get("value")
        rows.append([item, "info", data, None, val, None, None, "", None, note])
    return pd.DataFrame(rows, columns=VERIFY_COLUMNS)


def _truth(x) -> bool | None:
    """``ok`` as written to / read back from a CSV: True, False or None (empty)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    if isinstance(x, str):
        return {"true": True, "false": False}.get(x.strip().lower())
    return bool(x)


def scorecard(table: pd.DataFrame, paper: str = "") -> dict:
    """Counts of one verify table (pure; the table as built or as read back from ``verify.csv``). Over ``check``
    rows only: ``reproduced`` (ok), ``differs_explained`` (not ok, a value, and a note starting ``explained:``:
    the reference row's ``explained`` field), ``differs_unexplained`` (not ok, a value, no explanation) and
    ``not_reproducible`` (no value: the data is not public, or the cell could not be computed). ``claims`` and
    ``claims_hold`` count ``claim`` rows apart; ``keys`` and ``info`` rows are never counted as evidence."""
    t = table.copy()
    kind = t["kind"].fillna("check") if "kind" in t else pd.Series("check", index=t.index)
    ok = t["ok"].map(_truth)
    missing = t["reproduced"].isna() | t["reproduced"].astype(str).str.strip().eq("")
    explained = t["note"].fillna("").astype(str).str.startswith(EXPLAINED.strip())
    chk = kind.eq("check")
    cl = kind.eq("claim")
    return {"paper": paper, "checks": int(chk.sum()),
            "reproduced": int((chk & ok.eq(True)).sum()),
            "differs_explained": int((chk & ~ok.eq(True) & ~missing & explained).sum()),
            "differs_unexplained": int((chk & ~ok.eq(True) & ~missing & ~explained).sum()),
            "not_reproducible": int((chk & ~ok.eq(True) & missing).sum()),
            "claims": int(cl.sum()), "claims_hold": int((cl & ok.eq(True)).sum()),
            "keys": int(kind.eq("key").sum()), "info": int(kind.eq("info").sum())}


def scorecard_line(c: Mapping[str, Any]) -> str:
    """One line of a :func:`scorecard`: what can fail, and how it came out."""
    return (f"{c['checks']} checks: {c['reproduced']} reproduced, {c['differs_explained']} differ (explained), "
            f"{c['differs_unexplained']} differ (unexplained), {c['not_reproducible']} not reproducible; "
            f"{c['claims_hold']} of {c['claims']} claims hold")


def write_verify_table(table: pd.DataFrame, csv_path, md_path=None, header: str = "") -> None:
    """Write the verify table as CSV (and Markdown for reading, ``header`` first: e.g. the scorecard line)."""
    table.to_csv(csv_path, index=False, float_format="%.6g")
    if md_path:
        with open(md_path, "w") as f:
            f.write((header + "\n\n" if header else "") + to_markdown(table))


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


def summary_markdown(tables: Mapping[str, pd.DataFrame], counts: pd.DataFrame) -> str:
    """``results/<version>/verify.md``: the scorecard of every paper (``check`` rows only; claims apart), then per
    paper its one-line scorecard and every ``check`` / ``claim`` row that is not ok."""
    out = ["# Verify: the papers' numbers against ours\n",
           "Counted over `check` rows only (an independent comparison that can fail): **reproduced** (within the "
           "row's stated tolerance), **differs, explained** (a documented data difference or paper inconsistency, "
           "the note starts with `explained:`), **differs, unexplained**, **not reproducible** (no value: data not "
           "public, or the cell could not be computed). `key` rows (used to match data) and `info` rows are never "
           "counted; claims are counted apart.\n", to_markdown(counts), ""]
    for paper, t in tables.items():
        c = counts.set_index("paper").loc[paper].to_dict() | {"paper": paper}
        kind = t["kind"].fillna("check")
        ok = t["ok"].map(_truth)
        bad = t[kind.isin(["check", "claim"]) & ~ok.eq(True)]
        out.append(f"## {paper}\n\n{scorecard_line(c)} (`{paper}/verify.csv`).\n")
        out.append(to_markdown(bad) if len(bad) else "Every check and claim within tolerance.\n")
    return "\n".join(out)
