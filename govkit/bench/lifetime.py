"""`govkit lifetime-check`: what a runtime does when an identity or a grant expires, is not
yet valid, or is revoked, measured on real pairs (one cell per runtime and event).

Events (pub's files are the ones that change; sub's are what `generate` writes):
- `identity_expires`: pub's certificate passes its not_after while the pair talks;
- `expired_identity_joins`: pub starts with a certificate that ended an hour ago;
- `not_yet_valid_joins`: pub starts with a certificate whose not_before is an hour ahead;
- `permissions_expire`: pub's grant's <validity> ends while the pair talks;
- `expired_permissions_join`: pub starts with a grant that ended an hour ago;
- `crl_written`: both sides read a CRL from the start; while the pair talks, the CRL is
  rewritten (`govkit pki revoke pub`): is it read again?

Outcomes: `kept_talking` (round trips went on for the whole observation window after the
event), `dropped` (they stopped; `seconds` after the event, to within one slot),
`refused` (a joining pub was never matched: its own participant was not created, or the
peer refused its handshake), `accepted` (a joining pub matched and talked), `crashed` (a
side ended on a signal), or `inconclusive` (the pair matched only after the event: the
lead time was too short for the host; never a runtime's answer). The evidence is what
the runtime said on either side (its own log lines; Fast DDS's listener events as
fastdds_perf prints them), else what govkit saw.

What waits on what: a joining cell waits for both sides' `ready` or for either to end
(the programs' own match wait bounds a peer refusal); an expiring cell's event is a
moment on the clock, because that is what an expiry is, and the pair must have matched
before it. The one window that is a choice is `observe_s`: how long round trips must go
on after the event to count as kept talking. It is an observation window, not a claim
about timing: a runtime that dropped the pair later than that is reported as kept
talking for that window, and says so in the cell.

DDS Security 1.1 asks for checks at authentication and at access (validate_local_identity,
validate_remote_identity, check_create_participant, check_remote_participant); it leaves
what happens to an already matched peer at expiry to the implementation. What Cyclone DDS
0.10 and Fast DDS 2.9 do is what this measures; their differences are in the cells, and
tests/integration/test_lifetime.py keeps them.
"""

from __future__ import annotations

import datetime as dt
import random
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from govkit.bench import lifetime_material as material
from govkit.bench.lifetime_events import EVENTS, RUNTIMES
from govkit.bench.lifetime_pair import LivePair, start_pair
from govkit.bench.machine import cpu_facts
from govkit.runners import get_runner

RUNTIME_NAMES = {"cyclone": "Cyclone DDS", "fastdds": "Fast DDS"}
HOUR = dt.timedelta(hours=1)
EVIDENCE_LINES = 3
EVIDENCE_CHARS = 240


@dataclass(frozen=True)
class Timing:
    """The cell's times (seconds). lead_s: from a cell's start to its event, for the events
    that happen while the pair talks: both processes started, discovered and
    authenticated each other within it (else the cell is inconclusive). observe_s: the
    observation window after the event. wait_s: how long each program waits for its peer
    to match (a joining pub that the peer refuses is refused after this). slot_ms: each
    ping-pong slot; a drop is timed to within one."""
    lead_s: float = 15.0
    observe_s: float = 10.0
    wait_s: float = 15.0
    slot_ms: int = 100

    def to_json(self) -> dict:
        return {"lead_s": self.lead_s, "observe_s": self.observe_s, "wait_s": self.wait_s,
                "slot_ms": self.slot_ms}


@dataclass(frozen=True)
class Cell:
    runtime: str
    version: str
    event: str
    outcome: str
    seconds: float | None
    evidence: str

    def to_json(self) -> dict:
        return {"runtime": self.runtime, "version": self.version, "event": self.event,
                "outcome": self.outcome, "seconds": self.seconds, "evidence": self.evidence}


# what makes one run's line differ from another's: the program's `[PID] `, Cyclone's
# `SECONDS.MICROS [DOMAIN] THREAD: ` (its log line prefix)
_PREFIX = re.compile(r"^(?:\[\d+\] |\d+\.\d+ \[\d*\] [^:]+: )")
# Lines that are not about the cell's pair: fastdds_perf's discovery lines (no security
# event in them), and a stranger's handshake on the same domain (another program on the
# machine: domains are few): a peer from another PKI (a cell's two sides share one
# Identity CA, so theirs always has its issuer), or a non-eProsima participant (vendor
# 01.10 is Cyclone's) that Fast DDS did not authorize.
_NOT_THE_PAIR = re.compile(r"^participant \S+: new|unable to get local issuer certificate"
                           r"|^authentication (?!010f)[0-9a-f]{4}")


def _strip_prefix(text: str) -> str:
    """A line without its process's and time's prefix, so that runs compare."""
    return _PREFIX.sub("", text)


