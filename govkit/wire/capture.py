"""Read a bench point's RTPS datagrams off a network interface, and write them as a pcap.

A `Capture` is a context manager around one AF_PACKET socket (Linux; root or CAP_NET_RAW)
bound to one interface, with a classic BPF filter in the kernel that passes only IPv4 UDP
datagrams to the point's own port range (on loopback, only the incoming copy of each
frame: every frame crosses `lo` twice). One thread of the orchestrator reads the frames
and stores them untouched, with their time; nothing is parsed while the point runs (that is
`govkit.wire.rtps`'s job, afterwards). Memory is bounded: frames beyond `keep_bytes` are counted,
not kept.

The domain's ports are shared by anything else on that domain (another user's run with
another PKI never matches the point's processes, so they cannot tell, but its datagrams
still cross `lo`): while it runs, the capture also notes every UDP port the point's
processes (govkit's children) have bound, receive and transmit sockets alike, and
`own_frames` keeps only what those processes sent.

The socket exists only between `__enter__` and `__exit__`: points that are not captured run
with no socket and no filter at all.
"""

from __future__ import annotations

import ctypes
import os
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from govkit.common.errors import GovkitError

ETH_P_ALL = 0x0003
ETH_HEADER = 14
SOL_PACKET = 263
PACKET_STATISTICS = 6
PACKET_OUTGOING = 4
SO_ATTACH_FILTER = 26
SO_RCVBUFFORCE = 33
SO_TIMESTAMPNS = 35          # = SCM_TIMESTAMPNS: the kernel's receive time of each frame
RECV_BUFFER = 128 << 20     # charged only while frames wait: room for bursts
SNAPLEN = 1 << 18
# Interface types whose frames start with a 14-byte Ethernet header (lo: a zeroed one).
ARPHRD_ETHER, ARPHRD_LOOPBACK = 1, 772
ANCILLARY = socket.CMSG_SPACE(16)
LINKTYPE_ETHERNET = 1
DEFAULT_KEEP_BYTES = 96 << 20
PORT_SCAN_S = 0.25           # how often the point's processes' sockets are looked up
# The reader thread runs above the pair's SCHED_FIFO 1 (bench's latency repeats) when
# permitted: a starved reader lets the socket queue fill, and the kernel drops frames
# (a CI run once lost 2,166 of a no_protection capture).
READER_PRIORITY = 2
NEEDS_PRIVILEGE = ("reading packets off {interface} (--wire, wire-check) needs root or "
                   "CAP_NET_RAW: run as root, or give the Python binary cap_net_raw with "
                   "setcap; plain `govkit bench` does not need it")


def interface_type(interface: str) -> int | None:
    try:
        return int(Path(f"/sys/class/net/{interface}/type").read_text())
    except (OSError, ValueError):
        return None


def check_capture(interface: str) -> None:
    """Raise GovkitError (exit 2) unless this process can capture on `interface`."""
    kind = interface_type(interface)
    if kind is None:
        raise GovkitError(f"--wire: no network interface {interface!r}")
    if kind not in (ARPHRD_ETHER, ARPHRD_LOOPBACK):
        raise GovkitError(f"--wire: {interface} is not Ethernet-framed (type {kind}); "
                          "only lo and Ethernet/veth interfaces can be captured")
    try:
        socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0).close()
    except PermissionError:
        raise GovkitError(NEEDS_PRIVILEGE.format(interface=interface)) from None
    except (AttributeError, OSError) as e:    # no AF_PACKET: not Linux
        raise GovkitError(f"--wire: cannot open a packet socket here: {e}") from None


# ------------------------------------------------------------------------- BPF filter

