"""What the report shows: the dataclasses `build_report_model` (govkit.report.run) fills from a
results.json's raw rows (every figure recomputed by govkit.results.summary.summarize and
govkit.results.stats.repeat_figures), and the formatters that write their values as text.

Shared by the templates (rendered in govkit.report.run) and the plots (govkit.report.plots), so
neither of those modules has to import the other.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from markupsafe import Markup, escape

from govkit.catalog.profiles import PROTECTION_KINDS
from govkit.catalog.rti_published import DEFAULT_SOURCE
from govkit.common.findings import shown_as_escapes
from govkit.report.wire_section import WireSection
from govkit.results.flags import advice, short_label
from govkit.results.gates import verdict_line
from govkit.results.record import Profile
from govkit.results.summary import POLICY_BASELINE_MEANING

DASH = "\u2013"  # shown wherever a value does not exist

# Rows a report's per-repeat tables show at most: a run of 20,000 repeats would make a page
# of 20 MB that no one reads row by row and a browser lays out slowly. Failed repeats are
# always shown; what is left out is counted on the page, and is in results.json.
MAX_REPEAT_ROWS = 20     # per point (profile, mode, size, network): a run has 3 to 8


def shown_rows(rows: list, limit: int, always: Callable[[Any], bool],
               key: Callable[[Any], Any] = lambda r: None) -> list:
    """`rows` in their order, keeping each row for which `always` holds and the others up
    to `limit` per `key`."""
    out, others = [], {}
    for r in rows:
        if always(r):
            out.append(r)
        elif others.get(k := key(r), 0) < limit:
            out.append(r)
            others[k] = others.get(k, 0) + 1
    return out

# The most characters of one text from results.json a report page shows. A results.json
# holding a 50 MB string (a command, an error, a profile name) made a report.html of
# 100 MB, the string written twice. Longer texts end in SHORTENED's words instead; the
# figures are computed from the whole document, and results.json keeps every text whole.
MAX_SHOWN_CHARS = 10_000
SHORTENED = "\u2026 [{more:,} more characters, sha256 {digest}; results.json holds the whole text]"


def shorten_long_texts(doc: Any) -> int:
    """Shorten, in place, every string of a parsed results.json longer than MAX_SHOWN_CHARS
    to that length, ending in SHORTENED (how much is left out, and the whole text's digest,
    so two long names that share their start stay two names); how many were shortened.
    Raw rows (`raw`) are numbers and are not walked. No recursion; idempotent."""
    count, stack = 0, [doc] if isinstance(doc, dict | list) else []
    while stack:
        node = stack.pop()
        for key, value in (node.items() if type(node) is dict else enumerate(node)):
            kind = type(value)
            if kind is str and len(value) > MAX_SHOWN_CHARS:
                node[key] = shortened(value)
                count += 1
            elif kind is dict and key != "raw" or kind is list:
                stack.append(value)
    return count


def shortened(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    tail = SHORTENED.format(more=len(text), digest=digest)      # its longest form
    kept = MAX_SHOWN_CHARS - len(tail)
    return text[:kept] + SHORTENED.format(more=len(text) - kept, digest=digest)


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
    policy_class: bool = False   # a `bench --policy` class: its title names its ROS topics

    @classmethod
    def of(cls, profile: Profile) -> ProfileInfo:
        """A profile the run describes (results.json's `profiles`), its settings as text."""
        return cls(profile.name, profile.title, profile.secured, list(profile.aliases),
                   {k: setting_text(v) for k, v in profile.settings.items()},
                   policy_class=profile.topics is not None)

    @property
    def protects(self) -> str:
        """One plain-language line: what this profile protects on the wire."""
        if not self.listed:
            return "not described in results.json"
        if not self.security:
            return "nothing: no security plugins loaded (baseline)"
        parts = [f"{subject} {PROTECTION_KINDS[self.settings[key]].short}"
                 for key, subject in _KIND_SUBJECT.items()
                 if self.settings.get(key) in PROTECTION_KINDS
                 and self.settings[key] != "NONE"]
        if parts:
            return "; ".join(parts)
        return "nothing on the wire: plugins loaded, all protection kinds NONE"


@dataclass(frozen=True)
class Flag:
    """Something about a point's figures a reader must know (govkit.results.summary)."""
    code: str
    severity: str                # "warning" | "note"
    reason: str

    @property
    def warning(self) -> bool:
        return self.severity == "warning"

    @property
    def short(self) -> str:
        return short_label(self.code)

    @property
    def advice(self) -> str:
        return advice(self.code)


@dataclass(frozen=True)
class FloorRow:
    """A flagged row of the A/A noise floor (govkit.results.summary.noise_floor): listed
    with the points' flags, as --fail-on-flag and the terminal read it."""
    mode: str
    size: int
    flags: list[Flag]
    anchor: str = ""


Interval = tuple[float, float]


@dataclass(frozen=True)
class Relative:
    """A point against its reference (`none` at the same mode and size, or the same point on
    the run's first network) as a ratio and as what it adds, each with its 95% interval:
    the summary row's `vs_none` (or `vs_network`), whose estimate is results.paired's
    Overhead for a rotating run."""
    ratio: float
    ratio_ci95: Interval | None
    added: float                 # µs (latency) or samples/s (throughput)
    added_ci95: Interval | None


@dataclass(frozen=True)
class Published:
    """RTI's published Connext figures for the same profile and size."""
    ratio: float
    added_us: float
    median_us: float


@dataclass(frozen=True)
class Point:
    """One (profile, mode, size, network): a row of the recomputed summary."""
    profile: str
    mode: str
    size: int
    statistic: str               # the estimate's exact name
    estimate: float
    ci95: Interval | None
    repeats: int                 # ok repeats the figures use
    failed_repeats: int
    seconds: int | None          # measured seconds pooled (None: summary-only runner)
    p99_median_of_seconds: float | None
    p99_worst_second: float | None
    vs_none: Relative | None
    rti: Published | None
    flags: list[Flag]
    stalled_seconds: int | None = None   # throughput: measured seconds without samples
    lost: int | None = None              # throughput: samples lost, all repeats
    anchor: str = ""                     # id of its entry in the flags list
    network: str = "udp lo"              # govkit.runners.network.Network.label
    vs_network: Relative | None = None   # over the same point on the run's first network
    loss: dict | None = None             # injected loss and what it did (results._loss)
    p99_of_samples: float | None = None  # rotation: true p99 over every round trip
    cpu: dict | None = None              # rotating throughput: its cpu_per_sample (summary)

    @property
    def warnings(self) -> list[Flag]:
        return [f for f in self.flags if f.warning]


@dataclass(frozen=True)
class CostCell:
    """One profile at one size in the headline cost matrix."""
    ratio: float | None
    ratio_ci95: Interval | None
    added: float | None
    added_ci95: Interval | None
    rti_ratio: float | None
    warned: bool = False         # the latency point carries a warning
    # with throughput rotated too: the throughput ratio and the CPU-per-sample ratio at
    # this size (paired over `none`, with intervals), each with its own warning mark, so a
    # ⚠ stands beside the figure it is about (a throughput flag once marked the latency
    # ratio, and summary.md, which shows no throughput there, carried it unexplained)
    throughput: tuple[float, Interval | None] | None = None
    cpu: tuple[float, Interval | None] | None = None
    throughput_warned: bool = False
    cpu_warned: bool = False
    # a `bench --policy` class over the policy's unprotected class (ratio, interval), where
    # a domain-wide rtps_protection_kind costs every class (summary.add_policy_baselines)
    policy_baseline: tuple[float, Interval | None] | None = None


@dataclass(frozen=True)
class Headline:
    """What each protection level costs, first: profile × size, the A/A floor beside it."""
    sizes: list[int]
    rows: list[tuple[str, list[CostCell | None], float | None]]   # profile, cells, match s
    floor: list[CostCell | None]                                  # the A/A arm per size
    floor_flags: list[str]
    load: str                                                     # how quiet the machine was
    under_load: bool
    rounds: int
    estimator: str
    policy_reference: str | None = None     # the class `policy_baseline` is over
    rerun_term: str | None = None       # where the run-to-run term came from (one line)
    # --readers: per profile (at 1 reader's name), per size, its latency's cost per reader
    # (govkit.results.cost_model.fit_readers: a dict, or None where not measured)
    per_reader: list[tuple[str, list[dict | None]]] = field(default_factory=list)

    @property
    def throughput(self) -> bool:
        """Throughput (and CPU per sample) were rotated too: their ratios in the cells."""
        return any(c is not None and c.throughput is not None
                   for _, cells, _ in self.rows for c in cells)


@dataclass(frozen=True)
class PointRow:
    """One profile, network and size in a summary table; `point` is None if nothing
    completed."""
    size: int
    status: str                  # "ok" | "failed" | "missing"
    point: Point | None
    failed: int = 0              # failed repeats
    errors: tuple[str, ...] = ()
    network: str = "udp lo"


@dataclass(frozen=True)
class Comparison:
    """Seed 003's tables side by side: per profile and size, one column group per network
    (transport, path, injected loss), each point with its ratio over the first network."""
    mode: str
    networks: list[str]          # the reference first
    rows: list[tuple[ProfileInfo, int, list[Point | None]]]   # profile, size, per network


@dataclass(frozen=True)
class ProfileRows:
    profile: ProfileInfo
    rows: list[PointRow]         # one per size, ascending


@dataclass(frozen=True)
class Column:
    key: str                     # key in stats.repeat_figures(record)
    title: str                   # what the figure is, exactly
    kind: str = "us"             # formatter: us | int | rate


@dataclass(frozen=True)
class RepeatRow:
    """One repeat of one point, its figures recomputed from its raw rows."""
    profile: str
    mode: str
    size: int
    repeat: int
    order: int | None            # position in the run's shuffled order
    status: str
    error: str | None
    cpus: str                    # the affinity each process really had
    figures: dict = field(default_factory=dict)
    count: int | None = None     # samples in the measured seconds
    values: list[float] = field(default_factory=list)   # measured per-second values
    net_key: tuple = ("udp", "lo", 0)   # govkit.runners.network.Network.key
    network: str = "udp lo"

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def key(self) -> tuple:
        """The point it is a repeat of (govkit.results.summary.point_key)."""
        return (self.profile, self.mode, self.size, *self.net_key)


@dataclass(frozen=True)
class RepeatTable:
    """The repeats of one mode, one block per profile: (profile, rows shown, how many of its
    repeats are not shown; see MAX_REPEAT_ROWS)."""
    mode: str
    columns: list[Column]
    values_title: str | None     # what `RepeatRow.values` are; None: no per-second rows
    values_kind: str
    blocks: list[tuple[ProfileInfo, list[RepeatRow], int]]


@dataclass(frozen=True)
class Run:
    """The command lines of one repeat, in the order they were started."""
    profile: str
    mode: str
    size: int
    repeat: int
    order: int | None
    status: str
    commands: list[str]
    network: str = "udp lo"


@dataclass(frozen=True)
class Failure:
    profile: str
    mode: str
    size: int
    repeat: int
    status: str
    error: str
    output_tail: list[tuple[str, str]] = field(default_factory=list)   # (role, last lines)
    network: str = "udp lo"

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
    settings: list[tuple[str, str]]        # run settings except method and interval
    method: str                            # how the runner measures (settings.method)
    interval: str                          # how intervals are computed (settings.interval)
    run_shape: str                         # repeats, warm-up, order, pinning in one sentence
    profiles: list[ProfileInfo]            # catalog order, then any unlisted ones
    sizes: list[int]                       # latency sizes, ascending
    points: list[Point]                    # the recomputed summary, in its order
    latency: list[ProfileRows]
    throughput: list[ProfileRows]
    repeat_tables: list[RepeatTable]
    runs: list[Run]                        # in run order
    failures: list[Failure]
    signed_files: list[SignedFile]
    governance: Governance
    advice: list[str]                      # results.flags.flag_advice: one line per warning code
    stored_summary: list[str]              # how the stored summary differs (empty: equal)
    stored_summary_missing: bool = False
    shortened_texts: int = 0               # texts cut to MAX_SHOWN_CHARS (shorten_long_texts)
    floor_flagged: list[FloorRow] = field(default_factory=list)   # the A/A rows' flags
    gates: dict | None = None              # govkit.results.gates.run_gates: the verdict
    published_source: str = DEFAULT_SOURCE
    result_count: int = 0
    figures: list[Figure] = field(default_factory=list)
    networks: list[str] = field(default_factory=lambda: ["udp lo"])   # reference first
    comparisons: list[Comparison] = field(default_factory=list)
    path_text: str = "loopback"            # where the processes ran, for the prose
    wire: WireSection | None = None        # govkit bench --wire: what the wire carried
    headline: Headline | None = None       # rotation: the cost matrix the report opens with
    cost_models: list[dict] = field(default_factory=list)   # govkit.results.cost_model
    # --mode discovery: govkit.results.discovery's rows (time until N participants matched)
    discovery: list[dict] = field(default_factory=list)
    # --cipher/--rekey: govkit.results.summary.variant_differences' rows (each crypto
    # variant against its reference, paired by round), and what the runtime let govkit vary
    variants: list[dict] = field(default_factory=list)
    crypto_defaults: str = ""
    awake_note: str = ""         # the CPUs' state behind the µs (results.latency_state)
    policy_baseline_meaning: str = POLICY_BASELINE_MEANING   # what `× CLASS` is
    # a version axis: govkit.results.versions' rows (each profile on two installs)
    versions: list[dict] = field(default_factory=list)
    # what the runtimes said when a process pair failed: (which pair, its error), the
    # runtime's own words in it (govkit.runners.security_log, cyclone_refusal)
    runtimes_said: list[tuple[str, str]] = field(default_factory=list)
    # results.json's security_events (govkit.runners.security_events), as rows of text
    security_events: list[dict] = field(default_factory=list)

    @property
    def shortened_note(self) -> str:
        """What the page says when it shortened texts of results.json ("" if none)."""
        if not self.shortened_texts:
            return ""
        return (f"{self.shortened_texts} text(s) of results.json longer than "
                f"{MAX_SHOWN_CHARS:,} characters are shortened on this page, each ending in "
                f"how many characters are left out; results.json holds them whole.")

    @property
    def show_network(self) -> bool:
        """A network column wherever points are listed: anything but udp over lo."""
        return self.networks != ["udp lo"]

    def statistic(self, mode: str) -> str:
        """The exact name of `mode`'s headline statistic (govkit.results.stats.ROW_FORMATS)."""
        return next((p.statistic for p in self.points if p.mode == mode), "")

    @cached_property        # asked once per table row: a scan of every point each time
    def rotated(self) -> bool:
        """Latency by rotation: the tail is the p99 of every sample, a "repeat" is a process
        pair and its "seconds" are slots."""
        return any(p.p99_of_samples is not None for p in self.points if p.mode == "latency")

    def statistic_title(self, mode: str) -> str:
        """That name as a column title: "Median of per-second medians"."""
        name = self.statistic(mode).split(" (")[0]
        return name[:1].upper() + name[1:]

    @property
    def has_throughput(self) -> bool:
        return any(p.mode == "throughput" for p in self.points)

    @property
    def has_cpu(self) -> bool:
        """Throughput was rotated with CPU slots: CPU per sample beside each rate."""
        return any(p.cpu for p in self.points if p.mode == "throughput")

    @property
    def has_loss(self) -> bool:
        """Some throughput point ran with injected loss (retransmissions counted)."""
        return any(p.loss for p in self.points if p.mode == "throughput")

    @property
    def has_overhead(self) -> bool:
        return any(p.vs_none is not None for p in self.points if p.mode == "latency")

    @property
    def flagged(self) -> list[Point]:
        """Points with at least one flag, warnings or notes."""
        return [p for p in self.points if p.flags]

    @property
    def warned(self) -> list[Point]:
        return [p for p in self.points if p.warnings]

    @property
    def gates_line(self) -> str:
        """The gates' verdict in the words of the terminal and summary.md ("" if none)."""
        return verdict_line(self.gates) if self.gates else ""

    @property
    def flag_codes(self) -> list[Flag]:
        """One flag per code present in the run, the A/A floor's included (warnings first),
        for its advice."""
        seen: dict[str, Flag] = {}
        for p in [*self.points, *self.floor_flagged]:
            for f in p.flags:
                seen.setdefault(f.code, f)
        return sorted(seen.values(), key=lambda f: (not f.warning, f.code))

    @property
    def environment_line(self) -> str:
        """Cyclone DDS, OpenSSL, CPU and its crypto extensions on one line (summary.md)."""
        env = dict(self.environment)
        crypto = env.get("CPU crypto extensions")
        parts = [f"Cyclone DDS {env['Cyclone DDS']}" if "Cyclone DDS" in env else "",
                 env.get("OpenSSL", ""), env.get("CPU", ""),
                 f"crypto extensions: {crypto}" if crypto else ""]
        return " · ".join(p for p in parts if p)

    @property
    def command_count(self) -> int:
        return sum(len(r.commands) for r in self.runs)

    @property
    def shown_runs(self) -> list[Run]:
        """The command table's rows, in run order: every failed repeat's, and the others'
        up to MAX_REPEAT_ROWS per point."""
        return shown_rows(self.runs, MAX_REPEAT_ROWS, lambda r: r.status != "ok",
                          lambda r: (r.profile, r.mode, r.size, r.network))

    def point(self, profile: str, mode: str, size: int, network: str | None = None
              ) -> Point | None:
        for p in self.points:
            if (p.profile, p.mode, p.size) == (profile, mode, size) and \
                    network in (None, p.network):
                return p
        return None


# ---------------------------------------------------------------------- formatting


def fmt_us(v: float | None) -> str:
    return DASH if v is None else f"{v:.1f}"


def fmt_ratio(v: float | None) -> str:
    return DASH if v is None else f"{v:.2f}\u00d7"


def fmt_added(v: float | None, digits: int = 1) -> str:
    """A signed difference: +28.8 (µs, or samples/s with digits=0)."""
    return DASH if v is None else f"{v:+,.{digits}f}".replace(",", "\u202f")


def fmt_int(v: float | None) -> str:
    return DASH if v is None else f"{v:,.0f}".replace(",", "\u202f")


def fmt_ci(ci: Interval | None, kind: str = "us") -> str:
    """A 95% interval as [low, high], each end formatted like its estimate."""
    if ci is None:
        return DASH
    f = FORMATTERS[kind]
    return f"[{f(ci[0])}, {f(ci[1])}]"


def fmt_value(v: float | None, kind: str = "us") -> str:
    return FORMATTERS[kind](v)


FORMATTERS = {"us": fmt_us, "int": fmt_int, "rate": fmt_int, "ratio": fmt_ratio, "mbps": fmt_us,
              "pct": fmt_us, "core_pct": fmt_us,
              "added": fmt_added, "added_int": lambda v: fmt_added(v, 0)}


def fmt_size(size: int) -> str:
    """Sample size as on the tables: exact bytes (ddsperf's `size` argument)."""
    return f"{size} B"


def fmt_values(values: list[float], kind: str = "us") -> str:
    """Per-second values, compact: one formatted number each, space separated."""
    return " ".join(FORMATTERS[kind](v) for v in values) or DASH


def wbr(text: object) -> Markup:
    """Escape, then allow line breaks after underscores (long enum and profile names)."""
    return Markup(str(escape(str(text))).replace("_", "_<wbr>"))


# Markdown (summary.md, compare.md). A value from results.json may hold anything; written
# into Markdown it must show as the text it is: never raw HTML (a renderer that passes
# inline HTML would run `<script>` or `<img onerror=…>`), never a link or an image, never a
# line break out of a table row or a cell boundary. The Markdown templates write every
# `{{ … }}` through `md_finalize` (govkit.report.run renders them that way), so a template
# cannot forget it.

# Running text: `<`, `>`, `&` as HTML entities (every renderer shows them literally), `\`,
# `|` (cell boundaries), `[`, `]` (links, images) escaped, line breaks as spaces. Backticks
# and emphasis stay, as govkit's own texts (flag reasons, advice) use them: neither can
# carry markup (a code span shows its content as is).
_MD_TEXT = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\\": "\\\\", "|": "\\|",
                          "[": "\\[", "]": "\\]", "\n": " ", "\r": " "})
