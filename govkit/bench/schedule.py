"""`govkit bench`: make each profile's signed bundle current, then run every point's repeats
in a seeded, shuffled, interleaved order, record each repeat as soon as it completes, and
keep repeating the points whose interval is still wider than the target while the time
budget allows.

Why this order: a noisy machine drifts. Running all of one profile, then all of the next,
would put the drift into the overheads; rounds (every point once per round), each in its
own shuffled order, spread it over all profiles instead.

Only the order lives here (and resuming, the dry run, the handing of latency points to the
rotation); what a run is asked is govkit.bench.options, the machine govkit.bench.machine,
one repeat govkit.bench.repeat, the captured repeats govkit.bench.wire_phase.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import time
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from govkit.bench.awake import IDLE_METHOD, AwakeCpus, awake_cpus
from govkit.bench.awake import METHOD as AWAKE_METHOD
from govkit.bench.context import RunContext
from govkit.bench.discovery import DISCOVERY_INTERVAL_METHOD, run_discovery
from govkit.bench.loadwatch import LoadWatch
from govkit.bench.machine import Pinning, environment, pinning, realtime_note
from govkit.bench.options import BenchOptions, BenchOutcome, Cell
from govkit.bench.repeat import build_dir, make_bundles, point, run_point
from govkit.bench.rotation import (
    MIN_ARM_ROUNDS,
    arms_of,
    baseline_instances,
    instances_of,
    run_rotation,
)
from govkit.bench.wire_phase import check_wire_networks, wire_key, wire_phase
from govkit.catalog.measures import CPU, DISCOVERY, THROUGHPUT
from govkit.catalog.profiles import domain_ids_text
from govkit.catalog.runners import runner_info
from govkit.common.errors import GovkitError
from govkit.generate.bundle import bundle_hashes, planned_bundle, tls_keystore_path
from govkit.results.paired import ESTIMATOR, PAIRED_INTERVAL_METHOD
from govkit.results.stats import INTERVAL_METHOD
from govkit.results.store import RESULTS_NAME, ResultStore, check_resumable
from govkit.results.summary import point_key
from govkit.runners import get_runner
from govkit.runners.crypto import CRYPTO_DEFAULTS
from govkit.runners.netpath import NetPaths
from govkit.runners.network import DEFAULT, LOSS_MEANING, ROLES
from govkit.runners.processes import command_line, process_placement
from govkit.wire.capture import check_capture


def round_order(cells: list[Cell], seed: int, round_: int) -> list[Cell]:
    """Every point once, in this round's own seeded shuffle."""
    order = list(cells)
    random.Random(f"govkit/{seed}/round/{round_}").shuffle(order)
    return order


def _latest_results(root: Path = Path("results")) -> Path:
    runs = sorted(d for d in root.glob("*") if (d / RESULTS_NAME).exists())
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


def _settings(opts: BenchOptions, runner, pin: Pinning, realtime: tuple[bool, str],
              seed: int) -> dict:
    network = {"transports": opts.transports, "paths": opts.paths,
               "loss_rates_pct": opts.loss_rates}
    if opts.hosts:
        network.update(hosts=opts.hosts, peer_addresses=opts.peer_addresses or None)
    if any(opts.loss_rates):
        network["loss"] = LOSS_MEANING
    if "tls" in opts.transports:
        network["tls"] = ("DDSI over TCP with TLS 1.3 (Cyclone <SSL>): each side's TLS key "
                          "pair issued by the test PKI's Identity CA, both sides verify "
                          "the other's certificate chain")
    crypto = crypto_settings(opts, runner)
    return {**network, **crypto, "runner": runner.name, "runtime": runner.runtime(),
            "modes": opts.modes,
            "sizes": opts.sizes,
            "profiles": [p.name for p in opts.profiles], "duration_s": opts.duration,
            "warmup_s": opts.warmup if runner.per_second else 0, "pin": opts.pin,
            "cpus": pin.to_json(), "pinning": pin.note, "realtime": realtime[0],
            # govkit's CFS autogroup: its runner processes and spinners share it
            # (govkit.runners.processes), which results.json's placements show
            "autogroup": process_placement(os.getpid()).get("autogroup"),
            "scheduling": realtime[1], "cpus_kept_awake": opts.keep_awake,
            "throughput_by_rotation": opts.rotate_throughput,
            "idle": AWAKE_METHOD if opts.keep_awake else IDLE_METHOD,
            "min_repeats": opts.repeat,
            "max_repeats": opts.max_repeat, "target_ci_pct": opts.target_ci,
            "budget_s": opts.budget, "seed": seed, "gates": opts.gates,
            # (only when asked: a run at 1 reader keeps the settings it always had)
            **({"readers": opts.readers} if opts.readers != [1] else {}),
            "method": runner.method(),
            "interval": DISCOVERY_INTERVAL_METHOD if opts.modes == [DISCOVERY]
            else (f"latency (rotation): {PAIRED_INTERVAL_METHOD} Other points: "
                  f"{INTERVAL_METHOD}") if runner_info(runner.name).rotates
            else INTERVAL_METHOD}


