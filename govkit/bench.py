"""`govkit bench`: make each profile's signed bundle current, then run every point's repeats
in a seeded, shuffled, interleaved order, record each repeat as soon as it completes, and
keep repeating the points whose interval is still wider than the target while the time
budget allows.

Why this order: a noisy machine drifts. Running all of one profile, then all of the next,
would put the drift into the overheads; rounds (every point once per round), each in its
own shuffled order, spread it over all profiles instead.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import time
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from . import wire
from .bundle import BundleLog, bundle_hashes, ensure_bundle, ensure_pki, planned_bundle
from .capture import Capture, check_capture, pcap_bytes, udp_datagrams
from .defaults import (
    DEFAULT_BUDGET_S,
    DEFAULT_DURATION_S,
    DEFAULT_MAX_REPEATS,
    DEFAULT_REPEATS,
    DEFAULT_TARGET_CI_PCT,
    DEFAULT_WARMUP_S,
)
from .documents import MAX_DOMAIN_ID
from .errors import GovkitError
from .fsutil import write_atomic
from .profiles import Profile
from .results import ResultStore, check_resumable, environment
from .runners import get_runner
from .runners.base import (
    BenchPoint,
    Bundle,
    ForeignParticipant,
    RunnerError,
    describe,
    prepare,
    run_processes,
)
from .stats import INTERVAL_METHOD, repeat_figures

SEED_SIZES = (32, 64, 128, 256, 512, 1024, 8192, 63000)
DEFAULT_SIZES = (32, 1024, 63000)
MODES = ("latency", "throughput")
EXIT_INTERRUPTED = 130
LIMITS = {"repeat": (1, 100), "max_repeat": (1, 1000), "duration": (1, 3600),
          "warmup": (0, 600), "budget": (0, 7 * 24 * 3600)}


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
    return list(dict.fromkeys(sizes))


def parse_modes(text: str) -> list[str]:
    if text == "both":
        return list(MODES)
    if text not in MODES:
        raise GovkitError(f"invalid --mode {text!r}: use latency, throughput or both")
    return [text]


_DURATION_RE = re.compile(r"(\d{1,9})(s|m|h)?")


def parse_budget(text: str) -> int:
    """`--budget`: seconds, or with a unit: 300, 300s, 5m, 1h."""
    m = _DURATION_RE.fullmatch(text.strip())
    if not m:
        raise GovkitError(f"invalid --budget {text!r}: use seconds or e.g. 5m, 1h")
    return int(m[1]) * {"s": 1, None: 1, "m": 60, "h": 3600}[m[2]]


@dataclass
class BenchOptions:
    profiles: list[Profile]
    runner: str = "ddsperf"
    modes: list[str] = field(default_factory=lambda: ["latency"])
    sizes: list[int] = field(default_factory=lambda: list(DEFAULT_SIZES))
    duration: int = DEFAULT_DURATION_S
    warmup: int = DEFAULT_WARMUP_S
    repeat: int = DEFAULT_REPEATS
    max_repeat: int = DEFAULT_MAX_REPEATS
    target_ci: float = DEFAULT_TARGET_CI_PCT
    budget: int = DEFAULT_BUDGET_S
    seed: int | None = None
    out: Path | None = None
    ca: Path = Path("pki")
    build: Path = Path("build")
    resume: bool = False
    pin: bool = True
    dry_run: bool = False
    runner_options: dict = field(default_factory=dict)
    command: str = "govkit bench"
    wire: bool = False             # one extra, captured, unmeasured repeat per point
    wire_pcap: bool = False        # ... and its frames as a pcap (implies wire)
    wire_interface: str = "lo"     # where the points' traffic flows (templates: loopback)
    wire_expect: Profile | None = None   # check against this profile's governance instead

    def check(self) -> None:
        self.wire = self.wire or self.wire_pcap
        for name, (lo, hi) in LIMITS.items():
            value = getattr(self, name)
            if not lo <= value <= hi:
                raise GovkitError(f"--{name.replace('_', '-')} {value} is out of range "
                                  f"({lo} .. {hi})")
        if self.max_repeat < self.repeat:
            raise GovkitError(f"--max-repeat {self.max_repeat} is below --repeat {self.repeat}")
        if not 0 < self.target_ci <= 100:
            raise GovkitError(f"--target-ci {self.target_ci:g} must be a percentage in (0, 100]")


@dataclass
class BenchOutcome:
    out: Path | None
    failed: int = 0
    interrupted: bool = False
    summary: list[dict] = field(default_factory=list)
    dry_run_lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    wire: list[dict] = field(default_factory=list)          # results.json's wire.points
    wire_profiles: dict = field(default_factory=dict)       # ... and wire.profiles

    @property
    def wire_mismatches(self) -> list[str]:
        return [p for p, v in self.wire_profiles.items() if v["verdict"] != "match"]


@dataclass(frozen=True)
class Cell:
    """One point: what its repeats share."""
    profile: Profile
    mode: str
    size: int

    @property
    def key(self) -> tuple:
        return (self.profile.name, self.mode, self.size)


@dataclass(frozen=True)
class Pinning:
    cpus: tuple[int, int] | None          # (pub, sub)
    orchestrator: list[int] | None        # CPUs govkit itself moves to, if any are left
    note: str

    def to_json(self) -> dict | None:
        return None if self.cpus is None else {"pub": self.cpus[0], "sub": self.cpus[1]}


def pinning(pin: bool) -> Pinning:
    """pub and sub on two different CPUs, govkit on the others (if the machine has any)."""
    if not pin:
        return Pinning(None, None, "unpinned (--no-pin)")
    usable = sorted(os.sched_getaffinity(0))
    if len(usable) < 2:
        return Pinning(None, None, "only one usable CPU: running unpinned")
    rest = usable[2:] or None
    where = (f"govkit on CPU {','.join(map(str, rest))}" if rest
             else "govkit shares them (2 CPUs), idle while a point runs")
    return Pinning((usable[0], usable[1]), rest,
                   f"pub on CPU {usable[0]}, sub on CPU {usable[1]}, {where}")


def round_order(cells: list[Cell], seed: int, round_: int) -> list[Cell]:
    """Every point once, in this round's own seeded shuffle."""
    order = list(cells)
    random.Random(f"govkit/{seed}/round/{round_}").shuffle(order)
    return order


