"""Which processes a test's own govkit left running, told apart from everyone else's.

A check by command line (`pgrep -f cyclone_perf`) also finds the processes of another run
on the same machine (a user's benchmark, a second test session) and fails a test that did
nothing wrong. Each test run of govkit gets a mark in its environment instead, which every
process it starts inherits (runner programs, CPU spinners), and only those are counted.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

MARK = "GOVKIT_TEST_MARK"


def marked_env() -> tuple[dict[str, str], str]:
    """govkit's environment with a fresh mark, and the mark."""
    mark = uuid.uuid4().hex
    return {**os.environ, MARK: mark}, mark


def left_running(mark: str) -> list[str]:
    """The command lines of the live processes that carry `mark` (zombies excluded)."""
    wanted = f"{MARK}={mark}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if wanted not in (proc / "environ").read_bytes().split(b"\0"):
                continue
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            if state != "Z":
                found.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(
                    "utf-8", "replace").strip())
        except OSError:          # gone meanwhile, or not ours to read
            continue
    return found
