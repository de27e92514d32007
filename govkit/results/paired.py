"""The paired, per-round overhead estimate of a rotating run (govkit.bench.rotation).

Why paired: the 2-core VM runs in speed regimes that last seconds (docs/background/method.md).
Two points measured tens of seconds apart land in different regimes, so an interval built
from independent resamples of each is as wide as the regimes are apart. A rotating run
measures every secured slot between two `none` slots a fraction of a second away; within
one round the regime is (almost always) the same on both sides, so the per-round ratio
cancels it.

Terms, so that each figure says what it is:
- a *slot* is one uninterrupted ping-pong of one process pair at one size; its value is
  the exact median of the one-way latencies of the round trips it measured;
- in each *round*, every arm (a profile, or the A/A arm: a second, independent `none`) gets
  one slot per size, sandwiched between two `none` slots; its *per-round ratio* is its slot
  median over the geometric mean of its two neighbours' (its *added µs*, the difference to
  their arithmetic mean);
- the *overhead ratio* is the 20 % trimmed mean of the per-round log ratios, exponentiated
  (the mean of the middle 60 % of the rounds); the *added µs* is the same trimmed mean of
  the per-round differences. Why trimmed: on the 2-core VM a slot's level is set when the
  slot starts and held to its end, and on a busy host about one slot in ten lands in a
  state about 1.5x slower (2026-12-02: `none` slot medians 13-18 µs, a second cluster at
  24-26 µs). A plain mean lets each such slot move its round's ratio by 20-40 %; a median
  ignores them but wastes the quiet rounds (its intervals were the widest on a quiet host);
  the trimmed mean does neither: on the same raw slots of seven runs it reached ±3 % on
  more ratios than either (docs/background/method.md).
- the 95 % interval is a percentile bootstrap: each process instance's rounds resampled
  (in moving blocks when successive rounds are correlated), plus the spread between
  process instances (InstanceTerm: what a rerun with other processes would move), 2000
  resamples seeded by the point's name.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from govkit.catalog.profiles import BASELINE
from govkit.results.record import Slot
from govkit.results.stats import (
    BOOTSTRAP_RESAMPLES,
    percentile_interval,
    with_fewer_resamples,
)
from govkit.runners.readers import split_readers_arm

BASELINE_ARM = BASELINE      # the baseline's arm is named like its profile
AA_ARM = "none:aa"            # the A/A arm: an independent second `none`, paired like a profile


def is_baseline_arm(name: str) -> bool:
    """Whether an arm is `none`, at any readers count (`none@4readers`: the baseline of
    the arms at 4 readers; govkit.runners.readers.readers_arm)."""
    return split_readers_arm(name)[0] == BASELINE_ARM


def is_aa_arm(name: str) -> bool:
    """Whether an arm is the A/A arm, at any readers count."""
    return split_readers_arm(name)[0] == AA_ARM


# Successive rounds whose log ratios correlate more than this are resampled in blocks.
BLOCK_LAG1 = 0.2

PAIRED_INTERVAL_METHOD = (
    "95% percentile bootstrap over the paired rounds: each process instance's rounds "
    f"resampled (moving blocks of ceil(n^(1/3)) rounds when the lag-1 autocorrelation "
    f"exceeds {BLOCK_LAG1}), plus a normal draw of the spread between process instances "
    "(sigma² (1/arm instances + 1/none instances), sigma pooled over the run's points: "
    "another set of processes reads a little faster or slower); "
    f"{BOOTSTRAP_RESAMPLES} resamples seeded by the point's name. Where the run cannot "
    "estimate that spread, the instances themselves are resampled. Where the run carries "
    "a run-to-run term (rotation.settings.rerun_kappa_pct and rerun_floor_pct, measured "
    "across runs; rerun_term_source says where: `machine_calibration`, by govkit calibrate "
    "on the machine that made the run; `default`, on another machine, not the one that "
    "made the run; `given`, by the user), a normal draw of SD sqrt(floor² + (kappa "
    "(1 - 1/r))²) too: what a rerun on the machine moves a ratio r (the width without it "
    "is what more rounds can narrow).")
# An arm's intervals resample at most this many paired rounds (thinned_rounds).
MAX_RESAMPLED_ROUNDS = 1000
# The share of rounds left out at each end by the trimmed mean (see the module docstring).
TRIM = 0.2
# An instance's rounds before it counts towards the run's InstanceTerm.
MIN_INSTANCE_ROUNDS = 5
ESTIMATOR = (
    "per round: the slot's median over the geometric mean of the two adjacent `none` "
    "slots' medians (ratio) and minus their mean (added µs); overhead = exp(20% trimmed "
    "mean of the per-round log ratios), added µs = 20% trimmed mean of the per-round "
    "differences (the middle 60% of the rounds)")


@dataclass(frozen=True)
class Pairing:
    """One arm's slot in one round and its `none` neighbours."""
    round: int
    instance: int
    value: float                # the arm's slot median (µs)
    baseline: float             # geometric mean of the neighbours' slot medians
    baseline_mean: float        # arithmetic mean of the same

    @property
    def log_ratio(self) -> float:
        return math.log(self.value / self.baseline)

    @property
    def added(self) -> float:
        return self.value - self.baseline_mean


