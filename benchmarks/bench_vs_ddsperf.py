#!/usr/bin/env python3
"""Does `govkit bench` measure what ddsperf measures by hand? Prints the ratio.

Runs the same profile and size alternately (a) through `govkit bench` (one repeat) and
(b) by hand: the very same two ddsperf command lines, pinning (`taskset`) and Cyclone
configurations (taken from govkit's results.json), started the way a user would, with
ddsperf's own `-D`, and parsed here with the same method (median of the per-second medians
after one warm-up second). The order alternates every round, so slow drifts of a noisy
machine hit both sides alike. The goal is a ratio within ±5 %: the orchestrator must not
steal the CPUs the two ddsperf processes use.

    .venv/bin/python benchmarks/bench_vs_ddsperf.py [--profile rtps_sign] [--size 1024]
        [--duration 5] [--rounds 6] [--no-pin]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOVKIT = str(Path(sys.executable).with_name("govkit"))
LINE = re.compile(r"^\[\d+\]\s+[\d.]+\s+\S+ size \d+ mean [\d.]+us min [\d.]+us "
                  r"50% (?P<p50>[\d.]+)us", re.M)


def via_govkit(args, out: Path) -> tuple[float, list[str]]:
    cmd = [GOVKIT, "bench", "--profile", args.profile, "--sizes", str(args.size),
           "--duration", str(args.duration), "--warmup", "1", "--repeat", "1",
           "--max-repeat", "1", "--out", str(out), "--no-report",
           "--pin" if args.pin else "--no-pin"]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    res = json.loads((out / "results.json").read_text())["results"][0]
    return res["latency_us"]["median_of_second_medians"], res["commands"]


def by_hand(commands: list[str], duration: int) -> float:
    """The two command lines as govkit recorded them, run the way a user would."""
    pong, ping = (shlex.split(c) for c in commands)

    def split_env(words):
        env = dict(w.split("=", 1) for w in words if re.match(r"^[A-Z_]+=", w))
        return {**os.environ, **env}, [w for w in words if not re.match(r"^[A-Z_]+=", w)]

    (pong_env, pong_argv), (ping_env, ping_argv) = split_env(pong), split_env(ping)
    # Run ping for warm-up + duration + a little for discovery/handshake, like -D by hand.
    d = ping_argv.index("-D")
    ping_argv[d + 1] = str(1 + duration + 2)
    with subprocess.Popen(pong_argv, env=pong_env, stdout=subprocess.DEVNULL) as p:
        time.sleep(0.2)
        out = subprocess.run(ping_argv, env=ping_env, capture_output=True, text=True).stdout
        p.terminate()
    medians = [float(m["p50"]) for m in LINE.finditer(out)][1:1 + duration]
    if len(medians) < duration:
        raise SystemExit(f"by-hand run produced only {len(medians)} measured seconds:\n{out}")
    return statistics.median(medians)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="rtps_sign")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--pin", action=argparse.BooleanOptionalAction, default=True,
                    help="pin as govkit does by default (both sides get the same taskset)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)   # pki/ and build/ for this benchmark only
        _, commands = via_govkit(args, Path(tmp) / "warmup")   # builds the bundle once
        govkit_m, hand_m = [], []
        for i in range(args.rounds):
            order = ("govkit", "hand") if i % 2 == 0 else ("hand", "govkit")
            for side in order:
                if side == "govkit":
                    m, commands = via_govkit(args, Path(tmp) / f"r{i}")
                    govkit_m.append(m)
                else:
                    hand_m.append(by_hand(commands, args.duration))
            print(f"round {i + 1}: govkit {govkit_m[-1]:8.2f} us   by hand {hand_m[-1]:8.2f} us",
                  flush=True)
    g, h = statistics.median(govkit_m), statistics.median(hand_m)
    per_round = [a / b for a, b in zip(govkit_m, hand_m, strict=True)]
    print(f"\n{args.profile}, {args.size} B, {args.duration} s x {args.rounds} rounds"
          f"{' (pinned)' if args.pin else ' (unpinned)'}")
    print(f"median of medians: govkit {g:.2f} us, by hand {h:.2f} us")
    print(f"ratio govkit / by hand = {g / h:.3f}; median of the per-round ratios "
          f"{statistics.median(per_round):.3f} (range {min(per_round):.3f}-{max(per_round):.3f})"
          f"  (goal: 0.95 .. 1.05)")


if __name__ == "__main__":
    main()
