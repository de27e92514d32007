"""Helpers for tests that run govkit's Fast DDS program with the real security plugins.

The program is built (once, cached) by govkit.runners.fastdds_build. Where g++ or Fast DDS's
headers are missing the tests skip, unless GOVKIT_REQUIRE names `fastdds`: then they fail,
so that CI cannot go green without having run them.
"""

from __future__ import annotations

import os
import re
import selectors
import subprocess
import time
from functools import cache
from pathlib import Path

import pytest

from govkit.catalog.profiles import get_profile
from govkit.common.errors import GovkitError
from govkit.runners.base import (
    BenchPoint,
    Bundle,
    ParticipantFiles,
    ProcessOutput,
    prepare,
)
from govkit.runners.fastdds import FastddsRunner
from govkit.runners.fastdds_build import ensure_built
from govkit.runners.processes import run_processes
from helpers.dds import next_domain
from helpers.require import missing


@cache
def _program() -> tuple[str | None, str | None]:
    try:
        return str(ensure_built()), None
    except GovkitError as e:
        return None, str(e)


def require_fastdds() -> str:
    """The built program; skips (or, with GOVKIT_REQUIRE=fastdds, fails) without it."""
    path, why = _program()
    if path is None:
        pytest.skip(missing("fastdds", f"Fast DDS program not available ({why})"))
    return path


def runner() -> FastddsRunner:
    r = FastddsRunner()
    r.executable = require_fastdds()
    r.init_wait_s = 6   # refusals show up at once; don't wait long for a peer
    return r


def run_pair(bundle: Bundle, workdir: Path, mode: str = "latency", size: int = 32,
             duration: int = 1, domain: int | None = None, env: dict | None = None
             ) -> tuple[FastddsRunner, BenchPoint, dict[str, ProcessOutput]]:
    """Two real fastdds_perf processes for one point, as `govkit bench` runs them."""
    r = runner()
    point = BenchPoint(bundle.profile, mode, size, duration,
                       domain_id=domain if domain is not None else next_domain())
    specs = prepare(r, point, bundle, workdir)
    for spec in specs:
        spec.env.update(env or {})
    return r, point, run_processes(specs, r.timeout(point))


def measure(bundle: Bundle, workdir: Path, **kwargs):
    """run_pair + parse, on another domain if a stranger (another test run on this shared
    machine) turned up on the first one."""
    for attempt in range(3):
        r, point, outputs = run_pair(bundle, workdir / str(attempt), **kwargs)
        try:
            return r.parse(point, outputs), outputs
        except Exception as e:  # noqa: BLE001 - only a stranger is retried
            if "foreign participant" not in str(e) or attempt == 2:
                raise
            kwargs.pop("domain", None)
    raise AssertionError("unreachable")


def everything(outputs: dict[str, ProcessOutput]) -> str:
    return "\n".join(o.stdout + o.stderr for o in outputs.values())


# ---------------------------------------------------------------- one named topic (ROS 2)


def _properties(files: ParticipantFiles, workdir: Path) -> Path:
    bundle = Bundle(get_profile("rtps_sign"), {"pub": files})
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "fastdds.properties"
    path.write_text(FastddsRunner().properties_text(bundle, "pub"))
    return path


def fastdds_topic_pair(pub: ParticipantFiles, sub: ParticipantFiles, topic: str,
                       workdir: Path, domain: int, seconds: int = 2) -> dict[str, tuple]:
    """A real Fast DDS writer (pub's files) and reader (sub's files) on `topic`
    (fastdds_perf pub/sub -t TOPIC, only that endpoint each, default partition); returns
    role -> (exit code, output), and the samples the reader counted."""
    exe = require_fastdds()
    procs = {}
    for role, files in (("sub", sub), ("pub", pub)):
        argv = [exe, "-i", str(domain), "-w", "30", "-D", str(seconds), "-s",
                str(_properties(files, workdir / role)), "-t", topic, role]
        procs[role] = subprocess.Popen(argv + (["64"] if role == "pub" else []),
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True)
    results: dict[str, tuple] = {}
    for role in ("sub", "pub"):
        try:
            out, err = procs[role].communicate(timeout=seconds + 60)
        except subprocess.TimeoutExpired:
            procs[role].kill()
            out, err = procs[role].communicate()
        results[role] = (procs[role].returncode, out + err)
    counts = [int(m) for m in re.findall(r"throughput t \S+ size \d+ count (\d+)",
                                         results["sub"][1])]
    results["received"] = sum(counts)
    return results


def fastdds_topic_alone(files: ParticipantFiles, role: str, topic: str, workdir: Path,
                        domain: int) -> tuple[int | None, str]:
    exe = require_fastdds()
    argv = [exe, "-i", str(domain), "-w", "3", "-D", "1", "-s",
            str(_properties(files, workdir)), "-t", topic, role] + \
        (["64"] if role == "pub" else [])
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout + done.stderr


def read_until(stream, text: str, timeout: float) -> str:
    """What a child process writes to `stream` (its stdout or stderr pipe), up to and
    including the first chunk holding `text`: the event a test waits for, never a sleep.
    `timeout` only bounds a failure (AssertionError with what was read); the stream's own
    buffer is bypassed, so communicate() reads on from there."""
    fd, got, wanted = stream.fileno(), b"", text.encode()
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while wanted not in got:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {text!r} within {timeout:g} s; read {got[-2000:]!r}")
            if sel.select(left):
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise AssertionError(f"the stream ended before {text!r}; read "
                                         f"{got[-2000:]!r}")
                got += chunk
    return got.decode(errors="replace")
