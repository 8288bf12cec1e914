"""The reproducibility table of a collection: (original, reproduced) run pairs judged with Breuer et al.'s measures
(:mod:`irrepro.repro.measures`) and a regression verdict per score (:mod:`irrepro.repro.verdict`); the figure of per-topic differences is :func:`irrepro.repro.plots.plot_differences`.

A :class:`Comparison` names an original and a reproduced implementation of one experiment with two settings, a
baseline and an advanced one (e.g. Lucene's BM25 and PISA's BM25, each at k1 0.9 b 0.4 and at k1 1.2 b 0.75). Both
are run on the same topics and judged with the same qrels, so this is *reproducibility* in the naming
:mod:`irrepro.repro.measures` follows (ACM badging v1.1, as ``repro_eval``): document order (KTU, RBO), per-topic
scores (RMSE, paired t-test) and effects (ER, ΔRI) all apply.

:func:`repro_table` writes one row per (comparison, setting, measure):

``comparison, setting, original, reproduced, measure, topics, original_score, reproduced_score, difference,
verdict, ktu, rbo, rmse, p_value, er, er_low, er_high, delta_ri, original_effect, original_effect_low,
original_effect_high, er_note``

- ``original_score``/``reproduced_score``: mean over the topics both runs are scored on; ``verdict``: OK / OKish /
  FAIL of the two means (:func:`~irrepro.repro.verdict.regression_verdict`, with the tolerance given).
- ``ktu``, ``rbo``: mean over topics of the two runs' document orders to ``depth`` (the same for every measure of a
  run pair); ``rmse``, ``p_value`` (paired t-test): over the per-topic scores of the measure.
- ``er``, ``delta_ri``: of the comparison's baseline → advanced effect on the measure, the same on both settings'
  rows; ``er_low``/``er_high``: ER's 95% Fieller interval (:func:`~irrepro.repro.measures.effect_ratio_interval`);
  ``original_effect`` (mean advanced − baseline of the original) with its 95% t interval. ``er`` is NaN with
  ``er_note`` saying why when the original effect is below the printed precision
  (:data:`~irrepro.repro.measures.MIN_EFFECT`) or not distinguishable from 0 (its t interval holds 0: ER's
  confidence set is then unbounded, and a point ratio of 90 or −40 carries no information); ``delta_ri`` when a
  baseline mean is below the printed precision.

:func:`compare_versions` judges every run two result folders share (a run of one version as original, the other's as
reproduced) and says when they are identical.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import pandas as pd

from irrepro.errors import InputError
from irrepro.repro import measures as M
from irrepro.repro.verdict import OKISH_TOLERANCE, regression_verdict

COLUMNS = ["comparison", "setting", "original", "reproduced", "measure", "topics", "original_score",
           "reproduced_score", "difference", "verdict", "ktu", "rbo", "rmse", "p_value", "er", "er_low", "er_high",
           "delta_ri", "original_effect", "original_effect_low", "original_effect_high", "er_note"]
#: level of the ER interval (Fieller) and of the original effect's t interval
ER_LEVEL = 0.95


@dataclass(frozen=True)
class Comparison:
    """An original and a reproduced implementation, each as (baseline system, advanced system) run names."""

    name: str
    original: tuple[str, str]
    reproduced: tuple[str, str]


def per_topic(scores: pd.DataFrame, system: str, measure: str) -> pd.Series:
    """The per-topic values of one run and measure (Series indexed by topic id as a string, sorted)."""
    s = scores[(scores.system == system) & (scores.measure == measure)]
    if s.empty:
        raise InputError(f"no {measure!r} scores of run {system!r} (scored runs: {sorted(scores.system.unique())})")
    return s.set_index(s.topic.astype(str))["value"].astype(float).sort_index()


def common(a: pd.Series, b: pd.Series) -> tuple[pd.Series, pd.Series]:
    """The two series on the topics they share."""
    idx = a.index.intersection(b.index)
    return a.loc[idx], b.loc[idx]


def pair_rows(original: str, reproduced: str, runs: Mapping[str, pd.DataFrame], scores: pd.DataFrame, measures,
              *, depth: int = M.DEPTH, rbo_p: float = M.RBO_P, tolerance: float = OKISH_TOLERANCE) -> list[dict]:
    """One row per measure for the run ``original`` against the run ``reproduced`` (no ER/ΔRI)."""
    k = M.ktu(runs[original], runs[reproduced], depth=depth).mean
    r = M.rbo(runs[original], runs[reproduced], depth=depth, p=rbo_p).mean
    rows = []
    for m in measures:
        a, b = common(per_topic(scores, original, m), per_topic(scores, reproduced, m))
        if not len(a):
            raise InputError(f"runs {original!r} and {reproduced!r} share no scored topic for {m!r}")
        oa, rb = float(a.mean()), float(b.mean())
        rows.append({"original": original, "reproduced": reproduced, "measure": m, "topics": len(a),
                     "original_score": oa, "reproduced_score": rb, "difference": rb - oa,
                     "verdict": regression_verdict(oa, rb, tolerance=tolerance), "ktu": k, "rbo": r,
                     "rmse": M.rmse(a, b), "p_value": M.ttest_paired(a, b)})
    return rows


def repro_table(comparisons, runs: Mapping[str, pd.DataFrame], scores: pd.DataFrame, measures, *,
                depth: int = M.DEPTH, rbo_p: float = M.RBO_P, tolerance: float = OKISH_TOLERANCE) -> pd.DataFrame:
    """The table of the module docstring. ``runs``: run name → run frame (``query_id, doc_id, score``); ``scores``:
    the canonical per-topic score table (``system, topic, measure, value``) holding every run named."""
    out = []
    for c in comparisons:
        effects = {}
        for m in measures:
            ob, oa = (per_topic(scores, s, m) for s in c.original)
            rb, ra = (per_topic(scores, s, m) for s in c.reproduced)
            idx = ob.index.intersection(oa.index).intersection(rb.index).intersection(ra.index)
            args = (ob.loc[idx], oa.loc[idx], rb.loc[idx], ra.loc[idx])
            er, dri = M.effect_ratio(*args), M.delta_ri(*args)
            ci = M.effect_ratio_interval(*args, level=ER_LEVEL)
            notes = [x for x in (er.reason, dri.reason) if x]
            value = er.value
            if not ci.bounded and not notes:
                value = float("nan")
                notes.append(f"original effect {er.original_effect:+.4g} (95% t interval [{ci.denominator_low:+.4g}, "
                             f"{ci.denominator_high:+.4g}]) is not distinguishable from 0: ER's confidence set is "
                             f"unbounded (Fieller), the point ratio {er.value:.4g} says nothing")
            effects[m] = {"er": value, "er_low": ci.low, "er_high": ci.high, "delta_ri": dri.value,
                          "original_effect": er.original_effect, "original_effect_low": ci.denominator_low,
                          "original_effect_high": ci.denominator_high, "er_note": "; ".join(dict.fromkeys(notes))}
        for setting, o, r in (("baseline", c.original[0], c.reproduced[0]), ("advanced", c.original[1],
                                                                             c.reproduced[1])):
            for row in pair_rows(o, r, runs, scores, measures, depth=depth, rbo_p=rbo_p, tolerance=tolerance):
                out.append({"comparison": c.name, "setting": setting, **row, **effects[row["measure"]]})
    return pd.DataFrame(out, columns=COLUMNS)


def compare_versions(a, b, *, depth: int = M.DEPTH, rbo_p: float = M.RBO_P,
                     tolerance: float = OKISH_TOLERANCE) -> tuple[pd.DataFrame, dict]:
    """Every run two result folders (``results/<a>``, ``results/<b>``) share, ``a``'s as original and ``b``'s as
    reproduced: :func:`pair_rows` per collection and run (columns ``collection`` first), and every score table of
    both (``scores/*.tsv``: the run-backed collections' and the imports'). Returns ``(table, summary)``;
    ``summary``: ``collections`` with shared runs, ``runs`` compared, ``identical_runs`` (byte for byte),
    ``score_tables`` (tables in both folders), ``identical_scores`` (of those, byte for byte), ``differing_tables``,
    ``only_in_a``/``only_in_b`` (run paths), ``tables_only_in_a``/``tables_only_in_b`` (score tables),
    ``measures_only`` (``{table: {"a": [...], "b": [...]}}``, measures one side's table has and the other's not),
    ``identical`` (every run file and score table of either folder present in both and byte-identical)."""
    from irrepro.core.scores import read_scores
    from irrepro.core.trec import read_run

    a, b = Path(a), Path(b)
    for d in (a, b):
        if not (d / "runs").is_dir():
            raise InputError(f"{d}: not a results folder (no runs/ inside)")

    def run_paths(d):
        return {str(p.relative_to(d / "runs")): p for p in sorted((d / "runs").glob("*/*.run"))}

    def table_paths(d):
        return {p.stem: p for p in sorted((d / "scores").glob("*.tsv"))} if (d / "scores").is_dir() else {}

    ra, rb = run_paths(a), run_paths(b)
    ta, tb = table_paths(a), table_paths(b)
    shared = sorted(set(ra) & set(rb))
    rows, same_runs, colls = [], 0, []
    tables = {}
    for name in sorted(set(ta) & set(tb)):
        tables[name] = (read_scores(ta[name]), read_scores(tb[name]))
    for coll in sorted({k.split("/")[0] for k in shared}):
        if coll not in tables:
            missing = a / "scores" / f"{coll}.tsv" if coll not in ta else b / "scores" / f"{coll}.tsv"
            raise InputError(f"{coll}: runs in both folders but no score table {missing}")
        colls.append(coll)
        A, B = tables[coll]
        measures = sorted(set(A.measure) & set(B.measure))
        for key in [k for k in shared if k.split("/")[0] == coll]:
            name = key.split("/", 1)[1][: -len(".run")]
            same_runs += int(ra[key].read_bytes() == rb[key].read_bytes())
            runs = {"a": read_run(ra[key]), "b": read_run(rb[key])}
            sc = pd.concat([A[A.system == name].assign(system="a"), B[B.system == name].assign(system="b")])
            for r in pair_rows("a", "b", runs, sc, measures, depth=depth, rbo_p=rbo_p, tolerance=tolerance):
                rows.append({"collection": coll, **r, "original": f"{a.name}/{name}", "reproduced": f"{b.name}/{name}"})
    cols = ["collection"] + COLUMNS[COLUMNS.index("original"):COLUMNS.index("p_value") + 1]
    table = pd.DataFrame(rows, columns=cols)
    only_a, only_b = sorted(set(ra) - set(rb)), sorted(set(rb) - set(ra))
    differing = [n for n in tables if ta[n].read_bytes() != tb[n].read_bytes()]
    measures_only = {}
    for n, (A, B) in tables.items():
        ma, mb = set(A.measure), set(B.measure)
        if ma != mb:
            measures_only[n] = {"a": sorted(ma - mb), "b": sorted(mb - ma)}
    summary = {"collections": colls, "runs": len(shared), "identical_runs": same_runs,
               "score_tables": len(tables), "identical_scores": len(tables) - len(differing),
               "differing_tables": differing, "only_in_a": only_a, "only_in_b": only_b,
               "tables_only_in_a": sorted(set(ta) - set(tb)), "tables_only_in_b": sorted(set(tb) - set(ta)),
               "measures_only": measures_only}
    summary["identical"] = bool(shared or tables) and same_runs == len(shared) and not differing \
        and not (only_a or only_b or summary["tables_only_in_a"] or summary["tables_only_in_b"])
    return table, summary
