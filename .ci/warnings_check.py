"""Fail on any warning govkit raises or prints with the dependencies of this venv.

1. Every govkit module is imported with warnings attributed to govkit's code turned into
   errors (a deprecation of something govkit calls at import time).
2. The commands a new user runs first (the README's) run in a scratch directory; any line of
   their stderr naming a Warning fails the check: it is what a user would see.
Run by .ci/newest in a venv of the newest releases; exit 1 with the offending lines."""

from __future__ import annotations

import importlib
import pkgutil
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

GOVKIT = sys.argv[1]
REPO = Path(__file__).resolve().parent.parent


def import_everything() -> list[str]:
    import govkit

    failures = []
    with warnings.catch_warnings():
        warnings.filterwarnings("error", module="govkit")
        for mod in pkgutil.walk_packages(govkit.__path__, "govkit."):
            if mod.name.endswith("__main__"):
                continue
            try:
                importlib.import_module(mod.name)
            except Warning as w:
                failures.append(f"import {mod.name}: {type(w).__name__}: {w}")
    return failures


COMMANDS = [
    ["--help"],
    ["generate", "--profile", "sign_origin_data_encrypt", "--sign"],
    ["validate", "build/governance/sign_origin_data_encrypt.xml", "build/permissions/pub.xml"],
    ["verify", "build/governance/sign_origin_data_encrypt.p7s", "build/permissions/pub.p7s"],
    ["lint", "build/governance/sign_origin_data_encrypt.xml"],
    ["pki", "status"],
    ["report", "run"],   # a copy of a committed run (tests/data/report/rotation)
]


def run_commands() -> list[str]:
    failures = []
    shutil.copytree(REPO / "tests/data/report/rotation", "run")
    for args in COMMANDS:
        done = subprocess.run([GOVKIT, *args], capture_output=True, text=True, timeout=300)
        noisy = [line for line in done.stderr.splitlines() if "Warning" in line]
        if done.returncode != 0 or noisy:
            failures.append(f"govkit {' '.join(args)}: exit {done.returncode}; "
                            + "; ".join(noisy or done.stderr.splitlines()[-3:]))
    return failures


if __name__ == "__main__":
    failures = import_everything() + run_commands()
    for line in failures:
        print(f"newest dependencies: {line}", file=sys.stderr)
    print(f"newest dependencies: {len(COMMANDS)} commands and every govkit module, "
          f"{'no warning' if not failures else f'{len(failures)} failure(s)'}")
    sys.exit(1 if failures else 0)
