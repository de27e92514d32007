#!/usr/bin/env python3
"""Does a secured profile cost more CPU per sample than `none`? Prints the ratios; exit 1
when one does not.

A timing claim, so it lives here and not in the tests (tests/bench/test_rotation.py checks
that the CPU figures are there, positive and consistent with the slots' own counters; a
busy 2-core VM once read rtps_encrypt at 0.98x none over 3 rounds, 2026-12-05). Runs
`govkit bench --mode both` (default: none and rtps_encrypt, rtps_sign at 4096 B; the CPU
slots pace both sides at one offered rate), or reads runs already made (`--read DIR ...`),
then, for every secured profile and size, prints the paired ratio of CPU per sample
written (both sides, and each side) over `none`'s, with its 95 % interval, every figure
recomputed from the raw slots (govkit.results.summary.summarize).

Exit 0: every secured ratio of both sides above 1. Exit 1: one at or below 1 (named).
Exit 2: no CPU ratio to judge (a run without CPU slots, too few rounds).

    .venv/bin/python benchmarks/cpu_direction.py [--rounds 6] [--sizes 4096]
        [--profile rtps_encrypt,rtps_sign] [--out DIR] [--keep]
    .venv/bin/python benchmarks/cpu_direction.py --read DIR [DIR ...]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOVKIT = str(Path(sys.executable).with_name("govkit"))


def cpu_ratios(doc: dict) -> list[dict]:
    """Per secured profile and size: CPU per sample of both sides (µs) and the paired
    ratios over `none` (both, ping, pong), each {'ratio', 'ratio_ci95'} or None."""
    from govkit.results.summary import summarize
    rows = []
    for row in summarize(doc):
        cps = row.get("cpu_per_sample")
        if row["mode"] != "throughput" or not cps or row["profile"] == "none":
            continue
        rows.append({"profile": row["profile"], "size": row["size"], "both_us": cps.get("both"),
                     **{side: cps.get(key) for side, key in (
                         ("both", "vs_none"), ("ping", "ping_vs_none"),
                         ("pong", "pong_vs_none"))}})
    return rows


def verdict(rows: list[dict]) -> tuple[int, list[str]]:
    """Exit code and lines: 1 when a secured profile's both-sides ratio is ≤ 1."""
    lines, failed = [], []
    judged = 0
    for r in rows:
        both = r["both"]
        parts = []
        for side in ("both", "ping", "pong"):
            v = r[side]
            if v and v.get("ratio") is not None:
                ci = v.get("ratio_ci95")
                parts.append(f"{side} × {v['ratio']:.3f}" + (
                    f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else " [no interval]"))
        lines.append(f"{r['profile']:<40} {r['size']:>6} B  " + ", ".join(parts))
        if both and both.get("ratio") is not None:
            judged += 1
            if both["ratio"] <= 1:
                failed.append(f"{r['profile']} {r['size']} B: × {both['ratio']:.3f}")
    if not judged:
        return 2, lines + ["no CPU-per-sample ratio to judge (give --mode both runs of "
                           "the default runner, 3 rounds or more)"]
    if failed:
        return 1, lines + ["FAIL: secured CPU per sample ≤ none's: " + "; ".join(failed)]
    return 0, lines + [f"PASS: all {judged} secured ratios above 1"]


def run(out: Path, profiles: str, sizes: str, rounds: int) -> Path:
    target = out / "run"
    t0 = time.monotonic()
    r = subprocess.run([GOVKIT, "bench", "--profile", f"none,{profiles}", "--mode", "both",
                        "--sizes", sizes, "--rounds", str(rounds), "--out", str(target),
                        "--no-report"], cwd=out, capture_output=True, text=True)
    (out / "run.log").write_text(r.stdout + r.stderr)
    if not (target / "results.json").exists():
        raise SystemExit(f"govkit bench failed (exit {r.returncode}):\n{r.stderr[-2000:]}")
    print(f"run: exit {r.returncode}, {time.monotonic() - t0:.0f} s, load "
          f"{Path('/proc/loadavg').read_text().split()[0]}", flush=True)
    return target


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--read", type=Path, nargs="+", help="runs already made (results dirs)")
    ap.add_argument("--profile", default="rtps_encrypt,rtps_sign")
    ap.add_argument("--sizes", default="4096")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--out", type=Path, help="where the run goes (default: a temporary "
                                              "directory, removed unless --keep)")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args(argv)
    scratch = None
    if a.read:
        docs = [(d, json.loads((d / "results.json").read_text())) for d in a.read]
    else:
        out = a.out or Path(tempfile.mkdtemp(prefix="cpu_direction-"))
        scratch = out if a.out is None and not a.keep else None
        out.mkdir(parents=True, exist_ok=True)
        target = run(out.resolve(), a.profile, a.sizes, a.rounds)
        docs = [(target, json.loads((target / "results.json").read_text()))]
        if scratch is not None:
            shutil.rmtree(scratch)
    code = 0
    for d, doc in docs:
        env = doc.get("environment") or {}
        print(f"{d}: {doc.get('created')}, {env.get('cpu')}, load before "
              f"{((doc.get('load') or [{}])[0]).get('loadavg_before')}")
        c, lines = verdict(cpu_ratios(doc))
        print("\n".join(lines))
        code = max(code, c)
    return code


if __name__ == "__main__":
    sys.exit(main())
