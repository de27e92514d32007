"""How quiet the machine was: other work is counted, govkit's own processes are not."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
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
    # (that the same work as govkit's own child is not: the next test, which can fail)


# A child that spends ~0.4 s of CPU, says how much (its own account, not govkit's), then
# waits for its stdin to close: CPU time, which other load on the machine does not inflate.
CHILD = ("import sys, time\nt = time.process_time()\nwhile time.process_time() - t < 0.4: "
         "pass\nprint(time.process_time(), flush=True)\nsys.stdin.read()")


def test_govkits_own_children_live_or_reaped_are_subtracted_from_other_load(monkeypatch):
    """What LoadWatch subtracts from the machine's busy time as govkit's own holds the CPU
    its children say they used, one still running at the window's end (a runner, read from
    /proc) and one reaped inside it (os.times): so other_cpu_share is the machine's busy
    time less at least theirs, however busy the machine is. (It was only `mine < load`, a
    comparison with another window that a busy machine can decide either way.)"""
    from govkit.bench import loadwatch
    own, machine = [], []
    real_own, real_cpu = loadwatch.own_cpu_seconds, loadwatch.cpu_times
    monkeypatch.setattr(loadwatch, "own_cpu_seconds", lambda: own.append(real_own()) or own[-1])
    monkeypatch.setattr(loadwatch, "cpu_times", lambda: machine.append(real_cpu()) or machine[-1])
    watch = LoadWatch()
    watch.start()
    kids = [subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True) for _ in range(2)]
    said = [float(k.stdout.readline()) for k in kids]
    live, reaped = kids
    reaped.stdin.close()
    reaped.wait()
    try:
        load = watch.finish()
    finally:
        live.stdin.close()
        live.wait()
    mine = own[-1] - own[0]
    assert mine >= 0.9 * sum(said), (mine, said)
    hz = os.sysconf("SC_CLK_TCK")
    busy = (machine[-1]["busy"] - machine[0]["busy"]) / hz
    assert load["other_cpu_share"] * load["seconds"] <= \
        max(0.0, busy - 0.9 * sum(said)) + 0.1, (load, busy, said)


def test_a_childs_reaped_children_count_as_govkits_before_the_window_too():
    """govkit's own CPU is read at the window's start and end; a child's children it reaped
    earlier reach os.times only when govkit reaps the child. Counted from the start (the
    child's cutime), they do not land inside the window: a child that ran a busy
    grandchild before the window once made a loop using a whole CPU read as 34 %."""
    from govkit.bench.loadwatch import own_cpu_seconds

    # the grandchild: a fixed amount of CPU work, reaped by the child, which then says so
    # and waits for its stdin to close (events, not time)
    kid = subprocess.Popen(["sh", "-c", "sh -c 'i=0; while [ $i -lt 300000 ]; do "
                            "i=$((i+1)); done'; echo done; read _"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert kid.stdout.readline() == "done\n"
    rest = open(f"/proc/{kid.pid}/stat").read().rsplit(")", 1)[1].split()
    reaped = (int(rest[13]) + int(rest[14])) / os.sysconf("SC_CLK_TCK")
    assert reaped >= 0.1, "the premise: the grandchild used CPU the child reaped"
    before = own_cpu_seconds()
    kid.stdin.close()
    kid.wait()
    moved = own_cpu_seconds() - before
    # reaping the child moves govkit's own CPU by what the child did since, not by its
    # grandchild's (this process's own few milliseconds of reading /proc aside)
    assert moved < reaped / 2, (moved, reaped)


def test_the_load_line_says_when_its_load_average_was_read(monkeypatch):
    """The load average is read when LoadWatch is made, as govkit starts (schedule.py, before
    it signs or starts anything); the line said "govkit's own setup included" (issue 46)."""
    from govkit.bench import loadwatch
    from govkit.results.summary import load_line

    reads = iter([[1.25, 1.0, 1.0], [9.0, 9.0, 9.0], [9.0, 9.0, 9.0]])
    monkeypatch.setattr(loadwatch, "loadavg", lambda: next(reads))
    watch = LoadWatch()                       # what schedule.py does first
    watch.start()
    load = watch.finish()
    assert load["loadavg_before"] == [1.25, 1.0, 1.0]
    line = load_line({"load": [load]})
    assert "load average 1.25 as govkit started (the minute before its own setup)" in line
    assert "setup included" not in line
