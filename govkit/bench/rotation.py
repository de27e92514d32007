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

Lanes: a round has one sandwich per lane, a (mode, size). Latency slots ping-pong, under
SCHED_FIFO where permitted. Throughput slots (runners with `rotates_throughput`:
cyclone_perf's `tput`) write as fast as the reliable writer lets them and end with a marker;
pong answers `count TAG` (what arrived, with its arrivals per 5 ms) once the marker, behind
every sample of the slot, has arrived, so that no slot's data runs into the next (cyclone_perf
no longer waits for the acknowledgements: they come on the next heartbeat, 100 ms later).
CPU slots (a `cpu` lane beside each throughput lane) write the same way but paced at one
fixed rate per size, the same for every arm, every run and every machine fast enough,
below the heaviest arm's saturation (offered_rates), and give each side's CPU time per
sample (RTI Perftest's -cpu, at a rate every profile sustains).
Throughput and CPU slots run normally scheduled, as ddsperf does: each pair switches itself
between SCHED_FIFO and normal scheduling as its slots need (govkit.runners.pair).

The pairs themselves (their processes, the line protocol they answer in, their scheduling
policy) are govkit.runners.pair; this module decides which pair gets which slot, and when
to stop, from the run's context (govkit.bench.context).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from govkit.bench.context import RunContext
from govkit.bench.defaults import cpu_rate, step_at_or_below
from govkit.bench.domains import distinct_domains, usable_domains
from govkit.bench.forecast import cap_note, warn_late
from govkit.bench.options import CPU_LOAD_SHARE, MIN_ARM_ROUNDS, RotationSettings, protects
from govkit.bench.watchdog import idle_burners, read_pairs, stop
from govkit.catalog.measures import CPU, LATENCY, THROUGHPUT
from govkit.catalog.profiles import Profile, domain_ids_text
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.fsutil import write_atomic
from govkit.results.paired import AA_ARM, BASELINE_ARM, is_baseline_arm
from govkit.runners.base import BenchPoint, PairRequest
from govkit.runners.crypto import CryptoVariant
from govkit.runners.pair import Pair, PairFailed
from govkit.runners.readers import readers_arm, split_readers_arm

CPU_DELIVERED = 0.95              # ... and a slot that delivers less of it is "saturated"
# Fewest samples a slot's figure rests on (round trips, arrivals, paced writes), and the
# longest a slot may become to hold them (measure_lengths)
MIN_SLOT_SAMPLES = {LATENCY: 20, THROUGHPUT: 100, CPU: 50}
MAX_SLOT_US = 1_000_000
WARMUP_SLOT_US = 100_000          # one unmeasured slot per pair and size before round 0
WIDTHS_EVERY_S = 1.0              # the stopping rule's widths are recomputed this often


@dataclass(frozen=True)
class Arm:
    name: str                     # profile name, `PROFILE@VARIANT`, or AA_ARM
    profile: Profile
    # --cipher/--rekey (govkit.runners.crypto): a secured profile's arm per variant;
    # `none` and the A/A arm have none (no crypto to vary)
    variant: CryptoVariant | None = None
    # a version axis: the tag of the install it runs on (None: the baseline's), its name
    # `PROFILE@TAG` (govkit.results.versions)
    runtime: str | None = None
    # --readers: its pairs' readers; above 1 the name is `NAME@Nreaders`
    # (govkit.runners.readers.readers_arm), `none`'s too: the baseline at that count. Never
    # both a runtime and readers above 1: BenchOptions.check_readers refuses the two axes
    # together, and arms_of too
    readers: int = 1

    @property
    def label(self) -> str:
        return readers_arm("none (A/A)", self.readers) \
            if self.name == readers_arm(AA_ARM, self.readers) else self.name

    @property
    def is_baseline(self) -> bool:
        return is_baseline_arm(self.name)

    def to_json(self) -> dict:
        """What a pair or slot record says of its arm beyond its name."""
        return {"variant": self.variant.to_json()} if self.variant is not None else {}


# ------------------------------------------------------------------------- scheduling

def arms_of(profiles: list[Profile], aa: bool, variants: list[CryptoVariant] = (),
            runtimes: list[str] = (), readers: int = 1) -> list[Arm]:
    """An arm per profile, or per profile and crypto variant where the profile protects
    something (`no_protection` has nothing a cipher could change); `none`, then the A/A
    arm. Each variant arm is paired with the same round's `none` slots like any other.
    A version axis (`runtimes`: the other installs' tags) adds every profile again on each
    other install, `none` included, as `PROFILE@TAG`: paired with the baseline's `none`
    slots like any other arm, so every round holds both installs' slots.
    At `readers` > 1 every arm's pairs have that many readers and its name says so
    (`PROFILE@Nreaders`); not with a version axis (a name `P@TAG@Nreaders` no pairing
    reads: results.versions pairs `P@TAG` with `none@TAG` by name)."""
    if runtimes and readers != 1:
        raise GovkitError(f"--readers {readers}: not with a version axis; measure the "
                          f"readers axis and the versions in runs of their own")
    arms = [Arm(f"{p.name}@{v.name}", p, v) if variants and protects(p)
            else Arm(readers_arm(p.name, readers), p, readers=readers)
            for p in profiles for v in (variants if variants and protects(p) else [None])]
    arms += [Arm(f"{p.name}@{tag}", p, runtime=tag) for tag in runtimes for p in profiles]
    base = next((p for p in profiles if p.name == BASELINE_ARM), None)
    if base is None:
        raise GovkitError("the rotating latency design pairs every profile with `none`: add "
                          "--profile none (or use --all-profiles)")
    if aa:
        arms.append(Arm(readers_arm(AA_ARM, readers), base, readers=readers))
    return arms


def baseline_instances(arms: list[Arm], instances: int) -> int:
    """How many process pairs `none` gets: as many per other arm as each arm has, so that a
    `none` pair takes part in as few slots as any other pair. `none` has a slot beside every
    other arm's; with the arms' count it took several slots per lane and round where an
    arm's pair took one every few rounds, and a pair kept that busy reads slower: at 32 B
    its throughput was 6-8 % below the A/A arm's, two identical `none` arms (2026-12-04)."""
    return instances * max(1, len([a for a in arms if not a.is_baseline]))


def round_plan(arms: list[Arm], lanes: list[tuple[str, int]], instances: int, seed: int,
               rnd: int, active: set[tuple[str, str, int]] | None = None
               ) -> list[tuple[tuple[str, int], list[tuple[Arm, int]]]]:
    """Round `rnd`: per lane (mode, size; in this round's own order) the slot sequence
    `none X1 none X2 … none`, the other arms shuffled, each arm's instance (of `instances`)
    taken in turn and `none`'s (of baseline_instances) alternating inside the round, so
    every comparison has both of them.
    `active` (arm, mode, size): only these arms get slots (the A/A arm whenever its lane has
    any other), so rounds after the minimum go to the intervals still wider than the target;
    a lane where only the A/A arm is still wide gets `none A/A none` (a run stopped at round
    20 with budget left and a wide A/A arm, then advised a larger budget: issue 37)."""
    rand = random.Random(f"govkit/{seed}/rotation/{rnd}")
    base_n = baseline_instances(arms, instances)
    order = list(lanes)
    rand.shuffle(order)
    base = next(a for a in arms if a.is_baseline)
    plan = []
    for lane in order:
        others = [a for a in arms if not a.is_baseline]
        if active is not None:
            wanted = {a.name for a in others if (a.name, *lane) in active}
            if not wanted:
                continue
            others = [a for a in others if a.name in wanted
                      or a.name == readers_arm(AA_ARM, a.readers)]
        rand.shuffle(others)
        seq: list[tuple[Arm, int]] = []
        n0 = rand.randrange(base_n)
        for i, arm in enumerate(others):
            seq.append((base, (n0 + i) % base_n))
            seq.append((arm, (rnd + arms.index(arm)) % instances))
        seq.append((base, (n0 + len(others)) % base_n))
        plan.append((lane, seq))
    return plan


# ------------------------------------------------------------------------------- run

@dataclass
class RotationOutcome:
    rounds: int = 0
    failed: int = 0
    interrupted: bool = False
    notes: list[str] = field(default_factory=list)


def run_rotation(ctx: RunContext, arms: list[Arm], lanes: list[tuple[str, int]],
                 counted_from: int = 0) -> RotationOutcome:
    """Start every pair, then rounds until every ratio is within the target (after the
    minimum) or the budget would be passed; every slot goes to the store as it completes.
    `counted_from`: the round the minimum counts from (a later readers count of the run,
    govkit.bench.schedule, starts its own minimum after the rounds of the counts before)."""
    rs, store = ctx.opts.rotation, ctx.store
    outcome = RotationOutcome()
    rot = store.rotation()
    first_round = rot["next_round"]
    names = {a.name for a in arms}
    pairs: dict[tuple[str, int], Pair] = {}
    try:
        pairs = start_pairs(ctx, arms, outcome)
        warm = warm_up(pairs, lanes, outcome, ctx)
        readers = arms[0].readers
        offered = offered_rates(rot["settings"], lanes, warm, readers)
        outcome.notes += [v for k, v in rot["settings"].get("cpu_offered_rate_lowered",
                                                             {}).items()
                          if _kept_key(k, readers) is not None]
        lengths = measure_lengths(rot["settings"], lanes, warm, offered, rs, readers)
        ctx.load.start()
        last_round_s = None
        rnd = first_round
        active = None
        widths_at = float("-inf")
        forecast_said = False       # govkit.bench.forecast: said once, when it can be
        while rnd < first_round + rs.max_rounds:
            # rounds of the whole run: a resumed run counts the stored ones too (it ran its
            # minimum again and said "after 3 rounds" of a run of 6, issue 37)
            done = rnd - counted_from
            if done >= rs.min_rounds:
                # the widths (a bootstrap per arm, ~0.2 s in all) once per WIDTHS_EVERY_S of
                # rounds, not after every round: late rounds of 30 ms slots are shorter
                if time.monotonic() - widths_at >= WIDTHS_EVERY_S:
                    # this rotation's arms only (another readers count's were before)
                    widths = {k: w for k, w in stopping_widths(store).items()
                              if k[0] in names}
                    widths_at = time.monotonic()
                active = active_lanes(widths, rs.target_ci)
                if not forecast_said:
                    forecast_said = warn_late(ctx, widths, lengths, first_round, done)
                if widths and all(w is not None and w <= rs.target_ci for w in widths.values()):
                    outcome.notes.append(f"every ratio within ±{rs.target_ci:g}% after "
                                         f"{done} rounds" + (
                                             " (before the run-to-run term, which more "
                                             "rounds cannot narrow)"
                                             if any(k for _, k in rs.rerun_kappa
                                                    + rs.rerun_floor) else ""))
                    break
                if last_round_s and ctx.passes_budget(last_round_s):
                    outcome.notes.append(budget_stop_note(store.doc, store.summarizer, done,
                                                          ctx.budget))
                    break
            t0 = time.monotonic()
            plan = round_plan(arms, lanes, rs.instances, ctx.seed, rnd, active)
            if not plan:
                outcome.notes.append(f"no interval left to narrow after {done} rounds")
                break
            cpu_before = read_pairs(pairs)      # the idle-pair watchdog's first reading
            used: set[tuple[str, int]] = set()
            for (mode, size), seq in plan:
                rows = []
                for position, (arm, k) in enumerate(seq):
                    pair = _pick(pairs, arm, rot["next_instance"] + k,
                                 instances_of(arm, arms, rs), rot["next_instance"])
                    if pair is None:
                        continue
                    used.add((pair.name, pair.instance))
                    base = {"round": rnd, "position": position, "arm": arm.name,
                            "profile": arm.profile.name, "instance": pair.instance,
                            "size": size, "mode": mode, **arm.to_json()}
                    if arm.readers != 1:
                        base["readers"] = arm.readers
                    try:
                        row = measure_slot(pair, (mode, size), rs.settle_ms * 1000,
                                           lengths[(mode, size)], offered.get(size))
                    except PairFailed as e:
                        rows.append({**base, "status": "failed", "error": str(e)})
                        _drop(pairs, pair, e, outcome, ctx)
                        continue
                    rows.append({**base, **row,
                                 "status": slot_status(mode, row, arm.readers)})
                store.add_slots(rows)
            last_round_s = time.monotonic() - t0
            stop_idle_burners(pairs, cpu_before, set(pairs) - used, last_round_s, outcome,
                              ctx)
            store.finish_round(rnd, last_round_s)
            outcome.rounds += 1
            # a line per round (also when piped: stderr, no live display), with the budget
            # as the bound on what is left
            ctx.say(f"round {rnd}: {last_round_s:.1f} s " + ctx.budget_note(), style="dim")
            rnd += 1
            if not pairs:
                outcome.notes.append("every process pair failed; nothing more to measure")
                break
        else:
            # the round cap: said, never met in silence (issue 42)
            outcome.notes.append(cap_note(rs.max_rounds, stopping_widths(store),
                                          rs.target_ci))
    except KeyboardInterrupt:
        outcome.interrupted = True
    finally:
        for pair in pairs.values():
            pair.close()
        store.set_load(ctx.load.finish())
    return outcome


def start_pairs(ctx: RunContext, arms: list[Arm], outcome: RotationOutcome
                ) -> dict[tuple[str, int], Pair]:
    """Every arm's pairs, each on a domain of its own, started and matched one after the
    other (a pair that fails to start is recorded and left out); their configuration files
    are the per-repeat ones, written once per profile."""
    store, pin = ctx.store, ctx.pin
    first_instance = store.rotation()["next_instance"]
    for arm in arms:
        runner = ctx.runner_of(arm.runtime)
        for path, text in runner.configs(BenchPoint(arm.profile, "latency", 32, 1),
                                         ctx.bundle(arm.profile),
                                         ctx.workdir_of(arm.runtime)).items():
            write_atomic(path, text)
    domains = pair_domains(arms, ctx.opts.rotation, ctx.console)
    pairs: dict[tuple[str, int], Pair] = {}
    for arm in arms:
        runner = ctx.runner_of(arm.runtime)
        for i, domain in enumerate(domains[arm.name]):
            request = PairRequest(arm.name, arm.label, first_instance + i, pin.cpus,
                                  pin.realtime, ctx.workdir_of(arm.runtime), arm.variant,
                                  arm.readers)
            ctx.say(f"starting {arm.label} pair {request.instance} (domain {domain})",
                    style="dim")
            record = {"arm": arm.name, "profile": arm.profile.name,
                      "instance": request.instance, "domain_id": domain, **arm.to_json(),
                      **({"readers": arm.readers} if arm.readers != 1 else {}),
                      "started": datetime.now(UTC).isoformat(timespec="seconds")}
            try:
                pair = runner.ready_pair(ctx.bundle(arm.profile), domain, request)
            except PairFailed as e:
                outcome.failed += 1
                store.add_pair({**record, "commands": e.commands, "status": "failed",
                                "error": str(e)})
                ctx.say(f"FAILED {e}")
                continue
            record["commands"] = pair.commands()
            pairs[(arm.name, pair.instance)] = pair
            store.add_pair({**record, "status": "ok", "placement": pair.placement(),
                            "time_to_match_s": pair.ready_s.get("pub"),
                            "pong_time_to_match_s": pair.ready_s.get("sub"),
                            "start_to_ready_s": round(pair.start_to_ready_s, 4)})
    return pairs


def pair_domains(arms: list[Arm], rs: RotationSettings, console) -> dict[str, list[int]]:
    """Each arm's pairs' domains, all distinct; a governance file's arm first, on the ids
    it allows, with fewer pairs where it allows fewer (said; the rounds take the pairs
    there are). GovkitError (exit 2) when another arm of the same file took them all."""
    taken: set[int] = set()
    found: dict[str, list[int]] = {}
    for arm in sorted(arms, key=lambda a: a.profile.domain_ids is None):
        want = instances_of(arm, arms, rs)
        usable = usable_domains(arm.profile)
        if arm.profile.domain_ids is not None:
            free = [d for d in usable if d not in taken]
            allowed = domain_ids_text(arm.profile.domain_ids)
            if not free:
                raise GovkitError(f"{arm.label}: its governance allows domain {allowed} only, "
                                  "already taken by another arm of this run (one pair per "
                                  "domain): measure one --cipher/--rekey variant at a time, "
                                  "or allow more domains in the file", EXIT_USAGE)
            if len(free) < want:
                console.print(f"{arm.label}: its governance allows domain {allowed}: "
                              f"{len(free)} process pair(s), not {want}", markup=False,
                              highlight=False)
                want = len(free)
        found[arm.name] = distinct_domains(want, taken, usable)
        taken.update(found[arm.name])
    return found


def instances_of(arm: Arm, arms: list[Arm], rs: RotationSettings) -> int:
    """An arm's process pairs: --instances, `none` more (baseline_instances)."""
    return baseline_instances(arms, rs.instances) if arm.is_baseline \
        else rs.instances


def warm_up(pairs: dict[tuple[str, int], Pair], lanes: list[tuple[str, int]],
            outcome: RotationOutcome, ctx: RunContext) -> dict[tuple[str, int], list[dict]]:
    """One unmeasured slot per pair and lane before round 0 (first-use costs out of the
    way); per lane, the warm-up rows (their round trips and rates size the slots and pace
    the CPU slots: measure_lengths, offered_rates)."""
    rows: dict[tuple[str, int], list[dict]] = {}
    for pair in list(pairs.values()):
        for mode, size in lanes:
            if mode == CPU:
                continue            # its rate comes from the throughput warm-ups
            try:
                row = measure_slot(pair, (mode, size), 0, WARMUP_SLOT_US)
            except PairFailed as e:
                _drop(pairs, pair, e, outcome, ctx)
                break
            rows.setdefault((mode, size), []).append(row)
    return rows


def readers_key(key: str, readers: int) -> str:
    """A key of the rotation's kept settings (a size, `mode/size`) at `readers` readers:
    as it always was at 1, `KEY@Nreaders` above (slots at N readers are longer, and the
    rate every arm sustains is lower)."""
    return readers_arm(key, readers)


def _kept_key(key: str, readers: int) -> str | None:
    """The key at 1 reader of a kept setting's `key` if it is at `readers`, else None."""
    head, n = split_readers_arm(key)
    return head if n == readers else None


def offered_rates(settings: dict, lanes: list[tuple[str, int]],
                  warm: dict[tuple[str, int], list[dict]], readers: int = 1
                  ) -> dict[int, float]:
    """Per size of a CPU lane, the fixed rate every arm's paced slots offer: the size's
    fixed rate (govkit.bench.defaults.cpu_rate), the same in every run and on every machine
    fast enough for it; where CPU_LOAD_SHARE of the slowest warm-up rate of any arm at that
    size is below it (the heaviest profile would saturate), the 1-2-5 step below that
    share instead, said in `cpu_offered_rate_lowered`. Kept in the rotation's settings, so
    a resumed run offers the same."""
    kept = settings.setdefault("cpu_offered_rate_sps", {})
    for mode, size in lanes:
        if mode != CPU or readers_key(str(size), readers) in kept:
            continue
        rates = [r["rate_sps"] for r in warm.get((THROUGHPUT, size), []) if r.get("rate_sps")]
        if not rates:
            raise GovkitError(f"no pair reached any throughput at {size} B in its warm-up: "
                              "nothing to pace the CPU slots by")
        rate = cpu_rate(size)
        room = CPU_LOAD_SHARE * min(rates)
        if room < rate:
            lowered = step_at_or_below(room)
            settings.setdefault("cpu_offered_rate_lowered", {})[
                readers_key(str(size), readers)] = (
                f"CPU slots at {size} B offer {lowered:,.0f} samples/s, not the usual "
                f"{rate:,.0f}: the slowest arm reached {min(rates):,.0f} in its warm-up "
                "(CPU per sample depends on the rate: compare runs at the same one)")
            rate = lowered
        kept[readers_key(str(size), readers)] = float(rate)
    return {int(head): v for head, v in ((_kept_key(k, readers), v) for k, v in kept.items())
            if head is not None}


def measure_lengths(settings: dict, lanes: list[tuple[str, int]],
                    warm: dict[tuple[str, int], list[dict]], offered: dict[int, float],
                    rs: RotationSettings, readers: int = 1) -> dict[tuple[str, int], int]:
    """Per lane, its slots' measured µs: the mode's slot length (--slot-ms; throughput and
    CPU slots their own minimum), longer where that would hold too few samples for the
    slot's figure (a 4 MiB round trip takes ~10 ms): at least MIN_SLOT_SAMPLES of the
    mode, from the slowest warm-up (round trip, rate) or the offered rate, up to
    MAX_SLOT_US. Kept in the rotation's settings, so a resumed run's slots are alike."""
    kept = settings.setdefault("measure_us", {})
    for mode, size in lanes:
        key = readers_key(f"{mode}/{size}", readers)
        if key in kept:
            continue
        rows = warm.get((mode, size), [])
        if mode == LATENCY:
            base = rs.slot_ms * 1000
            per = 2 * max((r["p50"] for r in rows if r.get("p50")), default=0)  # round trip
        elif mode == THROUGHPUT:
            base = rs.throughput_slot_ms * 1000
            rate = min((r["rate_sps"] for r in rows if r.get("rate_sps")), default=0)
            per = 1e6 / rate if rate else 0
        else:
            base = rs.cpu_slot_ms * 1000
            per = 1e6 / offered[size] if offered.get(size) else 0
        kept[key] = int(min(MAX_SLOT_US, max(base, MIN_SLOT_SAMPLES[mode] * per)))
    return {(m, s): kept[readers_key(f"{m}/{s}", readers)] for m, s in lanes}


def measure_slot(pair: Pair, lane: tuple[str, int], settle_us: int, measure_us: int,
                 offered: float | None = None) -> dict:
    """One slot of the lane (mode, size) on `pair`, `settle_us` then `measure_us` long,
    under the policy the pair runs that mode with (govkit.runners.pair); a CPU slot paced
    at `offered` samples/s."""
    mode, size = lane
    if mode == LATENCY:
        return pair.slot(size, settle_us, measure_us)
    row = pair.tslot(size, settle_us, measure_us, offered if mode == CPU else 0)
    if mode == CPU:
        written = row.get("sent", 0) + row.get("settle_sent", 0)
        row.update(mode=CPU, offered_rate_sps=offered, **cpu_per_sample(row, written))
    return row


def cpu_per_sample(row: dict, written: int) -> dict:
    """A CPU slot's µs of CPU per sample written, each side and both (the slot's whole CPU
    time over its whole count: settle time and end included)."""
    if not written:
        return {"cpu_us_per_sample": 0.0}
    ping, pong = row.get("cpu_us", 0) / written, row.get("pong_cpu_us", 0) / written
    return {"ping_us_per_sample": round(ping, 4), "pong_us_per_sample": round(pong, 4),
            "cpu_us_per_sample": round(ping + pong, 4)}


def slot_status(mode: str, row: dict, readers: int = 1) -> str:
    """ok, foreign_participant (a stranger matched on the pair's domain: ping matched more
    peers than the pair's `readers`), no_samples, or (a CPU slot) saturated: it delivered
    less than CPU_DELIVERED of the offered rate, so its CPU per sample is not at the rate
    the others had."""
    if row.get("peers", 1) > readers:
        return "foreign_participant"
    if not row.get("n") or (mode != LATENCY and not row.get("rate_sps")):
        return "no_samples"
    if mode == CPU and row["rate_sps"] < CPU_DELIVERED * row["offered_rate_sps"]:
        return "saturated"
    return "ok"


def stopping_widths(store) -> dict[tuple[str, str, int], float | None]:
    """The ratio half-widths the stopping rule reads: every arm of every mode, CPU per
    sample's too (its lane stops on its own width: at a fixed rate it reaches the target
    in about 20 rounds where throughput needs far more, and each CPU round took a third of
    the throughput lanes' time, 2026-12-05)."""
    from govkit.results.summary import rotation_widths  # the summary's bootstrap (numpy)

    widths = rotation_widths(store.run(), store.summarizer)
    return trusted_widths(widths, store.doc["rotation"]["slots"])


def active_lanes(widths: dict[tuple[str, str, int], float | None], target: float
                 ) -> set[tuple[str, str, int]]:
    """(arm, mode, size) still wider than the target (or not known yet)."""
    return {k for k, w in widths.items() if w is None or w > target}


def budget_stop_note(doc: dict, summarizer, done: int, budget: float) -> str:
    """What a run the budget stopped says of its widest ratio interval: recomputed over
    every round, as the summary and report compute it (the stopping rule's widths are up to
    WIDTHS_EVERY_S old: a run of 0.2 s rounds said ±2.4% where its report said ±2.3%)."""
    from govkit.results.summary import rotation_widths

    widths = trusted_widths(rotation_widths(doc, summarizer, narrowable=False),
                            doc["rotation"]["slots"])
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


def stop_idle_burners(pairs: dict, before: dict, idle: set, wall_s: float,
                      outcome: RotationOutcome, ctx: RunContext) -> None:
    """The idle-pair watchdog (govkit.bench.watchdog): a pair that ran no slot this round
    yet burnt CPU is stopped, counted failed, and the run goes on."""
    idle = {k for k in idle if k in pairs}
    if not idle:
        return
    burners = idle_burners(before, read_pairs({k: pairs[k] for k in idle}), idle, wall_s)
    for key, message in burners.items():
        pair = pairs[key]
        error = PairFailed(f"{pair.label} pair {pair.instance} (domain {pair.domain_id}) "
                           f"{message}")
        outcome.notes.append(f"watchdog: {error}")
        stop(pair)
        _drop(pairs, pair, error, outcome, ctx)


def _drop(pairs: dict, pair: Pair, error: Exception, outcome: RotationOutcome,
          ctx: RunContext) -> None:
    outcome.failed += 1
    ctx.say(f"FAILED {error}; this pair is stopped, the run goes on")
    pairs.pop((pair.name, pair.instance), None)
    pair.close()
