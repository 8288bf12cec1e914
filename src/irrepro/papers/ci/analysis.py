"""The analyses behind Table 1 and Figs 2-4 of Oosterhuis et al. (KDD 2024), one function per output, on the arrays
of :func:`irrepro.papers.ci.data.load`; the claims checked on their results are in :mod:`irrepro.papers.ci.claims`.
"""
from __future__ import annotations

from irrepro.papers.ci.metric import DEFAULT_LABEL_GAIN

import logging

import numpy as np
import pandas as pd

from irrepro.core.verify import to_markdown
from irrepro.papers.ci.data import n_validation
from irrepro.papers.ci.distributions import adversarial_bias, oracle_mix
from irrepro.papers.ci.experiment import ci_experiment, ci_experiments, covers
from irrepro.papers.ci.calibration import crc_per_query
from irrepro.papers.ci.metric import query_utility
from irrepro.papers.ci.ranking import label_matrix, table1
from irrepro.papers.ci.summary import summarise

log = logging.getLogger("irrepro.papers.ci")

RANKERS = ("Random", "BM25", "LLM", "Perfect")


# ====================================================================== Table 1

def table1_long(pairs: pd.DataFrame, labels: dict, collection: str, k: int = 10, label_gain: str = DEFAULT_LABEL_GAIN):
    """Table 1 for every labeler: ``(long, results)`` with ``long`` one row per (labeler, ranker) —
    ``collection, labeler, ranker, human, llm`` — and ``results`` ``{labeler: table1(...)}``.
    ``labels``: labeler name -> its labels table, in config order."""
    rows, results = [], {}
    for labeler, lab in labels.items():
        _, grades, dists, mask = label_matrix(pairs, lab)
        t = table1(grades, dists, mask, k=k, label_gain=label_gain)
        results[labeler] = t
        for ranker, v in t.items():
            rows.append({"collection": collection, "labeler": labeler, "ranker": ranker, "human": v["human"],
                         "llm": v["llm"]})
    return pd.DataFrame(rows), results


def table1_wide(long: pd.DataFrame, labelers: list) -> pd.DataFrame:
    """The Markdown layout of Table 1: one row per ranker (one LLM ranker per labeler), a column of human labels and
    one per labeler's labels (empty where another labeler's LLM ranker would be judged by them)."""
    wide = []
    for r in RANKERS:
        rankers = [(r, None)] if r != "LLM" else [("LLM", lab) for lab in labelers]
        for name, owner in rankers:
            row = {"ranker": name if owner is None else f"LLM ranker ({owner})"}
            d = long[long.ranker == r]
            row["human labels"] = float((d[d.labeler == owner] if owner else d).human.iloc[0])
            for lab in labelers:
                row[f"{lab} labels"] = float(d[d.labeler == lab].llm.iloc[0]) if owner in (None, lab) else None
            wide.append(row)
    return pd.DataFrame(wide)


def write_table1_md(wide: pd.DataFrame, pairs: pd.DataFrame, collection: str, k: int, path,
                    label_gain: str = DEFAULT_LABEL_GAIN) -> None:
    """Table 1 as Markdown under a line saying what it measures (a local writer: irrepro.core.io.write_table writes
    no header line)."""
    llm = "2^E_P[r] - 1" if label_gain == "gain_of_expected_grade" else "E_P[2^r - 1]"
    with open(path, "w") as f:
        f.write(f"DCG@{k} (gain 2^r - 1; LLM labels: {llm}) on {collection}: {pairs.query_id.nunique()} queries, the "
                f"rankers re-rank the top {int(pairs['rank'].max())} candidates of the run.\n\n")
        f.write(to_markdown(wide.round(2)))


# ====================================================================== Fig 2

