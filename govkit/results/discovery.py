"""Discovery figures (`govkit bench --mode discovery`), recomputed from results.json's raw
groups like every other figure.

Per group of N participants started together, its *time to full discovery* is the largest
of the participants' times to match every other one (from before each participant's
creation; secure handshakes included); also kept: the median and the smallest participant
time. Per profile: the median over its groups with a 95 % bootstrap interval, and its
ratio over `none` paired by round exactly as the rotating latency design pairs its slots
(each group sits between two `none` groups of the same round; govkit.results.paired).

Each profile's figures are one row of results.json's `summary` (mode `discovery`, shaped
like every other point's row: estimate, ci95, repeats = groups, vs_none, flags), the one
place the terminal's table, report.html and summary.md read them from (issue 37, item 9:
the summary of a discovery run was empty and the terminal computed its own).
"""

from __future__ import annotations

import statistics

from govkit.catalog.measures import DISCOVERY
from govkit.catalog.profiles import BASELINE, PROFILES
from govkit.results import paired, stats
from govkit.results.record import DiscoveryGroup, Run, Slot
from govkit.runners.network import DEFAULT

STATISTIC = ("median over groups of the time until every participant had matched every "
             "other (s)")


def _as_slot(group: DiscoveryGroup) -> Slot:
    """A group as govkit.results.paired reads a slot (its value as a latency slot's)."""
    return Slot(group.round, group.position, group.arm, group.profile, 0, group.peers,
                status=group.status, p50=max(group.matched_s) if group.ok else None)


def discovery_rows(run: Run) -> list[dict]:
    """One summary row per profile of a discovery run (summary.summarize adds them)."""
    groups = run.discovery_groups
    if not groups:
        return []
    slots = [_as_slot(g) for g in groups]
    overheads = paired.pairings(slots)
    order = {p.name: i for i, p in enumerate(PROFILES)}
    rows = []
    for profile in sorted({g.profile for g in groups}, key=lambda n: (order.get(n, 99), n)):
        mine = [g for g in groups if g.profile == profile]
        ok = [g for g in mine if g.ok]
        peers = mine[0].peers
        # no payload is sent: a row's `size` is None, its group size is `peers`
        row = {"profile": profile, "mode": DISCOVERY, "size": None, **DEFAULT.to_json(),
               "peers": peers, "statistic": STATISTIC, "unit": "s",
               "estimate": None, "ci95": None, "ci_halfwidth_pct": None,
               "repeats": len(ok), "failed_repeats": len(mine) - len(ok), "seconds": None,
               "repeat_estimates": [max(g.matched_s) for g in ok],
               "groups": len(ok), "failed_groups": len(mine) - len(ok),
               "all_matched_s": None, "median_participant_s": None,
               "first_participant_s": None, "vs_none": None, "rti": None,
               "vs_network": None, "flags": [],
               "errors": sorted({g.error for g in mine if not g.ok})}
        if ok:
            value, ci = paired.level([_as_slot(g) for g in ok],
                                     f"govkit/discovery/{profile}")
            row.update(estimate=value, all_matched_s=value, ci95=list(ci) if ci else None,
                       ci_halfwidth_pct=stats.Estimate(value, ci, []).halfwidth_pct,
                       median_participant_s=statistics.median(
                           statistics.median(g.matched_s) for g in ok),
                       first_participant_s=statistics.median(min(g.matched_s) for g in ok))
        pairs = overheads.get((profile, peers))
        if profile != BASELINE and pairs:
            row["vs_none"] = paired.overhead(pairs, f"govkit/discovery/{profile}").to_json()
        rows.append(row)
    return rows
