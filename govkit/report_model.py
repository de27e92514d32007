"""What the report shows: the dataclasses `build_report_model` (govkit.report) fills from
results.json, and the formatters that write their values as text.

Shared by the templates (rendered in govkit.report) and the plots (govkit.report_plots), so
neither of those modules has to import the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from markupsafe import Markup, escape

from .published import DEFAULT_SOURCE

DASH = "\u2013"  # shown wherever a value does not exist

_KIND_TEXT = {
    "SIGN": "signed (integrity)",
    "ENCRYPT": "encrypted (confidentiality + integrity)",
    "SIGN_WITH_ORIGIN_AUTHENTICATION": "signed, with origin authentication",
    "ENCRYPT_WITH_ORIGIN_AUTHENTICATION": "encrypted, with origin authentication",
}
_KIND_SUBJECT = {
    "rtps_protection_kind": "RTPS messages",
    "metadata_protection_kind": "submessages",
    "data_protection_kind": "payload",
}


# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class ProfileInfo:
    name: str
    title: str
    security: bool
    aliases: list[str]
    settings: dict[str, str]
    listed: bool = True          # False: appears in results but not in `profiles`

    @property
    def protects(self) -> str:
        """One plain-language line: what this profile protects on the wire."""
        if not self.listed:
            return "not described in results.json"
        if not self.security:
            return "nothing: no security plugins loaded (baseline)"
        parts = [f"{subject} {_KIND_TEXT[self.settings[key]]}"
                 for key, subject in _KIND_SUBJECT.items()
                 if self.settings.get(key) in _KIND_TEXT]
        if parts:
            return "; ".join(parts)
        return "nothing on the wire: plugins loaded, all protection kinds NONE"


@dataclass(frozen=True)
class HeadlineCell:
    """One (profile, size) of the headline table, from `summary` (+ failures from `results`)."""
    profile: str
    size: int
    status: str                  # "ok" | "failed" | "missing"
    median_us: float | None = None
    spread_us: tuple[float, float] | None = None
    p90_us: float | None = None
    p99_us: float | None = None
    repeats: int = 0             # successful repeats
    failed: int = 0              # failed repeats
    errors: tuple[str, ...] = ()
    overhead_vs_none: float | None = None
    rti_ratio: float | None = None


@dataclass(frozen=True)
class HeadlineRow:
    profile: ProfileInfo
    cells: list[HeadlineCell]    # aligned with ReportModel.sizes


@dataclass(frozen=True)
class LatencyRow:
    """One latency result (one repeat of one point), seeds' column order."""
    profile: str
    size: int
    repeat: int
    status: str
    error: str | None
    mean: float | None = None
    std: float | None = None
    min: float | None = None
    max: float | None = None
    median: float | None = None
    p90: float | None = None
    p99: float | None = None
    count: int | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class ProfileStats:
    profile: ProfileInfo
    rows: list[LatencyRow]


@dataclass(frozen=True)
class ThroughputRow:
    profile: str
    size: int
    repeat: int
    status: str
    error: str | None
    samples_per_s: float | None = None
    mbps: float | None = None
    lost: int | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class Run:
    """The command lines of one result, in the order they were started."""
    profile: str
    mode: str
    size: int
    repeat: int
    status: str
    commands: list[str]


@dataclass(frozen=True)
class Failure:
    profile: str
    mode: str
    size: int
    repeat: int
    status: str
    error: str

    @property
    def first_line(self) -> str:
        return first_line(self.error)


@dataclass(frozen=True)
class SignedFile:
    profile: str
    path: str
    sha256: str


@dataclass(frozen=True)
class Governance:
    columns: list[str]                     # settings that tell profiles apart
    common: list[tuple[str, str]]          # settings every secured profile shares
    rows: list[ProfileInfo]


@dataclass(frozen=True)
class Figure:
    key: str
    title: str
    caption: str
    svg: str


@dataclass
class ReportModel:
    schema: str
    created: str
    command: str
    runner: str
    environment: list[tuple[str, str]]
    settings: list[tuple[str, str]]        # run settings except the aggregation text
    aggregation: str
    profiles: list[ProfileInfo]            # catalog order, then any unlisted ones
    sizes: list[int]                       # latency sizes, ascending
    headline: list[HeadlineRow]
    latency: list[ProfileStats]
    throughput: list[ThroughputRow]
    runs: list[Run]
    failures: list[Failure]
    signed_files: list[SignedFile]
    governance: Governance
    published_source: str = DEFAULT_SOURCE
    result_count: int = 0
    figures: list[Figure] = field(default_factory=list)

    @property
    def has_throughput(self) -> bool:
        return any(r.ok for r in self.throughput)

    @property
    def environment_line(self) -> str:
        """Cyclone DDS, OpenSSL and CPU on one line (for summary.md)."""
        env = dict(self.environment)
        parts = [f"Cyclone DDS {env['Cyclone DDS']}" if "Cyclone DDS" in env else "",
                 env.get("OpenSSL", ""), env.get("CPU", "")]
        return " · ".join(p for p in parts if p)

    @property
    def has_repeats(self) -> bool:
        return any(r.repeat > 0 for r in self.runs)

    @property
    def command_count(self) -> int:
        return sum(len(r.commands) for r in self.runs)

    @property
    def has_overhead(self) -> bool:
        return any(c.overhead_vs_none is not None for r in self.headline for c in r.cells)

    def cell(self, profile: str, size: int) -> HeadlineCell | None:
        for row in self.headline:
            if row.profile.name == profile:
                for c in row.cells:
                    if c.size == size:
                        return c
        return None


# ---------------------------------------------------------------------- formatting


def fmt_us(v: float | None) -> str:
    return DASH if v is None else f"{v:.1f}"


def fmt_ratio(v: float | None) -> str:
    return DASH if v is None else f"{v:.2f}\u00d7"


def fmt_int(v: float | None) -> str:
    return DASH if v is None else f"{v:,.0f}".replace(",", "\u202f")


def fmt_size(size: int) -> str:
    """Sample size as on the tables: exact bytes (ddsperf's `size` argument)."""
    return f"{size} B"


def wbr(text: object) -> Markup:
    """Escape, then allow line breaks after underscores (long enum and profile names)."""
    return Markup(str(escape(str(text))).replace("_", "_<wbr>"))


def _md_cell(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _md_code(text: str) -> str:
    text = _md_cell(text)
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else ""
