#!/usr/bin/env python3
"""Does the rotating design measure what a lone, fresh ddsperf pair measures? Prints ratios.

Per size, rounds alternate (a) `govkit bench` (default runner: long-lived cyclone_perf pairs
in short slots, `none` and the secured profile rotated together with the A/A arm) and
(b) by hand: a fresh `ddsperf pong` / `ddsperf ping size S` pair per profile with govkit's
very configuration files, pinning and SCHED_FIFO, median of its per-second medians after one
warm-up second. The goal is govkit / by hand within 0.95 .. 1.05 for both profiles at every
size, and the same overhead ratio.

Both sides measure the same machine state: govkit keeps the measured CPUs awake by default
(govkit.bench.awake), so the pair by hand runs with the same spinners; with --allow-idle
neither has them.

    .venv/bin/python benchmarks/rotation_fidelity.py [--profile rtps_sign]
        [--sizes 32,1024,63000] [--rounds 3] [--seconds 4] [--allow-idle]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from govkit.bench.awake import AwakeCpus

GOVKIT = str(Path(sys.executable).with_name("govkit"))
LINE = re.compile(r"^\[\d+\]\s+[\d.]+\s+\S+ size \d+ mean [\d.]+us min [\d.]+us "
                  r"50% (?P<p50>[\d.]+)us", re.M)
# ddsperf sub: "[pid] T size S total N lost L delta D rate R kS/s X Mb/s (...)"
RATE = re.compile(r"^\[\d+\]\s+[\d.]+\s+size \d+ total \d+ lost \d+ delta \d+ "
                  r"(?:lost \d+ )?rate (?P<rate>[\d.]+) kS/s", re.M)


def via_govkit(profile: str, size: int, out: Path, allow_idle: bool, mode: str,
               slot_ms: int | None = None) -> dict[str, float]:
    subprocess.run([GOVKIT, "bench", "--profile", "none", "--profile", profile, "--sizes",
                    str(size), "--mode", mode, "--budget", "25", "--out", str(out),
                    "--no-report", *(["--allow-idle"] if allow_idle else []),
                    *(["--rotate-throughput"] if mode == "throughput" else []),
                    *(["--slot-ms", str(slot_ms)] if slot_ms else [])],
                   check=True, capture_output=True, text=True)
    summary = json.loads((out / "results.json").read_text())["summary"]
    est = {r["profile"]: r["estimate"] for r in summary}
    ratio = next(r["vs_none"]["ratio"] for r in summary if r["profile"] == profile)
    return {**est, "ratio": ratio}


def by_hand_throughput(profile: str, size: int, config: Path, seconds: int) -> float:
    """A fresh `ddsperf pub size S` into `ddsperf -1 sub` on govkit's configuration files,
    pinned, normal scheduling (as the ddsperf runner): the mean of its per-second rates
    after one warm-up second."""
    domain = str(100 + os.getpid() % 100)

    def uri(role):
        return {**os.environ, "CYCLONEDDS_URI": (
            config / f"cyclonedds-{profile}-udp-lo-{role}.xml").as_uri()}
    pub = subprocess.Popen(["taskset", "-c", "0", "ddsperf", "-i", domain, "-Qminmatch:1",
                            "-Qinitwait:10", "-D", str(seconds + 12), "pub", "size", str(size)],
                           env=uri("pub"), stdout=subprocess.DEVNULL)
    try:
        out = subprocess.run(["taskset", "-c", "1", "ddsperf", "-i", domain, "-Qminmatch:1",
                              "-Qinitwait:10", "-D", str(seconds + 2), "-1", "sub"],
                             env=uri("sub"), capture_output=True, text=True).stdout
    finally:
        pub.terminate()
        pub.wait()
    rates = [float(m["rate"]) * 1e3 for m in RATE.finditer(out)][1:1 + seconds]
    if len(rates) < seconds:
        raise SystemExit(f"ddsperf gave {len(rates)} measured seconds:\n{out}")
    return statistics.fmean(rates)


def by_hand(profile: str, size: int, config: Path, seconds: int) -> float:
    """A fresh ddsperf pair on govkit's configuration files, pinned and SCHED_FIFO."""
    domain = str(100 + os.getpid() % 100)
    env = {**os.environ}

    def uri(role):
        return {**env, "CYCLONEDDS_URI": (config / f"cyclonedds-{profile}-udp-lo-{role}.xml")
                .as_uri()}
    pong = subprocess.Popen(["chrt", "-f", "1", "taskset", "-c", "1", "ddsperf", "-i", domain,
                             "-Qminmatch:1", "-Qinitwait:10", "-D", str(seconds + 12), "pong"],
                            env=uri("sub"), stdout=subprocess.DEVNULL)
    try:
        out = subprocess.run(["chrt", "-f", "1", "taskset", "-c", "0", "ddsperf", "-i", domain,
                              "-Qminmatch:1", "-Qinitwait:10", "-D", str(seconds + 2), "ping",
                              "size", str(size)], env=uri("pub"), capture_output=True,
                             text=True).stdout
    finally:
        pong.terminate()
        pong.wait()
    medians = [float(m["p50"]) for m in LINE.finditer(out)][1:1 + seconds]
    if len(medians) < seconds:
        raise SystemExit(f"ddsperf gave {len(medians)} measured seconds:\n{out}")
    return statistics.median(medians)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="rtps_sign")
    ap.add_argument("--sizes", default="32,1024,63000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--allow-idle", action="store_true")
    ap.add_argument("--mode", choices=("latency", "throughput"), default="latency")
    ap.add_argument("--slot-ms", type=int, help="govkit bench --slot-ms (default: its own)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        for size in (int(s) for s in args.sizes.split(",")):
            gov: list[dict] = []
            hand: list[dict] = []
            for i in range(args.rounds):
                for side in (("govkit", "hand") if i % 2 == 0 else ("hand", "govkit")):
                    if side == "govkit":
                        gov.append(via_govkit(args.profile, size, Path(tmp) / f"g{size}-{i}",
                                              args.allow_idle, args.mode, args.slot_ms))
                    else:
                        config = Path(tmp) / f"g{size}-0" / "config"
                        if not config.exists():     # the first round starts by hand
                            via_govkit(args.profile, size, Path(tmp) / f"g{size}-0",
                                       args.allow_idle, args.mode, args.slot_ms)
                        measure = by_hand if args.mode == "latency" else by_hand_throughput
                        with AwakeCpus(() if args.allow_idle else (0, 1)):
                            hand.append({p: measure(p, size, config, args.seconds)
                                         for p in ("none", args.profile)})
                        time.sleep(0.5)
            print(f"{size} B, {args.rounds} alternated rounds:")
            unit = "us" if args.mode == "latency" else "samples/s"
            for p in ("none", args.profile):
                # Per round, govkit over the pair by hand measured next to it: the machine's
                # speed drifts by 10-15 % over minutes (docs/background/method.md), so only
                # measurements taken side by side are compared.
                per = [g[p] / h[p] for g, h in zip(gov, hand, strict=True)]
                g = statistics.median(r[p] for r in gov)
                h = statistics.median(r[p] for r in hand)
                gm, lo, hi = geometric_interval(per)
                print(f"  {p:28} govkit {g:10.2f} {unit}  lone fresh ddsperf {h:10.2f} {unit}  "
                      f"govkit / by hand per round: {gm:.3f} [{lo:.3f}, {hi:.3f}] "
                      f"(goal 0.95 .. 1.05; rounds {', '.join(f'{x:.3f}' for x in per)})")
            hr = statistics.median(r[args.profile] / r["none"] for r in hand)
            gr = statistics.median(r["ratio"] for r in gov)
            print(f"  overhead ratio: govkit {gr:.3f}, ddsperf by hand {hr:.3f} "
                  f"({gr / hr:.3f})", flush=True)


def geometric_interval(values: list[float]) -> tuple[float, float, float]:
    """Geometric mean of per-round ratios and its 95 % percentile bootstrap interval."""
    import math
    import random
    logs = [math.log(v) for v in values]
    rand = random.Random(0)
    means = sorted(statistics.fmean(rand.choices(logs, k=len(logs))) for _ in range(2000))
    return (math.exp(statistics.fmean(logs)), math.exp(means[49]), math.exp(means[1949]))

if __name__ == "__main__":
    main()
