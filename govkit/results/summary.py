"""The summary: what a point is (`point_key`, by which the store files records too), one row
per point (its statistic, interval, overheads over `none`, RTI's published figures and the
flags raised on it), the rotating design's paired overheads and its A/A noise floor, and
the load line.

results.json keeps every repeat's raw rows; every figure (per repeat, per point, overheads,
intervals, flags) is computed from them by `summarize`, which `govkit report` calls again:
nothing shown is taken on trust from the file. Apart from the store for that reason: it
reads a results document, never writes one.
"""

from __future__ import annotations

import statistics

from govkit.catalog.measures import CPU, DEFAULT_CIPHER
from govkit.catalog.profiles import BASELINE, PROFILES
from govkit.catalog.rti_published import published_cipher_pair, published_overhead
from govkit.results import paired, parallel, stats
from govkit.results.discovery import discovery_rows
from govkit.results.flags import flag
from govkit.results.point import PointSummary
from govkit.results.record import (
    Repeat,
    Rotation,
    RotationConfig,
    Run,
    Slot,
    Variant,
    as_run,
)
from govkit.results.versions import runtime_tags, versus_own_none
from govkit.runners.crypto import FASTDDS_DEFAULT_REKEY
from govkit.runners.network import DEFAULT, LOSS_MEANING, Network
from govkit.runners.network import sort_key as network_order
from govkit.runners.readers import split_readers_arm
from govkit.wire.verdict import judge_again, profile_verdicts


def key_of(profile: str, mode: str, size: int, network: Network) -> tuple:
    """(profile, mode, size, transport, path, loss %): what a point is; its repeats share it
    (the one definition: bench's cells and results' records both use it)."""
    return (profile, mode, size, *network.key)


def point_key(r: dict) -> tuple:
    """A record's point (key_of). Records made before the network dimension are UDP over
    loopback without loss."""
    return key_of(r["profile"], r["mode"], r["size"], Network.of(r))


def repeat_key(r: dict) -> tuple:
    return (*point_key(r), r.get("repeat", 0))


class Summarizer:
    """`summarize` with the bootstrap of each point cached by its data, so rewriting the
    summary after every repeat only recomputes the point that changed."""

    def __init__(self, parallel: bool = False) -> None:
        # the bootstraps in one worker per CPU (govkit.results.parallel): the report only
        self.parallel = parallel
        self._cache: dict[tuple, tuple[tuple, stats.Estimate]] = {}
        # What the last `summarize` found of the rotating run's paired overheads (per
        # rotation_overheads): the report's headline takes its A/A floor from them
        # rather than pairing every slot again.
        self.overheads: dict[tuple[str, str, int], paired.Overhead] = {}
        # ... and its records (all_records): the report's tables read the same ones rather
        # than grouping every slot of the run again
        self.records: list[dict] = []
        # The wire verdicts per profile when the caller has judged the points already (the
        # report's wire section: 20,000 points judged once, not twice; issue 37)
        self.wire_verdicts: dict | None = None

    def point_estimates(self, points: list[tuple[tuple, stats.RowFormat, list[list[float]]]],
                        cap: int, resamples: int) -> list[stats.Estimate]:
        """The estimate of each (key, format, groups) of `points`: cached while its values,
        cap and resamples stay the same; the others computed, with `parallel` in one worker
        per CPU (govkit.results.parallel)."""
        signed = [(key, (cap, resamples, tuple(tuple(g) for g in groups)), fmt, groups)
                  for key, fmt, groups in points]
        todo = [t for t in signed if (self._cache.get(t[0]) or (None,))[0] != t[1]]
        tasks = [(fmt.name, groups, _seed(key), cap, resamples) for key, _, fmt, groups in todo]
        found = parallel.in_workers(parallel.point_estimates, tasks, [
            min(cap, sum(map(len, groups))) for *_, groups in todo]) \
            if self.parallel else parallel.point_estimates(tasks)
        for (key, signature, *_), est in zip(todo, found, strict=True):
            self._cache[key] = (signature, est)
        return [self._cache[key][1] for key, *_ in signed]

    def summarize(self, doc: Run | dict) -> list[dict]:
        return summarize(doc, self)


def _seed(key: tuple) -> str:
    """A point's bootstrap seed: its name (the same figures from every run of the report)."""
    return "govkit/" + "/".join(map(str, key))


