"""The experiment protocol of Figs. 2–3 of Oosterhuis et al. (KDD 2024): random 50:50 validation/test splits,
``n`` human-labelled validation queries, bootstrap / PPI / CRC intervals, many repetitions (:func:`ci_experiment`)."""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from irrepro.core.progress import Progress
from irrepro.errors import InputError
from irrepro.papers.ci.bootstrap import BOOTSTRAPS, bootstrap_ci
from irrepro.papers.ci.calibration import batch_counts, calibrate_crc_sets, crc_interval
from irrepro.papers.ci.metric import (DEFAULT_LABEL_GAIN, _LOSS_RTOL, _check_alpha, _check_dist, _check_values,
                                      _gain_spec, _link, _query_weights)
from irrepro.papers.ci.ppi import ppi_mean_ci

log = logging.getLogger("irrepro.papers.ci.intervals")


def covers(low, high, value):
    """``low ≤ value ≤ high`` up to rounding (1e-9 relative): an interval of width 0 around an exactly known value
    (e.g. CRC with labels equal to the truth) covers it even when the two sums were added up in another order."""
    low, high, value = (np.asarray(x, dtype=float) for x in (low, high, value))
    eps = _LOSS_RTOL * np.maximum(1.0, np.abs(value))
    return (low <= value + eps) & (value <= high + eps)


RESULT_COLUMNS = ["method", "n", "repetition", "estimate", "low", "high", "width", "covered", "target", "failed",
                  "lam_low", "lam_high"]
METHODS = ("bootstrap", "ppi", "crc")
SPLITS = ("fixed", "resplit")
TARGETS = ("test", "all")


def _splits(N, repetitions, groups, rng, split="fixed"):
    """(R, n_val) validation queries in random order and (R, n_test) test queries: a random 50:50 split (within
    each group when ``groups`` is given: stratified, as the paper's per-year TREC-DL split).

    ``split="resplit"``: a new split per repetition; ``"fixed"``: ONE split (the first draw of ``rng``) shared by
    all repetitions, each repetition a new random order of the same validation half (the authors' code)."""
    if split == "fixed":
        val, test = _splits(N, 1, groups, rng, "resplit")
        R = int(repetitions)
        order = np.argsort(rng.random((R, val.shape[1])), axis=1)
        return val[0][order], np.repeat(test, R, axis=0)
    if split != "resplit":
        raise InputError(f"split must be one of {SPLITS}, got {split!r}")
    R = repetitions
    if groups is None:
        perm = np.argsort(rng.random((R, N)), axis=1)
        n_val = N // 2
        return perm[:, :n_val], perm[:, n_val:]
    groups = np.asarray(groups)
    val, test = [], []
    for gval in np.unique(groups):
        members = np.flatnonzero(groups == gval)
        order = members[np.argsort(rng.random((R, members.size)), axis=1)]
        h = members.size // 2
        val.append(order[:, :h])
        test.append(order[:, h:])
    val = np.concatenate(val, axis=1)
    test = np.concatenate(test, axis=1)
    shuffle = np.argsort(rng.random(val.shape), axis=1)
    return np.take_along_axis(val, shuffle, axis=1), test


