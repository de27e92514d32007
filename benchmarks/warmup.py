#!/usr/bin/env python3
"""How long does a ddsperf pair take to settle? The data behind `--warmup`'s default.

Runs `govkit bench` with no warm-up and long repeats (or reads a results.json given with
--results), then prints, for each second of a repeat, how far its median and its mean sit
above the same repeat's settled level (the median over its seconds 4 and later), as the
median over all repeats, separately for `none`/`no_protection` and the secured profiles.
A second whose ratio stays above 1 by more than the noise is still warming up.

    .venv/bin/python benchmarks/warmup.py [--sizes 32,63000] [--seconds 7] [--repeat 3]
    .venv/bin/python benchmarks/warmup.py --results results/<run>/results.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

GOVKIT = str(Path(sys.executable).with_name("govkit"))
SETTLED_FROM = 3   # seconds 0..2 may be warming up; the rest is the reference level


def run(args) -> dict:
    out = Path(tempfile.mkdtemp(prefix="govkit-warmup-")) / "res"
    subprocess.run([GOVKIT, "bench", "--all-profiles", "--sizes", args.sizes, "--warmup", "0",
                    "--duration", str(args.seconds), "--repeat", str(args.repeat),
                    "--max-repeat", str(args.repeat), "--out", str(out), "--no-report"],
                   check=True, stdout=subprocess.DEVNULL, cwd=out.parent)
    print(f"(raw data: {out}/results.json)")
    return json.loads((out / "results.json").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="32,63000")
    ap.add_argument("--seconds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--results", type=Path)
    args = ap.parse_args()
    doc = json.loads(args.results.read_text()) if args.results else run(args)
    secured = {p["name"]: p["security"] and p["name"] != "no_protection"
               for p in doc["profiles"]}
    groups: dict[str, dict[str, list[list[float]]]] = {}
    for r in doc["results"]:
        if r["status"] != "ok":
            continue
        rows = r["raw"]["rows"]
        if len(rows) <= SETTLED_FROM + 1:
            continue
        group = groups.setdefault("secured" if secured[r["profile"]] else "unsecured", {})
        for key in ("p50", "mean"):
            settled = statistics.median(x[key] for x in rows[SETTLED_FROM:])
            ratios = group.setdefault(key, [])
            for i, x in enumerate(rows):
                if len(ratios) <= i:
                    ratios.append([])
                ratios[i].append(x[key] / settled)
    for name, group in groups.items():
        n = len(group["p50"][0])
        print(f"\n{name} profiles ({n} repeats): second i / settled level, median over repeats")
        print("second  " + " ".join(f"{i + 1:>6}" for i in range(len(group["p50"]))))
        for key, label in (("p50", "median"), ("mean", "mean")):
            print(f"{label:7} " + " ".join(f"{statistics.median(r):6.3f}" for r in group[key]))


if __name__ == "__main__":
    main()
