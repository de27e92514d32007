"""govkit.runners.processes: the one way children end (`ended`), the one line reader
(`LineReader`), and the per-second lines of both programs read by one parser
(govkit.runners.per_second). Real processes (sh), no mocks."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from govkit.catalog.profiles import get_profile
from govkit.runners.base import BenchPoint, RunnerError
from govkit.runners.ddsperf import LINES as DDSPERF
from govkit.runners.fastdds import LINES as FASTDDS
from govkit.runners.per_second import check_seconds
from govkit.runners.processes import LineReader, ProcessSpec, ended, spawn


def _group_gone(pgid: int, within_s: float = 30) -> bool:
    """Whether every process of the group has ended (gone, or a zombie its new parent has
    yet to reap), waited for: SIGKILL takes effect when the process is next scheduled."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        alive = []
        for d in Path("/proc").iterdir():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                alive.append(d.name)
        if not alive:
            return True
        time.sleep(0.05)
    return False


def test_a_block_left_by_an_error_ends_and_reaps_every_child():
    """One process ends on SIGINT, one ignores it (and its input closing) and is killed
    with its whole group; both are reaped, their pipes closed, the error goes on."""
    procs: list[subprocess.Popen] = []
    with pytest.raises(RuntimeError, match="inside"):
        with ended(procs, grace_s=0.5, interrupt=True):
            procs.append(spawn(ProcessSpec("sub", ["sleep", "60"]), stdin=subprocess.PIPE))
            procs.append(spawn(ProcessSpec("pub", ["sh", "-c", "trap '' INT; echo up; "
                                                   "sleep 60; sleep 60"]),
                               stdin=subprocess.PIPE))
            # the trap is set once the shell has printed: SIGINT cannot end it
            assert LineReader({"pub": procs[1]}).line(
                "pub", time.monotonic() + 60, lambda: AssertionError("no line"),
                lambda status: AssertionError(f"exited {status}")) == "up"
            raise RuntimeError("inside")
    interrupted, killed = procs
    assert interrupted.returncode == -2 and killed.returncode == -9
    assert _group_gone(interrupted.pid) and _group_gone(killed.pid)   # sleep's child too
    assert all(p.stdout.closed and p.stderr.closed and p.stdin.closed for p in procs)


def test_a_process_that_ends_on_its_input_closing_is_not_signalled():
    """Without `interrupt`, a program that exits when its input closes (govkit's own, at
    the end of a pair) ends by itself: exit status 0, no signal."""
    procs: list[subprocess.Popen] = []
    with ended(procs, grace_s=30):
        procs.append(spawn(ProcessSpec("sub", ["sh", "-c", "cat >/dev/null; exit 0"]),
                           stdin=subprocess.PIPE))
    assert procs[0].returncode == 0


def test_the_line_reader_reads_several_processes_and_says_when_one_closes():
    procs = {i: spawn(ProcessSpec(f"p{i}", ["sh", "-c", f"echo first {i}; echo second {i}"]))
             for i in range(3)}
    with ended(list(procs.values()), grace_s=30):
        reader = LineReader(procs)
        seen: dict[int, list] = {i: [] for i in procs}
        for key, line in reader.lines(time.monotonic() + 60):
            seen[key].append(line)
            if all(lines and lines[-1] is None for lines in seen.values()):
                break
    assert seen == {i: [f"first {i}", f"second {i}", None] for i in procs}


def test_a_missing_line_is_the_callers_timeout_and_an_early_end_its_exit():
    quiet = spawn(ProcessSpec("sub", ["sh", "-c", "read x"]), stdin=subprocess.PIPE)
    gone = spawn(ProcessSpec("pub", ["sh", "-c", "exit 3"]))
    with ended([quiet, gone], grace_s=30):
        reader = LineReader({"sub": quiet, "pub": gone})
        with pytest.raises(TimeoutError):
            reader.line("sub", time.monotonic() + 0.2, TimeoutError,
                        lambda status: AssertionError(status))
        with pytest.raises(ChildProcessError, match="3"):
            reader.line("pub", time.monotonic() + 60, lambda: AssertionError("timeout"),
                        lambda status: ChildProcessError(str(status)))