def summarize(doc: Run | dict, summarizer: Summarizer | None = None) -> list[dict]:
    """One row per point (profile, mode, size, network): its statistic over all ok repeats
    with a 95 % interval, the overhead over `none` over the same network (ratio and what it
    adds, with intervals), RTI's published figures (UDP over a LAN without injected
    loss, so only beside such points), and flags saying what looks wrong and why; then a
    discovery run's rows (mode `discovery`: govkit.results.discovery)."""
    run = as_run(doc)
    summarizer = summarizer or Summarizer()
    target = run.settings.target_ci_pct
    # (a profile that does not say counts as secured here)
    secured = {p.name: p.security is not False for p in run.profiles}
    points: dict[tuple, list[Repeat]] = {}
    summarizer.records = all_records(run)
    for r in summarizer.records:
        points.setdefault(r.point_key, []).append(r)
    pairs = _pairings_by_mode(run)   # once: for the overheads and the variants' differences
    paired_overheads = rotation_overheads(run, summarizer, pairs)
    summarizer.overheads = paired_overheads

    estimates: dict[tuple, tuple[stats.RowFormat, stats.Estimate, list[list[float]]]] = {}
    measured_points = sum(1 for records in points.values() if any(r.ok for r in records))
    cap = resample_cap(measured_points)
    resamples = stats.resamples_for(measured_points)
    measured = []
    for key, records in points.items():
        ok = sorted((r for r in records if r.ok), key=lambda r: r.repeat)
        if ok:
            measured.append((key, stats.row_format(ok[0].format),
                             [stats.repeat_values(r) for r in ok]))
    for (key, fmt, groups), est in zip(measured, summarizer.point_estimates(
            measured, cap, resamples), strict=True):
        estimates[key] = (fmt, est, groups)

    order = {p.name: i for i, p in enumerate(PROFILES)}
    # after the catalog's, the run's own profiles in the order it lists them (a policy's
    # classes in their file's order), as the report's tables list them
    listed = {p.name: i for i, p in enumerate(run.profiles)}
    verdicts = summarizer.wire_verdicts if summarizer.wire_verdicts is not None \
        else wire_verdicts(run)
    rot_target = run.rotation.config.target_ci_pct if run.rotation else None
    rot_config = run.rotation.config if run.rotation else RotationConfig()
    # Transport (path, loss) comparison: every point against the same profile, mode and
    # size over the run's first network (udp lo without loss when measured), seed 003-like.
    nets = sorted({Network(*k[3:]) for k in estimates}, key=network_order)
    reference = nets[0] if len(nets) > 1 else None
    rows = []
    for key in sorted(points, key=lambda k: (network_order(Network(*k[3:])),
                                             order.get(base_profile(k[0]), 99),
                                             listed.get(base_profile(k[0]), len(listed)),
                                             split_readers_arm(k[0])[1],
                                             k[0], k[1], k[2])):
        profile, mode, size = key[:3]
        net = Network(*key[3:])
        if key not in estimates:
            continue
        fmt, est, groups = estimates[key]
        records = points[key]
        ok = sorted((r for r in records if r.ok), key=lambda r: r.repeat)
        failed = len(records) - len(ok)
        readers = split_readers_arm(profile)[1]
        row = {
            "profile": profile, "mode": mode, "size": size, **net.to_json(),
            # one writer, this many readers (govkit bench --readers; 1 before issue 41)
            "readers": readers,
            "statistic": fmt.statistic,
            "unit": fmt.unit, "estimate": est.value,
            "ci95": list(est.interval) if est.interval else None,
            "ci_halfwidth_pct": est.halfwidth_pct,
            "repeats": len(ok), "failed_repeats": failed,
            "seconds": sum(len(g) for g in groups) if fmt.value_key else None,
            "repeat_estimates": [fmt.pooled(g) for g in groups],
        }
        rotated = fmt.rotating
        if fmt.mode == "latency" and fmt.value_key and not rotated:
            p99 = [x["p99"] for r in ok for x in r.measured()]
            row["tail"] = {"p99_median_of_seconds": stats.statistics.median(p99),
                           "p99_worst_second": max(p99)}
        if net.loss_pct:
            row["loss"] = _loss(net, fmt, ok)
        base = estimates.get((BASELINE, mode, size, *net.key))   # like with like
        row["vs_none"] = stats.compare(est, base[1]) if base and profile != BASELINE else None
        if rotated:
            row["repeats"] = len(ok)                 # process instances
            slots = [x for r in ok for x in r.rows]
            row["rounds"] = len({x.round for x in slots})
            row["seconds"] = None
            if mode == "latency":
                figures = stats.slot_figures(slots)
                row["tail"] = _slot_tail(slots, figures)
            else:
                figures = stats.throughput_slot_figures(slots)
                row["cpu_per_sample"] = cpu_per_sample(run, profile, size, paired_overheads)
            row["cpu_pct"] = {"ping": figures["cpu_pct_ping"], "pong": figures["cpu_pct_pong"]}
            paired = paired_overheads.get((profile, mode, size))
            row["vs_none"] = paired.to_json() if paired is not None else None
        ref = estimates.get((profile, mode, size, *reference.key)) \
            if reference is not None and net != reference else None
        row["vs_network"] = {"network": reference.label, **stats.compare(est, ref[1])} \
            if ref else None
        if rotated and ok and ok[0].variant:     # a crypto variant's arm (--cipher, --rekey)
            row["variant"] = ok[0].variant.to_json()
        # (RTI published one writer and one reader)
        row["rti"] = published_overhead(base_profile(profile), size) if mode == "latency" \
            and net.transport == "udp" and not net.loss_pct and readers == 1 else None
        point = PointSummary.from_json(row)      # the row so far, read as a record
        # (a version axis's `none@TAG` is a `none`: govkit.results.versions)
        row["flags"] = _flags(point, groups, ok, secured.get(base_profile(profile),
                                                             profile != BASELINE),
                              rot_target if rotated else target, fmt,
                              rot_config.term_source(mode)) \
            + _wire_flags(verdicts, profile)
        # One flag per code: the level's interval and the overhead's may both be thinned.
        thinned = [est.subsampled] if est.subsampled else []
        if point.vs_none and point.vs_none.subsampled:
            thinned.append(f"the overhead's: {point.vs_none.subsampled}")
        if thinned:
            row["flags"].append(flag("subsampled_interval", "; ".join(thinned)))
        saturated = (point.cpu_per_sample or {}).get("saturated_slots")
        if saturated:
            row["flags"].append(flag("cpu_saturated", f"{saturated} CPU slot(s) delivered "
                                     f"under 95% of the offered rate: left out of its CPU "
                                     f"per sample"))
        rows.append(row)
    add_variant_differences(rows, run, summarizer, pairs.get("latency"))
    add_policy_baselines(rows, run, summarizer, pairs)
    # --mode discovery: its rows as they are (seconds, not rounded to 0.1 ms)
    return [_rounded(row) for row in rows] + discovery_rows(run)


