"""Coverage of per-system confidence intervals (the CI paper's) for the systems that share a labeler's model
against the others, from one table of intervals or from repeated draws of human-labelled queries."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from irrepro.errors import InputError
from irrepro.selfpref.bias import _flags
from irrepro.selfpref.scores import _cut

COVERAGE_COLUMNS = ["method", "group", "intervals", "covered", "coverage", "coverage_low", "coverage_high",
                    "no_interval"]
GROUPS = ("same_model", "other")


def coverage_by_group(intervals: pd.DataFrame, same_model: Mapping[str, bool], *,
                      labeler: str | None = None) -> pd.DataFrame:
    """Coverage of per-system confidence intervals for the same-model systems against the others, per method.

    ``intervals``: one row per interval with columns ``system, method, low, high, truth`` — the table of
    ``ci.systems`` (:func:`irrepro.papers.ci.systems.evaluate_systems`, ``results/<v>/ci/systems_<c>.csv``) fits
    as it is; its ``kind = difference`` rows (a difference of two systems) are left out, and ``collection``,
    ``labeler`` and ``measure`` columns, where present, split the table too. Rows of several draws (the ``draw``
    column, as :func:`coverage_draws` writes it: one draw of human-labelled queries, with its seed) are pooled; a
    table without a ``draw`` column is one draw. An interval covers its truth when ``low ≤ truth ≤ high`` up to
    rounding (:func:`irrepro.papers.ci.experiment.covers`). A row without an interval (NaN ``low`` / ``high``, a CRC
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