def bpf_program(lo: int, hi: int, loopback: bool) -> bytes:
    """Classic BPF: IPv4, UDP, first fragment, destination port in [lo, hi]; on loopback
    the outgoing copy of each frame is dropped. Returns struct sock_filter[]."""
    ld_w, ld_h, ld_b, ldx_msh, ld_h_ind = 0x20, 0x28, 0x30, 0xb1, 0x48
    jeq, jge, jgt, jset, ret = 0x15, 0x35, 0x25, 0x45, 0x06
    pkttype = (-0x1000 + 4) & 0xFFFFFFFF          # SKF_AD_OFF + SKF_AD_PKTTYPE
    prog: list[tuple] = []                         # (code, jt, jf, k), jumps by label
    if loopback:
        prog += [(ld_w, None, None, pkttype), (jeq, "drop", None, PACKET_OUTGOING)]
    prog += [(ld_h, None, None, 12), (jeq, None, "drop", 0x0800),     # IPv4
             (ld_b, None, None, 23), (jeq, None, "drop", 17),         # UDP
             (ld_h, None, None, 20), (jset, "drop", None, 0x1FFF),    # no later fragment
             (ldx_msh, None, None, ETH_HEADER),                       # X = IP header length
             (ld_h_ind, None, None, ETH_HEADER + 2),                  # UDP destination port
             (jge, None, "drop", lo), (jgt, "drop", None, hi),
             (ret, None, None, SNAPLEN), (ret, None, None, 0)]
    drop = len(prog) - 1

    def rel(i, label):
        return 0 if label is None else drop - i - 1

    return b"".join(struct.pack("HBBI", code, rel(i, jt), rel(i, jf), k)
                    for i, (code, jt, jf, k) in enumerate(prog))


def _attach_filter(sock: socket.socket, program: bytes) -> ctypes.Array:
    buf = ctypes.create_string_buffer(program, len(program))
    fprog = struct.pack("HL", len(program) // 8, ctypes.addressof(buf))
    sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)
    return buf      # the kernel copies it; kept alive until attached anyway


# ---------------------------------------------------------------------------- capture

