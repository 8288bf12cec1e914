"""Coverage and median width of ci.systems' intervals per method and share of judged queries, on the synthetic
population of tests/test_ci_systems_coverage.py (the table in docs/ci.md):

    python tests/bench_coverage.py 2000      # draws per cell
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import test_ci_systems_coverage as T  # noqa: E402

from irrepro.papers.ci import systems  # noqa: E402


def main(R: int) -> None:
    for seed, noise in ((0, 1.0), (1, 3.0)):
        u, up, P, W = T.population(seed, noise)
        print(f"population seed {seed} noise {noise}: corr(U, Û) {np.corrcoef(u, up)[0, 1]:.2f}")
        for share in (0.1, 0.2, 0.5, 0.85):
            n = round(share * T.N)
            rng = np.random.default_rng(100 + seed)
            out = {}
            for r in range(R):
                judged = rng.choice(T.N, n, replace=False)
                for row in systems.system_intervals(u, up, P, W, judged, n_boot=1000, n_batches=1000, seed=r):
                    out.setdefault(row["method"], []).append(
                        (row["low"] <= u.mean() <= row["high"], row["width"], bool(row["note"])))
            cells = []
            for m in systems.METHODS:
                a = np.array(out[m], float)
                cells.append(f"{m}: no interval" if a[:, 2].all() else
                             f"{m}: {a[:, 0].mean():.3f} / {np.median(a[:, 1]):.3f}")
            print(f"  n = {n} of {T.N}: " + "; ".join(cells), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
