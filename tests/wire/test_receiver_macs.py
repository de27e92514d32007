"""Receiver-specific MACs counted per CryptoFooter (DDS Security 1.1, 9.5.2: a
SecureRTPSPostfix / SecurePostfix carries common_mac, then receiver_specific_macs, a
sequence of {key_id[4], mac[16]}), on real traffic of one writer and 4 readers (issue 41).

Real pairs of govkit's programs (Cyclone DDS and Fast DDS, through the runners' pair_specs
and the rotation's Pair) with 4 reader processes, captured on lo: origin authentication
(sign_origin_data_encrypt: RTPS protection SIGN_WITH_ORIGIN_AUTHENTICATION) puts at least
one MAC in every user-traffic SRTPS_POSTFIX, and more than one where a footer is meant for
several readers; rtps_sign and rtps_encrypt put none anywhere, and the governance check
says so. tshark's RTPS dissector (4.0) shows a footer as an opaque "Plugin Secure Tag":
its length (16 + 4 + 20 per MAC) gives the count independently of govkit's parser, and the
two must agree footer for footer. Raw capture needs root (or CAP_NET_RAW)."""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from helpers.dds import needs_cyclone, next_domain, pair_bundle
from helpers.require import missing

from govkit.catalog.profiles import get_profile
from govkit.runners.pair import Pair
from govkit.wire import rtps
from govkit.wire.capture import Capture, child_udp_ports, pcap_bytes, udp_datagrams
from govkit.wire.verdict import Expectation, judgement, receiver_mac_summary

READERS = 4
# every participant authenticates every other: 5 participants, 10 handshakes, on a busy
# machine (a Fast DDS reader once missed the 30 s default with the load at 10)
WAIT_S = 120
DATA = Path(__file__).resolve().parents[1] / "data" / "wire"
POSTFIXES = {0x32: "SEC_POSTFIX", 0x34: "SRTPS_POSTFIX"}


def _capture_ok() -> None:
    try:
        socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0).close()
    except (PermissionError, AttributeError, OSError):
        pytest.skip(missing("root", "raw capture on lo needs root or CAP_NET_RAW"))


def _runner(name: str):
    if name == "cyclone":
        from helpers.dds import cyclone_program

        from govkit.runners.cyclone import CycloneRunner
        cyclone_program()
        r = CycloneRunner()
        r.check_installed()
        return r
    from helpers.fastdds import runner
    return runner()


def _captured(runner_name: str, profile: str, tmp_path: Path) -> tuple[int, list]:
    """A real pair with READERS readers: latency slots and one throughput slot, captured
    until govkit stops the processes."""
    _capture_ok()
    r = _runner(runner_name)
    bundle, work = pair_bundle(r, tmp_path, profile)
    domain = next_domain()
    pair = Pair(profile, profile, 0, domain,
                r.pair_specs(bundle, domain, None, False, work, wait_s=WAIT_S,
                             readers=READERS),
                r.explain_refusal)
    with Capture("lo", rtps.PORTS.ports(domain)) as cap:
        try:
            pair.start(timeout=WAIT_S + 30)
            # the pair's own sockets, the reader processes' included (pong's children):
            # another test's traffic on the same domain id is left out
            cap.own_ports = child_udp_ports()
            assert len(cap.own_ports) > READERS, cap.own_ports
            seen = 0
            for _ in range(100):          # until some round trips, however busy the machine
                row = pair.slot(1024, 0, 100_000)
                assert row["readers"] == READERS, row
                seen += row["n"]
                if seen >= 50:
                    break
            pair.tslot(1024, 0, 50_000, rate=5_000)
        finally:
            # what comes after is the processes leaving, which the wire stage counts apart
            # and does not judge (Cyclone now and then sends a last unprotected ACKNACK)
            cap.mark_stop()
            pair.close()
    return domain, [(t, f) for t, f in cap.own_frames() if t < cap.stop_ns]


