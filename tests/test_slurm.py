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
import sqlite3
import subprocess
import time

import pandas as pd
import pytest
import yaml

from conftest import REPO, SLURM_GROUP_SIZE, TEST_CONFIG, assert_runs_identical, slurm_wanted, snakemake, snakemake_cmd
from slurm.cluster import available, slurm_cluster, started_jobs  # tests/ is on sys.path (pytest's rootdir-relative imports)

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
#: the test config's vaswani pairs (10 sampled queries x top 2 = 20) -> 2 shards, both running at once under
#: --jobs 2 (3 shards made the first run wait for a third job after the kill)
SHARD_SIZE = 10
#: the slow labeler's batch: the kill comes once a shard has committed two batches and is not done
SLOW_BATCH = 2
TARGET = "results/test/labels/vaswani/slowhash.tsv"


def _label_configs(tmp_path):
    """config/test.yaml with a slow hash labeler (0.5 s a pair, SLOW_BATCH pairs a batch: a shard runs long enough
    to be killed midway) on vaswani and one file labeler on dl19-pool; unsharded and in shards of SHARD_SIZE pairs.
    Only vaswani's table is built (TARGET), so the shards are vaswani's."""
    c = yaml.safe_load(TEST_CONFIG.read_text())
    lab = c["labels"]
    lab["labelers"]["slowhash"] = {"backend": "hash", "delay": 0.5, "batch_size": SLOW_BATCH}
    lab["collections"]["dl19-pool"]["labelers"] = ["flant5-large"]
    lab["collections"]["vaswani"]["labelers"] = ["slowhash"]
    lab.pop("self_preference", None)  # it measures MiniLM, which this config no longer computes
    lab.pop("audit", None)  # it audits MiniLM on vaswani, which this config no longer labels
    single, sharded = tmp_path / "single.yaml", tmp_path / "sharded.yaml"
    single.write_text(yaml.safe_dump(c))
    # 2,000 MB a shard (the hash labeler needs little): both fit the test node's 8,000 MB at once (6,000 each, the
    # default, ran them one after the other)
    lab["shards"] = {"size": SHARD_SIZE, "mem_mb": 2000}
    sharded.write_text(yaml.safe_dump(c))
    return single, sharded


def _rows(db):
    if not db.exists():
        return 0
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute("SELECT COUNT(*) FROM labels").fetchone()[0]
    except sqlite3.OperationalError:  # the table is not created yet
        return 0
    finally:
        con.close()


