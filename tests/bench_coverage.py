"""Coverage and median width of ci.systems' intervals per method and share of judged queries, on the synthetic
population of tests/test_ci_systems_coverage.py (the table in docs/ci.md):

    python tests/bench_coverage.py 2000          # draws per cell, N = 100 queries (the test's)
    python tests/bench_coverage.py 600 200      # 600 draws per cell of a population of 200 queries
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import test_ci_systems_coverage as T  # noqa: E402

from irrepro.papers.ci import systems  # noqa: E402


def main(R: int, N: int = T.N) -> None:
    T.N = N  # the population's size (read by T.population and T._draws when called)
    for seed, noise in ((0, 1.0), (1, 3.0)):
        u, up, *_ = T.population(seed, noise)
        print(f"population seed {seed} noise {noise}: corr(U, Û) {np.corrcoef(u, up)[0, 1]:.2f}")
        for share in (0.1, 0.2, 0.5, 0.85):
            u, _, n, rows = T._draws(share, seed, noise, draws=R, resamples=1000)
            cells = []
            for m in systems.METHODS:
                got = [r for r in rows if r["method"] == m]
                cells.append(f"{m}: no interval" if all(r["note"] for r in got) else
                             f"{m}: {np.mean([r['low'] <= u.mean() <= r['high'] for r in got]):.3f} / "
                             f"{np.median([r['width'] for r in got]):.3f}")
            print(f"  n = {n} of {T.N}: " + "; ".join(cells), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000, *(int(a) for a in sys.argv[2:3]))
