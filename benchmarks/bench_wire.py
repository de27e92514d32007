#!/usr/bin/env python3
"""The wire part's cost on large input, measured side by side in one run (issues 34, 37).

Times are CPU seconds of this process (time.process_time): the VM is shared, and other
processes' load stretches wall time, not CPU time. Each measurement is repeated --rounds
times, alternated with the one it is compared with; the median is printed.

1. `govkit report` on results.json with N captured points (tests/helpers/large_results.py,
   `with_wire_points`) at N/4 and N (default 20,000): the time, and the time per 1,000
   points at both (a ratio near 1: linear);
2. the report's wire part at N points as it is (each point judged once, only the failing
   checks' texts written; the summary reuses those verdicts) against what it did before
   issue 37 (every point judged twice, each writing every check's text and its headline):
   the two times and their ratio;
3. the eavesdropper's reading (govkit.wire.leaks) of a capture of 10^5 and of 10^6 RTPS
   parameters (participant announcements of 16,200 parameters each): time per 10^5
   parameters at both (a ratio near 1: linear), and of the real captures of
   tests/data/wire/leaks/ per message;
4. a reassembly flood (issue 46): --frags DATA_FRAGs (default 100,000), each opening a new
   1 MiB sample in 64-byte fragments of which no other ever comes, against as many ordinary
   messages of the same length (a user writer's DATA): time per datagram of each and the
   ratio (near 1: the flood costs the bytes it carries, not the 1 MiB each claims; before
   2026-12-07 each allocated and zeroed 1 MiB: ~93 s for 100,000).

    .venv/bin/python benchmarks/bench_wire.py [--points 20000] [--rounds 3] [--frags 100000]
    .venv/bin/python benchmarks/bench_wire.py --flood-only    (4. alone)
"""

from __future__ import annotations

import argparse
import json
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from helpers.large_results import catalog, per_repeat, with_wire_points  # noqa: E402

from govkit.report.run import write_report  # noqa: E402
from govkit.report.wire_section import build_wire_section  # noqa: E402
from govkit.wire.capture import pcap_bytes  # noqa: E402
from govkit.wire.leaks import find_leaks  # noqa: E402
from govkit.wire.pcapfile import datagrams, parse_pcap, read_pcap  # noqa: E402
from govkit.wire.verdict import judge_again, profile_verdicts  # noqa: E402


