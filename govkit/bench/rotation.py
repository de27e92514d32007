"""Latency by rotation: long-lived process pairs, short slots, paired rounds.

Why: the 2-core VM runs in speed regimes that last seconds (docs/background/method.md). A design
that starts fresh processes per repeat measures a profile and its `none` partner tens of
seconds apart, in different regimes, and its overhead interval is as wide as the regimes
are apart. Here every arm's process pairs start once, are timed to match (discovery plus
the secure handshake), and stay up; then, round after round, every arm gets one short slot
per size between two `none` slots (`none A none B none …`, a fresh seeded order per round
and size), so each secured slot has a baseline a fraction of a second before and after it.
govkit.results.paired turns the rounds into ratios with intervals.

Arms: every profile of the run (`none` is the baseline), plus the A/A arm: a second,
independent `none`, paired exactly like a profile; its ratio should be 1, and how far its
interval reaches is the run's noise floor. Each arm runs `instances` separate process
pairs (separate processes, separate address-space layouts), taken in turn by round.

A slot is ended by the program between two round trips, never by a signal in the middle of
a fragmented, reliable exchange (the `slot` command of cyclone_perf and `fastdds_perf -S`).

Lanes: a round has one sandwich per lane, a (mode, size). Latency slots ping-pong; throughput
slots (runners with `rotates_throughput`: cyclone_perf's `tput`) write as fast as the
reliable writer lets them, end with a marker and wait until every sample is acknowledged, so
that no slot's traffic runs into the next; the pong counts what arrived (`count TAG`).
"""

from __future__ import annotations

import os
import random
import selectors
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from govkit.bench.defaults import (
    DEFAULT_INSTANCES,
    DEFAULT_MIN_ROUNDS,
    DEFAULT_ROTATION_TARGET_PCT,
    DEFAULT_SETTLE_MS,
    DEFAULT_SLOT_MS,
    MIN_THROUGHPUT_SLOT_MS,
    budget_note,
)
from govkit.bench.loadwatch import LoadWatch
from govkit.catalog.profiles import Profile
from govkit.common.errors import GovkitError
from govkit.common.fsutil import write_atomic
from govkit.common.limits import MAX_DOMAIN_ID
from govkit.results.paired import AA_ARM, BASELINE_ARM
from govkit.runners.base import (
    BenchPoint,
    Bundle,
    ProcessSpec,
    command_line,
    dies_with_govkit,
    launch_argv,
    process_placement,
)
from govkit.runners.crypto import CryptoVariant
from govkit.runners.cyclone_refusal import explain_cyclone_refusal

SLOT_FORMAT = "latency-slots"
LATENCY, THROUGHPUT = "latency", "throughput"
WARMUP_SLOT_US = 100_000          # one unmeasured slot per pair and size before round 0
SLOT_TIMEOUT_S = 15.0             # beyond the slot's own length
WIDTHS_EVERY_S = 1.0              # the stopping rule's widths are recomputed this often
MIN_ARM_ROUNDS = 20               # an arm's slots before its width may stop its slots
PEER_SIDE = "on the peer's side"   # in a refusal of the peer's files (cyclone_refusal)
REFUSAL_WAIT_S = 3.0              # for the other side's refusal, once one side failed


@dataclass(frozen=True)
class RotationSettings:
    slot_ms: int = DEFAULT_SLOT_MS
    settle_ms: int = DEFAULT_SETTLE_MS
    instances: int = DEFAULT_INSTANCES
    min_rounds: int = DEFAULT_MIN_ROUNDS
    max_rounds: int = 400
    target_ci: float = DEFAULT_ROTATION_TARGET_PCT   # % half-width of every ratio's interval
    aa: bool = True

    @property
    def throughput_slot_ms(self) -> int:
        """A throughput slot's measured part: --slot-ms, but at least MIN_THROUGHPUT_SLOT_MS."""
        return max(self.slot_ms, MIN_THROUGHPUT_SLOT_MS)

    def to_json(self) -> dict:
        return {"slot_ms": self.slot_ms, "throughput_slot_ms": self.throughput_slot_ms,
                "settle_ms": self.settle_ms,
                "instances": self.instances, "min_rounds": self.min_rounds,
                "min_arm_rounds": MIN_ARM_ROUNDS,
                "max_rounds": self.max_rounds, "target_ci_pct": self.target_ci,
                "aa_arm": self.aa}


