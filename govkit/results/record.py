"""The run record: results.json as frozen records, the way pyperf keeps a `Run`.

Each record refuses a bad value when it is made (RecordInvalid, naming the field), holds
what the summary and the report read as attributes, and has one `to_json` and one
`from_json(data, version)`. `Run.from_json` is the one place that reads every format
version of results.json (`version`: N of the file's `govkit.bench/N` schema): the names an
older file used are read under today's (RENAMED_IN_OVERHEADS), and the fields an older run
did not record get the meaning they had (a record before the network dimension is UDP
over loopback without loss).

A record keeps the object it was read from (`source`), and `to_json` gives it back
unchanged, so results.json keeps every key and its order: a runner's own keys (a slot's
`timeline`, a repeat's `started`), never read by a figure, ride along untouched.
govkit.results.check names a bad file's first problem by its place before any record is
made (its messages say where in the file; a record's say which field).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

from govkit.catalog.measures import CPU, LATENCY, SLOT_MODES, THROUGHPUT
from govkit.runners.network import Network
from govkit.runners.readers import split_readers_arm

SCHEMA_PREFIX = "govkit.bench/"
VERSION = 3              # the version this govkit writes (govkit.bench/3)
EMPTY: Mapping = MappingProxyType({})
# Files written before 2026-12-04 name the overhead's second form `difference` in the
# summary rows' `vs_none` and `vs_network`; it is `added` now, as results.paired.Overhead
# names it. Read under the new name, so such a file's stored summary still compares with
# the recomputed one (docs/reference/results-json.md, format history).
RENAMED_IN_OVERHEADS = {"difference": "added", "difference_ci95": "added_ci95"}

# What a slot measured, per mode: its median latency, its receive rate, or (a CPU slot,
# written at a fixed rate) both sides' CPU µs per sample.
SLOT_VALUE_KEYS = {LATENCY: "p50", THROUGHPUT: "rate_sps", CPU: "cpu_us_per_sample"}
# A slot's numbers, read as attributes (absent: None).
SLOT_NUMBERS = ("count", "mean", "min", "max", "p50", "p90", "p99", "cpu_us", "wall_us",
                "pong_cpu_us", "later_n", "span_us", "lost", "rate_sps", "offered_rate_sps",
                "cpu_us_per_sample", "ping_us_per_sample", "pong_us_per_sample")


class RecordInvalid(ValueError):
    """A record made with a value no run can have."""


def version_of(schema: Any) -> int:
    """N of `govkit.bench/N`; RecordInvalid for anything else."""
    if isinstance(schema, str) and schema.startswith(SCHEMA_PREFIX) and \
            schema[len(SCHEMA_PREFIX):].isdigit():
        return int(schema[len(SCHEMA_PREFIX):])
    raise RecordInvalid(f"schema: expected {SCHEMA_PREFIX}N, got {schema!r}")


def _int(name: str, value: Any, low: int = 0, none: bool = False) -> None:
    if value is None and none:
        return
    if type(value) is not int or value < low:
        raise RecordInvalid(f"{name}: expected an integer of at least {low}, got {value!r}")


def _text(name: str, value: Any, none: bool = False) -> None:
    if not (type(value) is str or value is None and none):
        raise RecordInvalid(f"{name}: expected a string, got {value!r}")


def _number(name: str, value: Any) -> None:
    """None, or a finite number not below 0 (every measured value is)."""
    t = type(value)
    if value is not None and not ((t is float or t is int) and 0 <= value < math.inf):
        raise RecordInvalid(f"{name}: expected a measured number, got {value!r}")


def _each(cls: Any, items: Any, where: str, version: int) -> tuple:
    """Every item of a list read by `cls.from_json`; a refused value named by its place
    (`rotation.slots[3].mean: …`)."""
    out = []
    for i, item in enumerate(items or ()):
        try:
            out.append(cls.from_json(item, version))
        except RecordInvalid as e:
            raise RecordInvalid(f"{where}[{i}].{e}") from None
    return tuple(out)


def _frozen(value: Any) -> Mapping:
    return MappingProxyType(dict(value)) if isinstance(value, Mapping) and value else EMPTY


# ----------------------------------------------------------------- rotation (bench.rotation)


@dataclass(frozen=True)
class Variant:
    """A crypto variant an arm ran under (--cipher, --rekey; govkit.runners.crypto)."""
    name: str
    cipher: str | None = None
    rekey_blocks: int | None = None
    source: Mapping = field(default_factory=lambda: EMPTY, repr=False, compare=False)

    def __post_init__(self) -> None:
        _text("variant.name", self.name)
        _text("variant.cipher", self.cipher, none=True)
        _int("variant.rekey_blocks", self.rekey_blocks, 1, none=True)

    def to_json(self) -> dict:
        if self.source:
            return dict(self.source)
        return {"name": self.name, **({"cipher": self.cipher} if self.cipher else {}),
                **({"rekey_blocks": self.rekey_blocks} if self.rekey_blocks else {})}

    @classmethod
    def from_json(cls, data: Mapping | None, version: int = VERSION) -> Variant | None:
        if data is None:
            return None
        return cls(data.get("name"), data.get("cipher"), data.get("rekey_blocks"),
                   source=data)


@dataclass(frozen=True, eq=False)
class Slot:
    """One slot of a rotating run: one process pair, one size, one mode, in one round at
    one position (govkit.bench.rotation). Its numbers are what the pair measured; a slot
    without a mode is a latency slot (runs before throughput rotated)."""
    round: int
    position: int
    arm: str                       # profile name, PROFILE@VARIANT, or the A/A arm
    profile: str
    instance: int                  # the process pair
    size: int
    mode: str = LATENCY
    status: str | None = None      # ok, failed, no_samples, saturated, …
    error: str | None = None
    variant: Variant | None = None
    count: float | None = None
    mean: float | None = None
    min: float | None = None
    max: float | None = None
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None
    cpu_us: float | None = None
    wall_us: float | None = None
    pong_cpu_us: float | None = None
    later_n: float | None = None
    span_us: float | None = None
    lost: float | None = None
    rate_sps: float | None = None
    offered_rate_sps: float | None = None
    cpu_us_per_sample: float | None = None
    ping_us_per_sample: float | None = None
    pong_us_per_sample: float | None = None
    hist: str | None = None        # the 1 % histogram, "bin:count,…" (cyclone_perf's)
    source: Mapping = field(default_factory=lambda: EMPTY, repr=False)

    def __post_init__(self) -> None:
        for name in ("round", "position", "instance", "size"):
            _int(name, getattr(self, name))
        _text("arm", self.arm)
        _text("profile", self.profile)
        if self.mode not in SLOT_MODES:
            raise RecordInvalid(f"mode: expected one of {', '.join(SLOT_MODES)}, got "
                                f"{self.mode!r}")
        _text("status", self.status, none=True)
        _text("error", self.error, none=True)
        _text("hist", self.hist, none=True)
        for name in SLOT_NUMBERS:
            _number(name, getattr(self, name))
        if self.variant is not None and "@" not in self.arm:
            raise RecordInvalid(f"arm: a crypto variant's arm is PROFILE@VARIANT, got "
                                f"{self.arm!r}")

    @property
    def value(self) -> float | None:
        """What the slot measured (SLOT_VALUE_KEYS): the figure paired with `none`'s."""
        return getattr(self, SLOT_VALUE_KEYS[self.mode])

    @property
    def usable(self) -> bool:
        return self.status == "ok" and (self.value or 0) > 0

    @property
    def point(self) -> tuple[str, str, int]:
        return (self.arm, self.mode, self.size)

    @property
    def readers(self) -> int:
        """The readers of the slot's pair: its arm's name says (`ARM@4readers`; a plain
        name, as every slot before issue 41, is 1 reader)."""
        return split_readers_arm(self.arm)[1]

    def to_json(self) -> dict:
        if self.source:
            return dict(self.source)
        out = {"round": self.round, "position": self.position, "arm": self.arm,
               "profile": self.profile, "instance": self.instance, "size": self.size,
               "mode": self.mode}
        if self.variant is not None:
            out["variant"] = self.variant.to_json()
        out.update((k, getattr(self, k)) for k in (*SLOT_NUMBERS, "hist")
                   if getattr(self, k) is not None)
        out.update((k, getattr(self, k)) for k in ("status", "error")
                   if getattr(self, k) is not None)
        return out

    @classmethod
    def from_json(cls, data: Mapping, version: int = VERSION) -> Slot:
        g = data.get
        return cls(g("round"), g("position"), g("arm"), g("profile"), g("instance"),
                   g("size"), g("mode") or LATENCY, g("status"), g("error"),
                   Variant.from_json(g("variant"), version),
                   *(g(k) for k in SLOT_NUMBERS), g("hist"), source=data)


