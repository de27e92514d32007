#!/usr/bin/env python3
"""What govkit's CPU spinners cost a normally scheduled runner, by where the runner runs.
Prints samples/s and ratios, alternated per round.

A ddsperf `pub size S` into `ddsperf sub` pair (pub on CPU 0, sub on CPU 1, no security,
normal scheduling, a private domain) is run, in turn:
  own-session   in sessions of their own (setsid: what govkit did before 2026-12-04), beside
                govkit's SCHED_IDLE spinners on both CPUs (govkit.bench.awake);
  govkit        started by govkit.runners.processes.spawn (govkit's session, so its CFS
                autogroup), beside the same spinners;
  no-spinner    started the same way, with no spinner at all (--allow-idle).
With sched_autogroup_enabled = 1 the first loses about half of each CPU to the spinners;
the goal is govkit / no-spinner close to 1 (what is left is what keeping the CPUs out of
idle halt itself costs a throughput pair).

    .venv/bin/python benchmarks/spinners.py [--size 1024] [--rounds 3] [--seconds 4]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess

from govkit.bench.awake import AwakeCpus
from govkit.runners.base import ProcessSpec
from govkit.runners.processes import end_processes, spawn

RATE = re.compile(r"rate (?P<rate>[\d.]+) kS/s")
QUIET = "<Tracing><Verbosity>none</Verbosity></Tracing>"


def pair(how: str, size: int, seconds: int) -> float:
    """The mean of the sub's per-second rates after its first second (kS/s)."""
    domain = str(100 + os.getpid() % 100)
    env = {"CYCLONEDDS_URI": QUIET}
    sub = ProcessSpec("sub", ["ddsperf", "-D", str(seconds), "-i", domain, "sub"], env, cpu=1)
    pub = ProcessSpec("pub", ["ddsperf", "-D", str(seconds + 1), "-i", domain, "pub", "size",
                              str(size)], env, cpu=0)
    with AwakeCpus(() if how == "no-spinner" else (0, 1)):
        if how == "own-session":
            procs = [subprocess.Popen(["taskset", "-c", str(s.cpu), *s.argv],
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      env={**os.environ, **s.env}, start_new_session=True)
                     for s in (sub, pub)]
        else:
            procs = [spawn(s, stderr=subprocess.DEVNULL) for s in (sub, pub)]
        out = procs[0].communicate()[0].decode()
        end_processes(procs[1:], grace_s=3)
    rates = [float(m["rate"]) for m in RATE.finditer(out)][1:]
    return statistics.mean(rates) if rates else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=4)
    a = ap.parse_args()
    ways = ("own-session", "govkit", "no-spinner")
    got: dict[str, list[float]] = {w: [] for w in ways}
    print(f"load average before: {open('/proc/loadavg').read().split()[0]}")
    for r in range(a.rounds):
        for how in ways if r % 2 == 0 else reversed(ways):
            got[how].append(pair(how, a.size, a.seconds))
            print(f"round {r} {how:12} {got[how][-1]:8.1f} kS/s", flush=True)
    base = statistics.median(got["no-spinner"])
    for how in ways:
        m = statistics.median(got[how])
        print(f"{how:12} median {m:8.1f} kS/s  × no-spinner {m / base:.2f}")
    print(f"load average after: {open('/proc/loadavg').read().split()[0]}")


if __name__ == "__main__":
    main()
