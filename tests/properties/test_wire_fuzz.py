"""Property-based fuzzing of what `govkit wire-check` (and `bench --wire`) read off the wire
(issue 23): the captured frames a pcap holds, whatever bytes another sender on the domain's
ports (or a broken stack) puts there, go through every reader, never raise, and what is
written goes only where it should.

wire-check reads no pcap file: it captures frames (govkit.wire.capture), parses them
(udp_datagrams, then govkit.wire.rtps.analyse: every datagram classified as one RTPS
message), judges them (govkit.wire.verdict), prints them (report.terminal.wire_table), keeps
them in results.json (judged again by the report: report.wire_section) and writes them as a
pcap (`--pcap DIR`: DIR/PROFILE-MODE-SIZE.pcap). Each example builds such a capture from
recorded Cyclone DDS 0.10 datagrams (tests/data/wire) and random bytes, mutated at every
layer (Ethernet type, IPv4 header length, protocol and fragment bits, UDP length, RTPS
header, submessage ids, flags and lengths), and runs it through all of them.

Time is bounded by hypothesis's deadline (per example), not by assertions on wall time. The
budget is fixed and the examples are derandomized, so every run tries the same captures.
"""

from __future__ import annotations

import io
import json
import struct
import tempfile
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from govkit.bench.governance_files import point_name
from govkit.catalog.profiles import PROFILES
from govkit.common.fsutil import write_atomic
from govkit.report.terminal import wire_table
from govkit.report.wire_section import build_wire_section
from govkit.results.check import check_results
from govkit.wire import rtps
from govkit.wire.capture import ETH_HEADER, pcap_bytes, udp_datagrams
from govkit.wire.verdict import judge_again, profile_verdicts

DATA = Path(__file__).parent.parent / "data" / "wire"
RECORDED = [p.read_bytes() for p in sorted(DATA.glob("*.bin"))] + \
    [p.read_bytes() for p in sorted((DATA / "malformed").glob("*.bin"))]
DOMAIN = 7
PORTS = rtps.PORTS.ports(DOMAIN)
FILLER = b"\xee"
# Pieces that mean something to the parser, spliced in anywhere.
PIECES = [b"RTPS\x02\x01\x01\x10" + b"\x00" * 12, b"RTPS\x01\x00", b"RTPS\x02",
          bytes([rtps.SRTPS_PREFIX, 1, 20, 0]) + b"\x00\x00\x00\x02" + b"\x00" * 16,
          bytes([rtps.SRTPS_POSTFIX, 1, 20, 0]) + b"\x00" * 16 + b"\x00\x00\x00\x00",
          bytes([rtps.SEC_PREFIX, 1, 20, 0]) + b"\x00\x00\x00\x01" + b"\x00" * 16,
          bytes([rtps.SEC_BODY, 1, 4, 0]) + b"\x00" * 4,
          bytes([rtps.SEC_POSTFIX, 1, 0xFF, 0xFF]),
          bytes([rtps.DATA, 0x07, 0, 0]), bytes([rtps.DATA_FRAG, 0x03, 24, 0]) + b"\x00" * 24,
          bytes([rtps.PAD, 0, 0, 0]), bytes([rtps.INFO_TS, 1, 0, 0]), b"\x00\x01\x00\x00",
          b"\xff\xff\xff\xff", FILLER * 16, b"\x00\x00\x00\x04" + b"\x00" * 16]


def frame(payload: bytes, port: int, ihl: int = 5, proto: int = 17,
          ethertype: bytes = b"\x08\x00", udp_length: int | None = None,
          fragment: int = 0) -> bytes:
    """An Ethernet frame (as lo gives them: zero MACs) around an IPv4/UDP datagram."""
    options = b"\x00" * max(0, ihl * 4 - 20)
    ip = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, 28 + len(options) + len(payload), 0,
                     fragment, 64, proto, 0, b"\x7f\x00\x00\x01", b"\x7f\x00\x00\x01")
    udp = struct.pack("!HHHH", 40000, port,
                      8 + len(payload) if udp_length is None else udp_length, 0)
    return b"\x00" * 12 + ethertype + ip + options + udp + payload


