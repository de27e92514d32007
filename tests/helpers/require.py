"""Prerequisites that some tests need, and GOVKIT_REQUIRE, which turns their skips into failures.

A test that needs something the machine may lack (Cyclone's ddsperf, root, Chromium, the
../shared reference tree) skips with a reason made by :func:`missing`, which names the
prerequisite. Locally that is convenient; in CI a skip would let a green run hide a missing
feature, so `.ci/run` sets ``GOVKIT_REQUIRE=cyclone,root,browser,shared`` and conftest.py
reports every such skip as a failure instead.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

PREREQUISITES = {
    "cyclone": "Cyclone DDS ddsperf with the DDS Security plugins",
    "root": "root privileges (raw packet capture on lo)",
    "browser": "headless Chromium",
    "shared": "the ../shared reference corpus and seeds (or GOVKIT_SHARED)",
    "tshark": "tshark (Wireshark's RTPS dissector, to cross-check the wire counts)",
    "sshd": "OpenSSH server and client (the --hosts test)",
    "fastdds": "g++ and libfastrtps-dev, to build govkit's Fast DDS program",
    "softhsm": "softhsm2 and libengine-pkcs11-openssl (keys in a token, for Fast DDS)",
    "cyclone11": "cmake, gcc, libssl-dev and ../shared/vendor's Cyclone DDS 11.0.1 source, to "
                 "build Cyclone DDS 11.0.1 with its security plugins",
}
ENV = "GOVKIT_REQUIRE"
_TAG_RE = re.compile(r"\[missing prerequisite: ([a-z][a-z0-9]*)\]")


def missing(prerequisite: str, reason: str) -> str:
    """The skip reason for a test that cannot run without `prerequisite`."""
    if prerequisite not in PREREQUISITES:
        raise ValueError(f"unknown prerequisite {prerequisite!r}")
    return f"[missing prerequisite: {prerequisite}] {reason}"


def prerequisite_of(reason: str) -> str | None:
    m = _TAG_RE.search(reason)
    return m.group(1) if m else None


def required() -> set[str]:
    """The prerequisites GOVKIT_REQUIRE lists; ValueError for a name it does not know."""
    names = {n.strip() for n in os.environ.get(ENV, "").split(",") if n.strip()}
    unknown = names - set(PREREQUISITES)
    if unknown:
        raise ValueError(f"{ENV}: unknown prerequisite(s) {', '.join(sorted(unknown))}; "
                         f"known: {', '.join(PREREQUISITES)}")
    return names


def shared_dir() -> Path:
    """The reference corpus and seeds (outside the repository); may not exist."""
    return Path(os.environ.get("GOVKIT_SHARED") or Path(__file__).resolve().parents[3] / "shared")
