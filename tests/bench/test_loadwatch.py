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