@dataclass
class Capture:
    """Frames to `ports` on `interface` while the context is open: (time_ns, frame)."""
    interface: str
    ports: range
    keep_bytes: int = DEFAULT_KEEP_BYTES
    frames: list[tuple[int, bytes]] = field(default_factory=list)
    seen: int = 0
    kept_bytes: int = 0
    kernel_drops: int = 0
    error: str | None = None
    stop_ns: int | None = None    # when govkit decided to stop the point's processes
    own_ports: set[int] = field(default_factory=set)   # bound by the point's processes
    reader_scheduling: str = "normal"

    def mark_stop(self) -> None:
        if self.stop_ns is None:
            self.stop_ns = time.time_ns()

    def __enter__(self) -> Capture:
        check_capture(self.interface)
        loopback = interface_type(self.interface) == ARPHRD_LOOPBACK
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)   # receives nothing yet
        try:
            _attach_filter(sock, bpf_program(self.ports.start, self.ports.stop - 1, loopback))
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            try:
                sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RECV_BUFFER)
            except OSError:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECV_BUFFER)
            sock.bind((self.interface, ETH_P_ALL))          # filtered from the first frame
            sock.settimeout(0.1)
        except BaseException:
            sock.close()
            raise
        self._sock = sock
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, name="govkit-capture", daemon=True)
        self._thread.start()
        return self

    def _read(self) -> None:
        sock, stop = self._sock, self._stop
        self.reader_scheduling = raise_reader_priority()
        scan = 0.0
        try:
            while True:
                if time.monotonic() >= scan:
                    self.own_ports |= child_udp_ports()
                    scan = time.monotonic() + PORT_SCAN_S
                try:
                    self._store(*sock.recvmsg(SNAPLEN, ANCILLARY)[:2])
                except TimeoutError:
                    if stop.is_set():
                        return
                    continue
                if stop.is_set():
                    self._drain()
                    return
        except OSError as e:
            self.error = f"capture on {self.interface} stopped: {e}"

    def _drain(self) -> None:
        """Frames already queued when asked to stop belong to the point too."""
        self._sock.setblocking(False)
        while True:
            try:
                self._store(*self._sock.recvmsg(SNAPLEN, ANCILLARY)[:2])
            except OSError:      # EAGAIN: the queue is empty
                return

    def _store(self, frame: bytes, ancillary: list) -> None:
        self.seen += 1
        if self.kept_bytes + len(frame) <= self.keep_bytes:
            t = next((sec * 1_000_000_000 + ns for level, kind, data in ancillary
                      if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS
                      and len(data) >= 16 for sec, ns in [struct.unpack_from("qq", data)]),
                     None)
            self.frames.append((t or time.time_ns(), frame))
            self.kept_bytes += len(frame)

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        try:
            packets, drops = struct.unpack(
                "II", self._sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
            self.kernel_drops = drops
        except OSError:
            pass
        self._sock.close()

    def own_frames(self) -> list[tuple[int, bytes]]:
        """The frames the point's processes sent (all of them if their ports are unknown)."""
        if not self.own_ports:
            return self.frames
        return [(t, f) for t, f in self.frames if udp_source_port(f) in self.own_ports]

    def summary(self) -> dict:
        own = len(self.own_frames())
        return {"interface": self.interface, "ports": [self.ports.start, self.ports.stop - 1],
                "frames": self.seen, "kept": len(self.frames),
                "point_ports": sorted(self.own_ports), "point_frames": own,
                "other_senders_frames": len(self.frames) - own,
                "not_kept": self.seen - len(self.frames), "kept_bytes": self.kept_bytes,
                "kernel_drops": self.kernel_drops, "error": self.error,
                "reader_scheduling": self.reader_scheduling,
                "stopped_at_s": None if self.stop_ns is None or not self.frames else
                round((self.stop_ns - self.frames[0][0]) / 1e9, 3)}


def raise_reader_priority() -> str:
    """Put the calling thread (Linux: pid 0 is the thread) at SCHED_FIFO READER_PRIORITY,
    or leave it as it is where that is not permitted; says which."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(READER_PRIORITY))
    except (OSError, AttributeError):
        return "normal"
    return f"SCHED_FIFO {READER_PRIORITY}"


def _children(pid: str) -> set[str]:
    found: set[str] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found.update(f.read().split())
        except OSError:
            pass
    return found


def child_udp_ports(pid: int | None = None) -> set[int]:
    """Local UDP ports of `pid`'s (this process's) descendants, from /proc; read in each
    one's own network namespace. Descendants, not only children: a pong with several
    readers forks one process per reader (govkit.runners.readers), and their traffic is
    the point's own. Processes that vanish meanwhile are skipped."""
    children: set[str] = set()
    todo = [str(pid or os.getpid())]
    while todo:                 # each process visited once: linear in the process tree
        for child in _children(todo.pop()) - children:
            children.add(child)
            todo.append(child)
    ports: set[int] = set()
    for child in children:
        inodes = set()
        try:
            for fd in os.listdir(f"/proc/{child}/fd"):
                target = os.readlink(f"/proc/{child}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
        for table in ("udp", "udp6"):
            try:
                with open(f"/proc/{child}/net/{table}") as f:
                    for line in f.readlines()[1:]:
                        cols = line.split()
                        if len(cols) > 9 and cols[9] in inodes:
                            ports.add(int(cols[1].rsplit(":", 1)[1], 16))
            except (OSError, ValueError):
                continue
    return ports


# ------------------------------------------------------------------ frames to datagrams

def udp_source_port(f: bytes) -> int | None:
    if len(f) < ETH_HEADER + 20 or f[12:14] != b"\x08\x00":
        return None
    udp = ETH_HEADER + (f[ETH_HEADER] & 0x0F) * 4
    return int.from_bytes(f[udp:udp + 2], "big") if len(f) >= udp + 2 else None


def udp_datagrams(frames: list[tuple[int, bytes]]):
    """(time_ns, destination port, UDP payload, IP-fragmented?) of every IPv4/UDP frame; anything
    else (too short, not IPv4/UDP) is skipped; a lying UDP length is clamped to the frame.
    The payload of a fragmented datagram is only its first fragment (no reassembly: on `lo`
    nothing is fragmented). Never raises on malformed frames."""
    for t, f in frames:
        if len(f) < ETH_HEADER + 20 or f[12:14] != b"\x08\x00" or f[ETH_HEADER] >> 4 != 4:
            continue
        ihl = (f[ETH_HEADER] & 0x0F) * 4
        if ihl < 20 or f[ETH_HEADER + 9] != 17:
            continue
        udp = ETH_HEADER + ihl
        if len(f) < udp + 8:
            continue
        dport, length = struct.unpack_from("!HH", f, udp + 2)
        end = udp + length if 8 <= length <= len(f) - udp else len(f)
        yield t, dport, f[udp + 8:end], bool(f[ETH_HEADER + 6] & 0x20)   # More Fragments


# ------------------------------------------------------------------------------- pcap

def pcap_bytes(frames: list[tuple[int, bytes]]) -> bytes:
    """Classic libpcap (microsecond timestamps, LINKTYPE_ETHERNET): opens in Wireshark."""
    parts = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, SNAPLEN, LINKTYPE_ETHERNET)]
    for t, frame in frames:
        sec, usec = divmod(t // 1000, 1_000_000)
        parts.append(struct.pack("<IIII", sec, usec, len(frame), len(frame)))
        parts.append(frame)
    return b"".join(parts)