def fig2_runs(u_true, dists, weights, u_pred, *, n_values, repetitions, seed, alpha, n_boot, batches, target,
              split="fixed", bootstrap="basic", label_gain=DEFAULT_LABEL_GAIN):
    """Fig 2's experiment (:func:`~irrepro.papers.ci.experiment.ci_experiment`) at every configured n that fits in
    the validation half (the half itself when none does): ``(ns, runs)``."""
    n_val = n_validation(len(u_true))
    ns = [n for n in n_values if n <= n_val] or [n_val]
    log.info("%d queries (validation half %d), n = %s, %d repetitions", len(u_true), n_val, ns, repetitions)
    runs = ci_experiment(u_true, dists, ns, weights=weights, u_pred=u_pred, repetitions=repetitions, seed=seed,
                         alpha=alpha, n_boot=n_boot, n_batches=batches, target=target, split=split,
                         bootstrap=bootstrap, label_gain=label_gain)
    return ns, runs


def write_runs(runs: pd.DataFrame, path) -> None:
    """The per-repetition results as gzipped CSV, without a clock in the gzip header (a local writer:
    irrepro.core.io.write_table does not compress)."""
    runs.to_csv(path, index=False, float_format="%.6g", compression={"method": "gzip", "mtime": 0})


# ====================================================================== Fig 3

def fig3_n(N: int, n) -> int:
    """Fig 3's number of labelled queries: ``n`` (None: the whole validation half), at most the validation half."""
    return min(n or n_validation(N), n_validation(N))


def fig3_runs(u_true, grades, dists, weights, *, n, betas, zetas, repetitions, seed, alpha, n_boot, batches, target,
              split="fixed", bootstrap="basic", label_gain=DEFAULT_LABEL_GAIN):
    """Fig 3's experiments: the intervals at ``n`` labelled queries under adversarial bias β (Sec. 8.2) and oracle
    weight ζ (Sec. 8.3); PPI's predictions follow the changed labels. Returns ``(beta summary, zeta summary,
    table)`` with ``table`` both summaries stacked (columns ``x`` and ``kind``)."""
    settings = [("beta", x, adversarial_bias(dists, x)) for x in betas] + \
               [("zeta", x, oracle_mix(dists, grades, x)) for x in zetas]
    # one experiment for all settings: they share its random streams (splits, bootstrap, CRC batches), which are
    # drawn once; each setting's table is that of its own ci_experiment call
    results = ci_experiments(u_true, [d for _, _, d in settings], [n], weights=weights, repetitions=repetitions,
                             seed=seed, alpha=alpha, n_boot=n_boot, n_batches=batches, target=target, split=split,
                             bootstrap=bootstrap, label_gain=label_gain)
    frames = [r.assign(kind=kind, x=x) for (kind, x, _), r in zip(settings, results)]
    runs = pd.concat(frames, ignore_index=True)
    bs = summarise(runs[runs.kind == "beta"].rename(columns={"x": "beta"}), "beta")
    zs = summarise(runs[runs.kind == "zeta"].rename(columns={"x": "zeta"}), "zeta")
    table = pd.concat([bs.assign(kind="beta").rename(columns={"beta": "x"}),
                       zs.assign(kind="zeta").rename(columns={"zeta": "x"})])
    return bs, zs, table


# ====================================================================== Fig 4

