"""The machine a run measures on: where the two runner processes run (`pinning`), whether
latency repeats get real-time priority (`realtime_note`, probing `chrt`), and what
results.json records about it (`environment`: versions, CPU, kernel).

Why apart: these ask the operating system, not the options; the schedule, the wire
phase and every repeat read them, and a run's figures mean something only next to them.
"""

from __future__ import annotations

import os
import platform
import subprocess
from dataclasses import dataclass
from pathlib import Path

from govkit import __version__


@dataclass(frozen=True)
class Pinning:
    cpus: tuple[int, int] | None          # (pub, sub)
    orchestrator: list[int] | None        # CPUs govkit itself moves to, if any are left
    note: str
    realtime: bool = False                # latency repeats SCHED_FIFO (realtime_note)

    def to_json(self) -> dict | None:
        return None if self.cpus is None else {"pub": self.cpus[0], "sub": self.cpus[1]}


def pinning(pin: bool) -> Pinning:
    """pub and sub on two different CPUs, govkit on the others (if the machine has any)."""
    if not pin:
        return Pinning(None, None, "unpinned (--no-pin)")
    usable = sorted(os.sched_getaffinity(0))
    if len(usable) < 2:
        return Pinning(None, None, "only one usable CPU: running unpinned")
    rest = usable[2:] or None
    where = (f"govkit on CPU {','.join(map(str, rest))}" if rest
             else "govkit shares them (2 CPUs), idle while a point runs")
    return Pinning((usable[0], usable[1]), rest,
                   f"pub on CPU {usable[0]}, sub on CPU {usable[1]}, {where}")


def realtime_note(wanted: bool, modes: list[str], dry_run: bool) -> tuple[bool, str]:
    """Whether latency repeats run SCHED_FIFO, and why (or why not).

    Pinning does not keep other programs off the two CPUs; real-time priority does: on the
    2-core VM, with other work running, rtps_sign 32 B gave 51–68 µs in five SCHED_FIFO
    repeats against 62–116 µs in five normal ones (docs/background/method.md). Only latency
    repeats: ping and pong block between messages, whereas a throughput publisher sends
    as fast as it can and would take its CPU from everything else.
    """
    if not wanted:
        return False, "normal scheduling (--no-realtime)"
    if "latency" not in modes:
        return False, "normal scheduling (real-time applies to latency repeats only)"
    if not dry_run:
        try:
            ok = subprocess.run(["chrt", "-f", "1", "true"], capture_output=True,
                                timeout=10).returncode == 0
        except (OSError, subprocess.SubprocessError):
            ok = False
        if not ok:
            return False, ("normal scheduling: SCHED_FIFO not permitted here (needs root, "
                           "CAP_SYS_NICE or an rtprio limit, and `chrt` from util-linux)")
    return True, "latency repeats SCHED_FIFO priority 1 (chrt), throughput repeats normal"


# The CPU's instructions that make DDS Security's cryptography cheap, as results.json's
# environment.cpu_crypto names them, with the /proc/cpuinfo flag that says each is there:
# AES-GCM (AES-NI, and carry-less multiply for GHASH; VAES and VPCLMULQDQ their AVX-512
# forms), SHA-256 (the handshake, the signatures), AVX-512. A ratio measured on one CPU
# is that CPU's (issue 37: rtps_sign 1.25× on one host, 1.74× on another).
CPU_CRYPTO_FLAGS = {
    "flags": {"AES-NI": "aes", "PCLMULQDQ": "pclmulqdq", "VAES": "vaes",
              "VPCLMULQDQ": "vpclmulqdq", "SHA": "sha_ni", "AVX-512": "avx512f"},   # x86-64
    "Features": {"AES": "aes", "PMULL": "pmull", "SHA-1": "sha1", "SHA-2": "sha2",
                 "SHA-512": "sha512", "SVE": "sve"},                                 # arm64
}


def cpu_facts(cpuinfo: str) -> dict:
    """The CPU's model name and its crypto extensions (CPU_CRYPTO_FLAGS: name → present)
    from the text of /proc/cpuinfo; either None where the text does not say."""
    model, crypto = None, None
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and model is None:
            model = value.strip()
        elif key in CPU_CRYPTO_FLAGS and crypto is None:
            present = set(value.split())
            crypto = {name: flag in present for name, flag in CPU_CRYPTO_FLAGS[key].items()}
    return {"cpu": model, "cpu_crypto": crypto}


def environment(extra: dict | None = None) -> dict:
    """govkit, OpenSSL and Python versions, CPU (its crypto extensions) and kernel (plus
    runner versions), and the awake/idle measurement of govkit calibrate here."""
    from govkit.bench.calibration import measured_idle_vs_awake
    try:
        facts = cpu_facts(Path("/proc/cpuinfo").read_text())
    except OSError:
        facts = {"cpu": None, "cpu_crypto": None}
    cpu = facts["cpu"] or platform.processor() or platform.machine()
    try:
        openssl = subprocess.run(["openssl", "version"], capture_output=True, text=True,
                                 timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        openssl = "unknown"
    uname = platform.uname()
    return {"govkit": __version__, "openssl": openssl, "python": platform.python_version(),
            "cpu": cpu, "cpu_crypto": facts["cpu_crypto"], "cores": os.cpu_count(),
            "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
            else os.cpu_count(),
            "kernel": f"{uname.system} {uname.release} {uname.machine}",
            # the most a socket buffer may be (a runner asks more for large samples: 1 MiB)
            "socket_buffers": {k: _sysctl(f"net/core/{k}") for k in ("rmem_max", "wmem_max")},
            # how far idle CPUs move the absolute latency, where govkit calibrate measured
            # it on this same machine identity; null: not measured here
            "idle_vs_awake": measured_idle_vs_awake(),
            **(extra or {})}


def _sysctl(name: str) -> int | None:
    try:
        return int(Path(f"/proc/sys/{name}").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