def cpu(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def median_of(rounds: int, *fns) -> list[float]:
    """Each fn's median CPU time over `rounds`, the fns alternated within each round."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            times[i].append(cpu(fn))
    return [statistics.median(t) for t in times]


def wire_doc(points: int) -> dict:
    return with_wire_points(per_repeat(catalog(7), [1024], 2, 5), points)


def report_of(doc: dict):
    def run():
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "results.json").write_text(json.dumps(doc))
            write_report(Path(d))
    return run


def before_issue_37(doc: dict):
    """What the report's wire part did before: every point judged in full, twice (the wire
    section, then the summary's verdicts), and the per-profile sums over both."""
    def run():
        for _ in range(2):
            profile_verdicts([judge_again(p) for p in doc["wire"]["points"]])
    return run


def now(doc: dict):
    def run():
        section = build_wire_section(doc)        # judged once; the summary reuses it
        assert section is not None and section.verdicts
    return run


def parameters_capture(parameters: int) -> bytes:
    per = 16_200
    header = b"RTPS\x02\x01\x01\x10" + bytes(range(12))
    body = b"\0\0" + struct.pack("<H", 16) + bytes(4) + b"\x00\x01\x00\xc2" + \
        struct.pack("<iI", 0, 1) + b"\x00\x03\x00\x00" + b"\x77\x00\x00\x00" * per + \
        b"\x01\x00\x00\x00"
    msg = header + b"\x15\x05" + struct.pack("<H", len(body)) + body
    frames = []
    for i in range(max(1, parameters // per)):
        udp = struct.pack("!HHHH", 40000, 8160, len(msg) + 8, 0) + msg
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                         b"\x7f\0\0\1", b"\x7f\0\0\1")
        frames.append((i * 1000, bytes(12) + b"\x08\x00" + ip + udp))
    return pcap_bytes(frames)


def flood_captures(datagrams_: int) -> tuple[list, list]:
    """(DATA_FRAGs each opening a new 1 MiB SPDP sample, user DATA of the same length), as
    parsed frames to a discovery port of domain 3."""
    header = b"RTPS\x02\x01\x01\x10" + bytes(range(12))

    def message(sn: int, frag: bool) -> bytes:
        writer = b"\x00\x01\x00\xc2" if frag else b"\x00\x00\x01\x02"
        body = b"\0\0" + struct.pack("<H", 28 if frag else 16) + bytes(4) + writer + \
            struct.pack("<iI", 0, sn)
        body += struct.pack("<IHHI", 1, 1, 64, 1 << 20) if frag else bytes(12)
        body += b"\x00\x01\x00\x00" + bytes(60)
        return header + bytes([0x16 if frag else 0x15, 0x05]) + \
            struct.pack("<H", len(body)) + body

    def frames(frag: bool) -> list:
        out = []
        for i in range(datagrams_):
            msg = message(i, frag)
            udp = struct.pack("!HHHH", 40000, 8160, len(msg) + 8, 0) + msg
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                             b"\x7f\0\0\1", b"\x7f\0\0\1")
            out.append((i * 1000, bytes(12) + b"\x08\x00" + ip + udp))
        return parse_pcap(pcap_bytes(out))
    return frames(True), frames(False)


def flood(n: int, rounds: int) -> None:
    frags, ordinary = flood_captures(n)
    assert len(frags[0].data) == len(ordinary[0].data)
    reading = find_leaks(datagrams(frags), 3)
    assert reading["not_reassembled"] == n and reading["malformed"] == 0, reading["problems"]
    t_frag, t_ord = median_of(rounds, lambda: find_leaks(datagrams(frags), 3),
                              lambda: find_leaks(datagrams(ordinary), 3))
    print(f"reassembly flood, {n:,} DATA_FRAGs each opening a 1 MiB sample "
          f"({sum(len(f.data) for f in frags) / 1e6:.1f} MB): {t_frag:.2f} s "
          f"({t_frag / n * 1e6:.1f} µs per datagram); {n:,} user DATA of the same length: "
          f"{t_ord:.2f} s ({t_ord / n * 1e6:.1f} µs); ratio {t_frag / t_ord:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--frags", type=int, default=100_000)
    ap.add_argument("--flood-only", action="store_true")
    args = ap.parse_args()
    n = args.points
    if args.flood_only:
        flood(args.frags, args.rounds)
        return

    small, full = wire_doc(n // 4), wire_doc(n)
    t_small, t_full = median_of(args.rounds, report_of(small), report_of(full))
    print(f"report, {n // 4:,} wire points: {t_small:.2f} s ({t_small / (n / 4000):.3f} s per "
          f"1,000); {n:,}: {t_full:.2f} s ({t_full / (n / 1000):.3f} s per 1,000); per-point "
          f"time at full / at a quarter: {t_full / 4 / t_small:.2f}")
    t_old, t_new = median_of(args.rounds, before_issue_37(full), now(full))
    print(f"wire part of the report, {n:,} points: before issue 37 {t_old:.2f} s, now "
          f"{t_new:.2f} s: {t_old / t_new:.1f}x less CPU")

    caps = {k: parse_pcap(parameters_capture(k)) for k in (100_000, 1_000_000)}
    t_1e5, t_1e6 = median_of(args.rounds, *(lambda f=f: find_leaks(datagrams(f), 3)
                                            for f in caps.values()))
    print(f"eavesdropper's reading: 10^5 parameters {t_1e5:.3f} s, 10^6 {t_1e6:.3f} s; time "
          f"per 10^5 at 10^6 / at 10^5: {t_1e6 / 10 / t_1e5:.2f}")
    for path in sorted((ROOT / "tests" / "data" / "wire" / "leaks").glob("*.pcap")):
        frames = read_pcap(path)
        (t,) = median_of(args.rounds, lambda f=frames: find_leaks(datagrams(f), None))
        print(f"  {path.name}: {len(frames)} frames in {t * 1e3:.1f} ms "
              f"({t / len(frames) * 1e6:.0f} µs per frame)")
    flood(args.frags, args.rounds)


if __name__ == "__main__":
    main()
