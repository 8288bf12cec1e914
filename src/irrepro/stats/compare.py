"""The per-pair table of one collection and measure: every pair of systems (or every system against a baseline)
under every configured test and correction, with the difference, its interval and an effect size.

Columns: ``system_a, system_b, n_topics, mean_a, mean_b, delta, ci_low, ci_high, effect_size, test, p_value,
correction, p_adjusted, significant``. ``delta`` = mean_a − mean_b; without a baseline, systems are ranked by mean
(ties by name) and each pair lists the better-ranked system first (delta ≥ 0); with a baseline, system_b is the
baseline. The family of a correction is all pairs of one collection × measure × test (only the baseline's pairs
when a baseline is set, as PyTerrier's ``pt.Experiment`` does).

- ``ci_low, ci_high``: the (1 − α) interval of delta: the percentile bootstrap interval for ``bootstrap``, the
  simultaneous randomised-Tukey interval for ``tukey``, the paired t-interval otherwise.
- ``effect_size``: mean difference over the standard deviation of the per-topic differences (Cohen's d_z; Sakai
  2018, Sec. 5.2) for the paired tests; for ``tukey``, delta / sqrt(MS_res) of the two-way ANOVA of all systems
  (Sakai's ES_E2).
- ``tukey`` rows carry the randomised Tukey HSD p-value, family-wise adjusted by construction, with correction
  ``hsd`` (p_adjusted = p_value).

Without spread the effect size has no finite value: a pair whose per-topic differences are constant up to rounding
(:func:`spread_tolerance`; they are then tested as exactly constant, as 0 when their mean is 0 within it) has
d_z = ±inf (NaN when the constant is 0: identical scores), and ``tukey``'s ES_E2 is ±inf / NaN when the ANOVA's
residual variance is 0 within rounding (:func:`irrepro.stats.gstudy.gstudy`). Such rows carry a ``note`` (a last
column, present when a row has one), never a quotient of rounding errors.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from irrepro.errors import InputError
from irrepro.stats import paired
from irrepro.stats.gstudy import gstudy
from irrepro.stats.tukey import tukey_hsd

COLUMNS = ["system_a", "system_b", "n_topics", "mean_a", "mean_b", "delta", "ci_low", "ci_high", "effect_size",
           "test", "p_value", "correction", "p_adjusted", "significant"]
ALL_TESTS = paired.TESTS + ("tukey",)


def complete_matrix(mat: pd.DataFrame, what: str = "") -> tuple[pd.DataFrame, list]:
    """Keep the topics every system has a score for (paired tests and the ANOVA need a complete matrix); returns the
    matrix and the dropped topics."""
    keep = mat.notna().all(axis=1)
    dropped = list(mat.index[~keep])
    out = mat[keep]
    if len(out) < 2 or out.shape[1] < 2:
        raise InputError(f"{what}: {len(out)} topics scored by all {mat.shape[1]} systems; comparing systems needs "
                         f"at least 2 systems and 2 topics")
    return out, dropped


def spread_tolerance(X: np.ndarray, a, b) -> np.ndarray:
    """Per pair (columns ``a``, ``b`` of ``X``), the largest standard deviation (and mean) that constant per-topic
    differences can show from rounding alone: each difference carries an error up to about eps·(|x_a| + |x_b|)
    (the scores' own rounding and the subtraction's), and the standard deviation's sums over the T topics add up to
    T times that; so ``T·eps·max_t(|x_a| + |x_b|)``."""
    X = np.asarray(X, dtype=float)
    return X.shape[0] * np.finfo(float).eps * (np.abs(X[:, a]) + np.abs(X[:, b])).max(axis=0)


def _no_spread_effect(mean, tol):
    """The effect size of differences without spread: ±inf, NaN where the mean is 0 within ``tol``."""
    zero = np.abs(mean) <= tol
    return np.where(zero, np.nan, np.copysign(np.inf, mean)), zero


def pairs(systems, baseline: str | None):
    """(a, b) index arrays into ``systems`` (already ranked): all pairs i < j, or every system against the
    baseline."""
    systems = list(systems)
    if baseline is None:
        a, b = np.triu_indices(len(systems), 1)
        return a, b
    j = systems.index(baseline)
    a = np.array([i for i in range(len(systems)) if i != j], dtype=int)
    return a, np.full(a.size, j, dtype=int)


def ranked(mat: pd.DataFrame) -> pd.DataFrame:
    """Columns ordered by mean score, best first (ties by name)."""
    means = mat.mean(axis=0)
    order = sorted(mat.columns, key=lambda s: (-means[s], s))
    return mat[order]


def compare(mat: pd.DataFrame, *, tests, corrections, alpha: float, n_permutations: int, n_bootstrap: int,
            seed: int, baseline: str | None = None) -> pd.DataFrame:
    """The per-pair table of a complete topic-by-system matrix (see the module docstring)."""
    for t in tests:
        if t not in ALL_TESTS:
            raise ValueError(f"unknown test {t!r}; one of {ALL_TESTS}")
    mat = ranked(mat)
    systems = list(mat.columns)
    if baseline is not None and baseline not in systems:
        raise InputError(f"baseline {baseline!r} is not among the systems ({len(systems)}: {systems[:5]} ...)")
    X = mat.to_numpy(dtype=float)
    T = X.shape[0]
    a, b = pairs(systems, baseline)
    D = X[:, a] - X[:, b]
    tol = spread_tolerance(X, a, b)
    flat = D.std(axis=0, ddof=1) <= tol
    # differences constant up to rounding are taken as constant (0 where their mean is), so that every test applies
    # its convention for constant differences instead of testing rounding noise
    inf_es, same = _no_spread_effect(D.mean(axis=0), tol)
    D = np.where(flat, np.where(same, 0.0, D.mean(axis=0)), D)
    mean, t_lo, t_hi, sd = paired.t_interval(D, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        d_z = np.where(flat, inf_es, mean / sd)
    flat_note = np.where(~flat, "", np.where(same, "identical scores on every topic: no difference, effect size "
                                             "undefined", "the same difference on every topic (no spread): effect "
                                             "size infinite"))
    means = X.mean(axis=0)
    base = {"system_a": np.array(systems)[a], "system_b": np.array(systems)[b], "n_topics": T,
            "mean_a": means[a], "mean_b": means[b], "delta": mean}
    # one generator per test, so that adding a test leaves the others' resamples unchanged
    rngs = dict(zip(ALL_TESTS, np.random.default_rng(seed).spawn(len(ALL_TESTS))))
    frames = []
    for test in tests:
        lo, hi, es, note = t_lo, t_hi, d_z, flat_note
        if test == "t":
            p = paired.paired_t(D)
        elif test == "wilcoxon":
            p = paired.wilcoxon(D)
        elif test == "sign":
            p = paired.sign(D)
        elif test == "randomisation":
            p = paired.randomisation(D, n_permutations, rngs[test])
        elif test == "bootstrap":
            p, lo, hi = paired.bootstrap(D, n_bootstrap, rngs[test], alpha)
        else:
            p, half = tukey_hsd(X, a, b, n_permutations, rngs[test], alpha)
            lo, hi = mean - half, mean + half
            var_res = gstudy(X)["var_residual"]  # MS_res, 0 when within rounding of 0
            if var_res > 0:
                es, note = mean / np.sqrt(var_res), np.full(mean.size, "")
            else:
                es, same = _no_spread_effect(mean, tol)
                note = np.where(same, "no residual variance and no difference: ES_E2 undefined",
                                "no residual variance (every system's scores differ by a constant on every "
                                "topic): ES_E2 infinite")
        for corr in (["hsd"] if test == "tukey" else corrections):
            padj = p if corr == "hsd" else paired.adjust(p, corr)
            frames.append(pd.DataFrame({**base, "ci_low": lo, "ci_high": hi, "effect_size": es, "test": test,
                                        "p_value": p, "correction": corr, "p_adjusted": padj,
                                        "significant": padj < alpha, "note": note}))
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    out = pd.concat(frames, ignore_index=True)
    return out[COLUMNS + (["note"] if out["note"].astype(bool).any() else [])]


def degenerate_notes(table: pd.DataFrame) -> list:
    """One line per kind of note in the per-pair table (``compare``'s ``note`` column): how many pairs of which
    tests it concerns, with an example pair; empty without notes."""
    if "note" not in table:
        return []
    out = []
    for note, g in table[table["note"].fillna("").astype(bool)].groupby("note", sort=False):
        pairs_ = g.drop_duplicates(["system_a", "system_b"])
        ex = pairs_.iloc[0]
        out.append(f"{len(pairs_)} pair(s) ({', '.join(dict.fromkeys(g.test))}; e.g. {ex.system_a} vs "
                   f"{ex.system_b}): {note}")
    return out


def summary(table: pd.DataFrame, mat: pd.DataFrame, baseline: str | None) -> pd.DataFrame:
    """One row per system (ranked by mean): its mean, and per test (first correction of each) how many systems it
    is significantly better / worse than ("+k / −m"); with a baseline, the adjusted p-value against it, marked
    ▲ (significantly better) or ▼ (worse)."""
    mat = ranked(mat)
    out = pd.DataFrame({"system": mat.columns, "mean": mat.mean(axis=0).to_numpy()})
    for test, g in table.groupby("test", sort=False):
        g = g[g["correction"] == g["correction"].iloc[0]]
        col = f"{test} ({g['correction'].iloc[0]})"
        if baseline is None:
            sig = g[g["significant"]]
            better = sig.groupby("system_a").size()
            worse = sig.groupby("system_b").size()
            out[col] = [f"+{better.get(s, 0)} / −{worse.get(s, 0)}" for s in out["system"]]
        else:
            byp = g.set_index("system_a")
            cells = []
            for s in out["system"]:
                if s == baseline:
                    cells.append("baseline")
                    continue
                r = byp.loc[s]
                mark = ("▲" if r["delta"] > 0 else "▼") if r["significant"] else ""
                cells.append(f"{r['p_adjusted']:.3g}{mark}")
            out[col] = cells
    return out
