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
import subprocess
import time
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from govkit.bench.defaults import (
    DEFAULT_BUDGET_S,
    DEFAULT_DURATION_S,
    DEFAULT_MAX_REPEATS,
    DEFAULT_NETWORK_RUNNER,
    DEFAULT_REPEATS,
    DEFAULT_RUNNER,
    DEFAULT_TARGET_CI_PCT,
    DEFAULT_WARMUP_S,
)
from govkit.bench.loadwatch import LoadWatch
from govkit.bench.rotation import RotationSettings, arms_of, run_rotation
from govkit.catalog.profiles import Profile
from govkit.catalog.runners import MODES, runner_info
from govkit.common.errors import GovkitError
from govkit.common.fsutil import write_atomic
from govkit.common.limits import MAX_DOMAIN_ID
from govkit.generate.bundle import (
    BundleLog,
    bundle_hashes,
    ensure_bundle,
    ensure_pki,
    ensure_tls,
    planned_bundle,
    tls_keystore_path,
)
from govkit.results.paired import ESTIMATOR, PAIRED_INTERVAL_METHOD
from govkit.results.stats import INTERVAL_METHOD, repeat_figures
from govkit.results.store import RESULTS_NAME, ResultStore, check_resumable, environment, point_key
from govkit.runners import get_runner
from govkit.runners.base import (
    BenchPoint,
    Bundle,
    ForeignParticipant,
    RunnerError,
    command_line,
    prepare,
    run_processes,
)
from govkit.runners.netpath import NetPaths
from govkit.runners.network import DEFAULT, LOSS_MEANING, ROLES, Network, networks
from govkit.wire import rtps as wire
from govkit.wire.capture import Capture, check_capture, pcap_bytes, udp_datagrams

SEED_SIZES = (32, 64, 128, 256, 512, 1024, 8192, 63000)
DEFAULT_SIZES = (32, 1024, 63000)
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
    # None: the default, DEFAULT_RUNNER on UDP over loopback, ddsperf for the network
    # options only ddsperf's per-repeat design serves (resolved by `check`)
    runner: str | None = "ddsperf"
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
    realtime: bool = True
    dry_run: bool = False
    runner_options: dict = field(default_factory=dict)
    command: str = "govkit bench"
    # The network dimension (govkit.runners.network): every point runs over each combination.
    transports: list[str] = field(default_factory=lambda: ["udp"])
    paths: list[str] = field(default_factory=lambda: ["lo"])
    loss_rates: list[float] = field(default_factory=lambda: [0])
    hosts: dict[str, str] = field(default_factory=dict)          # --hosts pub=…,sub=…
    peer_addresses: dict[str, str] = field(default_factory=dict)  # --peer-address
    ssh_config: Path | None = None

    wire: bool = False             # one extra, captured, unmeasured repeat per point
    wire_pcap: bool = False        # ... and its frames as a pcap (implies wire)
    wire_interface: str = "lo"     # where the points' traffic flows (templates: loopback)
    wire_expect: Profile | None = None   # check against this profile's governance instead
    # The rotating latency design (runners with `rotates`: govkit.bench.rotation)
    rotation: RotationSettings = field(default_factory=RotationSettings)

    @property
    def networks(self) -> list[Network]:
        return networks(self.transports, self.paths, self.loss_rates)

    def check(self) -> None:
        self.wire = self.wire or self.wire_pcap
        plain = self.transports == ["udp"] and self.paths == ["lo"] and self.loss_rates == [0]
        if self.runner is None:
            self.runner = (DEFAULT_RUNNER if plain and not self.hosts
                           else DEFAULT_NETWORK_RUNNER)
        rs = self.rotation
        for name, value, lo, hi in (("--slot-ms", rs.slot_ms, 10, 60_000),
                                    ("--settle-ms", rs.settle_ms, 0, 10_000),
                                    ("--instances", rs.instances, 1, 8),
                                    ("--rounds", rs.min_rounds, 1, 10_000)):
            if not lo <= value <= hi:
                raise GovkitError(f"{name} {value} is out of range ({lo} .. {hi})")
        if not 0 < rs.target_ci <= 100:
            raise GovkitError(f"--target-ci {rs.target_ci:g} must be a percentage in (0, 100]")
        for name, (lo, hi) in LIMITS.items():
            value = getattr(self, name)
            if not lo <= value <= hi:
                raise GovkitError(f"--{name.replace('_', '-')} {value} is out of range "
                                  f"({lo} .. {hi})")
        if self.max_repeat < self.repeat:
            raise GovkitError(f"--max-repeat {self.max_repeat} is below --repeat {self.repeat}")
        if not 0 < self.target_ci <= 100:
            raise GovkitError(f"--target-ci {self.target_ci:g} must be a percentage in (0, 100]")
        if self.peer_addresses and not self.hosts:
            raise GovkitError("--peer-address applies to --hosts only")
        if not runner_info(self.runner).networks and not plain:
            raise GovkitError(f"--transport, --net, --hosts and --loss-rate need --runner "
                              f"ddsperf (Cyclone's transports); {self.runner} runs udp on lo")


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
    doc: dict | None = None                                 # results.json as written

    @property
    def wire_mismatches(self) -> list[str]:
        return [p for p, v in self.wire_profiles.items() if v["verdict"] != "match"]


