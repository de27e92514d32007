#!/usr/bin/env python3
"""`govkit report` on large but valid results.json (issue 23, item 9: 5 to over 10 s on tens
of thousands of rows or repeats, hundreds of profiles or sizes, a 200,000-character name).

Times are CPU seconds of the process (time.process_time): the VM is shared, and another
process's load stretches wall time, not CPU time. Prints, measured side by side in one run:
- the bootstrap of one point: the pure-Python loop it replaced against stats.bootstrap
  (the same numbers, checked), at a short and a long run's point;
- the whole report (load, check, recompute, plots, HTML and Markdown) of every shape in
  tests/helpers/large_results.py at a quarter of its size and at its full size: the time,
  and the time per 1,000 input values at each (a ratio near 1 or below: linear or better);
- the two hostile-but-valid inputs of issue 23's acceptance (20,000 repeats of one
  point's design, 3000 rotation rounds) each against a usual run of the same design,
  alternated over --rounds rounds: their times and the ratio (how many usual reports one
  hostile report costs), which a loaded machine moves less than the times.

    .venv/bin/python benchmarks/bench_report.py [--shape NAME] [--phases] [--rounds N]
    .venv/bin/python benchmarks/bench_report.py --hostile-only

With --against DIR (a checkout of an earlier govkit, e.g. `git worktree add /tmp/old
<commit>`), every full-size report is also written by that govkit and by this one, each in
a fresh process, alternated, and the ratio printed (old / new).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "report"))

from helpers.large_results import catalog, per_repeat, rotating, shapes  # noqa: E402
from test_large_results import reference_bootstrap  # noqa: E402

from govkit.report import run as report_run  # noqa: E402
from govkit.report.plots import build_figures  # noqa: E402
from govkit.results import stats  # noqa: E402
from govkit.results.check import check_results  # noqa: E402
from govkit.results.store import load_results  # noqa: E402
from govkit.results.summary import summarize  # noqa: E402


def values_in(doc: dict) -> int:
    """What the report reads, counted: raw rows and slots."""
    return sum(len(r.get("raw", {}).get("rows", [])) for r in doc["results"]) + \
        len((doc.get("rotation") or {}).get("slots", []))


def bootstrap_ratio() -> None:
    import random
    rand = random.Random(1)
    for repeats, seconds in ((3, 10), (8, 240)):
        groups = [[rand.uniform(10, 20) for _ in range(seconds)] for _ in range(repeats)]
        timings, outs = [], []
        for fn in (stats.bootstrap, reference_bootstrap):
            t0 = time.process_time()
            outs.append(fn(groups, statistics.median, "govkit/bench"))
            timings.append(time.process_time() - t0)
        assert outs[0] == outs[1], "the two bootstraps disagree"
        print(f"bootstrap, {repeats} repeats x {seconds} s: vectorised {timings[0]:.3f} s, "
              f"loop {timings[1]:.3f} s, ratio {timings[1] / timings[0]:.0f}x (same values)")


def report_seconds(doc: dict, phases: bool) -> float:
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "results.json").write_text(json.dumps(doc))
        t0 = time.process_time()
        if not phases:
            report_run.write_report(Path(d))
            return time.process_time() - t0
        loaded = load_results(Path(d) / "results.json")
        t = [time.process_time()]
        check_results(loaded)
        t.append(time.process_time())
        summarize(loaded)
        t.append(time.process_time())
        model = report_run.build_report_model(loaded)
        t.append(time.process_time())
        model.figures = build_figures(model)
        t.append(time.process_time())
        report_run.render_html(model)
        report_run.render_summary_md(model)
        t.append(time.process_time())
        names = ["load", "check", "summarize", "model (check+summarize again)", "plots",
                 "templates"]
        steps = [t[0] - t0] + [b - a for a, b in zip(t, t[1:], strict=False)]
        print("    " + ", ".join(f"{n} {s:.2f} s" for n, s in zip(names, steps, strict=True)))
        return time.process_time() - t0


ROOT = Path(__file__).resolve().parents[1]
# (the editable install's finder would import this checkout's govkit: left out)
_WRITE = ("import sys, time; sys.path.insert(0, sys.argv[1]); from pathlib import Path; "
          "sys.meta_path = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]; "
          "import govkit; assert govkit.__file__.startswith(sys.argv[1]), govkit.__file__; "
          "from govkit.report.run import write_report; t = time.process_time(); "
          "write_report(Path(sys.argv[2])); print(time.process_time() - t)")


def in_process(checkout: Path, results_dir: Path) -> float:
    """Seconds `write_report` of the govkit in `checkout` takes, in a fresh process
    (imports not counted)."""
    out = subprocess.run([sys.executable, "-c", _WRITE, str(checkout), str(results_dir)],
                         capture_output=True, text=True, check=True, timeout=600)
    return float(out.stdout.strip().splitlines()[-1])


def against(old: Path, names: list[str], full: dict) -> None:
    for name in names:
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "results.json").write_text(json.dumps(full[name]))
            t_old, t_new = in_process(old, Path(d)), in_process(ROOT, Path(d))
        print(f"{name:14s} old {t_old:6.2f} s, new {t_new:5.2f} s, ratio "
              f"{t_old / t_new:5.1f}x")


# (hostile input, the usual run of the same design it is measured against)
def hostile_pairs() -> dict[str, tuple[dict, dict]]:
    full = shapes(1.0)
    return {
        "20,000 repeats": (full["many_repeats"], per_repeat(catalog(2), [32], 8, 30)),
        "3000 rounds": (full["many_rounds"], rotating(catalog(3), [32, 1024], 30)),
    }


def side_by_side(rounds: int) -> None:
    """Each hostile input and its usual run, alternated, `rounds` times: median CPU times
    and their ratio."""
    for name, (hostile, usual) in hostile_pairs().items():
        report_seconds(usual, False)       # imports and caches warm, not counted
        times: dict[str, list[float]] = {"hostile": [], "usual": []}
        for _ in range(rounds):
            times["usual"].append(report_seconds(usual, False))
            times["hostile"].append(report_seconds(hostile, False))
        h, u = (statistics.median(times[k]) for k in ("hostile", "usual"))
        print(f"{name:15s} {values_in(hostile):7,d} values {h:5.2f} s | usual run "
              f"{values_in(usual):6,d} values {u:5.2f} s | ratio {h / u:5.1f}x "
              f"(median of {rounds} alternated rounds, CPU s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", action="append", help="only these shapes (repeatable)")
    ap.add_argument("--phases", action="store_true", help="time each phase at full size")
    ap.add_argument("--against", type=Path, help="an earlier govkit checkout to compare with")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the side-by-side timing")
    ap.add_argument("--hostile-only", action="store_true",
                    help="only the two hostile inputs against usual runs")
    args = ap.parse_args()
    side_by_side(args.rounds)
    if args.hostile_only:
        return
    bootstrap_ratio()
    quarter, full = shapes(0.25), shapes(1.0)
    if args.against:
        against(args.against, args.shape or sorted(full), full)
        return
    worst = 0.0
    for name in args.shape or sorted(full):
        small, large = quarter[name], full[name]
        t_small, t_large = report_seconds(small, False), report_seconds(large, False)
        per_small = 1e3 * t_small / values_in(small)
        per_large = 1e3 * t_large / values_in(large)
        worst = max(worst, t_large)
        print(f"{name:14s} {values_in(small):7,d} values {t_small:5.2f} s | "
              f"{values_in(large):7,d} values {t_large:5.2f} s | per 1,000 values "
              f"{per_small:.3f} -> {per_large:.3f} s, ratio {per_large / per_small:.2f}")
        if args.phases:
            report_seconds(large, True)
    print(f"slowest full-size report: {worst:.2f} s (target <= 2 s, hostile limit 5 s)")


if __name__ == "__main__":
    main()
