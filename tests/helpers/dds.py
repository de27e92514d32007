"""Helpers for tests that run the real Cyclone DDS ddsperf with the security plugins."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from govkit.catalog.profiles import get_profile
from govkit.generate.bundle import BundleLog, ensure_bundle, ensure_pki
from govkit.runners.base import BenchPoint, Bundle, ProcessOutput, prepare
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


def with_file(bundle: Bundle, participant: str, **changes) -> Bundle:
    """The bundle with one participant's files replaced (e.g. permissions=other.p7s)."""
    parts = dict(bundle.participants)
    parts[participant] = replace(parts[participant], **changes)
    return replace(bundle, participants=parts)


def run_pair(bundle: Bundle, workdir: Path, mode: str = "latency", size: int = 32,
             duration: int = 1, domain: int | None = None
             ) -> tuple[DdsperfRunner, BenchPoint, dict[str, ProcessOutput]]:
    runner = DdsperfRunner()
    runner.check_installed()
    runner.init_wait_s = 4   # refusals show up at once; don't wait long for a peer
    point = BenchPoint(bundle.profile, mode, size, duration,
                       domain_id=domain if domain is not None else next_domain())
    outputs = run_processes(prepare(runner, point, bundle, workdir), runner.timeout(point))
    return runner, point, outputs


def cyclone_loads(bundle: Bundle, participant: str, workdir: Path, seconds: int = 1
                  ) -> tuple[bool, str]:
    """Whether Cyclone DDS accepts `participant`'s security files: one real ddsperf
    subscriber (idle, so cheap) with the bundle's configuration, for `seconds`. Cyclone
    validates the identity, governance and permissions when the participant is created;
    a refusal ends ddsperf at once with the plugin's error text."""
    runner = DdsperfRunner()
    runner.check_installed()
    workdir.mkdir(parents=True, exist_ok=True)
    config = runner.config_path(bundle, participant, workdir)
    config.write_text(runner.config_text(bundle, participant))
    result = subprocess.run([runner.executable, "-i", str(next_domain()), "-D", str(seconds),
                             "sub"], env={**os.environ, "CYCLONEDDS_URI": config.as_uri()},
                            capture_output=True, text=True, timeout=30 + seconds)
    return result.returncode == 0, result.stdout + result.stderr
