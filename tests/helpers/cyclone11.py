"""Cyclone DDS 11.0.1 built from ../shared/vendor (govkit.runners.cyclone_source_build),
cached per machine: the prefix the tests of a second runtime use."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from govkit.runners import cyclone_source_build as source_build
from helpers.require import missing, shared_dir

VERSION = "11.0.1"


def tarball() -> Path:
    return shared_dir() / "vendor" / source_build.TARBALL_NAME


def cyclone11_prefix() -> Path:
    """The prefix of Cyclone DDS 11.0.1 (built on first use, many minutes on 2 cores); a skip
    naming the prerequisite (`cyclone11`) where the build cannot run here."""
    absent = [what for what, ok in (
        (str(tarball()), tarball().is_file()), ("cmake", shutil.which("cmake")),
        ("gcc", shutil.which(os.environ.get("CC") or "gcc")),
        ("libssl-dev", Path("/usr/include/openssl/ssl.h").is_file())) if not ok]
    if absent:
        pytest.skip(missing("cyclone11", f"cannot build Cyclone DDS 11.0.1: no "
                                         f"{', '.join(absent)} (run `bash .ci/setup`)"))
    # A failed build is a failure, not a skip: everything it needs is here.
    return source_build.ensure_built(tarball())
