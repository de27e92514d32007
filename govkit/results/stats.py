"""Every figure `govkit bench` reports, computed from the runners' raw rows alone.

A runner hands over what it read (govkit.runners.base.PointResult): ddsperf prints one
summary line per second, so its rows are per-second summaries; RTI Perftest prints one
end-of-run summary. Nothing here knows how a row was obtained beyond its `row_format`,
and nothing here is stored that cannot be recomputed from the rows: `govkit report`
recomputes all of it from results.json.

Terms used in names, so that each figure says what it is:
- a *point* is one (profile, mode, size) over one network (transport, path, injected
  loss: govkit.runners.network); a *repeat* is one run of its two processes;
- a *second* is one reporting interval of a repeat; the first `warmup` seconds of each
  repeat are kept in the raw data but not measured;
- ddsperf computes each second's percentiles itself, over (at most) the first 20000
  samples of that second: govkit never sees single samples, so it reports medians *of
  per-second* medians, never "the median".

Intervals are 95 % two-stage percentile bootstraps: resample the repeats, then the measured
seconds within each drawn repeat, recompute the statistic; 2000 resamples from a seed
derived from the point's name, so the same rows always give the same interval. The work is
2000 × the values resampled, so a point holding more than a cap of them (tens of thousands
of seconds or repeats) is resampled over an evenly spaced subsample (`thinned`): its
estimate still uses every value, its interval is the one a run of that many values would
have, and the point says so (the `subsampled_interval` note).
"""

from __future__ import annotations

import hashlib
import math
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from govkit.results.record import RecordInvalid, Repeat, Slot

BOOTSTRAP_RESAMPLES = 2000
CONFIDENCE = 0.95
# The most values one point's bootstrap resamples, and all points' together (a report's
# cost is 2000 × the values resampled, about 50 ns each on the 2-core VM; a long run of 8
# sizes × 7 profiles × 8 repeats × 30 s still resamples all of its 13,440): above that, an
# evenly spaced subsample (`thinned`).
MAX_RESAMPLED = 1000
MAX_RESAMPLED_TOTAL = 16_000
MIN_RESAMPLED = 100       # the least any point keeps when the run has very many points
# The bootstrap resamples of all points (and of all paired overheads) together: a run of
# hundreds of points gets fewer per point, no fewer than MIN_BOOTSTRAP_RESAMPLES. Each
# point's bootstrap has a fixed cost besides its values (a report of 900 points spent 8 s
# on them at 2000 each).
MAX_BOOTSTRAP_RESAMPLES_TOTAL = 240_000     # 120 points at 2000
MIN_BOOTSTRAP_RESAMPLES = 500
SUBSAMPLE_METHOD = (
    f"A point with more measured values than the cap ({MAX_RESAMPLED:,}, less when a run "
    f"holds more than {MAX_RESAMPLED_TOTAL:,} in all) is resampled over an evenly spaced "
    "subsample of them (every n-th second of each repeat, and every n-th repeat when there "
    "are more repeats than half the cap), and flagged subsampled_interval: its estimate uses "
    "every value, its interval is the one a run of the subsample's size would have (wider "
    "than one over all of them).")
FEWER_RESAMPLES_METHOD = (
    f"A run of more than {MAX_BOOTSTRAP_RESAMPLES_TOTAL // BOOTSTRAP_RESAMPLES} points "
    f"draws fewer resamples per point (at least {MIN_BOOTSTRAP_RESAMPLES}), each such point "
    "flagged subsampled_interval.")
FEWER_RESAMPLES_NOTE = "bootstrap resamples, not"     # in the flag's reason (below)
INTERVAL_METHOD = (
    "95% two-stage percentile bootstrap: resample the repeats with replacement, then the "
    "measured seconds within each drawn repeat, recompute the statistic; "
    f"{BOOTSTRAP_RESAMPLES} resamples, seeded by the point's name (the same raw rows always "
    "give the same interval). Overheads: the profile's and none's resamples paired by index "
    "(independent runs), ratio and added amount taken per resample. " + SUBSAMPLE_METHOD)

