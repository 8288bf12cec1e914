"""Targets of config/test.yaml submitted to a real one-node SLURM cluster (slurmctld + slurmd + munge on
localhost) through `snakemake --profile workflow/profiles/slurm`, compared byte for byte with the local run.

The SLURM run is the shared ``second_run`` fixture (tests/conftest.py), which the determinism test compares too: it
builds ``conftest.SECOND_RUN_TARGETS``, a subset of the DAG (retrieval -> scores -> stats on dl19-pool, its label
stage, the VB-Score paper's verify table and figures), not the whole DAG again, which was CI's largest item.
Runs in CI (CI=true) and when IRREPRO_SLURM_TESTS=1; needs root and Debian's slurm-wlm + munge
(`bash tests/slurm/install.sh`). Every daemon started is stopped by PID.
"""
import json
import os

import pytest

from conftest import REPO, SLURM_GROUP_SIZE, assert_runs_identical, label_shard_run, slurm_wanted
from slurm.cluster import available
from slurm.label_shards import TARGET  # tests/ is on sys.path (pytest's rootdir-relative imports)

pytestmark = [pytest.mark.integration, pytest.mark.slurm]


@pytest.mark.skipif(not slurm_wanted(), reason="set IRREPRO_SLURM_TESTS=1 (CI runs it)")
def test_slurm_run_matches_local_run(dag, second_run):
    """Every result file the SLURM run was asked to build (the jobs of ``conftest.SECOND_RUN_TARGETS``: PISA index,
    runs, scores, stats, label stage, a paper's verify table and figures; ``conftest.compare_runs``) is byte-identical
    to the same file of the local run of the whole DAG, and every job of those targets ran where it should: on the
    submit host for the Snakefile's local rules among them (the fetches), in group jobs through slurmctld for the
    others."""
    work, info = second_run
    if info["executor"] != "slurm":
        pytest.skip("SLURM not installed (bash tests/slurm/install.sh)")
    assert_runs_identical(dag, work, info["planned"], "SLURM run")
    # every job but the submit-host rules (the Snakefile's `localrules`) went through slurmctld, the jobs of each
    # rule in group jobs of at most SLURM_GROUP_SIZE (conftest.slurm_group_args: one group per rule): one benchmark
    # file per job, one kept SLURM log per submitted group job under its group's folder (group_<rule>_<rule>)
    bench = [(root, p) for root in (work / "results/test/benchmarks", work / "resources/benchmarks")
             for p in root.rglob("*.tsv")]
    ran = {}
    for root, p in bench:
        rule = p.relative_to(root).parts[0].removesuffix(".tsv")
        ran[rule] = ran.get(rule, 0) + 1
    def family(rule):
        """A rule made per collection in a loop (stats_compare_<collection>) benchmarks under its family's folder."""
        return rule if rule in ran else next((f for f in ran if rule.startswith(f"{f}_")), rule)

    planned = {family(r) for r in info["planned"].values()}
    assert planned == set(ran), f"planned, not run: {sorted(planned - set(ran))}; run, not planned: " \
        f"{sorted(set(ran) - planned)}"
    assert LOCAL_RULES & planned, "the targets need no local rule: nothing checks that local rules stay local"
    logs = {}
    for p in (work / ".snakemake" / "slurm_logs").rglob("*.log"):
        name = p.relative_to(work / ".snakemake" / "slurm_logs").parts[0].removeprefix("group_")
        rule = name[:(len(name) - 1) // 2]
        assert name == f"{rule}_{rule}", f"{p}: not a group job of one rule"
        logs[family(rule)] = logs.get(family(rule), 0) + 1
    on_cluster = {r: n for r, n in ran.items() if r not in LOCAL_RULES}
    assert set(logs) == set(on_cluster), sorted(set(logs) ^ set(on_cluster))
    for r, n in on_cluster.items():  # n jobs in group jobs of at most SLURM_GROUP_SIZE, at least one job each
        assert -(-n // SLURM_GROUP_SIZE) <= logs[r] <= n, (r, n, logs[r])
    assert info["jobs"] == sum(logs.values()) >= len(on_cluster), f"{info['jobs']} jobs went through slurmctld: {logs}"
    assert sum(on_cluster.values()) > info["jobs"], "no two jobs shared a SLURM job: the groups were not applied"


# the rules that run on the submit host under a cluster profile (the Snakefile's `localrules:`)
LOCAL_RULES = {"fetch_artifact", "fetch_collection", "provenance", "verify_summary", "cost"}


def test_local_rules_are_the_snakefiles():
    import re

    text = (REPO / "Snakefile").read_text()
    block = re.search(r"^localrules:\n((?:    \w+,\n)+)", text, re.M)
    assert block and set(re.findall(r"\w+", block.group(1))) == LOCAL_RULES


# ---------------------------------------------------------------- scattered labelling (labels.shards)
@pytest.mark.skipif(not slurm_wanted(), reason="set IRREPRO_SLURM_TESTS=1 (CI runs it)")
def test_slurm_label_shards_match_local_single_job(dag, tmp_path):
    """The label stage scattered into shard jobs on the SLURM cluster, one shard killed midway (scancel) and
    resumed: the labels tables are byte-identical to the local single-job run, each shard ran as its own SLURM
    job, and the killed shard relabelled none of the pairs it had committed (its log's resume count). The scenario
    (tests/slurm/label_shards.py) started in the background when the DAG was built (conftest.label_shard_run)."""
    if not available():
        if os.environ.get("CI") == "true":
            pytest.fail("SLURM binaries missing in CI: .ci/run must call tests/slurm/install.sh")
        pytest.skip("SLURM not installed (bash tests/slurm/install.sh)")
    pytest.importorskip("snakemake_executor_plugin_slurm")
    r = label_shard_run(dag, tmp_path)
    S, size, committed, work = r["S"], r["size"], r["committed"], r["work"]
    assert r["first_rc"] != 0, "the run with a cancelled shard job succeeded"
    assert any(0 < k < size[i] for i, k in committed.items()), (r["killed"], committed)
    res = "results/test/labels"
    assert r["reference_rc"] == 0, r["reference_log"]
    assert (r["local"] / TARGET).read_bytes() == (work / TARGET).read_bytes()
    assert json.loads((work / res / "vaswani" / "shards.json").read_text())["shards"] == S
    # every shard its own SLURM job: a SLURM log per shard (named by its job id) under the plugin's log folder
    shard_logs = sorted((work / ".snakemake" / "slurm_logs" / "rule_labels_shard").rglob("*.log"))
    assert len({p.parent for p in shard_logs}) == S, shard_logs
    assert len({p.stem for p in shard_logs}) == len(shard_logs) >= S + sum(k > 0 for k in committed.values())
    assert r["jobs"] >= len(shard_logs) + 1  # + the gather
    for i, k in committed.items():
        log = (work / f"results/test/logs/labels/vaswani/slowhash/shard-{i}-of-{S}.log").read_text()
        n = size[i]
        assert f"shard {i} of {S}: {n} pairs, {k} resumed from the shard cache, 0 from the central cache, {n - k} " \
            "labelled" in log, log[-2000:]