def crypto_settings(opts: BenchOptions, runner) -> dict:
    """results.json's settings.crypto: the variants asked for, what each pair was given,
    and the runtime's defaults (stated also when nothing was asked)."""
    defaults = CRYPTO_DEFAULTS.get(runner.name)
    if not defaults:
        return {}
    rotating = runner_info(runner.name).rotates
    return {"crypto": {
        "ciphers": opts.ciphers, "rekeys": opts.rekeys, "defaults": defaults,
        "variants": [{**v.to_json(),
                      "applied": runner.crypto_applied(v) if rotating else None}
                     for v in opts.variants]}}


def _resumed_store(opts: BenchOptions, settings: dict, console) -> ResultStore | None:
    """The stored run to continue (same experiment only), or None for a new run."""
    if not opts.resume:
        return None
    out = opts.out or _latest_results()
    store = ResultStore.load(out)
    check_resumable(store.doc["settings"], settings, out / RESULTS_NAME,
                    (store.doc.get("rotation") or {}).get("settings"), opts.rotation.to_json())
    console.print(f"resuming {out}: {store.kept()}")
    # Same seed (same order) as before; the new repeat, budget, target and gate settings
    # apply.
    for key in ("min_repeats", "max_repeats", "target_ci_pct", "budget_s", "gates"):
        store.doc["settings"][key] = settings[key]
    return store


def _new_store(opts: BenchOptions, settings: dict, runner) -> ResultStore:
    out = opts.out or Path("results") / datetime.now().strftime("%Y%m%d-%H%M%S")
    if (out / RESULTS_NAME).exists():
        raise GovkitError(f"{out}/results.json exists; use --resume to continue it or "
                          f"choose another --out")
    return ResultStore.create(out, opts.command, settings, environment(runner.versions()),
                              [p.to_json() for p in opts.profiles])