def ci_experiment(u_true, dists, n_values, *, weights=None, u_pred=None, gain=None, repetitions=500, seed=0,
                  alpha=0.05, n_boot=10_000, n_batches=10_000, groups=None, methods=METHODS, correction="batches",
                  tol=1e-6, grid=15, target="test", split="fixed", bootstrap="basic", label_gain=DEFAULT_LABEL_GAIN):
    """The experiment of Sec. 7 / Figs. 2–3: CI width and coverage of bootstrap, PPI and CRC.

    The defaults are the authors' protocol (google-research ``high_confidence_ir_eval_using_genai``: ``datasets.py``
    splits the queries ONCE, ``utils.run_method`` varies only the n-subsample of the validation half and the random
    draws over the 500 seeds, and coverage is ``lower <= ds_test.true_dcg() <= upper``):

    ``split``: ``"fixed"`` (default, the authors' code) one 50:50 split for all repetitions; ``"resplit"`` a new
    split per repetition (coverage then also averages over splits).
    ``target``: what coverage is measured against — ``"test"`` (default; the paper's "the true performance on the
    test-set" and the authors' code: the mean true value over the test half) or ``"all"`` (the mean over all N
    queries, which includes the n labelled ones, so every interval looks better than its level: an 80% PPI
    interval "covers" 0.93–0.97 of the time at n = 20 of N = 43 on synthetic data, with re-drawn splits).
    ``bootstrap``: ``"basic"`` (default, the paper's and the authors' empirical bootstrap) or ``"percentile"``
    (:func:`bootstrap_ci`).  ``label_gain``: ``"expected_gain"`` (E_P[2^r − 1], the text) or
    ``"gain_of_expected_grade"`` (2^{E_P[r]} − 1, the authors' code) — used for Û (when ``u_pred`` is None) and
    for CRC (see :data:`~irrepro.papers.ci.metric.LABEL_GAINS`).

    Inputs: ``u_true`` (N,) human per-query metric values (e.g. DCG@10 of BM25 from the qrels); ``dists``
    (N, depth, G) LLM label distributions of each query's ranked documents; ``weights`` ω (default DCG over
    ``depth``; (N, depth) for padded queries); ``u_pred`` (N,) LLM-predicted per-query values (default
    ``query_utility(dists, weights, gain)``, Eq. 6); ``n_values`` the numbers n of human-labelled queries.

    Each repetition r (shared by all n and methods — common random numbers, so the curves over n are smooth):
    the 50:50 split of the N queries into validation (⌊N/2⌋, or ⌊half⌋ of each group in ``groups``) and test
    halves (the same for every r with ``split="fixed"``); the n human-labelled queries are the first n of a random
    order of the validation half (drawn without replacement; nested across n).

    * ``bootstrap``: basic (or percentile) bootstrap (``n_boot`` resamples) of the n human values
      (:func:`bootstrap_ci`).
    * ``ppi``: Eq. 11 on Q = the n labelled validation queries (true and predicted values) plus the test half
      (predictions only): mean prediction over these n + N_test queries, mean error over the n, ddof = 1
      (:func:`ppi_mean_ci`).  The unlabelled rest of the validation half is not used (by any method).
    * ``crc``: λ calibrated (:func:`calibrate_crc`) on ``n_batches`` batches of n queries drawn with replacement
      from the n labelled validation queries, interval ``[Û_CRC(Q_test, λ_low), Û_CRC(Q_test, λ_high)]`` from the
      LLM labels of the test half (Eq. 20).  A failed calibration gives ``failed=True``, NaN low/high/width and
      ``covered=False``.

    Random streams: splits (and with ``split="fixed"`` the orders of the validation half) from
    ``SeedSequence(seed, spawn_key=(0,))``, the draws of method k (its index in
    ``METHODS``) for n from ``SeedSequence(seed, spawn_key=(1, n, k))``, so a result does not depend on which other
    n or methods were requested.
    Returns a DataFrame with columns ``RESULT_COLUMNS`` (one row per method × n × repetition); ``covered`` is
    ``low ≤ target ≤ high``.
    """
    return ci_experiments(u_true, [dists], n_values, weights=weights, u_preds=None if u_pred is None else [u_pred],
                          gain=gain, repetitions=repetitions, seed=seed, alpha=alpha, n_boot=n_boot,
                          n_batches=n_batches, groups=groups, methods=methods, correction=correction, tol=tol,
                          grid=grid, target=target, split=split, bootstrap=bootstrap, label_gain=label_gain)[0]


