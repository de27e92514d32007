"""`govkit calibrate`: measure this machine's run-to-run term (govkit.bench.calibration)
and keep it in the user's cache, where `govkit bench` finds it (main.py registers it).

No `from __future__ import annotations` here: typer would then evaluate every option's
annotation string at start-up.
"""

from pathlib import Path
from typing import Annotated, Literal

import typer

from govkit.cli.common import err, out
from govkit.common.errors import EXIT_USAGE, GovkitError

# Start-up: nothing heavy at module level; the command imports what it uses.


def calibrate(
    runs: Annotated[int | None, typer.Option(
        "--runs", help="Short `govkit bench` runs back to back (at least 2; 3 or more also "
                       "give the estimate's own uncertainty). Default: 4 (--quick: 2).",
        show_default=False)] = None,
    run_budget: Annotated[int | None, typer.Option(
        "--run-budget", help="Each run's --budget in seconds. Default: 40 (--quick: 15).",
        show_default=False)] = None,
    mode: Annotated[Literal["latency", "both"], typer.Option(
        "--mode", help="latency: κ, the latency term; both: the throughput floor too "
                       "(longer rounds: give a --run-budget of 90 or more).")] = "latency",
    quick: Annotated[bool, typer.Option(
        "--quick", help="Two 15 s runs of none and rtps_sign at 32 B, then one awake "
                        "and one idle 10 s run: a rough term and idle figure in under two "
                        "minutes (for trying it out, and the tests).")] = False,
    idle_runs: Annotated[int | None, typer.Option(
        "--idle-runs", help="Then this many runs of none and rtps_sign at 32 B with the "
                            "CPUs kept awake and as many allowed to idle, interleaved "
                            "(awake, idle, idle, awake, ...): how far idle CPUs move the "
                            "absolute latency here, which bench runs then state; 0 skips "
                            "it. Default: 2 (--quick: 1), of 20 s each (--quick: 10 s).",
        show_default=False)] = None,
    keep: Annotated[Path | None, typer.Option(
        "--keep", help="Keep the runs (their results.json and output) in this directory; "
                       "by default they go in a temporary one, removed after.",
        show_default=False)] = None,
):
    """Measure this machine's run-to-run term and keep it for `govkit bench`."""
    from govkit.bench.calibration import (
        DEFAULT_RUN_BUDGET_S,
        DEFAULT_RUNS,
        MAX_AGE_DAYS,
        QUICK,
        CalibrationPlan,
        calibration_lines,
        machine_identity,
        run_calibration,
        store_calibration,
    )
    base = QUICK if quick else {"runs": DEFAULT_RUNS, "run_budget_s": DEFAULT_RUN_BUDGET_S}
    plan = CalibrationPlan(**{**base, "mode": mode,
                              **({"runs": runs} if runs is not None else {}),
                              **({"run_budget_s": run_budget} if run_budget is not None
                                 else {})})
    plan = plan.with_idle_runs(idle_runs)
    if not 2 <= plan.runs <= 50:
        raise GovkitError(f"--runs {plan.runs}: expected 2 to 50", EXIT_USAGE)
    if not 5 <= plan.run_budget_s <= 3600:
        raise GovkitError(f"--run-budget {plan.run_budget_s}: expected 5 to 3600 s",
                          EXIT_USAGE)
    who = machine_identity()
    minutes, seconds = divmod(plan.seconds, 60)
    idle = f", then {plan.idle.said()}" if plan.idle else ""
    err.print(f"govkit calibrate: {plan.runs} runs of `govkit bench {' '.join(plan.bench_args())}`"
              f" back to back{idle}, about {minutes} min {seconds:02d} s in all, on {who['cpu']} "
              f"({who['host']}, kernel {who['kernel']}); keep the machine as it will be when "
              "you benchmark", markup=False, highlight=False)
    cal = run_calibration(plan, lambda line: err.print(line, markup=False, highlight=False),
                          keep)
    path = store_calibration(cal)
    for line in calibration_lines(cal):
        out.print(line, markup=False, highlight=False)
    out.print(f"stored in {path} ({cal.created}, {cal.runs} runs, {cal.points} points); "
              f"govkit bench on this machine carries it for {MAX_AGE_DAYS} days, or until "
              "the CPU, microcode, kernel or host name change", markup=False,
              highlight=False)
