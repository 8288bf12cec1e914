import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def mirror_dir():
    """The offline mirror: $IRREPRO_MIRROR, else ../shared/mirror beside the repo (CI's layout)."""
    m = os.environ.get("IRREPRO_MIRROR")
    if m and Path(m).is_dir():
        return Path(m).resolve()
    cand = REPO.parent / "shared" / "mirror"
    return cand if cand.is_dir() else None


# ir_datasets fixes its paths when it is imported, so IR_DATASETS_HOME must point at a writable copy of the mirror
# before any test imports it.
_IRDS_HOME = None
if mirror_dir() is not None:
    import tempfile

    from irrepro.datasets.mirror import ensure_ir_datasets_home

    _IRDS_HOME = ensure_ir_datasets_home(Path(tempfile.mkdtemp(prefix="irrepro-irds-")), mirror_dir())
    os.environ.setdefault("IRREPRO_MIRROR", str(mirror_dir()))


@pytest.fixture(scope="session")
def mirror():
    m = mirror_dir()
    if m is None:
        pytest.skip("no offline mirror (set IRREPRO_MIRROR) and no network data")
    return m


@pytest.fixture(scope="session")
def irds_home(tmp_path_factory, mirror):
    """The writable IR_DATASETS_HOME seeded from the mirror for this session."""
    return _IRDS_HOME


# ---------------------------------------------------------------- running the DAG (integration tests)
TEST_CONFIG = REPO / "config" / "test.yaml"


def snakemake(workdir, *args, config=None, check=True, timeout=2400, env=None):
    """Run Snakemake on the repository's Snakefile in ``workdir`` (so nothing is shared with the repo's results)."""
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir),
           "--configfile", str(config or TEST_CONFIG), *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env or os.environ.copy())
    if check and p.returncode != 0:
        raise AssertionError(f"snakemake failed ({p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-6000:]}")
    return p


@pytest.fixture(scope="session")
def dag(tmp_path_factory, mirror):
    """config/test.yaml run once, locally with 2 cores, in a fresh directory; shared by the integration tests."""
    wd = tmp_path_factory.mktemp("dag")
    snakemake(wd, "--cores", "2")
    return wd


def result_files(workdir, version="test"):
    """Every result file of a run except logs and Snakemake's own state, by relative path."""
    root = Path(workdir) / "results" / version
    return {str(p.relative_to(root)): p for p in sorted(root.rglob("*"))
            if p.is_file() and "logs" not in p.relative_to(root).parts}
