"""A summary row as a record: what the report, the terminal tables and the gates read of
one point (govkit.results.summary.summarize writes the rows; results.json stores them).

`PointSummary.from_json` reads a row as summarize made it or as results.json stored it
(its overheads under today's names: govkit.results.record.with_current_names), every
figure an attribute; the row itself stays in `source` (the report compares the stored
one with the recomputed one as JSON).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from govkit.results.record import EMPTY, RecordInvalid, Variant
from govkit.runners.network import Network

Interval = tuple[float, float]


def _interval(v: Any) -> Interval | None:
    return None if v is None else (v[0], v[1])


@dataclass(frozen=True)
class Flag:
    """A flag raised on a point (govkit.results.flags)."""
    code: str
    severity: str
    reason: str

    @property
    def warning(self) -> bool:
        return self.severity == "warning"

    @classmethod
    def from_json(cls, data: Mapping) -> Flag:
        return cls(data["code"], data["severity"], data["reason"])


@dataclass(frozen=True)
class Relative:
    """A figure over a reference (`none`, or the run's first network): as a ratio and as
    what it adds, each with its interval; a paired overhead's rounds and widths too
    (govkit.results.paired.Overhead.to_json; a per-repeat run's: stats.compare)."""
    ratio: float | None
    ratio_ci95: Interval | None = None
    added: float | None = None
    added_ci95: Interval | None = None
    halfwidth_pct: float | None = None     # ratio_halfwidth_pct (paired)
    within_halfwidth_pct: float | None = None   # ... without the run-to-run term
    rounds: int | None = None
    run_sd_pct: float | None = None
    subsampled: str | None = None
    network: str | None = None             # vs_network: the reference network's label

    @classmethod
    def from_json(cls, data: Mapping | None) -> Relative | None:
        if not data:
            return None
        g = data.get
        width = g("ratio_halfwidth_pct")
        return cls(g("ratio"), _interval(g("ratio_ci95")), g("added"),
                   _interval(g("added_ci95")), width,
                   g("ratio_halfwidth_within_pct", width), g("rounds"), g("run_sd_pct"),
                   g("subsampled"), g("network"))


@dataclass(frozen=True)
class Tail:
    """A latency point's tail: per-second p99s (per-repeat runs), or of every sample
    (rotating runs)."""
    p99_median_of_seconds: float | None = None
    p99_worst_second: float | None = None
    p99_of_samples: float | None = None
    p99_9_of_samples: float | None = None
    p99_worst_slot: float | None = None

    @classmethod
    def from_json(cls, data: Mapping | None) -> Tail:
        g = (data or EMPTY).get
        return cls(g("p99_median_of_seconds"), g("p99_worst_second"), g("p99_of_samples"),
                   g("p99_9_of_samples"), g("p99_worst_slot"))


@dataclass(frozen=True)
class Published:
    """RTI's published Connext figures beside a point (govkit.catalog.rti_published)."""
    ratio: float
    added_us: float
    median_us: float | None = None

    @classmethod
    def from_json(cls, data: Mapping | None) -> Published | None:
        return None if not data else cls(data["ratio"], data["added_us"],
                                         data.get("median_us"))


@dataclass(frozen=True)
class Discovery:
    """A discovery row's figures (govkit.results.discovery), in seconds."""
    peers: int | None = None
    groups: int = 0
    failed_groups: int = 0
    all_matched_s: float | None = None
    median_participant_s: float | None = None
    first_participant_s: float | None = None

    @classmethod
    def from_json(cls, data: Mapping) -> Discovery:
        g = data.get
        return cls(g("peers"), g("groups") or 0, g("failed_groups") or 0, g("all_matched_s"),
                   g("median_participant_s"), g("first_participant_s"))


@dataclass(frozen=True)
class NoiseFloorRow:
    """A row of the A/A noise floor (govkit.results.summary.noise_floor): the second
    `none` arm's paired ratio at one size and mode, with its flags."""
    size: int
    mode: str
    overhead: Relative
    flags: tuple[Flag, ...] = ()

    @classmethod
    def from_json(cls, data: Mapping) -> NoiseFloorRow:
        return cls(data["size"], data.get("mode") or "latency", Relative.from_json(data),
                   tuple(Flag.from_json(f) for f in data.get("flags") or ()))


@dataclass(frozen=True, eq=False)
class PointSummary:
    """One row of the summary: a point's statistic with its interval, its overheads, RTI's
    figures beside it and the flags raised on it. A discovery row (mode `discovery`) has
    no size; its groups' figures are in `discovery`."""
    profile: str
    mode: str
    size: int | None
    network: Network = field(default_factory=Network)
    statistic: str = ""
    unit: str = ""
    estimate: float | None = None
    ci95: Interval | None = None
    ci_halfwidth_pct: float | None = None
    repeats: int = 0
    failed_repeats: int = 0
    seconds: int | None = None
    rounds: int | None = None           # a rotated point's paired rounds
    tail: Tail = field(default_factory=Tail)
    vs_none: Relative | None = None
    vs_network: Relative | None = None
    rti: Published | None = None
    flags: tuple[Flag, ...] = ()
    variant: Variant | None = None
    loss: Mapping | None = None         # injected loss and what it did (summary._loss)
    cpu_per_sample: Mapping | None = None   # a rotated throughput point's CPU figures
    discovery: Discovery | None = None     # a discovery row's own figures
    # a `bench --policy` class over the policy's unprotected class, where a domain-wide
    # rtps_protection_kind costs every class (summary.add_policy_baselines)
    vs_policy_baseline: Relative | None = None
    source: Mapping = field(default_factory=lambda: EMPTY, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.profile, str) or not isinstance(self.mode, str):
            raise RecordInvalid(f"a summary row names its profile and mode, got "
                                f"{self.profile!r} {self.mode!r}")

    @property
    def rotated(self) -> bool:
        return self.rounds is not None

    @property
    def readers(self) -> int:
        """The readers the point's writer had (`govkit bench --readers`); 1 when the row
        does not say (every row before issue 41)."""
        n = self.source.get("readers")
        return n if isinstance(n, int) and not isinstance(n, bool) and n >= 1 else 1

    @property
    def codes(self) -> set[str]:
        return {f.code for f in self.flags}

    @property
    def cpu_vs_none(self) -> Relative | None:
        return Relative.from_json((self.cpu_per_sample or EMPTY).get("vs_none"))

    def to_json(self) -> dict:
        return dict(self.source)

    @classmethod
    def from_json(cls, data: Mapping) -> PointSummary:
        g = data.get
        return cls(g("profile"), g("mode"), g("size"), Network.of(data), g("statistic") or "",
                   g("unit") or "", g("estimate"), _interval(g("ci95")),
                   g("ci_halfwidth_pct"), g("repeats") or 0, g("failed_repeats") or 0,
                   g("seconds"), g("rounds"), Tail.from_json(g("tail")),
                   Relative.from_json(g("vs_none")), Relative.from_json(g("vs_network")),
                   Published.from_json(g("rti")),
                   tuple(Flag.from_json(f) for f in g("flags") or ()),
                   Variant.from_json(g("variant")), g("loss") or None,
                   g("cpu_per_sample") or None,
                   Discovery.from_json(data) if g("mode") == "discovery" else None,
                   vs_policy_baseline=Relative.from_json(g("vs_policy_baseline")),
                   source=data)


def as_points(rows: list) -> list[PointSummary]:
    """Summary rows as records (rows from results.json or summarize; records as they
    are)."""
    return [r if isinstance(r, PointSummary) else PointSummary.from_json(r) for r in rows]