def _latest_results(root: Path = Path("results")) -> Path:
    runs = sorted(d for d in root.glob("*") if (d / "results.json").exists())
    if not runs:
        raise GovkitError("--resume: no earlier run under results/; pass --out DIR")
    return runs[-1]


def _terminate_as_interrupt(signum, frame):
    raise KeyboardInterrupt


def run_bench(opts: BenchOptions, console) -> BenchOutcome:
    # `kill` (SIGTERM) ends a run like Ctrl-C: runner processes stopped, results kept.
    previous = signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    affinity = os.sched_getaffinity(0)
    try:
        return _run_bench(opts, console)
    finally:
        signal.signal(signal.SIGTERM, previous)
        os.sched_setaffinity(0, affinity)


def _settings(opts: BenchOptions, runner, pin: Pinning, seed: int) -> dict:
    return {"runner": runner.name, "modes": opts.modes, "sizes": opts.sizes,
            "profiles": [p.name for p in opts.profiles], "duration_s": opts.duration,
            "warmup_s": opts.warmup if runner.per_second else 0, "pin": opts.pin,
            "cpus": pin.to_json(), "pinning": pin.note, "min_repeats": opts.repeat,
            "max_repeats": opts.max_repeat, "target_ci_pct": opts.target_ci,
            "budget_s": opts.budget, "seed": seed, "method": runner.method(),
            "interval": INTERVAL_METHOD}


