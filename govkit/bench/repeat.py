"""One repeat of a point: the point it runs (`point`: a fresh private domain, the pinned
CPUs, a TCP port), the signed bundles it runs with (`make_bundles`), and running it into
its results.json record (`run_point`, again on a fresh domain if a stranger joined).

Why apart: the measured repeats (govkit.bench.schedule) and the captured, unmeasured one
(govkit.bench.wire_phase) run a point the very same way; only what they do with the
record differs.
"""

from __future__ import annotations

import random
import time
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from govkit.bench.context import RunContext
from govkit.bench.domains import random_domain
from govkit.bench.options import BenchOptions, Cell
from govkit.catalog.runners import runner_info
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.generate.bundle import BundleLog, ensure_bundle, ensure_pki, ensure_tls
from govkit.pki.revocation import revoked_participants
from govkit.pki.testpki import DEFAULT_PARTICIPANTS
from govkit.results.stats import repeat_figures
from govkit.runners.base import Around, BenchPoint, Bundle, ForeignParticipant
from govkit.runners.network import Network
from govkit.runners.processes import ProcessSpec, command_line

# Ports come from the system's randomness, not from --seed: two runs with the same seed
# at the same time (two users, two CI jobs) must not share them.
_ports = random.SystemRandom()


def point(ctx: RunContext, cell: Cell, repeat: int, planned: bool = False) -> BenchPoint:
    """The cell's repeat `repeat` as the runner runs it (`planned`: for --dry-run, where
    nothing is set up)."""
    # A private domain per repeat: a stray process of an earlier repeat cannot match, and
    # a stranger on it is detected (ForeignParticipant) and the repeat run again elsewhere.
    net = cell.network
    endpoints = ctx.paths.endpoints(net.path, planned) if ctx.paths else None
    return BenchPoint(cell.profile, cell.mode, cell.size, ctx.opts.duration, repeat,
                      domain_id=random_domain(cell.profile), cpus=ctx.pin.cpus,
                      warmup=ctx.opts.warmup,
                      realtime=ctx.pin.realtime and cell.mode == "latency",
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
    return _ports.randint(20000, 29999)


def make_bundles(opts: BenchOptions, runner, console) -> dict[str, Bundle]:
    """Every profile's signed bundle, made current (generated, signed, verified), with the
    TLS keystores when a transport is tls (also for `none`: TLS is the transport's)."""
    log = BundleLog()
    tls = "tls" in opts.transports
    pki = ensure_pki(opts.ca, log, single_ca=runner_info(runner.name).single_ca) \
        if tls or any(p.security for p in opts.profiles) else None
    if pki is not None:
        refuse_revoked(pki)
    build = build_dir(opts, runner)
    keystores = ensure_tls(pki, build, log) if tls else {}
    bundles = {p.name: replace(ensure_bundle(p, pki, build, runner.name, log) if p.security
                               else Bundle(p), tls=keystores) for p in opts.profiles}
    for msg in log.messages:
        console.print(msg, style="dim")
    _refuse_token_keys(bundles, runner)
    return bundles


def _refuse_token_keys(bundles: dict[str, Bundle], runner) -> None:
    """Keys in a PKCS#11 token (`pki init --hsm`) work with Fast DDS only: say so before
    anything is measured or written."""
    if runner_info(runner.name).pkcs11_keys:
        return
    for b in bundles.values():
        for f in b.participants.values():
            if isinstance(f.private_key, str):
                raise GovkitError(f"{f.name}'s private key is in a PKCS#11 token; --runner "
                                  f"{runner.name} cannot use it (Cyclone DDS 0.10 reads file: "
                                  f"and data: keys only): use --runner fastdds, or a PKI "
                                  f"whose keys are files", EXIT_USAGE)


def refuse_revoked(pki, participants=DEFAULT_PARTICIPANTS) -> None:
    """Stop before measuring when the CRL revokes a participant of the run: both runtimes
    would refuse it (it could not even create its participant), and a benchmark of that
    is a refusal, not a number. GovkitError (exit 2) naming it."""
    revoked = revoked_participants(pki, participants)
    if revoked:
        name, why = next(iter(revoked.items()))
        raise GovkitError(f"participant {name} is revoked, nothing measured: {why} (the "
                          f"benchmark needs unrevoked participants; use another PKI "
                          f"directory with --ca)", EXIT_USAGE)


def build_dir(opts: BenchOptions, runner) -> Path:
    # Permissions differ per runner (its topics), so runners get their own build dir.
    return opts.build / runner_info(runner.name).build_subdir


# A repeat a stranger joined is run again on another domain, at most this often in all.
ATTEMPTS = 3


def run_point(ctx: RunContext, point: BenchPoint, bundle: Bundle, order: int = 0,
              around: Around | None = None) -> tuple[dict, str | None]:
    """Run one repeat of a point (again on a fresh domain if a stranger joined it); returns
    its record and, if it failed, what to tell the user (the error and each process's last
    lines). `around(point, specs)`, if given, is a context manager open while the processes
    run (it may wrap the specs' `stop_when` to learn when govkit stops them)."""
    strangers = []
    for _ in range(ATTEMPTS - 1):
        result, failure = _run_once(ctx, point, bundle, order, around)
        if result.get("error_kind") != "foreign_participant":
            break
        strangers.append(result["error"])
        point = replace(point, domain_id=random_domain(point.profile, point.domain_id))
    else:
        result, failure = _run_once(ctx, point, bundle, order, around)
    if strangers:
        result["retried_after"] = strangers
    return result, failure


def _run_once(ctx: RunContext, point: BenchPoint, bundle: Bundle, order: int,
              around: Around | None) -> tuple[dict, str | None]:
    paths, net = ctx.paths, point.network
    result = {"profile": point.profile.name, "mode": point.mode, "size": point.size,
              **net.to_json(), "repeat": point.repeat, "order": order,
              "domain_id": point.domain_id, "commands": [], "started": None}
    if point.endpoints:
        result["endpoints"] = {e.role: e.to_json() for e in point.endpoints}
    if point.tcp_port is not None:
        result["tcp_port"] = point.tcp_port
    t0 = time.monotonic()

    @contextmanager
    def running(p: BenchPoint, specs: list[ProcessSpec]):
        """Open while the processes run (their configuration files are written): the
        record's commands and start, and what crossed the veth meanwhile."""
        nonlocal t0
        result["commands"] = [command_line(s) for s in specs]
        result["started"] = datetime.now(UTC).isoformat(timespec="seconds")
        t0 = time.monotonic()
        before = paths.counters(net.path) if paths else None
        with around(p, specs) if around else nullcontext():
            yield
        if before is not None:
            # What crossed the veth during the repeat: proof the samples took the link.
            after = paths.counters(net.path)
            result["link_counters"] = {r: {k: after[r][k] - before[r][k] for k in after[r]}
                                       for r in after}

    run = ctx.runner.run(point, bundle, ctx.workdir, paths.write if paths else None, running)
    outputs, failure = run.outputs, None
    if run.error is not None:
        e = run.error
        result.update(status="failed", error=str(e),
                      error_kind="foreign_participant" if isinstance(e, ForeignParticipant)
                      else "runner",
                      output_tail={o.role: o.tail(12) for o in outputs.values()})
        failure = str(e) + "".join(f"\n  [{o.role}] {o.status}: "
                                   + (o.tail(6).replace("\n", "\n    ") or "(no output)")
                                   for o in outputs.values())
    else:
        res = run.result
        per_second = ctx.runner.per_second
        result.update(status="ok", error=None,
                      raw={"format": res.row_format, "rows": res.rows,
                           **({"summary": res.summary} if res.summary is not None else {}),
                           **res.extra},
                      warmup_rows=point.warmup if per_second else 0,
                      measured_rows=point.duration if per_second else 0)
        figures, count = repeat_figures(result)
        result.update({"latency_us" if point.mode == "latency" else "throughput": figures,
                       "count": count})
    result["cpus"] = {o.role: o.cpus_allowed for o in outputs.values()}
    result["scheduling"] = {o.role: o.policy for o in outputs.values()}
    result["autogroup"] = {o.role: o.autogroup for o in outputs.values()}
    result["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    result["elapsed_s"] = round(time.monotonic() - t0, 2)
    return result, failure
