"""A pytest plugin that logs when each test starts and ends, one file per pytest-xdist worker, to see which tests ran
side by side and where a worker waited (docs/benchmark.md, "where CI's time goes"). Not loaded unless asked for:

    PYTHONPATH=tests IRREPRO_TIMELINE=/tmp/tl PYTEST_ARGS="-p timeline" make test

writes ``/tmp/tl/<worker>.txt`` (``gw0.txt``, ``gw1.txt``; ``main.txt`` for the controller), lines of ``<unix time>
start|end <test id>``."""
import os
import time
from pathlib import Path

_out = None


def _file():
    global _out
    if _out is None:
        folder = Path(os.environ.get("IRREPRO_TIMELINE", "timeline"))
        folder.mkdir(parents=True, exist_ok=True)
        _out = open(folder / f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.txt", "a", buffering=1)
    return _out


def pytest_runtest_logstart(nodeid, location):
    _file().write(f"{time.time():.2f} start {nodeid}\n")


def pytest_runtest_logfinish(nodeid, location):
    _file().write(f"{time.time():.2f} end {nodeid}\n")
