"""Benchmark: vectorised CRC dual calibration (``irrepro.papers.ci.calibration.calibrate_crc``) against the per-batch
loop reference (``tests/reference_crc.py``) on the same synthetic inputs; prints timings, the ratio and the λ values.

    .venv/bin/python tests/bench_calibration.py [--n 20 --depth 10 --grades 4 --batches 10000]

Not part of the DAG nor of the test suite (a plain command-line script beside the reference it times).  Set
OPENBLAS_NUM_THREADS=1 on a shared machine: the matrix products are small and BLAS threads fighting over busy cores
cost more than they gain.
"""
import argparse
import time

import numpy as np

from irrepro.papers.ci import intervals
from reference_crc import calibrate_crc_loop


def synthetic(n, depth, G, seed):
    """n queries: true grades with a query-specific relevance rate; noisy, upward-biased LLM distributions."""
    rng = np.random.default_rng(seed)
    rate = rng.beta(1, 2, n)[:, None]
    true = rng.binomial(G - 1, np.repeat(rate, depth, 1))
    logits = 2.0 * (np.arange(G) == true[..., None]) + rng.normal(0, 1, (n, depth, G)) + 0.5 * np.arange(G)
    dists = np.exp(logits)
    dists /= dists.sum(-1, keepdims=True)
    u_true = intervals.query_utility(intervals.hard_to_dist(true, G), intervals.dcg_weights(depth))
    return u_true, dists


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20, help="calibration queries (batch size)")
    ap.add_argument("--depth", type=int, default=10, help="ranked documents per query (DCG@depth)")
    ap.add_argument("--grades", type=int, default=4, help="relevance grades G")
    ap.add_argument("--batches", type=int, default=10_000, help="calibration batches M")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--tol", type=float, default=1e-6, help="λ precision of both searches")
    ap.add_argument("--repeat", type=int, default=5, help="timed calls of the vectorised version (best of)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)

    u_true, dists = synthetic(a.n, a.depth, a.grades, a.seed)
    batches = intervals.sample_batches(a.n, a.batches, rng=np.random.default_rng(a.seed + 1))
    kw = dict(alpha=a.alpha, tol=a.tol)

    times = []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        vec = intervals.calibrate_crc(u_true, dists, batches, **kw)
        times.append(time.perf_counter() - t0)
    t_vec = min(times)
    t0 = time.perf_counter()
    loop = calibrate_crc_loop(u_true, dists, batches, **kw)
    t_loop = time.perf_counter() - t0

    print(f"inputs: n={a.n} queries, depth={a.depth}, G={a.grades}, M={a.batches} batches, alpha={a.alpha}, "
          f"tol={a.tol}")
    print(f"vectorised: {t_vec * 1e3:9.1f} ms (best of {a.repeat})  lam_low={vec.lam_low:.7f} "
          f"lam_high={vec.lam_high:.7f} failed={vec.failed}")
    print(f"loop:       {t_loop * 1e3:9.1f} ms               lam_low={loop.lam_low:.7f} "
          f"lam_high={loop.lam_high:.7f} failed={loop.failed}")
    print(f"ratio loop/vectorised: {t_loop / t_vec:.0f}x;  |Δλ_low|={abs(vec.lam_low - loop.lam_low):.1e} "
          f"|Δλ_high|={abs(vec.lam_high - loop.lam_high):.1e}")


if __name__ == "__main__":
    main()
