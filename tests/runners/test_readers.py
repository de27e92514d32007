"""One writer, N readers (issue 41): govkit's two programs started with 4 readers through
the runners' own pair_specs and the rotation's Pair, with real Cyclone DDS and Fast DDS
processes. Each reader must receive every ping and every throughput sample, and the
latency figures must be per reader (one list entry per reader, each from that reader's
own round trips); 1 reader must print the lines it always printed (no per-reader field).

Not timed: a slot is as long as it is, and every check is on counts and on the shape of
what the programs printed, never on how fast the machine was."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.dds import cyclone_runner, needs_cyclone, next_domain, pair_bundle
from helpers.require import missing

from govkit.common.errors import GovkitError
from govkit.runners.pair import Pair, PairFailed, parse_count, parse_slot
from govkit.runners.readers import check_readers

READERS = 4
SLOT_US = 100_000
# every participant authenticates every other: 5 participants, 10 handshakes, on a busy
# machine (a Fast DDS reader once missed the 30 s default with the load at 10)
WAIT_S = 120


def _fastdds():
    from helpers.fastdds import runner
    return runner()


def _pair(r, tmp_path: Path, profile: str, readers: int) -> Pair:
    bundle, work = pair_bundle(r, tmp_path, profile)
    domain = next_domain()
    kwargs = {"readers": readers} if readers != 1 else {}
    specs = r.pair_specs(bundle, domain, None, False, work, wait_s=WAIT_S, **kwargs)
    return Pair(profile, profile, 0, domain, specs, r.explain_refusal)


def _check_readers_pair(r, tmp_path: Path, profile: str) -> None:
    pair = _pair(r, tmp_path, profile, READERS)
    assert all(str(READERS) in s.argv for s in pair.specs)
    try:
        pair.start(timeout=WAIT_S + 30)
        row = {"n": 0}
        for _ in range(100):          # until every reader answered some measured pings
            row = pair.slot(1024, 10_000, SLOT_US)
            if row["n"] >= 20:
                break
        assert row["readers"] == READERS and row["peers"] == READERS, row
        per = row["per_reader"]
        assert len(per) == READERS
        # every reader answered every ping: a ping is a sample once all its pongs are back
        assert all(p["n"] == row["n"] for p in per), per
        for p in per:
            assert 0 < p["min"] <= p["p50"] <= p["p90"] <= p["p99"] <= p["max"], p
        # the round's figure is the slowest reader's: never below any reader's
        assert row["max"] == pytest.approx(max(p["max"] for p in per), abs=1e-3)
        assert row["min"] >= max(p["min"] for p in per) - 1e-3
        assert min(p["p50"] for p in per) <= row["reader_p50_median"] \
            <= row["reader_p50_slowest"] == max(p["p50"] for p in per)
        # the pong side's CPU answer covers every reader process (they spend it)
        assert row["pong_cpu_us"] > 0
        t = pair.tslot(1024, 10_000, SLOT_US, rate=20_000)
        assert t["readers"] == READERS and len(t["per_reader"]) == READERS, t
        for p in t["per_reader"]:      # every reader got every sample written after settle
            assert p["n"] == t["sent"] and p["lost"] == 0, (p, t["sent"])
        assert t["rate_sps"] == min(p["rate_sps"] for p in t["per_reader"])
    finally:
        pair.close()
    assert all(p.returncode == 0 for p in pair.procs.values()), \
        {k: p.returncode for k, p in pair.procs.items()}


def _check_one_reader_unchanged(r, tmp_path: Path) -> None:
    pair = _pair(r, tmp_path, "none", 1)
    for s in pair.specs:         # the command lines of before: no readers argument at all
        if r.name == "cyclone":   # cyclone_perf ping|pong DOMAIN WAIT_S
            assert s.argv[1] in ("ping", "pong") and len(s.argv) == 4, s.argv
        else:                     # fastdds_perf -S -i DOMAIN -w WAIT_S ping|pong
            assert "-n" not in s.argv and s.argv[-1] in ("ping", "pong"), s.argv
    try:
        pair.start(timeout=WAIT_S + 30)
        raw = []
        original = pair.reader.line      # every line either side prints, kept

        def keep(*args, **kwargs):
            line = original(*args, **kwargs)
            raw.append(line)
            return line
        pair.reader.line = keep
        pair.slot(32, 0, 20_000)
        pair.tslot(32, 0, 20_000, rate=5_000)
    finally:
        pair.close()
    assert raw and not any("reader" in line for line in raw), raw


def _check_fewer_readers_than_awaited(r, tmp_path: Path) -> None:
    """ping awaits 4 readers, pong brings 2: ping gives up after its wait and says how
    many readers matched, rather than measuring 2 as if they were 4."""
    bundle, work = pair_bundle(r, tmp_path, "none")
    domain = next_domain()
    pong = r.pair_specs(bundle, domain, None, False, work, wait_s=5, readers=2)[0]
    ping = r.pair_specs(bundle, domain, None, False, work, wait_s=5, readers=4)[1]
    pair = Pair("none", "none", 0, domain, [pong, ping])
    try:
        with pytest.raises(PairFailed, match="ping exited with status 4: .*2 of 4 readers"):
            pair.start(timeout=60)
    finally:
        pair.close()


@needs_cyclone
@pytest.mark.cyclone
def test_cyclone_ping_says_how_many_readers_matched(tmp_path):
    _check_fewer_readers_than_awaited(cyclone_runner(), tmp_path)


@pytest.mark.fastdds
def test_fastdds_ping_says_how_many_readers_matched(tmp_path):
    _check_fewer_readers_than_awaited(_fastdds(), tmp_path)


@needs_cyclone
@pytest.mark.cyclone
@pytest.mark.parametrize("profile", ["none", "sign_origin_data_encrypt"])
def test_cyclone_program_with_four_readers(tmp_path, profile):
    _check_readers_pair(cyclone_runner(), tmp_path, profile)


@needs_cyclone
@pytest.mark.cyclone
def test_cyclone_program_with_one_reader_prints_what_it_did(tmp_path):
    _check_one_reader_unchanged(cyclone_runner(), tmp_path)


@pytest.mark.fastdds
@pytest.mark.parametrize("profile", ["none", "sign_origin_data_encrypt"])
def test_fastdds_program_with_four_readers(tmp_path, profile):
    _check_readers_pair(_fastdds(), tmp_path, profile)


@pytest.mark.fastdds
def test_fastdds_program_with_one_reader_prints_what_it_did(tmp_path):
    _check_one_reader_unchanged(_fastdds(), tmp_path)


def _policies_of_tree(pid: int) -> tuple[set[int], set[int]]:
    """(the policies of process `pid`'s threads, those of its child processes' threads)."""
    import os

    def threads(p: int) -> set[int]:
        return {os.sched_getscheduler(int(t)) for t in os.listdir(f"/proc/{p}/task")}
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return threads(pid), set().union(*(threads(int(c)) for c in children))


def _check_relay_is_never_real_time(r, tmp_path: Path) -> None:
    """A realtime pair with 2 readers: the relay (pong's parent, off the measured path)
    runs under SCHED_OTHER while its readers follow the slot's policy. Under SCHED_FIFO a
    Fast DDS relay once spun in the kernel for 77 minutes and starved the machine
    (govkit/runners/native/readers.h)."""
    import os

    from govkit.runners.pair import FIFO, NORMAL
    if os.geteuid() != 0:
        pytest.skip(missing("root", "SCHED_FIFO needs root or CAP_SYS_NICE"))
    bundle, work = pair_bundle(r, tmp_path, "none")
    domain = next_domain()
    specs = r.pair_specs(bundle, domain, None, True, work, wait_s=WAIT_S, readers=2)
    pair = Pair("none", "none", 0, domain, specs, r.explain_refusal, realtime=True)
    try:
        pair.start(timeout=WAIT_S + 30)
        relay = pair.procs["sub"].pid
        for policy, readers_run in ((FIFO, os.SCHED_FIFO), (NORMAL, os.SCHED_OTHER),
                                    (FIFO, os.SCHED_FIFO)):
            pair.use_policy(policy)
            own, children = _policies_of_tree(relay)
            assert own == {os.SCHED_OTHER}, (policy, own)
            assert readers_run in children, (policy, children)
            assert children <= {readers_run, os.SCHED_OTHER}, (policy, children)
        assert any(pair.slot(32, 10_000, 100_000)["n"] > 0 for _ in range(50))
    finally:
        pair.close()


@needs_cyclone
@pytest.mark.cyclone
def test_cyclone_relay_is_never_real_time(tmp_path):
    _check_relay_is_never_real_time(cyclone_runner(), tmp_path)


@pytest.mark.fastdds
def test_fastdds_relay_is_never_real_time(tmp_path):
    _check_relay_is_never_real_time(_fastdds(), tmp_path)


def test_readers_count_is_checked():
    assert check_readers(4) == 4
    for bad in (0, 65, True, 2.0):
        with pytest.raises(GovkitError, match="readers"):
            check_readers(bad)


def test_per_reader_fields_are_parsed_and_checked():
    row = parse_slot("slot 32 n 3 settle_n 0 mean 20.000 min 10.000 p50 20.000 p90 30.000 "
                     "p99 30.000 max 30.000 cpu_us 1 wall_us 2 peers 2 tl 20.00 hist 1:3 "
                     "readers 2 reader_n 3,3 reader_mean 12.000,19.000 reader_min 9.000,10.000 "
                     "reader_p50 11.000,20.000 reader_p90 13.000,30.000 "
                     "reader_p99 13.000,30.000 reader_max 13.000,30.000")
    assert row["readers"] == 2 and row["per_reader"][1]["p50"] == 20.0
    assert row["reader_p50_median"] == 15.5 and row["reader_p50_slowest"] == 20.0
    counted = parse_count("count 7 n 90 later_n 89 span_us 1000 lost 0 readers 2 "
                          "reader_n 100,90 reader_later_n 99,89 reader_span_us 900,1000 "
                          "reader_lost 0,0", 7)
    assert counted["rate_sps"] == pytest.approx(89_000)
    assert [p["rate_sps"] for p in counted["per_reader"]] == [110_000.0, 89_000.0]
    with pytest.raises(PairFailed):    # a list shorter than the readers it claims
        parse_slot("slot 32 n 1 settle_n 0 readers 2 reader_n 1 reader_mean 1.0 "
                   "reader_min 1.0 reader_p50 1.0 reader_p90 1.0 reader_p99 1.0 "
                   "reader_max 1.0")
    with pytest.raises(PairFailed):
        parse_count("count 7 n 1 later_n 0 span_us 0 lost 0 readers 2 reader_n 1,x "
                    "reader_later_n 0,0 reader_span_us 0,0 reader_lost 0,0", 7)
