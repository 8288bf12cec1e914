"""The verify table: every number a paper reports that our data lets us reproduce, beside ours.

Reference numbers and tolerances live in ``workflow/resources/reference/<paper>.yaml`` (never in code); rows may be
written flat, as here, or grouped (:func:`load_reference`)::

    - item: table9/adhoc1996/AP        # the table or figure and the cell
      kind: check                       # check (default) | cross-check | key | claim | info, see KINDS
      data: trec5-adhoc                 # which data the reproduction used
      paper: 0.0613                     # the paper's number (or true/false for a qualitative claim)
      tolerance: 0.00005                # |reproduced - paper| <= tolerance  => ok
      basis: "half a unit of the printed 4 decimals"   # where the tolerance comes from (required if > 0)
      basis_kind: printed               # what it rests on: printed | monte-carlo | float (TOLERANCE_BASES)
      note: "..."                       # context
      explained: "..."                  # why the row is known to differ (a data difference, a paper typo ...)
      evidence: {fn: missing_topics, missing: 2}   # the function of irrepro.papers.<paper>.evidence backing it

An explanation is a verdict that can fail: the row is ``explained`` only when the evidence its ``evidence`` entry
names, computed from the run's inputs (:func:`attach_evidence`), meets it (:func:`evidence_meets`: the paper's
value within [evidence_low - tolerance, evidence_high + tolerance], or for a paper inconsistency ours within and
the paper's printed value outside) **and** could have failed (:func:`evidence_power`: the range, widened by the
tolerance, is no wider than |paper - ours| and does not hold the value it is not compared with). A range that
meets the explanation without that power says only that the difference is within the noise of what it varies:
the row is ``within noise``, counted apart. Otherwise, or without evidence, it is ``unexplained``. Evidence values
are never written in the reference file.

"Reproduced" has one rule: a ``check`` row's tolerance rests on the paper's printed precision, the Monte-Carlo error
of a random process of ours that the row names, or floating-point noise (``basis_kind``, :data:`TOLERANCE_BASES`),
never on a data or reading difference: such a difference is evidence (``explained`` + ``evidence``), computed,
with a range, and judged by the power rule. :func:`check_reference` refuses a check row whose tolerance declares
another basis (or none), so neither :func:`load_reference` nor :func:`verify_paper` runs with one.

Evidence that is an estimate (a mean of ratios, a resampled value) returns its standard error ``se`` beside its
range; :func:`attach_evidence` widens the range by :data:`EVIDENCE_SE_K` standard errors on each side before the
power rule sees it (:func:`widen_by_se`), so a point estimate whose noise reaches our value explains nothing.

A row may give ``tolerance_se: k``: the tolerance is then k times the standard error that the reproduced value
carries (``{"value": x, "se": s}``, k s.e. of our own Monte-Carlo replicates) plus the row's ``tolerance`` if any
(e.g. half a unit of the printed precision).

The paper's scripts compute ``reproduced``: a mapping ``item -> value`` (a number, a bool, None for a cell that
could not be computed, or a dict with ``value`` and ``note``/``data``/``se``). :func:`build_verify_table` joins
them into :data:`VERIFY_COLUMNS` with a ``verdict`` per row (:func:`row_verdict`, VERDICTS_TEXT); :func:`scorecard`
counts the verdicts.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import pandas as pd
import yaml

from irrepro.errors import InputError

VERIFY_COLUMNS = ["item", "kind", "data", "paper", "reproduced", "difference", "tolerance", "basis", "ok", "verdict",
                  "evidence_low", "evidence_high", "evidence", "note"]
# check: an independent comparison of ours with the paper's number that can fail (counted); cross-check: our
# computation against another implementation on our own data (counted apart, never "reproduced"); key: used to
# match data, never evidence (its ok is shown, never counted); claim: a qualitative statement of the paper tested
# on our data (counted apart); info: context, no verdict.
KINDS = ("check", "cross-check", "key", "claim", "info")
#: how a row's ``explained`` text is introduced in its note, by the verdict the row earned: only an explained row
#: says "explained"; the others say the explanation was offered and what became of it
EXPLANATION_PREFIX = {"explained": "explained: ", "within noise": "offered explanation, within noise only: ",
                      "paper inconsistent": "paper inconsistent: ",
                      "unexplained": "offered explanation, not met by its evidence: "}
# The verdict of a row (column ``verdict``), one per kind of row; see :func:`row_verdict` and VERDICTS_TEXT.
REPRODUCED, EXPLAINED_V, UNEXPLAINED, NOT_REPRODUCIBLE = "reproduced", "explained", "unexplained", "not reproducible"
WITHIN_NOISE, PAPER_INCONSISTENT = "within noise", "paper inconsistent"
AGREES, DISAGREES, NOT_COMPUTED = "agrees", "disagrees", "not computed"
HOLDS, FAILS, NOT_TESTABLE = "holds", "fails", "not testable"
#: what a ``check`` row's tolerance may rest on (its ``basis_kind``): "reproduced" means within one of these, never
#: within a data or reading difference (that is evidence, judged by the power rule)
TOLERANCE_BASES = {
    "printed": "the paper's printed precision (half a unit of its last printed digit, propagated through a formula "
               "where our cell is computed from printed numbers)",
    "monte-carlo": "the Monte-Carlo error of a random process of ours that the row names (k s.e. of our replicates, "
                   "tolerance_se, with at most a printed half unit beside it)",
    "float": "floating-point noise",
}
#: standard errors on each side by which an estimate's evidence range is widened (:func:`widen_by_se`)
EVIDENCE_SE_K = 2.0
# what evidence is compared with: the paper's number (a reading, a data difference, a copied cell) or ours (a paper
# inconsistency: the paper's own inputs under its own formula give our number, not its printed one)
AGAINST = ("paper", "reproduced", "paper_bound")
SCORECARD_COLUMNS = ["paper", "checks", "reproduced", "explained", "within_noise", "paper_inconsistent", "unexplained",
                     "not_reproducible",
                     "cross_checks", "cross_checks_agree", "claims", "claims_hold", "claims_not_testable", "keys",
                     "info"]
VERDICTS_TEXT = (
    "Each `check` row (a number of the paper against ours) earns one verdict:\n\n"
    "- **reproduced**: |ours - paper| <= the row's tolerance (its `basis` says where the tolerance comes from).\n"
    "- **explained**: not reproduced, but the row's explanation is backed by a number computed by code of the "
    "paper's package from this run's inputs (`evidence_low`..`evidence_high`; `evidence` says how), and that number "
    "meets it: for an alternative reading, a data difference (the range the difference can cause, measured by "
    "resampling the public data) or a copied cell, the paper's value lies in [evidence_low - tolerance, "
    "evidence_high + tolerance]; for a paper inconsistency (the value the paper's own printed inputs give under its "
    "own formula), ours lies in that interval and the paper's printed value does not; and the evidence could have "
    "failed: the interval is no wider than the difference |ours - paper| and does not hold the other value (ours "
    "when it is compared with the paper's, the paper's when compared with ours).\n"
    "- **within noise**: the evidence's interval holds the value it is compared with but could not have failed: it "
    "is wider than the difference it would explain, or it holds ours as well as the paper's. The difference is "
    "within the noise of what the evidence varies (topic subsets, tie orders, resampled runs); that is not a "
    "cause. Counted apart from explained and from reproduced.\n"
    "- **paper inconsistent**: not reproduced, and a proof computed from the paper's own printed numbers and "
    "definitions alone (never from ours) confines the cell to [evidence_low, evidence_high], which the printed "
    "value lies outside: no data could give it. The proof is in the row's `evidence`.\n"
    "- **unexplained**: not reproduced, and no computed evidence meets the explanation (a note alone never "
    "explains).\n"
    "- **not reproducible**: no value of ours (the data is not public, or the cell could not be computed).\n\n"
    "`cross-check` rows compare our computation with another implementation on our own data (e.g. our DCG@10 "
    "against ir_measures): they **agree** or **disagree** and are counted apart, never as reproduced. `claim` rows "
    "(a qualitative statement of the paper tested on our data) **hold** or **fail**, counted apart; a claim we have "
    "no data to test (its data are not public) is **not testable**, never a failure. `key` rows "
    "(used to match data) and `info` rows (context) get no verdict.\n")


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
        for k in ("evidence_low", "evidence_high"):
            if k in row:
                raise InputError(f"item {row['item']!r}: {k} is computed from the run's inputs by the evidence "
                                 "function the row names (evidence: {fn: ...}), never written in the reference",
                                 path=where)
        ev = row.get("evidence")
        if ev is not None and not (isinstance(ev, Mapping) and isinstance(ev.get("fn"), str)):
            raise InputError(f"item {row['item']!r}: evidence must be a mapping with 'fn' (the name of an evidence "
                             f"function of the paper's package) and its arguments, got {ev!r}", path=where)
        if ev is not None and not row.get("explained"):
            raise InputError(f"item {row['item']!r}: evidence without an 'explained' text (say what it shows)",
                             path=where)
        tol = row.get("tolerance", 0) or 0
        if isinstance(row["paper"], bool):  # a true/false claim has no tolerance
            continue
        has_tol = tol > 0 or bool(row.get("tolerance_se"))
        if kind in ("check", "cross-check", "claim") and has_tol and not row.get("basis"):
            raise InputError(f"item {row['item']!r}: tolerance {row.get('tolerance', '')}"
                             f"{' tolerance_se ' + str(row['tolerance_se']) if row.get('tolerance_se') else ''}"
                             " without a 'basis' (say where it comes from: the paper's printed precision, k s.e. "
                             "of our replicates, floating-point noise)", path=where)
        if kind == "check" and has_tol:
            check_tolerance_basis(row, where)


def check_tolerance_basis(row: Mapping[str, Any], where="reference") -> None:
    """Raise ``InputError`` (naming ``where`` and the item) unless a ``check`` row's tolerance rests on one of
    :data:`TOLERANCE_BASES` (its ``basis_kind``): a ``tolerance_se`` is Monte-Carlo error, and a basis that names a
    data or reading difference is refused whatever kind it declares. A difference the paper's data or reading
    causes is evidence (``explained`` + ``evidence: {fn: ...}``), never a tolerance that turns it into a match."""
    item, kind = row["item"], row.get("basis_kind")
    if kind not in TOLERANCE_BASES:
        raise InputError(f"item {item!r}: tolerance with basis_kind {kind!r}: a check's tolerance rests on the "
                         "paper's printed precision (printed), the Monte-Carlo error of a random process of ours "
                         "that the row names (monte-carlo) or floating-point noise (float); a data or reading "
                         "difference is evidence (explained: ..., evidence: {fn: ...}), never a tolerance",
                         path=where)
    if row.get("tolerance_se") and kind != "monte-carlo":
        raise InputError(f"item {item!r}: tolerance_se (k s.e. of our replicates) is Monte-Carlo error: "
                         f"basis_kind monte-carlo, not {kind!r}", path=where)
    text = str(row.get("basis", "")).lower()
    for words in ("data difference", "reading difference", "inferred"):
        if words in text:
            raise InputError(f"item {item!r}: the tolerance's basis names a {words!r} ({row.get('basis')!r}): a "
                             "data or reading difference is evidence (explained: ..., evidence: {fn: ...}), never "
                             "a tolerance", path=where)


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


def row_verdict(kind: str, ok: bool | None, has_value: bool, explained: bool = False,
                evidence: Mapping[str, Any] | None = None, paper=None, reproduced=None, tol=None) -> str:
    """The verdict of one row (see VERDICTS_TEXT): ``check`` rows are reproduced (``ok``), not reproducible (no
    value), explained (an ``explained`` row whose computed ``evidence`` ``{"low", "high", "against"}`` meets it,
    :func:`evidence_meets`, with the power to have failed, :func:`evidence_power`), within noise (it meets it
    without that power) or unexplained; ``cross-check`` rows agree / disagree / not computed; ``claim`` rows
    hold / fail / not testable (no value: its data are not public); ``key`` and ``info`` rows none ("")."""
    if kind in ("key", "info"):
        return ""
    if kind == "claim":
        return NOT_TESTABLE if not has_value else HOLDS if ok else FAILS
    if kind == "cross-check":
        return NOT_COMPUTED if not has_value else AGREES if ok else DISAGREES
    if ok:
        return REPRODUCED
    if not has_value:
        return NOT_REPRODUCIBLE
    if explained and evidence and evidence.get("against") == "paper_bound":
        return PAPER_INCONSISTENT if paper_outside_bound(evidence, paper) else UNEXPLAINED
    if explained and evidence_meets(evidence, paper, reproduced, tol):
        return EXPLAINED_V if evidence_power(evidence, paper, reproduced, tol) == "" else WITHIN_NOISE
    return UNEXPLAINED


def _bounds(evidence: Mapping[str, Any] | None) -> tuple[float, float] | None:
    """``(low, high)`` of computed evidence, or None when there is none or either is not a finite number."""
    if not evidence:
        return None
    lo, hi = evidence.get("low"), evidence.get("high")
    if not (_is_number(lo) and _is_number(hi)) or not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    return float(lo), float(hi)


def evidence_meets(evidence: Mapping[str, Any] | None, paper, reproduced, tol=None) -> bool:
    """Whether computed evidence backs an explanation (pure). ``evidence["against"] == "paper"`` (a reading, a
    data difference, a copied cell): the paper's value lies in [low - tol, high + tol]. ``"reproduced"`` (a paper
    inconsistency: the value its own printed inputs give): ours lies in that interval and the paper's does not.
    No evidence, or a low/high that is not a finite number: False."""
    bounds = _bounds(evidence)
    if bounds is None or not _is_number(paper):
        return False
    lo, hi = bounds
    t = float(tol or 0.0) + 1e-12

    def inside(x):
        return _is_number(x) and lo - t <= float(x) <= hi + t
    if evidence.get("against", "paper") == "reproduced":
        return inside(reproduced) and not inside(paper)
    return inside(paper)


def paper_outside_bound(evidence: Mapping[str, Any] | None, paper) -> bool:
    """Whether the paper's printed value lies outside the bound [low, high] that a proof from the paper's own printed
    numbers and definitions gives (``against: paper_bound``; the proof widens it by the printed numbers' rounding
    itself, so no tolerance is added). Not a number, or no finite bound: False."""
    bounds = _bounds(evidence)
    if bounds is None or not _is_number(paper):
        return False
    return not (bounds[0] - 1e-12 <= float(paper) <= bounds[1] + 1e-12)


def evidence_power(evidence: Mapping[str, Any] | None, paper, reproduced, tol=None) -> str:
    """Why evidence that meets an explanation could not have failed (pure; ``""`` when it could). Its range
    [low - tol, high + tol] must be no wider than the difference |paper - ours| it explains, and must not hold the
    value it is not compared with: ours when it is compared with the paper's value (a range that holds both says
    the two are within the same noise, not that the stated cause moved ours to the paper's), the paper's when
    compared with ours (already required by :func:`evidence_meets`)."""
    bounds = _bounds(evidence)
    if bounds is None or not (_is_number(paper) and _is_number(reproduced)):
        return "no numbers to compare"
    lo, hi = bounds
    t = float(tol or 0.0)
    width, gap = (hi + t) - (lo - t), abs(float(paper) - float(reproduced))
    why = []
    if width > gap + 1e-12:
        why.append(f"its range ({width:.4g} wide with the tolerance) is wider than the difference it explains "
                   f"({gap:.4g})")
    other = reproduced if evidence.get("against", "paper") == "paper" else paper
    if lo - t - 1e-12 <= float(other) <= hi + t + 1e-12:
        why.append(f"it holds {'ours' if other is reproduced else 'the paper’s value'} ({float(other):.4g}) too")
    return "; ".join(why)


def widen_by_se(evidence: Mapping[str, Any], k: float = EVIDENCE_SE_K) -> dict:
    """Evidence that is an estimate (``se``: the standard error of the estimate, in the cell's units) with its range
    widened by ``k`` standard errors on each side, said in ``how``; evidence without ``se`` (a proof, an enumeration
    of readings, a deterministic recomputation) is returned as it is. A negative or non-finite ``se`` is an
    ``InputError``: an estimate whose noise is unknown cannot back an explanation."""
    ev = dict(evidence)
    if "se" not in ev or "error" in ev:
        return ev
    se = ev["se"]
    if not _is_number(se) or not math.isfinite(se) or se < 0:
        raise InputError(f"evidence se {se!r}: the standard error of an estimate is a finite number >= 0")
    if _bounds(ev) is None:
        return ev
    ev["low"], ev["high"] = float(ev["low"]) - k * float(se), float(ev["high"]) + k * float(se)
    ev["how"] = _join(ev.get("how", ""), f"± {k:g} s.e. of the estimate ({float(se):.3g}): "
                                         f"{ev['low']:.6g}-{ev['high']:.6g}")
    return ev


def attach_evidence(reference: list[Mapping[str, Any]], registry: Mapping[str, Any], data: Mapping[str, Any],
                    values: Mapping[str, Any] | None = None) -> list[dict]:
    """Compute the evidence of every reference row that names one (``evidence: {fn: name, <args>}``): the
    function ``registry[name](row, data, values, **args)`` of the paper's package returns ``{"low", "high",
    "how", "against"}`` from this run's inputs ``data`` (matrices, tables) and computed ``values``. The result is
    the row's ``evidence_result``; an unknown name or an ``InputError`` of the function is kept as
    ``{"error": reason}`` (the row is then unexplained, with the reason in its note), never raised away silently.
    An estimate's range is widened by its standard error (:func:`widen_by_se`) before any verdict reads it."""
    out = []
    for ref in reference:
        r = dict(ref)
        spec = r.get("evidence")
        if spec:
            args = {k: v for k, v in spec.items() if k != "fn"}
            fn = registry.get(spec["fn"])
            if fn is None:
                r["evidence_result"] = {"error": f"no evidence function {spec['fn']!r} "
                                                 f"(known: {', '.join(sorted(registry)) or 'none'})"}
            else:
                try:
                    r["evidence_result"] = widen_by_se(fn(r, data or {}, values or {}, **args))
                except InputError as e:
                    r["evidence_result"] = {"error": f"evidence {spec['fn']} not computed: {e}"}
        out.append(r)
    return out


