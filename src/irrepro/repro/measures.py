"""Measures of how closely a reproduction matches an original IR experiment (Breuer et al., SIGIR 2020).

Breuer, Ferro, Fuhr, Maistro, Sakai, Schaer, Soboroff: "How to Measure the Reproducibility of System-oriented IR
Experiments", SIGIR 2020, https://doi.org/10.1145/3397271.3401036. The reference implementation is the
``repro_eval`` package (Breuer et al., ECIR 2021, https://github.com/irgroup/repro_eval); every function here
returns what ``repro_eval`` 0.5 returns on the inputs it accepts, except where a section below says otherwise.

Naming. ``repro_eval`` (and this module) follow the ACM badging terms of version 1.1 (August 2020):
*reproducibility* is a different team with the same experimental setup, i.e. the same test collection (topics and
qrels) as the original; *replicability* is a different team with a different setup, i.e. another test collection.
The SIGIR 2020 paper and CENTRE@CLEF 2019 used ACM's earlier version 1.0, in which the two words are the other way
round (their "replicability" is the same collection). ``repro_eval``'s own README shows the swap: its
"reproducibility" example reads the CENTRE task 1 (same collection) runs ``irc_task1_*``, its "replicability"
example the task 2 runs ``irc_task2_*``. So: on the same topics (reproducibility) the document-order measures
(KTU, RBO), RMSE and the paired t-test apply; on other topics (replicability) only ER, ΔRI and the unpaired t-test.

Runs. A run is a DataFrame with columns ``query_id``, ``doc_id``, ``score`` (other columns are ignored; ids are
compared as strings). Its ranking is trec_eval's: score descending, ties broken by doc id descending (byte order,
as trec_eval's ``strcmp``; see :func:`irrepro.core.trec.sort_run`). ``repro_eval`` gets the same order from a run
file sorted by score (its ``break_ties`` reorders each block of equal scores by doc id descending) but keeps the file
order otherwise; here the rows' order never matters. A document twice in one topic is an error.

Per-topic scores. Measures over topic scores take a Series indexed by topic id (paired by topic) or a 1-d array
(paired by position); the two sides of a paired comparison must cover the same topics.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from irrepro.core.trec import sort_run
from irrepro.errors import InputError

#: default ranking depth of KTU and RBO: ``repro_eval`` trims runs to 1000 documents (its ``RUN_LENGTH``) and
#: compares RBO to depth 1000 (``RBO_DEPTH``), the usual TREC run length
DEPTH = 1000
#: default RBO persistence p (``repro_eval``'s ``RBO_P``): the weight of rank d is p**(d-1)
RBO_P = 0.95
#: decimals with which trec_eval prints scores (``%.4f``) and papers report them
SCORE_DECIMALS = 4
#: smallest original effect (mean advanced - mean baseline) for which ER is defined, and smallest baseline mean for
#: which a relative improvement is: one unit in the last printed decimal, 10**-SCORE_DECIMALS = 1e-4. Scores
#: printed to 4 decimals carry a rounding error up to 0.5e-4 each, so a difference of two such means is known only
#: to +-1e-4; below that the printed scores do not resolve the effect (nor its sign), and dividing by it would
#: turn rounding noise into an ER of 1e4 or more.
MIN_EFFECT = 10.0 ** -SCORE_DECIMALS
# slack for binary floating point: a difference of two 4-decimal numbers that prints as 0.0001 is 1e-4 +- 1e-17 and
# counts as resolved
_FLOAT_SLACK = 1e-12


class PerTopic(NamedTuple):
    """A measure per topic (Series indexed by ``query_id``, sorted) and its mean over the topics where it is
    defined (NaN if it is defined for none)."""

    per_topic: pd.Series
    mean: float


@dataclass(frozen=True)
class EffectRatio:
    """ER = reproduced effect / original effect; ``value`` is NaN and ``reason`` says why when it is undefined."""

    value: float
    original_effect: float
    reproduced_effect: float
    reason: str | None = None


@dataclass(frozen=True)
class DeltaRI:
    """ΔRI = RI(original) - RI(reproduced); ``value`` is NaN and ``reason`` says why when it is undefined."""

    value: float
    original_ri: float
    reproduced_ri: float
    reason: str | None = None


# --- runs -----------------------------------------------------------------------------------------------------


def _ranked(run: pd.DataFrame, depth: int, name: str) -> pd.DataFrame:
    """The run's top-``depth`` documents per topic in trec_eval order, with 0-based ``pos``."""
    missing = {"query_id", "doc_id", "score"} - set(run.columns)
    if missing:
        raise InputError(f"{name} run lacks column(s) {sorted(missing)}; a run has query_id, doc_id, score")
    df = run[["query_id", "doc_id", "score"]].astype({"query_id": str, "doc_id": str, "score": float})
    dup = df.duplicated(["query_id", "doc_id"])
    if dup.any():
        q, d = df.loc[dup.to_numpy(), ["query_id", "doc_id"]].iloc[0]
        raise InputError(f"{name} run: document {d!r} appears twice for query {q!r}")
    df = sort_run(df)
    df["pos"] = df["rank"] - 1
    return df.loc[df["pos"] < depth, ["query_id", "doc_id", "pos"]]


