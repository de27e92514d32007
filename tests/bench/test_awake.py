"""The spinners that keep the measured CPUs awake: where they run, that they give way to
any other thread at once, and that none outlives its run."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from govkit.bench.awake import AwakeCpus

BUSY = ("import os, sys, time\n"
        "os.sched_setaffinity(0, {0})\n"
        "t0, c0 = time.monotonic(), time.process_time()\n"
        "while time.process_time() - c0 < 0.6:\n"
        "    pass\n")


def _ticks(pid: int) -> int:
    """utime + stime of a process, in clock ticks (1/100 s)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def spinner_running(pid: int) -> bool:
    """Whether `pid` is alive and SCHED_IDLE (what the run claims is checked, not assumed)."""
    try:
        return os.sched_getscheduler(pid) == os.SCHED_IDLE
    except OSError:
        return False


def _left(pids: list[int]) -> list[int]:
    """Which of these spinners still run (a check by command line would also find another
    run's spinners, or a user's own `while :; do :; done`)."""
    return [p for p in pids if os.path.exists(f"/proc/{p}") and
            open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"]


@pytest.mark.skipif(0 not in os.sched_getaffinity(0), reason="CPU 0 is not ours to use")
def test_a_spinner_sits_on_its_cpu_at_idle_priority_and_gives_way():
    with AwakeCpus((0,)) as awake:
        (pid,) = awake.pids
        assert spinner_running(pid)                      # SCHED_IDLE, checked in /proc
        assert os.sched_getaffinity(pid) == {0}
        # the spinner really spins: it uses CPU time whenever nothing else wants CPU 0
        deadline = time.monotonic() + 5
        while _ticks(pid) == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _ticks(pid) > 0
        # beside a normal process on the same CPU it gets (next to) nothing: any other
        # load on the machine may take CPU 0 too, but never the spinner
        before = _ticks(pid)
        # (on CPU 0 from its exec: while it started elsewhere the spinner ran alone)
        subprocess.run(["taskset", "-c", "0", sys.executable, "-c", BUSY],
                       capture_output=True, check=True)
        # (0.6 s of CPU for the busy one; a spinner of normal priority would take ~0.3 s)
        assert _ticks(pid) - before <= 5, "the spinner took CPU from a normal process"
    assert not spinner_running(pid)
    assert _left([pid]) == []
