"""The DAG of config/test.yaml submitted to a real one-node SLURM cluster (slurmctld + slurmd + munge on
localhost) through `snakemake --profile workflow/profiles/slurm`, compared byte for byte with the local run.

Runs in CI (CI=true) and when IRREPRO_SLURM_TESTS=1; needs root and Debian's slurm-wlm + munge
(`bash tests/slurm/install.sh`). Every daemon started is stopped by PID.
"""
import os

import pytest

from conftest import REPO, result_files, snakemake
from slurm.cluster import available, slurm_cluster  # tests/ is on sys.path (pytest's rootdir-relative imports)

pytestmark = [pytest.mark.integration, pytest.mark.slurm]

wanted = os.environ.get("CI") == "true" or os.environ.get("IRREPRO_SLURM_TESTS") == "1"


@pytest.mark.skipif(not wanted, reason="set IRREPRO_SLURM_TESTS=1 (CI runs it)")
def test_slurm_run_matches_local_run(dag, tmp_path):
    if not available():
        if os.environ.get("CI") == "true":
            pytest.fail("SLURM binaries missing in CI: .ci/run must call tests/slurm/install.sh")
        pytest.skip("SLURM not installed (bash tests/slurm/install.sh)")
    pytest.importorskip("snakemake_executor_plugin_slurm")
    work = tmp_path / "work"
    work.mkdir()
    with slurm_cluster(tmp_path / "cluster") as env:
        # the profile's 10 s before the first status check (and +10 s per idle check) is for real clusters; a
        # one-node test cluster answers at once, so poll every 2 s (minutes less in CI)
        snakemake(work, "--profile", str(REPO / "workflow/profiles/slurm"), "--jobs", "2",
                  "--slurm-init-seconds-before-status-checks", "2", env=env, timeout=2400)
        jobs = (tmp_path / "cluster" / "slurmctld.log").read_text().count("sched: Allocate JobId")
    local, cluster = result_files(dag), result_files(work)
    assert sorted(local) == sorted(cluster)
    differ = [k for k in local if local[k].read_bytes() != cluster[k].read_bytes()]
    assert not differ, f"SLURM and local runs differ: {differ}"
    assert jobs >= 10, f"only {jobs} jobs went through slurmctld"
