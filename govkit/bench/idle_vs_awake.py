"""How far absolute latencies move when the measured CPUs may idle, measured on the machine
where the figures are made (`govkit calibrate`, after its run-to-run term) and kept in the
same calibration file, under the same machine identity (govkit.bench.calibration).

Why: govkit keeps the measured CPUs awake (govkit.bench.awake), so its µs are not what a
pair on idle CPUs reads, and the difference is the machine's own: on a 2-core KVM guest a
bare ddsperf pair read 1.9x govkit's µs (issue 46), on an AMD EPYC VM (2026-12-07)
`--allow-idle` read `none` faster (22.5 against 25.4 µs at 32 B) and rtps_sign's overhead
higher (2.04x against 1.76x). Neither the direction nor the size carries to another machine,
so a figure is said only where it was measured (govkit.results.latency_state words it).

What is measured: short `govkit bench` runs of `none` and one protected profile at 32 B,
alternately with the CPUs kept awake and allowed to idle, in ABBA order (awake, idle, idle,
awake, ...: a drift across the runs falls on both states alike). The statistic is the one
the tables print as the absolute latency, the `none` pair's median one-way latency at 32 B
(the median of its slot medians); idle's over awake's, with the project's two-stage
bootstrap interval (govkit.results.stats.estimate and compare: the runs of each state
resampled, then the slots within each). The protected profile's overhead ratio is given
in each state too (the geometric mean of its runs' ratios), since the ratios move as well.
Why whole runs and not an idle arm inside one run: a run keeps its spinners for the whole
of its measuring (govkit.bench.schedule), and a run's level is set per run (the
run-to-run term, govkit.bench.calibration), so both states must be sampled across runs.
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from govkit.common.errors import GovkitError
from govkit.results.paired import BASELINE_ARM
from govkit.results.record import as_run
from govkit.results.stats import compare, estimate

SIZE = 32
PROTECTED = "rtps_sign"
DEFAULT_RUNS = 2            # runs per state (ABBA: awake, idle, idle, awake)
DEFAULT_RUN_BUDGET_S = 20
QUICK = {"runs": 1, "run_budget_s": 10}
SETUP_S = 12                # a run's start-up beyond its budget (as calibration.SETUP_S)
STATISTIC = (f"the `none` pair's median one-way latency at {SIZE} B (the median of its "
             "slot medians, as the tables print it), with the CPUs allowed to idle over "
             "with them kept awake")
INTERVAL = ("95% percentile bootstrap: each state's runs resampled, then the slot medians "
            "within each run (govkit.results.stats.estimate), the two states' "
            "distributions divided draw by draw (govkit.results.stats.compare)")
STATES = ("awake", "idle")


def bench_in_child(args: list[str], work: Path, name: str, what: str) -> tuple[dict, int]:
    """`govkit bench ARGS --out WORK/NAME` in a child interpreter, its output kept in
    WORK/NAME.log: (its results.json, its exit code); GovkitError naming `what` and the
    last line it printed when it wrote no results (calibrate's runs and these)."""
    out = work / name
    r = subprocess.run([sys.executable, "-m", "govkit", "bench", *args, "--out", str(out)],
                       cwd=work, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    (work / f"{name}.log").write_text(r.stdout + r.stderr)
    results = out / "results.json"
    if not results.is_file():
        last = (r.stderr.strip().splitlines() or ["no output"])[-1]
        raise GovkitError(f"{what} failed (exit {r.returncode}): {last}")
    return json.loads(results.read_text()), r.returncode


@dataclass(frozen=True)
class IdlePlan:
    runs: int = DEFAULT_RUNS          # per state
    run_budget_s: int = DEFAULT_RUN_BUDGET_S

    @property
    def order(self) -> list[str]:
        """ABBA...: awake, idle, idle, awake, awake, idle, ..."""
        return [STATES[(i + 1) // 2 % 2] for i in range(2 * self.runs)]

    @property
    def seconds(self) -> int:
        return 2 * self.runs * (self.run_budget_s + SETUP_S)

    def said(self) -> str:
        return (f"{2 * self.runs} awake/idle runs (`govkit bench "
                f"{' '.join(self.bench_args('awake'))}`, half with --allow-idle)")

    def bench_args(self, state: str) -> list[str]:
        return ["--profile", f"none,{PROTECTED}", "--sizes", str(SIZE), "--mode", "latency",
                "--budget", str(self.run_budget_s), "--no-report",
                *(["--allow-idle"] if state == "idle" else [])]


def none_slot_medians(doc: dict) -> list[float]:
    """The `none` arm's usable latency slot medians at SIZE, in round order."""
    run = as_run(doc)
    return [s.p50 for s in sorted(run.slots, key=lambda s: (s.round, s.position))
            if s.arm == BASELINE_ARM and s.size == SIZE and s.mode == "latency"
            and s.usable and s.p50 is not None]


def protected_ratio(doc: dict) -> float | None:
    for row in doc.get("summary") or []:
        ratio = (row.get("vs_none") or {}).get("ratio")
        if (row.get("profile") == PROTECTED and row.get("mode") == "latency"
                and row.get("size") == SIZE and isinstance(ratio, int | float) and ratio > 0):
            return float(ratio)
    return None


def _geomean(values: list[float]) -> float | None:
    return math.exp(statistics.fmean(map(math.log, values))) if values else None


def idle_vs_awake_of(docs: dict[str, list[dict]], plan: IdlePlan, created: str | None = None
                     ) -> dict:
    """The measurement from each state's results.json (GovkitError when a state has no
    `none` slot at SIZE)."""
    groups = {}
    for state in STATES:
        groups[state] = [g for g in map(none_slot_medians, docs[state]) if g]
        if not groups[state]:
            raise GovkitError(f"the {state} runs measured no `none` slot at {SIZE} B: "
                              "nothing to compare")
    est = {state: estimate(groups[state], statistics.median, f"idle-vs-awake/{state}")
           for state in STATES}
    cmp = compare(est["idle"], est["awake"])
    ratios = {state: [r for r in map(protected_ratio, docs[state]) if r is not None]
              for state in STATES}

    def rounded(x, digits=3):
        return None if x is None else round(x, digits)

    return {
        "created": created or datetime.now(UTC).isoformat(timespec="seconds"),
        "statistic": STATISTIC, "interval": INTERVAL, "size": SIZE,
        "ratio": rounded(cmp["ratio"]),
        "ratio_ci95": [rounded(x) for x in cmp["ratio_ci95"]] if cmp["ratio_ci95"] else None,
        **{f"{state}_us": rounded(est[state].value) for state in STATES},
        **{f"{state}_ci95": [rounded(x) for x in est[state].interval]
           if est[state].interval else None for state in STATES},
        "protected": {"profile": PROTECTED,
                      **{state: rounded(_geomean(ratios[state])) for state in STATES}},
        "runs_per_state": plan.runs, "run_budget_s": plan.run_budget_s,
        "order": plan.order,
    }


def run_idle_vs_awake(plan: IdlePlan, work: Path, say: Callable[[str], None]) -> dict:
    """The plan's runs in ABBA order in `work`, then the measurement."""
    docs: dict[str, list[dict]] = {s: [] for s in STATES}
    for i, state in enumerate(plan.order):
        doc, code = bench_in_child(plan.bench_args(state), work, f"{state}{i}",
                                   f"awake/idle run {i + 1} of {len(plan.order)} ({state})")
        docs[state].append(doc)
        say(f"awake/idle run {i + 1} of {len(plan.order)}: CPUs "
            f"{'kept awake' if state == 'awake' else 'allowed to idle'}, exit {code}")
    return idle_vs_awake_of(docs, plan)


class IdleRefused(ValueError):
    """A stored measurement that does not check: the reason, in one line."""


def _number(value, name: str, low: float, high: float) -> float:
    if (not isinstance(value, int | float) or isinstance(value, bool)
            or not math.isfinite(value) or not low <= value <= high):
        raise IdleRefused(f"`idle_vs_awake.{name}` is not a number from {low:g} to {high:g}")
    return value


def aware_date(value: object, what: str, refused: type[Exception]) -> datetime:
    """`value` as an ISO date with a time zone, else `refused` saying which `what` is not
    (the calibration file's `created` and this measurement's)."""
    try:
        date = datetime.fromisoformat(str(value))
    except ValueError:
        raise refused(f"{what} is not a date") from None
    if date.tzinfo is None:
        raise refused(f"{what} has no time zone")
    return date


def check_idle_vs_awake(data: object) -> dict:
    """A stored measurement checked field by field (IdleRefused naming the first problem)."""
    if not isinstance(data, dict):
        raise IdleRefused("`idle_vs_awake` is not an object")
    aware_date(data.get("created"), "`idle_vs_awake.created`", IdleRefused)
    if data.get("size") != SIZE:
        raise IdleRefused(f"`idle_vs_awake.size` is not {SIZE}")
    _number(data.get("ratio"), "ratio", 0.01, 100)
    for state in STATES:
        _number(data.get(f"{state}_us"), f"{state}_us", 0, 1e9)
    for key, high in (("ratio_ci95", 100), *((f"{s}_ci95", 1e9) for s in STATES)):
        pair = data.get(key)
        if pair is not None:
            if not isinstance(pair, list) or len(pair) != 2:
                raise IdleRefused(f"`idle_vs_awake.{key}` is not a pair")
            lo, hi = (_number(x, key, 0, high) for x in pair)
            if lo > hi:
                raise IdleRefused(f"`idle_vs_awake.{key}` is not an interval")
    runs = data.get("runs_per_state")
    if not isinstance(runs, int) or isinstance(runs, bool) or not 1 <= runs <= 50:
        raise IdleRefused("`idle_vs_awake.runs_per_state` is not a count from 1 to 50")
    protected = data.get("protected")
    if not isinstance(protected, dict) or not isinstance(protected.get("profile"), str):
        raise IdleRefused("`idle_vs_awake.protected` does not name its profile")
    for state in STATES:
        if protected.get(state) is not None:
            _number(protected.get(state), f"protected.{state}", 0.01, 1000)
    return data


def idle_vs_awake_lines(m: dict) -> list[str]:
    """What `govkit calibrate` prints of the measurement."""
    ci = m.get("ratio_ci95")
    interval = f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else " (no interval: too few slots)"
    p = m["protected"]
    prot = (f"; {p['profile']}'s overhead {p['awake']:.2f}× awake, {p['idle']:.2f}× idle"
            if p.get("awake") and p.get("idle") else "")
    return [f"idle over awake: {m['ratio']:.2f}×{interval}, the `none` pair's median one-way "
            f"latency at {m['size']} B ({m['idle_us']:.1f} µs idle, {m['awake_us']:.1f} µs "
            f"awake; {m['runs_per_state']} run(s) of each, ABBA){prot}"]
