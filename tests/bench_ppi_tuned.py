"""Coverage of PPI (λ = 1) and PPI++ (λ tuned on the n judged queries) for the mean over N queries, on the
synthetic populations of tests/test_ci_systems_coverage.py, side by side on the same draws (docs/ci.md):

    python tests/bench_ppi_tuned.py 200 4000 0.1      # N = 200, 4,000 draws of n = 0.1·N judged queries
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import test_ci_systems_coverage as T  # noqa: E402

from irrepro.papers.ci import finite  # noqa: E402


def main(N: int, R: int, share: float, alpha: float = 0.05) -> None:
    T.N = N  # the population's size (read by T.population)
    for seed, noise in ((0, 1.0), (1, 3.0)):
        u, up, *_ = T.population(seed, noise)
        n = round(share * N)
        rng = np.random.default_rng(100 + seed)
        covered = {"ppi": 0, "ppi++": 0}
        lams = []
        for _ in range(R):
            j = rng.choice(N, n, replace=False)
            for name, lam in (("ppi", 1.0), ("ppi++", "tuned")):
                iv = finite.ppi_interval(u[j], up[j], up, alpha=alpha, lam=lam)
                covered[name] += iv.low <= u.mean() <= iv.high
                if name == "ppi++":
                    lams.append(iv.lam)
        tol = 3 * np.sqrt(alpha * (1 - alpha) / R)
        print(f"N {N} n {n} seed {seed} noise {noise}: "
              + ", ".join(f"{k} {v / R:.3f}" for k, v in covered.items())
              + f" (±{tol:.3f}: three binomial standard errors); tuned λ median {np.median(lams):.2f}, "
              f"IQR {np.percentile(lams, 25):.2f}–{np.percentile(lams, 75):.2f}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]))
