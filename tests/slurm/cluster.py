"""A real one-node SLURM cluster on localhost, for tests of `snakemake --executor slurm`.

Debian's slurm-wlm + munge (``tests/slurm/install.sh``). No systemd:
daemons are started by hand in a scratch directory and stopped by their PIDs. Inside a job the SLURM executor
plugin strips ``SLURM_*`` variables (``SLURM_CONF`` included), so the config is also linked at the default path
``/etc/slurm/slurm.conf`` while the cluster is up (removed afterwards if we created it).
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

LOCK = "/tmp/irrepro-slurm-test.lock"
LOCK_WAIT = 1800  # seconds
BINARIES = ("munged", "slurmctld", "slurmd", "sinfo", "sbatch", "squeue")

CONF = """\
ClusterName=irrepro-test
SlurmctldHost=localhost
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={s}/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation={d}/state
SlurmdSpoolDir={s}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
MinJobAge=300
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
SlurmdParameters=config_overrides
NodeName=localhost CPUs={cpus} RealMemory={mem} State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""


def started_jobs(scratch: Path) -> int:
    """How many jobs the test cluster started: slurmctld's main scheduler logs ``sched: Allocate JobId=N``, its
    backfill scheduler (which starts some when several jobs fit at once) ``sched/backfill: _start_job: Started
    JobId=N``."""
    log = (Path(scratch) / "slurmctld.log").read_text()
    return len(set(re.findall(r"(?:sched: Allocate|_start_job: Started) JobId=(\d+)", log)))


def available() -> bool:
    return all(shutil.which(b) for b in BINARIES) and os.geteuid() == 0


@contextlib.contextmanager
def slurm_cluster(scratch: Path, cpus: int = 2, mem_mb: int = 8000, timeout: float = 60):
    """Bring up munged, slurmctld and slurmd; yield the environment to submit with; stop them by PID.

    ``cpus`` and ``mem_mb`` are what the node declares, not what the machine has (``SlurmdParameters=
    config_overrides``): jobs that mostly wait (SLURM's and Snakemake's start-up) can share the real cores, and no
    job's ``mem_mb`` request is refused by the machine's size. Nothing enforces them (``TaskPlugin=task/none``)."""
    # One test cluster per machine at a time: the daemons listen on SLURM's fixed ports (6817/6818) and the config
    # is linked at /etc/slurm/slurm.conf, so a second test run (another checkout, CI beside a developer) waits here.
    lock = open(LOCK, "w")
    t0 = time.monotonic()
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() - t0 > LOCK_WAIT:
                lock.close()
                raise TimeoutError(f"another SLURM test cluster holds {LOCK} for more than {LOCK_WAIT} s")
            time.sleep(2)
    try:
        with _cluster(scratch, cpus, mem_mb, timeout) as env:
            yield env
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()


@contextlib.contextmanager
def _cluster(scratch, cpus, mem_mb, timeout):
    d = Path(scratch).resolve()
    # the sockets (munge's, slurmd's step sockets in its spool) in a short folder of their own: a Unix socket path
    # has at most 108 bytes, which a deep scratch folder (an xdist worker's, a long checkout path) exceeds
    s = Path(tempfile.mkdtemp(prefix="irrepro-slurm-", dir="/tmp"))
    for sub in ("state", "munge"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    (s / "spool").mkdir()
    os.chmod(d / "munge", 0o700)
    key = d / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o400)
    conf = d / "slurm.conf"
    conf.write_text(CONF.format(d=d, s=s, cpus=cpus, mem=mem_mb))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    procs: list[subprocess.Popen] = []
    etc = Path("/etc/slurm/slurm.conf")
    linked = False
    try:
        procs.append(subprocess.Popen(
            ["munged", "-F", "--force", f"--key-file={key}", f"--socket={s}/munge.socket",
             f"--pid-file={d}/munge/munged.pid", f"--log-file={d}/munge/munged.log", f"--seed-file={d}/munge/seed"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        _wait(lambda: (s / "munge.socket").exists(), timeout, "munged socket")
        linked = link_config(etc, conf)
        procs.append(subprocess.Popen(["slurmctld", "-D", "-f", str(conf)], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        procs.append(subprocess.Popen(["slurmd", "-D", "-N", "localhost", "-f", str(conf)], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

        def idle():
            r = subprocess.run(["sinfo", "-h", "-o", "%t"], env=env, capture_output=True, text=True)
            return r.returncode == 0 and r.stdout.strip() in ("idle", "mix", "alloc")

        _wait(idle, timeout, "node idle in sinfo", logs=[d / "slurmctld.log", d / "slurmd.log"], procs=procs)
        yield env
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)
        if linked and etc.is_symlink():
            etc.unlink()
        shutil.rmtree(s, ignore_errors=True)


def link_config(etc: Path, conf: Path) -> bool:
    """Link ``etc`` (``/etc/slurm/slurm.conf``) to this test cluster's ``conf``; True if linked (and so to be
    removed afterwards). A link left by an earlier test cluster (dangling, or to a config of ours: ``ClusterName=
    irrepro-test``) is replaced: the caller holds the test-cluster lock, so that cluster is dead, and jobs reading
    its config would fail munge authentication against its socket. A site's own file or link is left alone."""
    if etc.is_symlink():
        try:
            ours = not etc.exists() or "ClusterName=irrepro-test" in etc.read_text()
        except OSError:
            ours = False
        if ours:
            etc.unlink()
    if etc.exists() or etc.is_symlink():
        return False
    etc.parent.mkdir(parents=True, exist_ok=True)
    etc.symlink_to(conf)
    return True


def _wait(cond, timeout, what, logs=(), procs=()):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if cond():
            return
        dead = [p.args[0] for p in procs if p.poll() is not None]
        if dead:  # e.g. "Address already in use": another SLURM on this machine
            what = f"{what}: {', '.join(dead)} exited"
            break
        time.sleep(0.5)
    tail = "".join(f"\n--- {p}:\n" + p.read_text()[-2000:] for p in logs if Path(p).exists())
    raise TimeoutError(f"SLURM test cluster: gave up waiting for {what}{tail}")
