"""`govkit bench`: make each profile's signed bundle current, run the runner per point,
record every point as soon as it completes, and summarise."""

from __future__ import annotations

import random
import shlex
import signal
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from .bundle import BundleLog, bundle_hashes, ensure_bundle, ensure_pki
from .errors import GovkitError
from .profiles import Profile
from .results import ResultStore, environment
from .runners import get_runner
from .runners.base import BenchPoint, Bundle, RunnerError, run_processes

SEED_SIZES = (32, 64, 128, 256, 512, 1024, 8192, 63000)
DEFAULT_SIZES = (32, 1024, 63000)
MODES = ("latency", "throughput")
EXIT_INTERRUPTED = 130


def parse_sizes(text: str) -> list[int]:
    if text.strip() == "seeds":
        return list(SEED_SIZES)
    try:
        sizes = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise GovkitError(f"invalid --sizes {text!r}: use e.g. 32,1024,63000 or 'seeds'") \
            from None
    if not sizes or any(s < 12 or s > 64 * 1024 * 1024 for s in sizes):
        # ddsperf's KS topic has a 12-byte fixed part; below that it cannot send.
        raise GovkitError(f"invalid --sizes {text!r}: sizes must be 12 .. 67108864 bytes")
    return sizes


def parse_modes(text: str) -> list[str]:
    if text == "both":
        return list(MODES)
    if text not in MODES:
        raise GovkitError(f"invalid --mode {text!r}: use latency, throughput or both")
    return [text]


@dataclass
class BenchOptions:
    profiles: list[Profile]
    runner: str = "ddsperf"
    modes: list[str] = field(default_factory=lambda: ["latency"])
    sizes: list[int] = field(default_factory=lambda: list(DEFAULT_SIZES))
    duration: float = 5.0
    repeat: int = 1
    out: Path | None = None
    ca: Path = Path("pki")
    build: Path = Path("build")
    resume: bool = False
    pin: bool = False
    dry_run: bool = False
    runner_options: dict = field(default_factory=dict)
    command: str = "govkit bench"


@dataclass
class BenchOutcome:
    out: Path | None
    failed: int = 0
    interrupted: bool = False
    summary: list[dict] = field(default_factory=list)
    dry_run_lines: list[str] = field(default_factory=list)


def _points(opts: BenchOptions, base_domain: int) -> list[BenchPoint]:
    points = []
    cpus = (0, 1) if opts.pin else None
    # Repetitions outermost so that slow drifts of a noisy machine spread over profiles.
    for rep in range(opts.repeat):
        for p in opts.profiles:
            for mode in opts.modes:
                for size in opts.sizes:
                    i = len(points)
                    points.append(BenchPoint(p, mode, size, opts.duration, rep,
                                             domain_id=1 + (base_domain + i) % 229, cpus=cpus))
    return points


def _latest_results(root: Path = Path("results")) -> Path:
    runs = sorted(d for d in root.glob("*") if (d / "results.json").exists())
    if not runs:
        raise GovkitError("--resume: no earlier run under results/; pass --out DIR")
    return runs[-1]


def _describe(spec) -> str:
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in spec.env.items())
    pin = f"taskset -c {spec.cpu} " if spec.cpu is not None else ""
    return f"{env + ' ' if env else ''}{pin}{shlex.join(spec.argv)}"


def _terminate_as_interrupt(signum, frame):
    raise KeyboardInterrupt


def run_bench(opts: BenchOptions, console: Console) -> BenchOutcome:
    # `kill` (SIGTERM) ends a run like Ctrl-C: runner processes stopped, results kept.
    previous = signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    try:
        return _run_bench(opts, console)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _make_bundles(opts: BenchOptions, runner, console: Console) -> dict[str, Bundle]:
    """Every profile's signed bundle, made current (generated, signed, verified)."""
    log = BundleLog()
    pki = ensure_pki(opts.ca, log, single_ca=runner.needs_single_ca) \
        if any(p.security for p in opts.profiles) else None
    # Permissions differ per runner (its topics), so other runners get their own build dir.
    build = opts.build if runner.name == "ddsperf" else opts.build / runner.name
    bundles = {p.name: ensure_bundle(p, pki, build, runner.name, log) if p.security
               else Bundle(p) for p in opts.profiles}
    for msg in log.messages:
        console.print(f"[dim]{msg}[/dim]")
    return bundles


