"""A long-lived pair of govkit's own programs: the line protocol it answers in (parsed
whole, a wrong or missing answer an error) and how its refusals are read. The pairs at work
are in tests/bench/test_rotation.py and tests/integration."""

from __future__ import annotations

import pytest

from govkit.results import stats
from govkit.results.record import Slot
from govkit.runners.pair import Pair, PairFailed, parse_count, parse_slot, parse_tslot


def test_slot_line_is_parsed_whole():
    row = parse_slot("slot 32 n 100 settle_n 5 mean 12.5 min 10.0 p50 12.0 p90 14.0 p99 20.0 "
                     "max 30.0 cpu_us 900 wall_us 110000 peers 1 tl 12.1,12.0 hist 930:60,940:40")
    assert row["p50"] == 12.0 and row["n"] == row["count"] == 100 and row["peers"] == 1
    slot = Slot.from_json({"round": 0, "position": 0, "arm": "none", "profile": "none",
                           "instance": 0, **row, "status": "ok"})
    pooled = stats.pooled_percentiles([slot])
    assert pooled["samples"] == 100
    assert pooled["p50"] == pytest.approx(1.01 ** 930.5 / 1e3)
    assert pooled["p90"] == pytest.approx(1.01 ** 940.5 / 1e3)


def test_throughput_lines_are_parsed_and_a_missing_end_is_an_error():
    row = parse_tslot("tslot 1024 sent 5000 settle_sent 300 cpu_us 90000 wall_us 112000 "
                      "peers 1")
    assert row == {"size": 1024, "mode": "throughput", "sent": 5000, "settle_sent": 300,
                   "cpu_us": 90000, "wall_us": 112000, "peers": 1}
    counted = parse_count("count 7 n 5000 later_n 4990 span_us 99800 lost 0", 7)
    assert counted["rate_sps"] == pytest.approx(4990 / 0.0998)
    assert counted["n"] == counted["count"] == 5000
    with pytest.raises(PairFailed, match="end of throughput slot 7"):
        parse_count("count 7 missing", 7)
    with pytest.raises(PairFailed, match="unexpected answer"):
        parse_count("count 8 n 1 later_n 0 span_us 0 lost 0", 7)    # another slot's count


def test_a_refusal_is_read_line_by_line(tmp_path):
    """Cyclone may print a remote participant's refusal before its own local one; read as
    one joined line, the remote's word "Remote" made the local refusal look like the
    peer's (the runner then blamed the wrong side's files)."""
    import tempfile

    pair = Pair("rtps_sign", "rtps_sign", 0, 7, [])
    err = tempfile.TemporaryFile()
    err.write(b"one\nRemote secure participant x not allowed\n"
              b"Error occurred while validating local permissions: Subject name is invalid\n")
    pair.errs["pub"] = err
    assert pair.stderr_lines("pub", 2).splitlines() == [
        "Remote secure participant x not allowed",
        "Error occurred while validating local permissions: Subject name is invalid"]
    assert pair.stderr_tail("pub", 2) == " | ".join(pair.stderr_lines("pub", 2).splitlines())
    assert pair.stderr_lines("sub", 5) == ""


def test_a_runner_process_shares_govkits_session_and_has_its_own_group():
    """spawn: a process group of its own (one killpg stops it) in govkit's session, so in
    govkit's CFS autogroup, where a SCHED_IDLE spinner of govkit's really yields to it
    (govkit.runners.processes)."""
    import os
    import subprocess

    from govkit.runners.base import ProcessSpec
    from govkit.runners.processes import end_processes, process_placement, spawn

    proc = spawn(ProcessSpec("sub", ["sleep", "30"]), stdin=subprocess.PIPE)
    try:
        assert os.getsid(proc.pid) == os.getsid(0)
        assert os.getpgid(proc.pid) == proc.pid != os.getpgid(0)
        # the file is empty where a cpu cgroup, not an autogroup, holds the task (as under
        # some CI runners): then both read none, and the claim holds by the cgroup instead
        assert process_placement(proc.pid).get("autogroup") == \
            process_placement(os.getpid()).get("autogroup")
    finally:
        proc.kill()
        end_processes([proc], grace_s=1)
