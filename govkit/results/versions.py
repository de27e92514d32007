"""The version axis: what each protection costs on two installs of one runtime (Cyclone DDS
0.10 and 11, say), measured in one rotating run.

`govkit bench --runner cyclone@/usr,cyclone@PREFIX` (govkit.runners.dds_prefix) runs every
profile on both installs in the same rounds (govkit.bench.rotation): the baseline's arms are
named after their profiles, the other install's `PROFILE@TAG` (TAG its version, from
settings.runtimes). Every arm's slot sits between two of the baseline's `none` slots, so
within a round both installs meet the same regime of the machine, and:

- the baseline's overhead of P is P's arm over the baseline's `none`, as in any run;
- the other's is `P@TAG` over `none@TAG`, paired by round (paired.contrast_pairings): per
  round the difference of the two arms' log ratios over their own `none` neighbours; the
  summary row of `P@TAG` carries it as its `vs_none` (`versus_own_none`), so every table,
  flag and gate reads it against its own install's `none`;
- between the installs: the ratio of those two overheads (TAG's over the baseline's), paired
  by round the same way, and the ratio of the two `none` baselines (`none@TAG`'s own row).

Each with the same trimmed mean and hierarchical bootstrap as every paired figure
(govkit.results.paired). `version_rows` is results.json's `versions` table, recomputed at
every save and by `govkit report`; the terminal, report.html and summary.md print its rows
and flags as stored.
"""

from __future__ import annotations

from dataclasses import replace

from govkit.catalog.profiles import BASELINE
from govkit.results import paired
from govkit.results.flags import flag

VERSUS = (
    "per round, the ratio of the two installs' overheads (each profile's slot over its own "
    "install's `none` slot, both over the baseline's adjacent `none` slots): the 20% "
    "trimmed mean of the per-round log differences, exponentiated, with the paired "
    "bootstrap interval; the `none` row is the other install's `none` over the baseline's")


def runtime_tags(settings: dict) -> list[str]:
    """A version axis's tags, the baseline's first (settings.runtimes); [] for one install."""
    return [r.get("tag") for r in settings.get("runtimes") or []]


def own_none(arm: str, tags: list[str]) -> str | None:
    """`none@TAG` for a version axis's arm `P@TAG` (P not `none`, TAG one of the axis's
    `tags`); else None (a crypto variant's arm `P@aes128` has no `none@aes128`)."""
    profile, at, tag = arm.partition("@")
    if not at or profile == BASELINE or tag not in tags:
        return None
    return f"{BASELINE}@{tag}"


def versus_own_none(arms: list[tuple], terms: dict, tags: list[str]) -> list[tuple]:
    """govkit.results.summary.rotation_overheads' (mode, arm, size, pairings) with each
    version axis arm's pairings made against its own install's `none` (contrast_pairings),
    and the instance term it is estimated with: the reference's instances in place of the
    baseline `none`'s. Returns (mode, arm, size, pairings, term) per arm; an arm whose own
    `none` has no paired round is left out (no overhead: never one over the other
    install's `none` under its name)."""
    by = {(m, a, s): p for m, a, s, p in arms}
    out = []
    for mode, arm, size, pairs in arms:
        term = terms.get(mode)
        ref = own_none(arm, tags)
        if ref is not None:
            reference = by.get((mode, ref, size), [])
            pairs = paired.contrast_pairings(pairs, reference)
            if not pairs:
                continue
            if term is not None:
                term = replace(term, none_instances=len({p.instance for p in reference}))
        out.append((mode, arm, size, pairs, term))
    return out


def version_rows(run, overheads: dict, pairs_by_mode: dict, target: float | None
                 ) -> list[dict]:
    """results.json's `versions`: per mode, size and profile, its overhead on each install,
    the ratio between them and the flags of that ratio; the `none` row the ratio of the two
    installs' `none` ({} of a run without a version axis). `overheads`: the summary's
    paired overheads (the other install's already against its own `none`); `target`: the
    run's rotation target (± %), above which an interval is flagged wide."""
    tags = runtime_tags(run.settings.items)
    if len(tags) < 2:
        return []
    base, other = tags[0], tags[1]
    rows = []
    for mode, pairs in pairs_by_mode.items():
        if mode not in ("latency", "throughput"):
            continue
        points = sorted({(arm, size) for arm, size in pairs if arm.endswith(f"@{other}")},
                        key=lambda k: (k[1], k[0] != f"{BASELINE}@{other}", k[0]))
        for arm, size in points:
            profile = arm[:-len(other) - 1]
            row = {"profile": profile, "mode": mode, "size": size, "baseline": base,
                   "other": other}
            mine = overheads.get((arm, mode, size))
            if profile == BASELINE:
                row.update(baseline_vs_none=None, other_vs_none=None,
                           other_over_baseline=mine.to_json() if mine else None)
                ratio = mine
            else:
                theirs = overheads.get((profile, mode, size))
                ref = pairs.get((f"{BASELINE}@{other}", size))
                ratio = None
                if ref and (profile, size) in pairs:
                    between = paired.contrast_pairings(
                        paired.contrast_pairings(pairs[(arm, size)], ref),
                        pairs[(profile, size)])
                    if between:
                        ratio = paired.overhead(between, f"govkit/versions/{arm}/{size}/{mode}")
                row.update(baseline_vs_none=theirs.to_json() if theirs else None,
                           other_vs_none=mine.to_json() if mine else None,
                           other_over_baseline=ratio.to_json() if ratio else None)
            row["flags"] = _flags(ratio, target)
            rows.append(row)
    return rows


def _flags(ratio: paired.Overhead | None, target: float | None) -> list[dict]:
    if ratio is None or ratio.ratio_ci95 is None:
        return [flag("no_interval", "fewer than 3 rounds held both installs' slots: no "
                                    "interval between the versions")]
    width = ratio.within_halfwidth_pct
    if target is not None and width is not None and width > target:
        return [flag("wide_interval", f"the ratio between the versions is ±{width:.1f}%, "
                                      f"wider than the ±{target:g}% target")]
    return []


def run_versions(run, overheads: dict) -> list[dict]:
    """A rotating run's `versions` (version_rows) from its slots and the summary's paired
    overheads ([] without a version axis)."""
    if len(runtime_tags(run.settings.items)) < 2 or run.rotation is None:
        return []
    pairs = {mode: paired.pairings(run.slots, mode) for mode in ("latency", "throughput")}
    rows = version_rows(run, overheads, pairs, run.rotation.config.target_ci_pct)
    for row in rows:
        # each install's one-way latency of the profile: median of its slot medians [95 %]
        for side, arm in (("baseline", row["profile"]),
                          ("other", f"{row['profile']}@{row['other']}")):
            slots = [s for s in run.slots if s.arm == arm and s.mode == "latency"
                     and s.size == row["size"] and s.usable]
            value, ci = paired.level(slots, f"govkit/versions/{arm}/{row['size']}") \
                if slots and row["mode"] == "latency" else (None, None)
            row[f"{side}_us"] = value
            row[f"{side}_us_ci95"] = list(ci) if ci else None
    return rows