@dataclass(frozen=True)
class Cell:
    """One point: what its repeats share."""
    profile: Profile
    mode: str
    size: int
    network: Network = DEFAULT

    @property
    def key(self) -> tuple:
        """As govkit.results.store.point_key."""
        return (self.profile.name, self.mode, self.size, *self.network.key)

    @property
    def label(self) -> str:
        """`rtps_sign latency size 32` (+ ` over tls netns` off the default network)."""
        net = "" if self.network == DEFAULT else f" over {self.network.label}"
        return f"{self.profile.name} {self.mode} size {self.size}{net}"


@dataclass(frozen=True)
class Pinning:
    cpus: tuple[int, int] | None          # (pub, sub)
    orchestrator: list[int] | None        # CPUs govkit itself moves to, if any are left
    note: str
    realtime: bool = False                # latency repeats SCHED_FIFO (realtime_note)

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


def realtime_note(wanted: bool, modes: list[str], dry_run: bool) -> tuple[bool, str]:
    """Whether latency repeats run SCHED_FIFO, and why (or why not).

    Pinning does not keep other programs off the two CPUs; real-time priority does: on the
    2-core VM, with other work running, rtps_sign 32 B gave 51–68 µs in five SCHED_FIFO
    repeats against 62–116 µs in five normal ones (README, "Benchmarking"). Only latency
    repeats: ping and pong block between messages, whereas a throughput publisher sends
    as fast as it can and would take its CPU from everything else.
    """
    if not wanted:
        return False, "normal scheduling (--no-realtime)"
    if "latency" not in modes:
        return False, "normal scheduling (real-time applies to latency repeats only)"
    if not dry_run:
        try:
            ok = subprocess.run(["chrt", "-f", "1", "true"], capture_output=True,
                                timeout=10).returncode == 0
        except (OSError, subprocess.SubprocessError):
            ok = False
        if not ok:
            return False, ("normal scheduling: SCHED_FIFO not permitted here (needs root, "
                           "CAP_SYS_NICE or an rtprio limit, and `chrt` from util-linux)")
    return True, "latency repeats SCHED_FIFO priority 1 (chrt), throughput repeats normal"


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
    return {**network, "runner": runner.name, "modes": opts.modes, "sizes": opts.sizes,
            "profiles": [p.name for p in opts.profiles], "duration_s": opts.duration,
            "warmup_s": opts.warmup if runner.per_second else 0, "pin": opts.pin,
            "cpus": pin.to_json(), "pinning": pin.note, "realtime": realtime[0],
            "scheduling": realtime[1], "min_repeats": opts.repeat,
            "max_repeats": opts.max_repeat, "target_ci_pct": opts.target_ci,
            "budget_s": opts.budget, "seed": seed, "method": runner.method(),
            "interval": (f"latency (rotation): {PAIRED_INTERVAL_METHOD} Other points: "
                         f"{INTERVAL_METHOD}") if getattr(runner, "rotates", False)
            else INTERVAL_METHOD}


def _make_bundles(opts: BenchOptions, runner, console) -> dict[str, Bundle]:
    """Every profile's signed bundle, made current (generated, signed, verified), with the
    TLS keystores when a transport is tls (also for `none`: TLS is the transport's)."""
    log = BundleLog()
    tls = "tls" in opts.transports
    pki = ensure_pki(opts.ca, log, single_ca=runner_info(runner.name).single_ca) \
        if tls or any(p.security for p in opts.profiles) else None
    build = _build_dir(opts, runner)
    keystores = ensure_tls(pki, build, log) if tls else {}
    bundles = {p.name: replace(ensure_bundle(p, pki, build, runner.name, log) if p.security
                               else Bundle(p), tls=keystores) for p in opts.profiles}
    for msg in log.messages:
        console.print(f"[dim]{msg}[/dim]")
    return bundles