def _explanation(ref: Mapping[str, Any], verdict: str) -> str:
    """The row's ``explained`` text introduced by the verdict it earned (:data:`EXPLANATION_PREFIX`)."""
    text = ref.get("explained")
    if not text:
        return ""
    return EXPLANATION_PREFIX.get(verdict, "offered explanation: ") + str(text)


def build_verify_table(reference: list[Mapping[str, Any]], reproduced: Mapping[str, Any]) -> pd.DataFrame:
    """Compare reference rows with reproduced values; one output row per reference row, in reference order.

    Every reference row appears: one with no reproduced value (absent, None or NaN: a cell that could not be
    computed) has ``reproduced`` empty, ``ok = False`` and the reason in ``note`` (the value's own note, else
    "not reproduced"). Numeric rows are ok when ``|reproduced - paper| <= tolerance`` (0 if absent, i.e. exact;
    ``tolerance_se: k`` = k times the value's ``se``). Boolean rows (qualitative claims) are ok when the claim as
    reproduced equals the paper's. ``info`` rows get no verdict (``ok`` empty). A row's ``explained`` text is
    put first in its note, introduced by the verdict it earned (:data:`EXPLANATION_PREFIX`: ``explained: ...``
    only for an explained row); its computed evidence (``evidence_result``, see
    :func:`attach_evidence`) fills ``evidence_low``, ``evidence_high`` and ``evidence``, and ``verdict`` is
    :func:`row_verdict`: an explanation without evidence that meets it is unexplained. Reproduced items without a
    reference row are appended as ``info`` with an empty paper value so nothing computed is hidden.
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
        note = ref.get("note", "") or ""
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
        ev = ref.get("evidence_result")
        ev_cols = [None, None, ""]
        if ref.get("explained") and kind == "check":
            if ev and "error" not in ev:
                against = {"reproduced": "ours", "paper_bound": "the paper's printed value (a proof from the "
                           "paper's own numbers)"}.get(ev.get("against"), "the paper's value")
                ev_cols = [ev.get("low"), ev.get("high"), _join(ev.get("how", ""), f"compared with {against}")]
            else:
                ev_cols[2] = (ev or {}).get("error") or "no evidence computed for this explanation"
        has_value = not (val is None or (_is_number(val) and math.isnan(val)))
        if not has_value:
            ok = None if kind == "info" else False
            verdict = row_verdict(kind, False, False)
            rows.append([item, kind, data, paper, None, None, tol, basis, ok, verdict, *ev_cols,
                         _join(_explanation(ref, verdict), note, "" if isinstance(reproduced.get(item), Mapping)
                               and reproduced[item].get("note") else "not reproduced")])
            continue
        if isinstance(paper, bool) or isinstance(val, bool):
            ok = bool(val) == bool(paper)
            val, diff, tol = bool(val), None, None
        elif _is_number(paper) and _is_number(val):
            diff = float(val) - float(paper)
            ok = tol is not None and abs(diff) <= float(tol) + 1e-12
            val = float(val)
        else:
            ok, diff = str(val) == str(paper), None
        verdict = row_verdict(kind, ok, True, bool(ref.get("explained")), ev, paper, val, tol)
        if verdict == WITHIN_NOISE:
            ev_cols[2] = _join(ev_cols[2], "within the noise of what it varies, not a cause: "
                               + evidence_power(ev, paper, val, tol))
        rows.append([item, kind, data, paper, val, diff, tol, basis, None if kind == "info" else ok, verdict,
                     *ev_cols, _join(_explanation(ref, verdict), note)])
    for item, val in reproduced.items():
        if item in seen:
            continue
        note, data = "no paper value", ""
        if isinstance(val, Mapping):
            data = val.get("data", "")
            note = _join(val.get("note", ""), note)
            val = val.get("value")
        rows.append([item, "info", data, None, val, None, None, "", None, "", None, None, "", note])
    return pd.DataFrame(rows, columns=VERIFY_COLUMNS)


def _truth(x) -> bool | None:
    """``ok`` as written to / read back from a CSV: True, False or None (empty)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    if isinstance(x, str):
        return {"true": True, "false": False}.get(x.strip().lower())
    return bool(x)