@dataclass(frozen=True)
class Arm:
    name: str                     # profile name, `PROFILE@VARIANT`, or AA_ARM
    profile: Profile
    # --cipher/--rekey (govkit.runners.crypto): a secured profile's arm per variant;
    # `none` and the A/A arm have none (no crypto to vary)
    variant: CryptoVariant | None = None

    @property
    def label(self) -> str:
        return "none (A/A)" if self.name == AA_ARM else self.name

    def to_json(self) -> dict:
        """What a pair or slot record says of its arm beyond its name."""
        return {"variant": self.variant.to_json()} if self.variant is not None else {}


class PairFailed(Exception):
    """A pair's process died, refused or stopped answering; the message says which."""


class Pair:
    """One long-lived ping/pong pair of one arm."""

    def __init__(self, arm: Arm, instance: int, domain_id: int, specs: list[ProcessSpec],
                 workdir: Path):
        self.arm, self.instance, self.domain_id, self.specs = arm, instance, domain_id, specs
        self.procs: dict[str, subprocess.Popen] = {}
        self.errs: dict[str, object] = {}
        self.buffers: dict[str, bytes] = {}
        self.ready_s: dict[str, float] = {}
        self.start_to_ready_s: float | None = None
        self.alive = False
        self.workdir = workdir

    @property
    def key(self) -> str:
        return f"{self.arm.name}#{self.instance}"

    def start(self, timeout: float) -> None:
        """Start pong and ping and wait until both say they matched."""
        preexec = dies_with_govkit()
        t0 = time.monotonic()
        for spec in self.specs:
            err = tempfile.TemporaryFile()
            self.errs[spec.role] = err
            self.procs[spec.role] = subprocess.Popen(
                launch_argv(spec), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                env={**os.environ, **spec.env}, start_new_session=True, preexec_fn=preexec)
            self.buffers[spec.role] = b""
        self.alive = True
        deadline = t0 + timeout
        for role in ("sub", "pub"):
            line = self._line(role, deadline)
            if not line.startswith("ready "):
                raise PairFailed(f"{self.arm.label} pair {self.instance}: expected 'ready', "
                                 f"got {line[:80]!r}")
            self.ready_s[role] = float(line.split()[1])
        self.start_to_ready_s = time.monotonic() - t0

    def placement(self) -> dict:
        """Per role, the CPUs and scheduling policy its process really has (/proc): what
        the run claims (pinned, SCHED_FIFO) is checked, not assumed."""
        return {role: process_placement(p.pid) for role, p in self.procs.items()}

    def _line(self, role: str, deadline: float) -> str:
        proc = self.procs[role]
        fd = proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self.buffers[role]:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise PairFailed(self._why(role, "did not answer in time"))
                if not sel.select(timeout=min(left, 1.0)):
                    continue
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    proc.wait(timeout=5)
                    raise PairFailed(self._why(role, f"exited with status {proc.returncode}"))
                self.buffers[role] += chunk
        line, _, rest = self.buffers[role].partition(b"\n")
        self.buffers[role] = rest
        return line.decode("utf-8", "replace")

    def _why(self, role: str, what: str) -> str:
        name = "ping" if role == "pub" else "pong"
        why = self._refusal()
        if not why or PEER_SIDE in why:   # the refused side may be saying why right now
            for proc in self.procs.values():
                try:
                    proc.wait(timeout=REFUSAL_WAIT_S)
                except subprocess.TimeoutExpired:
                    pass
            why = self._refusal()
        return (f"{self.arm.label} pair {self.instance} (domain {self.domain_id}): {name} "
                f"{what}" + (f": {self.stderr_tail(role)}" if self.stderr_tail(role) else "")
                + (f"; {why}" if why else ""))

    def _refusal(self) -> str:
        """A Cyclone pair's refusal mapped to the file, the rule and the fix (else ""):
        a side refused over its own files first, then one refusing its peer's (a refused
        ping leaves pong waiting in vain, or refusing ping's handshake)."""
        found = [f"{'ping' if s.role == 'pub' else 'pong'}: {w}" for s in self.specs
                 if (w := explain_cyclone_refusal(s.env, self.stderr_lines(s.role, 50),
                                                  self.domain_id))]
        found.sort(key=lambda w: PEER_SIDE in w)
        return found[0] if found else ""

    def stderr_tail(self, role: str, n: int = 3) -> str:
        """The last `n` lines of a side's stderr, on one line."""
        return " | ".join(self.stderr_lines(role, n).splitlines())

    def stderr_lines(self, role: str, n: int) -> str:
        """The last `n` lines of a side's stderr, one per line: Cyclone's refusal is read
        line by line (a local refusal after a remote one is still the local one)."""
        err = self.errs.get(role)
        if err is None:
            return ""
        err.seek(0)
        lines = err.read().decode("utf-8", "replace").strip().splitlines()
        return "\n".join(lines[-n:])

    def _send(self, role: str, command: str) -> None:
        try:
            self.procs[role].stdin.write(command.encode())
            self.procs[role].stdin.flush()
        except (BrokenPipeError, OSError):
            raise PairFailed(self._why(role, "is gone")) from None

    def pong_cpu_us(self) -> int:
        """The CPU time the pong process has used so far (it answers `cpu`)."""
        self._send("sub", "cpu\n")
        line = self._line("sub", time.monotonic() + SLOT_TIMEOUT_S)
        words = line.split()
        if len(words) != 2 or words[0] != "cpu_us" or not words[1].isdigit():
            raise PairFailed(self._why("sub", f"answered {line[:80]!r} to 'cpu'"))
        return int(words[1])

    def slot(self, size: int, settle_us: int, measure_us: int) -> dict:
        """One slot; the row also holds the CPU time the pong used during it (the ping's
        own, cpu_us, is in its slot line)."""
        before = self.pong_cpu_us()
        self._send("pub", f"slot {size} {settle_us} {measure_us}\n")
        deadline = time.monotonic() + (settle_us + measure_us) / 1e6 + SLOT_TIMEOUT_S
        row = parse_slot(self._line("pub", deadline))
        row["pong_cpu_us"] = self.pong_cpu_us() - before
        return row

    def tslot(self, size: int, settle_us: int, measure_us: int, tag: int) -> dict:
        """One throughput slot: ping writes, pong counts; the row holds both sides' counts
        and CPU time and the receive rate (samples after the first arrival over the time
        from the first arrival to the last)."""
        before = self.pong_cpu_us()
        self._send("pub", f"tput {size} {settle_us} {measure_us} {tag}\n")
        deadline = time.monotonic() + (settle_us + measure_us) / 1e6 + SLOT_TIMEOUT_S
        row = parse_tslot(self._line("pub", deadline))
        self._send("sub", f"count {tag}\n")
        row.update(parse_count(self._line("sub", time.monotonic() + SLOT_TIMEOUT_S), tag))
        row["mbps"] = round(row["rate_sps"] * size * 8 / 1e6, 4)    # payload, as ddsperf
        row["pong_cpu_us"] = self.pong_cpu_us() - before
        return row

    def commands(self) -> list[str]:
        return [command_line(s) for s in self.specs]

    def close(self) -> None:
        """End of input: both delete their participants and exit; killed if they do not."""
        end_processes(list(self.procs.values()), grace_s=3)
        for err in self.errs.values():
            err.close()
        self.alive = False