def _open_store(opts: BenchOptions, runner, console: Console) -> ResultStore:
    if opts.resume:
        out = opts.out or _latest_results()
        store = ResultStore.load(out)
        console.print(f"resuming {out}: {len(store.completed())} completed point(s) kept")
        return store
    out = opts.out or Path("results") / datetime.now().strftime("%Y%m%d-%H%M%S")
    if (out / "results.json").exists():
        raise GovkitError(f"{out}/results.json exists; use --resume to continue it or "
                          f"choose another --out")
    settings = {"modes": opts.modes, "sizes": opts.sizes, "duration_s": opts.duration,
                "warmup_s": runner.warmup_s, "repeat": opts.repeat, "pin": opts.pin,
                "aggregation": runner.aggregation()}
    return ResultStore.create(out, opts.command, runner.name, settings,
                              environment(runner.versions()),
                              [p.to_json() for p in opts.profiles])


def _run_bench(opts: BenchOptions, console: Console) -> BenchOutcome:
    if opts.repeat < 1 or opts.duration < 1:
        raise GovkitError("--repeat and --duration must be at least 1")
    runner = get_runner(opts.runner, pin=opts.pin, **opts.runner_options)
    if not opts.dry_run:
        runner.check_installed()
    bundles = _make_bundles(opts, runner, console)
    points = _points(opts, base_domain=random.randrange(229))

    if opts.dry_run:
        workdir = (opts.out or Path("results") / "dry-run") / "config"
        lines = []
        for point in points:
            lines.append(f"# {point.profile.name} {point.mode} size {point.size} "
                         f"repeat {point.repeat}")
            lines += [_describe(spec) for spec in
                      runner.prepare(point, bundles[point.profile.name], workdir)]
        return BenchOutcome(None, dry_run_lines=lines)

    store = _open_store(opts, runner, console)
    out, workdir = store.directory, store.directory / "config"
    for b in bundles.values():
        store.add_signed_files(bundle_hashes(b))
    done = store.completed()
    todo = [p for p in points
            if (p.profile.name, p.mode, p.size, p.repeat) not in done]
    outcome = BenchOutcome(out)
    columns = (TextColumn("{task.description}"), BarColumn(),
               TextColumn("{task.completed}/{task.total}"), TimeRemainingColumn())
    # A slow refresh keeps the orchestrator off the CPUs the two runner processes use.
    with Progress(*columns, console=console, refresh_per_second=1, transient=True) as progress:
        task = progress.add_task("starting", total=len(todo))
        for point in todo:
            progress.update(task, description=f"{point.profile.name} {point.mode} "
                                              f"{point.size} B (rep {point.repeat})")
            try:
                result, failure = run_point(runner, point, bundles[point.profile.name], workdir)
            except KeyboardInterrupt:
                outcome.interrupted = True
                break
            if failure:
                outcome.failed += 1
                progress.console.print(f"[red]FAILED[/red] {point.profile.name} {point.mode} "
                                       f"size {point.size}: {failure}", highlight=False)
            store.add(result)
            progress.advance(task)
    outcome.summary = store.doc["summary"]
    return outcome


def run_point(runner, point: BenchPoint, bundle: Bundle, workdir: Path
              ) -> tuple[dict, str | None]:
    """Run one point; returns its result record and, if it failed, what to tell the user
    (the error and each process's last lines)."""
    specs = runner.prepare(point, bundle, workdir)
    result = {"profile": point.profile.name, "mode": point.mode, "size": point.size,
              "repeat": point.repeat, "domain_id": point.domain_id,
              "commands": [_describe(s) for s in specs],
              "started": datetime.now(UTC).isoformat(timespec="seconds")}
    t0 = time.monotonic()
    outputs = {}
    failure = None
    try:
        outputs = run_processes(specs, timeout=runner.timeout(point))
        res = runner.parse(point, outputs)
    except RunnerError as e:
        result.update(status="failed", error=str(e),
                      output_tail={o.role: o.tail(12) for o in outputs.values()})
        failure = str(e) + "".join(f"\n  [{o.role}] {o.status}: "
                                   + (o.tail(6).replace("\n", "\n    ") or "(no output)")
                                   for o in outputs.values())
    else:
        result.update(status="ok", error=None, count=res.count,
                      **({"latency_us": res.latency_us} if res.latency_us else {}),
                      **({"throughput": res.throughput} if res.throughput else {}),
                      seconds=res.extra.get("seconds"))
    result["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    result["elapsed_s"] = round(time.monotonic() - t0, 2)
    return result, failure


def summary_table(outcome: BenchOutcome) -> Table:
    table = Table(title="Median one-way latency and overhead over `none`")
    for col in ("profile", "size (B)", "median (µs)", "p99 (µs)", "× none", "× none (RTI)"):
        table.add_column(col, justify="left" if col == "profile" else "right",
                         overflow="fold")
    for row in outcome.summary:
        table.add_row(row["profile"], str(row["size"]), f"{row['median_us']:.1f}",
                      f"{row['p99_us']:.1f}",
                      f"{row['overhead_vs_none']:.2f}" if row["overhead_vs_none"] else "–",
                      f"{row['rti_ratio']:.2f}" if row["rti_ratio"] else "–")
    return table