def _run_bench(opts: BenchOptions, console) -> BenchOutcome:
    started = time.monotonic()     # --budget counts from here, signing included
    load = LoadWatch()             # the load average before govkit starts anything
    opts.check()
    runner = get_runner(opts.runner, **opts.runner_options)
    # a version axis: the other install's runner by its tag (its arms are PROFILE@TAG)
    others = {tag: get_runner(opts.runner, **o) for tag, o in opts.runtime_axis[1:]}
    cells = [Cell(p, m, s, n) for p in opts.profiles for m in opts.point_modes
             for s in opts.sizes for n in opts.networks]
    if any(rotates(runner, c, opts.rotate_throughput) for c in cells):
        # a rotation without `none` is refused here, not after signing and writing an
        # empty results.json (issue 37, item 12)
        arms_of(opts.profiles, True, opts.variants, list(others))
    seed = opts.seed if opts.seed is not None else random.randrange(1 << 31)
    pin = pinning(opts.pin)
    realtime = realtime_note(opts.realtime, opts.modes, opts.dry_run)
    pin = replace(pin, realtime=realtime[0])
    paths = NetPaths(opts.paths, opts.hosts, opts.peer_addresses, opts.ssh_config)
    if opts.dry_run:
        if opts.resume:     # the stored run's order, as the real --resume would take it
            seed = ResultStore.load(opts.out or _latest_results()).doc["settings"]["seed"]
        workdir = (opts.out or Path("results") / "<timestamp>") / "config"
        return _dry_run(RunContext(opts, runner, pin, seed, console, workdir,
                                   _planned_bundles(opts, runner), paths=paths,
                                   started=started, runtimes=others), cells, realtime[1])

    paths.check()       # e.g. no root for --net netns: one line, exit 2, before any work
    if opts.wire:
        check_wire_networks(opts)
        check_capture(opts.wire_interface)       # no privilege: one line, exit 2, at once
    settings = _settings(opts, runner, pin, realtime, seed)
    if others:
        settings["runtimes"] = [{**(r.runtime() or {}), "tag": tag} for tag, r in
                                zip([t for t, _ in opts.runtime_axis], [runner, *others.values()],
                                    strict=True)]
    # refuse a mismatch (another runtime too) before any work: before govkit's program is
    # built against the runtime now selected
    store = _resumed_store(opts, settings, console)
    runner.check_installed()
    for other in others.values():
        other.check_installed()
    if pin.cpus and shutil.which("taskset") is None:
        raise GovkitError("pinning needs `taskset` (Debian package util-linux); install it "
                          "or pass --no-pin")
    bundles = make_bundles(opts, runner, console)
    store = store or _new_store(opts, settings, runner)
    store.set_signed_files([h for b in bundles.values() for h in bundle_hashes(b)])
    store.save()
    seed = store.doc["settings"]["seed"]
    repeated = [c for c in cells if not rotates(runner, c, opts.rotate_throughput)]
    if repeated:        # (the rotation says its own shape when it starts)
        console.print(f"{len(repeated)} point(s) × {opts.repeat}–{opts.max_repeat} "
                      f"repeats of {settings['warmup_s']} s warm-up + {opts.duration} s; "
                      f"{pin.note}; {realtime[1]}; order seed {seed}; extra repeats until "
                      f"±{opts.target_ci:g}% within {opts.budget} s", style="dim")
    if pin.orchestrator:
        os.sched_setaffinity(0, pin.orchestrator)
    ctx = RunContext(opts, runner, pin, seed, console, store.directory / "config", bundles,
                     store, paths, load, started, others)
    # Namespaces, veth and remote work directories exist only inside this block: they are
    # removed however it is left (end, failed point, exception, Ctrl-C, SIGTERM); so are
    # the spinners that keep the measured CPUs awake.
    awake = AwakeCpus(awake_cpus(pin) if opts.keep_awake else ())
    with paths, awake:
        # saved at once: if govkit is killed, results.json names what it had set up
        store.doc["settings"]["network"] = paths.to_json()
        store.save()
        outcome = BenchOutcome(store.directory)
        if opts.wire:
            done = {wire_key(p) for p in store.doc.get("wire", {}).get("points", [])
                    if p["status"] == "ok"}
            began = time.monotonic()
            outcome.interrupted = wire_phase(ctx, cells, done, store.add_wire,
                                             store.directory / "wire")
            # the capture measures nothing: --budget is for measuring (issue 46 item 11:
            # `--budget 60 --wire --leaks` spent 58 s capturing, leaving the minimum rounds)
            took = time.monotonic() - began
            ctx = replace(ctx, started=ctx.started + took)
            ctx.say(f"wire: the capture took {took:.0f} s, not counted in the "
                    f"{ctx.budget} s --budget: it is for measuring", style="dim")
        rotated = [c for c in cells if rotates(runner, c, opts.rotate_throughput)]
        if rotated and not outcome.interrupted:
            outcome = _rotate(ctx, rotated)
        if repeated and not outcome.interrupted:
            load.start()
            more = _schedule(ctx, repeated)
            store.set_load(load.finish())
            more.failed += outcome.failed
            more.notes = outcome.notes + more.notes
            outcome = more
        if DISCOVERY in opts.modes and not outcome.interrupted:
            load.start()
            found = run_discovery(ctx)
            store.set_load(load.finish())
            outcome.failed += found.failed
            outcome.interrupted = found.interrupted
            outcome.notes += found.notes
        store.doc["settings"]["network"] = paths.to_json()
        store.save()
    outcome.summary = store.doc["summary"]
    outcome.doc = store.doc
    outcome.wire = store.doc.get("wire", {}).get("points", [])
    outcome.wire_profiles = store.doc.get("wire", {}).get("profiles", {})
    return outcome


