"""Discovery figures (`govkit bench --mode discovery`), recomputed from results.json's raw
groups like every other figure.

Per group of N participants started together, its *time to full discovery* is the largest
of the participants' times to match every other one (from before each participant's
creation; secure handshakes included); also kept: the median and the smallest participant
time. Per profile: the median over its groups with a 95 % bootstrap interval, and its
ratio over `none` paired by round exactly as the rotating latency design pairs its slots
(each group sits between two `none` groups of the same round; govkit.results.paired).
"""

from __future__ import annotations

import statistics

from govkit.catalog.profiles import BASELINE, PROFILES
from govkit.results import paired

STATISTIC = ("median over groups of the time until every participant had matched every "
             "other (s)")


def _as_slot(group: dict) -> dict:
    """A group as govkit.results.paired reads a slot (its value under `p50`)."""
    return {"round": group["round"], "position": group["position"], "arm": group["arm"],
            "instance": 0, "size": group["peers"], "status": group["status"],
            "p50": max(group["matched_s"]) if group["status"] == "ok" else None}


def discovery_rows(doc: dict) -> list[dict]:
    section = doc.get("discovery") or {}
    groups = section.get("groups") or []
    if not groups:
        return []
    slots = [_as_slot(g) for g in groups]
    overheads = paired.pairings(slots)
    order = {p.name: i for i, p in enumerate(PROFILES)}
    rows = []
    for profile in sorted({g["profile"] for g in groups}, key=lambda n: (order.get(n, 99), n)):
        mine = [g for g in groups if g["profile"] == profile]
        ok = [g for g in mine if g["status"] == "ok"]
        row = {"profile": profile, "peers": mine[0]["peers"], "groups": len(ok),
               "failed_groups": len(mine) - len(ok), "statistic": STATISTIC,
               "all_matched_s": None, "ci95": None, "median_participant_s": None,
               "first_participant_s": None, "vs_none": None,
               "errors": sorted({g.get("error", "") for g in mine if g["status"] != "ok"})}
        if ok:
            value, ci = paired.level([_as_slot(g) for g in ok],
                                     f"govkit/discovery/{profile}")
            row.update(all_matched_s=value, ci95=list(ci) if ci else None,
                       median_participant_s=statistics.median(
                           statistics.median(g["matched_s"]) for g in ok),
                       first_participant_s=statistics.median(min(g["matched_s"]) for g in ok))
        pairs = overheads.get((profile, row["peers"]))
        if profile != BASELINE and pairs:
            row["vs_none"] = paired.overhead(pairs, f"govkit/discovery/{profile}").to_json()
        rows.append(row)
    return rows