# The same two seconds as each program prints them (ddsperf.c's and fastdds_perf.cpp's own
# formats): one parser reads both into the same rows.
DDSPERF_LATENCY = (
    "[10599] 2.000  host:4242 size 32 mean 25.5us min 20.1us 50% 24.9us 90% 30.2us "
    "99% 41.0us max 88.3us cnt 19000\n"
    "[10599] 3.000  host:4242 size 32 mean 26.5us min 21.1us 50% 25.9us 90% 31.2us "
    "99% 42.0us max 89.3us cnt 18000\n")
FASTDDS_LATENCY = (
    "[77] latency t 2.000 size 32 count 19000 mean 25.5 min 20.1 p50 24.9 p90 30.2 "
    "p99 41.0 max 88.3 us\n"
    "[77] latency t 3.000 size 32 count 18000 mean 26.5 min 21.1 p50 25.9 p90 31.2 "
    "p99 42.0 max 89.3 us\n")
DDSPERF_THROUGHPUT = (
    "[5] 1.000  size 1024 total 0 lost 0 delta 0 lost 0 rate 0.00 kS/s 0.00 Mb/s\n"
    "[5] 2.000  size 1024 total 650 lost 0 delta 650 lost 1 rate 650.50 kS/s 5328.90 Mb/s\n"
    "[5] 3.000  size 1024 total 650 lost 0 delta 0 lost 0 rate 0.00 kS/s 0.00 Mb/s\n")
FASTDDS_THROUGHPUT = (
    "[6] throughput t 1.000 size 1024 count 0 lost 0 rate 0 samples/s mbps 0\n"
    "[6] throughput t 2.000 size 1024 count 650 lost 1 rate 650500 samples/s mbps 5328.90\n"
    "[6] throughput t 3.000 size 1024 count 0 lost 0 rate 0 samples/s mbps 0\n")


def test_both_programs_per_second_lines_give_the_same_rows():
    assert DDSPERF.latency_rows(DDSPERF_LATENCY) == FASTDDS.latency_rows(FASTDDS_LATENCY)
    assert DDSPERF.latency_rows(DDSPERF_LATENCY)[0] == {
        "t": 2.0, "count": 19000, "mean": 25.5, "min": 20.1, "p50": 24.9, "p90": 30.2,
        "p99": 41.0, "max": 88.3}
    # from the first second with samples; a later second without is a stall, kept
    rows = DDSPERF.throughput_rows(DDSPERF_THROUGHPUT)
    assert rows == FASTDDS.throughput_rows(FASTDDS_THROUGHPUT)
    assert [(r["t"], r["count"], r["rate_sps"]) for r in rows] == [(2.0, 650, 650500.0),
                                                                  (3.0, 0, 0.0)]
    for lines, latency, throughput in ((DDSPERF, DDSPERF_LATENCY, DDSPERF_THROUGHPUT),
                                       (FASTDDS, FASTDDS_LATENCY, FASTDDS_THROUGHPUT)):
        assert lines.enough("latency", 2)(latency) and not lines.enough("latency", 3)(latency)
        assert lines.enough("throughput", 2)(throughput)
        assert not lines.enough("throughput", 3)(throughput)
        with pytest.raises(RunnerError, match="ping printed no latency lines"):
            lines.latency_result(throughput)
        with pytest.raises(RunnerError, match="sub received no samples"):
            lines.throughput_result(latency)


def test_too_few_seconds_fail_the_point_the_same_way_for_both():
    point = BenchPoint(get_profile("none"), "latency", 32, duration=2, warmup=1)
    for result in (DDSPERF.latency_result(DDSPERF_LATENCY),
                   FASTDDS.latency_result(FASTDDS_LATENCY)):
        with pytest.raises(RunnerError, match=r"only 2 of 3 seconds \(1 warm-up \+ 2 "):
            check_seconds(point, result)
        assert check_seconds(BenchPoint(get_profile("none"), "latency", 32, duration=1,
                                        warmup=1), result) is result