def rotates(runner, cell: Cell, throughput: bool = False) -> bool:
    """Whether the point is measured by rotation (govkit.bench.rotation): latency points of a
    runner that can, and throughput points of one whose program has throughput slots
    (unless --per-repeat-throughput), on the default network. Rotated throughput read
    0.58-0.76 of a lone ddsperf pair (2026-12-02/04) while the runner processes had sessions
    of their own, where govkit's CPU spinners took half of each CPU from them
    (govkit.runners.processes); docs/background/method.md has the measurements since."""
    info = runner_info(runner.name)
    modes = {"latency"} | ({"throughput"} if throughput and info.rotates_throughput
                           else set())
    return info.rotates and cell.mode in modes and cell.network == DEFAULT


def _tput_slot_text(lanes: list[tuple[str, int]], rs) -> str:
    if not any(mode == THROUGHPUT for mode, _ in lanes):
        return ""
    return (f" ({rs.throughput_slot_ms} ms in throughput slots, {rs.cpu_slot_ms} ms in CPU "
            f"slots, both normally scheduled; longer where a slot would hold too few "
            f"samples)")


def _rotate(ctx: RunContext, cells: list[Cell]) -> BenchOutcome:
    rs, store, runner = ctx.opts.rotation, ctx.store, ctx.runner
    profiles = list(dict.fromkeys(c.profile for c in cells))
    lanes = list(dict.fromkeys((c.mode, c.size) for c in cells))
    # beside each throughput lane, its CPU lane (CPU per sample at a fixed rate)
    lanes += [(CPU, size) for mode, size in lanes if mode == THROUGHPUT]
    counts = ctx.opts.readers
    arms = arms_of(profiles, rs.aa, ctx.opts.variants, list(ctx.runtimes), counts[0])
    store.set_rotation_method({"settings": rs.to_json(), "method": runner.method(),
                               "estimator": ESTIMATOR, "interval": PAIRED_INTERVAL_METHOD})
    ctx.say(f"{len(arms)} arms × {rs.instances} process pairs (none "
            f"{baseline_instances(arms, rs.instances)}, one per slot beside it); rounds of "
            f"{_lanes_text(lanes)} × {2 * len(arms) - 1} slots of "
            f"{rs.settle_ms} ms settle + {rs.slot_ms} ms"
            f"{_tput_slot_text(lanes, rs)}; {ctx.pin.note}; order seed "
            f"{ctx.seed}; rounds until every ratio is within ±{rs.target_ci:g}% (at least "
            f"{rs.min_rounds}, and {MIN_ARM_ROUNDS} per arm) or the {ctx.budget} s "
            f"budget" + (f", shared by the readers counts {_counts_text(counts)} one after "
                         f"the other" if len(counts) > 1 else ""), style="dim")
    outcome = BenchOutcome(store.directory)
    for i, readers in enumerate(counts):
        # each readers count's rotation in turn, with its share of the budget left
        mine = replace(ctx, started=share_start(ctx.started, ctx.elapsed(), ctx.budget,
                                                len(counts) - i))
        share = ctx.budget - (ctx.elapsed() + ctx.started - mine.started)
        if len(counts) > 1:
            ctx.say(f"readers {readers}: one writer, {readers} reader(s) per pair; "
                    f"{share:.0f} s of the budget", style="dim")
        got = run_rotation(mine, arms_of(profiles, rs.aa, ctx.opts.variants,
                                         list(ctx.runtimes), readers),
                           lanes, counted_from=store.rotation()["next_round"] if i else 0)
        outcome.failed += got.failed
        outcome.notes += [f"readers {readers}: {n}" if len(counts) > 1 else n
                          for n in got.notes]
        if got.interrupted:
            outcome.interrupted = True
            break
    outcome.summary = store.doc["summary"]
    return outcome


def share_start(started: float, elapsed: float, budget: float, counts_left: int) -> float:
    """The `started` of a context whose budget ends when this readers count's share of
    what is left ends (an equal share for each of `counts_left` counts): its clock starts
    earlier by what the later counts keep."""
    left = max(0.0, budget - elapsed)
    return started - (left - left / counts_left)


