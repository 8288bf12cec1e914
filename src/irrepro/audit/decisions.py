"""Would a study's significance decisions change if labels replaced the human qrels? For every pair of systems the
stats stage's paired tests and corrections (:func:`irrepro.stats.compare.compare`: all pairs, one family per test
and correction) on the per-topic scores by humans and by labels, and each pair's two decisions side by side:

* ``both_same`` — significant by both, the same system better;
* ``both_none`` — significant by neither;
* ``humans_only`` — significant by humans only (a difference the labels miss);
* ``labels_only`` — significant by labels only (a false discovery, taking the humans as the truth);
* ``opposite`` — significant by both, opposite directions.

``missed`` = humans_only / (pairs significant by humans) and ``false_discoveries`` = labels_only / (pairs
significant by labels) are the rates a reader of a paper asks for; NaN where the denominator is 0.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from irrepro.stats.compare import compare
from irrepro.stats.paired import RESAMPLED, unattainable

COLUMNS = ["test", "correction", "pairs", "both_same", "both_none", "humans_only", "labels_only", "opposite",
           "missed", "false_discoveries", "note"]
KINDS = ("both_same", "both_none", "humans_only", "labels_only", "opposite")


def _decisions(table: pd.DataFrame) -> pd.DataFrame:
    """``test, correction, x, y, significant, direction`` of a per-pair table: x < y by name, direction the sign
    of mean_x − mean_y."""
    a, b = table.system_a.astype(str), table.system_b.astype(str)
    flip = a > b
    sign = np.sign(table.delta.to_numpy(dtype=float))
    return pd.DataFrame({"test": table.test, "correction": table.correction, "x": np.where(flip, b, a),
                         "y": np.where(flip, a, b), "significant": table.significant.astype(bool).to_numpy(),
                         "direction": np.where(flip, -sign, sign)})


def pair_decisions(by_humans: pd.DataFrame, by_labels: pd.DataFrame, **settings) -> pd.DataFrame:
    """One row per test, correction and pair of systems: ``test, correction, x, y, humans, labels, kind``
    (``humans`` / ``labels``: +1 x significantly better, −1 worse, 0 not significant; ``kind`` of :data:`KINDS`).
    ``by_humans``, ``by_labels``: topics x systems frames (the same topics and systems); ``settings``: those of
    :func:`irrepro.stats.compare.compare` (tests, corrections, alpha, n_permutations, n_bootstrap, seed)."""
    if list(by_humans.columns) != list(by_labels.columns) or list(by_humans.index) != list(by_labels.index):
        raise ValueError("pair_decisions: the two score matrices must have the same topics and systems")
    keys = ["test", "correction", "x", "y"]
    h = _decisions(compare(by_humans, **settings))
    lab = _decisions(compare(by_labels, **settings))
    m = h.merge(lab, on=keys, suffixes=("_h", "_l"), validate="one_to_one")
    dh = np.where(m.significant_h, m.direction_h, 0).astype(int)
    dl = np.where(m.significant_l, m.direction_l, 0).astype(int)
    kind = np.select([(dh != 0) & (dh == dl), (dh == 0) & (dl == 0), (dh != 0) & (dl == 0), (dh == 0) & (dl != 0)],
                     ["both_same", "both_none", "humans_only", "labels_only"], "opposite")
    return pd.DataFrame({**{k: m[k] for k in keys}, "humans": dh, "labels": dl, "kind": kind})


def spread(H, L) -> dict:
    """What makes paired tests reject more or less often by labels than by humans, over all pairs of systems:
    ``sd_ratio`` the median of sd(label-based per-topic differences) / sd(human-based ones), ``mean_ratio`` the
    median of |mean label-based difference| / |mean human-based one|, ``t_humans`` / ``t_labels`` the median
    |mean| / sd of the pairs' differences (the paired t statistic over √topics). Pairs with a constant difference
    are left out."""
    H, L = np.asarray(H, float), np.asarray(L, float)
    i, j = np.triu_indices(H.shape[1], 1)
    dh, dl = H[:, i] - H[:, j], L[:, i] - L[:, j]
    sh, sl = dh.std(axis=0, ddof=1), dl.std(axis=0, ddof=1)
    ok = (sh > 0) & (sl > 0) & (dh.mean(axis=0) != 0)
    mh, ml = np.abs(dh.mean(axis=0))[ok], np.abs(dl.mean(axis=0))[ok]
    return {"sd_ratio": float(np.median(sl[ok] / sh[ok])) if ok.any() else np.nan,
            "mean_ratio": float(np.median(ml / mh)) if ok.any() else np.nan,
            "t_humans": float(np.median(mh / sh[ok])) if ok.any() else np.nan,
            "t_labels": float(np.median(ml / sl[ok])) if ok.any() else np.nan}


def _note(test, corr, pairs, settings, topics) -> str:
    key = RESAMPLED.get(test)
    if key is None or not settings.get(key) or topics is None:
        return ""
    return unattainable(test, corr, pairs, topics, int(settings[key]), float(settings["alpha"]))


def decision_audit(decisions: pd.DataFrame, settings: dict | None = None, topics: int | None = None) -> pd.DataFrame:
    """The counts of :func:`pair_decisions` per test and correction (:data:`COLUMNS`); ``note``: from
    :func:`irrepro.stats.paired.unattainable` with ``settings`` (those of :func:`pair_decisions`) and the number of
    topics ``topics``."""
    rows = []
    for (test, corr), g in decisions.groupby(["test", "correction"], sort=False):
        n = {k: int((g.kind == k).sum()) for k in KINDS}
        by_h, by_l = int((g.humans != 0).sum()), int((g.labels != 0).sum())
        rows.append({"test": test, "correction": corr, "pairs": len(g), **n,
                     "missed": n["humans_only"] / by_h if by_h else np.nan,
                     "false_discoveries": n["labels_only"] / by_l if by_l else np.nan,
                     "note": _note(test, corr, len(g), settings or {}, topics)})
    return pd.DataFrame(rows, columns=COLUMNS)
