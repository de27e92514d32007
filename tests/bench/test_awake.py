"""The spinners that keep the measured CPUs awake: where they run, that they give way to
any other thread at once, and that none outlives its run."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from govkit.bench.awake import AwakeCpus, spinner_running

BUSY = ("import os, sys, time\n"
        "os.sched_setaffinity(0, {0})\n"
        "t0, c0 = time.monotonic(), time.process_time()\n"
        "while time.monotonic() - t0 < 0.6:\n"
        "    pass\n"
        "print((time.process_time() - c0) / (time.monotonic() - t0))\n")


def _left() -> str:
    return subprocess.run(["pgrep", "-f", "while :; do :; done"], capture_output=True,
                          text=True).stdout.strip()


@pytest.mark.skipif(0 not in os.sched_getaffinity(0), reason="CPU 0 is not ours to use")
def test_a_spinner_sits_on_its_cpu_at_idle_priority_and_gives_way():
    with AwakeCpus((0,)) as awake:
        (pid,) = awake.pids
        assert spinner_running(pid)                      # SCHED_IDLE, checked in /proc
        assert os.sched_getaffinity(pid) == {0}
        time.sleep(0.2)
        # the spinner really spins: it has used CPU time while nothing else wanted CPU 0
        ticks = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[11])
        assert ticks > 0
        # a normal process on the same CPU gets (nearly) all of it, not half
        share = float(subprocess.run([sys.executable, "-c", BUSY], capture_output=True,
                                     text=True, check=True).stdout)
        assert share > 0.9, f"a busy process had {share:.0%} of a CPU beside the spinner"
    assert not spinner_running(pid)
    assert _left() == ""
