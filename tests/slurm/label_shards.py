"""The scattered label stage on the SLURM test cluster (tests/test_slurm.py's label-shard test), as a scenario that
can run in a background thread: :func:`prepare` copies the shared DAG run (at once, before other tests touch it),
:func:`run` labels vaswani's pairs in shards on the cluster, cancels the shards midway, resumes, and returns what
the test asserts on. Most of its minute is SLURM's and the executor plugin's polling (the plugin waits 10 s longer
after each poll that finds nothing finished), so the ``dag`` fixture starts it as soon as the DAG is built
(tests/conftest.py) and the other DAG tests run meanwhile."""
import shutil
import sqlite3
import subprocess
import time

import pandas as pd
import yaml

#: the test config's vaswani pairs (10 sampled queries x top 2 = 20) -> 2 shards, both running at once under
#: --jobs 2 (3 shards made the first run wait for a third job after the kill)
SHARD_SIZE = 10
#: the slow labeler's batch: the kill comes once a shard has committed two batches and is not done
SLOW_BATCH = 2
TARGET = "results/test/labels/vaswani/slowhash.tsv"


def label_configs(test_config, root):
    """config/test.yaml with a slow hash labeler (0.5 s a pair, SLOW_BATCH pairs a batch: a shard runs long enough
    to be killed midway) on vaswani and one file labeler on dl19-pool; unsharded and in shards of SHARD_SIZE pairs.
    Only vaswani's table is built (TARGET), so the shards are vaswani's."""
    c = yaml.safe_load(test_config.read_text())
    lab = c["labels"]
    lab["labelers"]["slowhash"] = {"backend": "hash", "delay": 0.5, "batch_size": SLOW_BATCH}
    lab["collections"]["dl19-pool"]["labelers"] = ["flant5-large"]
    lab["collections"]["vaswani"]["labelers"] = ["slowhash"]
    lab.pop("self_preference", None)  # it measures MiniLM, which this config no longer computes
    lab.pop("audit", None)  # it audits MiniLM on vaswani, which this config no longer labels
    single, sharded = root / "single.yaml", root / "sharded.yaml"
    single.write_text(yaml.safe_dump(c))
    # 2,000 MB a shard (the hash labeler needs little): both fit the test node's 8,000 MB at once (6,000 each, the
    # default, ran them one after the other)
    lab["shards"] = {"size": SHARD_SIZE, "mem_mb": 2000}
    sharded.write_text(yaml.safe_dump(c))
    return single, sharded


def rows(db):
    if not db.exists():
        return 0
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute("SELECT COUNT(*) FROM labels").fetchone()[0]
    except sqlite3.OperationalError:  # the table is not created yet
        return 0
    finally:
        con.close()


def kill_vaswani_shards(env, dbs, sizes, run, log, timeout=900):
    """scancel every running vaswani label shard job once one shard's cache file holds two committed batches
    (2 * SLOW_BATCH labels) and that shard is not done (fewer rows than its size); returns the job ids cancelled."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if run.poll() is not None:  # the run ended before a shard could be killed (e.g. a config error)
            raise AssertionError(f"the sharded run exited ({run.returncode}) before a shard was killed:\n"
                                 f"{log.read_text()[-3000:]}")
        if any(2 * SLOW_BATCH <= rows(db) < n for db, n in zip(dbs, sizes)):
            q = subprocess.run(["squeue", "-h", "-o", "%i %k"], env=env, capture_output=True, text=True).stdout
            ids = [line.split()[0] for line in q.splitlines() if "labels_shard" in line and "vaswani" in line]
            if ids:
                subprocess.run(["scancel", *ids], env=env, check=True)
                return ids
        time.sleep(0.2)
    raise AssertionError("no vaswani label shard ran long enough to be killed")


def copy_of(dag, dest):
    """A copy of the shared run (results, resources, Snakemake's records; mtimes kept) without its labels tables,
    so a run of ``labels_all`` with ``--rerun-triggers mtime`` redoes only the label stage, not retrieval."""
    for part in ("results", "resources", ".snakemake"):
        shutil.copytree(dag / part, dest / part, symlinks=True)
    for p in (dest / "results/test/labels").glob("*/*.tsv"):
        if p.name != "pairs.tsv":
            p.unlink()
    return dest


def prepare(dag, root, test_config) -> dict:
    """The two configs and two copies of the shared run (the local reference's and the SLURM run's)."""
    root.mkdir(parents=True, exist_ok=True)
    single, sharded = label_configs(test_config, root)
    return {"root": root, "single": single, "sharded": sharded,
            "local": copy_of(dag, root / "local"), "work": copy_of(dag, root / "work")}


def run(prep: dict, snakemake, snakemake_cmd, profile, before=None) -> dict:
    """The scenario: the local single-job reference beside a sharded SLURM run whose shards are cancelled midway,
    then the resume. ``snakemake`` / ``snakemake_cmd``: tests/conftest.py's runners; ``profile``: the SLURM profile
    folder; ``before``: called first (waits until no other run holds the machine's one test cluster). Returns what
    the test asserts on; raises on a failed run."""
    from slurm.cluster import slurm_cluster, started_jobs

    if before is not None:
        before()
    root, local, work = prep["root"], prep["local"], prep["work"]
    # the local single-job reference runs beside the SLURM runs (the slow labeler sleeps; the cores are free)
    # --rerun-triggers (like --configfile) takes every value up to the next option: keep the target after --cores
    with open(root / "reference.log", "w") as ref_log:
        reference = subprocess.Popen(
            snakemake_cmd(local, "--rerun-triggers", "mtime", "--cores", "1", TARGET, config=prep["single"]),
            stdout=ref_log, stderr=subprocess.STDOUT)
    n_pairs = len(pd.read_csv(work / "results/test/labels/vaswani/pairs.tsv", sep="\t").drop_duplicates(
        ["query_id", "doc_id"]))
    S = -(-n_pairs // SHARD_SIZE)
    assert S >= 2, f"{n_pairs} vaswani pairs make {S} shard(s) of {SHARD_SIZE}: the test needs several"
    size = [min(SHARD_SIZE, n_pairs - i * SHARD_SIZE) for i in range(S)]
    dbs = [work / f"resources/labels/cache.shards/vaswani/slowhash/shard-{i}-of-{S}.sqlite" for i in range(S)]
    args = ["--profile", str(profile), "--jobs", "2", "--slurm-init-seconds-before-status-checks", "2",
            "--rerun-triggers", "mtime", "--slurm-keep-successful-logs", TARGET]
    try:
        with slurm_cluster(root / "cluster") as env:
            cmd = snakemake_cmd(work, *args, config=prep["sharded"])
            with open(root / "first.log", "w") as out:
                first = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
                try:
                    killed = kill_vaswani_shards(env, dbs, size, first, root / "first.log")
                    first_rc = first.wait(timeout=1800)
                finally:
                    if first.poll() is None:
                        first.kill()
            shard_tsv = [work / f"results/test/labels/vaswani/slowhash/shard-{i}-of-{S}.tsv" for i in range(S)]
            committed = {i: rows(db) for i, db in enumerate(dbs) if not shard_tsv[i].exists()}
            snakemake(work, *args, config=prep["sharded"], env=env, timeout=2400)  # the resume
            jobs = started_jobs(root / "cluster")
        reference_rc = reference.wait(timeout=600)
    finally:
        if reference.poll() is None:
            reference.kill()
    return {"local": local, "work": work, "S": S, "size": size, "killed": killed, "first_rc": first_rc,
            "committed": committed, "jobs": jobs, "reference_rc": reference_rc,
            "reference_log": (root / "reference.log").read_text()[-3000:]}
