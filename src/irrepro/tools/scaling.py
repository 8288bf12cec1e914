"""How cost grows (not a test): time of each heavy stage at three sizes, in one process, and the fitted growth.

    IRREPRO_MIRROR=... python -m irrepro.tools.scaling [--out docs/scale_measured.csv] [--stages index,retrieval,...]

Stages and their size variable (the library functions the workflow's rules call):
  index       documents indexed by PISA (vaswani's first N abstracts)        irrepro.retrieval.pisa.build_index
  retrieval   queries run with BM25 on the full vaswani index                 irrepro.retrieval.pisa.run_system
  bv_simulate simulated collections k per (system, topic), 8 systems          irrepro.papers.bv.simulation
  sampling    trials of SYNTH Tables 2-4 (6000 x 2000 pairs, 5 systems)       irrepro.papers.sampling.experiments
  ci_fig2     repetitions of Fig 2's experiment (43 queries, 2 n, 3 methods, 10,000 resamples and batches)        irrepro.papers.ci.experiment
Labelling is linear in pairs by construction (each pair is one forward pass over its own tokens once the shared
prefixes are cached); its rate is measured by ``python -m irrepro.labels.bench`` (``make benchmark-labeler``).

Prints one line per measurement with the load average, and a table ``stage, size_name, sizes, seconds, a, b``
(seconds = a * size^b). docs/scale.md extrapolates from it. Time it on an idle machine; say when it was not.
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from irrepro.core.cost import fit_affine, fit_growth

STAGES = ["index", "retrieval", "bv_simulate", "sampling", "ci_fig2"]


def timed(fn, *args, repeats: int = 1, **kw) -> float:
    """Median wall seconds of ``repeats`` calls, native output (PISA's progress bars) silenced."""
    times = []
    for _ in range(repeats):
        saved = os.dup(1), os.dup(2)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        try:
            t = time.perf_counter()
            fn(*args, **kw)
            times.append(time.perf_counter() - t)
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in (*saved, null):
                os.close(fd)
    return float(np.median(times))


def _copies(docs, m):
    """``m`` copies of the collection, docnos made unique: the index grows by m with the same term statistics."""
    return [{"docno": f"{d['docno']}-{i}", "text": d["text"]} for i in range(m) for d in docs]


def _vaswani():
    home = Path(tempfile.mkdtemp(prefix="irrepro-scale-irds-"))
    os.environ["IR_DATASETS_HOME"] = str(home)  # before ir_datasets is imported: it fixes its paths then
    from irrepro.datasets.mirror import ensure_ir_datasets_home

    ensure_ir_datasets_home(home, os.environ.get("IRREPRO_MIRROR"))
    from irrepro.datasets import collections as coll

    ds = coll.load("vaswani")
    return ds, list(coll.docs_iter(ds, "vaswani")), coll.topics(ds, "vaswani"), coll.qrels(ds, "vaswani")


def stage_index(ctx):
    from irrepro.retrieval.pisa import build_index

    docs = ctx["docs"]
    out, sizes = [], []
    for m in (1, 2, 4):
        big = _copies(docs, m)
        sizes.append(len(big))
        with tempfile.TemporaryDirectory() as d:
            out.append(timed(build_index, big, Path(d) / "idx", threads=1))
    return "documents", sizes, out


def stage_retrieval(ctx):
    from irrepro.retrieval.pisa import build_index, parse_system, run_system

    d = tempfile.mkdtemp(prefix="irrepro-scale-idx-")
    idx = build_index(ctx["docs"], Path(d) / "idx", threads=1)  # noqa: F841 (PISA prints; timed() silences)
    topics = ctx["topics"]
    system = parse_system("bm25_k1-1.2_b-0.75")
    ctx["runs"] = {}
    out, sizes = [], []
    for m in (2, 4, 8):  # the 93 topics repeated, ids made unique
        t = pd.concat([topics.assign(query_id=topics.query_id + f"-{i}") for i in range(m)], ignore_index=True)
        sizes.append(len(t))
        out.append(timed(run_system, idx, system, t, 1000, repeats=3))
    for k1 in (0.6, 0.9, 1.2, 1.5, 1.8, 2.1, 2.4, 2.7):
        ctx["runs"][f"bm25_{k1}"] = run_system(idx, parse_system(f"bm25_k1-{k1}_b-0.75"), topics, 1000)
    return "queries", sizes, out


def stage_bv_simulate(ctx):
    from irrepro.papers.bv.simulation import per_topic_table, relevance_profile

    if "runs" not in ctx:
        stage_retrieval(ctx)
    prof = relevance_profile(ctx["runs"], ctx["qrels"])
    sizes = [100, 200, 400]
    return "k", sizes, [timed(per_topic_table, prof, k, np.random.default_rng(0)) for k in sizes]


def stage_sampling(ctx):
    from irrepro.papers.sampling.experiments import single_system_experiment
    from irrepro.papers.sampling.synth import synth

    u, ranks = synth(seed=2016)
    sizes = [25, 50, 100]
    return "trials", sizes, [timed(single_system_experiment, u, ranks, 5 * u.shape[0], t, 0) for t in sizes]


def stage_ci_fig2(ctx):
    from irrepro.papers.ci.experiment import ci_experiment

    rng = np.random.default_rng(0)
    N = 43  # DL19's judged queries; config/config.yaml's resamples and CRC batches (10,000 each), two n
    u_true = rng.gamma(2.0, 4.0, N)
    dists = rng.dirichlet(np.ones(4), (N, 10))
    weights = 1.0 / np.log2(np.arange(2, 12))
    sizes = [25, 50, 100]
    return "repetitions", sizes, [timed(ci_experiment, u_true, dists, [10, 20], weights=weights, repetitions=r,
                                         seed=0, alpha=0.05, n_boot=10_000, n_batches=10_000) for r in sizes]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stages", default=",".join(STAGES))
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    ctx = {}
    if {"index", "retrieval", "bv_simulate"} & set(a.stages.split(",")):
        _, ctx["docs"], ctx["topics"], ctx["qrels"] = _vaswani()
        ctx["docs"] = [{"docno": d["docno"], "text": d["text"]} for d in ctx["docs"]]
    rows = []
    for st in a.stages.split(","):
        t0, load0 = time.perf_counter(), os.getloadavg()[0]
        got = globals()[f"stage_{st}"](ctx)
        if got is None:
            print(f"{st}: skipped (not available)", flush=True)
            continue
        name, sizes, secs = got
        coef, b = fit_growth(sizes, secs)
        fixed, per_unit = fit_affine(sizes, secs)
        rows.append({"stage": st, "size_name": name, "sizes": " ".join(map(str, sizes)),
                     "seconds": " ".join(f"{s:.3f}" for s in secs), "a": coef, "b": b, "fixed_s": fixed,
                     "per_unit_s": per_unit,
                     "load_before": load0, "load_after": os.getloadavg()[0]})
        print(f"{st}: {name} {sizes} -> {[round(s, 3) for s in secs]} s; seconds = {coef:.3g} * {name}^{b:.2f} "
              f"= {fixed:.3g} s + {per_unit:.3g} s x {name} (load {load0:.1f} -> {os.getloadavg()[0]:.1f}; {time.perf_counter() - t0:.0f} s)", flush=True)
    df = pd.DataFrame(rows)
    print(df.to_string(index=False))
    print(f"cores: {os.cpu_count()}")
    if a.out:
        df.to_csv(a.out, index=False)


if __name__ == "__main__":
    main()
