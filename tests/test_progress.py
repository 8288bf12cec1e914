"""Progress lines of long jobs: done/total, rate and an ETA that is right for steady work."""
import pytest

from irrepro.core.progress import Progress


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_eta_of_steady_work_and_the_interval():
    clock, out = Clock(), []
    p = Progress(100, "Fig 2 repetitions", unit="reps", interval=10, clock=clock, emit=out.append)
    for _ in range(25):  # 25 reps at 2 reps/s
        clock.t += 0.5
        p.advance()
    assert out == ["Fig 2 repetitions: 20/100 (20%), 2 reps/s, elapsed 0m10s, ETA 0m40s"]
    for _ in range(75):
        clock.t += 0.5
        p.advance()
    p.close()
    assert len(out) == 5  # at 10, 20, 30, 40 and 50 s; closing adds nothing new
    assert out[-1] == "Fig 2 repetitions: 100/100 (100%), 2 reps/s, elapsed 0m50s"


def test_a_wrong_rate_would_show():
    clock, out = Clock(), []
    p = Progress(10, "x", interval=0, clock=clock, emit=out.append)
    clock.t = 3600.0
    p.advance(1)
    assert out[-1].endswith("ETA 9h00m00s")


def test_negative_total_is_an_error():
    with pytest.raises(ValueError, match="total must be >= 0"):
        Progress(-1, "x")