def _make_bundles(opts: BenchOptions, runner, console) -> dict[str, Bundle]:
    """Every profile's signed bundle, made current (generated, signed, verified)."""
    log = BundleLog()
    pki = ensure_pki(opts.ca, log, single_ca=runner.needs_single_ca) \
        if any(p.security for p in opts.profiles) else None
    build = _build_dir(opts, runner)
    bundles = {p.name: ensure_bundle(p, pki, build, runner.name, log) if p.security
               else Bundle(p) for p in opts.profiles}
    for msg in log.messages:
        console.print(f"[dim]{msg}[/dim]")
    return bundles


def _build_dir(opts: BenchOptions, runner) -> Path:
    # Permissions differ per runner (its topics), so other runners get their own build dir.
    return opts.build if runner.name == "ddsperf" else opts.build / runner.name


def _resumed_store(opts: BenchOptions, settings: dict, console) -> ResultStore | None:
    """The stored run to continue (same experiment only), or None for a new run."""
    if not opts.resume:
        return None
    out = opts.out or _latest_results()
    store = ResultStore.load(out)
    check_resumable(store.doc["settings"], settings, out / "results.json")
    console.print(f"resuming {out}: {len(store.completed())} completed repeat(s) kept")
    # Same seed (same order) as before; the new repeat, budget and target settings apply.
    for key in ("min_repeats", "max_repeats", "target_ci_pct", "budget_s"):
        store.doc["settings"][key] = settings[key]
    return store


def _new_store(opts: BenchOptions, settings: dict, runner) -> ResultStore:
    out = opts.out or Path("results") / datetime.now().strftime("%Y%m%d-%H%M%S")
    if (out / "results.json").exists():
        raise GovkitError(f"{out}/results.json exists; use --resume to continue it or "
                          f"choose another --out")
    return ResultStore.create(out, opts.command, settings, environment(runner.versions()),
                              [p.to_json() for p in opts.profiles])


def _run_bench(opts: BenchOptions, console) -> BenchOutcome:
    started = time.monotonic()     # --budget counts from here, signing included
    opts.check()
    runner = get_runner(opts.runner, **opts.runner_options)
    cells = [Cell(p, m, s) for p in opts.profiles for m in opts.modes for s in opts.sizes]
    seed = opts.seed if opts.seed is not None else random.randrange(1 << 31)
    pin = pinning(opts.pin)
    if opts.dry_run:
        return _dry_run(opts, runner, cells, seed, pin)

    if opts.wire:
        check_capture(opts.wire_interface)       # no privilege: one line, exit 2, at once
    runner.check_installed()
    if pin.cpus and shutil.which("taskset") is None:
        raise GovkitError("pinning needs `taskset` (Debian package util-linux); install it "
                          "or pass --no-pin")
    settings = _settings(opts, runner, pin, seed)
    store = _resumed_store(opts, settings, console)     # refuse a mismatch before any work
    bundles = _make_bundles(opts, runner, console)
    store = store or _new_store(opts, settings, runner)
    store.set_signed_files([h for b in bundles.values() for h in bundle_hashes(b)])
    store.save()
    seed = store.doc["settings"]["seed"]
    console.print(f"[dim]{len(cells)} point(s) × {opts.repeat}–{opts.max_repeat} repeats of "
                  f"{settings['warmup_s']} s warm-up + {opts.duration} s; {pin.note}; "
                  f"order seed {seed}; extra repeats until ±{opts.target_ci:g}% within "
                  f"{opts.budget} s[/dim]")
    if pin.orchestrator:
        os.sched_setaffinity(0, pin.orchestrator)
    outcome = BenchOutcome(store.directory)
    if opts.wire:
        done = {wire_key(p) for p in store.doc.get("wire", {}).get("points", [])
                if p["status"] == "ok"}
        outcome.interrupted = wire_phase(opts, runner, cells, bundles, pin,
                                         store.directory / "config", console, done,
                                         store.add_wire, store.directory / "wire")
    if not outcome.interrupted:
        outcome = _schedule(opts, runner, store, cells, bundles, pin, seed, console, started)
    outcome.summary = store.doc["summary"]
    outcome.wire = store.doc.get("wire", {}).get("points", [])
    outcome.wire_profiles = store.doc.get("wire", {}).get("profiles", {})
    return outcome


