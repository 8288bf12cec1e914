"""The per-pair table of one collection and measure: every pair of systems, or every system against each baseline,
under every configured test and correction, with the difference, its interval and an effect size.

Columns: ``system_a, system_b, baseline, n_topics, mean_a, mean_b, delta, ci_low, ci_high, effect_size, test,
p_value, correction, p_adjusted, significant``. ``delta`` = mean_a − mean_b.

- Without a baseline (``baseline`` empty): systems are ranked by mean (ties by name) and each pair lists the
  better-ranked system first (delta ≥ 0). The family of a correction is all pairs of one collection × measure × test.
- With baselines: one block of rows per baseline, in the configured order, every other system against it (as
  PyTerrier's ``pt.Experiment(baseline=...)`` does): system_a the system, system_b = ``baseline`` the baseline, so
  delta = system − baseline is signed (positive: better than the baseline). The family of a correction is one
  baseline × one test × one measure: the other systems' comparisons with that baseline. Each baseline's resamples
  have their own seed (from the seed and the baseline's name), so adding a baseline changes no other's rows.
- ``ci_low, ci_high``: the (1 − α) interval of delta: the symmetric bootstrap-t interval for ``bootstrap``, the
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

COLUMNS = ["system_a", "system_b", "baseline", "n_topics", "mean_a", "mean_b", "delta", "ci_low", "ci_high",
           "effect_size", "test", "p_value", "correction", "p_adjusted", "significant"]
ALL_TESTS = paired.TESTS + ("tukey",)


def baselines(baseline) -> list | None:
    """The baselines of a setting: None (all pairs), one name, or a list of names (an empty list is none)."""
    if baseline is None:
        return None
    out = [baseline] if isinstance(baseline, str) else list(baseline)
    return out or None


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


def compared_pairs(systems, baseline) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) index arrays of the distinct pairs the per-pair table compares: all pairs without a baseline, else the
    union of every baseline's pairs (a pair of two baselines once, as the first baseline's family has it)."""
    bases = baselines(baseline)
    if bases is None:
        return pairs(systems, None)
    seen, a, b = set(), [], []
    for base in bases:
        for i, j in zip(*pairs(systems, base)):
            if frozenset((i, j)) not in seen:
                seen.add(frozenset((i, j)))
                a.append(i)
                b.append(j)
    return np.array(a, dtype=int), np.array(b, dtype=int)


def ranked(mat: pd.DataFrame) -> pd.DataFrame:
    """Columns ordered by mean score, best first (ties by name)."""
    means = mat.mean(axis=0)
    order = sorted(mat.columns, key=lambda s: (-means[s], s))
    return mat[order]