def pairings(slots: Sequence[Slot], mode: str = "latency", value_key: str | None = None
             ) -> dict[tuple[str, int], list[Pairing]]:
    """Per (arm, size), every round's pairing of one mode's slots, from the run's slot
    records (any order). The value paired is the slot's median latency, its receive rate or
    its CPU per sample (Slot.value), or the slot's `value_key` (a Slot attribute)."""
    # a block: one round's sandwich of one size at one readers count
    blocks: dict[tuple[int, int, int], list[Slot]] = {}
    for s in as_slots(slots):
        if s.mode == mode:
            blocks.setdefault((s.round, s.size, split_readers_arm(s.arm)[1]), []).append(s)
    out: dict[tuple[str, int], list[Pairing]] = {}
    for (rnd, size, _), block in sorted(blocks.items()):
        block.sort(key=lambda s: s.position)
        values = [getattr(s, value_key) if value_key else s.value for s in block]
        # each slot's value if it is a usable `none` slot (None if not), read once
        # (a round's slots are all at one readers count: `none` there is its baseline)
        none = [v if is_baseline_arm(s.arm) and s.usable else None
                for s, v in zip(block, values, strict=True)]
        for i, s in enumerate(block):
            if is_baseline_arm(s.arm) or not s.usable:
                continue
            around = [v for v in (none[i - 1] if i else None,
                                  none[i + 1] if i + 1 < len(none) else None)
                      if v is not None]
            if not around:
                continue
            # statistics.fmean of one or two values, to the bit: fsum / n, and the sum of
            # two doubles is already correctly rounded
            n = len(around)
            logs = sum(math.log(v) for v in around)
            out.setdefault((s.arm, size), []).append(Pairing(
                rnd, s.instance, values[i], math.exp(logs / n), sum(around) / n))
    return out


def as_slots(slots: Sequence[Slot | dict]) -> Sequence[Slot]:
    """Slot records as they are; rotation.slots as JSON read by Slot.from_json (tests and
    benchmarks/ hold them so)."""
    return slots if all(isinstance(s, Slot) for s in slots) else \
        [s if isinstance(s, Slot) else Slot.from_json(s) for s in slots]


def lag1(values: Sequence[float]) -> float | None:
    """Lag-1 autocorrelation of a series (None for fewer than 4 values or no spread)."""
    if len(values) < 4:
        return None
    m = statistics.fmean(values)
    den = sum((v - m) ** 2 for v in values)
    if den == 0:
        return None
    return sum((a - m) * (b - m) for a, b in zip(values, values[1:], strict=False)) / den


def _resample(groups: list[list[float]], statistic, seed: str, block: int) -> list[float]:
    """Resample the groups (process instances), then each drawn group's values in moving
    blocks of `block` (1: one at a time) up to its own length; the statistic of all drawn.
    (Pure Python: the level's median; the overheads use _resample_trimmed.)"""
    rand = random.Random(seed).random
    k = len(groups)
    out = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        drawn: list[float] = []
        for _ in range(k):
            g = groups[int(rand() * k)]
            n = len(g)
            b = min(block, n)
            taken = 0
            while taken < n:
                start = int(rand() * (n - b + 1))
                piece = g[start:start + min(b, n - taken)]
                drawn += piece
                taken += len(piece)
        out.append(statistic(drawn))
    return out


