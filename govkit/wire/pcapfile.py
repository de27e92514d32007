"""Read a capture file (classic libpcap or pcapng) into frames, and frames into UDP datagrams.

`read_pcap` reads what `govkit.wire.capture.pcap_bytes` writes and what tcpdump, tshark and
Wireshark write: classic libpcap (either byte order, microsecond or nanosecond stamps) and
pcapng (section header, interface description, enhanced and simple packet blocks, any other
block skipped by its length), with Ethernet, Linux cooked (SLL, SLL2), raw IPv4 or BSD
loopback framing. A capture file is untrusted input: its size is capped before it is read,
it must be a regular file, every length is checked against what is left, and the walk is
one pass (each record advances by its own length, at least its header). Anything that does
not hold together is a `PcapError` naming the file, the frame (1-based, as Wireshark
numbers them) and the byte offset, never a crash.

`datagrams` turns frames into `Datagram`s (frame number, time, addresses, ports, UDP
payload) for the RTPS readers; a frame that is not IPv4/UDP is skipped, a lying IP or UDP
length is clamped to the frame (and said so by `clamped`).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from govkit.common.errors import GovkitError
from govkit.common.findings import one_line
from govkit.common.inputs import read_input

MAX_PCAP_BYTES = 1 << 30        # 1 GiB: a point's own capture is at most ~100 MB
MAX_FRAME_BYTES = 1 << 18       # the capture's snap length (govkit.wire.capture.SNAPLEN)
LINK_ETHERNET, LINK_RAW, LINK_LOOP, LINK_SLL, LINK_IPV4, LINK_SLL2, LINK_NULL = \
    1, 101, 108, 113, 228, 276, 0
LINK_HEADER = {LINK_ETHERNET: 14, LINK_SLL: 16, LINK_SLL2: 20, LINK_RAW: 0, LINK_IPV4: 0,
               LINK_NULL: 4, LINK_LOOP: 4}
LINK_NAMES = {LINK_ETHERNET: "Ethernet", LINK_SLL: "Linux cooked", LINK_SLL2: "Linux cooked v2",
              LINK_RAW: "raw IP", LINK_IPV4: "raw IPv4", LINK_NULL: "BSD loopback",
              LINK_LOOP: "OpenBSD loopback"}
PCAPNG_SHB, PCAPNG_IDB, PCAPNG_EPB, PCAPNG_SPB, PCAPNG_OPB = 0x0A0D0D0A, 1, 6, 3, 2


class PcapError(GovkitError):
    """A capture file that cannot be read as one (exit 2); the text names file, frame, byte."""


@dataclass(frozen=True)
class Frame:
    number: int            # 1-based, as Wireshark and tshark number frames
    time_ns: int
    link: int              # LINKTYPE_* of its interface
    data: bytes


@dataclass(frozen=True)
class Datagram:
    """One UDP datagram of a frame: its RTPS message, where it came from and went."""
    frame: int
    time_ns: int
    src: str
    sport: int
    dst: str
    dport: int
    payload: bytes
    fragmented: bool       # an IP fragment: only its first part is here
    clamped: bool          # the IP or UDP length claimed more than the frame holds


def read_pcap(path: Path, limit: int = MAX_PCAP_BYTES) -> list[Frame]:
    """Every frame of a capture file; GovkitError (exit 2) for anything else (not a
    regular file, above `limit`, not a capture, cut short, lying lengths)."""
    return parse_pcap(read_input(Path(path), limit, "capture file"), one_line(path))


def parse_pcap(data: bytes, name: str = "capture") -> list[Frame]:
    """The frames of a capture file's bytes (classic libpcap or pcapng)."""
    if len(data) < 4:
        raise PcapError(f"{name}: {len(data)} bytes, too short for a capture file")
    magic = data[:4]
    if magic == b"\x0a\x0d\x0d\x0a":
        return list(_pcapng(data, name))
    return list(_classic(data, name))


_CLASSIC = {b"\xd4\xc3\xb2\xa1": ("<", 1000), b"\xa1\xb2\xc3\xd4": (">", 1000),
            b"\x4d\x3c\xb2\xa1": ("<", 1), b"\xa1\xb2\x3c\x4d": (">", 1)}