def _check_depth(depth):
    if depth is None or int(depth) != depth or depth < 1:
        raise InputError(f"depth must be an integer >= 1, got {depth!r}")
    return int(depth)


def _mean_defined(per_topic: pd.Series) -> float:
    defined = per_topic.dropna()
    return float(defined.mean()) if len(defined) else math.nan


# --- document order -------------------------------------------------------------------------------------------


def _tau_b(x, y) -> float:
    """Kendall's tau-b, rounded to 14 decimals as ``repro_eval`` rounds it, so that a reversed ranking gives -1.0
    and not -0.9999999999999998."""
    from scipy import stats  # here, not at the top: the Snakefile's plan imports this module
    return float(round(stats.kendalltau(x, y).statistic, 14))


def ktu(orig_run: pd.DataFrame, repro_run: pd.DataFrame, depth: int = DEPTH) -> PerTopic:
    """Kendall's tau Union (Breuer et al. 2020, Sec. 4.1) between the original and the reproduced ranking, per topic.

    For a topic let A and B be the top-``depth`` documents of the original and the reproduced run, U = A ∪ B. Every
    d in U gets a rank in each list: its position (1-based) where it occurs, and len(list) + 1 where it does not
    (documents missing from a list are ranked after its last one, tied among themselves). KTU is Kendall's tau-b
    of the two rank vectors over U,

        tau_b = (P - Q) / sqrt((P + Q + T) (P + Q + V))

    with P concordant and Q discordant pairs, T pairs tied only in A's ranks, V only in B's (the paper's formula;
    ``scipy.stats.kendalltau``). Identical lists give 1, a reversed list -1; a document only the reproduction
    retrieves is discordant with every original document that the reproduction ranks below it (and vice versa).
    Two identical lists of one document give 1;
    if either list is empty the ranks of one side are all tied and KTU is undefined (NaN). Topics: those of either
    run (a topic missing from one run is an empty list there).

    ``repro_eval`` (``KTU``) pairs the lists by rank position instead: with U sorted by doc id, it takes tau-b of
    (index in U of A's i-th document, index in U of B's i-th document) over i. That fails when A and B differ in
    length (scipy raises on arrays of unequal size), and its value depends on how the documents are named: relabel
    the documents and a pair of rankings gets another value, and a fully reversed ranking need not give -1. The
    two agree when both lists hold the same documents and the original ranking's doc ids are in sorted (or
    reverse-sorted) order; :func:`ktu_repro_eval` reproduces ``repro_eval``'s value for published comparisons.
    """
    depth = _check_depth(depth)
    a = _ranked(orig_run, depth, "original")
    b = _ranked(repro_run, depth, "reproduced")
    m = a.merge(b, on=["query_id", "doc_id"], how="outer", suffixes=("_a", "_b"))
    len_a = a.groupby("query_id").size()
    len_b = b.groupby("query_id").size()
    # a document missing from a list ranks after its last: position len(list) (0-based), i.e. rank len + 1
    m["pos_a"] = m["pos_a"].fillna(m["query_id"].map(len_a).fillna(0))
    m["pos_b"] = m["pos_b"].fillna(m["query_id"].map(len_b).fillna(0))
    values = {}
    for q, g in m.groupby("query_id", sort=True):
        ra, rb = g["pos_a"].to_numpy(), g["pos_b"].to_numpy()
        if len_a.get(q, 0) == 0 or len_b.get(q, 0) == 0:
            values[q] = math.nan
        elif np.array_equal(ra, rb):
            values[q] = 1.0  # identical lists (also one document each, where tau-b is 0/0)
        else:
            values[q] = _tau_b(ra, rb)
    per_topic = pd.Series(values, name="KTU", dtype=float).rename_axis("query_id")
    return PerTopic(per_topic, _mean_defined(per_topic))


