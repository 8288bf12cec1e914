"""How far a labeler's labels reorder the systems: Kendall's τ_b and τ_AP between the rankings by labels and by
humans, with and without the systems that share the labeler's model."""
from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats

from irrepro.selfpref.bias import _paired
from irrepro.stats.rankcorr import tau_ap

AGREEMENT_COLUMNS = ["labeler", "measure", "systems", "subset", "tau", "tau_ap", "discordant"]

#: the rows of :func:`ranking_agreement`: every system, and the systems that do not share the labeler's model
SUBSETS = ("all", "without_same_model")


def _kendall(x, y):
    if len(x) < 2:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant ranking: scipy warns and gives NaN
        return float(stats.kendalltau(x, y, variant="b").statistic)


def ranking_agreement(by_humans: pd.DataFrame, by_labels: pd.DataFrame, same_model: Mapping[str, bool], *,
                      labeler: str, measures=None, collection: str | None = None) -> pd.DataFrame:
    """How far the labels reorder the systems: Kendall's τ_b and τ_AP between the ranking by mean score over
    topics by labels and by humans, with every system and without the same-model systems.

    Same inputs as :func:`self_preference_table`. Rows (:data:`AGREEMENT_COLUMNS`): ``labeler, measure, systems``
    (how many are ranked), ``subset`` (:data:`SUBSETS`: ``all`` / ``without_same_model``), ``tau``
    (``scipy.stats.kendalltau``, variant b: ties in either ranking adjust the denominator), ``tau_ap``
    (:func:`irrepro.stats.rankcorr.tau_ap` with the human ranking as the truth; ties as documented there),
    ``discordant`` (pairs ordered the other way round by labels, ties not counted). If only the same-model systems are displaced, τ rises to 1
    without them; if it stays low, the labels disagree with humans beyond self-preference. A subset of fewer than
    2 systems has NaN correlations.
    """
    ms, systems, _, flags, mats = _paired(by_humans, by_labels, same_model, measures, collection)
    same = np.array([flags[s] for s in systems])
    rows = []
    for m in ms:
        H, L = mats[m]
        mh, ml = H.mean(axis=0), L.mean(axis=0)
        for subset, keep in zip(SUBSETS, (np.ones_like(same), ~same)):
            h, lab = mh[keep], ml[keep]
            disc = int(np.triu(np.sign(h[:, None] - h[None, :]) * np.sign(lab[:, None] - lab[None, :]) < 0).sum())
            rows.append({"labeler": str(labeler), "measure": m, "systems": int(keep.sum()), "subset": subset,
                         "tau": _kendall(h, lab), "tau_ap": tau_ap(h, lab), "discordant": disc})
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)
