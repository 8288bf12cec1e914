"""Evidence behind the sampling paper's explained verify rows (``workflow/resources/reference/sampling.yaml``):
functions called by :func:`irrepro.core.verify.attach_evidence` as ``fn(row, data, values, **arguments)``.
``data["tables"]`` holds the tables the verify rule reads for them (``ci_halfwidth_readings``: the half-width of
every reading of Eq. 6, rule ``sampling_halfwidth_readings``); ``data["reference"]`` the paper's printed rows.

* :func:`table3_sd_ratio` (a data difference in SYNTH's z-variance, measured by the paper's own Table 3): our
  Table 4 half-width times the mean ratio of the paper's Table 3 sd of U-hat under Q* to our expected sd; low =
  high.
"""
from __future__ import annotations

import numpy as np

from irrepro.core.quantiles import norm_ppf
from irrepro.errors import InputError


def _paper(data, item):
    for r in data.get("reference") or []:
        if r["item"] == item:
            return float(r["paper"])
    return None


def table3_sd_ratio(row, data, values, level: float = 0.95):
    """``ci_halfwidth/<system>``: ours x mean over systems of (the paper's ``sd_q_star/<system>`` / our expected
    sd), our expected sd = our expected half-width (reading ``expected`` of ``ci_halfwidth_readings``: z
    sqrt(Var_Q*(z)/n), no Monte-Carlo) / the normal quantile of ``level``. The paper's half-width follows if its
    SYNTH has a larger z-variance than ours by the factor its own Table 3 shows."""
    t = (data.get("tables") or {}).get("ci_halfwidth_readings")
    if t is None:
        raise InputError("no ci_halfwidth_readings table among the verify rule's evidence inputs")
    item = row["item"]
    ours = values.get(item)
    ours = ours.get("value") if isinstance(ours, dict) else ours
    if ours is None:
        raise InputError(f"{item!r}: no half-width of ours to scale")
    q = float(norm_ppf(1 - (1 - level) / 2))
    exp = t[t["reading"] == "expected"].set_index("system")["ci_halfwidth"]
    ratios = {s: _paper(data, f"sd_q_star/{s}") * q / float(h) for s, h in exp.items()
              if _paper(data, f"sd_q_star/{s}") is not None and h > 0}
    if not ratios:
        raise InputError("no system with both the paper's sd_q_star and our expected half-width")
    r = float(np.mean(list(ratios.values())))
    v = float(ours) * r
    return {"low": v, "high": v, "against": "paper",
            "how": f"ours {float(ours):.4f} x {r:.4f}, the mean over {len(ratios)} systems of the paper's Table 3 sd "
                   f"under Q* / our expected sd ({', '.join(f'{s} {x:.3f}' for s, x in ratios.items())})"}


def evidence_data(frames, settings) -> dict:
    """``data`` for the evidence functions: ``frames`` (name -> table read by the verify rule) as ``tables``."""
    return {"tables": dict(frames)}


EVIDENCE = {"table3_sd_ratio": table3_sd_ratio}
