"""The idle-pair watchdog (govkit.bench.watchdog, issue 41 follow-up) on real Cyclone DDS
pairs: a pair whose process tree burns CPU while it runs no slot is found, the burning
process named, and stopping the pair ends it; an ordinary idle pair is not flagged.

The burner is a real process, a child of the pair's pong (pong's command is started by a
shell that first starts the spinning child, then execs pong, so the spinner's parent is
pong itself), found only through the process tree as the watchdog reads it. Nothing is
timed: the burner is flagged once its CPU share over the readings' window passes the limit,
waited for as an event; the limit the flagged test uses is low because a busy 2-CPU
machine gives one spinner well under half a CPU, while the rotation's own limit
(IDLE_CPU_LIMIT) is for a spin the scheduler lets run (the 77-minute one ran SCHED_FIFO).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path

from helpers.dds import cyclone_runner, needs_cyclone, next_domain, pair_bundle

from govkit.bench.watchdog import IDLE_CPU_LIMIT, idle_burners, read_pairs, stop
from govkit.runners.cputime import ProcessCpu, read_stat, spent
from govkit.runners.pair import Pair

WAIT_S = 120
SPINNERS = 3


def _pair(tmp_path: Path, burner: bool) -> Pair:
    r = cyclone_runner()
    bundle, work = pair_bundle(r, tmp_path, "none")
    domain = next_domain()
    specs = r.pair_specs(bundle, domain, None, False, work, wait_s=WAIT_S)
    if burner:          # pong's spec: a shell starts the spinner, then becomes pong
        pong = max(range(len(specs)), key=lambda i: specs[i].argv[-1] == "pong")
        # SPINNERS of them: on a machine others load, one spinner's share can be tiny
        spin = f'"{sys.executable}" -c "while True: pass" & ' * SPINNERS
        argv = ["sh", "-c", f'{spin}exec "$@"', "sh", *specs[pong].argv]
        specs = [replace(s, argv=argv) if i == pong else s for i, s in enumerate(specs)]
    return Pair("none", "none", 0, domain, specs, r.explain_refusal)


def _answers(pair: Pair) -> bool:
    """Whether the pair measures round trips: slots until one holds some (a first slot on
    a busy machine may hold none)."""
    return any(pair.slot(32, 10_000, 100_000)["n"] > 0 for _ in range(50))


def _flagged(pair: Pair, limit: float, deadline_s: float) -> dict:
    """The watchdog's verdict on `pair`, idle, read again until it flags the pair or
    `deadline_s` passes (each reading over the whole window since the first)."""
    key = (pair.name, pair.instance)
    before, t0 = read_pairs({key: pair}), time.monotonic()
    found: dict = {}
    while not found and time.monotonic() - t0 < deadline_s:
        time.sleep(0.5)
        found = idle_burners(before, read_pairs({key: pair}), {key}, time.monotonic() - t0,
                             limit)
    return found


def _zombie(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rpartition(")")[2].split()[0] \
            in "ZX"
    except OSError:
        return True


@needs_cyclone
def test_a_pair_burning_cpu_while_idle_is_flagged_named_and_stopped(tmp_path):
    pair = _pair(tmp_path, burner=True)
    try:
        pair.start(timeout=WAIT_S + 30)
        assert _answers(pair)      # a working pair
        pong = next(p.pid for p in pair.procs.values() if "pong" in p.args)
        spinner = [pid for pid, cpu in read_pairs({0: pair})[0].items()
                   if read_stat(pid)[1] == pong]
        assert len(spinner) == SPINNERS, "the spinners are pong's children"
        found = _flagged(pair, 0.1, 120)
        message = found[(pair.name, pair.instance)]
        assert any(f"(pid {pid})" in message for pid in spinner) and "while idle" in message, \
            message
        assert message.split(": ", 1)[1].startswith("python"), message   # named first
        stop(pair)          # as the rotation stops it
        # killed, not left to init spinning (pair.close alone did that): dead (a zombie
        # until someone reaps it) or gone; the bound only keeps a failure from hanging
        t0 = time.monotonic()
        while not all(map(_zombie, spinner)) and time.monotonic() - t0 < 60:
            time.sleep(0.1)
        assert all(map(_zombie, spinner)), "stopping the pair kills its spinning children"
    finally:
        pair.close()
        for pid in spinner:          # never leave a spinner behind, whatever failed
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@needs_cyclone
def test_an_ordinary_idle_pair_is_not_flagged(tmp_path):
    pair = _pair(tmp_path, burner=False)
    try:
        pair.start(timeout=WAIT_S + 30)
        assert _answers(pair)
        # 3 s idle: its participants' timers only, far below the limit
        assert _flagged(pair, IDLE_CPU_LIMIT, 3) == {}
        assert _answers(pair)      # and it still works
    finally:
        pair.close()


def test_spent_counts_each_process_since_the_first_reading():
    before = {1: ProcessCpu(1, "pong", 2.0), 2: ProcessCpu(2, "reader", 1.0)}
    after = {1: ProcessCpu(1, "pong", 2.1), 2: ProcessCpu(2, "reader", 4.0),
             3: ProcessCpu(3, "new", 0.5)}
    assert [(p.pid, round(p.cpu_s, 3)) for p in spent(before, after)] == \
        [(2, 3.0), (3, 0.5), (1, 0.1)]
    key = ("a", 0)
    assert idle_burners({key: before}, {key: after}, {key}, 2.0) != {}   # 3.6 s in 2 s
    assert idle_burners({key: before}, {key: after}, {key}, 10.0) == {}  # 36 %
    assert idle_burners({key: before}, {key: after}, set(), 2.0) == {}   # not idle
