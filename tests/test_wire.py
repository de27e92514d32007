"""What each profile really does on the wire, read off the loopback interface.

The RTPS packets of one real ddsperf run per profile are captured with a raw socket on
`lo` (root only; skipped otherwise) and checked against the governance settings:
- rtps_protection_kind != NONE: every user-traffic RTPS message starts with an
  SRTPS_PREFIX submessage whose CryptoHeader says GMAC (SIGN) or GCM (ENCRYPT);
- the 1 KiB ddsperf payload (0xee filler) is readable on the wire unless something
  encrypts it (RTPS, submessage or data protection).
"""

from __future__ import annotations

import collections
import os
import socket
import struct
import threading

import pytest
from _dds import make_bundle, needs_cyclone, next_domain, run_pair
from _require import missing

from govkit.profiles import PROFILES

pytestmark = [needs_cyclone, pytest.mark.cyclone,
              pytest.mark.skipif(os.geteuid() != 0,
                                 reason=missing("root", "raw capture on lo needs root"))]

SRTPS_PREFIX = 0x33
# DDS Security 1.1, 9.5.2.1.1: CryptoTransformKind (last octet of transformation_kind)
GMAC = {1, 3}   # AES128_GMAC, AES256_GMAC
GCM = {2, 4}    # AES128_GCM, AES256_GCM
PLAINTEXT_PAYLOAD = b"\xee" * 256   # ddsperf's KS filler bytes
# Big messages that are legitimately sent unprotected whatever the governance: the
# authentication handshake (certificates) and, in Cyclone 0.10, a few SEDP messages sent
# before the remote participant's crypto tokens arrive. A handful per run at most.
MAX_UNPROTECTED_DISCOVERY = 20


class Capture:
    """RTPS messages sent to one domain's ports on lo, while the context is open."""

    def __init__(self, domain: int):
        base = 7400 + 250 * domain          # RTPS port mapping PB + DG * domain
        self.ports = range(base, base + 250)
        self.messages: list[bytes] = []
        self._sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(0x0800))
        self._sock.bind(("lo", 0))
        self._sock.settimeout(0.1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            try:
                frame = self._sock.recv(1 << 16)
            except TimeoutError:
                continue
            if len(frame) < 42 or frame[12:14] != b"\x08\x00" or frame[23] != 17:
                continue
            udp = 14 + (frame[14] & 0x0F) * 4
            (dport,) = struct.unpack("!H", frame[udp + 2:udp + 4])
            payload = frame[udp + 8:]
            if dport in self.ports and payload[:4] == b"RTPS":
                self.messages.append(payload)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._sock.close()


def _first_submessage(msg: bytes) -> tuple[int, bytes]:
    return msg[20], msg[24:]


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_protection_on_the_wire_matches_the_governance(tmp_path, profile):
    bundle = make_bundle(tmp_path, profile.name)
    domain = next_domain()
    with Capture(domain) as cap:
        runner, point, outputs = run_pair(bundle, tmp_path / "cfg", size=1024, domain=domain)
    runner.parse(point, outputs)   # the run itself succeeded
    big = [m for m in cap.messages if len(m) > 1024]   # ping/pong data, not discovery
    assert len(big) > 100, f"captured only {len(big)} data messages"

    kinds = collections.Counter()
    for m in big:
        sub_id, body = _first_submessage(m)
        kinds["srtps" if sub_id == SRTPS_PREFIX else "plain"] += 1
        if sub_id == SRTPS_PREFIX:
            kinds[f"transform{body[3]}"] += 1
    rtps = profile.rtps_protection_kind
    if rtps in (None, "NONE"):
        assert kinds["srtps"] == 0, kinds
    else:
        assert kinds["plain"] <= MAX_UNPROTECTED_DISCOVERY, kinds   # all data is protected
        expected = GCM if rtps == "ENCRYPT" else GMAC
        assert sum(kinds[f"transform{k}"] for k in expected) == kinds["srtps"], kinds

    readable = sum(PLAINTEXT_PAYLOAD in m for m in big)
    encrypted = "ENCRYPT" in (rtps, profile.data_protection_kind) or \
        (profile.metadata_protection_kind or "").startswith("ENCRYPT")
    if encrypted:
        assert readable == 0, f"{readable} of {len(big)} messages carry a readable payload"
    else:
        assert readable > 0.9 * len(big), f"only {readable} of {len(big)} readable"