def _build_dir(opts: BenchOptions, runner) -> Path:
    # Permissions differ per runner (its topics), so runners get their own build dir.
    return opts.build / runner_info(runner.name).build_subdir


def _resumed_store(opts: BenchOptions, settings: dict, console) -> ResultStore | None:
    """The stored run to continue (same experiment only), or None for a new run."""
    if not opts.resume:
        return None
    out = opts.out or _latest_results()
    store = ResultStore.load(out)
    check_resumable(store.doc["settings"], settings, out / RESULTS_NAME)
    console.print(f"resuming {out}: {len(store.completed())} completed repeat(s) kept")
    # Same seed (same order) as before; the new repeat, budget and target settings apply.
    for key in ("min_repeats", "max_repeats", "target_ci_pct", "budget_s"):
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
    cells = [Cell(p, m, s, n) for p in opts.profiles for m in opts.modes for s in opts.sizes
             for n in opts.networks]
    seed = opts.seed if opts.seed is not None else random.randrange(1 << 31)
    pin = pinning(opts.pin)
    realtime = realtime_note(opts.realtime, opts.modes, opts.dry_run)
    pin = replace(pin, realtime=realtime[0])
    paths = NetPaths(opts.paths, opts.hosts, opts.peer_addresses, opts.ssh_config)
    if opts.dry_run:
        return _dry_run(opts, runner, cells, seed, pin, realtime[1], paths)

    paths.check()       # e.g. no root for --net netns: one line, exit 2, before any work
    if opts.wire:
        check_wire_networks(opts)
        check_capture(opts.wire_interface)       # no privilege: one line, exit 2, at once
    runner.check_installed()
    if pin.cpus and shutil.which("taskset") is None:
        raise GovkitError("pinning needs `taskset` (Debian package util-linux); install it "
                          "or pass --no-pin")
    settings = _settings(opts, runner, pin, realtime, seed)
    store = _resumed_store(opts, settings, console)     # refuse a mismatch before any work
    bundles = _make_bundles(opts, runner, console)
    store = store or _new_store(opts, settings, runner)
    store.set_signed_files([h for b in bundles.values() for h in bundle_hashes(b)])
    store.save()
    seed = store.doc["settings"]["seed"]
    repeated = [c for c in cells if not rotates(runner, c)]
    if repeated:        # (the rotation says its own shape when it starts)
        console.print(f"[dim]{len(repeated)} point(s) × {opts.repeat}–{opts.max_repeat} "
                      f"repeats of {settings['warmup_s']} s warm-up + {opts.duration} s; "
                      f"{pin.note}; {realtime[1]}; order seed {seed}; extra repeats until "
                      f"±{opts.target_ci:g}% within {opts.budget} s[/dim]")
    if pin.orchestrator:
        os.sched_setaffinity(0, pin.orchestrator)
    # Namespaces, veth and remote work directories exist only inside this block: they are
    # removed however it is left (end, failed point, exception, Ctrl-C, SIGTERM).
    with paths:
        # saved at once: if govkit is killed, results.json names what it had set up
        store.doc["settings"]["network"] = paths.to_json()
        store.save()
        outcome = BenchOutcome(store.directory)
        if opts.wire:
            done = {wire_key(p) for p in store.doc.get("wire", {}).get("points", [])
                    if p["status"] == "ok"}
            outcome.interrupted = wire_phase(opts, runner, cells, bundles, pin,
                                             store.directory / "config", console, done,
                                             store.add_wire, store.directory / "wire")
        rotated = [c for c in cells if rotates(runner, c)]
        if rotated and not outcome.interrupted:
            outcome = _rotate(opts, runner, store, rotated, bundles, pin, seed, console,
                              started, load)
        if repeated and not outcome.interrupted:
            load.start()
            more = _schedule(opts, runner, store, repeated, bundles, pin, seed, console,
                             started, paths)
            store.set_load(load.finish())
            more.failed += outcome.failed
            more.notes = outcome.notes + more.notes
            outcome = more
        store.doc["settings"]["network"] = paths.to_json()
        store.save()
    outcome.summary = store.doc["summary"]
    outcome.doc = store.doc
    outcome.wire = store.doc.get("wire", {}).get("points", [])
    outcome.wire_profiles = store.doc.get("wire", {}).get("profiles", {})
    return outcome