# Literal text, nothing left to Markdown: every ASCII punctuation character escaped.
_MD_LITERAL = str.maketrans({**{c: "\\" + c for c in "!\"#$%'()*+,-./:;=?@[\\]^_`{|}~"},
                             "&": "&amp;", "<": "&lt;", ">": "&gt;", "\n": " ", "\r": " "})
# Inside a code span only what ends a cell or a row (the span shows the rest as is).
_MD_SPAN = str.maketrans({"\\": "\\\\", "|": "\\|", "\n": " ", "\r": " "})


def md_cell(text: object) -> str:
    """`text` for a Markdown line or table cell: shown as written, nothing in it markup."""
    return str(text).translate(_MD_TEXT)


def shown_text(text: object) -> str:
    """A report page as written: every control and bidi character in it (they come from
    results.json; govkit writes none) as an escape (govkit.common.findings.UNSEEN, the
    terminal's table), lines kept (HTML and the Markdown escaping treat a line break, CR or
    tab as whitespace). Applied to the whole page, so text the templates, the Python-built
    rows and the plots' SVG hold is covered alike."""
    return shown_as_escapes(str(text), keep="\t\n\r")


def md_code(text: object) -> str:
    """`text` as a code span, its fence longer than any run of backticks in it. Text with
    `<` or `>` is written as escaped literal text instead: a code span does not decode
    entities, and a raw `<` is left to no renderer."""
    text = str(text)
    if not text:
        return ""
    if "<" in text or ">" in text:
        return text.translate(_MD_LITERAL)
    text = text.translate(_MD_SPAN)
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if len(fence) > 1 else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_finalize(value: object) -> Markup:
    """What a Markdown template writes for `{{ value }}`: `value` escaped by md_cell, unless
    it is Markdown already (a Markup: the md and mdcode filters, govkit's number formatters,
    the templates' own macros)."""
    return value if isinstance(value, Markup) else Markup(md_cell(value))


def first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else ""


def setting_text(v: Any) -> str:
    """A setting's value as the report says it (true/false, lists and tables as text)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list | tuple):
        return ", ".join(setting_text(x) for x in v)
    if isinstance(v, Mapping):
        return ", ".join(f"{k} {setting_text(x)}" for k, x in v.items())
    return str(v)