def _classic(data: bytes, name: str) -> Iterator[Frame]:
    kind = _CLASSIC.get(data[:4])
    if kind is None:
        raise PcapError(f"{name}: not a capture file (magic {data[:4].hex()}: neither "
                        "libpcap nor pcapng)")
    order, scale = kind
    if len(data) < 24:
        raise PcapError(f"{name}: the libpcap file header is cut short ({len(data)} of 24 "
                        "bytes)")
    link = struct.unpack_from(order + "I", data, 20)[0] & 0x0FFFFFFF
    _check_link(link, name)
    at, number, n = 24, 0, len(data)
    while at < n:
        number += 1
        if n - at < 16:
            raise PcapError(f"{name}: frame {number} at byte {at}: its record header is cut "
                            f"short ({n - at} of 16 bytes): the capture is truncated")
        sec, frac, incl, orig = struct.unpack_from(order + "IIII", data, at)
        if incl > MAX_FRAME_BYTES:
            raise PcapError(f"{name}: frame {number} at byte {at}: claims {incl:,} captured "
                            f"bytes, more than any frame may have ({MAX_FRAME_BYTES:,})")
        if at + 16 + incl > n:
            raise PcapError(f"{name}: frame {number} at byte {at}: claims {incl:,} captured "
                            f"bytes, only {n - at - 16:,} left: the capture is truncated")
        yield Frame(number, sec * 1_000_000_000 + frac * scale, link,
                    data[at + 16:at + 16 + incl])
        at += 16 + incl


def _pcapng(data: bytes, name: str) -> Iterator[Frame]:
    at, n, number = 0, len(data), 0
    order = "<"
    links: list[tuple[int, int]] = []          # per interface: (link type, ns per tick)
    while at < n:
        if n - at < 12:
            raise PcapError(f"{name}: block at byte {at}: cut short ({n - at} bytes): the "
                            "capture is truncated")
        if data[at:at + 4] == b"\x0a\x0d\x0d\x0a":      # a section: its byte order first
            bom = data[at + 8:at + 12]
            if bom == b"\x4d\x3c\x2b\x1a":
                order = "<"
            elif bom == b"\x1a\x2b\x3c\x4d":
                order = ">"
            else:
                raise PcapError(f"{name}: section at byte {at}: unknown byte-order mark "
                                f"{bom.hex()}")
            links = []
        kind, length = struct.unpack_from(order + "II", data, at)
        if length < 12 or length % 4 or at + length > n:
            raise PcapError(f"{name}: block at byte {at} claims {length:,} bytes"
                            + (f", only {n - at:,} left: the capture is truncated"
                               if at + length > n else " (not a multiple of 4 of at least 12)"))
        if struct.unpack_from(order + "I", data, at + length - 4)[0] != length:
            raise PcapError(f"{name}: block at byte {at}: its two lengths differ")
        body = data[at + 8:at + length - 4]
        if kind == PCAPNG_IDB:
            if len(body) < 8:
                raise PcapError(f"{name}: interface block at byte {at} is cut short")
            link = struct.unpack_from(order + "H", body, 0)[0]
            _check_link(link, name)
            links.append((link, _tick_ns(body[8:], order)))
        elif kind in (PCAPNG_EPB, PCAPNG_SPB, PCAPNG_OPB):
            number += 1
            yield _pcapng_frame(kind, body, order, links, number, at, name)
        at += length


def _tick_ns(options: bytes, order: str) -> int:
    """ns per timestamp tick from an interface's if_tsresol option (default: µs)."""
    at = 0
    while at + 4 <= len(options):
        code, length = struct.unpack_from(order + "HH", options, at)
        if code == 0:
            break
        if code == 9 and length >= 1 and at + 5 <= len(options):
            res = options[at + 4]
            exp = res & 0x7F
            if res & 0x80:
                return max(1, 1_000_000_000 >> min(exp, 62)) if exp <= 30 else 1
            return 10 ** max(0, 9 - exp) if exp <= 9 else 1
        at += 4 + length + (-length % 4)
    return 1000


