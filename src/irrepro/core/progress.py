"""Progress of long jobs: a log line with done/total, rate and ETA, at most every ``interval`` seconds.

    from irrepro.core.progress import Progress
    with Progress(total=len(ns) * reps, what="Fig 2 repetitions", unit="reps") as p:
        for ...:
            ...
            p.advance(1)

Lines go to the logger ``irrepro.progress`` (a job's log file, through :func:`irrepro.core.logs.log_to`), e.g.
``Fig 2 repetitions: 1500/5000 (30%), 12.5 reps/s, elapsed 2m00s, ETA 4m40s``. The clock is injectable so tests
need not sleep; nothing here changes a result.
"""
from __future__ import annotations

import logging
import time
from typing import Callable

log = logging.getLogger("irrepro.progress")


def _hms(seconds: float) -> str:
    s = int(round(max(seconds, 0.0)))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s"


class Progress:
    """Counts work done out of ``total`` and logs done/total, rate and ETA every ``interval`` seconds and at the
    end. ``clock`` (default :func:`time.monotonic`) and ``emit`` (default ``log.info``) are injectable."""

    def __init__(self, total: int, what: str, *, unit: str = "items", interval: float = 30.0,
                 clock: Callable[[], float] = time.monotonic, emit: Callable[[str], None] | None = None):
        if total < 0:
            raise ValueError(f"Progress({what!r}): total must be >= 0, got {total}")
        self.total, self.what, self.unit, self.interval = int(total), what, unit, float(interval)
        self.clock = clock
        self.emit = emit or log.info
        self.done = 0
        self.start = clock()
        self._last = self.start
        self._last_done = -1
        self.lines: list[str] = []

    def line(self) -> str:
        elapsed = self.clock() - self.start
        rate = self.done / elapsed if elapsed > 0 else float("nan")
        pct = 100.0 * self.done / self.total if self.total else 100.0
        text = f"{self.what}: {self.done}/{self.total} ({pct:.0f}%)"
        if rate == rate and rate > 0:
            text += f", {rate:.3g} {self.unit}/s, elapsed {_hms(elapsed)}"
            if self.done < self.total:
                text += f", ETA {_hms((self.total - self.done) / rate)}"
        return text

    def _say(self):
        text = self.line()
        self.lines.append(text)
        self.emit(text)
        self._last = self.clock()
        self._last_done = self.done

    def advance(self, k: int = 1) -> None:
        """Count ``k`` more done; log a line when ``interval`` seconds passed since the last one."""
        self.done += int(k)
        if self.clock() - self._last >= self.interval:
            self._say()

    def close(self) -> None:
        """Log the final line (done/total, rate, elapsed), unless the last line already said it."""
        if self.done != self._last_done:
            self._say()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        return False