def scorecard(table: pd.DataFrame, paper: str = "") -> dict:
    """Counts of one verify table (pure; the table as built or as read back from ``verify.csv``), from its
    ``verdict`` column (:func:`row_verdict`): over ``check`` rows ``reproduced``, ``explained`` (computed evidence
    meets the explanation and could have failed), ``within_noise`` (it meets it without that power),
    ``unexplained`` and ``not_reproducible``; ``cross_checks`` / ``cross_checks_agree``,
    ``claims`` / ``claims_hold`` apart; ``keys`` and ``info`` rows are never counted as evidence."""
    kind = table["kind"].fillna("check") if "kind" in table else pd.Series("check", index=table.index)
    v = table["verdict"].fillna("").astype(str) if "verdict" in table else pd.Series("", index=table.index)
    chk, xc, cl = kind.eq("check"), kind.eq("cross-check"), kind.eq("claim")
    return {"paper": paper, "checks": int(chk.sum()),
            "reproduced": int((chk & v.eq(REPRODUCED)).sum()),
            "explained": int((chk & v.eq(EXPLAINED_V)).sum()),
            "within_noise": int((chk & v.eq(WITHIN_NOISE)).sum()),
            "paper_inconsistent": int((chk & v.eq(PAPER_INCONSISTENT)).sum()),
            "unexplained": int((chk & v.eq(UNEXPLAINED)).sum()),
            "not_reproducible": int((chk & v.eq(NOT_REPRODUCIBLE)).sum()),
            "cross_checks": int(xc.sum()), "cross_checks_agree": int((xc & v.eq(AGREES)).sum()),
            "claims": int(cl.sum()), "claims_hold": int((cl & v.eq(HOLDS)).sum()),
            "claims_not_testable": int((cl & v.eq(NOT_TESTABLE)).sum()),
            "keys": int(kind.eq("key").sum()), "info": int(kind.eq("info").sum())}


