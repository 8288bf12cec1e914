"""The verify items of P4 computed from per-topic tables (written by rule vb_checks as a values file), and the
hook of the generic verify rule.

* E1 (Appendix E): ES(Q, S@k) is nondecreasing in k, for every system, topic and prior (tolerance 1e-12);
* the intent-aware checks: mean alpha-nDCG@20 / ERR-IA@20 of each run (not from the paper: cross-checks of
  ir_measures + pyndeval against values computed with TREC's ndeval).
"""
from __future__ import annotations

import numpy as np
import pandas as pd


def e1_claims(per_topic: pd.DataFrame, collection: str) -> dict:
    """``claim/E1/ES_nondecreasing_in_k/<gain>`` from the per-topic scores (alpha = the smallest; ES does not
    depend on alpha), with the number of system-topic-prior rows that decrease somewhere in k."""
    pt = per_topic[per_topic.alpha == per_topic.alpha.min()]
    items = {}
    for gain, d in pt.groupby("gain"):
        w = d.pivot_table(index=["system", "topic", "prior"], columns="k", values="es")
        n_bad = int((np.diff(w.to_numpy(), axis=1) < -1e-12).any(axis=1).sum())
        items[f"claim/E1/ES_nondecreasing_in_k/{gain}"] = {
            "value": n_bad == 0,
            "data": f"{collection} diversity qrels, {d.system.nunique()} runs, k in {list(w.columns)}",
            "note": f"{n_bad} of {len(w)} system-topic-prior rows decrease somewhere in k"}
    return items


def intent_aware_checks(ia: pd.DataFrame, collection: str) -> dict:
    """``check/<collection>/<system>/<measure>``: the mean over topics of each intent-aware measure."""
    return {f"check/{collection}/{system}/{measure}": float(d.value.mean())
            for (system, measure), d in ia.groupby(["system", "measure"])}


def prepare(reference_rows: list, values: dict, context: dict) -> tuple[list, dict]:
    """Hook of the generic verify rule: P4's values need no adjustment (every item is computed upstream)."""
    return reference_rows, values