def trimmed_mean(values: Sequence[float]) -> float:
    """The mean of the values left after dropping the lowest and highest TRIM of them."""
    ordered = sorted(values)
    k = int(TRIM * len(ordered))
    return statistics.fmean(ordered[k:len(ordered) - k])


def _resample_trimmed(groups: list[list[float]], seed: str, block: int,
                      resamples: int = BOOTSTRAP_RESAMPLES, stratified: bool = False
                      ) -> list[float]:
    """_resample with the trimmed mean as statistic, vectorised (numpy): the rounds'
    stopping rule computes it for every arm after every round. Each resample's draws fill a
    row (padded with NaN where the drawn instances hold fewer rounds than the widest row).
    `stratified`: every instance once per resample (only its rounds are resampled), for
    an estimate whose instances' spread is added apart (InstanceTerm)."""
    import hashlib

    import numpy as np

    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8],
                                               "little"))
    k, r = len(groups), resamples
    arrays = [np.asarray(g, dtype=float) for g in groups]
    width = max(len(a) for a in arrays)
    drawn = np.full((r, k * width), np.nan)
    chosen = rng.integers(0, k, size=(r, k))        # which instance fills draw d of row i
    if stratified:
        chosen = np.tile(np.arange(k), (r, 1))
    for d in range(k):
        for gi, values in enumerate(arrays):
            rows = np.nonzero(chosen[:, d] == gi)[0]
            if not len(rows):
                continue
            n = len(values)
            b = min(block, n)
            starts = rng.integers(0, n - b + 1, size=(len(rows), -(-n // b)))
            idx = (starts[..., None] + np.arange(b)).reshape(len(rows), -1)[:, :n]
            drawn[rows, d * width:d * width + n] = values[idx]
    ordered = np.sort(drawn, axis=1)                 # NaN last
    n = (~np.isnan(drawn)).sum(axis=1)
    k = np.floor(TRIM * n).astype(int)
    column = np.arange(drawn.shape[1])[None, :]
    keep = (column >= k[:, None]) & (column < (n - k)[:, None])
    return [float(v) for v in np.where(keep, ordered, 0.0).sum(axis=1) / keep.sum(axis=1)]


@dataclass(frozen=True)
class InstanceTerm:
    """How far one process instance's level sits from its arm's, as the run shows it: the
    spread the rounds cannot show. Each process (its address-space layout, its pages' cache
    sets) runs a little faster or slower for its whole life: on the 2-core VM, 0.6-0.9 % (SD,
    log scale) for latency (2026-12-04). A ratio is an arm's instances over `none`'s, so it
    carries both sets' draws: var = sigma² (1/arm instances + 1/none instances). Resampling
    an arm's two instances saw about half of its own share and none of `none`'s, and
    reruns differed by more than the intervals said (issue 32: var(z) 2.0, 19 % of |z|
    beyond 1.96). Estimated once per run and mode, pooled over every arm and size."""
    sigma: float              # SD of an instance's log level around its arm's
    groups: int               # (arm, size) points it was pooled over
    none_instances: int       # `none`'s instances in the run

    def log_sd(self, arm_instances: int) -> float:
        return self.sigma * math.sqrt(1 / max(1, arm_instances)
                                      + 1 / max(1, self.none_instances))

    def to_json(self) -> dict:
        return {"sigma_pct": 100 * self.sigma, "groups": self.groups,
                "none_instances": self.none_instances}


@dataclass(frozen=True)
class RunTerm:
    """How far a rerun moves a ratio, beyond what its own rounds and instances show: on the
    2-core VM a run's secured ratios move together, by an amount set for the whole run
    (one run's halves agree within 0.2 %, two runs a minute apart differ by up to 4 %),
    in proportion to the share of the work that security adds, while the A/A arm does not
    move (2026-12-04 and 2026-12-05, docs/background/method.md); throughput ratios move
    from run to run whatever the profile, the A/A arm's too. No resampling within a run
    can see either, so both are measured across runs (benchmarks/calibration.py) and
    carried by the run: `kappa` is the SD of the share's relative change from run to run
    (log scale), `floor` the SD every ratio moves by; a point of ratio r gets
    sqrt(floor² + (kappa · (1 - 1/r))²) (1 - r below 1), added to its interval as the
    InstanceTerm is. The stopping rule and the `wide` flag read the width without it
    (more rounds cannot narrow it)."""
    kappa: float
    floor: float = 0.0

    def log_sd(self, log_ratio: float) -> float:
        return math.hypot(self.floor, self.kappa * (1 - math.exp(-abs(log_ratio))))


def instance_term(pairs: dict[tuple[str, int], list[Pairing]], none_instances: int
                  ) -> InstanceTerm | None:
    """The run's InstanceTerm from its pairings, per (arm, size) grouped by the arm's
    instance: the spread of the instances' trimmed means of the log ratios less what their
    own rounds explain (Tukey-McLaughlin: winsorized variance / ((1 - 2·TRIM)² n)),
    pooled over the points with their degrees of freedom; None with no point of two
    instances of MIN_INSTANCE_ROUNDS rounds each."""
    num = den = 0.0
    groups = 0
    for point_pairs in pairs.values():
        by: dict[int, list[float]] = {}
        for p in point_pairs:
            by.setdefault(p.instance, []).append(p.log_ratio)
        kept = [v for v in by.values() if len(v) >= MIN_INSTANCE_ROUNDS]
        if len(kept) < 2:
            continue
        means = [trimmed_mean(v) for v in kept]
        within = statistics.fmean(_trimmed_mean_variance(v) for v in kept)
        num += (len(kept) - 1) * (statistics.variance(means) - within)
        den += len(kept) - 1
        groups += 1
    if not den:
        return None
    return InstanceTerm(math.sqrt(max(0.0, num / den)), groups, none_instances)


def _trimmed_mean_variance(values: Sequence[float]) -> float:
    """The variance of a TRIM-trimmed mean of `values` (winsorized variance over
    (1 - 2·TRIM)² n)."""
    ordered = sorted(values)
    n = len(ordered)
    k = int(TRIM * n)
    wins = [ordered[k]] * k + ordered[k:n - k] + [ordered[n - k - 1]] * k
    return statistics.variance(wins) / ((1 - 2 * TRIM) ** 2 * n)


@dataclass(frozen=True)
class Overhead:
    ratio: float
    ratio_ci95: tuple[float, float] | None
    added: float
    added_ci95: tuple[float, float] | None
    rounds: int
    instances: int
    block: int
    lag1: float | None
    subsampled: str | None = None   # what the intervals resampled, if not every round
    instance_sd_pct: float | None = None   # the InstanceTerm's share of the ratio (SD, %)
    run_sd_pct: float | None = None        # the RunTerm's (SD, %), when the run carries one
    within_ci95: tuple[float, float] | None = None   # the interval without the RunTerm

    @property
    def halfwidth_pct(self) -> float | None:
        return self._halfwidth(self.ratio_ci95)

    @property
    def within_halfwidth_pct(self) -> float | None:
        """The half-width more rounds can narrow (the RunTerm left out): what the stopping
        rule and the `wide` flag read."""
        return self._halfwidth(self.within_ci95 if self.run_sd_pct is not None
                               else self.ratio_ci95)

    def _halfwidth(self, ci: tuple[float, float] | None) -> float | None:
        if ci is None:
            return None
        lo, hi = ci
        return 100 * max(hi - self.ratio, self.ratio - lo) / self.ratio

    def to_json(self) -> dict:
        return {"ratio": self.ratio, "ratio_ci95": list(self.ratio_ci95) if self.ratio_ci95
                else None, "ratio_halfwidth_pct": self.halfwidth_pct,
                "added": self.added,
                "added_ci95": list(self.added_ci95) if self.added_ci95 else None,
                "rounds": self.rounds, "instances": self.instances, "block_rounds": self.block,
                "lag1_autocorrelation": self.lag1,
                **({"instance_sd_pct": self.instance_sd_pct}
                   if self.instance_sd_pct is not None else {}),
                **({"run_sd_pct": self.run_sd_pct,
                    "ratio_halfwidth_within_pct": self.within_halfwidth_pct}
                   if self.run_sd_pct is not None else {}),
                **({"subsampled": self.subsampled} if self.subsampled else {})}


def _by_instance(rows: list[tuple], column: int) -> list[list[float]]:
    """Per process instance (rows' second column), its values of `column` in round order."""
    groups: dict[int, list[float]] = {}
    for r in sorted(rows, key=lambda r: r[0]):
        groups.setdefault(r[1], []).append(r[column])
    return list(groups.values())


def block_length(series: Sequence[float]) -> tuple[int, float | None]:
    r1 = lag1(series)
    if r1 is not None and r1 > BLOCK_LAG1:
        return max(1, math.ceil(len(series) ** (1 / 3))), r1
    return 1, r1


def overhead(pairs: list[Pairing], seed: str, ratio_only: bool = False,
             resamples: int = BOOTSTRAP_RESAMPLES, term: InstanceTerm | None = None,
             run: RunTerm | None = None) -> Overhead:
    """The arm's overhead over `none` at one size, with its intervals (`ratio_only`: the
    ratio's interval alone, the same one, for the rounds' stopping rule). With the run's
    `term`, the rounds are resampled within each instance and the instances' spread is
    added to every resample (a normal draw, seeded), so the interval covers what another
    set of processes would give; without it, the instances themselves are resampled. With
    the run's RunTerm `run`, the reported intervals also cover what a rerun moves
    (`within_ci95` keeps the ratio's interval without it)."""
    scale = None
    if (term is not None or run is not None) and pairs:
        scale = (statistics.fmean(p.value for p in pairs),
                 statistics.fmean(p.baseline_mean for p in pairs))
    return _estimate([(p.round, p.instance, p.log_ratio, p.added) for p in pairs], seed,
                     ratio_only, resamples, term, scale, run)


def difference(pairs: list[Pairing], reference: list[Pairing], seed: str) -> Overhead | None:
    """One arm against another of the same profile (e.g. its AES-128 arm against its
    AES-256 arm), paired by round: per round, the difference of the two arms' log ratios
    over their own `none` neighbours (so the round's regime cancels twice) and of their
    added µs; the same trimmed mean and hierarchical bootstrap as `overhead` (instances:
    the arm's, each of which meets one instance of the reference in turn). The ratio is
    arm / reference, the difference arm − reference in µs. None without a common round."""
    ref = {p.round: p for p in reference}
    rows = [(p.round, p.instance, p.log_ratio - ref[p.round].log_ratio,
             p.added - ref[p.round].added) for p in pairs if p.round in ref]
    return _estimate(rows, seed) if rows else None


def contrast_pairings(pairs: list[Pairing], reference: list[Pairing]) -> list[Pairing]:
    """One arm over another, paired by round, as pairings `overhead` reads: per round a
    pairing whose log ratio is the arm's minus the reference's (each over its own `none`
    neighbours, so the round's regime cancels) and whose added µs is the arm's minus the
    reference's: value the arm's slot, baseline the reference's slot scaled by the two
    arms' baselines (a version axis: `rtps_sign@11` over `none@11`, govkit.results.versions).
    Rounds without both are left out."""
    ref = {p.round: p for p in reference}
    return [Pairing(p.round, p.instance, p.value, r.value * p.baseline / r.baseline,
                    r.value + p.baseline_mean - r.baseline_mean)
            for p in pairs if (r := ref.get(p.round)) is not None]


def _estimate(rows: list[tuple[int, int, float, float]], seed: str,
              ratio_only: bool = False, resamples: int = BOOTSTRAP_RESAMPLES,
              term: InstanceTerm | None = None, scale: tuple[float, float] | None = None,
              run: RunTerm | None = None) -> Overhead:
    """(round, instance, log ratio, added µs) per round → trimmed means and intervals;
    `term`, `run` and `scale` (the arm's and its baselines' mean level): see `overhead`."""
    ordered = sorted(rows)
    logs = [r[2] for r in ordered]
    adds = [r[3] for r in ordered]
    ratio, added = math.exp(trimmed_mean(logs)), trimmed_mean(adds)
    block, r1 = block_length(logs)
    instances = len({r[1] for r in rows})
    if len(rows) < 3:
        return Overhead(ratio, None, added, None, len(rows), instances, block, r1)
    resampled, note = thinned_rounds(ordered)
    note = with_fewer_resamples(note, resamples)
    stratified = term is not None
    log_dist = _resample_trimmed(_by_instance(resampled, 2), seed + "/ratio", block,
                                 resamples, stratified)
    sd = term.log_sd(instances) if term is not None else None
    if sd:
        log_dist = _with_spread(log_dist, sd, seed + "/ratio/instances")
    lo, hi = percentile_interval(log_dist)
    shown = 100 * sd if sd is not None else None
    within, run_sd = None, None
    if run is not None:
        run_sd = run.log_sd(math.log(ratio))
        within = (math.exp(lo), math.exp(hi))
        if run_sd:
            lo, hi = percentile_interval(_with_spread(log_dist, run_sd, seed + "/ratio/run"))
    shown_run = 100 * run_sd if run_sd is not None else None
    if ratio_only:
        return Overhead(ratio, (math.exp(lo), math.exp(hi)), added, None, len(rows), instances,
                        block, r1, note, shown, shown_run, within)
    add_dist = _resample_trimmed(_by_instance(resampled, 3), seed + "/added", block,
                                 resamples, stratified)
    if term is not None and scale is not None and term.sigma:
        level, base = scale
        add_dist = _with_spread(add_dist, term.sigma * math.sqrt(
            level ** 2 / max(1, instances) + base ** 2 / max(1, term.none_instances)),
            seed + "/added/instances")
    if run_sd and scale is not None:
        # a rerun moves the arm's level by that share, its baselines' not (the A/A arm
        # stays): the added µs moves by the level times it
        add_dist = _with_spread(add_dist, scale[0] * run_sd, seed + "/added/run")
    return Overhead(ratio, (math.exp(lo), math.exp(hi)), added, percentile_interval(add_dist),
                    len(rows), instances, block, r1, note, shown, shown_run, within)


def _with_spread(dist: list[float], sd: float, seed: str) -> list[float]:
    """Each resample plus a seeded normal draw of SD `sd` (the InstanceTerm, the RunTerm)."""
    import hashlib

    import numpy as np

    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8],
                                               "little"))
    return [float(v) for v in np.asarray(dist) + rng.normal(0.0, sd, len(dist))]


