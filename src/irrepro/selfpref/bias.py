"""Each system's bias (its mean score by a labeler's labels minus by human labels, with an interval over topics) and
the same-model gap; the inputs' checks shared by the package (:mod:`irrepro.selfpref` says why the intervals are
paired bootstrap-t intervals over topics)."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from irrepro.core.scores import normalise_scores, to_matrix
from irrepro.errors import InputError
from irrepro.stats import paired

TABLE_COLUMNS = ["labeler", "system", "same_model", "measure", "by_labels", "by_humans", "bias", "bias_low",
                 "bias_high", "topics", "t_low", "t_high", "sd", "p_value", "rank_by_humans", "rank_by_labels",
                 "rank_shift"]
GAP_COLUMNS = ["labeler", "measure", "same_systems", "other_systems", "bias_same", "bias_others", "gap", "gap_low",
               "gap_high", "topics", "t_low", "t_high", "p_value"]


# ---------------------------------------------------------------------------------------------------------------
# inputs


def _flags(same_model, systems, what="the score tables") -> dict:
    """``same_model`` checked against ``systems``: a bool for every system, none for a system not there."""
    if not isinstance(same_model, Mapping):
        raise InputError(f"same_model must map each system to True/False, got {type(same_model).__name__}")
    flags = {str(k): v for k, v in same_model.items()}
    missing = [s for s in systems if s not in flags]
    if missing:
        raise InputError(f"same_model has no flag for {len(missing)} system(s) of {what}: {missing[:5]}")
    extra = sorted(set(flags) - set(systems))
    if extra:
        raise InputError(f"same_model flags {len(extra)} system(s) absent from {what}: {extra[:5]}")
    bad = [s for s, v in flags.items() if not isinstance(v, (bool, np.bool_))]
    if bad:
        raise InputError(f"same_model must be True or False per system; {bad[0]!r} is {flags[bad[0]]!r}")
    return {s: bool(flags[s]) for s in systems}


def _matrix(df, name, measure, collection):
    try:
        return to_matrix(df, measure, collection)
    except InputError as e:
        raise InputError(f"{name}: {e}") from None


def _no_missing_cells(mat, name, measure):
    if mat.isna().any().any():
        t, s = next((t, s) for s in mat.columns for t in mat.index[mat[s].isna()])
        n = int(mat.isna().sum().sum())
        raise InputError(f"{name}: {n} (system, topic) cell(s) of measure {measure!r} have no score, e.g. system "
                         f"{s!r} on topic {t!r}; every system needs a score on every topic")


def _same_sets(a, b, what, measure):
    only_h, only_l = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    if only_h or only_l:
        parts = []
        if only_h:
            parts.append(f"by_labels lacks {len(only_h)} {what} that by_humans has: {only_h[:5]}")
        if only_l:
            parts.append(f"by_humans lacks {len(only_l)} {what} that by_labels has: {only_l[:5]}")
        raise InputError(f"measure {measure!r}: " + "; ".join(parts))


def _measures(by_humans, by_labels, measures):
    if measures is None:
        mh, ml = sorted(set(by_humans["measure"])), sorted(set(by_labels["measure"]))
        if mh != ml:
            raise InputError(f"the two tables hold different measures (by_humans: {mh}, by_labels: {ml}); "
                             "pass measures=")
        return mh
    ms = [measures] if isinstance(measures, str) else [str(m) for m in measures]
    if not ms:
        raise InputError("measures is empty")
    for name, df in (("by_humans", by_humans), ("by_labels", by_labels)):
        absent = [m for m in ms if m not in set(df["measure"])]
        if absent:
            raise InputError(f"{name} has no scores for measure(s) {absent}; measures present: "
                             f"{sorted(set(df['measure']))}")
    return ms


def _paired(by_humans, by_labels, same_model, measures, collection):
    """``(measures, systems, topics, flags, {measure: (H, L)})``: the two tables as topic × system arrays, checked
    to hold the same systems and topics with a score in every cell."""
    h = normalise_scores(by_humans)
    lab = normalise_scores(by_labels)
    ms = _measures(h, lab, measures)
    out, systems, topics = {}, None, None
    for m in ms:
        H, L = _matrix(h, "by_humans", m, collection), _matrix(lab, "by_labels", m, collection)
        _same_sets(H.columns, L.columns, "system(s)", m)
        _same_sets(H.index, L.index, "topic(s)", m)
        L = L.reindex(index=H.index, columns=H.columns)
        _no_missing_cells(H, "by_humans", m)
        _no_missing_cells(L, "by_labels", m)
        if systems is None:
            systems, topics = list(H.columns), list(H.index)
        elif list(H.columns) != systems or list(H.index) != topics:
            raise InputError(f"measure {m!r} covers other systems or topics than measure {ms[0]!r}; "
                             "evaluate one set of systems on one set of topics")
        if len(topics) < 2:
            raise InputError(f"measure {m!r}: {len(topics)} topic(s); an interval over topics needs at least 2")
        out[m] = (H.to_numpy(dtype=float), L.to_numpy(dtype=float))
    return ms, systems, topics, _flags(same_model, systems), out


def _check_boot(n_boot, alpha):
    n_boot = int(n_boot)
    if n_boot < 1:
        raise InputError(f"n_boot must be >= 1, got {n_boot}")
    a = float(alpha)
    if not 0.0 < a < 1.0:
        raise InputError(f"alpha must lie in (0, 1), got {alpha}")
    return n_boot, a


def _intervals(D, n_boot, seed, alpha):
    """Per column of the (T × P) per-topic differences ``D``: mean, symmetric bootstrap-t interval, studentised
    bootstrap p-value, t interval and sd. The resamples come from ``default_rng(seed)`` alone, so the same ``seed`` and
    number of topics give the same resampled topic sets in every call."""
    p, lo, hi = paired.bootstrap(D, n_boot, np.random.default_rng(int(seed)), alpha)
    mean, t_lo, t_hi, sd = paired.t_interval(D, alpha)
    return mean, lo, hi, p, t_lo, t_hi, sd


# ---------------------------------------------------------------------------------------------------------------
# the bias of each system


def self_preference_table(by_humans: pd.DataFrame, by_labels: pd.DataFrame, same_model: Mapping[str, bool], *,
                          labeler: str, measures=None, n_boot: int = 10_000, seed: int = 0, alpha: float = 0.05,
                          collection: str | None = None) -> pd.DataFrame:
    """Each system's mean score by the labeler's labels and by human labels, and the difference (its bias).

    ``by_humans`` / ``by_labels``: canonical per-topic score tables of the same systems and topics (every cell
    scored in both); ``same_model``: per system, whether it is built on the labeler's model (a flag for every
    system, none for others); ``measures``: a measure or a list (default: every measure, which must be the same in
    both tables); ``collection``: which collection, when a table holds several.

    Columns (:data:`TABLE_COLUMNS`): ``labeler, system, same_model, measure, by_labels, by_humans`` (means over the
    ``topics`` topics), ``bias = by_labels − by_humans``, ``bias_low, bias_high`` its (1 − ``alpha``) paired
    symmetric bootstrap-t interval over topics (``n_boot`` resamples from ``seed``, the same topic resamples for
    every system and measure; :mod:`irrepro.selfpref` says why), then ``topics``, the paired t interval ``t_low,
    t_high``, ``sd`` of the per-topic differences, ``p_value`` (bootstrap test of bias 0), the ranks by humans
    and by labels (1 = best mean; ties share the best rank) and ``rank_shift = rank_by_humans − rank_by_labels``
    (> 0: the labels place the system higher than humans do). Rows: measure, then the human ranking.

    Self-preference shows as the same-model systems' bias exceeding the others' (:func:`self_preference_gap`): a
    bias common to every system is leniency or strictness of the labeler, not self-preference.
    """
    n_boot, alpha = _check_boot(n_boot, alpha)
    ms, systems, topics, flags, mats = _paired(by_humans, by_labels, same_model, measures, collection)
    frames = []
    for m in ms:
        H, L = mats[m]
        mean, lo, hi, p, t_lo, t_hi, sd = _intervals(L - H, n_boot, seed, alpha)
        mh, ml = H.mean(axis=0), L.mean(axis=0)
        rh = pd.Series(mh).rank(ascending=False, method="min").astype(int).to_numpy()
        rl = pd.Series(ml).rank(ascending=False, method="min").astype(int).to_numpy()
        frames.append(pd.DataFrame({
            "labeler": str(labeler), "system": systems, "same_model": [flags[s] for s in systems], "measure": m,
            "by_labels": ml, "by_humans": mh, "bias": ml - mh, "bias_low": lo, "bias_high": hi,
            "topics": len(topics), "t_low": t_lo, "t_high": t_hi, "sd": sd, "p_value": p,
            "rank_by_humans": rh, "rank_by_labels": rl, "rank_shift": rh - rl}))
    out = pd.concat(frames, ignore_index=True)
    out = out.sort_values(["measure", "rank_by_humans", "system"], kind="mergesort").reset_index(drop=True)
    return out[TABLE_COLUMNS]


def self_preference_gap(by_humans: pd.DataFrame, by_labels: pd.DataFrame, same_model: Mapping[str, bool], *,
                        labeler: str, measures=None, n_boot: int = 10_000, seed: int = 0, alpha: float = 0.05,
                        collection: str | None = None) -> pd.DataFrame:
    """The mean bias of the same-model systems minus the mean bias of the others, per measure.

    Per topic t, ``g_t = mean_{s same} (L_ts − H_ts) − mean_{s other} (L_ts − H_ts)``; the gap is ``mean_t g_t``
    with the paired bootstrap-t interval of :func:`self_preference_table` (same arguments; the same
    ``seed`` resamples the same topics) and the t interval. A gap whose interval lies above 0 is self-preference
    beyond the labeler's general leniency. Needs at least one system in each group.

    Columns (:data:`GAP_COLUMNS`): ``labeler, measure, same_systems, other_systems, bias_same, bias_others, gap,
    gap_low, gap_high, topics, t_low, t_high, p_value``.
    """
    n_boot, alpha = _check_boot(n_boot, alpha)
    ms, systems, topics, flags, mats = _paired(by_humans, by_labels, same_model, measures, collection)
    same = np.array([flags[s] for s in systems])
    if same.all() or not same.any():
        raise InputError(f"self_preference_gap needs same-model and other systems; same_model marks "
                         f"{int(same.sum())} of {len(systems)} systems")
    rows = []
    for m in ms:
        H, L = mats[m]
        D = L - H
        bs, bo = D[:, same].mean(axis=1), D[:, ~same].mean(axis=1)
        mean, lo, hi, p, t_lo, t_hi, _ = _intervals((bs - bo)[:, None], n_boot, seed, alpha)
        rows.append({"labeler": str(labeler), "measure": m, "same_systems": int(same.sum()),
                     "other_systems": int((~same).sum()), "bias_same": float(bs.mean()),
                     "bias_others": float(bo.mean()), "gap": float(mean[0]), "gap_low": float(lo[0]),
                     "gap_high": float(hi[0]), "topics": len(topics), "t_low": float(t_lo[0]),
                     "t_high": float(t_hi[0]), "p_value": float(p[0])})
    return pd.DataFrame(rows, columns=GAP_COLUMNS)