def ci_experiments(u_true, dists_list, n_values, *, weights=None, u_preds=None, gain=None, repetitions=500, seed=0,
                   alpha=0.05, n_boot=10_000, n_batches=10_000, groups=None, methods=METHODS, correction="batches",
                   tol=1e-6, grid=15, target="test", split="fixed", bootstrap="basic",
                   label_gain=DEFAULT_LABEL_GAIN):
    """:func:`ci_experiment` for several sets of LLM labels of the same queries at once (Fig 3's settings of β and
    ζ): a list of result tables, the i-th equal to ``ci_experiment(u_true, dists_list[i], ...)`` (``u_preds[i]``
    its ``u_pred``).

    The settings share the experiment's random streams, so what depends only on them is computed once and used by
    every setting: the splits, the bootstrap intervals (human values only), and each repetition's CRC batches and
    their count matrix (:func:`~irrepro.papers.ci.calibration.batch_counts`); each repetition calibrates all
    settings in one :func:`~irrepro.papers.ci.calibration.calibrate_crc_sets` call; per setting remain PPI and the
    CRC interval. The results are those of separate calls, bit for bit."""
    alpha = _check_alpha(alpha)
    u_true = _check_values(u_true, "u_true", ndim=1)
    N = u_true.size
    Ps = []
    for dists in dists_list:
        P = _check_dist(dists, "dists", min_ndim=3)
        if P.ndim != 3 or P.shape[0] != N:
            raise InputError(f"dists must have shape (N, depth, G) with N = len(u_true) = {N}, got {P.shape}")
        Ps.append(P)
    if not Ps:
        return []
    depths = {P.shape[1] for P in Ps}
    if len(depths) != 1:
        raise InputError(f"the label sets of one experiment must have one depth, got {sorted(depths)}")
    W = np.ascontiguousarray(_query_weights(weights, N, Ps[0].shape[1]))
    if bootstrap not in BOOTSTRAPS:
        raise InputError(f"bootstrap must be one of {BOOTSTRAPS}, got {bootstrap!r}")
    if target not in TARGETS:
        raise InputError(f"target must be one of {TARGETS}, got {target!r}")
    if u_preds is None:
        u_preds = [None] * len(Ps)
    if len(u_preds) != len(Ps):
        raise InputError(f"u_preds: one per label set ({len(Ps)}), got {len(u_preds)}")
    preds = []
    for P, u_pred in zip(Ps, u_preds):
        v, link = _gain_spec(gain, P.shape[-1], label_gain)
        if u_pred is None:
            u_pred = np.sum(_link(P @ v, link) * W, axis=-1)
        u_pred = _check_values(u_pred, "u_pred", ndim=1)
        if u_pred.size != N:
            raise InputError(f"u_pred must have length N = {N}, got {u_pred.size}")
        preds.append(u_pred)
    methods = tuple(methods)
    unknown = set(methods) - set(METHODS)
    if unknown:
        raise InputError(f"unknown methods {sorted(unknown)}; expected a subset of {METHODS}")
    if groups is not None and np.shape(groups) != (N,):
        raise InputError(f"groups must have shape (N,) = ({N},), got {np.shape(groups)}")
    R = int(repetitions)
    if R < 1:
        raise InputError(f"repetitions must be >= 1, got {repetitions}")
    if int(n_batches) < 1 or int(n_boot) < 1:
        raise InputError(f"n_batches and n_boot must be >= 1, got {n_batches}, {n_boot}")
    val, test = _splits(N, R, groups, np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0,))), split)
    n_val = val.shape[1]
    n_values = [int(x) for x in np.atleast_1d(n_values)]
    for n in n_values:
        if n < 2 or n > n_val:
            raise InputError(f"n = {n} human-labelled queries: need 2 <= n <= {n_val} (the size of the validation "
                             f"half of N = {N} queries)")
    target = u_true[test].mean(axis=1) if target == "test" else np.full(R, u_true.mean())
    reps = np.arange(R)
    S = len(Ps)
    frames = [[] for _ in range(S)]
    progress = Progress(len(n_values) * R * S if "crc" in methods else 0,
                        f"CRC calibrations (n = {n_values}{f', {S} label sets' if S > 1 else ''})",
                        unit="calibrations")
    for n in n_values:
        lab = val[:, :n]

        def stream(method):
            return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1, n, METHODS.index(method))))

        def frame(method, est, low, high, failed=False, lam_low=np.nan, lam_high=np.nan):
            low = np.asarray(low, dtype=float)
            high = np.asarray(high, dtype=float)
            return pd.DataFrame({
                "method": method, "n": n, "repetition": reps, "estimate": est, "low": low, "high": high,
                "width": high - low, "covered": covers(low, high, target), "target": target,
                "failed": failed, "lam_low": lam_low, "lam_high": lam_high})

        if "bootstrap" in methods:   # human values only: the same for every label set
            b = bootstrap_ci(u_true[lab], alpha, n_boot, rng=stream("bootstrap"), kind=bootstrap)
            boot = frame("bootstrap", b.estimate, b.low, b.high)
            for i in range(S):
                frames[i].append(boot.copy())
        if "ppi" in methods:
            for i in range(S):
                p = ppi_mean_ci(u_true[lab], preds[i][lab], preds[i][test], alpha, include_labelled=True, ddof=1)
                frames[i].append(frame("ppi", p.estimate, p.low, p.high))
        if "crc" in methods:
            est, lo, hi = np.empty((S, R)), np.empty((S, R)), np.empty((S, R))
            lam_lo, lam_hi, failed = np.empty((S, R)), np.empty((S, R)), np.zeros((S, R), bool)
            rng = stream("crc")
            for r in range(R):
                q = lab[r]
                batches = rng.integers(0, n, size=(int(n_batches), n))
                counts = batch_counts(batches, n)
                t = test[r]
                cals = calibrate_crc_sets(u_true[q], [P[q] for P in Ps], batches, alpha, weights=W[q], gain=gain,
                                          correction=correction, tol=tol, grid=grid, label_gain=label_gain,
                                          check_batches=False, counts=counts)
                for i, (P, cal) in enumerate(zip(Ps, cals)):
                    ci = crc_interval(P[t], cal, weights=W[t], gain=gain, label_gain=label_gain)
                    est[i, r], lo[i, r], hi[i, r] = ci
                    lam_lo[i, r], lam_hi[i, r], failed[i, r] = cal.lam_low, cal.lam_high, cal.failed
                    progress.advance()
            for i in range(S):
                frames[i].append(frame("crc", est[i], lo[i], hi[i], failed[i], lam_lo[i], lam_hi[i]))
        log.info("ci_experiment: n = %d done (%d repetitions, methods %s%s)", n, R, ",".join(methods),
                 f", {S} label sets" if S > 1 else "")
    progress.close()
    return [pd.concat(f, ignore_index=True)[RESULT_COLUMNS] for f in frames]