def added_distribution(pairs: list[Pairing], seed: str,
                       resamples: int = BOOTSTRAP_RESAMPLES) -> list[float] | None:
    """The bootstrap distribution of an arm's added µs (its trimmed mean per resample),
    drawn exactly as `overhead` draws the interval it reports (same seed, same draws): the
    cost model (govkit.results.cost_model) fits its line through these. None below 3
    rounds."""
    ordered = sorted((p.round, p.instance, p.log_ratio, p.added) for p in pairs)
    if len(ordered) < 3:
        return None
    block, _ = block_length([r[2] for r in ordered])
    resampled, _ = thinned_rounds(ordered)
    return _resample_trimmed(_by_instance(resampled, 3), seed + "/added", block, resamples)


def thinned_rounds(ordered: list[tuple]) -> tuple[list[tuple], str | None]:
    """The rounds an arm's bootstrap resamples: all up to MAX_RESAMPLED_ROUNDS; beyond, every
    n-th in time order (the first kept), with a sentence saying so (None: all). The same cap
    on the bootstrap's work as a point's (govkit.results.stats.thinned): a run of thousands of
    rounds is reported in seconds, and its estimate still uses every round."""
    n = len(ordered)
    if n <= MAX_RESAMPLED_ROUNDS:
        return ordered, None
    step = math.ceil(n / MAX_RESAMPLED_ROUNDS)
    kept = ordered[::step]
    return kept, (f"the interval resamples {len(kept):,} of the {n:,} paired rounds (one in "
                  f"{step}, in time order), a cap on the bootstrap's work; the estimate uses "
                  f"all of them; the interval is the one {len(kept):,} rounds would give, "
                  "wider than one over all")


def level(slots: Sequence[Slot], seed: str) -> tuple[float, tuple[float, float] | None]:
    """An arm's latency at one size: the median of its slot medians over the rounds, with a
    hierarchical bootstrap interval (instances, then rounds)."""
    ok = [s for s in slots if s.usable]
    values = [s.p50 for s in ok]
    value = statistics.median(values)
    if len(values) < 3:
        return value, None
    groups: dict[int, list[float]] = {}
    for s in sorted(ok, key=lambda s: s.round):
        groups.setdefault(s.instance, []).append(s.p50)
    return value, percentile_interval(_resample(list(groups.values()), statistics.median,
                                                seed + "/level", 1))
