"""Evidence behind VB-Score's explained verify rows (``workflow/resources/reference/vb.yaml``): functions called by
:func:`irrepro.core.verify.attach_evidence` as ``fn(row, data, values, **arguments)``; ``data["document"]`` is the
parsed reference file, whose ``case_studies`` are the paper's own Sec. 5 inputs.

* :func:`case_study_reading` (an alternative reading): VB_alpha of a Sec. 5 system at another alpha (e.g. the
  text's number read as ES = VB_0), recomputed from the paper's inputs; low = high.
"""
from __future__ import annotations

from irrepro.errors import InputError
from irrepro.papers.vb.vbscore import coverage_case


def case_study_reading(row, data, values, case: str, system: str, alpha: float):
    """VB_``alpha`` of ``system`` in the Sec. 5 case study ``case`` (binary gains, or the DCG gains of its
    ``dcg_order``), from the paper's ``pi``, ``intents`` and ``covers`` in the reference file."""
    spec = ((data.get("document") or {}).get("case_studies") or {}).get(case)
    if spec is None or system not in spec.get("systems", {}):
        raise InputError(f"no case study {case!r} / system {system!r} in the reference file's case_studies")
    s = spec["systems"][system]
    r = coverage_case(spec["pi"], spec["intents"], s["covers"], [alpha], s.get("dcg_order"))
    v = float(r["ES"] if alpha == 0 else r[f"VB_{alpha:g}"])
    gain = f"DCG gains, order {' > '.join(s['dcg_order'])}" if s.get("dcg_order") else "binary gains"
    return {"low": v, "high": v, "against": "paper",
            "how": f"VB_{alpha:g} of {case}/{system} ({gain}, pi {spec['pi']}) = {v:.4g}"}


EVIDENCE = {"case_study_reading": case_study_reading}
