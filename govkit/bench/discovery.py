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
from pathlib import Path

from govkit.bench.defaults import DEFAULT_PEERS, budget_note
from govkit.bench.domains import random_domain
from govkit.bench.rotation import Arm, round_plan
from govkit.catalog.profiles import BASELINE, Profile
from govkit.common.errors import GovkitError
from govkit.common.fsutil import write_atomic
from govkit.runners.base import BenchPoint, Bundle, command_line
from govkit.runners.group import run_group

MAX_PEERS = 100
DISCOVERY_INTERVAL_METHOD = (
    "discovery: the time to full discovery, 95% percentile bootstrap of the median over the "
    "groups; the ratio over none, the paired rounds' bootstrap (govkit.results.paired); "
    "2000 resamples seeded by the profile's name.")
WAIT_S = 60.0                   # a group not matched by then has failed


@dataclass(frozen=True)
class DiscoverySettings:
    peers: int = DEFAULT_PEERS
    min_rounds: int = 3

    def check(self) -> None:
        if not 2 <= self.peers <= MAX_PEERS:
            raise GovkitError(f"--peers {self.peers} is out of range (2 .. {MAX_PEERS})")

    def to_json(self) -> dict:
        return {"peers": self.peers, "min_rounds": self.min_rounds, "wait_s": WAIT_S}


@dataclass
class DiscoveryOutcome:
    failed: int = 0
    interrupted: bool = False
    notes: list[str] = field(default_factory=list)


def run_discovery(runner, profiles: list[Profile], bundles: dict[str, Bundle],
                  ds: DiscoverySettings, store, seed: int, console, started: float,
                  budget: float, workdir: Path) -> DiscoveryOutcome:
    """Rounds of groups until the budget (after the minimum); every group goes to `store`
    as it completes."""
    arms = [Arm(p.name, p) for p in profiles]
    if not any(p.name == BASELINE for p in profiles):
        raise GovkitError("--mode discovery pairs every profile with `none`: add --profile "
                          "none (or use --all-profiles)")
    section = store.doc.setdefault("discovery", {"settings": ds.to_json(), "groups": []})
    section["settings"] = ds.to_json()
    for arm in arms:            # the participants' configuration files, once per profile
        for path, text in runner.configs(BenchPoint(arm.profile, "latency", 32, 1),
                                         bundles[arm.profile.name], workdir).items():
            write_atomic(path, text)
    outcome = DiscoveryOutcome()
    first = max((g["round"] for g in section["groups"]), default=-1) + 1
    rnd, last_round_s = first, None
    console.print(f"discovery: groups of {ds.peers} participants, none X none Y … per round; "
                  f"at least {ds.min_rounds} rounds, then until the {budget:.0f} s budget",
                  style="dim", markup=False, highlight=False)
    try:
        while _another_round(rnd - first, ds, started, last_round_s, budget):
            t0 = time.monotonic()
            _round(runner, arms, bundles, ds, store, seed, rnd, workdir, console, outcome)
            last_round_s = time.monotonic() - t0
            console.print(f"discovery round {rnd}: {last_round_s:.1f} s "
                          + budget_note(time.monotonic() - started, budget),
                          style="dim", markup=False, highlight=False)
            rnd += 1
    except KeyboardInterrupt:
        outcome.interrupted = True
    outcome.notes.append(f"discovery: {rnd - first} round(s) of groups of {ds.peers} "
                         "participants")
    return outcome


def _another_round(done: int, ds: DiscoverySettings, started: float,
                   last_round_s: float | None, budget: float) -> bool:
    if done < ds.min_rounds:
        return True
    return last_round_s is not None and time.monotonic() - started + last_round_s <= budget


def _round(runner, arms, bundles, ds, store, seed, rnd, workdir, console, outcome) -> None:
    section = store.doc["discovery"]
    for _, seq in round_plan(arms, [("discovery", ds.peers)], 1, seed, rnd):
        for position, (arm, _) in enumerate(seq):
            domain = random_domain(arm.profile)
            specs = runner.discovery_specs(bundles[arm.profile.name], domain, ds.peers,
                                           WAIT_S, workdir)
            record = {"round": rnd, "position": position, "arm": arm.name,
                      "profile": arm.profile.name, "peers": ds.peers, "domain_id": domain,
                      "command": command_line(specs[0]),
                      "started": datetime.now(UTC).isoformat(timespec="seconds"),
                      **run_group(specs, WAIT_S)}
            if record["status"] != "ok":
                outcome.failed += 1
                console.print(f"FAILED discovery {arm.label} round {rnd}: {record['error']}",
                              markup=False, highlight=False)
            section["groups"].append(record)
        store.save()