def _dry_run(opts: BenchOptions, runner, cells: list[Cell], seed: int, pin: Pinning
             ) -> BenchOutcome:
    """The command lines of the minimum rounds, in run order; nothing is created."""
    build = _build_dir(opts, runner)
    bundles = {p.name: planned_bundle(p, opts.ca, build) for p in opts.profiles}
    workdir = (opts.out or Path("results") / "<timestamp>") / "config"
    lines = [f"# {pin.note}; order seed {seed}; config files would go to {workdir}/"]
    for r in range(opts.repeat):
        for cell in round_order(cells, seed, r):
            point = _point(cell, opts, r, pin)
            lines.append(f"# {cell.profile.name} {cell.mode} size {cell.size} repeat {r}")
            lines += [describe(s) for s in
                      runner.commands(point, bundles[cell.profile.name], workdir)]
    if opts.wire:
        lines.insert(1, "# --wire: before the rounds below, one extra repeat of every point "
                        f"with the same commands on its own domain, captured on "
                        f"{opts.wire_interface} and not measured")
    lines.append(f"# then up to {opts.max_repeat} repeats of points whose 95% interval is "
                 f"wider than ±{opts.target_ci:g}%, while within {opts.budget} s")
    return BenchOutcome(None, dry_run_lines=lines)


# Domains come from the system's randomness, not from --seed: two runs with the same seed
# at the same time (two users, two CI jobs) must not share them.
_domains = random.SystemRandom()


def _point(cell: Cell, opts: BenchOptions, repeat: int, pin: Pinning) -> BenchPoint:
    # A private domain per repeat: a stray process of an earlier repeat cannot match, and
    # a stranger on it is detected (ForeignParticipant) and the repeat run again elsewhere.
    return BenchPoint(cell.profile, cell.mode, cell.size, opts.duration, repeat,
                      domain_id=_domains.randint(1, MAX_DOMAIN_ID), cpus=pin.cpus,
                      warmup=opts.warmup)


def _schedule(opts: BenchOptions, runner, store: ResultStore, cells: list[Cell],
              bundles: dict[str, Bundle], pin: Pinning, seed: int, console, started: float
              ) -> BenchOutcome:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    outcome = BenchOutcome(store.directory)
    workdir = store.directory / "config"
    done = store.completed()
    n = len(store.doc["results"])
    elapsed: list[float] = []
    columns = (TextColumn("{task.description}"), BarColumn(),
               TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn())
    todo_min = sum(1 for r in range(opts.repeat) for c in cells if (*c.key, r) not in done)
    # A slow refresh keeps the orchestrator off the CPUs the two runner processes use.
    with Progress(*columns, console=console, refresh_per_second=1, transient=True) as progress:
        task = progress.add_task("starting", total=todo_min)
        for r in range(opts.max_repeat):
            if r < opts.repeat:
                round_cells = round_order(cells, seed, r)
            else:
                wide = set(_wide_points(store.doc["summary"], opts.target_ci))
                round_cells = [c for c in round_order(cells, seed, r) if c.key in wide]
                if not round_cells:
                    break
            for cell in round_cells:
                if (*cell.key, r) in done:
                    continue
                if r >= opts.repeat:
                    expect = (sum(elapsed) / len(elapsed)) if elapsed else \
                        runner.timeout(_point(cell, opts, r, pin))
                    if time.monotonic() - started + expect > opts.budget:
                        outcome.notes.append(
                            f"stopped adding repeats: the {opts.budget} s budget is spent "
                            "(--budget to allow more)")
                        break
                    progress.update(task, total=progress.tasks[0].total + 1)
                point = _point(cell, opts, r, pin)
                n += 1
                progress.update(task, description=f"{cell.profile.name} {cell.mode} "
                                                  f"{cell.size} B (repeat {r})")
                try:
                    result, failure = run_point(runner, point, bundles[cell.profile.name],
                                                workdir, order=n - 1)
                except KeyboardInterrupt:
                    outcome.interrupted = True
                    break
                elapsed.append(result["elapsed_s"])
                if failure:
                    outcome.failed += 1
                    progress.console.print(f"[red]FAILED[/red] {cell.profile.name} {cell.mode} "
                                           f"size {cell.size} repeat {r}: {failure}",
                                           highlight=False)
                store.add(result)
                progress.advance(task)
            else:
                continue
            break   # interrupted, or out of budget
    outcome.summary = store.doc["summary"]
    return outcome