def _pcapng_frame(kind: int, body: bytes, order: str, links: list, number: int, at: int,
                  name: str) -> Frame:
    where = f"{name}: frame {number} at byte {at}"
    if kind == PCAPNG_SPB:
        if not links or len(body) < 4:
            raise PcapError(f"{where}: a simple packet without an interface")
        link, _ = links[0]
        orig = struct.unpack_from(order + "I", body, 0)[0]
        return Frame(number, 0, link, body[4:4 + min(orig, len(body) - 4)])
    if len(body) < 20:
        raise PcapError(f"{where}: its packet block is cut short")
    iface, high, low, incl = struct.unpack_from(order + "IIII", body, 0)
    if iface >= len(links):
        raise PcapError(f"{where}: names interface {iface}, which the file never described")
    if incl > MAX_FRAME_BYTES or 20 + incl > len(body):
        raise PcapError(f"{where}: claims {incl:,} captured bytes, its block holds "
                        f"{len(body) - 20:,}")
    link, tick = links[iface]
    return Frame(number, ((high << 32) | low) * tick, link, body[20:20 + incl])


def _check_link(link: int, name: str) -> None:
    if link not in LINK_HEADER:
        raise PcapError(f"{name}: link type {link} is not one govkit reads ("
                        + ", ".join(f"{v} {k}" for k, v in LINK_NAMES.items()) + ")")


# ----------------------------------------------------------------- frames to datagrams

def _ip_start(frame: Frame) -> int | None:
    """Where a frame's IPv4 header starts, or None when it carries no IPv4."""
    d, link = frame.data, frame.link
    if link == LINK_ETHERNET:
        at, ether = 12, d[12:14]
        while ether == b"\x81\x00" and len(d) >= at + 6:        # 802.1Q tags
            at += 4
            ether = d[at:at + 2]
        return at + 2 if ether == b"\x08\x00" else None
    if link == LINK_SLL:
        return 16 if d[14:16] == b"\x08\x00" else None
    if link == LINK_SLL2:
        return 20 if d[0:2] == b"\x08\x00" else None
    if link in (LINK_NULL, LINK_LOOP):
        family = d[0:4]
        return 4 if family in (b"\x02\x00\x00\x00", b"\x00\x00\x00\x02") else None
    return 0                                            # raw IP: its version decides


def datagrams(frames: Iterable[Frame]) -> Iterator[Datagram]:
    """The IPv4/UDP datagrams of `frames`, in order. Never raises on a malformed frame."""
    for frame in frames:
        d = frame.data
        ip = _ip_start(frame)
        if ip is None or len(d) < ip + 20 or d[ip] >> 4 != 4 or d[ip + 9] != 17:
            continue
        ihl = (d[ip] & 0x0F) * 4
        total = int.from_bytes(d[ip + 2:ip + 4], "big")
        udp = ip + ihl
        if ihl < 20 or len(d) < udp + 8:
            continue
        end = min(len(d), ip + total) if total >= ihl + 8 else len(d)
        sport, dport, length = struct.unpack_from("!HHH", d, udp)
        clamped = not ihl + 8 <= total <= len(d) - ip or not 8 <= length <= end - udp
        stop = udp + length if 8 <= length <= end - udp else end
        fragmented = bool(d[ip + 6] & 0x20) or bool(int.from_bytes(d[ip + 6:ip + 8], "big")
                                                     & 0x1FFF)
        yield Datagram(frame.number, frame.time_ns, ".".join(map(str, d[ip + 12:ip + 16])),
                       sport, ".".join(map(str, d[ip + 16:ip + 20])), dport,
                       d[udp + 8:stop], fragmented, clamped)


def captured_frames(frames: list[tuple[int, bytes]]) -> list[Frame]:
    """govkit's own capture (time_ns, Ethernet frame) as numbered frames: the numbers are
    those of the pcap `pcap_bytes` writes of the same list."""
    return [Frame(i, t, LINK_ETHERNET, f) for i, (t, f) in enumerate(frames, 1)]