def _tshark_macs(pcap: Path, domain: int) -> dict[str, Counter]:
    """Per footer kind, footers per MAC count in user traffic, as tshark delimits them."""
    out = subprocess.run(["tshark", "-r", str(pcap), "-T", "fields", "-E", "separator=|",
                          "-e", "udp.dstport", "-e", "rtps.sm.id",
                          "-e", "rtps.secure.data_tag.plugin_sec_tag"],
                         capture_output=True, text=True, timeout=300, check=True)
    found: dict[str, Counter] = {}
    for line in out.stdout.splitlines():
        port, ids, tags = (line.split("|") + ["", ""])[:3]
        if not port.isdigit() or rtps.PORTS.traffic(domain, int(port)) != "user":
            continue
        kinds = [POSTFIXES[int(i, 16)] for i in ids.split(",") if i and int(i, 16) in POSTFIXES]
        tags = [t for t in tags.split(",") if t]
        assert len(kinds) == len(tags), line
        for kind, tag in zip(kinds, tags, strict=True):
            size = len(bytes.fromhex(tag.replace(":", "")))
            assert (size - rtps.MAC - 4) % (4 + rtps.MAC) == 0, line
            found.setdefault(kind, Counter())[(size - rtps.MAC - 4) // (4 + rtps.MAC)] += 1
    return found


def _check(runner_name: str, profile: str, tmp_path: Path) -> dict:
    domain, frames = _captured(runner_name, profile, tmp_path)
    observed = rtps.tally(udp_datagrams(frames), domain, None)
    judged = judgement(Expectation.of(get_profile(profile)), observed)
    macs = receiver_mac_summary(observed)
    check = next(c for c in judged["checks"] if c["check"] == "receiver-specific MAC count")
    assert check["status"] == "ok" and judged["verdict"] == "match", judged["reasons"]
    assert macs["SRTPS_POSTFIX"]["footers"] == observed["user"]["messages"], macs
    if shutil.which("tshark"):
        pcap = tmp_path / f"{profile}.pcap"
        pcap.write_bytes(pcap_bytes(frames))
        theirs = _tshark_macs(pcap, domain)
        assert {k: dict(v) for k, v in theirs.items()} == \
            {k: v["distribution"] for k, v in macs.items()}, (theirs, macs)
    return macs


RUNNERS = [pytest.param("cyclone", marks=[needs_cyclone, pytest.mark.cyclone]),
           pytest.param("fastdds", marks=pytest.mark.fastdds)]


@pytest.mark.parametrize("runner_name", RUNNERS)
def test_origin_authentication_puts_receiver_macs_in_every_footer(runner_name, tmp_path):
    macs = _check(runner_name, "sign_origin_data_encrypt", tmp_path)
    rtps_footers = macs["SRTPS_POSTFIX"]
    assert rtps_footers["min"] >= 1, macs
    # 4 readers, each a participant of its own: some footer is meant for more than one
    assert rtps_footers["max"] > 1, macs


@pytest.mark.parametrize("runner_name", RUNNERS)
@pytest.mark.parametrize("profile", ["rtps_sign", "rtps_encrypt"])
def test_without_origin_authentication_no_footer_carries_a_mac(runner_name, profile,
                                                               tmp_path):
    macs = _check(runner_name, profile, tmp_path)
    assert macs["SRTPS_POSTFIX"]["max"] == 0, macs
    assert all(v["max"] == 0 for v in macs.values()), macs


def test_a_mac_where_the_governance_implies_none_is_a_mismatch():
    """A recorded origin-authenticated message (1 receiver-specific MAC in its
    SRTPS_POSTFIX) judged against rtps_sign, whose governance asks for none."""
    msg = (DATA / "sign_origin_data_encrypt-user-data.bin").read_bytes()
    observed = rtps.tally([(0, rtps.PORTS.ports(0).start + 11, msg, False)], 0, None)
    assert receiver_mac_summary(observed)["SRTPS_POSTFIX"] == \
        {"footers": 1, "min": 1, "max": 1, "distribution": {1: 1}}
    judged = judgement(Expectation.of(get_profile("rtps_sign")), observed)
    check = next(c for c in judged["checks"] if c["check"] == "receiver-specific MAC count")
    assert check["status"] == "mismatch" and "1 MAC: 1" in check["observed"], check
    ok = judgement(Expectation.of(get_profile("sign_origin_data_encrypt")), observed)
    assert next(c for c in ok["checks"]
                if c["check"] == "receiver-specific MAC count")["status"] == "ok"


def test_a_record_without_counts_is_judged_as_before():
    """results.json written before the count was kept: no such check, nothing else moves."""
    msg = (DATA / "sign_origin_data_encrypt-user-data.bin").read_bytes()
    observed = rtps.tally([(0, rtps.PORTS.ports(0).start + 11, msg, False)], 0, None)
    for t in observed.values():
        if isinstance(t, dict):
            t.pop("receiver_macs", None)
    judged = judgement(Expectation.of(get_profile("sign_origin_data_encrypt")), observed)
    assert receiver_mac_summary(observed) == {}
    assert "receiver-specific MAC count" not in {c["check"] for c in judged["checks"]}


def test_the_points_own_ports_include_the_reader_processes():
    """A pong with readers forks them: their sockets are govkit's grandchildren's, and a
    capture that knew only its children's ports counted the readers' pongs as another
    run's traffic."""
    import sys

    from govkit.runners.base import ProcessSpec
    from govkit.runners.processes import end_processes, spawn
    script = ("import socket, subprocess, sys\n"
              "child = subprocess.Popen([sys.executable, '-c', "
              "'import socket, sys, time; s = socket.socket(socket.AF_INET, "
              "socket.SOCK_DGRAM); s.bind((\"127.0.0.1\", 0)); "
              "print(s.getsockname()[1], flush=True); sys.stdin.read()'], "
              "stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True)\n"
              "print(child.stdout.readline().strip(), flush=True)\n"
              "sys.stdin.read()\n")
    proc = spawn(ProcessSpec("sub", [sys.executable, "-c", script]), stdin=subprocess.PIPE)
    try:
        port = int(proc.stdout.readline())
        assert port in child_udp_ports()
    finally:
        end_processes([proc], grace_s=5)