@dataclass(frozen=True, eq=False)
class Pair:
    """One long-lived process pair of a rotating run, as it was started."""
    arm: str
    profile: str
    instance: int
    domain_id: int | None = None
    commands: tuple[str, ...] = ()
    status: str | None = None
    error: str | None = None
    time_to_match_s: float | None = None
    variant: Variant | None = None
    source: Mapping = field(default_factory=lambda: EMPTY, repr=False)

    def __post_init__(self) -> None:
        _text("arm", self.arm)
        _int("instance", self.instance)
        _text("status", self.status, none=True)
        _text("error", self.error, none=True)
        _number("time_to_match_s", self.time_to_match_s)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_json(self) -> dict:
        if self.source:
            return dict(self.source)
        return {"arm": self.arm, "profile": self.profile, "instance": self.instance,
                "domain_id": self.domain_id, "commands": list(self.commands),
                **({"variant": self.variant.to_json()} if self.variant else {}),
                "status": self.status,
                **({"error": self.error} if self.error is not None else {}),
                **({"time_to_match_s": self.time_to_match_s}
                   if self.time_to_match_s is not None else {})}

    @classmethod
    def from_json(cls, data: Mapping, version: int = VERSION) -> Pair:
        g = data.get
        return cls(g("arm"), g("profile") or g("arm"), g("instance"), g("domain_id"),
                   tuple(g("commands") or ()), g("status"), g("error"), g("time_to_match_s"),
                   Variant.from_json(g("variant"), version), source=data)