def _runtime_words(pair: LivePair, since: float, until: float) -> list[str]:
    """What the runtimes said on stderr from `since` to `until` (not while govkit ended
    them), each side's lines named by it, the runtime's own log lines first, then the
    program's (its `error:` lines)."""
    own, program, seen = [], [], set()
    for line in list(pair.said):
        if not since <= line.t < until:
            continue
        text = _strip_prefix(line.text.strip())
        if not text or text in seen or _NOT_THE_PAIR.search(text):
            continue
        seen.add(text)
        said = f"{'ping' if line.role == 'pub' else 'pong'}: {text[:EVIDENCE_CHARS]}"
        (program if text.startswith("error:") else own).append(said)
    return own + program


def _evidence(pair: LivePair, since: float, seen: str) -> str:
    words = _runtime_words(pair, since, pair.ending)[:EVIDENCE_LINES]
    return " | ".join(words) if words else f"(no log line) {seen}"


def _crashed(codes: dict[str, int | None]) -> str | None:
    for role, code in codes.items():
        if code is not None and code < 0:
            return f"{'ping' if role == 'pub' else 'pong'} ended on signal {-code}"
    return None


@dataclass(frozen=True)
class CellPlan:
    """One cell to run: which runtime, which event, where, on which domain."""
    runtime: str
    version: str
    event: str
    directory: Path
    domain_id: int
    timing: Timing


def _join(plan: CellPlan, runner, bundle) -> Cell:
    t0 = time.monotonic()
    pair = start_pair(runner, bundle, plan.directory / "run", plan.domain_id,
                      plan.timing.wait_s)
    try:
        matched = pair.await_ready(t0 + plan.timing.wait_s + 20)
        talked = pair.slot(plan.timing.slot_ms * 1000) if matched else None
        # not matched: a side ended (or the wait is over); its status, and the other's
        # if it ends at the same time (a peer's refusal ends both at their wait)
        codes = pair.returncodes(wait_s=0 if matched else 2.0)
    finally:
        pair.end()
    crash = _crashed(codes)
    cell = lambda outcome, seen: Cell(RUNTIME_NAMES[plan.runtime], plan.version,  # noqa: E731
                                      plan.event, outcome, None, _evidence(pair, t0, seen))
    if crash:
        return cell("crashed", crash)
    if talked and talked[2] > 0:
        return cell("accepted", f"matched and ping-ponged ({talked[2]} round trips in "
                                f"{plan.timing.slot_ms} ms)")
    states = ", ".join(f"{'ping' if r == 'pub' else 'pong'} exit {c}" for r, c in codes.items())
    return cell("refused", f"no match: {states}")


def _expiring(plan: CellPlan, runner, bundle, event_wall: dt.datetime,
              at_event: Callable[[], None] | None) -> Cell:
    """Start the pair, talk in slots across the event and for observe_s after it."""
    t0 = time.monotonic()
    event_mono = t0 + (event_wall - dt.datetime.now(dt.UTC)).total_seconds()
    pair = start_pair(runner, bundle, plan.directory / "run", plan.domain_id,
                      plan.timing.wait_s)
    name = RUNTIME_NAMES[plan.runtime]
    try:
        matched = pair.await_ready(event_mono)
        if not matched or max(pair.ready.values()) >= event_mono:
            codes = pair.returncodes()
            return Cell(name, plan.version, plan.event, "inconclusive", None,
                        f"the pair had not matched when the event came ({plan.timing.lead_s:g} "
                        f"s after its start; status {codes}): give it a longer lead")
        last_answer, stopped = None, False
        written = at_event is None
        while time.monotonic() < event_mono + plan.timing.observe_s:
            if not written and time.monotonic() >= event_mono:
                at_event()
                event_mono, written = time.monotonic(), True
            slot = pair.slot(plan.timing.slot_ms * 1000)
            if slot is None or slot[2] == 0:
                stopped = True
                break
            last_answer = slot[1]
        codes = pair.returncodes(wait_s=1.0 if stopped else 0.0)
    finally:
        before = pair.end()
    codes = {r: c if c is not None else before[r] for r, c in codes.items()}
    since = event_mono - 0.5
    crash = _crashed(codes)
    if crash:
        return Cell(name, plan.version, plan.event, "crashed",
                    round(max(0.0, (last_answer or event_mono) - event_mono), 1),
                    _evidence(pair, since, crash))
    if not stopped:
        return Cell(name, plan.version, plan.event, "kept_talking", None,
                    _evidence(pair, since, f"round trips went on for the "
                                           f"{plan.timing.observe_s:g} s observed after the "
                                           f"event"))
    seconds = round(max(0.0, (last_answer or event_mono) - event_mono), 1)
    return Cell(name, plan.version, plan.event, "dropped", seconds,
                _evidence(pair, since, f"the last round trip came back {seconds} s after "
                                       f"the event"))


