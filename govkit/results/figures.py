"""Every figure a repeat yields, named once: the terminal, the CSVs and the HTML report all
take a figure's name from here, so one quantity never goes by two names, and no column
says "p99" for a median of per-second p99s.

The keys are stats.repeat_figures' (and results.json's); the perftest-compatible CSV
columns keep perftest's own titles for the figures perftest has (govkit.results.perftest_csv).
"""

from __future__ import annotations

from dataclasses import dataclass

UNITS = {"us": "µs", "int": "", "rate": "samples/s", "mbps": "Mbit/s", "pct": "%",
         "core_pct": "% of a core"}


@dataclass(frozen=True)
class Figure:
    key: str
    name: str          # what the figure is, exactly
    kind: str          # its unit and formatter: us | int | rate | mbps | pct | core_pct

    def titled(self, ascii_units: bool = False) -> str:
        """The name with its unit: 'p99 of all samples (µs)' (CSV: '(us)')."""
        unit = UNITS[self.kind]
        if ascii_units and self.kind == "us":
            unit = "us"
        return f"{self.name} ({unit})" if unit else self.name


def tail_p99(of_samples: float | None, median_of_seconds: float | None) -> float | None:
    """A point's tail as its runner gives it: the p99 of all samples (rotation), else the
    median of the per-second p99s."""
    return of_samples if of_samples is not None else median_of_seconds


FIGURES: dict[str, Figure] = {f.key: f for f in (
    # latency, one pair's per-second rows (ddsperf, fastdds)
    Figure("median_of_second_medians", "Median of per-second medians", "us"),
    Figure("p90_median_of_seconds", "p90: median of the per-second p90s", "us"),
    Figure("p99_median_of_seconds", "p99: median of the per-second p99s", "us"),
    Figure("p99_worst_second", "p99: worst second", "us"),
    Figure("std_of_second_means", "Std of per-second means", "us"),
    # latency over every sample (rotation slots' histograms, a runner's own summary)
    Figure("median_of_samples", "Median of all samples", "us"),
    Figure("p90_of_samples", "p90 of all samples", "us"),
    Figure("p99_of_samples", "p99 of all samples", "us"),
    Figure("p99_9_of_samples", "p99.9 of all samples", "us"),
    Figure("mean_of_samples", "Mean of all samples", "us"),
    Figure("std_of_samples", "Std of all samples", "us"),
    Figure("min", "Min sample", "us"),
    Figure("max", "Max sample", "us"),
    # latency by rotation
    Figure("median_of_slot_medians", "Median of slot medians", "us"),
    Figure("std_of_slot_medians", "Std of slot medians", "us"),
    Figure("cpu_pct_ping", "CPU of the ping process", "core_pct"),
    Figure("cpu_pct_pong", "CPU of the pong process", "core_pct"),
    # throughput
    Figure("mean_rate_sps", "Mean rate", "rate"),
    Figure("mean_mbps", "Mean rate", "mbps"),
    Figure("lost", "Lost samples", "int"),
    Figure("stalled_seconds", "Seconds without samples", "int"),
    Figure("median_of_slot_rates", "Median of slot rates", "rate"),
    Figure("rexmit_bytes", "Retransmitted bytes (injected loss)", "int"),
    Figure("rexmit_share_pct", "Retransmitted / delivered payload", "pct"),
)}
