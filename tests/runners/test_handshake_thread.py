"""A real Cyclone pair started under SCHED_FIFO (as latency slots run, where permitted)
keeps every thread real-time except Cyclone's security handshake thread ("fsm"), which
runs under normal scheduling whatever the slot's policy: it does no per-sample work, and
under SCHED_FIFO a spin of it never yields to the equal-priority threads pinned to its
CPU (2026-12-07: one pair's fsm thread spun at 100 % of CPU 0 for 12 minutes, its pair
stalled and the machine's load average reached 300; govkit/runners/native/cyclone_perf.c).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.dds import cyclone_program, needs_cyclone, next_domain, pair_bundle
from helpers.require import missing

from govkit.runners.pair import FIFO, NORMAL, Pair

WAIT_S = 120


def _policies(pid: int) -> dict[str, set[int]]:
    """Each thread name of process `pid` → the scheduling policies its threads run under."""
    out: dict[str, set[int]] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        name = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
        out.setdefault(name, set()).add(os.sched_getscheduler(int(tid)))
    return out


@needs_cyclone
@pytest.mark.cyclone
def test_the_handshake_thread_never_runs_real_time(tmp_path):
    if os.geteuid() != 0:
        pytest.skip(missing("root", "SCHED_FIFO needs root or CAP_SYS_NICE"))
    from govkit.runners.cyclone import CycloneRunner
    cyclone_program()
    r = CycloneRunner()
    r.check_installed()
    bundle, work = pair_bundle(r, tmp_path, "rtps_sign")
    domain = next_domain()
    pair = Pair("rtps_sign", "rtps_sign", 0, domain,
                r.pair_specs(bundle, domain, None, True, work, wait_s=WAIT_S),
                r.explain_refusal, realtime=True)
    try:
        pair.start(timeout=WAIT_S + 30)
        for policy in (FIFO, NORMAL, FIFO):    # as a rotation switches slot kinds
            pair.use_policy(policy)
            for proc in pair.procs.values():
                threads = _policies(proc.pid)
                assert threads.get("fsm") == {os.SCHED_OTHER}, threads
                others = set().union(*(v for k, v in threads.items() if k != "fsm"))
                assert others == ({os.SCHED_FIFO} if policy == FIFO
                                  else {os.SCHED_OTHER}), threads
        # and it still measures (a slot may end before its first measured ping: retried)
        assert any(pair.slot(32, 10_000, 100_000)["n"] > 0 for _ in range(50))
    finally:
        pair.close()