def scorecard_line(c: Mapping[str, Any]) -> str:
    """One line of a :func:`scorecard`: what can fail, and how it came out."""
    return (f"{c['checks']} checks: {c['reproduced']} reproduced, {c['explained']} explained, "
            f"{c.get('within_noise', 0)} within noise, {c.get('paper_inconsistent', 0)} paper inconsistent, "
            f"{c['unexplained']} unexplained, {c['not_reproducible']} not reproducible; "
            f"{c['cross_checks_agree']} of {c['cross_checks']} cross-checks agree; "
            f"{c['claims_hold']} of {c['claims'] - c.get('claims_not_testable', 0)} testable claims hold"
            + (f", {c['claims_not_testable']} not testable" if c.get("claims_not_testable") else ""))


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
                 context: Mapping[str, Any] | None = None, data: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """The verify table of one paper: its ``prepare`` hook (``irrepro.papers.<paper>.verify.prepare(reference,
    values, context) -> (reference, values)``, if the paper has one: matching anonymised systems, expanding
    templated rows ...), then the evidence of its explained rows (:func:`attach_evidence` with the registry
    ``irrepro.papers.<paper>.evidence.EVIDENCE``, if any, on ``data``: the run's inputs the evidence is computed
    from, plus ``reference``, the paper's rows as given), then :func:`build_verify_table`."""
    import importlib

    def module(name):
        try:
            return importlib.import_module(f"irrepro.papers.{paper}.{name}")
        except ModuleNotFoundError as e:
            if not f"irrepro.papers.{paper}.{name}".startswith(str(e.name)):
                raise
            return None

    check_reference(list(reference), f"reference of {paper}")
    data = {"reference": list(reference), **(data or {})}  # the paper's printed numbers, before any hook
    hook = module("verify")
    if hook is not None:
        reference, values = hook.prepare(list(reference), dict(values), dict(context or {}))
    ev = module("evidence")
    reference = attach_evidence(list(reference), getattr(ev, "EVIDENCE", {}), data, values)
    return build_verify_table(reference, values)


def summary_markdown(tables: Mapping[str, pd.DataFrame], counts: pd.DataFrame) -> str:
    """``results/<version>/verify.md``: what each verdict means and how a row earns it (VERDICTS_TEXT), the
    scorecard of every paper, then per paper its one-line scorecard and every ``check`` row that is not
    reproduced (explained ones with their evidence), every cross-check that disagrees and every claim that fails."""
    out = ["# Verify: the papers' numbers against ours\n", VERDICTS_TEXT, to_markdown(counts), ""]
    for paper, t in tables.items():
        c = counts.set_index("paper").loc[paper].to_dict() | {"paper": paper}
        kind = t["kind"].fillna("check")
        v = t["verdict"].fillna("").astype(str)
        bad = t[(kind.eq("check") & ~v.eq(REPRODUCED)) | (kind.eq("cross-check") & ~v.eq(AGREES))
                | (kind.eq("claim") & ~v.eq(HOLDS))]
        out.append(f"## {paper}\n\n{scorecard_line(c)} (`{paper}/verify.csv`).\n")
        out.append(to_markdown(bad) if len(bad) else "Every check reproduced, every cross-check agrees and every "
                   "claim holds.\n")
    return "\n".join(out)