def _kill_vaswani_shards(env, dbs, sizes, run, log, timeout=900):
    """scancel every running vaswani label shard job once one shard's cache file holds two committed batches
    (2 * SLOW_BATCH labels) and that shard is not done (fewer rows than its size); returns the job ids cancelled."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if run.poll() is not None:  # the run ended before a shard could be killed (e.g. a config error)
            raise AssertionError(f"the sharded run exited ({run.returncode}) before a shard was killed:\n"
                                 f"{log.read_text()[-3000:]}")
        if any(2 * SLOW_BATCH <= _rows(db) < n for db, n in zip(dbs, sizes)):
            q = subprocess.run(["squeue", "-h", "-o", "%i %k"], env=env, capture_output=True, text=True).stdout
            ids = [line.split()[0] for line in q.splitlines() if "labels_shard" in line and "vaswani" in line]
            if ids:
                subprocess.run(["scancel", *ids], env=env, check=True)
                return ids
        time.sleep(0.2)
    raise AssertionError("no vaswani label shard ran long enough to be killed")


def _copy_of(dag, dest):
    """A copy of the shared run (results, resources, Snakemake's records; mtimes kept) without its labels tables,
    so a run of ``labels_all`` with ``--rerun-triggers mtime`` redoes only the label stage, not retrieval."""
    import shutil

    for part in ("results", "resources", ".snakemake"):
        shutil.copytree(dag / part, dest / part, symlinks=True)
    for p in (dest / "results/test/labels").glob("*/*.tsv"):
        if p.name != "pairs.tsv":
            p.unlink()
    return dest


@pytest.mark.skipif(not slurm_wanted(), reason="set IRREPRO_SLURM_TESTS=1 (CI runs it)")
def test_slurm_label_shards_match_local_single_job(dag, tmp_path):
    """The label stage scattered into shard jobs on the SLURM cluster, one shard killed midway (scancel) and
    resumed: the labels tables are byte-identical to the local single-job run, each shard ran as its own SLURM
    job, and the killed shard relabelled none of the pairs it had committed (its log's resume count)."""
    if not available():
        if os.environ.get("CI") == "true":
            pytest.fail("SLURM binaries missing in CI: .ci/run must call tests/slurm/install.sh")
        pytest.skip("SLURM not installed (bash tests/slurm/install.sh)")
    pytest.importorskip("snakemake_executor_plugin_slurm")
    single, sharded = _label_configs(tmp_path)
    # both runs start from copies of the shared DAG run: the label stage is what is compared, retrieval is reused
    local, work = _copy_of(dag, tmp_path / "local"), _copy_of(dag, tmp_path / "work")
    # the local single-job reference runs beside the SLURM runs (the slow labeler sleeps; the cores are free)
    # --rerun-triggers (like --configfile) takes every value up to the next option: keep the target after --cores
    reference = subprocess.Popen(
        snakemake_cmd(local, "--rerun-triggers", "mtime", "--cores", "1", TARGET, config=single),
        stdout=open(tmp_path / "reference.log", "w"), stderr=subprocess.STDOUT)
    n_pairs = len(pd.read_csv(work / "results/test/labels/vaswani/pairs.tsv", sep="\t").drop_duplicates(
        ["query_id", "doc_id"]))
    S = -(-n_pairs // SHARD_SIZE)
    assert S >= 2, f"{n_pairs} vaswani pairs make {S} shard(s) of {SHARD_SIZE}: the test needs several"
    size = [min(SHARD_SIZE, n_pairs - i * SHARD_SIZE) for i in range(S)]
    dbs = [work / f"resources/labels/cache.shards/vaswani/slowhash/shard-{i}-of-{S}.sqlite" for i in range(S)]
    args = ["--profile", str(REPO / "workflow/profiles/slurm"), "--jobs", "2", "--slurm-init-seconds-before-status-checks",
            "2", "--rerun-triggers", "mtime", "--slurm-keep-successful-logs", TARGET]
    with slurm_cluster(tmp_path / "cluster") as env:
        cmd = snakemake_cmd(work, *args, config=sharded)
        with open(tmp_path / "first.log", "w") as out:
            first = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
            try:
                killed = _kill_vaswani_shards(env, dbs, size, first, tmp_path / "first.log")
                assert first.wait(timeout=1800) != 0, "the run with a cancelled shard job succeeded"
            finally:
                if first.poll() is None:
                    first.kill()
        shard_tsv = [work / f"results/test/labels/vaswani/slowhash/shard-{i}-of-{S}.tsv" for i in range(S)]
        committed = {i: _rows(db) for i, db in enumerate(dbs) if not shard_tsv[i].exists()}
        assert any(0 < k < size[i] for i, k in committed.items()), (killed, committed)
        snakemake(work, *args, config=sharded, env=env, timeout=2400)  # the resume
        jobs = started_jobs(tmp_path / "cluster")
    res = "results/test/labels"
    assert reference.wait(timeout=600) == 0, (tmp_path / "reference.log").read_text()[-3000:]
    assert (local / TARGET).read_bytes() == (work / TARGET).read_bytes()
    assert json.loads((work / res / "vaswani" / "shards.json").read_text())["shards"] == S
    # every shard its own SLURM job: a SLURM log per shard (named by its job id) under the plugin's log folder
    shard_logs = sorted((work / ".snakemake" / "slurm_logs" / "rule_labels_shard").rglob("*.log"))
    assert len({p.parent for p in shard_logs}) == S, shard_logs
    assert len({p.stem for p in shard_logs}) == len(shard_logs) >= S + sum(k > 0 for k in committed.values())
    assert jobs >= len(shard_logs) + 1  # + the gather
    for i, k in committed.items():
        log = (work / f"results/test/logs/labels/vaswani/slowhash/shard-{i}-of-{S}.log").read_text()
        n = size[i]
        assert f"shard {i} of {S}: {n} pairs, {k} resumed from the shard cache, 0 from the central cache, {n - k} " \
            "labelled" in log, log[-2000:]
