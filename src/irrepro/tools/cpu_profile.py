"""Where a command's CPU time goes, by part: every process on the machine sampled once a second while it runs.

    python -m irrepro.tools.cpu_profile record cpu.json -- bash .ci/run     # run it, sampling; exits with its status
    python -m irrepro.tools.cpu_profile report cpu.json                     # CPU seconds per part, busy cores per minute

CI on two cores is bound by the CPU all its processes need together (docs/benchmark.md): this says which parts
need it. A process is sampled from /proc (its command line, working directory and parent when first seen, its user
+ system CPU time at each sample), so processes that live less than a second may be missed and the CPU a process
used after its last sample is not counted; SLURM's job processes (under a ``slurmstepd``) are counted as the
command's although they are not its children: on a machine whose only SLURM is the test cluster the command
started, they are its jobs. Linux only."""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import defaultdict

TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _read(pid: str):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    rest = s[s.rfind(")") + 2:].split()
    return int(rest[1]), (int(rest[11]) + int(rest[12])) / TICK, int(rest[19])  # ppid, cpu s, start tick


def _describe(pid: str) -> tuple[str, str]:
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        cmd = ""
    try:
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        cwd = ""
    return cmd[:500], cwd


def record(out: str, command: list[str], interval: float = 1.0) -> int:
    """Run ``command``, sampling every process each ``interval`` seconds; write the samples to ``out`` (JSON)."""
    me = str(os.getpid())
    procs: dict = {}
    t0 = time.monotonic()
    child = subprocess.Popen(command)
    totals = []
    while True:
        now = time.monotonic() - t0
        busy = 0.0
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or pid == me:
                continue
            try:
                ppid, cpu, start = _read(pid)
            except (OSError, ValueError, IndexError):
                continue
            key = f"{pid}:{start}"
            p = procs.get(key)
            if p is None:
                cmd, cwd = _describe(pid)
                p = procs[key] = {"pid": int(pid), "ppid": ppid, "cmd": cmd, "cwd": cwd, "first": round(now, 1),
                                  "cpu_at_first": cpu, "cpu": cpu, "last": round(now, 1)}
            busy += cpu - p["cpu"]
            p["cpu"], p["last"] = cpu, round(now, 1)
        totals.append((round(now, 1), round(busy, 2)))
        if child.poll() is not None:
            break
        time.sleep(interval)
    with open(out, "w") as f:
        json.dump({"command": command, "seconds": round(time.monotonic() - t0, 1), "root": child.pid,
                   "returncode": child.returncode, "processes": list(procs.values()), "busy": totals}, f)
    return child.returncode


#: (part, test on the process's own command line and working directory, and on its ancestors' command lines)
PARTS = [
    ("SLURM daemons", lambda c, d, up: re.search(r"\b(slurmctld|slurmd|slurmstepd|munged)\b", c.split(" ")[0])),
    ("test-config DAG, local run (the dag fixture)", lambda c, d, up: re.search(r"/dag\d+(/|\s|$)", f"{d} {c}")),
    ("test-config DAG, second run (SLURM)", lambda c, d, up: re.search(r"/second\d+/work(/|\s|$)", f"{d} {c}")),
    ("vLLM: pip install", lambda c, d, up: re.search(r"\bpip install\b.*vllm", f"{c} || {up}")),
    ("vLLM: servers and checks", lambda c, d, up: re.search(r"vllm", c + " " + up)),
    ("setup: pip", lambda c, d, up: re.search(r"\bpip(3)? install\b", c + " " + up)),
    ("other Snakemake runs of tests", lambda c, d, up: "snakemake" in c + " " + up),
    ("pytest workers (tests in process)", lambda c, d, up: "exec(eval(sys.stdin.readline()))" in c or
     re.search(r"\bpytest\b", c)),
    ("other processes of the command", lambda c, d, up: True),
]


def _slurm_step(cmd: str) -> bool:
    """A SLURM job step's process (``slurmstepd``): its processes are a cluster job's, which on a machine running
    the test cluster are the command's although slurmstepd leaves slurmd's process tree."""
    return cmd.startswith("slurmstepd")


def report(path: str, top: int = 12) -> str:
    data = json.load(open(path))
    procs = data["processes"]
    by_pid = defaultdict(list)
    for p in procs:
        by_pid[p["pid"]].append(p)

    def parent(p):
        cands = [q for q in by_pid.get(p["ppid"], []) if q["first"] <= p["first"] + 1.0]
        return cands[-1] if cands else None

    root = data["root"]
    parts, spans, outside = defaultdict(float), {}, 0.0
    for p in procs:
        chain, q, mine = [], parent(p), p["pid"] == root or _slurm_step(p["cmd"])
        while q is not None and len(chain) < 64:
            chain.append(q["cmd"])
            mine = mine or q["pid"] == root or _slurm_step(q["cmd"])
            q = parent(q)
        used = p["cpu"] - (p["cpu_at_first"] if p["first"] < 1.5 else 0.0)  # CPU before the command started: not its
        if not mine:
            outside += used
            continue
        up = " || ".join(chain)
        part = next(name for name, test in PARTS if test(p["cmd"], p["cwd"], up))
        parts[part] += used
        a, b = spans.get(part, (p["first"], p["last"]))
        spans[part] = (min(a, p["first"]), max(b, p["last"]))
    total = sum(parts.values())
    lines = [f"{' '.join(data['command'])}: {data['seconds']:.0f} s wall, exit status {data['returncode']}",
             f"CPU of its processes: {total:.0f} s ({total / max(data['seconds'], 1):.2f} cores on average); "
             f"of other processes on the machine meanwhile: {outside:.0f} s", "",
             "| part | CPU s | share | first – last seen (s) |", "| --- | ---: | ---: | --- |"]
    for name, v in sorted(parts.items(), key=lambda kv: -kv[1])[:top]:
        a, b = spans[name]
        lines.append(f"| {name} | {v:.0f} | {v / total:.0%} | {a:.0f} – {b:.0f} |")
    minute = defaultdict(float)
    for t, busy in data["busy"]:
        minute[int(t // 60)] += busy
    lines += ["", "busy cores per minute (all processes): " + " ".join(f"{minute[m] / 60:.1f}" for m in sorted(minute))]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    r = sub.add_parser("record", help="run a command, sampling every process's CPU each second")
    r.add_argument("out")
    r.add_argument("command", nargs=argparse.REMAINDER, help="-- the command and its arguments")
    s = sub.add_parser("report", help="CPU seconds per part of a recorded run")
    s.add_argument("path")
    a = ap.parse_args(argv)
    if a.what == "record":
        command = a.command[1:] if a.command[:1] == ["--"] else a.command
        if not command:
            ap.error("record: give the command after --")
        return record(a.out, command)
    print(report(a.path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
