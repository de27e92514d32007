#!/usr/bin/env python3
"""`govkit --help` start-up: this checkout against another commit, side by side.

The other commit's `govkit/` is exported (`git archive`) into a temporary directory and run
from there with the same interpreter, so both sides share the venv, the disk cache and the
machine's load. Each round runs every command on both sides and `python -c pass`, in an
order that alternates per round. It prints, per command, the median wall time and the
median CPU time (user + system of the child: what a loaded machine inflates least) of each
side, and this checkout's as a ratio of the other's. The goal: `govkit --help` ≤ 150 ms on
the 2-core VM, and a ratio not above 1.

    .venv/bin/python benchmarks/bench_startup.py [--against origin/main] [--rounds 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = (["--help"], ["bench", "--help"], ["lint", "--help"], ["pki", "status", "--help"],
            ["generate", "--help"])
# What the console script runs (the venv's `govkit` is bound to this checkout).
MAIN = "import sys; sys.argv[0] = 'govkit'; from govkit.cli.main import main; main()"


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of `argv`."""
    start = time.perf_counter()
    # Not from the checkout: `python -c` puts the working directory first on sys.path, and
    # from the repository's root both sides would import this checkout's govkit.
    proc = subprocess.Popen(argv, env=env, cwd=tempfile.gettempdir(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{argv} exited {proc.returncode}: {proc.stderr.read().decode()}")
    proc.stderr.close()
    return wall, usage.ru_utime + usage.ru_stime


def export(ref: str, into: Path) -> Path:
    """`govkit/` of commit `ref`, unpacked under `into`."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "govkit"],
                             check=True, capture_output=True).stdout
    tar = into / "govkit.tar"
    tar.write_bytes(archive)
    with tarfile.open(tar) as t:
        t.extractall(into, filter="data")
    return into


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", default="origin/main", help="the commit to compare with")
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args()
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.against],
                         check=True, capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        sides = {"this": ROOT, rev: export(args.against, Path(tmp))}
        envs = {name: {**os.environ, "PYTHONPATH": str(path)} for name, path in sides.items()}
        cases = [(name, tuple(cmd)) for cmd in COMMANDS for name in sides]
        times: dict = {case: [] for case in cases}
        bare = []
        for i in range(args.rounds):
            for case in (cases if i % 2 else cases[::-1]):
                name, cmd = case
                times[case].append(timed([sys.executable, "-c", MAIN, *cmd], envs[name]))
            bare.append(timed([sys.executable, "-c", "pass"], os.environ))
        load = os.getloadavg()

    def med(samples, k):
        return statistics.median(s[k] for s in samples) * 1e3

    print(f"{args.rounds} rounds alternated; load average {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f}; python -c pass: wall {med(bare, 0):.0f} ms, CPU {med(bare, 1):.0f} ms")
    print(f"{'command':<24} {'this wall':>10} {rev + ' wall':>14} {'ratio':>6}   "
          f"{'this CPU':>9} {rev + ' CPU':>13} {'ratio':>6}")
    for cmd in COMMANDS:
        new, old = times[("this", tuple(cmd))], times[(rev, tuple(cmd))]
        print(f"{'govkit ' + ' '.join(cmd):<24} {med(new, 0):>8.0f}ms {med(old, 0):>12.0f}ms "
              f"{med(new, 0) / med(old, 0):>6.2f}   {med(new, 1):>7.0f}ms {med(old, 1):>11.0f}ms "
              f"{med(new, 1) / med(old, 1):>6.2f}")


if __name__ == "__main__":
    main()