# Flag thresholds (see `flags`): chosen so that pure per-second noise of the size seen on
# a 2-core VM (about 10 % standard deviation between seconds) does not raise them.
BIMODAL_GAP = 0.15        # a gap of 15 % of the median between two groups of seconds ...
BIMODAL_SHARE = 0.25      # ... each holding at least a quarter of them
TREND_MIN = 0.05          # first vs last third of the measured seconds differ by > 5 % ...
HIST_BASE = 1.01          # cyclone_perf's histogram bins (1 %)
TREND_SIGMAS = 2.0        # ... and by more than 2 standard errors over the repeats


# ----------------------------------------------------------------------- row formats

@dataclass(frozen=True)
class RowFormat:
    """How to read one runner's rows: which per-row value the point statistic pools, the
    numbers each row must hold, and the figures a repeat of them yields."""
    name: str
    mode: str                      # latency | throughput
    value_key: str | None          # per-row value pooled over seconds; None: summary only
    statistic: str                 # exact name of the point statistic
    pooled: Callable[[Sequence[float]], float]
    unit: str
    # The numbers each raw row (a summary-only runner: its summary; a rotating run: each
    # usable slot) must hold: what results.check requires before anything is computed.
    row_keys: tuple[str, ...]
    # The figures a repeat yields (repeat_figures' keys, named in results.figures), in the
    # order the report's per-repeat table shows them.
    figures: tuple[str, ...]
    rotating: bool = False         # a rotating run's slots (rotation.slots), not a repeat's


# Any runner uses one of these (its `method` says how the rows come about):
# latency-per-second rows: t, count, mean, min, p50, p90, p99, max (µs, one second each);
# throughput-per-second rows: t, count, lost, rate_sps, mbps (seconds without samples kept);
# *-slots: a rotating run's slots (govkit.bench.rotation), one row per slot;
# *-summary: no rows, the runner's own end-of-run sample statistics in `summary`.
ROW_FORMATS = {f.name: f for f in (
    RowFormat("latency-per-second", "latency", "p50",
              "median of per-second medians (one-way latency)", statistics.median, "us",
              row_keys=("count", "mean", "min", "p50", "p90", "p99", "max"),
              figures=("median_of_second_medians", "p90_median_of_seconds",
                       "p99_median_of_seconds", "p99_worst_second", "mean_of_samples",
                       "std_of_second_means", "min", "max")),
    RowFormat("throughput-per-second", "throughput", "rate_sps",
              "mean of per-second rates (seconds without samples count as 0)",
              statistics.fmean, "samples/s",
              row_keys=("count", "lost", "rate_sps", "mbps"),
              figures=("mean_rate_sps", "mean_mbps", "lost", "stalled_seconds")),
    RowFormat("latency-slots", "latency", "p50",
              "median of slot medians (one-way latency; each slot's median exact over its "
              "round trips)", statistics.median, "us",
              row_keys=("count", "mean", "min", "max", "p50", "p99"),
              figures=("median_of_slot_medians", "median_of_samples", "p90_of_samples",
                       "p99_of_samples", "p99_9_of_samples", "mean_of_samples",
                       "std_of_slot_medians", "min", "max", "cpu_pct_ping", "cpu_pct_pong"),
              rotating=True),
    RowFormat("throughput-slots", "throughput", "rate_sps",
              "median of slot rates (samples/s received; each slot's rate: samples after the "
              "first arrival over the time from the first arrival to the last)",
              statistics.median, "samples/s",
              row_keys=("count", "later_n", "span_us", "lost", "rate_sps"),
              figures=("median_of_slot_rates", "mean_rate_sps", "mean_mbps", "lost",
                       "cpu_pct_ping", "cpu_pct_pong"),
              rotating=True),
    RowFormat("latency-summary", "latency", None,
              "median over repeats of each run's sample median (one-way latency)",
              statistics.median, "us", row_keys=("median_of_samples",),
              figures=("median_of_samples", "p90_of_samples", "p99_of_samples",
                       "mean_of_samples", "std_of_samples", "min", "max")),
    RowFormat("throughput-summary", "throughput", None,
              "mean over repeats of each run's average rate", statistics.fmean, "samples/s",
              row_keys=("mean_rate_sps",), figures=("mean_rate_sps", "mean_mbps", "lost")),
)}
# A rotating run's slots as a point's raw rows, per mode.
ROTATION_FORMAT = {f.mode: f.name for f in ROW_FORMATS.values() if f.rotating}


