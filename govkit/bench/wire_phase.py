"""The wire phase: one extra repeat of every point with its traffic captured, never
measured, judged against the profile's governance (`wire_phase`, run by `govkit bench
--wire`); and `govkit wire-check`, the same phase alone (`wire_check`).

Why apart: a captured repeat is no measurement (results.json keeps it under `wire`, no
statistic reads it), and the capture needs privileges and parsing the measured repeats
never touch.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from govkit.bench.context import RunContext
from govkit.bench.machine import pinning
from govkit.bench.options import BenchOptions, BenchOutcome, Cell
from govkit.bench.repeat import make_bundles, point, run_point
from govkit.common.errors import GovkitError
from govkit.common.fsutil import write_atomic
from govkit.runners import get_runner
from govkit.runners.base import BenchPoint, Bundle
from govkit.runners.network import DEFAULT
from govkit.runners.pair import Pair, PairFailed
from govkit.runners.readers import readers_arm, split_readers_arm
from govkit.wire import rtps
from govkit.wire.capture import Capture, check_capture, pcap_bytes, udp_datagrams
from govkit.wire.leaks import find_leaks
from govkit.wire.pcapfile import captured_frames, datagrams
from govkit.wire.verdict import receiver_mac_summary

# a class point's captured slot: its first round trips, kept apart as in every slot
WIRE_SETTLE_US = 100_000


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


def wire_phase(ctx: RunContext, cells: list[Cell], done: set, record, pcap_dir: Path
               ) -> bool:
    """One extra repeat of every point not in `done`, captured and not measured: its
    record goes to `record` (results.json's `wire`), never to `results`, so no statistic
    sees it; the capture socket exists only while that repeat's processes run, so the
    measured repeats run without it. Returns True if interrupted."""
    opts = ctx.opts
    for readers in opts.readers:
        for cell in cells:
            name = readers_arm(cell.profile.name, readers)
            if cell.network != DEFAULT or (name, cell.mode, cell.size) in done:
                continue
            expect = rtps.expectation(opts.wire_expect or cell.profile)
            ctx.console.print(f"wire: capturing {name} {cell.mode} {cell.size} B "
                              f"on {opts.wire_interface} (an extra repeat, not measured)",
                              style="dim")
            # a protection class's point (bench --policy) runs on its own topic names, and
            # N readers (--readers) run in them, which only the rotating programs take:
            # its capture is of one of its pairs
            try:
                if cell.profile.topics or readers != 1:
                    rec = run_pair_wire_point(ctx, point(ctx, cell, 0),
                                              ctx.bundle(cell.profile), expect,
                                              pcap_dir if opts.wire_pcap else None, readers)
                else:
                    rec = run_wire_point(ctx, point(ctx, cell, 0), ctx.bundle(cell.profile),
                                         expect, pcap_dir if opts.wire_pcap else None)
            except KeyboardInterrupt:
                return True
            verdict = rec["verdict"].upper() if rec["verdict"] != "match" else "match"
            ctx.say(f"wire: {name} {cell.mode} {cell.size} B: {verdict}; "
                    f"{rec.get('headline') or rec['error']}")
            record(rec)
    return False


def run_wire_point(ctx: RunContext, point: BenchPoint, bundle: Bundle,
                   expect: rtps.Expectation, pcap_dir: Path | None) -> dict:
    """Run one point with its traffic captured on --interface; parse and judge it
    afterwards (and with --leaks, read it as an eavesdropper would: govkit.wire.leaks)."""
    captures: list[Capture] = []

    def capture(p: BenchPoint, specs) -> Capture:
        cap = Capture(ctx.opts.wire_interface, rtps.PORTS.ports(p.domain_id))
        for spec in specs:     # the moment govkit stops the processes: shutdown from there
            if spec.stop_when is not None:
                spec.stop_when = _marking_stop(spec.stop_when, cap)
        captures.append(cap)
        return cap

    result, failure = run_point(ctx, point, bundle, around=capture)
    return _judged(ctx, result, failure, captures[-1], expect, pcap_dir)


def run_pair_wire_point(ctx: RunContext, point: BenchPoint, bundle: Bundle,
                        expect: rtps.Expectation, pcap_dir: Path | None, readers: int = 1
                        ) -> dict:
    """`run_wire_point` with one long-lived pair of the runner's own program (its
    pair_specs: the profile's topic names; `readers` readers), one slot of the point's mode
    and size lasting its duration, captured from the pair's start to its end. At N > 1
    readers the record is named `PROFILE@Nreaders` and says its `readers`."""
    runner = ctx.runner
    for path, text in runner.configs(replace(point, mode="latency", size=32), bundle,
                                     ctx.workdir).items():
        write_atomic(path, text)
    specs = runner.pair_specs(bundle, point.domain_id, point.cpus, False, ctx.workdir,
                              **({"readers": readers} if readers != 1 else {}))
    name = readers_arm(point.profile.name, readers)
    pair = Pair(name, name, 0, point.domain_id, specs, runner.explain_refusal)
    result = {"profile": name, "mode": point.mode, "size": point.size,
              "domain_id": point.domain_id, "commands": pair.commands(),
              "started": datetime.now(UTC).isoformat(timespec="seconds")}
    failure = None
    t0 = time.monotonic()
    measure_us = int(point.duration * 1e6)
    with Capture(ctx.opts.wire_interface, rtps.PORTS.ports(point.domain_id)) as cap:
        try:
            pair.start(timeout=60)
            if point.mode == "latency":
                pair.slot(point.size, WIRE_SETTLE_US, measure_us)
            else:
                pair.tslot(point.size, WIRE_SETTLE_US, measure_us)
        except PairFailed as e:
            failure = str(e)
        finally:
            cap.mark_stop()
            pair.close()
    result.update(status="failed" if failure else "ok", error=failure,
                  finished=datetime.now(UTC).isoformat(timespec="seconds"),
                  elapsed_s=round(time.monotonic() - t0, 2))
    return _judged(ctx, result, failure, cap, expect, pcap_dir)


def _judged(ctx: RunContext, result: dict, failure: str | None, cap: Capture,
            expect: rtps.Expectation, pcap_dir: Path | None) -> dict:
    """The wire record of a captured repeat: its capture parsed and judged."""
    rec = {k: result.get(k) for k in ("profile", "mode", "size", "domain_id", "started",
                                      "finished", "elapsed_s", "commands", "status", "error")}
    readers = split_readers_arm(result["profile"])[1]
    if readers != 1:
        rec["readers"] = readers
    rec["capture"] = cap.summary()
    rec["pcap"] = None
    frames = cap.own_frames()      # only what the point's two processes sent
    if pcap_dir is not None:
        path = pcap_dir / f"{result['profile']}-{result['mode']}-{result['size']}.pcap"
        write_atomic(path, pcap_bytes(frames))
        rec["pcap"] = str(path)
    if failure or cap.error:
        rec.update(status="failed", error=failure or cap.error, verdict="failed",
                   reasons=[failure or cap.error], expected=expect.to_json())
        return rec
    # Parsed now, after the processes stopped and before the next point starts.
    filler = ctx.runner.wire_filler
    rec.update(rtps.analyse(udp_datagrams(frames), result["domain_id"], expect, filler,
                            cap.stop_ns, lost=cap.kernel_drops + cap.seen - len(cap.frames),
                            others=len(cap.frames) - len(frames),
                            attributed=bool(cap.own_ports)))
    # the most receiver-specific MACs any footer of the user traffic carried (one per
    # receiver with origin authentication, none without: govkit.wire.verdict)
    macs = receiver_mac_summary(rec["observed"])
    rec["receiver_macs"] = max((k["max"] for k in macs.values()), default=0)
    if ctx.opts.wire_leaks:     # frame numbers are those of the pcap `pcap_bytes(frames)` writes
        rec["leaks"] = find_leaks(datagrams(captured_frames(frames)), result["domain_id"],
                                  filler)
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
    if opts.wire_pcap and opts.out is not None:     # before any signing or capture
        try:
            opts.out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise GovkitError(f"--pcap {opts.out}: cannot create it: {e.strerror}") from None
        if not os.access(opts.out, os.W_OK | os.X_OK):
            raise GovkitError(f"--pcap {opts.out}: not writable")
    check_capture(opts.wire_interface)
    runner = get_runner(opts.runner, **opts.runner_options)
    runner.check_installed()
    bundles = make_bundles(opts, runner, console)
    cells = [Cell(p, m, s) for p in opts.profiles for m in opts.modes for s in opts.sizes]
    outcome = BenchOutcome(opts.out)
    with tempfile.TemporaryDirectory(prefix="govkit-wire-") as tmp:
        # no order, no store: the seed orders nothing here
        ctx = RunContext(opts, runner, pinning(opts.pin), opts.seed or 0, console, Path(tmp),
                         bundles)
        outcome.interrupted = wire_phase(ctx, cells, set(), outcome.wire.append,
                                         opts.out or Path("."))
    outcome.wire_profiles = rtps.profile_verdicts(outcome.wire)
    return outcome