@dataclass(frozen=True)
class Round:
    round: int
    seconds: float | None = None

    def to_json(self) -> dict:
        return {"round": self.round, "seconds": self.seconds}

    @classmethod
    def from_json(cls, data: Mapping, version: int = VERSION) -> Round:
        return cls(data.get("round"), data.get("seconds"))


# Where a run's run-to-run term (rerun_kappa_pct, rerun_floor_pct) came from
# (rotation.settings.rerun_term_source): `default`, govkit's constants, measured on another
# machine (the 2-core reference VM of 2026-12-05), never this one; `given`, set with
# --rerun-kappa or --rerun-floor; `machine_calibration`, `govkit calibrate`'s on this
# machine (rerun_term_calibration: its date, the machine's identity, its runs), for the
# modes it measured (the others carry the default); `measured_in_run`, measured by the run
# itself (no govkit writes it yet: govkit.bench.calibration says why). A run before
# 2026-12-07 records none: it carried the defaults, when it carried a term at all.
RERUN_TERM_SOURCES = ("default", "given", "machine_calibration", "measured_in_run")
MEASURED_HERE = ("machine_calibration", "measured_in_run")   # on the machine itself


def _percentages(values: Any) -> Mapping[str, float]:
    """A per-mode table of percentages (rerun_kappa_pct, rerun_floor_pct); what is not a
    percentage is left out (a run before 2026-12-05 has none)."""
    return MappingProxyType({
        k: float(v) for k, v in (values if isinstance(values, Mapping) else {}).items()
        if isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 100})