def end_processes(procs: list[subprocess.Popen], grace_s: float) -> None:
    """Close every process's input (govkit's programs then delete their participants and
    exit), wait up to `grace_s` for each, kill the group of one that does not, and close
    its pipes."""
    for proc in procs:
        try:
            proc.stdin.close()
        except OSError:
            pass
    for proc in procs:
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, 9)
            except ProcessLookupError:
                pass
            proc.wait()
        for pipe in (proc.stdout, proc.stderr):
            if pipe:
                pipe.close()


_NUMBERS = ("n", "settle_n", "mean", "min", "p50", "p90", "p99", "max", "cpu_us", "wall_us",
            "peers")


def parse_slot(line: str) -> dict:
    """A slot line (cyclone_perf, fastdds_perf -S) as a raw row (every field kept;
    percentiles in µs)."""
    words = line.split()
    if len(words) < 3 or words[0] != "slot":
        raise PairFailed(f"unexpected output from ping: {line[:80]!r}")
    row: dict = {"size": int(words[1])}
    it = iter(words[2:])
    for key, value in zip(it, it, strict=False):
        if key in _NUMBERS:
            row[key] = float(value) if "." in value else int(value)
        elif key == "tl":       # median of each 25 ms, settle included
            row["timeline"] = value
        elif key == "hist":     # kept as printed: bin:count,… (govkit.results.stats.histogram)
            row["hist"] = value
    row["count"] = row.get("n", 0)
    return row


