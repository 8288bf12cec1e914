"""The code is lint-clean: ruff (Python), snakefmt (rules) and `snakemake --lint` (the workflow), as `make lint`."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _run(*cmd):
    p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env={**os.environ})
    return p.returncode, p.stdout + p.stderr


@pytest.mark.parametrize("tool", ["ruff", "snakefmt"])
def test_python_and_rules_are_formatted(tool):
    exe = BIN / tool
    if not exe.exists():
        pytest.skip(f"{tool} not installed (make setup installs it)")
    cmd = [str(exe), "check", "src", "workflow", "tests"] if tool == "ruff" else [str(exe), "--check", "Snakefile",
                                                                                   "workflow/rules"]
    rc, out = _run(*cmd)
    assert rc == 0, out[-4000:]


def test_snakemake_lint_is_clean(tmp_path):
    rc, out = _run(sys.executable, "-m", "snakemake", "--lint", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path),
                   "--configfile", str(REPO / "config" / "test.yaml"))
    assert rc == 0 and "Lints for" not in out, out[-4000:]