@dataclass(frozen=True, eq=False)
class RotationConfig:
    """rotation.settings: how the rounds were run (govkit.bench.rotation.RotationSettings
    writes it). Runs before a setting existed do not record it: None."""
    slot_ms: int | None = None
    throughput_slot_ms: int | None = None
    settle_ms: int | None = None
    instances: int | None = None
    min_rounds: int | None = None
    min_arm_rounds: int | None = None
    target_ci_pct: float | None = None
    rerun_kappa_pct: Mapping[str, float] = field(default_factory=lambda: EMPTY)
    rerun_floor_pct: Mapping[str, float] = field(default_factory=lambda: EMPTY)
    rerun_term_source: str = "default"
    rerun_term_calibration: Mapping = field(default_factory=lambda: EMPTY)
    source: Mapping = field(default_factory=lambda: EMPTY, repr=False)

    def term_source(self, mode: str) -> str:
        """Where `mode`'s term came from: a calibration that did not measure the mode left
        it the default."""
        if self.rerun_term_source == "machine_calibration":
            terms = self.rerun_term_calibration.get("terms")
            if not isinstance(terms, Mapping) or mode not in terms:
                return "default"
        return self.rerun_term_source

    def __post_init__(self) -> None:
        if not isinstance(self.rerun_term_calibration, Mapping):
            raise RecordInvalid("rerun_term_calibration: expected an object")
        if self.rerun_term_source not in RERUN_TERM_SOURCES:
            raise RecordInvalid(f"rerun_term_source: expected one of "
                                f"{', '.join(RERUN_TERM_SOURCES)}, got "
                                f"{self.rerun_term_source!r}")
        if self.target_ci_pct is not None and not (
                isinstance(self.target_ci_pct, int | float) and self.target_ci_pct > 0):
            raise RecordInvalid(f"target_ci_pct: expected a number above 0, got "
                                f"{self.target_ci_pct!r}")

    def to_json(self) -> dict:
        return dict(self.source)

    @classmethod
    def from_json(cls, data: Mapping | None, version: int = VERSION) -> RotationConfig:
        data = data or EMPTY
        g = data.get
        return cls(g("slot_ms"), g("throughput_slot_ms"), g("settle_ms"), g("instances"),
                   g("min_rounds"), g("min_arm_rounds"), g("target_ci_pct"),
                   _percentages(g("rerun_kappa_pct")), _percentages(g("rerun_floor_pct")),
                   g("rerun_term_source") or "default",
                   g("rerun_term_calibration") or EMPTY, source=data)


@dataclass(frozen=True, eq=False)
class Rotation:
    """A rotating run's section: its settings, pairs, slots and rounds."""
    config: RotationConfig = field(default_factory=RotationConfig)
    pairs: tuple[Pair, ...] = ()
    slots: tuple[Slot, ...] = ()
    rounds: tuple[Round, ...] = ()
    method: str | None = None
    estimator: str | None = None
    interval: str | None = None
    source: Mapping = field(default_factory=lambda: EMPTY, repr=False)

    def to_json(self) -> dict:
        sections = {"pairs": [p.to_json() for p in self.pairs],
                    "slots": [s.to_json() for s in self.slots],
                    "rounds": [r.to_json() for r in self.rounds]}
        return {**dict(self.source), **sections}

    @classmethod
    def from_json(cls, data: Mapping, version: int = VERSION) -> Rotation:
        g = data.get
        return cls(RotationConfig.from_json(g("settings"), version),
                   _each(Pair, g("pairs"), "rotation.pairs", version),
                   _each(Slot, g("slots"), "rotation.slots", version),
                   _each(Round, g("rounds"), "rotation.rounds", version),
                   g("method"), g("estimator"), g("interval"), source=data)

    @cached_property
    def throughput(self) -> bool:
        """Whether throughput rotated too."""
        return any(s.mode == "throughput" for s in self.slots)


# ----------------------------------------------------------------------- repeats


