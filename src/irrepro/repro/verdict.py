"""Regression verdicts for a reproduced score: OK, OKish or FAIL, as Anserini's regressions and Pyserini's two-click
reproductions (2CR) print them.

What they do (source read: castorini/pyserini ``pyserini/2cr/_base.py``, ``msmarco.py``, ``beir.py``, ``miracl.py``;
castorini/anserini ``src/main/python/run_regression.py``):

* the reproduced score is trec_eval's aggregate rounded to 4 decimals (``round(float(score), 4)``; Anserini rounds
  both sides to the metric's ``metric_precision``, 4 in its YAML files) and the expected score is stored with 4
  decimals;
* **OK** when the two are equal (``math.isclose``, relative tolerance 1e-9, i.e. equal at 4 decimals);
* **OKish** when they differ by at most 0.0005 (Pyserini 2CR: "If results are within 0.0005, just call it OKish";
  its MS MARCO, M-BEIR and MMEB runners also call a reproduced score *above* the expected one OKish, which
  ``higher_is_okish`` turns on; Anserini prints OK* within 0.001 with ``--lucene8`` and FAILs otherwise);
* **FAIL** otherwise.

Here both scores are rounded to ``decimals`` and compared as integers in units of the last decimal, so a difference
of exactly the tolerance is OKish. Pyserini compares the rounded floats, and ``abs(0.3461 - 0.3456)`` is
0.0005000000000000004 > 0.0005: it calls most (about 73% of) exact 0.0005 differences FAIL, against its stated rule.
"""
from __future__ import annotations

import math

#: decimals both scores are rounded to before comparing: trec_eval prints 4, Pyserini rounds to 4, Anserini's
#: regression files give ``metric_precision: 4``
DECIMALS = 4
#: largest |reproduced - original| (after rounding) that is still OKish: Pyserini 2CR's 0.0005, half a unit in the
#: 3rd decimal, i.e. 5 units in the 4th
OKISH_TOLERANCE = 0.0005
#: Anserini's more lenient bound (``is_close_lucene8``, 0.001) for runs on indexes of an older Lucene; pass it as
#: ``tolerance`` to judge such runs
ANSERINI_LUCENE8_TOLERANCE = 0.001

OK, OKISH, FAIL = "OK", "OKish", "FAIL"


def _units(x: float, decimals: int) -> int:
    """x rounded to ``decimals`` (Python's ``round``, as Pyserini), as an integer count of 10**-decimals."""
    return int(round(round(x, decimals) * 10 ** decimals))


def regression_verdict(original: float, reproduced: float, *, decimals: int = DECIMALS,
                       tolerance: float = OKISH_TOLERANCE, higher_is_okish: bool = False) -> str:
    """"OK", "OKish" or "FAIL" for a reproduced aggregate score against the original (expected) one.

    OK: both round to the same value at ``decimals`` decimals. OKish: the rounded values differ by at most
    ``tolerance`` (:data:`OKISH_TOLERANCE` = 0.0005 by default), or, with ``higher_is_okish``, the reproduced score
    is higher. FAIL: otherwise, and whenever a score is NaN or infinite (nothing was reproduced).
    """
    if not (math.isfinite(original) and math.isfinite(reproduced)):
        return FAIL
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance}")
    diff = _units(reproduced, decimals) - _units(original, decimals)
    if diff == 0:
        return OK
    # whole units of the last decimal within the tolerance (the slack absorbs 0.0005 * 1e4 = 5.000000000000001)
    if abs(diff) <= math.floor(tolerance * 10 ** decimals + 1e-9) or (higher_is_okish and diff > 0):
        return OKISH
    return FAIL
