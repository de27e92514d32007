"""Helpers for tests that run the real Cyclone DDS ddsperf with the security plugins."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest

from govkit.catalog.profiles import get_profile
from govkit.generate.bundle import BundleLog, ensure_bundle, ensure_pki
from govkit.runners.base import (
    BenchPoint,
    Bundle,
    ParticipantFiles,
    ProcessOutput,
    prepare,
)
from govkit.runners.ddsperf import DdsperfRunner, find_security_plugins
from govkit.runners.processes import run_processes
from helpers.require import missing

needs_cyclone = pytest.mark.skipif(
    shutil.which("ddsperf") is None or find_security_plugins() is None,
    reason=missing("cyclone", "Cyclone DDS ddsperf / security plugins not installed "
                              "(run `bash .ci/setup`)"))

# Private domain ids per test process, so parallel runs and strays cannot meet.
_domains = itertools.count(100 + os.getpid() % 60)


def next_domain() -> int:
    return next(_domains) % 230 + 1


def make_bundle(root: Path, profile: str) -> Bundle:
    log = BundleLog()
    pki = ensure_pki(root / "pki", log)
    return ensure_bundle(get_profile(profile), pki, root / "build", "ddsperf", log)


def pair_bundle(runner, root: Path, profile: str) -> tuple[Bundle, Path]:
    """A signed bundle of `profile` and a work directory holding `runner`'s configuration
    files for a latency pair: what a long-lived pair of govkit's programs starts from."""
    bundle = make_bundle(root, profile)
    work = root / "work"
    work.mkdir(exist_ok=True)
    for path, text in runner.configs(BenchPoint(bundle.profile, "latency", 32, 1), bundle,
                                     work).items():
        path.write_text(text)
    return bundle, work


def with_file(bundle: Bundle, participant: str, **changes) -> Bundle:
    """The bundle with one participant's files replaced (e.g. permissions=other.p7s)."""
    parts = dict(bundle.participants)
    parts[participant] = replace(parts[participant], **changes)
    return replace(bundle, participants=parts)


def run_pair(bundle: Bundle, workdir: Path, mode: str = "latency", size: int = 32,
             duration: int = 1, domain: int | None = None,
             runner: DdsperfRunner | None = None
             ) -> tuple[DdsperfRunner, BenchPoint, dict[str, ProcessOutput]]:
    """A real ddsperf pair with the bundle: the system's Cyclone DDS, or `runner`'s (e.g.
    one given an install in a prefix, govkit.runners.dds_prefix)."""
    runner = runner or DdsperfRunner()
    runner.check_installed()
    # the runner's own wait for a peer (10 s), not a shorter one: at 4 s a secured pair
    # under two busy loops missed its match once in ten (2026-12-05), and a refusal ends
    # the refused process at once whatever the wait (the refusal tests took no longer)
    point = BenchPoint(bundle.profile, mode, size, duration,
                       domain_id=domain if domain is not None else next_domain())
    outputs = run_processes(prepare(runner, point, bundle, workdir), runner.timeout(point))
    return runner, point, outputs


def cyclone_loads(bundle: Bundle, participant: str, workdir: Path, seconds: int = 1,
                  runner: DdsperfRunner | None = None) -> tuple[bool, str]:
    """Whether Cyclone DDS (the system's, or `runner`'s) accepts `participant`'s security
    files: one real ddsperf subscriber (idle, so cheap) with the bundle's configuration, for
    `seconds`. Cyclone validates the identity, governance and permissions when the
    participant is created; a refusal ends ddsperf at once with the plugin's error text."""
    runner = runner or DdsperfRunner()
    runner.check_installed()
    workdir.mkdir(parents=True, exist_ok=True)
    config = runner.config_path(bundle, participant, workdir)
    config.write_text(runner.config_text(bundle, participant))
    result = subprocess.run([runner.executable, "-i", str(next_domain()), "-D", str(seconds),
                             "sub"], env={**os.environ, "CYCLONEDDS_URI": config.as_uri()},
                            capture_output=True, text=True, timeout=30 + seconds)
    return result.returncode == 0, result.stdout + result.stderr


# ---------------------------------------------------------------- one named topic (ROS 2)


def cyclone_program() -> str:
    """govkit's Cyclone program (built once, cached); skips (or with GOVKIT_REQUIRE=cyclone
    fails) where it cannot be built."""
    from govkit.common.errors import GovkitError
    from govkit.runners.cyclone_build import ensure_built
    try:
        return str(ensure_built())
    except GovkitError as e:
        pytest.skip(missing("cyclone", f"Cyclone program not available ({e})"))


def cyclone_runner():
    """A checked CycloneRunner with govkit's program built (skips as cyclone_program)."""
    from govkit.runners.cyclone import CycloneRunner
    cyclone_program()
    runner = CycloneRunner()
    runner.check_installed()
    return runner


def _config(files: ParticipantFiles, workdir: Path) -> Path:
    """A Cyclone configuration with `files` (as govkit's runners write it)."""
    bundle = Bundle(get_profile("rtps_sign"), {"pub": files})
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "cyclone.xml"
    path.write_text(DdsperfRunner().config_text(bundle, "pub"))
    return path


def start_topic(argv: list[str], env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})


def finish(proc: subprocess.Popen, timeout: float = 30) -> tuple[int | None, str]:
    """Close its stdin (the programs stop there), and its exit code and output."""
    try:
        out, err = proc.communicate(input="", timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return None, out + err
    return proc.returncode, out + err


def wait_for_line(proc: subprocess.Popen, word: str, timeout: float = 60) -> list[str]:
    """Lines of proc's stdout until one starts with `word` (or the process ends, or the
    timeout): the event the caller waits on."""
    import selectors
    seen: list[str] = []
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not sel.select(timeout=max(0.0, deadline - time.monotonic())):
                break
            line = proc.stdout.readline()
            if not line:
                break
            seen.append(line)
            if line.startswith(word):
                break
    return seen


def cyclone_topic_pair(pub: ParticipantFiles, sub: ParticipantFiles, topic: str,
                       workdir: Path, domain: int, wait_s: int = 30) -> dict[str, tuple]:
    """A real Cyclone DDS writer (pub's files) and reader (sub's files) on `topic`, each its
    own process with only that endpoint; returns role -> (exit code, output, received)."""
    exe = cyclone_program()
    procs = {}
    for role, files in (("sub", sub), ("pub", pub)):
        env = {"CYCLONEDDS_URI": _config(files, workdir / role).as_uri()}
        procs[role] = start_topic([exe, role, str(domain), str(wait_s), topic], env)
    lines = wait_for_line(procs["sub"], "received 10", timeout=wait_s + 30)
    results = {}
    for role in ("pub", "sub"):
        code, text = finish(procs[role])
        results[role] = (code, (''.join(lines) if role == "sub" else "") + text)
    results["received"] = any(x.startswith("received 10") for x in lines)
    return results


def cyclone_topic_alone(files: ParticipantFiles, role: str, topic: str, workdir: Path,
                        domain: int) -> tuple[int | None, str]:
    """One endpoint and no peer: what access control says when it is created."""
    env = {"CYCLONEDDS_URI": _config(files, workdir).as_uri()}
    proc = start_topic([cyclone_program(), role, str(domain), "3", topic], env)
    return finish(proc)