def run_cell(plan: CellPlan) -> Cell:
    """One cell, from a fresh PKI to its outcome."""
    runner = get_runner(plan.runtime)
    runner.check_installed()
    pki, bundle = material.cell_bundle(plan.directory, plan.runtime,
                                       crl=plan.event == "crl_written")
    now = dt.datetime.now(dt.UTC)
    event = material.whole_second(now + dt.timedelta(seconds=plan.timing.lead_s))
    here = plan.directory
    if plan.event == "expired_identity_joins":
        path = material.certificate_issued_at(pki, here, now - HOUR - material.DAY)
        return _join(plan, runner, material.with_pub(bundle, certificate=path))
    if plan.event == "not_yet_valid_joins":
        path = material.certificate_issued_at(pki, here, now + HOUR + material.DAY)
        return _join(plan, runner, material.with_pub(bundle, certificate=path))
    if plan.event == "expired_permissions_join":
        path = material.permissions_until(pki, bundle, here, (now - material.DAY, now - HOUR))
        return _join(plan, runner, material.with_pub(bundle, permissions=path))
    if plan.event == "identity_expires":
        path = material.certificate_issued_at(pki, here, event - material.DAY)
        return _expiring(plan, runner, material.with_pub(bundle, certificate=path), event,
                         None)
    if plan.event == "permissions_expire":
        path = material.permissions_until(pki, bundle, here, (now - material.DAY, event))
        return _expiring(plan, runner, material.with_pub(bundle, permissions=path), event,
                         None)
    if plan.event == "crl_written":
        return _expiring(plan, runner, bundle, event, lambda: material.revoke_pub(pki))
    raise ValueError(f"unknown event {plan.event!r}")


def runtime_version(runtime: str) -> str:
    """The runtime's version as its library or headers state it."""
    info = get_runner(runtime).runtime() or {}
    return str(info.get("version") or "unknown")


def run_matrix(runtimes: tuple[str, ...] = RUNTIMES, events: tuple[str, ...] = EVENTS,
               timing: Timing = Timing(), workdir: Path | None = None, jobs: int = 4,
               domain_base: int | None = None) -> list[Cell]:
    """Every (runtime, event) cell, `jobs` at a time, each on a domain of its own, in
    `workdir` (a temporary directory, removed after, when None). Cells in runtime order,
    then event order."""
    for r in runtimes:
        get_runner(r).check_installed()     # build the programs once, before the threads
    versions = {r: runtime_version(r) for r in runtimes}
    base = random.randrange(20, 200 - len(runtimes) * len(events)) if domain_base is None \
        else domain_base
    own = workdir is None
    root = Path(tempfile.mkdtemp(prefix="govkit-lifetime-")) if own else Path(workdir)
    plans = [CellPlan(r, versions[r], e, root / r / e, base + i, timing)
             for i, (r, e) in enumerate((r, e) for r in runtimes for e in events)]
    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return list(pool.map(run_cell, plans))
    finally:
        if own:
            shutil.rmtree(root, ignore_errors=True)


def matrix_fields(cells: list[Cell], timing: Timing) -> dict:
    """The --json document's fields (and lifetime.json's): the timing, the cells, when
    (UTC) and on which CPU (/proc/cpuinfo's model name) the matrix was measured."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            host = cpu_facts(f.read(1 << 20))["cpu"]
    except OSError:
        host = None
    return {"created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "host": host,
            "timing": timing.to_json(), "cells": [c.to_json() for c in cells]}


def table_rows(cells: list[Cell]) -> list[str]:
    """The terminal table: one row per event, one column per runtime (outcome, and the
    seconds of a drop), then each cell's evidence."""
    runtimes = list(dict.fromkeys(f"{c.runtime} {c.version}" for c in cells))
    by = {(f"{c.runtime} {c.version}", c.event): c for c in cells}
    events = list(dict.fromkeys(c.event for c in cells))

    def said(c: Cell) -> str:
        return c.outcome + (f" {c.seconds:g} s" if c.seconds is not None else "")
    width = max(len(e) for e in events + ["event"])
    cols = [max([len(r)] + [len(said(by[r, e])) for e in events if (r, e) in by])
            for r in runtimes]
    rows = ["  ".join(["event".ljust(width)] + [r.ljust(w) for r, w in zip(runtimes, cols,
                                                                            strict=True)])]
    for e in events:
        rows.append("  ".join([e.ljust(width)] + [
            (said(by[r, e]) if (r, e) in by else "-").ljust(w)
            for r, w in zip(runtimes, cols, strict=True)]).rstrip())
    rows.append("")
    rows += [f"{c.runtime} {c.event}: {c.evidence}" for c in cells]
    return rows