def _counts_text(counts: list[int]) -> str:
    return ", ".join(map(str, counts))


def _lanes_text(lanes: list[tuple[str, int]]) -> str:
    modes = list(dict.fromkeys(m for m, _ in lanes))
    if modes == ["latency"]:
        return f"{len(lanes)} size(s)"
    return f"{len(lanes)} lane(s) ({', '.join(modes)} × size)"


def _planned_bundles(opts: BenchOptions, runner) -> dict:
    """Every profile's bundle as the run would make it, nothing created (--dry-run)."""
    build = build_dir(opts, runner)
    keystores = {r: tls_keystore_path(build, r) for r in ROLES} \
        if "tls" in opts.transports else {}
    return {p.name: replace(planned_bundle(p, opts.ca, build), tls=keystores)
            for p in opts.profiles}


def _dry_run(ctx: RunContext, cells: list[Cell], scheduling: str) -> BenchOutcome:
    """The command lines of the minimum rounds, in run order; nothing is created."""
    opts, runner = ctx.opts, ctx.runner
    lines = [f"# {ctx.pin.note}; {scheduling}; order seed {ctx.seed}; config files would "
             f"go to {ctx.workdir}/"]
    lines += ctx.paths.plan()
    if opts.variants:
        lines.append("# --cipher/--rekey: the rotation runs every secured profile once per "
                     "variant (" + ", ".join(v.name for v in opts.variants) + "), its pairs "
                     "given " + "; ".join(f"{v.name}: {v.properties()}" for v in opts.variants))
    rotated = [c for c in cells if rotates(runner, c, opts.rotate_throughput)]
    repeated = [c for c in cells if c not in rotated]
    if rotated:
        lines += _rotation_plan(ctx, rotated)
    for r in range(opts.repeat if repeated else 0):
        for cell in round_order(repeated, ctx.seed, r):
            bench_point = point(ctx, cell, r, planned=True)
            lines.append(f"# {cell.label} repeat {r}")
            lines += [command_line(s) for s in
                      runner.commands(bench_point, ctx.bundle(cell.profile), ctx.workdir)]
    if opts.wire:
        lines.insert(1, "# --wire: before the rounds below, one extra repeat of every point "
                        f"with the per-repeat runner's commands on its own domain, captured "
                        f"on {opts.wire_interface} and not measured")
    if repeated:
        lines.append(f"# then up to {opts.max_repeat} repeats of points whose 95% interval "
                     f"is wider than ±{opts.target_ci:g}%, while within {opts.budget} s")
    lines.append("# while measuring, " + (AWAKE_METHOD if opts.keep_awake else IDLE_METHOD))
    return BenchOutcome(None, dry_run_lines=lines)


DOMAIN_SHOWN = 987654321     # stands for a pair's domain in the dry run's command lines


def _rotation_plan(ctx: RunContext, cells: list[Cell]) -> list[str]:
    """--dry-run of the rotated points: the long-lived pairs the run would start (their
    command lines, each on a domain of its own: DOMAIN below) and what their slots are; a
    rotating runner runs no per-repeat command for them (issue 37: the dry run listed
    ddsperf lines the default runner never runs)."""
    rs, pin = ctx.opts.rotation, ctx.pin
    profiles = list(dict.fromkeys(c.profile for c in cells))
    arms = [a for n in ctx.opts.readers
            for a in arms_of(profiles, rs.aa, ctx.opts.variants, list(ctx.runtimes), n)]
    lanes = list(dict.fromkeys((c.mode, c.size) for c in cells))
    lanes += [(CPU, size) for mode, size in lanes if mode == THROUGHPUT]
    per_count = len(arms) // len(ctx.opts.readers)
    lines = [f"# rotation: {per_count} arms × {rs.instances} long-lived process pairs, each "
             f"on a domain of its own (DOMAIN below); rounds of {_lanes_text(lanes)}, every "
             f"arm's slot between two `none` slots, at least {rs.min_rounds} rounds, then "
             f"until every ratio is within ±{rs.target_ci:g}% or the {ctx.budget} s budget"]
    if ctx.opts.readers != [1]:
        lines.append(f"# readers {_counts_text(ctx.opts.readers)}: one rotation per count, "
                     f"one after the other, each sharing the budget left; at N readers "
                     f"each arm is named ARM@Nreaders and paired with none@Nreaders")
    for arm in arms:
        extra = {"variant": arm.variant} if arm.variant is not None else {}
        if arm.readers != 1:
            extra["readers"] = arm.readers
        specs = ctx.runner_of(arm.runtime).pair_specs(
            ctx.bundle(arm.profile), DOMAIN_SHOWN, pin.cpus, pin.realtime,
            ctx.workdir_of(arm.runtime), **extra)
        n, where = instances_of(arm, [a for a in arms if a.readers == arm.readers], rs), ""
        if arm.profile.domain_ids is not None:     # a governance file's: where it allows
            n = min(n, len(arm.profile.domain_ids))
            where = f", DOMAIN one of {domain_ids_text(arm.profile.domain_ids)}"
        lines.append(f"# {arm.label}: {n} pair(s) of{where}")
        lines += [command_line(s).replace(str(DOMAIN_SHOWN), "DOMAIN") for s in specs]
    return lines