def rotates(runner, cell: Cell) -> bool:
    """Whether the point is measured by rotation (govkit.bench.rotation): latency points of a
    runner that can, on the default network."""
    return getattr(runner, "rotates", False) and cell.mode == "latency" \
        and cell.network == DEFAULT


def _rotate(opts: BenchOptions, runner, store: ResultStore, cells: list[Cell],
            bundles: dict[str, Bundle], pin: Pinning, seed: int, console, started: float,
            load: LoadWatch) -> BenchOutcome:
    rs = opts.rotation
    profiles = list(dict.fromkeys(c.profile for c in cells))
    sizes = list(dict.fromkeys(c.size for c in cells))
    arms = arms_of(profiles, rs.aa)
    store.set_rotation_method({"settings": rs.to_json(), "method": runner.method(),
                               "estimator": ESTIMATOR, "interval": PAIRED_INTERVAL_METHOD})
    console.print(f"{len(arms)} arms × {rs.instances} process pairs; rounds of "
                  f"{len(sizes)} size(s) × {2 * len(arms) - 1} slots of {rs.settle_ms} ms "
                  f"settle + {rs.slot_ms} ms; {pin.note}; order seed {seed}; rounds until "
                  f"every ratio is within ±{rs.target_ci:g}% (at least {rs.min_rounds}) or "
                  f"the {opts.budget} s budget", style="dim", markup=False, highlight=False)
    got = run_rotation(runner, arms, bundles, sizes, rs, store, seed, pin, console, started,
                       opts.budget, store.directory / "config", load)
    outcome = BenchOutcome(store.directory, failed=got.failed, interrupted=got.interrupted,
                           notes=got.notes)
    outcome.summary = store.doc["summary"]
    return outcome


def _dry_run(opts: BenchOptions, runner, cells: list[Cell], seed: int, pin: Pinning,
             scheduling: str, paths: NetPaths) -> BenchOutcome:
    """The command lines of the minimum rounds, in run order; nothing is created."""
    build = _build_dir(opts, runner)
    keystores = {r: tls_keystore_path(build, r) for r in ROLES} \
        if "tls" in opts.transports else {}
    bundles = {p.name: replace(planned_bundle(p, opts.ca, build), tls=keystores)
               for p in opts.profiles}
    workdir = (opts.out or Path("results") / "<timestamp>") / "config"
    lines = [f"# {pin.note}; {scheduling}; order seed {seed}; config files would go to "
             f"{workdir}/"]
    lines += paths.plan()
    for r in range(opts.repeat):
        for cell in round_order(cells, seed, r):
            point = _point(cell, opts, r, pin, paths, planned=True)
            lines.append(f"# {cell.label} repeat {r}")
            lines += [command_line(s) for s in
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


def _point(cell: Cell, opts: BenchOptions, repeat: int, pin: Pinning,
           paths: NetPaths | None = None, planned: bool = False) -> BenchPoint:
    # A private domain per repeat: a stray process of an earlier repeat cannot match, and
    # a stranger on it is detected (ForeignParticipant) and the repeat run again elsewhere.
    net = cell.network
    endpoints = paths.endpoints(net.path, planned) if paths else None
    return BenchPoint(cell.profile, cell.mode, cell.size, opts.duration, repeat,
                      domain_id=_domains.randint(1, MAX_DOMAIN_ID), cpus=pin.cpus,
                      warmup=opts.warmup, realtime=pin.realtime and cell.mode == "latency",
                      network=net, endpoints=endpoints,
                      tcp_port=_tcp_port(net, planned) if net.transport != "udp" else None)


def _tcp_port(net: Network, planned: bool) -> int:
    """The port the sub side listens on: one the kernel has free right now on loopback;
    in a run's own namespaces and on remote hosts, a random one of 20000-29999 (below
    Linux's ephemeral range, above Cyclone's UDP ports for low domain ids)."""
    if net.path == "lo" and not planned:
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]
    return _domains.randint(20000, 29999)