@st.composite
def payloads(draw) -> bytes:
    """A recorded RTPS message or random bytes, cut, overwritten and spliced."""
    msg = bytearray(draw(st.sampled_from(RECORDED)) if draw(st.integers(0, 4))
                    else draw(st.binary(max_size=300)))
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.integers(0, 3))
        at = draw(st.integers(0, len(msg)))
        if kind == 0:                                  # cut
            del msg[at:]
        elif kind == 1 and msg:                        # overwrite bytes
            at = min(at, len(msg) - 1)
            chunk = draw(st.binary(min_size=1, max_size=4))
            msg[at:at + len(chunk)] = chunk
        elif kind == 2:                                # splice a meaningful piece
            msg[at:at] = draw(st.sampled_from(PIECES))
        else:                                          # a submessage header's length
            if at + 4 <= len(msg):
                msg[at + 2:at + 4] = draw(st.integers(0, 0xFFFF)).to_bytes(2, "little")
    return bytes(msg)


@st.composite
def frames(draw) -> list[tuple[int, bytes]]:
    out = []
    t = draw(st.integers(1_600_000_000, 4_000_000_000)) * 1_000_000_000
    for _ in range(draw(st.integers(0, 12))):
        t += draw(st.integers(0, 10 ** 9))
        if draw(st.integers(0, 9)) == 0:               # not even Ethernet/IPv4
            out.append((t, draw(st.binary(max_size=80))))
            continue
        port = draw(st.sampled_from([PORTS.start, PORTS.start + 1, PORTS.start + 10,
                                     PORTS.start + 11, PORTS.start + 13, PORTS.start + 5,
                                     PORTS.stop - 1, 53, 65535]))
        f = frame(draw(payloads()), port,
                  ihl=draw(st.sampled_from([5, 5, 5, 0, 4, 6, 15])),
                  proto=draw(st.sampled_from([17, 17, 17, 6, 0])),
                  ethertype=draw(st.sampled_from([b"\x08\x00"] * 4 + [b"\x86\xdd"])),
                  udp_length=draw(st.none() | st.integers(0, 0xFFFF)),
                  fragment=draw(st.sampled_from([0, 0, 0, 0x2000, 0x0001, 0x4000])))
        if draw(st.integers(0, 7)) == 0:
            f = f[:draw(st.integers(0, len(f)))]        # a frame cut anywhere
        out.append((t, f))
    return out


def read_pcap(data: bytes) -> list[tuple[int, bytes]]:
    """Classic libpcap, strictly (what Wireshark would read): (time in µs, frame)."""
    magic, major, minor, _, _, snaplen, link = struct.unpack_from("<IHHiIII", data)
    assert (magic, major, minor, link) == (0xA1B2C3D4, 2, 4, 1) and snaplen >= 65535
    out, at = [], 24
    while at < len(data):
        sec, usec, caplen, length = struct.unpack_from("<IIII", data, at)
        assert caplen == length and usec < 1_000_000
        out.append((sec * 1_000_000 + usec, data[at + 16:at + 16 + caplen]))
        at += 16 + caplen
    assert at == len(data)
    return out


FUZZ = settings(max_examples=150, deadline=timedelta(seconds=2), derandomize=True,
                database=None, suppress_health_check=[HealthCheck.too_slow,
                                                      HealthCheck.data_too_large])


# The name a pcap gets: a catalog profile's, or a `bench --governance FILE` point's (made
# from the file's name by point_name), whatever that file is called.
PCAP_NAMES = st.sampled_from([p.name for p in PROFILES]) | st.text(max_size=80).map(
    lambda t: point_name(Path(t.replace("\x00", "") or "x")))


