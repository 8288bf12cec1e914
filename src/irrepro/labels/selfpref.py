"""Self-preference of a labeler: does it overrate the systems built on its own model?

A labeler that shares its model with some of the evaluated systems (an LLM judge scoring rankers or generators
that use the same LLM) may prefer their output: their scores by its labels exceed their scores by human labels
by more than other systems' do. Balog, Metzler & Qin (SIGIR 2025, "Rankers, Judges, and Assistants") describe
this circularity of LLM judges and LLM-based systems; Clarke & Dietz (2024, "LLM-based relevance assessment still
can't replace human relevance assessment") warn that a system can be tuned towards the judge's own preferences.
This module measures it on a population of systems evaluated twice on the same topics, once with human qrels and
once with the labeler's labels, both as the canonical per-topic score table (``collection, system, topic,
measure, value``; :mod:`irrepro.core.scores`):

* :func:`self_preference_table` — per system: the mean score by labels and by humans, their difference (the
  system's *bias*) with a 95% interval over topics, and the system's rank under both;
* :func:`self_preference_gap` — the mean bias of the same-model systems minus that of the others, with its interval
  from the same topic resamples (a labeler that is lenient to every system has a large bias but no gap);
* :func:`ranking_agreement` — Kendall's τ_b and τ_AP (:func:`tau_ap`) between the system ranking by labels and by
  humans, with all systems and without the same-model systems;
* :func:`coverage_by_group` — the coverage of per-system confidence intervals (e.g. the CI paper's PPI / CRC
  intervals of ``ci.systems``, :mod:`irrepro.papers.ci.systems`) for same-model systems against the others;
* :func:`coverage_draws` — those intervals from ``draws`` draws of ``n`` human-labelled queries (labels refitted on
  each draw's queries by a callable), pooled, and their coverage per group (its interval clustered by draw: a
  draw's systems share its queries);
* :func:`label_score_tables` — the two score tables from runs, qrels and a labels table, computed by the CI paper's
  evaluator (:mod:`irrepro.papers.ci.systems`): a document's predicted gain is ``2^{E_P[r]} − 1`` (the default
  ``label_gain``, the authors' code) or ``E_P[2^r − 1]`` (Eq. 5), from its label distribution ``p_0 .. p_{G-1}``,
  and a topic's value is DCG@k / nDCG@k of those gains (Eq. 6).

**The interval of a bias.** Topics are the sample: a system's bias ``b = mean_t (L_t − H_t)`` is a mean of
per-topic differences, and ``bias_low, bias_high`` is the paired bootstrap percentile interval of that mean
(Efron & Tibshirani 1993, Ch. 13; as :func:`irrepro.stats.paired.bootstrap` computes it): ``n_boot`` resamples of
the topics with replacement, drawn once from ``numpy.random.default_rng(seed)`` and shared by every system, every
measure and the gap, so intervals of different systems are computed on the same resampled collections. Pairing
(resampling a topic's label score and human score together) removes the topic difficulty that both share, which
is most of the variance of either. The percentile interval needs no symmetry of the differences and no variance
formula; ``t_low, t_high`` add the paired t interval (``mean ± t_{T−1} · sd / √T``,
:func:`irrepro.stats.paired.t_interval`), which agrees with it when the differences are near normal. With few
topics the percentile interval is a little short (it uses the plug-in variance and normal-like quantiles): in the
tests' simulation (40 topics, normal differences, 1,200 intervals) it covered 93.2% of the true biases, the t
interval 94.4%. Both treat
the systems and the labels as fixed: the interval covers the sampling of topics, not the labeler's randomness (a
relabelling with another seed or prompt) — the population studied is "topics like these". ``p_value``: the
shifted bootstrap test of bias 0 on the same resamples.
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats

from irrepro.core.scores import normalise_scores, to_matrix
from irrepro.errors import InputError
from irrepro.stats import paired

__all__ = ["TABLE_COLUMNS", "GAP_COLUMNS", "AGREEMENT_COLUMNS", "COVERAGE_COLUMNS", "SUBSETS",
           "self_preference_table", "self_preference_gap", "ranking_agreement", "tau_ap", "coverage_by_group",
           "label_score_tables", "coverage_draws"]

TABLE_COLUMNS = ["labeler", "system", "same_model", "measure", "by_labels", "by_humans", "bias", "bias_low",
                 "bias_high", "topics", "t_low", "t_high", "sd", "p_value", "rank_by_humans", "rank_by_labels",
                 "rank_shift"]
GAP_COLUMNS = ["labeler", "measure", "same_systems", "other_systems", "bias_same", "bias_others", "gap", "gap_low",
               "gap_high", "topics", "t_low", "t_high", "p_value"]
AGREEMENT_COLUMNS = ["labeler", "measure", "systems", "subset", "tau", "tau_ap", "discordant"]
COVERAGE_COLUMNS = ["method", "group", "intervals", "covered", "coverage", "coverage_low", "coverage_high",
                    "no_interval"]
#: the rows of :func:`ranking_agreement`: every system, and the systems that do not share the labeler's model
SUBSETS = ("all", "without_same_model")
GROUPS = ("same_model", "other")


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
    """Per column of the (T × P) per-topic differences ``D``: mean, bootstrap percentile interval, shifted bootstrap
    p-value, t interval and sd. The resamples come from ``default_rng(seed)`` alone, so the same ``seed`` and
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
    bootstrap percentile interval over topics (``n_boot`` resamples from ``seed``, the same topic resamples for
    every system and measure; the module docstring says why), then ``topics``, the paired t interval ``t_low,
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
    with the paired bootstrap percentile interval of :func:`self_preference_table` (same arguments; the same
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


# ---------------------------------------------------------------------------------------------------------------
# the system ranking


def tau_ap(truth, estimate) -> float:
    """AP rank correlation τ_AP of the ranking by ``estimate`` against the ranking by ``truth`` (Yilmaz, Aslam &
    Robertson, "A new rank correlation coefficient for information retrieval", SIGIR 2008).

    Both are scores of the same N items, higher = better. Walk down the ranking by ``estimate``; for the item at
    rank i (i = 2..N) let C(i) be the number of items above it in that ranking that ``truth`` also ranks above it.
    Then

        τ_AP = 2/(N − 1) · Σ_{i=2..N} C(i)/(i − 1) − 1,

    the mean over ranks of the precision of "the items above this one belong above it", rescaled to [−1, 1]. Like
    Kendall's τ it is 1 for the same ranking and −1 for the reversed one, but a swap near the top of the estimated
    ranking costs more than one near the bottom (it spoils the precision at every rank below it). It is not
    symmetric: ``truth`` is the reference (here the ranking by human labels), ``estimate`` the ranking judged.

    **Ties** (the paper defines strict rankings only): the value is the expectation of τ_AP when each ranking's ties
    are broken uniformly at random, independently. A pair tied in ``truth`` then counts 1/2 in C(i); an item among
    m tied in ``estimate`` below a items ranked strictly above them is at each of the ranks a + 1 .. a + m with
    equal probability, and the expected C at rank a + k is ``mean over the group of (its correct items among the
    a above) + (k − 1)/2`` (the k − 1 group members above it are a random subset; each pair within the group is
    correct one way round). So the same ranking with ties gives less than 1, and all-equal truths give 0. For other
    treatments see Urbano & Marrero, "The treatment of ties in AP correlation" (ICTIR 2017).

    NaN for fewer than 2 items.
    """
    t = np.asarray(truth, dtype=float).ravel()
    e = np.asarray(estimate, dtype=float).ravel()
    if t.shape != e.shape:
        raise InputError(f"tau_ap: truth and estimate must score the same items, got {t.size} and {e.size}")
    if not (np.isfinite(t).all() and np.isfinite(e).all()):
        raise InputError("tau_ap: scores contain NaN or inf")
    N = t.size
    if N < 2:
        return float("nan")
    # corr[y, x]: y placed above x is right by the truth (1), a truth tie (1/2), or wrong (0)
    corr = (t[:, None] > t[None, :]) + 0.5 * (t[:, None] == t[None, :])
    above = e[:, None] > e[None, :]  # y strictly above x in the estimated ranking
    c_above = (corr * above).sum(axis=0)  # per item x: correct items among those strictly above it
    total = 0.0
    for v in np.unique(e):  # each group of items tied in the estimate
        members = e == v
        m = int(members.sum())
        a = int((e > v).sum())
        mean_a = float(c_above[members].mean())
        for k in range(1, m + 1):
            if a + k >= 2:
                total += (mean_a + (k - 1) / 2) / (a + k - 1)
    return float(2.0 * total / (N - 1) - 1.0)


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
    (:func:`tau_ap` with the human ranking as the truth; ties as documented there), ``discordant`` (pairs ordered
    the other way round by labels, ties not counted). If only the same-model systems are displaced, τ rises to 1
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


# ---------------------------------------------------------------------------------------------------------------
# coverage of interval methods


def coverage_by_group(intervals: pd.DataFrame, same_model: Mapping[str, bool], *,
                      labeler: str | None = None) -> pd.DataFrame:
    """Coverage of per-system confidence intervals for the same-model systems against the others, per method.

    ``intervals``: one row per interval with columns ``system, method, low, high, truth`` — the table of
    ``ci.systems`` (:func:`irrepro.papers.ci.systems.evaluate_systems`, ``results/<v>/ci/systems_<c>.csv``) fits
    as it is; its ``kind = difference`` rows (a difference of two systems) are left out, and ``collection``,
    ``labeler`` and ``measure`` columns, where present, split the table too. Rows of several draws (the ``draw``
    column, as :func:`coverage_draws` writes it: one draw of human-labelled queries, with its seed) are pooled; a
    table without a ``draw`` column is one draw. An interval covers its truth when ``low ≤ truth ≤ high`` up to rounding
    (:func:`irrepro.papers.ci.experiment.covers`). A row without an interval (NaN ``low`` / ``high``, a CRC
    calibration that failed) counts in ``no_interval``, not among the ``intervals``. Every system needs a
    ``same_model`` flag; flags of systems absent from the table are an error (likely a misspelt name).

    Columns: the split columns present, then :data:`COVERAGE_COLUMNS`: ``method, group`` (``same_model`` /
    ``other``), ``intervals``, ``covered``, ``coverage`` = covered / intervals, its 95% interval
    ``coverage_low, coverage_high`` clustered by draw, ``no_interval``. ``labeler`` (when given and the table has
    no such column) comes first. A group without intervals has NaN coverage.

    **The coverage interval is clustered by draw** (:func:`irrepro.papers.ci.summary.clustered_proportion`): the
    intervals of one draw are computed from the same human-labelled queries, so they are not independent — a draw
    whose queries happen to be unrepresentative makes the intervals of many systems miss together. A binomial
    (Wilson) interval over the ``intervals`` rows would count draws × systems independent trials and be too narrow
    (about √(systems) times when a draw's systems are all covered or all missed together). The clustered interval
    takes per draw the covered and interval counts of the group: the ratio estimate covered / intervals, its
    cluster-robust variance from the draws' residuals ``covered_d − coverage · intervals_d``, and Student's t with
    draws − 1 degrees of freedom, clipped to [0, 1]. Where that variance is 0 (one draw; a coverage of 0 or 1;
    every draw at the same coverage) it is the Wilson interval of coverage · D successes in D draws, taking the
    draws as the independent units — with one draw (a single ``ci.systems`` table), the interval of a single
    observation, wide: the coverage of one draw's systems is a weak signal.
    """
    from irrepro.papers.ci.experiment import covers
    from irrepro.papers.ci.summary import clustered_proportion

    need = ["system", "method", "low", "high", "truth"]
    missing = [c for c in need if c not in intervals.columns]
    if missing:
        raise InputError(f"the intervals table lacks columns {missing}; expected at least {need}")
    df = intervals
    if "kind" in df.columns:
        df = df[df["kind"].astype(str) == "system"]
    if df.empty:
        raise InputError("the intervals table has no per-system rows")
    df = df.assign(system=df["system"].astype(str), method=df["method"].astype(str))
    if df["truth"].isna().any():
        s = df.loc[df["truth"].isna()].iloc[0]
        raise InputError(f"{int(df['truth'].isna().sum())} interval(s) have no truth to cover, e.g. system "
                         f"{s.system!r}, method {s.method!r}")
    systems = sorted(df["system"].unique())
    flags = _flags(same_model, systems, "the intervals table")
    low, high = df["low"].to_numpy(dtype=float), df["high"].to_numpy(dtype=float)
    has = np.isfinite(low) & np.isfinite(high)
    covered = has & covers(np.where(has, low, 0.0), np.where(has, high, 0.0), df["truth"].to_numpy(dtype=float))
    df = df.assign(group=np.where(df["system"].map(flags).to_numpy(dtype=bool), GROUPS[0], GROUPS[1]),
                   _draw=df["draw"].to_numpy() if "draw" in df.columns else 0, _has=has, _cov=covered)
    keys = [c for c in ("collection", "labeler", "measure") if c in df.columns]
    rows = []
    for key, g in df.groupby(keys + ["method"], sort=True):
        key = key if isinstance(key, tuple) else (key,)
        for group in GROUPS:
            d = g[g["group"] == group]
            n, k = int(d["_has"].sum()), int(d["_cov"].sum())
            per_draw = d.groupby("_draw", sort=True, dropna=False)[["_cov", "_has"]].sum()
            lo, hi = clustered_proportion(per_draw["_cov"], per_draw["_has"])
            rows.append({**dict(zip(keys + ["method"], key)), "group": group, "intervals": n, "covered": k,
                         "coverage": k / n if n else np.nan, "coverage_low": lo, "coverage_high": hi,
                         "no_interval": int((~d["_has"]).sum())})
    out = pd.DataFrame(rows, columns=keys + COVERAGE_COLUMNS)
    if labeler is not None and "labeler" not in out.columns:
        out.insert(0, "labeler", str(labeler))
    return out


# ---------------------------------------------------------------------------------------------------------------
# the score tables from runs and labels (the CI paper's evaluator)


def label_score_tables(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame, labels: pd.DataFrame, measures, *,
                       collection: str, label_gain: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(by_humans, by_labels)``: the canonical per-topic score tables of the systems of ``runs`` on every judged
    topic of ``qrels``, by the qrels and by the ``labels`` table (``query_id, doc_id, p_0 .. p_{G-1}``, a label
    for every pair in some system's top k).

    Computed as ``ci.systems`` computes them (:mod:`irrepro.papers.ci.systems`): ``measures`` are ``DCG@k`` /
    ``nDCG@k`` with gain ``2^r − 1``; the human value of a topic is its DCG@k on the qrels' grades (unjudged = 0;
    as ``ir_measures`` gives it), the labels' value the same sum over the predicted gains of the ranked documents
    (``label_gain``: :data:`irrepro.papers.ci.metric.LABEL_GAINS`, default the CI analyses' ``2^{E_P[r]} − 1``).
    nDCG divides the human values by the qrels' ideal DCG@k and the labels' values by the ideal DCG@k of the
    predicted gains of the topic's pool (every system's top k), so the label table reads no qrels — and a
    system's nDCG by labels depends on which systems are in ``runs``: pass the whole population. The labels' grade
    scale must reach the qrels' top grade (:func:`irrepro.papers.ci.systems.check_grade_scale`).
    """
    from irrepro.papers.ci import systems as ci
    from irrepro.papers.ci.metric import DEFAULT_LABEL_GAIN
    from irrepro.papers.ci.ranking import grade_columns

    if not runs:
        raise InputError("label_score_tables: no runs")
    label_gain = DEFAULT_LABEL_GAIN if label_gain is None else label_gain
    measures = [measures] if isinstance(measures, str) else list(measures)
    if not measures:
        raise InputError("label_score_tables: measures is empty")
    parsed = {m: ci.parse_measure(m) for m in measures}
    queries = ci.judged_queries(qrels)
    ci.check_grade_scale(qrels, len(grade_columns(labels)))
    names = [str(s) for s in runs]
    top = max(k for _, k in parsed.values())
    runs = {n: _cut(r, top) for n, r in zip(names, runs.values())}  # nothing deeper than the largest k is read
    human, lab = [], []
    for k in sorted({k for _, k in parsed.values()}):
        arrays = {s: ci.system_arrays(runs[s], qrels, labels, queries, k, label_gain) for s in names}
        ideal_t = ci.ideal_dcg(qrels, queries, k)
        ideal_p = ci.pool_ideal_pred(ci.systems_pairs(runs, qrels, k), labels, queries, k, label_gain)
        for m in (m for m in measures if parsed[m][1] == k):
            for s in names:
                a = ci.measure_arrays(arrays[s], m, ideal_t, ideal_p)
                base = {"collection": collection, "system": s, "topic": queries, "measure": m}
                human.append(pd.DataFrame({**base, "value": a["u_true"]}))
                lab.append(pd.DataFrame({**base, "value": a["u_pred"]}))
    return (normalise_scores(pd.concat(human, ignore_index=True)),
            normalise_scores(pd.concat(lab, ignore_index=True)))


def _cut(run: pd.DataFrame, k: int) -> pd.DataFrame:
    """The rows of ``run`` within each query's ``k`` best ranks (``rank`` column; ties at the k-th rank kept)."""
    r = run.assign(query_id=run["query_id"].astype(str))
    return r[r.groupby("query_id")["rank"].rank(method="min") <= int(k)]


def coverage_draws(runs: Mapping[str, pd.DataFrame], qrels: pd.DataFrame, labels_of, same_model: Mapping[str, bool],
                   measures, *, n: int, draws: int, seed: int = 0, labeler: str | None = None, alpha: float = 0.05,
                   n_boot: int = 10_000, n_batches: int = 10_000, label_gain: str | None = None
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(intervals, coverage)``: the CI paper's per-system intervals (bootstrap, PPI, PPI++, CRC;
    :func:`irrepro.papers.ci.systems.evaluate_systems` in its validation mode) from ``draws`` draws of ``n``
    human-labelled queries of the qrels' judged queries, and their coverage of each system's mean by all human
    labels for the same-model systems against the others (:func:`coverage_by_group`).

    Draw ``r`` (0-based) takes its queries with :func:`irrepro.papers.ci.systems.draw_queries` (``seed + r``) and
    its intervals with seed ``seed + r``; ``labels_of(queries)`` returns the labels table for those human-labelled
    queries (a calibrated labeler's mapping refitted on their grades only, so no other query's human grade enters
    the labels; a labeler that needs no human grades returns the same table each time). ``intervals``: the
    per-system rows of every draw with a ``draw`` column."""
    from irrepro.papers.ci import systems as ci
    from irrepro.papers.ci.metric import DEFAULT_LABEL_GAIN

    if int(draws) < 1:
        raise InputError(f"coverage_draws: draws {draws!r}, expected a positive integer")
    queries = ci.judged_queries(qrels)
    # every draw reads the same top k of each run: cut the runs there once (rows tied with the k-th rank kept, so the
    # ranking that evaluate_systems takes is the same as from the full runs)
    k = max(ci.parse_measure(m)[1] for m in ([measures] if isinstance(measures, str) else measures))
    runs = {s: _cut(run, k) for s, run in runs.items()}
    rows = []
    for r in range(int(draws)):
        drawn = ci.draw_queries(queries, int(n), int(seed) + r)
        table, *_ = ci.evaluate_systems(dict(runs), qrels, labels_of(drawn), drawn, measures, alpha=alpha,
                                        n_boot=n_boot, n_batches=n_batches, seed=int(seed) + r,
                                        label_gain=label_gain or DEFAULT_LABEL_GAIN)
        rows.append(table.assign(draw=r))
    intervals = pd.concat(rows, ignore_index=True)
    return intervals, coverage_by_group(intervals, same_model, labeler=labeler)
