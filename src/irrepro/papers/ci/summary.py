"""Summaries of the CI experiments over their repetitions: mean width with its spread, coverage with a Wilson
interval (the numbers behind Figs 2-4 of Oosterhuis et al., KDD 2024)."""
from __future__ import annotations

import numpy as np
import pandas as pd


def summarise(runs: pd.DataFrame, by: str) -> pd.DataFrame:
    """Per method and setting: mean width with its 95% prediction interval over runs (2.5/97.5 percentiles),
    coverage with a 95% Wilson interval, and the share of runs where the method gave no interval (CRC with too
    few queries)."""
    rows = []
    for (m, x), d in runs.groupby(["method", by], sort=True):
        ok = d["width"].notna()
        w = d.loc[ok, "width"].to_numpy()
        cov = d["covered"].fillna(False).astype(bool).to_numpy()
        k, n = int(cov.sum()), len(cov)
        lo, hi = wilson(k, n)
        rows.append({"method": m, by: x, "runs": n, "failed": int((~ok).sum()),
                     "width": float(w.mean()) if len(w) else np.nan,
                     "width_lo": float(np.percentile(w, 2.5)) if len(w) else np.nan,
                     "width_hi": float(np.percentile(w, 97.5)) if len(w) else np.nan,
                     "coverage": k / n if n else np.nan, "coverage_lo": lo, "coverage_hi": hi})
    return pd.DataFrame(rows)


def wilson(k: int, n: int, z: float = 1.959963984540054):
    """95% Wilson score interval of a binomial proportion k/n."""
    if n == 0:
        return np.nan, np.nan
    p = k / n
    den = 1 + z * z / n
    c = (p + z * z / (2 * n)) / den
    h = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return float(c - h), float(c + h)