def parse_tslot(line: str) -> dict:
    """ping's line after a throughput slot: `tslot SIZE sent N settle_sent K cpu_us U
    wall_us W peers P`."""
    words = line.split()
    if len(words) < 2 or words[0] != "tslot" or len(words) % 2:
        raise PairFailed(f"unexpected output from ping: {line[:80]!r}")
    row: dict = {"size": int(words[1]), "mode": THROUGHPUT}
    it = iter(words[2:])
    for key, value in zip(it, it, strict=True):
        if key in ("sent", "settle_sent", "cpu_us", "wall_us", "peers"):
            row[key] = int(value)
    return row


def parse_count(line: str, tag: int) -> dict:
    """pong's answer to `count TAG`: what arrived, and the receive rate from it."""
    words = line.split()
    if words == ["count", str(tag), "missing"]:
        raise PairFailed(f"pong did not receive the end of throughput slot {tag} in time")
    if words[:2] != ["count", str(tag)] or len(words) % 2:
        raise PairFailed(f"unexpected answer from pong: {line[:80]!r}")
    fields = dict(zip(words[2::2], (int(v) for v in words[3::2]), strict=True))
    span_us = fields.get("span_us", 0)
    later = fields.get("later_n", 0)
    rate = later / (span_us / 1e6) if span_us > 0 and later > 0 else 0.0
    return {"n": fields.get("n", 0), "later_n": later, "span_us": span_us,
            "lost": fields.get("lost", 0), "rate_sps": round(rate, 3), "count": fields.get("n", 0)}


# ------------------------------------------------------------------------- scheduling

def arms_of(profiles: list[Profile], aa: bool, variants: list[CryptoVariant] = ()
            ) -> list[Arm]:
    """An arm per profile, or per profile and crypto variant where the profile protects
    something (`no_protection` has nothing a cipher could change); `none`, then the A/A
    arm. Each variant arm is paired with the same round's `none` slots like any other."""
    arms = [Arm(f"{p.name}@{v.name}", p, v) if variants and protects(p) else Arm(p.name, p)
            for p in profiles for v in (variants if variants and protects(p) else [None])]
    base = next((p for p in profiles if p.name == BASELINE_ARM), None)
    if base is None:
        raise GovkitError("the rotating latency design pairs every profile with `none`: add "
                          "--profile none (or use --all-profiles)")
    if aa:
        arms.append(Arm(AA_ARM, base))
    return arms


def protects(profile: Profile) -> bool:
    """Whether any of the profile's protection kinds uses a key (SIGN or ENCRYPT)."""
    return any(k not in (None, "NONE") for k in (
        profile.rtps_protection_kind, profile.metadata_protection_kind,
        profile.data_protection_kind))


def round_plan(arms: list[Arm], lanes: list[tuple[str, int]], instances: int, seed: int,
               rnd: int, active: set[tuple[str, str, int]] | None = None
               ) -> list[tuple[tuple[str, int], list[tuple[Arm, int]]]]:
    """Round `rnd`: per lane (mode, size; in this round's own order) the slot sequence
    `none X1 none X2 … none`, the other arms shuffled, each arm's instance taken in turn
    and `none`'s alternating inside the round, so every comparison has both of them.
    `active` (arm, mode, size): only these arms get slots (the A/A arm whenever its lane has
    any other), so rounds after the minimum go to the intervals still wider than the target;
    a lane where only the A/A arm is still wide gets `none A/A none` (a run stopped at round
    20 with budget left and a wide A/A arm, then advised a larger budget: issue 37)."""
    rand = random.Random(f"govkit/{seed}/rotation/{rnd}")
    order = list(lanes)
    rand.shuffle(order)
    base = next(a for a in arms if a.name == BASELINE_ARM)
    plan = []
    for lane in order:
        others = [a for a in arms if a.name != BASELINE_ARM]
        if active is not None:
            wanted = {a.name for a in others if (a.name, *lane) in active}
            if not wanted:
                continue
            others = [a for a in others if a.name in wanted or a.name == AA_ARM]
        rand.shuffle(others)
        seq: list[tuple[Arm, int]] = []
        n0 = rand.randrange(instances)
        for i, arm in enumerate(others):
            seq.append((base, (n0 + i) % instances))
            seq.append((arm, (rnd + arms.index(arm)) % instances))
        seq.append((base, (n0 + len(others)) % instances))
        plan.append((lane, seq))
    return plan


# ------------------------------------------------------------------------------- run

@dataclass
class RotationOutcome:
    rounds: int = 0
    failed: int = 0
    interrupted: bool = False
    notes: list[str] = field(default_factory=list)


