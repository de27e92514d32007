#!/usr/bin/env python3
"""How fast is the readers axis (`govkit bench --readers`, issue 41)? The same small
rotating run at 1 reader and at N readers, alternated, side by side.

Each run is `govkit bench --profile none,PROFILE --sizes SIZE --rounds R --instances 1
--budget 1 --no-report --readers N` (the minimum rounds always run: R rounds, nothing
more), so both sides do the same slots. From each run's wall time and its results.json:

* wall: the whole command (signing is cached after the first run);
* start-up: the pairs' start to ready (discovery, N(N+1)/2 handshakes per pair), summed;
* per round: the rounds' median duration (one slot per arm and size, `none` between);
* per point: the rounds' time over the points (profile × size) of a round;
* round trips per slot: the median count of measured round trips in a latency slot.

It prints the medians over the repeats, the ratio N / 1 of each, the host (CPU model),
the date and the load average before and after (a shared machine says how shared it was).

    .venv/bin/python benchmarks/bench_readers.py [--readers 4] [--runner cyclone]
        [--repeat 3] [--rounds 6] [--profile sign_origin_data_encrypt] [--size 1024]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

GOVKIT = str(Path(sys.executable).with_name("govkit"))


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def one_run(work: Path, out: str, args, readers: int) -> dict:
    t0 = time.monotonic()
    r = subprocess.run([GOVKIT, "bench", "--runner", args.runner, "--profile", "none",
                        "--profile", args.profile, "--sizes", str(args.size), "--rounds",
                        str(args.rounds), "--instances", "1", "--budget", "1", "--no-report",
                        "--seed", "1", "--readers", str(readers), "--out", out],
                       cwd=work, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        sys.exit(f"bench_readers: govkit bench --readers {readers} failed: "
                 f"{r.stderr.strip().splitlines()[-1:]}")
    rot = json.loads((work / out / "results.json").read_text())["rotation"]
    rounds = [x["seconds"] for x in rot["rounds"] if x.get("seconds")]
    points = len({(s["arm"], s["size"]) for s in rot["slots"]
                  if not s["arm"].startswith("none")}) or 1
    counts = [s["n"] for s in rot["slots"] if s.get("status") == "ok" and s.get("n")]
    return {"wall_s": wall,
            "startup_s": sum(p.get("start_to_ready_s") or 0 for p in rot["pairs"]),
            "round_s": statistics.median(rounds) if rounds else float("nan"),
            "point_s": (statistics.median(rounds) / points) if rounds else float("nan"),
            "round_trips_per_slot": statistics.median(counts) if counts else 0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readers", type=int, default=4)
    ap.add_argument("--runner", default="cyclone", choices=("cyclone", "fastdds"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--profile", default="sign_origin_data_encrypt")
    ap.add_argument("--size", type=int, default=1024)
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    found: dict[int, list[dict]] = {1: [], args.readers: []}
    with tempfile.TemporaryDirectory(prefix="govkit-bench-readers-") as tmp:
        work = Path(tmp)
        for k in range(args.repeat):
            # alternated, the order turned each repeat: a drifting machine hits both alike
            for n in ((1, args.readers) if k % 2 == 0 else (args.readers, 1)):
                found[n].append(one_run(work, f"r{k}-{n}", args, n))
    load_after = os.getloadavg()[0]
    print(f"# {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {cpu_model()}, {os.cpu_count()} CPUs; "
          f"load average {load_before:.1f} before, {load_after:.1f} after; runner "
          f"{args.runner}, none + {args.profile}, {args.size} B, {args.rounds} rounds, "
          f"medians of {args.repeat} runs each")
    keys = ("wall_s", "startup_s", "round_s", "point_s", "round_trips_per_slot")
    print(f"{'figure':<22}{'1 reader':>12}{f'{args.readers} readers':>14}{'ratio':>9}")
    for key in keys:
        one = statistics.median(r[key] for r in found[1])
        many = statistics.median(r[key] for r in found[args.readers])
        ratio = many / one if one else float("nan")
        print(f"{key:<22}{one:>12.3f}{many:>14.3f}{ratio:>9.2f}")


if __name__ == "__main__":
    main()
