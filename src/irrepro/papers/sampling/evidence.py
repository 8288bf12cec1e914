"""Evidence behind the sampling paper's explained verify rows (``workflow/resources/reference/sampling.yaml``):
functions called by :func:`irrepro.core.verify.attach_evidence` as ``fn(row, data, values, **arguments)``.
``data["tables"]`` holds the tables the verify rule reads for them (``ci_halfwidth_readings``: the half-width of
every reading of Eq. 6, rule ``sampling_halfwidth_readings``); ``data["reference"]`` the paper's printed rows.

* :func:`table3_sd_ratio` (a data difference in SYNTH's z-variance, measured by the paper's own Table 3): our
  Table 4 half-width times the mean ratio of the paper's Table 3 sd of U-hat under Q* to our expected sd; low =
  high.
* :func:`shift_bound`, :func:`shallow_shift_bound` (``against: paper_bound``): proofs from the paper's printed
  numbers and definitions alone that bound SHIFT-5's cells; a printed value outside makes the row "paper
  inconsistent".
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
    x = np.array(list(ratios.values()))
    r = float(x.mean())
    # the mean of the per-system ratios is an estimate: its standard error (sd / sqrt(systems)) goes with it, and
    # irrepro.core.verify widens the range by it before judging; one system leaves its noise unknown
    se_r = float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else float("nan")
    if not np.isfinite(se_r):
        raise InputError("one system's ratio: the mean ratio's standard error is unknown (needs two or more)")
    v = float(ours) * r
    each = ", ".join(f"{s} {x:.3f}" for s, x in ratios.items())
    return {"low": v, "high": v, "se": float(ours) * se_r, "against": "paper",
            "how": f"ours {float(ours):.4f} x {r:.4f} (s.e. {se_r:.4f}), the mean over {len(ratios)} systems of the "
                   f"paper's Table 3 sd under Q* / our expected sd ({each})"}


def _printed(data, item):
    v = _paper(data, item)
    if v is None:
        raise InputError(f"no reference row {item!r} (the paper's printed value this proof reads)")
    return v


def _shift(item):
    col, _, system = item.partition("/")
    if not system.startswith("SHIFT-"):
        raise InputError(f"{item!r}: a SHIFT-m bound concerns a SHIFT-m system")
    return col, int(system.removeprefix("SHIFT-"))


def shallow_shift_bound(row, data, values, further: int = 7, depth: int = 5, rounding: float = 0.005):
    """A proof from the paper alone that ``shallow/SHIFT-m`` is at most the printed ``shallow/SHIFT-<further>``
    (``further`` > m >= ``depth``, the judged top ``depth`` = n/|X| of each ranking). SHIFT-k puts OPT's last k
    items first, in OPT's order, so its top ``depth`` are OPT's positions N-k+1 .. N-k+depth; for every user and
    rank r <= depth, SHIFT-<further>'s item sits ``further`` - m places higher in OPT than SHIFT-m's, and OPT is
    sorted by grade, so its gain is at least as large, at the same discount. Hence ShallowPool(SHIFT-m) <=
    ShallowPool(SHIFT-<further>) for every gain that does not fall with the grade; the printed value of the latter
    plus its ``rounding`` (half a printed unit) bounds the former. Reads only the paper's printed numbers."""
    col, m = _shift(row["item"])
    if col != "shallow" or not depth <= m < further:
        raise InputError(f"{row['item']!r}: the ShallowPool bound needs shallow/SHIFT-m with {depth} <= m < {further}")
    hi = _printed(data, f"shallow/SHIFT-{further}") + rounding
    return {"low": 0.0, "high": hi, "against": "paper_bound",
            "how": f"proof from the paper: OPT sorted by grade and SHIFT-k rotating OPT's last k items to the top give "
                   f"ShallowPool(SHIFT-{m}) <= ShallowPool(SHIFT-{further}) user by user (top {depth} judged); "
                   f"the paper prints the latter as {hi - rounding:.2f}, so the cell is at most {hi:.3f}"}


def shift_bound(row, data, values, further: int = 7, users: int = 6000, gain_max: float = 4.0, trials: int = 100,
                k_se: float = 3.0, depth: int = 5, rounding: float = 0.005):
    """A proof from the paper alone that U(SHIFT-m) (``true/SHIFT-m``; ``deep_mean`` and ``u_hat_mean``, unbiased
    estimates of it averaged over ``trials``, with ``k_se`` printed s.e. more) is at most
    ``(further - m)/further · U(OPT) + m/further · U(SHIFT-<further>)`` plus a slack, from the printed U(OPT) and
    U(SHIFT-<further>) (each ± ``rounding``).

    Why: DCG's discount d(r) = 1/log(r + 1) is convex in r, so for a user whose last ``further`` OPT items have
    gain 0, U(SHIFT-k) = Σ_j g_j d(j + k) is convex in k and U(SHIFT-m) lies below the chord between k = 0 and
    k = ``further``. Other users (their OPT tail not all zero) add at most ``further`` · ``gain_max`` · d(1) each
    (the tail items, at best all at rank 1), and there are at most K = ⌊(printed ShallowPool(SHIFT-<further>) +
    rounding) · ``users`` / d(1)⌋ of them: such a user's SHIFT-<further> puts a gain of at least 1 at rank 1. With
    the printed ShallowPool(SHIFT-7) = 0.00, K ≤ 20. ``gain_max``: the largest gain of a grade (4: gain = grade,
    the reading that reproduces Table 2's U(S); 15 for 2^grade − 1)."""
    col, m = _shift(row["item"])
    if col not in ("true", "deep_mean", "u_hat_mean") or not 0 < m < further:
        raise InputError(f"{row['item']!r}: the convexity bound concerns true / deep_mean / u_hat_mean of SHIFT-m, "
                         f"0 < m < {further}")
    u0, uf = _printed(data, "true/OPT"), _printed(data, f"true/SHIFT-{further}")
    chord = (further - m) / further * u0 + m / further * uf + rounding
    d1 = 1.0 / np.log(2.0)
    sp = _printed(data, f"shallow/SHIFT-{further}") + rounding
    k = int(np.floor(sp * users / d1 + 1e-9))
    slack = k * further * gain_max * d1 / users
    hi = chord + slack
    how = (f"proof from the paper: DCG's discount is convex, so U(SHIFT-{m}) <= {further - m}/{further} U(OPT) + "
           f"{m}/{further} U(SHIFT-{further}) = {chord:.3f} (printed {u0:.2f}, {uf:.2f}, ± {rounding}) for users whose "
           f"last {further} OPT items have gain 0; at most {k} users do not (ShallowPool(SHIFT-{further}) printed "
           f"{sp - rounding:.2f}), adding at most {slack:.3f}")
    if col != "true":
        sd = _printed(data, f"{col.replace('_mean', '_sd')}/SHIFT-{m}")
        extra = k_se * sd / np.sqrt(trials)
        hi += extra
        how += f"; the mean of {trials} trials of an unbiased estimate, + {k_se:g} printed s.e. ({extra:.3f})"
    return {"low": 0.0, "high": float(hi), "against": "paper_bound", "how": how + f": at most {hi:.3f}"}


def evidence_data(frames, settings) -> dict:
    """``data`` for the evidence functions: ``frames`` (name -> table read by the verify rule) as ``tables``."""
    return {"tables": dict(frames)}


EVIDENCE = {f.__name__: f for f in (table3_sd_ratio, shallow_shift_bound, shift_bound)}