@dataclass(frozen=True, eq=False)
class Repeat:
    """One repeat of one point (a per-repeat run's `results[]`), or one process pair's
    slots of one point of a rotating run (govkit.results.summary.rotation_records), read
    alike by every table and CSV."""
    profile: str
    mode: str
    size: int
    network: Network = field(default_factory=Network)
    repeat: int = 0
    order: int | None = None
    status: str = "ok"
    error: str | None = None
    commands: tuple[str, ...] = ()
    cpus: Mapping[str, str | None] = field(default_factory=lambda: EMPTY)
    output_tail: Mapping[str, str | None] = field(default_factory=lambda: EMPTY)
    domain_id: int | None = None
    variant: Variant | None = None
    format: str | None = None      # the raw rows' format (govkit.results.stats.ROW_FORMATS)
    rows: tuple = ()               # the runner's rows (a rotating run's: its Slots)
    summary: Mapping = field(default_factory=lambda: EMPTY)  # a summary-only runner's own figures
    warmup_rows: int = 0
    measured_rows: int = 0
    source: Mapping = field(default_factory=lambda: EMPTY, repr=False)

    def __post_init__(self) -> None:
        _text("profile", self.profile)
        _text("mode", self.mode)
        _int("size", self.size)
        _int("repeat", self.repeat)
        _int("order", self.order, none=True)
        _text("status", self.status)
        _text("error", self.error, none=True)
        _int("warmup_rows", self.warmup_rows)
        _int("measured_rows", self.measured_rows)
        if self.ok:
            _text("raw.format", self.format)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def point_key(self) -> tuple:
        """(profile, mode, size, transport, path, loss %): govkit.results.summary.key_of."""
        return (self.profile, self.mode, self.size, *self.network.key)

    @property
    def repeat_key(self) -> tuple:
        return (*self.point_key, self.repeat)

    def measured(self) -> tuple:
        """The rows that count: after the warm-up rows, at most measured_rows of them."""
        return self.rows[self.warmup_rows:self.warmup_rows + self.measured_rows]

    def stored(self, key: str, default: Any = None) -> Any:
        """What the run stored beside the raw rows (the per-repeat figures `latency_us`,
        `throughput`, `count`): compared with the recomputed ones, never used."""
        return self.source.get(key, default)

    def to_json(self) -> dict:
        if self.source:
            return dict(self.source)
        out = {"profile": self.profile, "mode": self.mode, "size": self.size,
               **self.network.to_json(), "repeat": self.repeat, "order": self.order,
               "domain_id": self.domain_id, "commands": list(self.commands),
               "status": self.status, "error": self.error}
        if self.variant is not None:
            out["variant"] = self.variant.to_json()
        if self.ok:
            out["raw"] = {"format": self.format,
                          "rows": [r.to_json() if isinstance(r, Slot) else r
                                   for r in self.rows]}
            out.update(warmup_rows=self.warmup_rows, measured_rows=self.measured_rows)
        return out

    @classmethod
    def from_json(cls, data: Mapping, version: int = VERSION) -> Repeat:
        g = data.get
        raw = g("raw") if isinstance(g("raw"), Mapping) else EMPTY
        return cls(g("profile"), g("mode"), g("size"), Network.of(data),
                   g("repeat", 0), g("order"), g("status"), g("error"),
                   tuple(g("commands") or ()), _frozen(g("cpus")), _frozen(g("output_tail")),
                   g("domain_id"), Variant.from_json(g("variant"), version), raw.get("format"),
                   tuple(raw.get("rows") or ()), _frozen(raw.get("summary")),
                   g("warmup_rows") or 0, g("measured_rows") or 0, source=data)


# ------------------------------------------------------- how quiet, and discovery groups


@dataclass(frozen=True)
class LoadSample:
    """How quiet the machine was over one measured stretch (govkit.bench.loadwatch)."""
    loadavg_before: tuple[float, ...] = ()
    steal_pct: float | None = None
    under_load: bool = False
    other_cpu_share: float | None = None      # others' CPU time (/proc/stat less govkit's)
    busy_processes: tuple[tuple[str, float], ...] = ()   # (name, share of a CPU)

    @classmethod
    def from_json(cls, data: Mapping, version: int = VERSION) -> LoadSample:
        g = data.get
        return cls(tuple(g("loadavg_before") or ()), g("steal_pct"), bool(g("under_load")),
                   g("other_cpu_share"),
                   tuple((b.get("name"), b.get("cpu_share")) for b in g("busy_processes") or ()))