def distinct_domains(n: int, taken: set[int]) -> list[int]:
    """n domain ids no other pair of this run uses (from the system's randomness: two runs
    at once must not share them)."""
    free = [d for d in range(1, MAX_DOMAIN_ID + 1) if d not in taken]
    if len(free) < n:
        raise GovkitError(f"{n} process pairs need {n} domains; only {len(free)} are free")
    return random.SystemRandom().sample(free, n)


def run_rotation(runner, arms: list[Arm], bundles: dict[str, Bundle],
                 lanes: list[tuple[str, int]],
                 rs: RotationSettings, store, seed: int, pin, console, started: float,
                 budget: float, workdir: Path, load: LoadWatch) -> RotationOutcome:
    """Start every pair, then rounds until every ratio is within the target (after the
    minimum) or the budget would be passed; every slot goes to `store` as it completes."""
    from govkit.results.summary import rotation_widths

    outcome = RotationOutcome()
    rot = store.rotation()
    first_round = rot["next_round"]
    first_instance = rot["next_instance"]
    realtime = pin.realtime
    for arm in arms:            # the pair's configuration files: ddsperf's, once per profile
        for path, text in runner.configs(BenchPoint(arm.profile, "latency", 32, 1),
                                         bundles[arm.profile.name],
                                         workdir).items():
            write_atomic(path, text)
    domains = iter(distinct_domains(len(arms) * rs.instances, set()))
    pairs: dict[tuple[str, int], Pair] = {}
    try:
        for arm in arms:
            for i in range(rs.instances):
                domain = next(domains)
                extra = {"variant": arm.variant} if arm.variant is not None else {}
                pair = Pair(arm, first_instance + i, domain,
                            runner.pair_specs(bundles[arm.profile.name], domain, pin.cpus,
                                              realtime, workdir, **extra), workdir)
                console.print(f"starting {arm.label} pair {pair.instance} (domain {domain})",
                              style="dim", markup=False, highlight=False)
                record = {"arm": arm.name, "profile": arm.profile.name,
                          "instance": pair.instance, "domain_id": domain,
                          "commands": pair.commands(), **arm.to_json(),
                          "started": datetime.now(UTC).isoformat(timespec="seconds")}
                try:
                    pair.start(timeout=60)
                except PairFailed as e:
                    pair.close()
                    outcome.failed += 1
                    store.add_pair({**record, "status": "failed", "error": str(e)})
                    console.print(f"FAILED {e}", markup=False, highlight=False)
                    continue
                pairs[(arm.name, pair.instance)] = pair
                store.add_pair({**record, "status": "ok", "placement": pair.placement(),
                                "time_to_match_s": pair.ready_s.get("pub"),
                                "pong_time_to_match_s": pair.ready_s.get("sub"),
                                "start_to_ready_s": round(pair.start_to_ready_s, 4)})
        tags = iter(range(1 << 30))
        for pair in list(pairs.values()):        # first-use costs out of the way, unmeasured
            for mode, size in lanes:
                try:
                    if mode == THROUGHPUT:
                        pair.tslot(size, 0, WARMUP_SLOT_US, 1 + next(tags) % 255)
                    else:
                        pair.slot(size, 0, WARMUP_SLOT_US)
                except PairFailed as e:
                    _drop(pairs, pair, e, outcome, console)
                    break
        load.start()
        last_round_s = None
        rnd = first_round
        active = None
        widths_at = float("-inf")
        while rnd < first_round + rs.max_rounds:
            done = rnd - first_round
            if done >= rs.min_rounds:
                # the widths (a bootstrap per arm, ~0.2 s in all) once per WIDTHS_EVERY_S of
                # rounds, not after every round: late rounds of 30 ms slots are shorter
                if time.monotonic() - widths_at >= WIDTHS_EVERY_S:
                    widths = trusted_widths(rotation_widths(store.doc, store.summarizer),
                                            store.doc["rotation"]["slots"])
                    widths_at = time.monotonic()
                active = {k for k, w in widths.items() if w is None or w > rs.target_ci}
                if widths and all(w is not None and w <= rs.target_ci for w in widths.values()):
                    outcome.notes.append(f"every ratio within ±{rs.target_ci:g}% after "
                                         f"{done} rounds")
                    break
                if last_round_s and time.monotonic() - started + last_round_s > budget:
                    outcome.notes.append(budget_stop_note(store.doc, store.summarizer, done,
                                                          budget))
                    break
            t0 = time.monotonic()
            plan = round_plan(arms, lanes, rs.instances, seed, rnd, active)
            if not plan:
                outcome.notes.append(f"no interval left to narrow after {done} rounds")
                break
            for (mode, size), seq in plan:
                rows = []
                for position, (arm, k) in enumerate(seq):
                    pair = _pick(pairs, arm, first_instance + k, rs.instances, first_instance)
                    if pair is None:
                        continue
                    base = {"round": rnd, "position": position, "arm": arm.name,
                            "profile": arm.profile.name, "instance": pair.instance,
                            "size": size, "mode": mode, **arm.to_json()}
                    try:
                        row = pair.tslot(size, rs.settle_ms * 1000,
                                         rs.throughput_slot_ms * 1000,
                                         1 + next(tags) % 255) if mode == THROUGHPUT \
                            else pair.slot(size, rs.settle_ms * 1000, rs.slot_ms * 1000)
                    except PairFailed as e:
                        rows.append({**base, "status": "failed", "error": str(e)})
                        _drop(pairs, pair, e, outcome, console)
                        continue
                    status = "ok"
                    if row.get("peers", 1) > 1:
                        status = "foreign_participant"
                    elif not row.get("n") or (mode == THROUGHPUT and not row["rate_sps"]):
                        status = "no_samples"
                    rows.append({**base, **row, "status": status})
                store.add_slots(rows)
            last_round_s = time.monotonic() - t0
            store.finish_round(rnd, last_round_s)
            outcome.rounds += 1
            # a line per round (also when piped: stderr, no live display), with the budget
            # as the bound on what is left
            console.print(f"round {rnd}: {last_round_s:.1f} s "
                          + budget_note(time.monotonic() - started, budget),
                          style="dim", markup=False, highlight=False)
            rnd += 1
            if not pairs:
                outcome.notes.append("every process pair failed; nothing more to measure")
                break
    except KeyboardInterrupt:
        outcome.interrupted = True
    finally:
        for pair in pairs.values():
            pair.close()
        store.set_load(load.finish())
    return outcome


