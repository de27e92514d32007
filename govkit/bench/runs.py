"""`govkit bench --runs N`: N runs of the same points into one results directory, pooled.

OUT/run-1/ … OUT/run-N/ are each a complete results directory (results.json and its
CSVs: `govkit report OUT/run-2` makes that run's report), and OUT/pooled.json and
OUT/pooled.md hold one estimate per point whose interval includes the between-run term
measured from those N runs (govkit.results.pool). Before the first run, how long the N
runs will take at most is said (each run stops at its target or its --budget); after the
first, how long the rest will take at its pace; pooled.json's `timing` records what was
announced and what it took.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from govkit.bench.options import BenchOptions, BenchOutcome
from govkit.catalog.measures import DISCOVERY
from govkit.catalog.runners import runner_info
from govkit.common.errors import EXIT_INTERRUPTED, EXIT_INVALID, EXIT_USAGE, GovkitError

# What a run takes beyond its --budget (the round that stops it, its figures recomputed for
# the summary, the last saves, the processes' ends) grows with its paired points (arms ×
# sizes × lanes). 2026-12-07, AMD EPYC 2-core VM (method.md, "Pooling runs"): 2 points, 2-4
# s at load 18-31; 16 points, 41 s (stopped at its target, load 15) and 79 s (budget spent,
# load 18). So RUN_BASE_S + RUN_PER_POINT_S per point, at most RUN_OVERHEAD_CAP_S.
RUN_BASE_S = 5
RUN_PER_POINT_S = 4.5
RUN_OVERHEAD_CAP_S = 120
MAX_RUNS = 20


@dataclass
class PooledOutcome:
    out: Path
    outcomes: list[BenchOutcome] = field(default_factory=list)
    doc: dict | None = None             # pooled.json as written (None: fewer than 2 runs)
    lines: list[str] = field(default_factory=list)
    interrupted: bool = False
    failed: int = 0

    @property
    def exit_code(self) -> int:
        return EXIT_INTERRUPTED if self.interrupted else EXIT_INVALID if self.failed else 0


def run_overhead_seconds(opts: BenchOptions) -> int:
    """What one run takes beyond its budget, from its paired points: every secured arm
    and the A/A arm, at every size, in every lane (latency; throughput and CPU)."""
    secured = sum(1 for p in opts.profiles if p.name != "none")
    arms = secured * max(1, len(opts.variants)) + 1
    lanes = sum({"latency": 1, "throughput": 2}.get(m, 1) for m in opts.modes)
    points = arms * len(opts.sizes) * lanes
    return round(min(RUN_OVERHEAD_CAP_S, RUN_BASE_S + RUN_PER_POINT_S * points))


def announced_seconds(opts: BenchOptions, runs: int) -> int:
    """The announcement before the first run: N × (budget + what a run takes beyond)."""
    return runs * (opts.budget + run_overhead_seconds(opts))


def run_pooled(opts: BenchOptions, runs: int, console) -> PooledOutcome:
    """N runs of `opts` into OUT/run-i, then pooled (OUT/pooled.json, pooled.md). A run
    interrupted ends the series; the runs completed are pooled when there are two."""
    from govkit.bench.schedule import run_bench
    from govkit.results.pool import pool_runs, pooled_lines, read_runs, write_pooled
    if not 2 <= runs <= MAX_RUNS:
        raise GovkitError(f"--runs: expected 2 to {MAX_RUNS} runs, got {runs}", EXIT_USAGE)
    if opts.resume:
        raise GovkitError("--runs does not take --resume: resume the interrupted run alone "
                          "(--out OUT/run-K --resume), then pool with `govkit report --pool "
                          "OUT/run-1 … OUT/run-N`", EXIT_USAGE)
    opts.check()                  # the runner resolved; bad options refused before any run
    if not runner_info(opts.runner).rotates or DISCOVERY in opts.modes:
        raise GovkitError(f"--runs pools paired ratios: runner {opts.runner}"
                          f"{' with --mode discovery' if DISCOVERY in opts.modes else ''} "
                          "makes none (use the default runner, cyclone, or fastdds)",
                          EXIT_USAGE)
    top = opts.out or Path("results") / datetime.now().strftime("%Y%m%d-%H%M%S")
    if (top / "run-1").exists():
        raise GovkitError(f"{top}/run-1 exists; choose another --out", EXIT_USAGE)
    announced = announced_seconds(opts, runs)
    console.print(f"{runs} runs into {top}: about {_minutes(announced)} ({runs} × "
                  f"({opts.budget} s --budget + {run_overhead_seconds(opts)} s to finish); a "
                  "run stops sooner when every ratio reaches its target")
    result = PooledOutcome(top)
    if opts.dry_run:
        result.lines = run_bench(replace(opts, out=top / "run-1"), console).dry_run_lines
        return result
    began = time.monotonic()
    walls: list[float] = []
    after_first = None
    for i in range(1, runs + 1):
        seed = opts.seed + i - 1 if opts.seed is not None else None
        t0 = time.monotonic()
        console.print(f"run {i} of {runs}: {top / f'run-{i}'}")
        outcome = run_bench(replace(opts, out=top / f"run-{i}", seed=seed), console)
        # tenths, rounded down: their sum never passes the whole's (rounded up below), so
        # pooled.json never says the runs took longer than the command
        walls.append(math.floor((time.monotonic() - t0) * 10) / 10)
        result.outcomes.append(outcome)
        result.failed += outcome.failed
        if outcome.interrupted:
            result.interrupted = True
            break
        if i == 1 and runs > 1:
            after_first = round(walls[0] * runs)
            console.print(f"run 1 took {walls[0]:.0f} s: the other {runs - 1} about "
                          f"{_minutes(walls[0] * (runs - 1))} more")
    done = [o.out for o in result.outcomes if not o.interrupted and o.out is not None]
    actual = math.ceil((time.monotonic() - began) * 10) / 10
    if len(done) < 2:
        result.lines.append(f"govkit: {len(done)} run(s) completed: nothing to pool")
        return result
    timing = {"runs_asked": runs, "announced_s": announced,
              "announced_after_first_run_s": after_first, "actual_s": actual,
              "run_wall_s": walls, "budget_s": opts.budget}
    result.doc = pool_runs(read_runs(done), timing)
    path, md = write_pooled(top, result.doc)
    result.lines += [*pooled_lines(result.doc), f"pooled: {path}", f"pooled: {md}",
                     f"announced {_minutes(announced)} (after run 1: "
                     f"{_minutes(after_first) if after_first else '-'}), took "
                     f"{_minutes(actual)}"]
    return result


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"
