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


# Measurements of the run itself, not results: logs, every rule's benchmark file and the cost table built from them
# (wall times differ from run to run by nature).
NOT_RESULTS = {"logs", "benchmarks"}
COST_FILES = {"cost.csv", "cost.md", "cost.pdf", "cost.png"}


def slurm_wanted() -> bool:
    """The SLURM integration test runs in CI (CI=true) and when IRREPRO_SLURM_TESTS=1."""
    return os.environ.get("CI") == "true" or os.environ.get("IRREPRO_SLURM_TESTS") == "1"


@pytest.fixture(scope="session")
def second_run(tmp_path_factory, dag):
    """A second, independent run of config/test.yaml, for the byte-for-byte comparisons with ``dag``.

    Where the SLURM test is wanted and SLURM is installed, it is the run submitted to the one-node SLURM test
    cluster; otherwise a local run. Either way every job runs with one thread (``--max-threads 1``, where ``dag``
    gave two-thread rules two cores), so the one run serves both the determinism comparison (threads, job order)
    and the SLURM one (executor, separate processes) and CI runs the DAG twice, not three times.
    Returns ``(workdir, info)`` with ``info["executor"]`` ("slurm" or "local") and, for SLURM, ``info["jobs"]``
    (jobs allocated by slurmctld)."""
    root = tmp_path_factory.mktemp("second")
    work = root / "work"
    work.mkdir()
    if slurm_wanted():
        from slurm.cluster import available, slurm_cluster

        import importlib.util

        if not available() and os.environ.get("CI") == "true":
            pytest.fail("SLURM binaries missing in CI: .ci/run must call tests/slurm/install.sh")
        if available() and importlib.util.find_spec("snakemake_executor_plugin_slurm"):
            with slurm_cluster(root / "cluster") as env:
                # the profile's 10 s before the first status check is for real clusters; a one-node test cluster
                # answers at once, so poll every 2 s
                snakemake(work, "--profile", str(REPO / "workflow/profiles/slurm"), "--jobs", "2",
                          "--max-threads", "1", "--slurm-init-seconds-before-status-checks", "2", env=env)
                jobs = (root / "cluster" / "slurmctld.log").read_text().count("sched: Allocate JobId")
            return work, {"executor": "slurm", "jobs": jobs}
    snakemake(work, "--cores", "1", "--max-threads", "1")
    return work, {"executor": "local"}


def result_files(workdir, version="test"):
    """Every result file of a run except logs, benchmarks, the cost table and Snakemake's own state."""
    root = Path(workdir) / "results" / version
    return {str(p.relative_to(root)): p for p in sorted(root.rglob("*"))
            if p.is_file() and not NOT_RESULTS & set(p.relative_to(root).parts)
            and str(p.relative_to(root)) not in COST_FILES}