def ktu_repro_eval(orig_run: pd.DataFrame, repro_run: pd.DataFrame, depth: int = DEPTH) -> PerTopic:
    """``repro_eval``'s KTU value, to compare with numbers it produced; prefer :func:`ktu`.

    Per topic, with A and B the top-``depth`` lists and U = sorted(A ∪ B) by doc id, the value is Kendall's tau-b
    of (U.index(A[i]))_i and (U.index(B[i]))_i, i = 0 .. len(A) - 1 (``repro_eval.measure.document_order._KTU``).
    It depends on the document ids' spelling and is only defined when len(A) == len(B): a topic where the lists
    differ in length raises :class:`~irrepro.errors.InputError` (``repro_eval`` raises scipy's ValueError).
    Topics: those of the reproduced run, as ``repro_eval`` iterates them; each must be in the original run.
    """
    depth = _check_depth(depth)
    a = _ranked(orig_run, depth, "original")
    b = _ranked(repro_run, depth, "reproduced")
    ga = dict(tuple(a.groupby("query_id", sort=False)))
    values = {}
    for q, gb in b.groupby("query_id", sort=True):
        if q not in ga:
            raise InputError(f"topic {q!r} of the reproduced run is not in the original run")
        da, db = ga[q]["doc_id"].to_numpy(), gb["doc_id"].to_numpy()
        if len(da) != len(db):
            raise InputError(f"topic {q!r}: the original lists {len(da)} documents, the reproduced {len(db)}; "
                             f"repro_eval's KTU is undefined for lists of unequal length (use ktu)")
        union = np.unique(np.concatenate([da, db]))
        values[q] = _tau_b(np.searchsorted(union, da), np.searchsorted(union, db))
    per_topic = pd.Series(values, name="KTU", dtype=float).rename_axis("query_id")
    return PerTopic(per_topic, _mean_defined(per_topic))


