#!/usr/bin/env python3
"""`govkit lint` and `govkit validate` of one file, and `govkit --help`, against the
interpreter's own start-up (`python -c pass`), whole processes side by side (issue 47).

A pre-commit hook runs `govkit lint` on a few files per commit: its cost is the process's.
Each round runs, in an order reversed every other round: `python -c pass`, `govkit --help`,
`govkit lint` and `govkit validate` of one catalog governance and one permissions document
(made by `govkit generate` in a temporary directory), and `govkit lint` of 100 such files
in one call. It prints per command the median wall and CPU time (user + system of the
child) and each as a multiple of `python -c pass`'s, against the goals (lint and validate
≤ 4×, --help ≤ 3×); then the 100-file call against 100 one-file calls, run one after the
other once at the end (not extrapolated). The host (CPU model), the date and the load are
printed with them: the machine may be busy, so only ratios of interleaved runs are compared.

The commands run as a user runs them: the venv's `govkit` console script (its entry,
govkit/cli/fast.py, reads lint's and validate's usual command lines and answers --help
from its cache without importing typer), with the bytecode
compiled (`compileall`: a checkout run with PYTHONDONTWRITEBYTECODE set would otherwise
compile govkit on every run) and the leaf-type and help caches warm, in
a temporary XDG_CACHE_HOME; the first, cold run of each kind is reported apart.

    .venv/bin/python benchmarks/bench_lint_startup.py [--rounds 21] [--files 100]
        [--no-hundred-calls]
"""

from __future__ import annotations

import argparse
import compileall
import datetime as dt
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_startup import timed  # (wall, CPU) of one whole process

ROOT = Path(__file__).resolve().parents[1]
PROFILE = "sign_origin_data_encrypt"
GOALS = {"--help": 3.0, "lint": 4.0, "validate": 4.0}


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def govkit_command() -> list[str]:
    script = Path(sys.executable).with_name("govkit")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; sys.argv[0] = 'govkit'; "
                                  "from govkit.cli.main import main; main()"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--files", type=int, default=100, help="files in the one-call lint")
    ap.add_argument("--no-hundred-calls", dest="hundred_calls", action="store_false",
                    help="skip the one-file calls for each of the --files files at the end")
    args = ap.parse_args()
    compileall.compile_dir(ROOT / "govkit", quiet=1)
    load_before = os.getloadavg()
    govkit = govkit_command()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = {**os.environ, "XDG_CACHE_HOME": str(work / "cache"), "COLUMNS": "80"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run([*govkit, "generate", "--profile", PROFILE], cwd=work, env=env,
                       check=True, capture_output=True)
        governance = work / "build" / "governance" / f"{PROFILE}.xml"
        permissions = work / "build" / "permissions" / "pub.xml"
        many = work / "many"
        many.mkdir()
        for i in range(args.files):
            shutil.copy(governance if i % 2 else permissions, many / f"doc{i:03}.xml")
        files = sorted(str(p) for p in many.iterdir())
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "govkit --help": [*govkit, "--help"],
            "govkit lint governance": [*govkit, "lint", str(governance)],
            "govkit lint permissions": [*govkit, "lint", str(permissions)],
            "govkit validate governance": [*govkit, "validate", str(governance)],
            "govkit validate permissions": [*govkit, "validate", str(permissions)],
            f"govkit lint {args.files} files": [*govkit, "lint", *files],
        }
        cold = {name: timed(argv, env) for name, argv in cases.items()
                if name.startswith("govkit lint ") and "files" not in name}
        timed(cases["govkit --help"], env)      # the help cache made (typer renders it once)
        times: dict[str, list] = {name: [] for name in cases}
        for i in range(args.rounds):
            for name in (list(cases) if i % 2 else list(cases)[::-1]):
                times[name].append(timed(cases[name], env))
        hundred = None
        if args.hundred_calls:
            start = time.perf_counter()
            cpu = 0.0
            for f in files:
                cpu += timed([*govkit, "lint", f], env)[1]
            hundred = (time.perf_counter() - start, cpu)
        load = os.getloadavg()

    def med(name: str, k: int) -> float:
        return statistics.median(s[k] for s in times[name]) * 1e3

    base_wall, base_cpu = med("python -c pass", 0), med("python -c pass", 1)
    print(f"host: {platform.node()}, {cpu_model()}, {os.cpu_count()} CPUs; "
          f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC; load average at the start "
          f"{load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, at the end "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; Python {sys.version.split()[0]}")
    print(f"{args.rounds} rounds, interleaved (order reversed every other round); medians")
    print(f"{'command':<30} {'wall ms':>8} {'× pass':>7} {'CPU ms':>7} {'× pass':>7}  goal")
    for name in cases:
        wall, cpu = med(name, 0), med(name, 1)
        verb = name.split()[1] if name.startswith("govkit") else ""
        goal = GOALS.get(verb) if "files" not in name else None
        met = goal is not None and wall / base_wall <= goal
        verdict = "" if goal is None else f"≤ {goal:g}×: {'met' if met else 'MISSED'} (wall)"
        print(f"{name:<30} {wall:>8.0f} {wall / base_wall:>6.2f}× {cpu:>7.0f} "
              f"{cpu / base_cpu:>6.2f}×  {verdict}")
    for name, (wall, cpu) in cold.items():
        print(f"{name + ', cold cache':<30} {wall * 1e3:>8.0f}          {cpu * 1e3:>7.0f}"
              "           (first run: leaf types compiled with xmlschema and cached)")
    many_name = f"govkit lint {args.files} files"
    if hundred is not None:
        wall, cpu = med(many_name, 0), med(many_name, 1)
        print(f"{args.files} files: one call {wall:.0f} ms wall, {cpu:.0f} ms CPU (median); "
              f"{args.files} one-file calls {hundred[0] * 1e3:.0f} ms wall, "
              f"{hundred[1] * 1e3:.0f} ms CPU (once, after the rounds): one call costs "
              f"{wall / (hundred[0] * 1e3):.3f}× the wall and {cpu / (hundred[1] * 1e3):.3f}× "
              f"the CPU")


if __name__ == "__main__":
    main()
