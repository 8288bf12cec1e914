"""``provenance.json``: what produced a results version (code, config, packages, input files, seeds)."""
from __future__ import annotations

import importlib.metadata as md
import os
import platform
import subprocess
import sys

from irrepro import __version__
from irrepro.core.io import md5sum

PACKAGES = ["irrepro", "numpy", "scipy", "pandas", "matplotlib", "snakemake", "ir_datasets", "ir-measures",
            "pytrec-eval-terrier", "pyndeval", "pyterrier", "pyterrier-pisa", "torch", "transformers"]


#: the repository irrepro runs from (src/irrepro/core -> the root), whatever the working directory of the run
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def git_commit(cwd=SOURCE) -> dict:
    """``commit`` (HEAD) and ``dirty`` (tracked files differ from it) of the repository at ``cwd`` (default: the one
    irrepro's code is in), and its ``origin`` URL; None each where it is no git work tree."""
    def git(*args):
        try:
            return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    commit = git("rev-parse", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    return {"commit": commit or None, "dirty": dirty if commit else None,
            "origin": (git("config", "--get", "remote.origin.url") or None) if commit else None}


def package_versions(names=PACKAGES) -> dict:
    out = {}
    for n in names:
        try:
            out[n] = md.version(n)
        except md.PackageNotFoundError:
            pass
    return out


def seeds_in(config, prefix="") -> dict:
    """Every ``seed`` key in the (nested) config, by dotted path."""
    out = {}
    if isinstance(config, dict):
        for k, v in config.items():
            p = f"{prefix}.{k}" if prefix else str(k)
            if k == "seed" or k.endswith("_seed"):
                out[p] = v
            else:
                out.update(seeds_in(v, p))
    return out


def build_provenance(config: dict, input_files=(), extra: dict | None = None) -> dict:
    files = {}
    for f in sorted(set(map(str, input_files))):
        if os.path.isfile(f):
            files[f] = md5sum(f)
    return {
        "project": {"name": "irrepro", "version": __version__, **git_commit()},
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": package_versions(),
        "config": config,
        "seeds": seeds_in(config),
        "inputs_md5": files,
        **(extra or {}),
    }


#: folders of a results version that hold records of runs, not results
RECORD_FOLDERS = ("logs", "benchmarks", "provenance")


def record_run(results_dir, started: float, config: dict, command=None, now: float | None = None):
    """The provenance of one Snakemake run that built something, a targeted build (``snakemake <file>``) too:
    ``<results_dir>/provenance/<UTC time>-<pid>.json`` with the code (version, git commit, whether the work tree
    differed from it), Python, platform, packages, the config and its seeds, the command, the run's start and end,
    and the md5 of every result file written since ``started`` (epoch seconds; logs, benchmarks and these records
    left out). Nothing is written (None returned) when the run wrote no result file."""
    import json
    import time
    from datetime import datetime, timezone
    from pathlib import Path

    root = Path(results_dir)
    now = time.time() if now is None else now
    made = sorted(p for p in root.rglob("*") if p.is_file() and p.stat().st_mtime >= started
                  and p.relative_to(root).parts[0] not in RECORD_FOLDERS)
    if not made:
        return None
    stamp = datetime.fromtimestamp(now, timezone.utc)
    record = {"run": {"command": list(sys.argv if command is None else command),
                      "started": datetime.fromtimestamp(started, timezone.utc).isoformat(timespec="seconds"),
                      "finished": stamp.isoformat(timespec="seconds"), "cwd": os.getcwd()},
              **build_provenance(config),
              "outputs_md5": {str(p.relative_to(root)): md5sum(p) for p in made}}
    record.pop("inputs_md5")
    out = root / "provenance" / f"{stamp:%Y%m%dT%H%M%SZ}-{os.getpid()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2, sort_keys=True, default=str) + "\n")
    return out