def _wide_points(summary: list[dict], target: float):
    for row in summary:
        if row["ci_halfwidth_pct"] is None or row["ci_halfwidth_pct"] > target:
            yield (row["profile"], row["mode"], row["size"])


def run_point(runner, point: BenchPoint, bundle: Bundle, workdir: Path, order: int = 0,
              attempts: int = 3, around=None) -> tuple[dict, str | None]:
    """Run one repeat of a point (again on a fresh domain if a stranger joined it); returns
    its record and, if it failed, what to tell the user (the error and each process's last
    lines). `around(point, specs)`, if given, is a context manager open while the processes
    run (it may wrap the specs' `stop_when` to learn when govkit stops them)."""
    strangers = []
    for _ in range(attempts - 1):
        result, failure = _run_once(runner, point, bundle, workdir, order, around)
        if result.get("error_kind") != "foreign_participant":
            break
        strangers.append(result["error"])
        point = replace(point, domain_id=_domains.randint(1, MAX_DOMAIN_ID))
    else:
        result, failure = _run_once(runner, point, bundle, workdir, order, around)
    if strangers:
        result["retried_after"] = strangers
    return result, failure


def _run_once(runner, point: BenchPoint, bundle: Bundle, workdir: Path, order: int,
              around=None) -> tuple[dict, str | None]:
    specs = prepare(runner, point, bundle, workdir)
    result = {"profile": point.profile.name, "mode": point.mode, "size": point.size,
              "repeat": point.repeat, "order": order, "domain_id": point.domain_id,
              "commands": [describe(s) for s in specs],
              "started": datetime.now(UTC).isoformat(timespec="seconds")}
    t0 = time.monotonic()
    outputs = {}
    failure = None
    try:
        with around(point, specs) if around else nullcontext():
            outputs = run_processes(specs, timeout=runner.timeout(point))
        res = runner.parse(point, outputs)
    except RunnerError as e:
        result.update(status="failed", error=str(e),
                      error_kind="foreign_participant" if isinstance(e, ForeignParticipant)
                      else "runner",
                      output_tail={o.role: o.tail(12) for o in outputs.values()})
        failure = str(e) + "".join(f"\n  [{o.role}] {o.status}: "
                                   + (o.tail(6).replace("\n", "\n    ") or "(no output)")
                                   for o in outputs.values())
    else:
        warmup = point.warmup if runner.per_second else 0
        result.update(status="ok", error=None,
                      raw={"format": res.row_format, "rows": res.rows,
                           **({"summary": res.summary} if res.summary is not None else {}),
                           **res.extra},
                      warmup_rows=warmup, measured_rows=point.duration if runner.per_second
                      else 0)
        figures, count = repeat_figures(result)
        result.update({"latency_us" if point.mode == "latency" else "throughput": figures,
                       "count": count})
    result["cpus"] = {o.role: o.cpus_allowed for o in outputs.values()}
    result["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    result["elapsed_s"] = round(time.monotonic() - t0, 2)
    return result, failure


# ------------------------------------------------------------------------------ wire

def wire_key(record: dict) -> tuple:
    return (record["profile"], record["mode"], record["size"])


def wire_phase(opts: BenchOptions, runner, cells: list[Cell], bundles: dict[str, Bundle],
               pin: Pinning, workdir: Path, console, done: set, record, pcap_dir: Path
               ) -> bool:
    """One extra repeat of every point not in `done`, captured and not measured: its
    record goes to `record` (results.json's `wire`), never to `results`, so no statistic
    sees it; the capture socket exists only while that repeat's processes run, so the
    measured repeats run without it. Returns True if interrupted."""
    for cell in cells:
        if cell.key in done:
            continue
        expect = wire.expectation(opts.wire_expect or cell.profile)
        console.print(f"[dim]wire: capturing {cell.profile.name} {cell.mode} {cell.size} B "
                      f"on {opts.wire_interface} (an extra repeat, not measured)[/dim]")
        try:
            rec = run_wire_point(runner, _point(cell, opts, 0, pin), bundles[cell.profile.name],
                                 workdir, expect, opts.wire_interface,
                                 pcap_dir if opts.wire_pcap else None)
        except KeyboardInterrupt:
            return True
        verdict = rec["verdict"].upper() if rec["verdict"] != "match" else "match"
        console.print(f"wire: {cell.profile.name} {cell.mode} {cell.size} B: {verdict}; "
                      f"{rec.get('headline') or rec['error']}", markup=False, highlight=False)
        record(rec)
    return False


def run_wire_point(runner, point: BenchPoint, bundle: Bundle, workdir: Path,
                   expect: wire.Expectation, interface: str, pcap_dir: Path | None) -> dict:
    """Run one point with its traffic captured; parse and judge it afterwards."""
    captures: list[Capture] = []

    def capture(p: BenchPoint, specs) -> Capture:
        cap = Capture(interface, wire.PORTS.ports(p.domain_id))
        for spec in specs:     # the moment govkit stops the processes: shutdown from there
            if spec.stop_when is not None:
                spec.stop_when = _marking_stop(spec.stop_when, cap)
        captures.append(cap)
        return cap

    result, failure = run_point(runner, point, bundle, workdir, around=capture)
    cap = captures[-1]
    rec = {k: result.get(k) for k in ("profile", "mode", "size", "domain_id", "started",
                                      "finished", "elapsed_s", "commands", "status", "error")}
    rec["capture"] = cap.summary()
    rec["pcap"] = None
    frames = cap.own_frames()      # only what the point's two processes sent
    if pcap_dir is not None:
        path = pcap_dir / f"{point.profile.name}-{point.mode}-{point.size}.pcap"
        write_atomic(path, pcap_bytes(frames))
        rec["pcap"] = str(path)
    if failure or cap.error:
        rec.update(status="failed", error=failure or cap.error, verdict="failed",
                   reasons=[failure or cap.error], expected=expect.to_json())
        return rec
    # Parsed now, after the processes stopped and before the next point starts.
    rec.update(wire.analyse(udp_datagrams(frames), result["domain_id"], expect,
                            getattr(runner, "wire_filler", None), cap.stop_ns,
                            lost=cap.kernel_drops + cap.seen - len(cap.frames),
                            others=len(cap.frames) - len(frames),
                            attributed=bool(cap.own_ports)))
    cap.frames.clear()
    return rec


def _marking_stop(stop_when, cap: Capture):
    def wrapped(text: str) -> bool:
        done = stop_when(text)
        if done:
            cap.mark_stop()
        return done
    return wrapped


def wire_check(opts: BenchOptions, console) -> BenchOutcome:
    """`govkit wire-check`: the wire phase alone, no results directory (pcaps to --out)."""
    import tempfile

    opts.check()
    check_capture(opts.wire_interface)
    runner = get_runner(opts.runner, **opts.runner_options)
    runner.check_installed()
    bundles = _make_bundles(opts, runner, console)
    cells = [Cell(p, m, s) for p in opts.profiles for m in opts.modes for s in opts.sizes]
    outcome = BenchOutcome(opts.out)
    with tempfile.TemporaryDirectory(prefix="govkit-wire-") as tmp:
        outcome.interrupted = wire_phase(opts, runner, cells, bundles, pinning(opts.pin),
                                         Path(tmp), console, set(), outcome.wire.append,
                                         opts.out or Path("."))
    outcome.wire_profiles = wire.profile_verdicts(outcome.wire)
    return outcome
