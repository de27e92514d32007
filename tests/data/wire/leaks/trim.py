"""Cut a capture of `govkit wire-check --pcap` down to a test fixture (tests/wire/test_leaks.py).

    .venv/bin/python tests/data/wire/leaks/trim.py IN.pcap OUT.pcap [USER_FRAMES]

Keeps every frame to a discovery port (SPDP, SEDP, the handshake, key exchange: the
metatraffic ports of the RTPS port mapping) and the first USER_FRAMES (default 12) frames
to user-data ports, in capture order, untouched; drops the rest of the user traffic (tens
of thousands of frames that say the same). Frame numbers are those of OUT.
"""

from __future__ import annotations

import sys
from pathlib import Path

from govkit.wire.capture import pcap_bytes
from govkit.wire.leaks import domain_of
from govkit.wire.pcapfile import datagrams, read_pcap
from govkit.wire.rtps import PORTS


def main(source: str, target: str, user_frames: str = "12") -> None:
    frames = read_pcap(Path(source))
    grams = {d.frame: d for d in datagrams(frames)}
    domain = domain_of(list(grams.values()))
    kept, users = [], 0
    for f in frames:
        d = grams.get(f.number)
        traffic = PORTS.traffic(domain, d.dport) if d else "other"
        if traffic == "user":
            users += 1
            if users > int(user_frames):
                continue
        kept.append((f.time_ns, f.data))
    Path(target).write_bytes(pcap_bytes(kept))
    print(f"{target}: {len(kept)} of {len(frames)} frames")


if __name__ == "__main__":
    main(*sys.argv[1:])
