"""What a run cost: Snakemake's ``benchmark:`` files gathered into one per-rule table.

Every rule writes ``results/<version>/benchmarks/<rule>.tsv`` (or ``<rule>/<wildcards ...>.tsv`` when it has
wildcards; ``resources/benchmarks/fetch_artifact/<name>.tsv`` for the shared artifact cache). Snakemake writes one
row per measured run with the columns ``s`` (wall seconds), ``cpu_time`` (user + system CPU seconds), ``max_rss``
(peak resident memory, MB) among others (https://snakemake.readthedocs.io, "Benchmark rules").

:func:`read_benchmarks` turns the files into one row per job, :func:`cost_table` into one row per rule.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

JOB_COLUMNS = ["rule", "job", "wall_s", "cpu_s", "max_rss_mb"]
COST_COLUMNS = ["rule", "jobs", "wall_s", "cpu_s", "max_rss_mb", "share_of_wall"]


def benchmark_files(root) -> list[Path]:
    """Every ``*.tsv`` under ``root`` (a ``benchmarks`` folder), sorted."""
    root = Path(root)
    return sorted(p for p in root.rglob("*.tsv") if p.is_file()) if root.is_dir() else []


def _number(x) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return float("nan")
    return v


def read_benchmarks(paths, roots) -> pd.DataFrame:
    """One row per job: ``rule`` (the first path component under its root, or the file's stem), ``job`` (the
    rest of the path, i.e. the wildcard values), wall and CPU seconds and peak memory of the last measured run.

    ``roots`` are the ``benchmarks`` folders the paths lie under. A file that is not a Snakemake benchmark table
    (no ``s`` column) is an error naming the file."""
    roots = [Path(r) for r in roots]
    rows = []
    for p in map(Path, paths):
        root = next((r for r in roots if r in p.parents), None)
        if root is None:
            raise ValueError(f"{p}: not under any of the benchmark folders {', '.join(map(str, roots))}")
        rel = p.relative_to(root).with_suffix("")
        parts = rel.parts
        rule, job = parts[0], "/".join(parts[1:])
        df = pd.read_csv(p, sep="\t")
        if "s" not in df.columns or df.empty:
            raise ValueError(f"{p}: not a Snakemake benchmark file (needs a header with column 's' and a row)")
        last = df.iloc[-1]
        rows.append([rule, job, _number(last["s"]), _number(last.get("cpu_time")),
                     _number(last.get("max_rss"))])
    return pd.DataFrame(rows, columns=JOB_COLUMNS)


def cost_table(jobs: pd.DataFrame) -> pd.DataFrame:
    """One row per rule, most expensive first: job count, summed wall and CPU seconds, the largest peak memory of
    its jobs, and its share of the summed wall time of all jobs (with several cores the run's elapsed time is
    shorter than the sum). A last row ``total`` sums them."""
    if jobs.empty:
        return pd.DataFrame(columns=COST_COLUMNS)
    g = jobs.groupby("rule", sort=True)
    t = pd.DataFrame({
        "rule": list(g.groups),
        "jobs": g.size().to_numpy(),
        "wall_s": g["wall_s"].sum().to_numpy(),
        "cpu_s": g["cpu_s"].sum(min_count=1).to_numpy(),
        "max_rss_mb": g["max_rss_mb"].max().to_numpy(),
    })
    total_wall = float(t["wall_s"].sum())
    t["share_of_wall"] = t["wall_s"] / total_wall if total_wall > 0 else np.nan
    t = t.sort_values(["wall_s", "rule"], ascending=[False, True], kind="mergesort").reset_index(drop=True)
    total = pd.DataFrame([["total", int(t["jobs"].sum()), total_wall, float(t["cpu_s"].sum()),
                           float(t["max_rss_mb"].max()), 1.0 if total_wall > 0 else np.nan]], columns=COST_COLUMNS)
    return pd.concat([t, total], ignore_index=True)


def plot_cost(table: pd.DataFrame, top: int = 15):
    """A horizontal bar chart of the rules' wall time (the ``top`` most expensive, the rest as one bar)."""
    import matplotlib.pyplot as plt

    t = table[table["rule"] != "total"]
    head = t.head(top)
    rest = t.iloc[top:]
    labels = list(head["rule"]) + ([f"{len(rest)} other rules"] if len(rest) else [])
    walls = list(head["wall_s"]) + ([float(rest["wall_s"].sum())] if len(rest) else [])
    fig, ax = plt.subplots(figsize=(7, 0.32 * len(labels) + 1.2))
    ax.barh(range(len(labels))[::-1], walls, color="#4c72b0")
    ax.set_yticks(range(len(labels))[::-1], labels, fontsize=8)
    ax.set_xlabel("wall time summed over the rule's jobs (s)")
    ax.set_ylabel("rule")
    total = float(t["wall_s"].sum())
    ax.set_title(f"Cost per rule (all jobs: {total:.0f} s of wall time)", fontsize=10)
    fig.tight_layout()
    return fig


def fit_growth(sizes, seconds) -> tuple[float, float]:
    """Fit ``seconds = a * size ** b`` by least squares on log-log (three or more sizes): returns ``(a, b)``.
    ``b`` near 1 is linear growth, near 2 quadratic. Sizes and times must be positive."""
    x, y = np.asarray(sizes, float), np.asarray(seconds, float)
    if x.shape != y.shape or x.size < 2:
        raise ValueError(f"fit_growth needs two or more (size, seconds) pairs of equal length, got {x.size}, {y.size}")
    if (x <= 0).any() or (y <= 0).any():
        raise ValueError("fit_growth: sizes and seconds must be positive")
    b, log_a = np.polyfit(np.log(x), np.log(y), 1)
    return float(np.exp(log_a)), float(b)


def extrapolate(a: float, b: float, size: float) -> float:
    """Seconds at ``size`` from a :func:`fit_growth` fit."""
    return float(a * float(size) ** b)


def fit_affine(sizes, seconds) -> tuple[float, float]:
    """Fit ``seconds = fixed + per_unit * size`` by least squares: returns ``(fixed, per_unit)``. Where a stage has a
    set-up cost (loading, building the target distributions) this, not :func:`fit_growth`'s power law over three
    small sizes, is what extrapolates to a much larger size."""
    x, y = np.asarray(sizes, float), np.asarray(seconds, float)
    if x.shape != y.shape or x.size < 2:
        raise ValueError(f"fit_affine needs two or more (size, seconds) pairs of equal length, got {x.size}, {y.size}")
    per_unit, fixed = np.polyfit(x, y, 1)
    return float(fixed), float(per_unit)
