"""Benchmark (not a test): what a user waits for on this machine, measured in one process.

    python -m irrepro.tools.benchmark --cores 2 [--configfile config/config.yaml] [--test-config] [--labeler N]
                                 [--keep] [targets ...]

Prints the machine (cores, load average, the 2-thread float32 GEMM peak of torch), then the wall time of the DAG
cold (a fresh temporary working directory: nothing reused) and no-op (rerun, nothing changed), with job counts;
``--test-config`` also times config/test.yaml cold; ``--labeler N`` then labels the first N cranfield pairs of the
cold run with SmolLM2 under the labeler's ``share_prefix`` modes (:mod:`irrepro.labels.bench`: pairs/s, tokens
computed per pair, achieved/peak). Set IRREPRO_MIRROR to run offline. The run's own per-rule costs are in
``results/<version>/cost.csv`` of the working directory (kept with ``--keep``).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]  # the checkout: src/irrepro/tools/benchmark.py


def dag(workdir, configfile, cores, targets=()):
    """Cold then no-op run of one config in ``workdir``: {label: (seconds, jobs)}."""
    base = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir),
            "--configfile", os.path.abspath(configfile), "--cores", str(cores), *targets]
    out = {}
    for label in ("cold", "no-op"):
        t = time.perf_counter()
        p = subprocess.run(base, capture_output=True, text=True)
        dt = time.perf_counter() - t
        if p.returncode != 0:
            sys.stderr.write(p.stderr[-5000:])
            raise SystemExit(f"{label} run of {configfile} failed")
        m = re.search(r"(\d+) of (\d+) steps", p.stderr)
        out[label] = (dt, int(m.group(2)) if m else 0)
        print(f"{Path(configfile).name:12s} {label:6s} {dt:8.1f} s  jobs: {out[label][1]}  "
              f"(load {os.getloadavg()[0]:.2f})", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", default="2")
    ap.add_argument("--configfile", default=str(REPO / "config" / "config.yaml"))
    ap.add_argument("--test-config", action="store_true", help="also time config/test.yaml cold and no-op")
    ap.add_argument("--labeler", type=int, default=0, metavar="N", help="label N cranfield pairs of the cold run")
    ap.add_argument("--keep", action="store_true", help="keep the working directories")
    ap.add_argument("targets", nargs="*")
    a = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
          flush=True)
    try:
        from irrepro.labels.bench import gemm_peak

        print(f"GEMM peak (torch float32 2048x2048, 2 threads): {gemm_peak(2):.1f} GFLOP/s", flush=True)
    except ImportError:
        print("GEMM peak: torch not installed", flush=True)
    dirs = []
    wd = Path(tempfile.mkdtemp(prefix="irrepro-bench-"))
    dirs.append(wd)
    dag(wd, a.configfile, a.cores, a.targets)
    if a.test_config:
        td = Path(tempfile.mkdtemp(prefix="irrepro-bench-test-"))
        dirs.append(td)
        dag(td, REPO / "config" / "test.yaml", a.cores)
    if a.labeler:
        import yaml

        version = (yaml.safe_load(open(a.configfile)) or {}).get("version", "v1")
        res = wd / "results" / version
        subprocess.run([sys.executable, "-m", "irrepro.labels.bench", str(res / "labels/cranfield/pairs.tsv"),
                        "--n", str(a.labeler), "--prompt", "cranfield", "--topics",
                        str(res / "collections/cranfield/topics.tsv"), "--dataset", "cranfield", "--home",
                        str(wd / "resources/ir_datasets")], check=True)
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for d in dirs:
        print(f"working directory: {d}" + ("" if a.keep else " (removed)"))
        if not a.keep:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
