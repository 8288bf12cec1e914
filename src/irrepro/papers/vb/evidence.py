"""Evidence behind VB-Score's explained verify rows (``workflow/resources/reference/vb.yaml``): functions called by
:func:`irrepro.core.verify.attach_evidence` as ``fn(row, data, values, **arguments)``; ``data["document"]`` is the
parsed reference file, whose ``case_studies`` are the paper's own Sec. 5 inputs.

* :func:`case_study_reading` (the declared reading of Sec. 5's numbers, ``readings.case_studies`` of the reference
  file, one instance for every case-study cell): VB_alpha of a Sec. 5 system under that reading, recomputed from
  the paper's inputs; low = high.
"""
from __future__ import annotations

from irrepro.errors import InputError
from irrepro.papers.vb.vbscore import coverage_case

READING_VALUES = {"ES": 0.0, "VB_1": 1.0}


def case_study_reading(row, data, values, case: str, system: str):
    """The Sec. 5 cell of ``system`` in case study ``case`` under the reference file's declared reading
    ``readings.case_studies`` (``value``: ``ES`` = VB_0 or ``VB_1``; ``gains``: ``binary``), from the paper's ``pi``,
    ``intents`` and ``covers``. The reading is the file's, never the row's: a row cannot pick its own alpha or
    gains, and a system with DCG gains (``dcg_order``) is refused under binary gains."""
    doc = data.get("document") or {}
    reading = (doc.get("readings") or {}).get("case_studies")
    if not reading or reading.get("value") not in READING_VALUES or reading.get("gains") != "binary" \
            or not reading.get("source"):
        raise InputError("the reference file declares no reading of the case studies (readings.case_studies with "
                         f"value {' or '.join(READING_VALUES)}, gains binary and its source), got {reading!r}")
    spec = (doc.get("case_studies") or {}).get(case)
    if spec is None or system not in spec.get("systems", {}):
        raise InputError(f"no case study {case!r} / system {system!r} in the reference file's case_studies")
    s = spec["systems"][system]
    if s.get("dcg_order"):
        raise InputError(f"{case}/{system} has DCG gains ({' > '.join(s['dcg_order'])}); the declared reading uses "
                         "binary gains for every case-study cell")
    alpha = READING_VALUES[reading["value"]]
    r = coverage_case(spec["pi"], spec["intents"], s["covers"], [alpha])
    v = float(r["ES"] if alpha == 0 else r[f"VB_{alpha:g}"])
    return {"low": v, "high": v, "against": "paper",
            "how": f"{reading['value']} of {case}/{system} under the declared reading (binary gains, pi "
                   f"{spec['pi']}; {reading['source'].split(';')[0]}) = {v:.4g}"}


EVIDENCE = {"case_study_reading": case_study_reading}