def row_format(name: str) -> RowFormat:
    if name not in ROW_FORMATS:
        raise ValueError(f"unknown row format {name!r}")
    return ROW_FORMATS[name]


def measured(rows: list[dict], warmup: int, duration: int) -> list[dict]:
    """The rows that count: after `warmup` seconds, at most `duration` of them."""
    return rows[warmup:warmup + duration]


# ----------------------------------------------------------------- one repeat's figures

def pstdev(values: Sequence[float]) -> float:
    """statistics.pstdev of finite numbers, to the bit: the float nearest the square root
    of their exact population variance. In integers: statistics does it in Fractions, about
    0.1 ms a call, and a report computes one per repeat (tens of thousands of them)."""
    ratios = [v.as_integer_ratio() for v in values]
    scale = max(d for _, d in ratios)       # powers of two: each divides the largest
    ints = [n * (scale // d) for n, d in ratios]
    count = len(ints)
    total = sum(ints)
    # variance = (count * Σx² - (Σx)²) / (count * scale)², exactly
    return _sqrt_of_ratio(count * sum(x * x for x in ints) - total * total,
                          (count * scale) ** 2)


_SQRT_BITS = 2 * 53 + 3   # bits of the integer root: the float's 53 and room to round once


def _sqrt_of_ratio(n: int, m: int) -> float:
    """The float nearest sqrt(n / m) (n >= 0, m > 0): an integer square root of about
    _SQRT_BITS // 2 bits, its last bit set where it is inexact (round to odd), so the one
    rounding to float that follows is the correct one."""
    shift = (n.bit_length() - m.bit_length() - _SQRT_BITS) // 2
    if shift >= 0:
        m <<= 2 * shift
    else:
        n <<= -2 * shift
    root = math.isqrt(n // m)
    root |= root * root * m != n
    return float(root << shift) if shift >= 0 else root / (1 << -shift)

def latency_figures(rows: list[dict]) -> dict:
    """One repeat's latency figures (µs) from its measured per-second rows."""
    p50 = [r["p50"] for r in rows]
    p90 = [r["p90"] for r in rows]
    p99 = [r["p99"] for r in rows]
    means = [r["mean"] for r in rows]
    counts = [r["count"] for r in rows]
    total = sum(counts)
    return {
        "median_of_second_medians": statistics.median(p50),
        "p90_median_of_seconds": statistics.median(p90),
        "p99_median_of_seconds": statistics.median(p99),
        "p99_worst_second": max(p99),
        # each second's mean weighted by its count is the exact mean of all samples
        "mean_of_samples": sum(m * c for m, c in zip(means, counts, strict=True)) / total,
        "std_of_second_means": pstdev(means) if len(means) > 1 else 0.0,
        "min": min(r["min"] for r in rows),
        "max": max(r["max"] for r in rows),
    }


def slot_figures(rows: Sequence[Slot]) -> dict:
    """One process pair's latency figures (µs) from its slots (govkit.bench.rotation): true
    sample percentiles pooled from the slots' 1 % histograms, the exact mean of all samples,
    and the median and spread of the slot medians."""
    pooled = pooled_percentiles(rows) or {}
    counts = [r.count for r in rows]
    total = sum(counts)
    p50 = [r.p50 for r in rows]
    return {
        "median_of_slot_medians": statistics.median(p50),
        "std_of_slot_medians": pstdev(p50) if len(p50) > 1 else 0.0,
        "median_of_samples": pooled.get("p50"),
        "p90_of_samples": pooled.get("p90"),
        "p99_of_samples": pooled.get("p99"),
        "p99_9_of_samples": pooled.get("p99_9"),
        "mean_of_samples": sum(r.mean * c for r, c in zip(rows, counts, strict=True))
        / total if total else None,
        "min": min(r.min for r in rows),
        "max": max(r.max for r in rows),
        "cpu_pct_ping": _cpu_pct(rows, "cpu_us") or 0.0,
        "cpu_pct_pong": _cpu_pct(rows, "pong_cpu_us"),
    }


def _cpu_pct(rows: Sequence[Slot], key: str) -> float | None:
    """CPU time over wall time of the slots that recorded `key` (runs before 2026-12-02
    did not record the pong's), in % of a core; the ping's over every slot's wall time."""
    had = [r for r in rows if getattr(r, key) is not None]
    if not had:
        return None
    over = rows if key == "cpu_us" else had
    return 100 * sum(getattr(r, key) for r in had) / max(1, sum(r.wall_us or 0 for r in over))


def throughput_slot_figures(rows: Sequence[Slot]) -> dict:
    """One process pair's throughput figures from its slots (govkit.bench.rotation): the
    rate over all its slots together (samples after each slot's first arrival over the
    slots' summed spans), in samples/s and payload Mbit/s, samples lost, and CPU."""
    later = sum(r.later_n or 0 for r in rows)
    span_s = sum(r.span_us or 0 for r in rows) / 1e6
    rate = later / span_s if span_s > 0 else 0.0
    size = rows[0].size if rows else 0
    return {
        "mean_rate_sps": rate,
        "mean_mbps": rate * size * 8 / 1e6,
        "median_of_slot_rates": statistics.median(r.rate_sps for r in rows),
        "lost": sum(r.lost or 0 for r in rows),
        "stalled_seconds": 0,
        "cpu_pct_ping": _cpu_pct(rows, "cpu_us") or 0.0,
        "cpu_pct_pong": _cpu_pct(rows, "pong_cpu_us"),
    }


def throughput_figures(rows: list[dict]) -> dict:
    """One repeat's throughput figures from its measured per-second rows (stalls = 0).

    Rows of a run with injected loss also hold `rexmit_bytes` (the publisher's
    retransmitted bytes in that second, ddsperf -X): summed, and set against the payload
    bytes delivered in the same seconds (ddsperf's Mb/s counts payload only, a
    retransmission counts whole RTPS messages: the share is an upper estimate)."""
    figures = {
        "mean_rate_sps": statistics.fmean(r["rate_sps"] for r in rows),
        "mean_mbps": statistics.fmean(r["mbps"] for r in rows),
        "lost": sum(r["lost"] for r in rows),
        "stalled_seconds": sum(1 for r in rows if r["count"] == 0),
    }
    if any("rexmit_bytes" in r for r in rows):
        known = [r for r in rows if r.get("rexmit_bytes") is not None]
        delivered = sum(r["mbps"] for r in known) * 1e6 / 8
        figures["rexmit_bytes"] = sum(r["rexmit_bytes"] for r in known)
        figures["rexmit_seconds"] = len(known)
        figures["rexmit_share_pct"] = (100 * figures["rexmit_bytes"] / delivered
                                       if delivered else None)
    return figures


def repeat_figures(record: Repeat | dict) -> tuple[dict, int | None]:
    """(figures, sample count) of one ok repeat record, recomputed from its raw data (a
    runner's result as JSON is read as a Repeat first: govkit.bench's, as it stores it)."""
    if not isinstance(record, Repeat):
        record = Repeat.from_json(record)
    fmt = row_format(record.format)
    if fmt.value_key is None:               # the runner's own end-of-run summary
        return dict(record.summary), record.summary.get("count")
    rows = record.measured()
    if not rows:
        raise RecordInvalid("no measured rows")
    if fmt.rotating:
        figures = slot_figures(rows) if fmt.mode == "latency" else throughput_slot_figures(rows)
        return figures, sum(r.count for r in rows)
    figures = latency_figures(rows) if fmt.mode == "latency" else throughput_figures(rows)
    return figures, sum(r["count"] for r in rows)


def repeat_values(record: Repeat | dict, key: str | None = None) -> list[float]:
    """The measured per-second values of `key` (default: the one its point's statistic
    pools; a rotating run's: its slots' values), in time order; one value for a
    summary-only runner."""
    if not isinstance(record, Repeat):
        record = Repeat.from_json(record)
    fmt = row_format(record.format)
    if fmt.value_key is None:
        return [record.summary[SUMMARY_VALUE_KEYS[fmt.mode]]]
    if fmt.rotating:
        return [getattr(r, key or fmt.value_key) for r in record.measured()]
    return [r[key or fmt.value_key] for r in record.measured()]


# A summary-only runner's value per mode (its end-of-run summary's).
SUMMARY_VALUE_KEYS = {"latency": "median_of_samples", "throughput": "mean_rate_sps"}


# -------------------------------------------------------------------------- intervals

def bootstrap(groups: list[list[float]], statistic: Callable[[Sequence[float]], float],
              seed: str, resamples: int = BOOTSTRAP_RESAMPLES) -> list[float]:
    """Two-stage bootstrap distribution of `statistic` over the pooled values.

    Exactly what this loop gives, value for value (the same random.Random(seed) stream, so
    an interval stored by an earlier govkit is recomputed unchanged), vectorised:

        rand = random.Random(seed).random
        for _ in range(resamples):
            pooled = []
            for _ in range(len(groups)):
                g = groups[int(rand() * len(groups))]
                pooled += [g[int(rand() * len(g))] for _ in range(len(g))]
            out.append(statistic(pooled))

    Only where that stream cannot be followed cheaply (repeats of unequal lengths, more
    than EXACT_GROUPS of them) are the same draws made from numpy's own generator, seeded
    by the same name."""
    import numpy as np

    sizes = np.array([len(g) for g in groups], dtype=np.intp)
    values = np.array([v for g in groups for v in g], dtype=float)
    flat, lengths = _draws(sizes, seed, resamples)
    if statistic is statistics.median:
        return _medians(values, flat, lengths)
    drawn = values[flat].tolist()
    ends = np.cumsum(lengths).tolist()
    starts = [0, *ends[:-1]]
    if statistic is statistics.fmean:       # fmean is fsum / n: the same, to the bit
        return [math.fsum(drawn[a:b]) / (b - a) for a, b in zip(starts, ends, strict=True)]
    return [statistic(drawn[a:b]) for a, b in zip(starts, ends, strict=True)]


# Repeats of unequal lengths: the stream is followed draw by draw (a Python step per drawn
# repeat) up to this many repeats; beyond, numpy's generator draws them.
EXACT_GROUPS = 64


def _python_stream(seed: str):
    """A numpy RandomState that continues random.Random(seed): both are MT19937 and make
    a double from two 32-bit outputs the same way, so random_sample() gives the very
    numbers random() would."""
    import numpy as np

    _, state, _ = random.Random(seed).getstate()
    rs = np.random.RandomState()
    rs.set_state(("MT19937", np.array(state[:624], dtype=np.uint32), state[624], 0, 0.0))
    return rs


def _draws(sizes, seed: str, resamples: int):
    """Every resample's draws as indices into the pooled values (the groups one after the
    other), flat, and each resample's length."""
    import numpy as np

    k = len(sizes)
    offsets = np.cumsum(sizes) - sizes
    if (sizes == sizes[0]).all():                    # each resample: k × (1 + m) numbers
        m = int(sizes[0])
        u = _python_stream(seed).random_sample((resamples, k, 1 + m))
        chosen = (u[:, :, 0] * k).astype(np.intp)
        flat = offsets[chosen][:, :, None] + (u[:, :, 1:] * m).astype(np.intp)
        return flat.reshape(-1), np.full(resamples, k * m, dtype=np.intp)
    if k <= EXACT_GROUPS:
        # Where each repeat is drawn depends on the lengths of those drawn before it: walk
        # the stream from draw to draw (one Python step per drawn repeat), the rest in numpy.
        # Only the draws that choose a repeat are read, through a memoryview (a Python
        # float each, the same double): the buffer holds every value drawn too, up to
        # millions of numbers, and turning them all into Python objects cost more than the
        # walk itself.
        rs = _python_stream(seed)
        buf = rs.random_sample(resamples * (k + int(sizes.sum())))
        steps = (1 + sizes).tolist()
        at: list[int] = []
        append, pos, need = at.append, 0, resamples * k
        while len(at) < need:
            draw, end, taken = memoryview(buf), len(buf), len(at)
            while taken < need and pos < end:
                append(pos)
                pos += steps[int(draw[pos] * k)]
                taken += 1
            if len(at) < need:
                buf = np.concatenate((buf, rs.random_sample(len(buf))))
        if pos > len(buf):
            buf = np.concatenate((buf, rs.random_sample(pos - len(buf))))
        drawn_at = np.array(at, dtype=np.intp)
        chosen_a = (buf[drawn_at] * k).astype(np.intp)
        counts = sizes[chosen_a]
        first = np.cumsum(counts) - counts
        where = np.repeat(drawn_at + 1 - first, counts) + np.arange(int(counts.sum()))
        u = buf[where]
    else:
        rng = np.random.default_rng(list(hashlib.sha256(seed.encode()).digest()))
        chosen_a = rng.integers(0, k, size=resamples * k)
        counts = sizes[chosen_a]
        u = rng.random(int(counts.sum()))
    flat = np.repeat(offsets[chosen_a], counts) + (u * np.repeat(counts, counts)).astype(np.intp)
    return flat, counts.reshape(resamples, k).sum(axis=1)


def _medians(values, flat, lengths) -> list[float]:
    """The median of each resample (statistics.median's: the middle value, or the mean of
    the two middle ones), from counts of the drawn values' ranks: no sort per resample."""
    import numpy as np

    n = len(values)
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    rank = np.empty(n, dtype=np.intp)
    rank[order] = np.arange(n)
    ends = np.cumsum(lengths)
    out: list[float] = []
    rows = max(1, (1 << 22) // max(n, 1))            # counts of ≤ 4 M cells at a time
    for a in range(0, len(lengths), rows):
        b = min(a + rows, len(lengths))
        lo, hi = (ends[a] - lengths[a]), ends[b - 1]
        which = np.repeat(np.arange(b - a), lengths[a:b])
        counts = np.bincount(which * n + rank[flat[lo:hi]], minlength=(b - a) * n)
        cum = counts.reshape(b - a, n).cumsum(axis=1)
        size = lengths[a:b]
        low = (cum <= ((size - 1) // 2)[:, None]).sum(axis=1)   # ranks of the middle two
        high = (cum <= (size // 2)[:, None]).sum(axis=1)
        out += ((ranked[low] + ranked[high]) / 2).tolist()
    return out


def thinned(groups: list[list[float]], cap: int = MAX_RESAMPLED
            ) -> tuple[list[list[float]], str | None]:
    """The values a point's bootstrap resamples: all of them up to `cap`; beyond, every
    n-th repeat (when there are more than cap / 2) and every n-th second of each kept one
    (in time order, the first kept), with a sentence saying exactly that (None: all)."""
    total = sum(len(g) for g in groups)
    if total <= cap:
        return groups, None
    step_r = math.ceil(len(groups) / (cap // 2)) if len(groups) > cap // 2 else 1
    kept = groups[::step_r]
    in_kept = sum(len(g) for g in kept)
    step_s = math.ceil(in_kept / cap) if in_kept > cap else 1
    kept = [g[::step_s] for g in kept]
    used = sum(len(g) for g in kept)
    seconds = f"every {_nth(step_s)} measured second" if step_s > 1 else \
        "every measured second"
    repeats = f"every {_nth(step_r)} repeat: {len(kept):,} of {len(groups):,}" \
        if step_r > 1 else "every repeat"
    return kept, (f"the interval resamples {used:,} of the {total:,} measured values "
                  f"({seconds} of {repeats}), a cap on the bootstrap's work; the estimate "
                  f"uses all of them; the interval is the one {used:,} values would give, "
                  "wider than one over all")


def _nth(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def percentile_interval(dist: list[float], confidence: float = CONFIDENCE
                        ) -> tuple[float, float]:
    s = sorted(dist)
    n = len(s)
    tail = (1 - confidence) / 2
    return s[max(0, math.ceil(tail * n) - 1)], s[min(n - 1, math.ceil((1 - tail) * n) - 1)]


@dataclass(frozen=True)
class Estimate:
    """A point's statistic over all its measured seconds, with its bootstrap distribution."""
    value: float
    interval: tuple[float, float] | None   # None: too little data for an interval
    dist: list[float]
    subsampled: str | None = None          # what the interval resampled, if not all (thinned)

    @property
    def halfwidth_pct(self) -> float | None:
        if self.interval is None or not self.value:
            return None
        lo, hi = self.interval
        return 100 * max(hi - self.value, self.value - lo) / abs(self.value)


def estimate(groups: list[list[float]], statistic: Callable[[Sequence[float]], float],
             seed: str, cap: int = MAX_RESAMPLED, resamples: int = BOOTSTRAP_RESAMPLES
             ) -> Estimate:
    pooled = [v for g in groups for v in g]
    value = statistic(pooled)
    if len(pooled) < 2:
        return Estimate(value, None, [])
    resampled, note = thinned(groups, cap)
    dist = bootstrap(resampled, statistic, seed, resamples)
    return Estimate(value, percentile_interval(dist), dist,
                    with_fewer_resamples(note, resamples))


def resamples_for(points: int) -> int:
    """The bootstrap resamples of each of a run's `points` points (or paired overheads)."""
    return max(MIN_BOOTSTRAP_RESAMPLES,
               min(BOOTSTRAP_RESAMPLES, MAX_BOOTSTRAP_RESAMPLES_TOTAL // max(1, points)))


def with_fewer_resamples(note: str | None, resamples: int) -> str | None:
    """A subsampled interval's note, saying so too when it drew fewer resamples than
    BOOTSTRAP_RESAMPLES."""
    if resamples >= BOOTSTRAP_RESAMPLES:
        return note
    fewer = (f"the interval from {resamples:,} {FEWER_RESAMPLES_NOTE} "
             f"{BOOTSTRAP_RESAMPLES:,}: a cap on the bootstrap's work in a run of this many "
             "points (its bounds vary a little more with the seed)")
    return f"{note}; {fewer}" if note else fewer


def compare(mine: Estimate, base: Estimate) -> dict:
    """`mine` over `base`, two independent estimates: the ratio and what `mine` adds
    (mine − base; µs, or samples/s), each with its interval."""
    out = {"ratio": mine.value / base.value if base.value else None, "ratio_ci95": None,
           "added": mine.value - base.value, "added_ci95": None}
    if mine.dist and base.dist:
        if out["ratio"] is not None and all(base.dist):
            out["ratio_ci95"] = list(percentile_interval(
                [a / b for a, b in zip(mine.dist, base.dist, strict=True)]))
        out["added_ci95"] = list(percentile_interval(
            [a - b for a, b in zip(mine.dist, base.dist, strict=True)]))
    return out


# ------------------------------------------------------------------------------ flags

def bimodal(values: list[float]) -> tuple[float, float] | None:
    """Medians of the two groups if the values split into two well separated groups."""
    v = sorted(values)
    n = len(v)
    least = max(2, math.ceil(BIMODAL_SHARE * n))
    if n < 2 * least:
        return None
    median = statistics.median(v)
    gap, at = max((v[i + 1] - v[i], i) for i in range(least - 1, n - least))
    if median <= 0 or gap <= BIMODAL_GAP * median:
        return None
    return statistics.median(v[:at + 1]), statistics.median(v[at + 1:])


def trend(groups: list[list[float]]) -> float | None:
    """Mean relative change from the first to the last third of each repeat's measured
    seconds (positive: falling), if it exceeds TREND_MIN and TREND_SIGMAS standard errors.

    The per-second noise is estimated from successive differences, which a trend inflates
    rather than hides, so a steady drift is not mistaken for noise nor noise for a drift.
    """
    changes, noise, k_total = [], [], 0
    for g in groups:
        if len(g) < 2:
            continue
        mid = statistics.median(g)
        if not mid:
            continue
        k = max(1, len(g) // 3)
        changes.append((statistics.fmean(g[:k]) - statistics.fmean(g[-k:])) / mid)
        noise += [((b - a) / mid) ** 2 / 2 for a, b in zip(g, g[1:], strict=False)]
        k_total += k
    if not changes or not noise:
        return None
    mean = statistics.fmean(changes)
    sigma = math.sqrt(statistics.fmean(noise))
    # each repeat's change is a difference of two means of k seconds: variance 2 σ² / k
    se = sigma * math.sqrt(2 * len(changes) / k_total) / math.sqrt(len(changes))
    if abs(mean) > TREND_MIN and abs(mean) > TREND_SIGMAS * se:
        return mean
    return None


# ------------------------------------------------------------- slots (govkit.bench.rotation)


def histogram(slot: dict) -> list[tuple[int, int]]:
    """A slot's histogram, stored as cyclone_perf prints it: "bin:count,bin:count,…"."""
    text = slot.get("hist") or ""
    return [(int(b), int(c)) for b, _, c in (x.partition(":") for x in text.split(",") if x)]


def _pooled_bins(texts: list[str]) -> dict[int, int]:
    """The slots' histograms added up, bin by bin. All texts parsed at once by numpy (a
    rotating run of thousands of rounds holds millions of bins; the report pools them for
    every point and every process pair)."""
    import numpy as np

    text = ",".join(t.strip(",") for t in texts if t.strip(","))
    if not text:
        return {}
    # numpy's own text parser: millions of "bin:count" integers without a Python string
    # each (the text has passed govkit.results.check's or the runner's pattern, so every
    # field is an integer of at most 13 digits)
    pairs = np.fromstring(text.replace(":", ","), dtype=np.int64, sep=",").reshape(-1, 2)
    pairs = pairs[np.argsort(pairs[:, 0], kind="stable")]
    starts = np.flatnonzero(np.r_[True, pairs[1:, 0] != pairs[:-1, 0]])
    sums = np.add.reduceat(pairs[:, 1], starts)          # in integers: exact
    return {int(b): int(c) for b, c in zip(pairs[starts, 0], sums, strict=True) if c}


def pooled_percentiles(slots: Sequence[Slot], quantiles=(0.5, 0.9, 0.99, 0.999)
                       ) -> dict | None:
    """True sample percentiles over every measured round trip of the usable slots, from
    their 1 % histograms (nearest rank; each bin's geometric centre, so within ±0.5 %)."""
    bins = _pooled_bins([s.hist or "" for s in slots if s.usable])
    total = sum(bins.values())
    if not total:
        return None
    out, seen, order = {}, 0, sorted(bins.items())
    wanted = sorted(quantiles)
    i = 0
    for b, c in order:
        seen += c
        while i < len(wanted) and seen >= math.ceil(wanted[i] * total):
            out[f"p{wanted[i] * 100:g}".replace(".", "_")] = HIST_BASE ** (b + 0.5) / 1e3
            i += 1
    return {"samples": total, **out}
