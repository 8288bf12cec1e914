"""The DAG of config/test.yaml submitted to a real one-node SLURM cluster (slurmctld + slurmd + munge on
localhost) through `snakemake --profile workflow/profiles/slurm`, compared byte for byte with the local run.

The SLURM run is the shared ``second_run`` fixture (tests/conftest.py), which the determinism test compares too.
Runs in CI (CI=true) and when IRREPRO_SLURM_TESTS=1; needs root and Debian's slurm-wlm + munge
(`bash tests/slurm/install.sh`). Every daemon started is stopped by PID.
"""
import pytest

from conftest import result_files, slurm_wanted

pytestmark = [pytest.mark.integration, pytest.mark.slurm]


@pytest.mark.skipif(not slurm_wanted(), reason="set IRREPRO_SLURM_TESTS=1 (CI runs it)")
def test_slurm_run_matches_local_run(dag, second_run):
    work, info = second_run
    if info["executor"] != "slurm":
        pytest.skip("SLURM not installed (bash tests/slurm/install.sh)")
    local, cluster = result_files(dag), result_files(work)
    assert sorted(local) == sorted(cluster)
    differ = [k for k in local if local[k].read_bytes() != cluster[k].read_bytes()]
    assert not differ, f"SLURM and local runs differ: {differ}"
    assert info["jobs"] >= 10, f"only {info['jobs']} jobs went through slurmctld"