def rbo(orig_run: pd.DataFrame, repro_run: pd.DataFrame, depth: int = DEPTH, p: float = RBO_P) -> PerTopic:
    """Rank-biased overlap (Webber et al., TOIS 2010) of the two rankings, per topic, in the finite-depth form of
    Clarke et al. (TOIS 2021, https://doi.org/10.1145/3451161) that ``repro_eval`` uses:

        RBO = sum_{d=1..depth} p**(d-1) |A[:d] ∩ B[:d]| / d  /  sum_{d=1..depth} p**(d-1)

    A prefix stops growing at the end of its list, so two identical lists score exactly 1 only if they hold at
    least ``depth`` documents (identical lists of n < depth documents score below 1: at d > n the overlap is n/d);
    pass ``depth=n`` to compare lists of n documents. Disjoint lists score 0. Topics: those of either run.
    Vectorised over topics: a document in both lists enters the overlap at depth max(pos_A, pos_B) + 1, so the
    overlaps are cumulative counts of those depths.
    """
    depth = _check_depth(depth)
    if not 0 < p < 1:
        raise InputError(f"RBO persistence p must be in (0, 1), got {p}")
    a = _ranked(orig_run, depth, "original")
    b = _ranked(repro_run, depth, "reproduced")
    topics = np.array(sorted(set(a["query_id"]) | set(b["query_id"])), dtype=object)
    both = a.merge(b, on=["query_id", "doc_id"], suffixes=("_a", "_b"))
    enters = np.maximum(both["pos_a"].to_numpy(), both["pos_b"].to_numpy())
    t_index = np.searchsorted(topics, both["query_id"].to_numpy())
    counts = np.zeros((len(topics), depth))
    np.add.at(counts, (t_index, enters), 1.0)
    overlap = np.cumsum(counts, axis=1)  # overlap[t, d - 1] = |A[:d] ∩ B[:d]|
    weights = p ** np.arange(depth)
    values = overlap @ (weights / np.arange(1, depth + 1)) / weights.sum()
    per_topic = pd.Series(values, index=pd.Index(topics, name="query_id"), name="RBO", dtype=float)
    return PerTopic(per_topic, _mean_defined(per_topic))


# --- topic scores ---------------------------------------------------------------------------------------------