def _schedule(opts: BenchOptions, runner, store: ResultStore, cells: list[Cell],
              bundles: dict[str, Bundle], pin: Pinning, seed: int, console, started: float,
              paths: NetPaths | None = None) -> BenchOutcome:
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
                        runner.timeout(_point(cell, opts, r, pin, paths, planned=True))
                    if time.monotonic() - started + expect > opts.budget:
                        outcome.notes.append(
                            f"stopped adding repeats: the {opts.budget} s budget is spent "
                            "(--budget to allow more)")
                        break
                    progress.update(task, total=progress.tasks[0].total + 1)
                n += 1
                progress.update(task, description=f"{cell.label} (repeat {r})")
                try:
                    point = _point(cell, opts, r, pin, paths)
                    bundle = paths.bundle(bundles[cell.profile.name], cell.network.path) \
                        if paths else bundles[cell.profile.name]
                    result, failure = run_point(runner, point, bundle, workdir, order=n - 1,
                                                paths=paths)
                except KeyboardInterrupt:
                    outcome.interrupted = True
                    break
                elapsed.append(result["elapsed_s"])
                if failure:
                    outcome.failed += 1
                    net = "" if cell.network == DEFAULT else f" over {cell.network.label}"
                    progress.console.print(f"[red]FAILED[/red] {cell.profile.name} {cell.mode} "
                                           f"size {cell.size}{net} repeat {r}: {failure}",
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
            yield point_key(row)


def run_point(runner, point: BenchPoint, bundle: Bundle, workdir: Path, order: int = 0,
              attempts: int = 3, paths: NetPaths | None = None, around=None
              ) -> tuple[dict, str | None]:
    """Run one repeat of a point (again on a fresh domain if a stranger joined it); returns
    its record and, if it failed, what to tell the user (the error and each process's last
    lines). `around(point, specs)`, if given, is a context manager open while the processes
    run (it may wrap the specs' `stop_when` to learn when govkit stops them)."""
    strangers = []
    for _ in range(attempts - 1):
        result, failure = _run_once(runner, point, bundle, workdir, order, paths, around)
        if result.get("error_kind") != "foreign_participant":
            break
        strangers.append(result["error"])
        point = replace(point, domain_id=_domains.randint(1, MAX_DOMAIN_ID))
    else:
        result, failure = _run_once(runner, point, bundle, workdir, order, paths, around)
    if strangers:
        result["retried_after"] = strangers
    return result, failure


def _run_once(runner, point: BenchPoint, bundle: Bundle, workdir: Path, order: int,
              paths: NetPaths | None = None, around=None) -> tuple[dict, str | None]:
    specs = prepare(runner, point, bundle, workdir, write=paths.write if paths else None)
    net = point.network
    result = {"profile": point.profile.name, "mode": point.mode, "size": point.size,
              **net.to_json(), "repeat": point.repeat, "order": order,
              "domain_id": point.domain_id, "commands": [command_line(s) for s in specs],
              "started": datetime.now(UTC).isoformat(timespec="seconds")}
    if point.endpoints:
        result["endpoints"] = {e.role: e.to_json() for e in point.endpoints}
    if point.tcp_port is not None:
        result["tcp_port"] = point.tcp_port
    t0 = time.monotonic()
    outputs = {}
    failure = None
    before = paths.counters(net.path) if paths else None
    try:
        with around(point, specs) if around else nullcontext():
            outputs = run_processes(specs, timeout=runner.timeout(point))
        if before is not None:
            # What crossed the veth during the repeat: proof the samples took the link.
            after = paths.counters(net.path)
            result["link_counters"] = {r: {k: after[r][k] - before[r][k] for k in after[r]}
                                       for r in after}
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
    result["scheduling"] = {o.role: o.policy for o in outputs.values()}
    result["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    result["elapsed_s"] = round(time.monotonic() - t0, 2)
    return result, failure


# ------------------------------------------------------------------------------ wire

def wire_key(record: dict) -> tuple:
    return (record["profile"], record["mode"], record["size"])


def wire_key_of(cell: Cell) -> tuple:
    return (cell.profile.name, cell.mode, cell.size)


def check_wire_networks(opts: BenchOptions) -> None:
    """The capture reads UDP datagrams on lo: points over TCP/TLS, namespaces or other hosts
    are not captured, so say so instead of proving nothing about them."""
    if DEFAULT not in opts.networks:
        raise GovkitError("--wire captures the default network (udp over lo, no injected "
                          "loss); add it to --transport/--net/--loss-rate or drop --wire")


def wire_phase(opts: BenchOptions, runner, cells: list[Cell], bundles: dict[str, Bundle],
               pin: Pinning, workdir: Path, console, done: set, record, pcap_dir: Path
               ) -> bool:
    """One extra repeat of every point not in `done`, captured and not measured: its
    record goes to `record` (results.json's `wire`), never to `results`, so no statistic
    sees it; the capture socket exists only while that repeat's processes run, so the
    measured repeats run without it. Returns True if interrupted."""
    for cell in cells:
        if cell.network != DEFAULT or wire_key_of(cell) in done:
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