@FUZZ
@given(frames(), st.sampled_from(PROFILES), st.booleans(), st.integers(0, 12), PCAP_NAMES)
def test_captured_frames_through_every_reader(captured, profile, attributed, stop_at,
                                              pcap_name):
    # the capture's parse (never raises; a lying UDP length is clamped to the frame)
    datagrams = list(udp_datagrams(captured))
    assert len(datagrams) <= len(captured)
    longest = max((len(f) for _, f in captured), default=0)
    assert all(0 <= port <= 0xFFFF and len(payload) <= longest - ETH_HEADER - 28
               for _, port, payload, _ in datagrams)
    stop_ns = captured[stop_at][0] if stop_at < len(captured) else None

    # parsed and judged as bench --wire and wire-check do
    record = {"profile": profile.name, "mode": "latency", "size": 1024, "status": "ok",
              "error": None, "domain_id": DOMAIN, **rtps.analyse(
                  datagrams, DOMAIN, rtps.expectation(profile), FILLER, stop_ns,
                  attributed=attributed)}
    observed = record["observed"]
    counted = sum(t["messages"] for t in observed.values() if isinstance(t, dict))
    assert counted + observed["non_rtps"] + observed["ip_fragmented"] == len(datagrams)
    assert record["verdict"] in ("match", "mismatch")
    if observed["user"]["messages"] == 0:
        assert record["verdict"] == "mismatch"          # no user traffic proves nothing

    # kept in results.json and read back: the same verdict from the stored counts
    stored = json.loads(json.dumps(record))
    again = judge_again(stored)
    assert (again["verdict"], again["reasons"]) == (record["verdict"], record["reasons"])
    assert profile_verdicts([stored])[profile.name]["verdict"] == record["verdict"]
    doc = {"schema": "govkit.bench/3", "profiles": [], "results": [],
           "wire": {"method": rtps.METHOD, "points": [stored],
                    "profiles": profile_verdicts([stored])}}
    check_results(doc)
    section = build_wire_section(doc)
    assert [p.verdict for p in section.points] == [record["verdict"]]

    # printed: verbatim (no markup read), whatever the counts say
    console = Console(file=io.StringIO(), width=160, markup=False, emoji=False,
                      highlight=False)
    console.print(wire_table([stored]))
    assert profile.name in console.file.getvalue()

    # written as --pcap does (govkit.bench.wire_phase): that one file in that directory,
    # and it reads back
    with tempfile.TemporaryDirectory() as d:
        pcap_dir = Path(d) / "pcaps"
        pcap_dir.mkdir()
        path = pcap_dir / f"{pcap_name}-latency-1024.pcap"
        assert path.resolve().parent == pcap_dir.resolve(), pcap_name
        write_atomic(path, pcap_bytes(captured))
        assert sorted(p.name for p in Path(d).rglob("*")) == sorted(["pcaps", path.name])
        back = read_pcap(path.read_bytes())
    assert [f for _, f in back] == [f for _, f in captured]
    assert [t for t, _ in back] == [t // 1000 for t, _ in captured]


@settings(max_examples=20, deadline=timedelta(seconds=2), derandomize=True, database=None)
@given(st.integers(1, 16_000), st.sampled_from([bytes([rtps.PAD, 0, 0, 0]),
                                                bytes([rtps.INFO_TS, 1, 0, 0]),
                                                bytes([rtps.HEARTBEAT, 1, 0, 0])]))
def test_the_largest_datagrams_parse_in_linear_time(count, submessage):
    """A 64 KiB datagram of 4-byte submessages (the most a UDP datagram can hold): one
    step per submessage, within the deadline."""
    msg = b"RTPS\x02\x01\x01\x10" + b"\x00" * 12 + submessage * count
    datagrams = list(udp_datagrams([(0, frame(msg[:65_000], PORTS.start + 11))]))
    record = rtps.analyse(datagrams, DOMAIN, rtps.expectation(PROFILES[0]), FILLER)
    assert sum(t["messages"] for t in record["observed"].values()
               if isinstance(t, dict)) == 1