@dataclass(frozen=True)
class DiscoveryGroup:
    """One group of a discovery run (`--mode discovery`): its participants started
    together, each one's time to match every other (govkit.bench.discovery)."""
    round: int
    position: int
    arm: str
    profile: str
    peers: int
    status: str
    matched_s: tuple[float, ...] = ()
    error: str | None = None

    def __post_init__(self) -> None:
        for name in ("round", "position"):
            _int(name, getattr(self, name))
        _int("peers", self.peers, 2)
        _text("status", self.status)
        if self.ok and len(self.matched_s) != self.peers:
            raise RecordInvalid(f"matched_s: expected {self.peers} times, got "
                                f"{len(self.matched_s)}")

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @classmethod
    def from_json(cls, data: Mapping, version: int = VERSION) -> DiscoveryGroup:
        g = data.get
        return cls(g("round"), g("position"), g("arm"), g("profile"), g("peers"), g("status"),
                   tuple(g("matched_s") or ()), g("error", ""))


# ------------------------------------------------------------------- the run itself


@dataclass(frozen=True, eq=False)
class Profile:
    """A profile the run measured, as results.json describes it (its governance's
    settings: name → value)."""
    name: str
    title: str = ""
    security: bool | None = None
    aliases: tuple[str, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    topics: tuple[str, ...] | None = None   # a `bench --policy` class's DDS names

    def __post_init__(self) -> None:
        _text("name", self.name)

    @property
    def secured(self) -> bool:
        """Whether it protects anything (a run that does not say: whether it has
        settings)."""
        return self.security if self.security is not None else bool(self.settings)

    @classmethod
    def from_json(cls, data: Mapping, version: int = VERSION) -> Profile:
        g = data.get
        topics = g("topics")
        return cls(g("name"), g("title") or "", g("security"),
                   tuple(str(a) for a in g("aliases") or ()), _frozen(g("settings")),
                   tuple(str(t) for t in topics) if isinstance(topics, list) else None)


@dataclass(frozen=True, eq=False)
class RunSettings:
    """results.json's `settings`: what the run was asked to do. Every entry stays in
    `items` (the report lists them); what the figures read is an attribute."""
    items: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    modes: tuple[str, ...] = ()
    sizes: tuple[int, ...] = ()
    target_ci_pct: float | None = None
    method: str = ""
    interval: str = ""
    seed: Any = None
    crypto: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    gates: Mapping[str, Any] | None = None
    min_repeats: int | None = None
    max_repeats: int | None = None
    duration_s: float | None = None
    warmup_s: float | None = None
    pinning: str | None = None       # how the processes were pinned, in words
    idle: str | None = None          # whether CPUs were kept awake, in words

    def __post_init__(self) -> None:
        for size in self.sizes:
            _int("sizes[]", size)

    def to_json(self) -> dict:
        return dict(self.items)

    @classmethod
    def from_json(cls, data: Mapping | None, version: int = VERSION) -> RunSettings:
        data = data or EMPTY
        g = data.get
        return cls(data, tuple(g("modes") or ()), tuple(g("sizes") or ()),
                   g("target_ci_pct"), g("method") or "", g("interval") or "", g("seed"),
                   _frozen(g("crypto")), g("gates"), g("min_repeats"), g("max_repeats"),
                   g("duration_s"), g("warmup_s"), g("pinning"), g("idle"))


@dataclass(frozen=True, eq=False)
class Run:
    """A whole results.json: the run's settings and description, its repeats and a
    rotating run's section as records; the parts only one stage reads (discovery groups:
    govkit.results.discovery; the wire capture: govkit.report.wire_section; the load
    samples) and what the run stored of its own figures (summary, gates, cost_model: the
    report recomputes them and compares) as read."""
    version: int = VERSION
    settings: RunSettings = field(default_factory=RunSettings)
    profiles: tuple[Profile, ...] = ()
    results: tuple[Repeat, ...] = ()
    rotation: Rotation | None = None
    environment: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    created: str | None = None
    command: str | None = None
    runner: str | None = None
    signed_files: tuple[Mapping, ...] = ()
    load: tuple[LoadSample, ...] = ()
    discovery: Mapping | None = None
    wire: Mapping | None = None
    stored_summary: Any = None
    stored_gates: Any = None
    source: Mapping = field(default_factory=lambda: EMPTY, repr=False)

    @property
    def schema(self) -> str:
        return f"{SCHEMA_PREFIX}{self.version}"

    @property
    def slots(self) -> tuple[Slot, ...]:
        return self.rotation.slots if self.rotation is not None else ()

    @cached_property
    def secured(self) -> dict[str, bool]:
        return {p.name: p.secured for p in self.profiles}

    @cached_property
    def discovery_groups(self) -> tuple[DiscoveryGroup, ...]:
        """A discovery run's groups (the section's settings stay in `discovery`)."""
        groups = (self.discovery or EMPTY).get("groups")
        return _each(DiscoveryGroup, groups, "discovery.groups", self.version)

    def to_json(self) -> dict:
        out = dict(self.source)
        out.update(settings=self.settings.to_json(),
                   results=[r.to_json() for r in self.results])
        if self.rotation is not None:
            out["rotation"] = self.rotation.to_json()
        return out

    @classmethod
    def from_json(cls, data: Mapping, version: int | None = None) -> Run:
        """The run of any format version this govkit reads (`version`: from its schema
        when not given); the stored summary's overheads under today's names."""
        g = data.get
        version = version_of(g("schema")) if version is None else version
        rotation = g("rotation")
        discovery = g("discovery")
        return cls(version, RunSettings.from_json(g("settings"), version),
                   _each(Profile, g("profiles"), "profiles", version),
                   _each(Repeat, g("results"), "results", version),
                   Rotation.from_json(rotation, version) if rotation else None,
                   _frozen(g("environment")), g("created"), g("command"), g("runner"),
                   tuple(g("signed_files") or ()),
                   tuple(LoadSample.from_json(x, version) for x in g("load") or ()),
                   discovery if discovery else None, g("wire") or None,
                   with_current_names(g("summary"), version), g("gates"), source=data)


def as_run(doc: Run | Mapping) -> Run:
    """`doc` as a Run: a results document read by Run.from_json (a caller holding the JSON
    still: the tests, benchmarks/, the terminal's tables after `govkit bench`; one without
    a schema yet is this version's), a Run as it is."""
    if isinstance(doc, Run):
        return doc
    return Run.from_json(doc, None if doc.get("schema") is not None else VERSION)


def with_current_names(summary: Any, version: int = VERSION) -> Any:
    """A stored summary with its overheads under today's names (RENAMED_IN_OVERHEADS) and
    a point row's `readers` (1 before issue 41), as a copy where a name changes (the
    document read stays as it was); anything not shaped
    like a summary is left for the report to show as it is."""
    if not isinstance(summary, list):
        return summary
    return [_renamed_row(row) if isinstance(row, dict) else row for row in summary]


def _renamed_row(row: dict) -> dict:
    out = {k: _renamed(v) if k in ("vs_none", "vs_network") else v for k, v in row.items()}
    if out.get("mode") in (LATENCY, THROUGHPUT) and "readers" not in out:
        # a point's row written before issue 41 had one writer and one reader; today's
        # summary says so (`readers`), so such a file's stored summary still compares
        out["readers"] = 1
    cpu = out.get("cpu_per_sample")
    if isinstance(cpu, dict):
        # the CPU-per-sample overheads were renamed with the others (a file of 2026-12-04
        # read "differs" on them alone until these were read too)
        out["cpu_per_sample"] = {k: _renamed(v) if k in ("vs_none", "ping_vs_none",
                                                          "pong_vs_none") else v
                                 for k, v in cpu.items()}
    return out


def _renamed(vs: Any) -> Any:
    if not isinstance(vs, dict) or vs.keys() & RENAMED_IN_OVERHEADS.values():
        return vs
    return {RENAMED_IN_OVERHEADS.get(k, k): v for k, v in vs.items()}