def budget_stop_note(doc: dict, summarizer, done: int, budget: float) -> str:
    """What a run the budget stopped says of its widest ratio interval: recomputed over
    every round, as the summary and report compute it (the stopping rule's widths are up to
    WIDTHS_EVERY_S old: a run of 0.2 s rounds said ±2.4% where its report said ±2.3%)."""
    from govkit.results.summary import rotation_widths

    widths = trusted_widths(rotation_widths(doc, summarizer), doc["rotation"]["slots"])
    worst = max((w for w in widths.values() if w is not None), default=None)
    return (f"stopped after {done} rounds: another would pass the {budget:.0f} s budget "
            f"(--budget); widest ratio interval ±{worst:.1f}%" if worst is not None else
            f"stopped after {done} rounds (budget)")


def trusted_widths(widths: dict[tuple[str, str, int], float | None], slots: list[dict]
                   ) -> dict[tuple[str, str, int], float | None]:
    """The widths the stopping rule may act on: None (not known yet) for an arm with fewer
    than MIN_ARM_ROUNDS slots. A percentile bootstrap over a handful of rounds is too narrow
    (2026-12-02: with 30 ms slots, half the arms of a default run met ±2 % after the 6
    minimum rounds, 3 per process instance, and stopped there)."""
    counts: dict[tuple[str, str, int], int] = {}
    for s in slots:
        if s.get("status") == "ok":
            key = (s["arm"], s.get("mode", LATENCY), s["size"])
            counts[key] = counts.get(key, 0) + 1
    return {k: w if counts.get(k, 0) >= MIN_ARM_ROUNDS else None for k, w in widths.items()}


def _pick(pairs: dict, arm: Arm, wanted: int, instances: int, first: int) -> Pair | None:
    """The wanted instance, else any other live one of the arm."""
    if (arm.name, wanted) in pairs:
        return pairs[(arm.name, wanted)]
    for k in range(instances):
        if (arm.name, first + k) in pairs:
            return pairs[(arm.name, first + k)]
    return None


def _drop(pairs: dict, pair: Pair, error: Exception, outcome: RotationOutcome, console) -> None:
    outcome.failed += 1
    console.print(f"FAILED {error}; this pair is stopped, the run goes on", markup=False,
                  highlight=False)
    pairs.pop((pair.arm.name, pair.instance), None)
    pair.close()
