"""The per-second lines of ddsperf and of fastdds_perf's per-second mode, read one way.

Both programs print one line per second: latency (count, mean, min, 50/90/99 % and max of
that second, in µs) on the ping side, throughput (samples, lost samples, rate and Mb/s of
that second) on the subscriber side. Their words differ, their rows do not: a program's
`PerSecondLines` is its two patterns, whose named groups are the row's fields, and
everything else (the rows, the first second with samples, when enough seconds are in, the
messages) is the same code for both (the runner-neutral rows of govkit.results.stats).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from govkit.runners.base import BenchPoint, PointResult, RunnerError

LATENCY_FIELDS = ("mean", "min", "p50", "p90", "p99", "max")


@dataclass(frozen=True)
class PerSecondLines:
    """How one program prints its per-second lines. `latency` has the groups t, peer
    (optional), count and LATENCY_FIELDS; `throughput` t, count, lost, rate and mbps, the
    rate in units of `rate_scale` samples/s. `ping` and `sub` name the two sides in
    messages."""
    latency: re.Pattern
    throughput: re.Pattern
    ping: str
    sub: str
    rate_scale: float = 1.0

    def latency_rows(self, text: str, keep: Callable[[str], bool] | None = None
                     ) -> list[dict]:
        """Every latency line as a row (µs); with `keep`, only those whose peer it keeps."""
        return [{"t": float(m["t"]), "count": int(m["count"]),
                 **{k: float(m[k]) for k in LATENCY_FIELDS}}
                for m in self.latency.finditer(text)
                if keep is None or keep(m["peer"])]

    def throughput_rows(self, text: str) -> list[dict]:
        """Subscriber lines as rows, from the first second with samples: the seconds before
        it are the subscriber waiting for the publisher, not a stall. Later seconds without
        samples are kept (rate 0)."""
        rows = [{"t": float(m["t"]), "count": int(m["count"]), "lost": int(m["lost"]),
                 "rate_sps": float(m["rate"]) * self.rate_scale, "mbps": float(m["mbps"])}
                for m in self.throughput.finditer(text)]
        first = next((i for i, r in enumerate(rows) if r["count"] > 0), len(rows))
        return rows[first:]

    def enough(self, mode: str, needed: int) -> Callable[[str], bool]:
        """A primary process's stop condition: `needed` seconds of `mode` are in."""
        if mode == "latency":
            return lambda text: len(self.latency.findall(text)) >= needed
        return lambda text: len(self.throughput_rows(text)) >= needed

    def latency_result(self, text: str, keep: Callable[[str], bool] | None = None
                       ) -> PointResult:
        rows = self.latency_rows(text, keep)
        if not rows:
            raise RunnerError(f"{self.ping} printed no latency lines (did the peer match "
                              f"and answer?)")
        return PointResult("latency-per-second", rows)

    def throughput_result(self, text: str) -> PointResult:
        rows = self.throughput_rows(text)
        if not rows:
            raise RunnerError(f"{self.sub} received no samples (did the publisher match?)")
        return PointResult("throughput-per-second", rows)


def check_seconds(point: BenchPoint, result: PointResult) -> PointResult:
    """`result`, if it holds the point's warm-up and measured seconds; else RunnerError."""
    needed = point.warmup + point.duration
    if len(result.rows) < needed:
        raise RunnerError(f"only {len(result.rows)} of {needed} seconds ({point.warmup} "
                          f"warm-up + {point.duration} measured) arrived (the peer stopped "
                          f"answering?)")
    return result
