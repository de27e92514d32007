"""How quiet the machine was: other work is counted, govkit's own processes are not."""

from __future__ import annotations

import os
import signal
import subprocess
import time

from govkit.bench.awake import AwakeCpus
from govkit.bench.loadwatch import LoadWatch


def test_a_busy_loop_from_govkits_own_terminal_is_other_load_and_spinners_are_not():
    watch = LoadWatch()
    with AwakeCpus((min(os.sched_getaffinity(0)),)) as awake:    # govkit's own children
        spinners = set(awake.pids)
        watch.start()
        # a loop the user left running in the shell that started govkit: same session,
        # not govkit's child (orphaned at once, as a `&` job of that shell would outlive it)
        pid = int(subprocess.run(["sh", "-c", "(while :; do :; done) >/dev/null 2>&1 & "
                                  "echo $!"], capture_output=True, text=True,
                                 check=True).stdout)
        try:
            assert os.getsid(pid) == os.getsid(0)
            time.sleep(1.5)
            load = watch.finish()
        finally:
            os.kill(pid, signal.SIGKILL)
    busy = {b["pid"]: b for b in load["busy_processes"]}
    assert pid in busy and busy[pid]["cpu_share"] > 0.3, load
    assert load["under_load"] is True
    # (by pid: another run's spinners, or anyone's busy `sh`, are other load indeed)
    assert not spinners & set(busy), "govkit's own spinner was counted as other load"


def _running(pid: int) -> bool:
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_short_lived_processes_are_other_load_too():
    """A load of processes each gone within a few milliseconds (a test suite's, a build's)
    escapes a sampler of processes but not the machine's own account (/proc/stat): issue 37
    saw "machine quiet" at load average 4-5. govkit's own children are not counted."""
    script = ("end=$(($(date +%s) + 3)); while [ $(date +%s) -lt $end ]; do "
              "sh -c 'i=0; while [ $i -lt 300 ]; do i=$((i+1)); done'; done")
    watch = LoadWatch()
    watch.start()
    # not govkit's: orphaned at once (the work of another program on the machine)
    pid = int(subprocess.run(["sh", "-c", f"({script}) >/dev/null 2>&1 & echo $!"],
                             capture_output=True, text=True, check=True).stdout)
    while _running(pid):                        # its own end, the event waited on
        time.sleep(0.05)
    load = watch.finish()
    assert load["other_cpu_share"] > 0.2, load
    assert load["under_load"] is True
    # the same work as govkit's own child (a runner) is not other load
    watch = LoadWatch()
    watch.start()
    subprocess.run(["sh", "-c", script], check=True)
    mine = watch.finish()
    assert mine["other_cpu_share"] < load["other_cpu_share"], (mine, load)