def _paired(x, y, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Two score vectors paired by topic (Series: by index, which must hold the same topics) or by position."""
    if isinstance(x, pd.Series) and isinstance(y, pd.Series):
        if x.index.has_duplicates or y.index.has_duplicates:
            raise InputError(f"{what}: a topic appears twice in the scores")
        only_x, only_y = x.index.difference(y.index), y.index.difference(x.index)
        if len(only_x) or len(only_y):
            raise InputError(f"{what}: the scores cover different topics (only in the first: {list(only_x)[:5]}, "
                             f"only in the second: {list(only_y)[:5]}); score a missing topic as 0 (trec_eval -c) "
                             f"if that is what it means")
        y = y.reindex(x.index)
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xa.ndim != 1 or xa.shape != ya.shape:
        raise InputError(f"{what}: expected two 1-d score vectors of one length, got shapes {xa.shape}, {ya.shape}")
    if len(xa) == 0:
        raise InputError(f"{what}: no topics")
    return xa, ya


def rmse(orig_scores, repro_scores) -> float:
    """Root mean squared error of the per-topic scores of one measure (Breuer et al. 2020, Sec. 4.2):

        RMSE = sqrt( (1/n) sum_j (x_j - x'_j)**2 )

    over the n topics, x the original and x' the reproduced run's scores. 0 for identical scores. Only for
    reproducibility (the same topics)."""
    x, y = _paired(orig_scores, repro_scores, "RMSE")
    return float(np.sqrt(np.mean(np.square(x - y))))


def _improvement(baseline, advanced, what: str) -> tuple[float, float, float]:
    """(mean per-topic improvement advanced - baseline, mean baseline, mean advanced) of one experiment."""
    b, a = _paired(baseline, advanced, what)
    return float(np.mean(a - b)), float(np.mean(b)), float(np.mean(a))


def effect_ratio(orig_baseline, orig_advanced, repro_baseline, repro_advanced,
                 min_effect: float = MIN_EFFECT) -> EffectRatio:
    """Effect ratio (Breuer et al. 2020, Sec. 4.3): how much of the original improvement the reproduction keeps,

        ER = mean_j(a'_j - b'_j) / mean_j(a_j - b_j)

    with a, b the advanced and baseline run's per-topic scores of the original experiment and a', b' of the
    reproduced one (each experiment over its own topics, so it serves replicability too). ER = 1: the same effect;
    0 < ER < 1: a smaller one; ER > 1: a larger one; ER <= 0: none or the opposite.

    Undefined (``value`` NaN, ``reason`` set) when the original effect is below ``min_effect`` in magnitude
    (default :data:`MIN_EFFECT` = 1e-4, one unit in the 4th decimal, see there): there is no effect to keep, and
    ``repro_eval`` then returns a huge ratio, or inf / nan with a numpy warning.
    """
    effect, _, _ = _improvement(orig_baseline, orig_advanced, "ER, original experiment")
    effect_r, _, _ = _improvement(repro_baseline, repro_advanced, "ER, reproduced experiment")
    if not abs(effect) >= min_effect - _FLOAT_SLACK:
        return EffectRatio(math.nan, effect, effect_r,
                           f"original effect {effect:+.2e} is below {min_effect:g} in magnitude: the original "
                           f"experiment shows no improvement that the reproduction could keep")
    return EffectRatio(effect_r / effect, effect, effect_r)


@dataclass(frozen=True)
class RatioInterval:
    """A Fieller confidence set of a ratio of two means: ``[low, high]`` when bounded; ``bounded`` False (``low``,
    ``high`` NaN) when the denominator's mean is not distinguishable from 0 at the level, and the set is unbounded;
    ``denominator_low``/``high``: the t interval of the denominator's mean."""

    low: float
    high: float
    bounded: bool
    denominator_low: float
    denominator_high: float


def effect_ratio_interval(orig_baseline, orig_advanced, repro_baseline, repro_advanced,
                          level: float = 0.95) -> RatioInterval:
    """Fieller's confidence set (Fieller 1954) for ER of a reproduction on the *same* topics (reproducibility).

    Per topic j let d_j = a_j - b_j (original effect) and d'_j = a'_j - b'_j (reproduced); ER = mean(d') / mean(d).
    With the means' variances v_d, v_d' and covariance c (sample (co)variances over n topics divided by n) and
    t = t_{n-1, (1+level)/2}, the ρ with (mean(d') - ρ mean(d))² <= t² (v_d' - 2ρc + ρ² v_d) form a bounded interval
    exactly when mean(d)² > t² v_d, i.e. when the original effect is significantly different from 0 (its t interval
    excludes 0); otherwise the set is unbounded: the data are consistent with any ER, and a point ER (however large)
    says nothing. The set is the solutions of the quadratic
    (mean(d)² - t² v_d) ρ² - 2 (mean(d) mean(d') - t² c) ρ + (mean(d')² - t² v_d') <= 0.

    Pairing. The covariance c pairs each topic's original effect d_j with its reproduced effect d'_j, so the four
    score vectors must be given alike. Four Series indexed by topic id are paired by topic, in any order: the
    baseline with the advanced scores within each experiment, then the original with the reproduced effects; each
    pair must cover the same topics (else :class:`~irrepro.errors.InputError`, naming the topics found on one side
    only). Four 1-d arrays (or lists) without topic ids are paired by position: element j of each is topic j, the
    same topic in all four, and they must be of one length. Series mixed with arrays raise InputError.
    """
    sides = (orig_baseline, orig_advanced, repro_baseline, repro_advanced)
    by_topic = sum(isinstance(s, pd.Series) for s in sides)
    if by_topic not in (0, len(sides)):
        raise InputError(f"ER interval: {by_topic} of the 4 score vectors are Series indexed by topic id and "
                         f"{len(sides) - by_topic} have no topic ids; give all four as Series (paired by topic) "
                         "or all four as arrays (paired by position)")
    b, a = _paired(orig_baseline, orig_advanced, "ER interval, original experiment")
    rb, ra = _paired(repro_baseline, repro_advanced, "ER interval, reproduced experiment")
    d, dr = a - b, ra - rb
    if by_topic:  # d is in orig_baseline's topic order, dr in repro_baseline's: pair them by topic
        d, dr = _paired(pd.Series(d, index=orig_baseline.index), pd.Series(dr, index=repro_baseline.index),
                        "ER interval, original (first) vs reproduced (second) experiment")
    elif len(d) != len(dr):
        raise InputError(f"ER interval: the original has {len(d)} topics, the reproduction {len(dr)}; Fieller's "
                         "interval pairs them (the same topics)")
    n = len(d)
    if n < 2:
        raise InputError("ER interval: at least 2 topics are needed")
    md, mr = float(d.mean()), float(dr.mean())
    cov = np.cov(np.vstack([d, dr]), ddof=1) / n
    vd, vr, c = float(cov[0, 0]), float(cov[1, 1]), float(cov[0, 1])
    from scipy import stats  # here, not at the top: the Snakefile's plan imports this module
    t = float(stats.t.ppf((1 + level) / 2, n - 1))
    half = t * math.sqrt(vd)
    A = md * md - t * t * vd
    if not A > 0:
        return RatioInterval(math.nan, math.nan, False, md - half, md + half)
    B = md * mr - t * t * c
    C = mr * mr - t * t * vr
    disc = max(B * B - A * C, 0.0)
    r = math.sqrt(disc)
    return RatioInterval((B - r) / A, (B + r) / A, True, md - half, md + half)


def delta_ri(orig_baseline, orig_advanced, repro_baseline, repro_advanced,
             min_effect: float = MIN_EFFECT) -> DeltaRI:
    """Delta relative improvement (Breuer et al. 2020, Sec. 4.3):

        RI = (mean(a) - mean(b)) / mean(b),   ΔRI = RI - RI'

    with RI of the original and RI' of the reproduced (baseline b, advanced a) pair, means over each experiment's
    topics. 0: the same relative improvement; > 0: the reproduction improves less. Undefined (NaN with a reason)
    when a baseline mean is below ``min_effect`` (:data:`MIN_EFFECT`): a relative improvement over a baseline that
    scores 0 at the printed precision is not a number.
    """
    _, mb, ma = _improvement(orig_baseline, orig_advanced, "ΔRI, original experiment")
    _, mb_r, ma_r = _improvement(repro_baseline, repro_advanced, "ΔRI, reproduced experiment")
    reasons = [f"{side} baseline mean {m:.2e} is below {min_effect:g}: its relative improvement is undefined"
               for side, m in (("original", mb), ("reproduced", mb_r)) if not abs(m) >= min_effect - _FLOAT_SLACK]
    ri = (ma - mb) / mb if mb else math.nan
    ri_r = (ma_r - mb_r) / mb_r if mb_r else math.nan
    if reasons:
        return DeltaRI(math.nan, ri, ri_r, "; ".join(reasons))
    return DeltaRI(ri - ri_r, ri, ri_r)


def ttest_paired(orig_scores, repro_scores) -> float:
    """Two-sided paired t-test p-value of the original vs the reproduced per-topic scores
    (``scipy.stats.ttest_rel``), for reproducibility (the same topics). A small p says the reproduction's scores
    differ systematically from the original's. Identical scores give 1.0 (the t statistic is 0/0;
    ``repro_eval`` returns 1.0 only when every measure of the run is identical, NaN otherwise)."""
    x, y = _paired(orig_scores, repro_scores, "paired t-test")
    if np.array_equal(x, y):
        return 1.0
    from scipy import stats  # here, not at the top: the Snakefile's plan imports this module
    return float(stats.ttest_rel(x, y).pvalue)


def ttest_unpaired(orig_scores, repro_scores) -> float:
    """Two-sided unpaired Student t-test p-value (equal variances, ``scipy.stats.ttest_ind`` as ``repro_eval``)
    of the original vs the reproduced per-topic scores, for replicability (other topics, so no pairing; the two
    samples may differ in size). Two samples of one and the same constant give 1.0."""
    x = np.asarray(orig_scores, dtype=float)
    y = np.asarray(repro_scores, dtype=float)
    if x.ndim != 1 or y.ndim != 1 or len(x) < 2 or len(y) < 2:
        raise InputError(f"unpaired t-test: expected two 1-d score vectors of >= 2 topics, got shapes {x.shape}, "
                         f"{y.shape}")
    if np.ptp(x) == 0 and np.ptp(y) == 0 and x[0] == y[0]:
        return 1.0
    from scipy import stats  # here, not at the top: the Snakefile's plan imports this module
    return float(stats.ttest_ind(x, y).pvalue)
