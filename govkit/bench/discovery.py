"""Discovery by profile (`govkit bench --mode discovery --peers N`): how long N participants
started together take until each has matched every other one's endpoints, the secure
handshakes included (RTI publishes the same figure for Connext: time to complete discovery
of 50-400 participants, with and without security).

Each *group* is N fresh `cyclone_perf discover` processes on a domain of their own; each
prints when its writer and reader have matched the other N - 1 participants (seconds from
before its participant's creation). Groups run in rounds laid out like the rotating latency
design (`none X1 none X2 … none`, a fresh seeded order per round), so every profile's group
has a `none` group just before and after it, and govkit.results.discovery pairs them.
Rounds go on until the budget would be passed (at least --rounds of them).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from govkit.bench.context import RunContext
from govkit.bench.domains import random_domain
from govkit.bench.options import DISCOVERY_WAIT_S, DiscoverySettings
from govkit.bench.rotation import Arm, round_plan
from govkit.catalog.profiles import BASELINE
from govkit.common.errors import GovkitError
from govkit.common.fsutil import write_atomic
from govkit.runners.base import BenchPoint
from govkit.runners.group import run_group
from govkit.runners.processes import command_line

DISCOVERY_INTERVAL_METHOD = (
    "discovery: the time to full discovery, 95% percentile bootstrap of the median over the "
    "groups; the ratio over none, the paired rounds' bootstrap (govkit.results.paired); "
    "2000 resamples seeded by the profile's name.")


@dataclass
class DiscoveryOutcome:
    failed: int = 0
    interrupted: bool = False
    notes: list[str] = field(default_factory=list)


def run_discovery(ctx: RunContext) -> DiscoveryOutcome:
    """Rounds of groups until the budget (after the minimum); every group goes to the store
    as it completes."""
    ds, store = ctx.opts.discovery, ctx.store
    arms = [Arm(p.name, p) for p in ctx.opts.profiles]
    if not any(p.name == BASELINE for p in ctx.opts.profiles):
        raise GovkitError("--mode discovery pairs every profile with `none`: add --profile "
                          "none (or use --all-profiles)")
    section = store.doc.setdefault("discovery", {"settings": ds.to_json(), "groups": []})
    section["settings"] = ds.to_json()
    for arm in arms:            # the participants' configuration files, once per profile
        for path, text in ctx.runner.configs(BenchPoint(arm.profile, "latency", 32, 1),
                                             ctx.bundle(arm.profile), ctx.workdir).items():
            write_atomic(path, text)
    outcome = DiscoveryOutcome()
    first = max((g["round"] for g in section["groups"]), default=-1) + 1
    rnd, last_round_s = first, None
    ctx.say(f"discovery: groups of {ds.peers} participants, none X none Y … per round; "
            f"at least {ds.min_rounds} rounds, then until the {ctx.budget:.0f} s budget",
            style="dim")
    try:
        while _another_round(ctx, ds, rnd - first, last_round_s):
            t0 = time.monotonic()
            _round(ctx, arms, rnd, outcome)
            last_round_s = time.monotonic() - t0
            ctx.say(f"discovery round {rnd}: {last_round_s:.1f} s " + ctx.budget_note(),
                    style="dim")
            rnd += 1
    except KeyboardInterrupt:
        outcome.interrupted = True
    outcome.notes.append(f"discovery: {rnd - first} round(s) of groups of {ds.peers} "
                         "participants")
    return outcome


def _another_round(ctx: RunContext, ds: DiscoverySettings, done: int,
                   last_round_s: float | None) -> bool:
    if done < ds.min_rounds:
        return True
    return last_round_s is not None and not ctx.passes_budget(last_round_s)


def _round(ctx: RunContext, arms: list[Arm], rnd: int, outcome: DiscoveryOutcome) -> None:
    section = ctx.store.doc["discovery"]
    peers = ctx.opts.discovery.peers
    for _, seq in round_plan(arms, [("discovery", peers)], 1, ctx.seed, rnd):
        for position, (arm, _) in enumerate(seq):
            domain = random_domain(arm.profile)
            specs = ctx.runner.discovery_specs(ctx.bundle(arm.profile), domain, peers,
                                               DISCOVERY_WAIT_S, ctx.workdir)
            record = {"round": rnd, "position": position, "arm": arm.name,
                      "profile": arm.profile.name, "peers": peers, "domain_id": domain,
                      "command": command_line(specs[0]),
                      "started": datetime.now(UTC).isoformat(timespec="seconds"),
                      **run_group(specs, DISCOVERY_WAIT_S)}
            if record["status"] != "ok":
                outcome.failed += 1
                ctx.say(f"FAILED discovery {arm.label} round {rnd}: {record['error']}")
            section["groups"].append(record)
        ctx.store.save()
