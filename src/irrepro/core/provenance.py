"""``provenance.json``: what produced a results version (code, config, packages, input files, seeds)."""
from __future__ import annotations

import importlib.metadata as md
import os
import platform
import subprocess
import sys

from irrepro import __version__
from irrepro.datasets.mirror import md5sum

PACKAGES = ["irrepro", "numpy", "scipy", "pandas", "matplotlib", "snakemake", "ir_datasets", "ir-measures",
            "pytrec-eval-terrier", "pyndeval", "pyterrier", "pyterrier-pisa", "torch", "transformers"]


def git_commit(cwd=".") -> dict:
    def git(*args):
        try:
            return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    commit = git("rev-parse", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    return {"commit": commit or None, "dirty": dirty if commit else None}


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