def _schedule(ctx: RunContext, cells: list[Cell]) -> BenchOutcome:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.text import Text

    opts, runner, store, paths, console = ctx.opts, ctx.runner, ctx.store, ctx.paths, \
        ctx.console
    outcome = BenchOutcome(store.directory)
    done = store.completed()
    n = len(store.doc["results"])
    elapsed: list[float] = []
    columns = (TextColumn("{task.description}", markup=False), BarColumn(),
               TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn())
    todo_min = sum(1 for r in range(opts.repeat) for c in cells if (*c.key, r) not in done)
    # A slow refresh keeps the orchestrator off the CPUs the two runner processes use.
    with Progress(*columns, console=console, refresh_per_second=1, transient=True) as progress:
        task = progress.add_task("starting", total=todo_min)
        for r in range(opts.max_repeat):
            if r < opts.repeat:
                round_cells = round_order(cells, ctx.seed, r)
            else:
                wide = set(_wide_points(store.doc["summary"], opts.target_ci))
                round_cells = [c for c in round_order(cells, ctx.seed, r) if c.key in wide]
                if not round_cells:
                    break
            for cell in round_cells:
                if (*cell.key, r) in done:
                    continue
                if r >= opts.repeat:
                    expect = (sum(elapsed) / len(elapsed)) if elapsed else \
                        runner.timeout(point(ctx, cell, r, planned=True))
                    if ctx.passes_budget(expect):
                        outcome.notes.append(
                            f"stopped adding repeats: the {opts.budget} s budget is spent "
                            "(--budget to allow more)")
                        break
                    progress.update(task, total=progress.tasks[0].total + 1)
                n += 1
                progress.update(task, description=f"{cell.label} (repeat {r})")
                try:
                    bench_point = point(ctx, cell, r)
                    bundle = paths.bundle(ctx.bundle(cell.profile), cell.network.path) \
                        if paths else ctx.bundle(cell.profile)
                    result, failure = run_point(ctx, bench_point, bundle, order=n - 1)
                except KeyboardInterrupt:
                    outcome.interrupted = True
                    break
                elapsed.append(result["elapsed_s"])
                if failure:
                    outcome.failed += 1
                    net = "" if cell.network == DEFAULT else f" over {cell.network.label}"
                    progress.console.print(Text.assemble(
                        ("FAILED", "red"), f" {cell.profile.name} {cell.mode} size {cell.size}"
                        f"{net} repeat {r}: {failure}"), highlight=False)
                store.add(result)
                progress.advance(task)
                if not console.is_terminal:     # piped: no live bar, so a line per repeat
                    task_now = progress.tasks[0]
                    left = (task_now.total - task_now.completed) * sum(elapsed) / len(elapsed)
                    ctx.say(f"{cell.label} repeat {r}: {result['elapsed_s']:.1f} s "
                            + ctx.budget_note(left))
            else:
                continue
            break   # interrupted, or out of budget
    outcome.summary = store.doc["summary"]
    return outcome


def _wide_points(summary: list[dict], target: float):
    for row in summary:
        if row["ci_halfwidth_pct"] is None or row["ci_halfwidth_pct"] > target:
            yield point_key(row)
