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

from govkit.bench.machine import Pinning, pinning
from govkit.bench.options import BenchOptions, BenchOutcome, Cell
from govkit.bench.repeat import make_bundles, point, run_point
from govkit.common.errors import GovkitError
from govkit.common.fsutil import write_atomic
from govkit.runners import get_runner
from govkit.runners.base import BenchPoint, Bundle
from govkit.runners.network import DEFAULT
from govkit.runners.pair import Pair, PairFailed
from govkit.wire import rtps
from govkit.wire.capture import Capture, check_capture, pcap_bytes, udp_datagrams
from govkit.wire.leaks import find_leaks
from govkit.wire.pcapfile import captured_frames, datagrams

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
        expect = rtps.expectation(opts.wire_expect or cell.profile)
        console.print(f"wire: capturing {cell.profile.name} {cell.mode} {cell.size} B "
                      f"on {opts.wire_interface} (an extra repeat, not measured)", style="dim")
        # a protection class's point (bench --policy) runs on its own topic names, which
        # only the rotating programs take: its capture is of one of its pairs
        run = run_pair_wire_point if cell.profile.topics else run_wire_point
        try:
            rec = run(runner, point(cell, opts, 0, pin), bundles[cell.profile.name],
                      workdir, expect, opts.wire_interface,
                      pcap_dir if opts.wire_pcap else None, opts.wire_leaks)
        except KeyboardInterrupt:
            return True
        verdict = rec["verdict"].upper() if rec["verdict"] != "match" else "match"
        console.print(f"wire: {cell.profile.name} {cell.mode} {cell.size} B: {verdict}; "
                      f"{rec.get('headline') or rec['error']}", markup=False, highlight=False)
        record(rec)
    return False


def run_wire_point(runner, point: BenchPoint, bundle: Bundle, workdir: Path,
                   expect: rtps.Expectation, interface: str, pcap_dir: Path | None,
                   leaks: bool = False) -> dict:
    """Run one point with its traffic captured; parse and judge it afterwards (and with
    `leaks`, read it as an eavesdropper would: govkit.wire.leaks)."""
    captures: list[Capture] = []

    def capture(p: BenchPoint, specs) -> Capture:
        cap = Capture(interface, rtps.PORTS.ports(p.domain_id))
        for spec in specs:     # the moment govkit stops the processes: shutdown from there
            if spec.stop_when is not None:
                spec.stop_when = _marking_stop(spec.stop_when, cap)
        captures.append(cap)
        return cap

    result, failure = run_point(runner, point, bundle, workdir, around=capture)
    return _judged(result, failure, captures[-1], runner, point, expect, pcap_dir, leaks)


def run_pair_wire_point(runner, point: BenchPoint, bundle: Bundle, workdir: Path,
                        expect: rtps.Expectation, interface: str, pcap_dir: Path | None,
                        leaks: bool = False) -> dict:
    """`run_wire_point` with one long-lived pair of the runner's own program (its
    pair_specs: the profile's topic names), one slot of the point's mode and size lasting
    its duration, captured from the pair's start to its end."""
    for path, text in runner.configs(replace(point, mode="latency", size=32), bundle,
                                     workdir).items():
        write_atomic(path, text)
    specs = runner.pair_specs(bundle, point.domain_id, point.cpus, False, workdir)
    pair = Pair(point.profile.name, point.profile.name, 0, point.domain_id, specs,
                runner.explain_refusal)
    result = {"profile": point.profile.name, "mode": point.mode, "size": point.size,
              "domain_id": point.domain_id, "commands": pair.commands(),
              "started": datetime.now(UTC).isoformat(timespec="seconds")}
    failure = None
    t0 = time.monotonic()
    measure_us = int(point.duration * 1e6)
    with Capture(interface, rtps.PORTS.ports(point.domain_id)) as cap:
        try:
            pair.start(timeout=60)
            if point.mode == "latency":
                pair.slot(point.size, WIRE_SETTLE_US, measure_us)
            else:
                pair.tslot(point.size, WIRE_SETTLE_US, measure_us, 1)
        except PairFailed as e:
            failure = str(e)
        finally:
            cap.mark_stop()
            pair.close()
    result.update(status="failed" if failure else "ok", error=failure,
                  finished=datetime.now(UTC).isoformat(timespec="seconds"),
                  elapsed_s=round(time.monotonic() - t0, 2))
    return _judged(result, failure, cap, runner, point, expect, pcap_dir, leaks)


def _judged(result: dict, failure: str | None, cap: Capture, runner, point: BenchPoint,
            expect: rtps.Expectation, pcap_dir: Path | None, leaks: bool) -> dict:
    """The wire record of a captured repeat: its capture parsed and judged."""
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
    rec.update(rtps.analyse(udp_datagrams(frames), result["domain_id"], expect,
                            runner.wire_filler, cap.stop_ns,
                            lost=cap.kernel_drops + cap.seen - len(cap.frames),
                            others=len(cap.frames) - len(frames),
                            attributed=bool(cap.own_ports)))
    if leaks:     # frame numbers are those of the pcap `pcap_bytes(frames)` writes
        rec["leaks"] = find_leaks(datagrams(captured_frames(frames)), result["domain_id"],
                                  getattr(runner, "wire_filler", None))
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
        outcome.interrupted = wire_phase(opts, runner, cells, bundles, pinning(opts.pin),
                                         Path(tmp), console, set(), outcome.wire.append,
                                         opts.out or Path("."))
    outcome.wire_profiles = rtps.profile_verdicts(outcome.wire)
    return outcome
