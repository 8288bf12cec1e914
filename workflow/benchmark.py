"""Benchmark (not a test): wall time of the default DAG, cold (empty working directory) and no-op (rerun).

    python workflow/benchmark.py --cores 2 [--configfile config/config.yaml] [targets ...]

Runs Snakemake in a fresh temporary directory (so nothing is reused), then again with nothing changed, and prints
both wall times and the job counts. Set IRREPRO_MIRROR to run offline.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", default="2")
    ap.add_argument("--configfile", default=str(REPO / "config" / "config.yaml"))
    ap.add_argument("--keep", action="store_true", help="keep the working directory")
    ap.add_argument("targets", nargs="*")
    a = ap.parse_args()
    wd = Path(tempfile.mkdtemp(prefix="irrepro-bench-"))
    base = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(wd),
            "--configfile", os.path.abspath(a.configfile), "--cores", a.cores, *a.targets]
    results = {}
    for label in ("cold", "no-op"):
        t = time.perf_counter()
        p = subprocess.run(base, capture_output=True, text=True)
        dt = time.perf_counter() - t
        if p.returncode != 0:
            sys.stderr.write(p.stderr[-5000:])
            raise SystemExit(f"{label} run failed")
        m = re.search(r"(\d+) of (\d+) steps", p.stderr)
        results[label] = (dt, m.group(2) if m else "0")
        print(f"{label:6s} {dt:8.1f} s  jobs: {results[label][1]}", flush=True)
    print(f"working directory: {wd}" + ("" if a.keep else " (removed)"))
    if not a.keep:
        import shutil
        shutil.rmtree(wd, ignore_errors=True)


if __name__ == "__main__":
    main()