def paired_differences(X: np.ndarray, a, b, alpha: float) -> dict:
    """The per-topic differences of the pairs (a[i], b[i]) of ``X`` (T × S), constant up to rounding taken as
    constant (0 where their mean is 0 within :func:`spread_tolerance`), with their mean, paired t-interval at level
    1 − alpha, Cohen's d_z, and per pair the note of a degenerate one (empty otherwise): keys ``D, mean, lo, hi, d_z,
    note, tol``."""
    D = X[:, a] - X[:, b]
    tol = spread_tolerance(X, a, b)
    flat = D.std(axis=0, ddof=1) <= tol
    # differences constant up to rounding are taken as constant (0 where their mean is), so that every test applies
    # its convention for constant differences instead of testing rounding noise
    inf_es, same = _no_spread_effect(D.mean(axis=0), tol)
    D = np.where(flat, np.where(same, 0.0, D.mean(axis=0)), D)
    mean, lo, hi, sd = paired.t_interval(D, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        d_z = np.where(flat, inf_es, mean / sd)
    note = np.where(~flat, "", np.where(same, "identical scores on every topic: no difference, effect size "
                                        "undefined", "the same difference on every topic (no spread): effect "
                                        "size infinite"))
    return {"D": D, "mean": mean, "lo": lo, "hi": hi, "d_z": d_z, "note": note, "tol": tol}


def _family(X: np.ndarray, systems: list, a, b, *, tests, corrections, alpha, n_permutations, n_bootstrap, rngs,
            var_res, baseline: str) -> list:
    """The rows of one family (the pairs (a, b) under every test and correction), one frame per test × correction."""
    pd_ = paired_differences(X, a, b, alpha)
    D, mean, t_lo, t_hi, d_z, flat_note, tol = (pd_[k] for k in ("D", "mean", "lo", "hi", "d_z", "note", "tol"))
    means = X.mean(axis=0)
    base = {"system_a": np.array(systems)[a], "system_b": np.array(systems)[b], "baseline": baseline,
            "n_topics": X.shape[0], "mean_a": means[a], "mean_b": means[b], "delta": mean}
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
            note = np.where((note == "") & np.isnan(lo), paired.NO_INTERVAL, note)
        else:
            p, half = tukey_hsd(X, a, b, n_permutations, rngs[test], alpha)
            lo, hi = mean - half, mean + half
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
    return frames


def family_seed(seed: int, baseline: str) -> np.random.SeedSequence:
    """The seed of one baseline's family: from the seed and the baseline's name (not its position)."""
    return np.random.SeedSequence([seed, *baseline.encode()])


def compare(mat: pd.DataFrame, *, tests, corrections, alpha: float, n_permutations: int, n_bootstrap: int,
            seed: int, baseline: str | list | None = None) -> pd.DataFrame:
    """The per-pair table of a complete topic-by-system matrix (see the module docstring). ``baseline``: None (all
    pairs), one system or a list of systems (one family each)."""
    for t in tests:
        if t not in ALL_TESTS:
            raise ValueError(f"unknown test {t!r}; one of {ALL_TESTS}")
    mat = ranked(mat)
    systems = list(mat.columns)
    bases = baselines(baseline)
    for b in bases or []:
        if b not in systems:
            raise InputError(f"baseline {b!r} is not among the systems ({len(systems)}: {systems[:5]} ...)")
    X = mat.to_numpy(dtype=float)
    var_res = gstudy(X)["var_residual"] if "tukey" in tests else np.nan  # MS_res, 0 when within rounding of 0
    kw = dict(tests=tests, corrections=corrections, alpha=alpha, n_permutations=n_permutations,
              n_bootstrap=n_bootstrap, var_res=var_res)
    frames = []
    # one generator per test (and baseline), so that adding a test or a baseline leaves the others' resamples
    # unchanged
    if bases is None:
        rngs = dict(zip(ALL_TESTS, np.random.default_rng(seed).spawn(len(ALL_TESTS))))
        frames += _family(X, systems, *pairs(systems, None), rngs=rngs, baseline="", **kw)
    for b in bases or []:
        rngs = dict(zip(ALL_TESTS, np.random.default_rng(family_seed(seed, b)).spawn(len(ALL_TESTS))))
        frames += _family(X, systems, *pairs(systems, b), rngs=rngs, baseline=b, **kw)
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
        # a pair of two baselines is in both families, once each way round: counted once
        pairs_ = g[~g[["system_a", "system_b"]].apply(frozenset, axis=1).duplicated()]
        ex = pairs_.iloc[0]
        out.append(f"{len(pairs_)} pair(s) ({', '.join(dict.fromkeys(g.test))}; e.g. {ex.system_a} vs "
                   f"{ex.system_b}): {note}")
    return out


def _pcell(p: float, r=None) -> str:
    """A p-value cell: three significant digits, and for an adjusted one ▲ (significantly better) or ▼ (worse)."""
    mark = "" if r is None or not r["significant"] else ("▲" if r["delta"] > 0 else "▼")
    return f"{p:.3g}{mark}"


def summary(table: pd.DataFrame, mat: pd.DataFrame, baseline, *, alpha: float) -> pd.DataFrame:
    """The per-system summary of the per-pair table ``table`` of ``mat``.

    Without a baseline: one row per system (ranked by mean): its mean, and per test (first correction of each) how
    many systems it is significantly better / worse than ("+k / −m").

    With baselines: per baseline (column ``baseline``, in the configured order) one row per system (ranked by mean):
    ``mean``; ``delta`` = system − baseline, its paired t-interval ``ci_low, ci_high`` at level 1 − alpha and Cohen's
    d_z ``effect_size`` (whatever the tests: the same for every test); then per test its unadjusted p-value
    (``<test> p``) and its adjusted p-value under every correction (``<test> <correction>``; ``tukey hsd`` for the
    randomised Tukey HSD), marked ▲ (significantly better than the baseline) or ▼ (worse). The baseline's own row
    has its mean, ``baseline`` as its delta and no other value."""
    mat = ranked(mat)
    systems = list(mat.columns)
    means = mat.mean(axis=0).to_numpy()
    bases = baselines(baseline)
    if bases is None:
        out = pd.DataFrame({"system": systems, "mean": means})
        for test, g in table.groupby("test", sort=False):
            g = g[g["correction"] == g["correction"].iloc[0]]
            col = f"{test} ({g['correction'].iloc[0]})"
            sig = g[g["significant"]]
            better = sig.groupby("system_a").size()
            worse = sig.groupby("system_b").size()
            out[col] = [f"+{better.get(s, 0)} / −{worse.get(s, 0)}" for s in out["system"]]
        return out
    X = mat.to_numpy(dtype=float)
    parts = []
    for b in bases:
        j = systems.index(b)
        a, bb = pairs(systems, b)
        d = paired_differences(X, a, bb, alpha)
        part = pd.DataFrame({"baseline": b, "system": systems, "mean": means})
        for k, col in (("mean", "delta"), ("lo", "ci_low"), ("hi", "ci_high"), ("d_z", "effect_size")):
            v = np.full(len(systems), np.nan)
            v[a] = d[k]
            part[col] = v
        fam = table[table["baseline"] == b]
        for test, g in fam.groupby("test", sort=False):
            rows = {c: h.set_index("system_a") for c, h in g.groupby("correction", sort=False)}
            if test != "tukey":
                first = next(iter(rows.values()))
                part[f"{test} p"] = ["" if i == j else _pcell(first.loc[s, "p_value"])
                                     for i, s in enumerate(systems)]
            for corr, h in rows.items():
                part[f"{test} {corr}"] = ["" if i == j else _pcell(h.loc[s, "p_adjusted"], h.loc[s])
                                          for i, s in enumerate(systems)]
        part["delta"] = part["delta"].astype(object)
        part.loc[j, "delta"] = "baseline"
        parts.append(part)
    return pd.concat(parts, ignore_index=True)
