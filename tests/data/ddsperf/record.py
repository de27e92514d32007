"""Record the ddsperf outputs the unit tests read (real runs, some deliberately disturbed).

    .venv/bin/python tests/data/ddsperf/record.py [NAME...]

Each recording is one real pair of ddsperf processes started the way `govkit bench` starts
them (pinned, govkit's configuration and signed bundle); what differs is what happens to
the machine meanwhile:

- `bimodal`: both CPUs are shared with a busy loop for the second half of the
  measured seconds, so the per-second medians form two groups;
- `disturbed-none` / `quiet-no_protection`: the `none` baseline with a busy loop beside
  both processes, and `no_protection` on the idle machine: a secured profile "faster"
  than no security;
- `stall`: throughput, the publisher stopped (SIGSTOP) for 3 s mid-run: seconds without
  samples in the subscriber's output.

Disturbances on a VM are not reliable (see `_hog`): a recording is kept only once it shows
what it is for, which the tests then check. The trend case needs no disturbance: the
secured runs' early seconds settle by themselves, as in
sign_origin_data_encrypt-latency-1024-pub.out (recorded with an earlier govkit).

Every file starts with a `#` line saying what it is; the parsers ignore it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from govkit.catalog.profiles import get_profile
from govkit.generate.bundle import BundleLog, ensure_bundle, ensure_pki
from govkit.runners.base import BenchPoint, prepare
from govkit.runners.ddsperf import DdsperfRunner

HERE = Path(__file__).parent


def _hog(cpu: int, nice: int = 10) -> subprocess.Popen:
    """A busy loop on `cpu`. (On the 2-core VM these were recorded on, busy loops at nice 0
    made ddsperf *faster*, its CPUs no longer halting between messages; at nice 10 they
    slowed it down by about a third, though not every time; at nice -20 by a factor of
    several hundred.)"""
    return subprocess.Popen(["nice", "-n", str(nice), "taskset", "-c", str(cpu),
                             sys.executable, "-c", "while True: pass"])


def record(name: str, profile: str, mode: str, size: int, seconds: int, events, domain: int,
           repeat: int = 0) -> None:
    """Run one pair for `seconds` per-second lines; `events` is [(t, action)] relative to
    the start, action a callable(pids) -> None."""
    work = Path(tempfile.mkdtemp(prefix="govkit-record-"))
    log = BundleLog()
    p = get_profile(profile)
    bundle = ensure_bundle(p, ensure_pki(work / "pki", log), work / "build", "ddsperf", log) \
        if p.security else None
    from govkit.runners.base import Bundle
    bundle = bundle or Bundle(p)
    runner = DdsperfRunner()
    runner.check_installed()
    point = BenchPoint(p, mode, size, seconds, domain_id=domain, cpus=(0, 1), warmup=0)
    specs = prepare(runner, point, bundle, work / "config")
    procs = {}
    outs = {}
    for s in specs:
        outs[s.role] = open(work / f"{s.role}.out", "w+b")
        procs[s.role] = subprocess.Popen(["taskset", "-c", str(s.cpu), *s.argv],
                                         env={**os.environ, **s.env}, stdout=outs[s.role],
                                         stderr=subprocess.STDOUT, start_new_session=True)
    t0 = time.monotonic()
    primary = next(s for s in specs if s.primary)
    for at, action in sorted(events, key=lambda e: e[0]):
        time.sleep(max(0.0, at - (time.monotonic() - t0)))
        action({r: pr.pid for r, pr in procs.items()})
    while not primary.stop_when(open(work / f"{primary.role}.out").read()):
        time.sleep(0.2)
    for pr in procs.values():
        os.killpg(pr.pid, signal.SIGINT)
        pr.wait(timeout=10)
    for role, pr in procs.items():
        text = (work / f"{role}.out").read_text()
        header = (f"# recorded by tests/data/ddsperf/record.py: {name} ({profile} {mode} size "
                  f"{size}, repeat {repeat}); pid {pr.pid}; argv: "
                  f"{' '.join(next(s.argv for s in specs if s.role == role)[1:])}\n")
        (HERE / f"{name}-{role}.out").write_text(header + text)
    print(f"recorded {name}")


def main(names: list[str]) -> None:
    hogs: list[subprocess.Popen] = []

    def start_hog(cpu, nice=10):
        return lambda pids: hogs.append(_hog(cpu, nice))

    def stop_hogs(pids):
        while hogs:
            h = hogs.pop()
            h.kill()
            h.wait()

    def stop(role, sig):
        return lambda pids: os.killpg(pids[role], sig)

    plans = {
        "bimodal": lambda: record("bimodal", "rtps_sign", "latency", 32, 8,
                                  [(6.0, start_hog(0)), (6.0, start_hog(1))], 71),
        "faster": lambda: (
            record("disturbed-none", "none", "latency", 32, 4,
                   [(0.0, start_hog(0)), (0.0, start_hog(1))], 75),
            stop_hogs(None),
            record("quiet-no_protection", "no_protection", "latency", 32, 4, [], 76)),
        "stall": lambda: record("stall", "none", "throughput", 1024, 8,
                                [(3.6, stop("pub", signal.SIGSTOP)),
                                 (6.0, stop("pub", signal.SIGCONT))], 77),
    }
    try:
        for name in names or plans:
            plans[name]()
            stop_hogs(None)
    finally:
        stop_hogs(None)


if __name__ == "__main__":
    main(sys.argv[1:])