def fig4_split(N: int, seed: int, n_cal=None):
    """Fig 4's one random 50:50 split: ``(calibration queries, test queries)`` as index arrays — the first
    ``n_cal`` (None: all) of the validation half calibrate, the other half is tested. Its own stream,
    ``SeedSequence(seed, spawn_key=(4,))``."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(4,)))
    perm = rng.permutation(N)
    n_val = n_validation(N)
    val, test = perm[:n_val], perm[n_val:]
    return val[: min(n_cal or n_val, n_val)], test


def fig4_per_query(qids, grades, dists, weights, u_true, *, zetas, seed, n_cal, alpha, label_gain=DEFAULT_LABEL_GAIN):
    """Per-query CRC intervals (Sec. 8.4) of the test queries for each oracle weight ζ: ``(table, calibration
    size)``, one row per (ζ, test query); a failed calibration gives NaN bounds and ``covered`` False."""
    cal, test = fig4_split(len(qids), seed, n_cal)
    rows = []
    for z in zetas:
        dz = oracle_mix(dists, grades, z)
        iv, calib = crc_per_query(u_true[cal], dz[cal], dz[test], alpha, weights_cal=weights[cal],
                                  weights_test=weights[test], label_gain=label_gain)
        pred = query_utility(dz[test], weights[test], label_gain=label_gain)
        for j, q in enumerate(test):
            lo, hi = float(iv.low[j]), float(iv.high[j])
            rows.append({"zeta": z, "query_id": qids[q], "true": float(u_true[q]), "predicted": float(pred[j]),
                         "low": lo, "high": hi, "width": hi - lo,
                         "covered": bool(covers(lo, hi, u_true[q])) if not calib.failed else False,
                         "lam_low": calib.lam_low, "lam_high": calib.lam_high, "failed": bool(calib.failed)})
        log.info("zeta %g: lambda_low %.4f lambda_high %.4f failed %s", z, calib.lam_low, calib.lam_high,
                 calib.failed)
    return pd.DataFrame(rows), len(cal)


IDEAL_GRADE = 4   # the grade of the ideal documents: one IDCG, hence one tolerance, for grades 0..4 (Cranfield's)


def table1_dcg_ir_measures(pairs: pd.DataFrame, k: int = 10) -> dict:
    """Table 1's human-label DCG@k of the BM25 and Perfect rankers, computed independently with ir_measures:
    ``{ranker: (mean DCG@k, tolerance)}``.

    ir_measures has no raw DCG with gain ``2^r − 1``; its ``nDCG(dcg='exp-log2')@k`` has that gain and the
    discount ``1/log2(rank + 1)``. Each query's qrels get ``k`` extra documents, absent from the runs, at a grade
    ``M`` no real grade exceeds (:data:`IDEAL_GRADE`, or the largest grade if higher), so the ideal DCG is the constant ``IDCG = (2^M − 1) Σ_{i≤k} 1/log2(i + 1)`` and
    ``DCG@k = nDCG@k · IDCG``. The provider prints nDCG to 5 decimals, so the tolerance is half a unit of that
    times IDCG. BM25 is the pairs' rank order; Perfect sorts by human grade (ties: rank), as :func:`table1`. Where
    ir_measures has no provider for it, a ranker's entry is ``(None, why)``."""
    import ir_measures

    p = pairs.copy()
    p["relevance"] = p["relevance"].astype(int).clip(lower=0)
    top = max(int(p["relevance"].max()), IDEAL_GRADE)
    qids = p["query_id"].astype(str).unique()
    ideal = pd.DataFrame({"query_id": np.repeat(qids, k), "doc_id": [f"__ideal_{i}" for _ in qids for i in range(k)],
                          "relevance": top})
    qrels = pd.concat([p[["query_id", "doc_id", "relevance"]].astype({"query_id": str}), ideal], ignore_index=True)
    idcg = (2.0 ** top - 1) * float(np.sum(1 / np.log2(np.arange(2, k + 2))))
    measure = ir_measures.parse_measure(f"nDCG(dcg='exp-log2')@{k}")
    rank = p["rank"].to_numpy(float)
    out = {}
    for name, score in (("BM25", -rank), ("Perfect", p["relevance"].to_numpy(float) * 1e6 - rank)):
        run = pd.DataFrame({"query_id": p["query_id"].astype(str), "doc_id": p["doc_id"], "score": score})
        try:
            per_q = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
        except (ValueError, RuntimeError, OSError) as e:     # no provider of exp-log2 nDCG in this environment
            out[name] = (None, f"ir_measures could not compute {measure}: {e}")
            continue
        out[name] = (float(np.mean([per_q.get(q, 0.0) for q in qids])) * idcg, 0.5e-5 * idcg)
    return out