CPU_STATISTIC = (
    "median of CPU slots' µs of CPU per sample written (each side's CPU time over the "
    "slot's samples, at the one offered rate of that size); × none: the paired rounds' "
    "ratio, as for latency")


def cpu_per_sample(run: Run, arm: str, size: int, overheads: dict) -> dict | None:
    """A throughput point's second cost figure, from its CPU slots (written at a fixed rate
    below every arm's saturation: govkit.bench.rotation): per side and both, the median
    over slots of µs of CPU per sample, and each over `none`'s as a paired ratio with its
    interval (both sides: the run's paired overheads; each side: paired here)."""
    cpu_slots = [s for s in run.slots if s.mode == CPU and s.size == size]
    slots = [s for s in cpu_slots if s.arm == arm]
    ok = [s for s in slots if s.usable]
    if not ok:
        return None
    out = {"statistic": CPU_STATISTIC, "unit": "us/sample",
           "offered_rate_sps": ok[0].offered_rate_sps, "slots": len(ok),
           "saturated_slots": sum(1 for s in slots if s.status == "saturated")}
    for side, key in (("both", "cpu_us_per_sample"), ("ping", "ping_us_per_sample"),
                      ("pong", "pong_us_per_sample")):
        values = [getattr(s, key) for s in ok if (getattr(s, key) or 0) > 0]
        out[side] = statistics.median(values) if values else None
    if arm == BASELINE:
        return out
    both = overheads.get((arm, CPU, size))
    out["vs_none"] = both.to_json() if both is not None else None
    for side, key in (("ping", "ping_us_per_sample"), ("pong", "pong_us_per_sample")):
        usable_side = [s for s in cpu_slots if (getattr(s, key) or 0) > 0]
        mine = paired.pairings(usable_side, CPU, key).get((arm, size))
        out[f"{side}_vs_none"] = paired.overhead(
            mine, f"govkit/paired/{arm}/{size}/cpu/{side}").to_json() if mine else None
    return out


def resample_cap(points: int) -> int:
    """The most values each point's bootstrap resamples in a run of `points` points
    (govkit.results.stats.thinned): the whole run's work stays bounded."""
    return max(stats.MIN_RESAMPLED, min(stats.MAX_RESAMPLED,
                                        stats.MAX_RESAMPLED_TOTAL // max(1, points)))


# ------------------------------------------------------------ the rotating design's figures

# The slots paired with their `none` neighbours: the points' modes (stats.ROTATION_FORMAT),
# and the CPU slots (govkit.bench.rotation), whose figures belong to their size's
# throughput point.
PAIRED_MODES = (*stats.ROTATION_FORMAT, CPU)


def all_records(doc: Run | dict) -> list[Repeat]:
    """The per-repeat records and, for a rotating run, one record per profile, size and
    process pair made from its slots (so every table and CSV reads both alike)."""
    run = as_run(doc)
    return list(run.results) + rotation_records(run)


def rotation_records(doc: Run | dict) -> list[Repeat]:
    rot = as_run(doc).rotation
    if rot is None:
        return []
    pairs = {(p.arm, p.instance): p for p in rot.pairs}
    groups: dict[tuple, list[Slot]] = {}
    for s in rot.slots:
        if paired.is_aa_arm(s.arm) or s.mode == CPU:
            continue
        # by arm: a profile measured under several crypto variants is one point per
        # variant, named like its arm (`rtps_encrypt@aes128`)
        groups.setdefault((s.arm, s.mode, s.size, s.instance), []).append(s)
    out = []
    for (profile, mode, size, instance), slots in sorted(groups.items(), key=lambda kv: (
            str(kv[0][0]), str(kv[0][1]), kv[0][2], kv[0][3])):
        ok = sorted((s for s in slots if s.usable), key=lambda s: s.round)
        pair = pairs.get((profile, instance))
        out.append(Repeat(
            profile, mode, size, DEFAULT, repeat=instance,
            commands=pair.commands if pair else (),
            domain_id=pair.domain_id if pair else None, variant=slots[0].variant,
            status="ok" if ok else "failed",
            error=None if ok else "; ".join(dict.fromkeys(s.error or s.status or "?"
                                                          for s in slots)),
            format=stats.ROTATION_FORMAT[mode] if ok else None, rows=tuple(ok),
            measured_rows=len(ok)))
    return out


def _pairings_by_mode(run: Run) -> dict[str, dict]:
    """A rotating run's pairings (govkit.results.paired.pairings) per mode."""
    return {mode: paired.pairings(run.slots, mode) for mode in PAIRED_MODES} \
        if run.rotation else {}


def rotation_overheads(doc: Run | dict, summarizer: Summarizer | None = None,
                       pairs_by_mode: dict | None = None, ratio_only: bool = False
                       ) -> dict[tuple[str, str, int], paired.Overhead]:
    """Per (arm, mode, size): the paired overhead over `none` (govkit.results.paired), the
    A/A arm's included (under paired.AA_ARM). A throughput ratio is the secured rate over
    `none`'s (below 1: security costs throughput). `pairs_by_mode`: the slots' pairings
    per mode, if already made. `ratio_only`: without the added µs' intervals (half the
    work, for the stopping rule after every round)."""
    run = as_run(doc)
    if run.rotation is None:
        return {}
    out = {}                                  # in pairing order, as before
    slots = run.slots
    todo = []                                 # not cached: (point, key, signature, ...)
    cache = summarizer._cache if summarizer else {}
    arms = [(mode, arm, size, pairs) for mode in PAIRED_MODES
            for (arm, size), pairs in (paired.pairings(slots, mode)
                                       if (pairs_by_mode or {}).get(mode) is None
                                       else pairs_by_mode[mode]).items()]
    resamples = stats.resamples_for(len(arms))      # a run of hundreds of arms: fewer
    terms = instance_terms(slots, arms)
    runs = run_terms(run.rotation)
    # (a version axis's arms against their own install's `none`: govkit.results.versions)
    for mode, arm, size, pairs, term in versus_own_none(arms, terms,
                                                        runtime_tags(run.settings.items)):
        # (latency keeps its seed of before throughput slots: same figures as then)
        seed = f"govkit/paired/{arm}/{size}" + ("" if mode == "latency" else f"/{mode}")
        key = ("paired", arm, mode, size, ratio_only)
        run = runs.get(mode)
        signature = (resamples, term, run, tuple((p.round, p.instance, p.value, p.baseline)
                                                 for p in pairs))
        hit = cache.get(key)
        out[(arm, mode, size)] = None if hit is None or hit[0] != signature else hit[1]
        if out[(arm, mode, size)] is None:
            todo.append(((arm, mode, size), key, signature, pairs, seed, term, run))
    tasks = [(pairs, seed, ratio_only, resamples, term, run)
             for *_, pairs, seed, term, run in todo]
    found = parallel.in_workers(parallel.overheads, tasks, [
        min(len(t[0]), paired.MAX_RESAMPLED_ROUNDS) for t in tasks]) \
        if summarizer and summarizer.parallel else parallel.overheads(tasks)
    for (point, key, signature, *_), overhead in zip(todo, found, strict=True):
        cache[key] = (signature, overhead)
        out[point] = overhead
    return out


def run_terms(rot: Rotation | dict) -> dict[str, paired.RunTerm]:
    """Per mode, the run-to-run term the run carries (rotation.settings.rerun_kappa_pct and
    rerun_floor_pct, written by govkit bench; a run from before 2026-12-05 has none and
    reads as it did)."""
    config = rot.config if isinstance(rot, Rotation) else \
        RotationConfig.from_json(rot.get("settings"))
    kappas, floors = config.rerun_kappa_pct, config.rerun_floor_pct
    return {mode: paired.RunTerm(kappas.get(mode, 0.0) / 100, floors.get(mode, 0.0) / 100)
            for mode in sorted(kappas.keys() | floors.keys())}


def instance_terms(slots: list[Slot], arms: list[tuple]) -> dict[str, paired.InstanceTerm]:
    """Per mode, the run's spread between process instances (paired.InstanceTerm), pooled
    over every arm and size of that mode (the A/A arm's included)."""
    out = {}
    slots = paired.as_slots(slots)
    for mode in dict.fromkeys(m for m, *_ in arms):
        none = {s.instance for s in slots if paired.is_baseline_arm(s.arm) and s.mode == mode}
        term = paired.instance_term({(arm, size): pairs for m, arm, size, pairs in arms
                                     if m == mode}, len(none))
        if term is not None:
            out[mode] = term
    return out


def base_profile(name: str) -> str:
    """The profile of a point or arm name (`rtps_encrypt@aes128` → `rtps_encrypt`)."""
    return name.split("@", 1)[0]


# Which variant each of a profile's other variants is compared with, per dimension: the
# runtime's default (AES-256; Fast DDS's 32 messages per session key) when measured, else
# the largest rekey given (the rarest renewal).
CIPHER_REFERENCE = DEFAULT_CIPHER
REKEY_REFERENCE = FASTDDS_DEFAULT_REKEY


def variant_contrasts(variants: dict[tuple[str, int], Variant]
                      ) -> list[tuple[str, str, int, str]]:
    """(arm, reference arm, size, dimension) for every crypto variant arm (`variants`: its
    variant per (arm, size)) that differs from a measured reference of the same profile and
    size in that dimension alone."""
    rekeys = {v.rekey_blocks for v in variants.values()} - {None}
    rekey_ref = REKEY_REFERENCE if REKEY_REFERENCE in rekeys else max(rekeys, default=None)
    out = []
    for (arm, size), v in variants.items():
        for dimension, key, ref_value in (("cipher", "cipher", CIPHER_REFERENCE),
                                          ("rekey", "rekey_blocks", rekey_ref)):
            if getattr(v, key) is None or getattr(v, key) == ref_value:
                continue
            ref = next((a for (a, sz), w in variants.items() if sz == size
                        and base_profile(a) == base_profile(arm)
                        and getattr(w, key) == ref_value
                        and all(getattr(w, k) == getattr(v, k)
                                for k in ("cipher", "rekey_blocks") if k != key)), None)
            if ref is not None:
                out.append((arm, ref, size, dimension))
    return out


def add_variant_differences(rows: list[dict], run: Run,
                            summarizer: Summarizer | None = None,
                            latency_pairs: dict | None = None) -> None:
    """Each crypto variant's row gets `vs_variant`: a list of its paired differences to the
    reference variant of the same profile and size, one per dimension in which it differs
    from it alone (govkit.results.paired.difference; figure − reference, as µs and %, with
    intervals), beside RTI's published AES-128/AES-256 pair for the cipher."""
    pairs = latency_pairs if latency_pairs is not None else paired.pairings(run.slots)
    read = ((row, PointSummary.from_json(row)) for row in rows)
    by_arm = {(p.profile, p.size): (row, p) for row, p in read if p.variant}
    for row, _ in by_arm.values():
        row["vs_variant"] = []
    for arm, ref_arm, size, dimension in variant_contrasts(
            {k: p.variant for k, (_, p) in by_arm.items()}):
        (row, mine), (_, ref) = by_arm[(arm, size)], by_arm[(ref_arm, size)]
        if (arm, size) not in pairs or (ref_arm, size) not in pairs:
            continue
        diff = _difference(pairs[(arm, size)], pairs[(ref_arm, size)],
                           f"govkit/paired/{arm}/{size}/vs/{ref_arm}", summarizer)
        if diff is None:
            continue
        ci = diff.ratio_ci95
        # A contrast of two secured arms is their difference (arm − reference), as RTI's
        # published AES-128/AES-256 pair names it, not an overhead over `none`.
        contrast = diff.to_json()
        contrast["difference"] = contrast.pop("added")
        contrast["difference_ci95"] = contrast.pop("added_ci95")
        row["vs_variant"].append({
            "dimension": dimension, "reference": ref_arm,
            "reference_variant": ref.variant.name,
            "reference_us": ref.estimate, "reference_ci95": _listed(ref.ci95),
            "figure_us": mine.estimate, "figure_ci95": _listed(mine.ci95),
            **contrast, "difference_pct": 100 * (diff.ratio - 1),
            "difference_pct_ci95": [100 * (ci[0] - 1), 100 * (ci[1] - 1)] if ci else None,
            "rti": published_cipher_pair(base_profile(arm), size)
            if dimension == "cipher" and mine.variant.cipher == "aes128" else None})


# What `vs_policy_baseline` is, in the words every output uses (terminal, report, summary.md).
POLICY_BASELINE_MEANING = (
    "each class over the policy's own unprotected class (its metadata and data NONE, under "
    "the same domain-wide rtps_protection_kind), paired by round: per round, the difference "
    "of the two arms' log ratios over their own `none` neighbours; 20% trimmed mean, "
    "hierarchical bootstrap interval within the run (no run-to-run term, as for a crypto "
    "variant's contrast)")


def policy_baseline(run: Run) -> str | None:
    """The `bench --policy` class a class's own cost is read against: the one protecting
    nothing, where rtps_protection_kind protects every RTPS message of the domain (issue
    46 item 6: without <domain>, sros2's default governance signs them all, and the class
    named `none` read 1.56x over `none`). None for any other run."""
    classes = [p for p in run.profiles if p.topics is not None]
    rtps = {p.settings.get("rtps_protection_kind") for p in classes}
    if not classes or rtps <= {None, "NONE"}:
        return None
    return next((p.name for p in classes if p.settings.get("metadata_protection_kind")
                 == "NONE" and p.settings.get("data_protection_kind") == "NONE"), None)


def add_policy_baselines(rows: list[dict], run: Run, summarizer: Summarizer | None,
                         pairs_by_mode: dict) -> None:
    """A policy class's rotated row gets `vs_policy_baseline`, its paired ratio and added
    figure over the policy's unprotected class (`policy_baseline`; POLICY_BASELINE_MEANING),
    where a domain-wide rtps_protection_kind puts a cost under every class."""
    reference = policy_baseline(run)
    if reference is None:
        return
    for row in rows:
        pairs = pairs_by_mode.get(row["mode"]) or {}
        key, ref = (row["profile"], row["size"]), (reference, row["size"])
        if row["profile"] in (reference, BASELINE) or key not in pairs or ref not in pairs:
            continue
        mode = "" if row["mode"] == "latency" else f"/{row['mode']}"
        diff = _difference(pairs[key], pairs[ref],
                           f"govkit/paired/{key[0]}/{key[1]}/vs/{reference}{mode}", summarizer)
        if diff is not None:
            row["vs_policy_baseline"] = {"reference": reference, **diff.to_json()}


def _listed(interval: tuple | None) -> list | None:
    """An interval as the summary's JSON holds it."""
    return list(interval) if interval is not None else None


def _difference(pairs, reference, seed: str, summarizer: Summarizer | None):
    signature = (tuple((p.round, p.instance, p.value, p.baseline) for p in pairs),
                 tuple((p.round, p.value, p.baseline) for p in reference))
    key = ("difference", seed)
    hit = summarizer._cache.get(key) if summarizer else None
    if hit is None or hit[0] != signature:
        hit = (signature, paired.difference(pairs, reference, seed))
        if summarizer:
            summarizer._cache[key] = hit
    return hit[1]


def variant_differences(summary: list[dict]) -> list[dict]:
    """The summary's paired variant differences as table rows (seed 002's form: the
    reference, the figure, their difference in µs and %, with intervals; RTI's beside)."""
    return [{"profile": base_profile(r["profile"]), "arm": r["profile"], "size": r["size"],
             "variant": r["variant"]["name"], **d}
            for r in summary for d in r.get("vs_variant") or []]


def rotation_widths(doc: Run | dict, summarizer: Summarizer | None = None,
                    narrowable: bool = True) -> dict[tuple[str, str, int], float | None]:
    """Every arm's ratio interval half-width (%), for the rounds' stopping rule: what more
    rounds can narrow (the run-to-run term left out; `narrowable` False: the whole width,
    as the summary reports it). A crypto
    variant's arm, and its reference's, count the wider of their own and their paired
    difference's (an arm whose own ratio is narrow would otherwise stop getting slots, and
    the difference would rest on the rounds before that). With a `summarizer`, an arm whose
    pairings did not change since the last call (no slot since) is not resampled again."""
    run = as_run(doc)
    by_mode = _pairings_by_mode(run)
    widths = {k: o.within_halfwidth_pct if narrowable else o.halfwidth_pct for k, o in
              rotation_overheads(run, summarizer, by_mode, ratio_only=True).items()}
    variants = {(s.arm, s.size): s.variant for s in run.slots if s.variant}
    if not variants:
        return widths
    pairs = by_mode.get("latency", {})
    for arm, ref, size, _ in variant_contrasts(variants):
        if (arm, size) not in pairs or (ref, size) not in pairs:
            continue
        diff = paired.difference(pairs[(arm, size)], pairs[(ref, size)],
                                 f"govkit/paired/{arm}/{size}/vs/{ref}")
        width = diff.halfwidth_pct if diff is not None else None
        for key in ((arm, "latency", size), (ref, "latency", size)):
            if key in widths:
                widths[key] = None if width is None or widths[key] is None \
                    else max(widths[key], width)
    return widths


def noise_floor(doc: Run | dict, overheads: dict | None = None, mode: str = "latency"
                ) -> list[dict]:
    """The A/A arm per size (of one mode): a second, independent `none` paired like a
    profile. Its ratio should be 1; flagged when its interval excludes 1 or is wider than
    the target."""
    run = as_run(doc)
    if run.rotation is None:
        return []
    overheads = overheads if overheads is not None else rotation_overheads(run)
    target = run.rotation.config.target_ci_pct
    rows = []
    for (arm, arm_mode, size), o in sorted(overheads.items(), key=lambda kv: (
            split_readers_arm(kv[0][0])[1], kv[0][2])):
        if not paired.is_aa_arm(arm) or arm_mode != mode:
            continue
        readers = split_readers_arm(arm)[1]
        flags = []
        ci = o.ratio_ci95
        if ci is not None and not ci[0] <= 1 <= ci[1]:
            shown = _rounded(o.ratio)       # as the row shows it (0.9825: 0.983, not 0.982)
            flags.append(flag("aa_excludes_one",
                f"two identical `none` arms differ: × {shown:.3f} (95% interval "
                f"{ci[0]:.3f}–{ci[1]:.3f} excludes 1); differences of this size between "
                "profiles are not security's"))
        if target is not None and (o.halfwidth_pct is None or o.halfwidth_pct > target):
            flags.append(flag("aa_wide",
                f"the A/A interval {pct_text(o.halfwidth_pct, target)} is wider than the target "
                f"±{target:g}%: the machine was too noisy for that precision"))
        rows.append(_rounded({"size": size, "mode": mode, **o.to_json(), "flags": flags,
                              **({"readers": readers} if readers != 1 else {})}))
    return rows


AA_POINT = "A/A none"     # how the A/A arm's rows are named among the points


def flagged_points(summary: list[dict], floor: list[dict]) -> list[dict]:
    """The summary's points and the A/A floor's rows (named AA_POINT): what the run's
    flag advice and its --fail-on-flag gate read, so that `aa_excludes_one` and `aa_wide`
    are said and can fail a run like any other flag."""
    return summary + [{**row, "profile": AA_POINT} for row in floor]


def load_line(doc: Run | dict) -> str | None:
    """How quiet the machine was, in one line (None before any measurement)."""
    loads = as_run(doc).load
    if not loads:
        return None
    before = loads[0].loadavg_before
    steal = [x.steal_pct for x in loads if x.steal_pct is not None]
    busy: dict[str, float] = {}         # by name: two busy `sh` loops are one line
    for x in loads:
        for name, share in x.busy_processes:
            busy[name] = busy.get(name, 0) + share
    under = any(x.under_load for x in loads)
    other = [x.other_cpu_share for x in loads if x.other_cpu_share is not None]
    # What the verdict reads first: the others' CPU time (/proc/stat less govkit's own).
    # The load average comes after and says when it was read: as govkit started, before it
    # signed or started anything (LoadWatch), a one-minute average of what ran before
    # (another run's pairs too), so a quiet run beside "load average 3.46" is no
    # contradiction. (It said "govkit's own setup included" until 2026-12-07: untrue.)
    parts = [f"others used {100 * max(other):.0f}% of a CPU"] if other else []
    if steal:
        parts.append(f"CPU steal {max(steal):.1f}%")
    parts.append(f"load average {before[0]:.2f} as govkit started (the minute before its "
                 "own setup)" if before else "load average unknown")
    text = ("MEASURED UNDER LOAD: " if under else "machine quiet: ") + "; ".join(parts)
    if busy:
        text += "; other busy processes: " + ", ".join(
            f"{name} {100 * share:.0f}% of a CPU" for name, share in list(busy.items())[:4])
    return text


def _slot_tail(slots: list[dict], figures: dict) -> dict:
    """The tail of a point's slots; its pooled percentiles are those of its figures
    (stats.slot_figures pooled the same slots' histograms)."""
    return {"p99_of_samples": figures["p99_of_samples"],
            "p99_9_of_samples": figures["p99_9_of_samples"],
            "p99_worst_slot": max((x.p99 for x in slots), default=None)}


def _loss(net: Network, fmt: stats.RowFormat, ok: list[Repeat]) -> dict:
    """What injected loss did to a point, from its raw rows: retransmitted bytes (throughput,
    ddsperf -X) or nothing counted (latency: ping/pong has no such counter)."""
    out = {"injected_pct": net.loss_pct, "by": "sender (publisher): Cyclone DDS "
           "Internal/Test/XmitLossiness, not a network impairment", "meaning": LOSS_MEANING}
    if fmt.mode == "throughput" and fmt.value_key:
        figures = [stats.repeat_figures(r)[0] for r in ok]
        counted = [f for f in figures if "rexmit_bytes" in f]
        out["retransmitted_bytes"] = sum(f["rexmit_bytes"] for f in counted) \
            if counted else None
        shares = [f["rexmit_share_pct"] for f in counted if f.get("rexmit_share_pct") is not None]
        out["retransmitted_share_pct"] = _median(shares)
        out["lost_samples"] = sum(f.get("lost", 0) or 0 for f in figures)
    else:
        out["retransmitted_bytes"] = None
        out["note"] = ("ddsperf counts no retransmissions for ping/pong: each dropped ping "
                       "or pong shows as a round trip delayed by the retransmission, in "
                       "the tail (p99, worst second)")
    return out


def _median(values: list[float]) -> float | None:
    return stats.statistics.median(values) if values else None


def _wire_flags(verdicts: dict, profile: str) -> list[dict]:
    """A profile whose traffic did not match its governance: its figures are not the cost
    of the protection it claims, so every row of it says so."""
    verdict = verdicts.get(profile)
    if not verdict or verdict["verdict"] == "match":
        return []
    return [flag("wire_mismatch", "on the wire this profile does not do what its governance says ("
                       + "; ".join(verdict["reasons"][:2]) + "): its figures are not the "
                       "cost of that protection")]


def wire_verdicts(run: Run) -> dict:
    """Per profile, the verdict over its captured points, each judged again from its stored
    counts (govkit.wire.verdict.judge_again), not the verdict results.json stored."""
    wire = run.wire
    if not wire:
        return {}
    return profile_verdicts([judge_again(p) for p in wire.get("points", [])])


# What the rerun_spread note says its run-to-run term is: only a term measured here is
# called this machine's; a default was measured elsewhere (issue 42: the note said "a rerun
# on this machine" of another VM's constant), and a given one is the user's
# (tests/project/test_machine_words.py reads every sentence that says "this machine").
RERUN_TERM_WORDS = {
    "default": "the run-to-run term, a default from another machine, not measured here, "
               "puts what a rerun moves this ratio by at",
    "given": "the run-to-run term given (--rerun-kappa, --rerun-floor) puts what a rerun "
             "moves this ratio by at",
    "machine_calibration": "the run-to-run term measured on this machine (govkit calibrate) "
                           "puts what a rerun moves this ratio by at",
    "measured_in_run": "the run-to-run term measured in this run puts what a rerun moves "
                       "this ratio by at",
}
# The same, as the run's one line on its term (rerun_term_line)
RERUN_TERM_SAID = {
    "default": "a default from another machine, not measured here",
    "given": "given (--rerun-kappa, --rerun-floor), not measured by govkit",
    "machine_calibration": "measured on this machine",
    "measured_in_run": "measured in this run",
}


def rerun_term_line(doc: Run | dict) -> str | None:
    """Where the run's run-to-run term came from and what it is, in one line (the terminal,
    report.html and summary.md print it; None for a run that carries none)."""
    run = as_run(doc)
    if not run.rotation:
        return None
    config = run.rotation.config
    parts = []
    for mode in ("latency", "throughput"):
        kappa = config.rerun_kappa_pct.get(mode, 0.0)
        floor = config.rerun_floor_pct.get(mode, 0.0)
        source = config.term_source(mode)
        # (a term measured or given as 0 is said too: it is where the figure came from)
        if not (kappa or floor or source != "default") or \
                not any(s.mode == mode for s in run.slots):
            continue
        figure = "; ".join(x for x in (f"κ {kappa:g} %" if kappa else "",
                                       f"floor {floor:g} %" if floor else "") if x) or \
            ("κ 0 %" if mode == "latency" else "floor 0 %")
        said = RERUN_TERM_SAID[source]
        if source == "machine_calibration":
            cal = config.rerun_term_calibration
            term = (cal.get("terms") or {}).get(mode) or {}
            se = next((v for k, v in term.items() if k.endswith("_se_pct")), None)
            said += (f" by govkit calibrate on {str(cal.get('created', '?'))[:16]} UTC "
                     f"({cal.get('runs', '?')} runs" + (f", ± {se:g} %" if isinstance(
                         se, int | float) else "") + ")")
        parts.append(f"{mode} {figure}: {said}")
    if not parts:
        return None
    text = "run-to-run term (what a rerun moves a ratio by, in every interval): " + \
        "; ".join(parts)
    note = config.source.get("rerun_term_note")
    if isinstance(note, str) and note:
        text += f" ({note[:300]})"
    return text


def _flags(row: PointSummary, groups: list[list[float]], ok: list[Repeat], secured: bool,
           target: float | None, fmt: stats.RowFormat, term_source: str = "default"
           ) -> list[dict]:
    flags = []
    unit = "µs" if fmt.unit == "us" else fmt.unit
    rotated = fmt.rotating
    if row.failed_repeats:
        total = row.failed_repeats + row.repeats
        flags.append(flag("failed_repeats",
            f"{row.failed_repeats} of {total} repeats failed; the "
                                f"figures use the {row.repeats} that completed"))
    if row.repeats == 1 and fmt.value_key and row.ci95 is not None and not rotated:
        flags.append(flag("one_repeat",
            "the interval comes from one repeat's seconds only, so it leaves out how much "
            "repeats differ from each other; run at least two (--repeat)"))
    if rotated:
        vs = row.vs_none
        width = vs.halfwidth_pct if vs else None
        # what more rounds can narrow: the width without the run-to-run term
        within = vs.within_halfwidth_pct if vs else None
        if vs is not None and target is not None and (within is None or within > target):
            flags.append(flag("wide_interval",
                f"the overhead ratio's 95% interval {pct_text(width, target)} is wider than the "
                f"target ±{target:g}% after {vs.rounds} paired rounds (a longer --budget "
                "adds rounds)"))
        elif vs is not None and target is not None and width is not None and width > target:
            flags.append(flag("rerun_spread",
                f"the overhead ratio's 95% interval {pct_text(width, target)} is wider than the "
                f"target ±{target:g}% because {RERUN_TERM_WORDS[term_source]} "
                f"about ±{1.96 * vs.run_sd_pct:.1f}% (95%); its rounds reached "
                f"±{within:.1f}%"))
    elif row.ci95 is None:
        flags.append(flag("no_interval",
            "too little data for an interval (one value); run more repeats"))
    elif target is not None and (row.ci_halfwidth_pct is None
                                 or row.ci_halfwidth_pct > target):
        flags.append(flag("wide_interval",
            f"95% interval {pct_text(row.ci_halfwidth_pct, target)} is wider than the target "
            f"±{target:g}% after {row.repeats} repeats"))
    vs = row.vs_none
    if secured and vs is not None and vs.ratio is not None:
        ratio, ci = vs.ratio, vs.ratio_ci95
        latency = fmt.mode == "latency"
        interval = f" (95% interval {ci[0]:.2f}–{ci[1]:.2f})" if ci else ""
        if ci is not None and (ci[1] < 1 if latency else ci[0] > 1):
            what = "lower latency" if latency else "higher throughput"
            flags.append(flag("faster_than_none",
                f"a secured profile measured {what} than no security at all: "
                f"× {ratio:.2f}{interval}; security cannot make DDS faster, so the "
                "machine was disturbed; re-run"))
        elif (ci[0] <= 1 <= ci[1]) if ci else (ratio <= 1 if latency else ratio >= 1):
            flags.append(flag("no_measurable_overhead",
                f"× {ratio:.2f}{interval}: indistinguishable from no security at this "
                "precision (not faster: the interval includes 1)"))
    if fmt.value_key and not rotated:
        # (a rotating run's slots span the machine's regimes by design: its ratios are
        # paired within rounds, so regimes are no flag there; the A/A arm measures them)
        split = stats.bimodal([v for g in groups for v in g])
        if split:
            flags.append(flag("bimodal",
                f"the measured seconds form two groups, around {split[0]:.4g} and "
                f"{split[1]:.4g} {unit}: the machine switched between two states"))
        series = {"medians": groups}
        if fmt.mode == "latency":
            series["means"] = [stats.repeat_values(r, "mean") for r in ok]
        for what, values in series.items():
            change = stats.trend(values)
            if change is not None:
                flags.append(flag("trend",
                    f"the per-second {what} still drift: the first third of the measured "
                    f"seconds is {abs(change) * 100:.0f}% {'above' if change > 0 else 'below'} "
                    f"the last third on average over {len(values)} repeat(s); a longer "
                    "--warmup lets each repeat settle first"))
                break
    if row.loss:
        loss = row.loss
        what = (f"{loss['retransmitted_bytes']} bytes retransmitted"
                if loss.get("retransmitted_bytes") is not None
                else "retransmissions not counted (ping/pong): they show in the tail")
        flags.append(flag("injected_loss",
            f"{loss['injected_pct']:g}% of the publisher's packets dropped by the sender "
            f"(Cyclone XmitLossiness), not by the network; the writer is reliable, so "
            f"dropped samples were retransmitted: {what}"))
    if fmt.mode == "throughput":
        figures = [stats.repeat_figures(r)[0] for r in ok]
        stalled = sum(f.get("stalled_seconds", 0) or 0 for f in figures)
        lost = sum(f.get("lost", 0) or 0 for f in figures)
        if stalled:
            flags.append(flag("stalled_seconds", f"{stalled} measured second(s) without any sample "
                                    "(counted as rate 0)"))
        if lost:
            flags.append(flag("lost_samples",
                f"{lost} samples lost although the writer is reliable"))
    return flags


def pct_text(halfwidth: float | None, target: float | None = None) -> str:
    """'±6.3%'; with more decimals where one would round onto the target ('±5.04%', never
    '±5.0% is wider than the target ±5%')."""
    if halfwidth is None:
        return "of unknown width (the estimate is 0)"
    for digits in (1, 2, 3):
        text = f"{halfwidth:.{digits}f}"
        if target is None or float(text) > target:
            return f"±{text}%"
    return f"±{halfwidth:g}%"


def _rounded(obj):
    if isinstance(obj, float):
        return round(obj, 4)
    if isinstance(obj, dict):
        return {k: _rounded(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_rounded(v) for v in obj]
    return obj
