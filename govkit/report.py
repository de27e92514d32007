"""Turn a bench's results.json into report.html (self-contained) and summary.md.

`build_report_model` validates the document and reduces it to plain dataclasses; the
templates (templates/report.html.j2, templates/summary.md.j2) only format what the model
holds, so tests can compare every number on the page with results.json. Plots are drawn
with matplotlib (no pyplot, so no global backend state) and inlined as SVG.

Nothing here recomputes a statistic: medians, percentiles, overhead ratios and RTI's
published ratios are taken as the bench wrote them.
"""

from __future__ import annotations

import io
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from .errors import EXIT_USAGE, GovkitError
from .fsutil import write_atomic
from .paths import TEMPLATES_DIR
from .published import DEFAULT_SOURCE

SCHEMA = "govkit.bench/1"
RESULTS_NAME = "results.json"
HTML_NAME = "report.html"
SUMMARY_NAME = "summary.md"
DASH = "\u2013"  # shown wherever a value does not exist

# Environment keys shown first, with labels; any other key follows in document order.
_ENV_LABELS = {
    "cpu": "CPU", "cores": "Cores", "kernel": "Kernel", "cyclonedds": "Cyclone DDS",
    "openssl": "OpenSSL", "govkit": "govkit", "python": "Python",
}
# Governance settings that tell profiles apart; always shown as columns, in this order.
_KEY_SETTINGS = {
    "rtps_protection_kind": "whole RTPS message",
    "metadata_protection_kind": "submessages (metadata)",
    "data_protection_kind": "serialized payload",
    "allow_unauthenticated_participants": "unauthenticated peers may join",
}
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


# ------------------------------------------------------------------ validation


class _Malformed(Exception):
    """Raised by the validators; turned into one GovkitError line naming the file."""


def _where(path: str, msg: str) -> _Malformed:
    return _Malformed(f"{path}: {msg}")


def _get(obj: dict, key: str, path: str, kind: str, required: bool = True,
         default: Any = None) -> Any:
    here = f"{path}.{key}" if path else key
    if key not in obj or obj[key] is None:
        if required:
            raise _Malformed(f"missing '{here}' (expected {kind})")
        return default
    value = obj[key]
    check = {
        "a string": lambda v: isinstance(v, str),
        "an object": lambda v: isinstance(v, dict),
        "a list": lambda v: isinstance(v, list),
        "an integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "a number": _is_number,
        "true or false": lambda v: isinstance(v, bool),
    }[kind]
    if not check(value):
        raise _where(here, f"expected {kind}, got {_describe(value)}")
    return value


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _describe(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _number(obj: dict, key: str, path: str, required: bool = False) -> float | None:
    return _get(obj, key, path, "a number", required)


def _entries(doc: dict, key: str) -> list[tuple[str, dict]]:
    items = _get(doc, key, "", "a list")
    out = []
    for i, item in enumerate(items):
        here = f"{key}[{i}]"
        if not isinstance(item, dict):
            raise _where(here, f"expected an object, got {_describe(item)}")
        out.append((here, item))
    return out


# ---------------------------------------------------------------------- building


def first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else ""


def build_report_model(doc: Any, source: str = RESULTS_NAME) -> ReportModel:
    """Validate a parsed results.json and reduce it to what the report shows.

    Raises GovkitError (exit 2) naming `source` and the first thing that is wrong.
    """
    try:
        return _build(doc)
    except _Malformed as e:
        raise GovkitError(f"{source}: {e}", EXIT_USAGE) from None


def _build(doc: Any) -> ReportModel:
    if not isinstance(doc, dict):
        raise _Malformed(f"expected a JSON object at the top level, got {_describe(doc)}")
    schema = _get(doc, "schema", "", "a string")
    if schema != SCHEMA:
        raise _Malformed(f"schema is {schema!r}, expected {SCHEMA!r}")

    profiles: dict[str, ProfileInfo] = {}
    for here, p in _entries(doc, "profiles"):
        name = _get(p, "name", here, "a string")
        settings = _get(p, "settings", here, "an object", required=False, default={})
        for k, v in settings.items():
            if not isinstance(v, str | int | float | bool):
                raise _where(f"{here}.settings.{k}", f"expected a value, got {_describe(v)}")
        aliases = _get(p, "aliases", here, "a list", required=False, default=[])
        profiles[name] = ProfileInfo(
            name=name, title=_get(p, "title", here, "a string", required=False, default=""),
            security=_get(p, "security", here, "true or false", required=False,
                          default=bool(settings)),
            aliases=[str(a) for a in aliases],
            settings={k: _setting_text(v) for k, v in settings.items()})

    def profile(name: str) -> ProfileInfo:
        if name not in profiles:  # robust to a result whose profile is not described
            profiles[name] = ProfileInfo(name, "", False, [], {}, listed=False)
        return profiles[name]

    latency: list[LatencyRow] = []
    throughput: list[ThroughputRow] = []
    runs: list[Run] = []
    failures: list[Failure] = []
    results = _entries(doc, "results")
    for here, r in results:
        name = _get(r, "profile", here, "a string")
        profile(name)
        mode = _get(r, "mode", here, "a string")
        size = _get(r, "size", here, "an integer")
        repeat = _get(r, "repeat", here, "an integer", required=False, default=0)
        status = _get(r, "status", here, "a string")
        error = _get(r, "error", here, "a string", required=False)
        commands = _get(r, "commands", here, "a list", required=False, default=[])
        for i, c in enumerate(commands):
            if not isinstance(c, str):
                raise _where(f"{here}.commands[{i}]", f"expected a string, got {_describe(c)}")
        runs.append(Run(name, mode, size, repeat, status, list(commands)))
        ok = status == "ok"
        if not ok:
            failures.append(Failure(name, mode, size, repeat, status,
                                    error or f"status {status!r} (no error message recorded)"))
        if mode == "latency":
            if not ok:
                latency.append(LatencyRow(name, size, repeat, status, error))
                continue
            lat = _get(r, "latency_us", here, "an object")
            where = f"{here}.latency_us"
            stats = {k: _number(lat, k, where) for k in
                     ("mean", "std", "min", "max", "p90", "p99")}
            latency.append(LatencyRow(
                name, size, repeat, status, error, median=_number(lat, "median", where, True),
                count=_get(r, "count", here, "an integer", required=False), **stats))
        elif mode == "throughput":
            if not ok:
                throughput.append(ThroughputRow(name, size, repeat, status, error))
                continue
            tp = _get(r, "throughput", here, "an object")
            where = f"{here}.throughput"
            throughput.append(ThroughputRow(
                name, size, repeat, status, error,
                samples_per_s=_number(tp, "samples_per_s", where),
                mbps=_number(tp, "mbps", where),
                lost=_get(tp, "lost", where, "an integer", required=False)))

    summary: dict[tuple[str, int], dict] = {}
    for here, s in _entries(doc, "summary"):
        name = _get(s, "profile", here, "a string")
        if _get(s, "mode", here, "a string", required=False, default="latency") != "latency":
            continue
        size = _get(s, "size", here, "an integer")
        spread = _get(s, "spread_us", here, "a list", required=False)
        if spread is not None and (len(spread) != 2 or not all(map(_is_number, spread))):
            raise _where(f"{here}.spread_us", f"expected [low, high], got {_describe(spread)}")
        profile(name)
        summary[(name, size)] = {
            "median_us": _number(s, "median_us", here, True),
            "spread_us": tuple(spread) if spread is not None else None,
            "p90_us": _number(s, "p90_us", here),
            "p99_us": _number(s, "p99_us", here),
            "repeats": _get(s, "repeats", here, "an integer", required=False, default=1),
            "overhead_vs_none": _number(s, "overhead_vs_none", here),
            "rti_ratio": _number(s, "rti_ratio", here),
        }

    settings = _get(doc, "settings", "", "an object", required=False, default={})
    modes = settings.get("modes", ["latency"])
    modes = modes if isinstance(modes, list) else []
    set_sizes = settings.get("sizes") if "latency" in modes else None
    if set_sizes is not None and not (isinstance(set_sizes, list)
                                      and all(isinstance(x, int) for x in set_sizes)):
        raise _where("settings.sizes", f"expected a list of integers, got {_describe(set_sizes)}")
    sizes = sorted({*(set_sizes or []), *(r.size for r in latency),
                    *(size for _, size in summary)})

    order = list(profiles.values())
    headline = [HeadlineRow(p, [_cell(p.name, size, summary, latency) for size in sizes])
                for p in order]
    by_profile = {p.name: ProfileStats(p, []) for p in order}
    for row in sorted(latency, key=lambda r: (r.size, r.repeat)):
        by_profile[row.profile].rows.append(row)
    rank = {p.name: i for i, p in enumerate(order)}
    throughput.sort(key=lambda r: (rank[r.profile], r.size, r.repeat))
    runs.sort(key=lambda r: (rank[r.profile], r.mode != "latency", r.mode, r.size, r.repeat))
    failures.sort(key=lambda f: (rank[f.profile], f.mode, f.size, f.repeat))

    signed = []
    for here, f in _entries(doc, "signed_files") if "signed_files" in doc else []:
        signed.append(SignedFile(_get(f, "profile", here, "a string", required=False,
                                      default=""),
                                 _get(f, "path", here, "a string"),
                                 _get(f, "sha256", here, "a string")))

    env = _get(doc, "environment", "", "an object", required=False, default={})
    environment = [(label, _setting_text(env[key])) for key, label in _ENV_LABELS.items()
                   if env.get(key) is not None]
    environment += [(key, _setting_text(v)) for key, v in env.items()
                    if key not in _ENV_LABELS and v is not None]
    aggregation = settings.get("aggregation")
    run_settings = [(key, _setting_text(v)) for key, v in settings.items()
                    if key != "aggregation" and v is not None]

    return ReportModel(
        schema=schema,
        created=_get(doc, "created", "", "a string", required=False, default=DASH),
        command=_get(doc, "command", "", "a string", required=False, default=DASH),
        runner=_get(doc, "runner", "", "a string", required=False, default=DASH),
        environment=environment, settings=run_settings,
        aggregation=aggregation if isinstance(aggregation, str) else "",
        profiles=order, sizes=sizes, headline=headline,
        latency=[s for s in by_profile.values() if s.rows],
        throughput=throughput, runs=runs, failures=failures, signed_files=signed,
        governance=_governance(order), result_count=len(results))


def _setting_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return ", ".join(_setting_text(x) for x in v)
    return str(v)


def _cell(name: str, size: int, summary: dict, latency: list[LatencyRow]) -> HeadlineCell:
    points = [r for r in latency if r.profile == name and r.size == size]
    failed = [r for r in points if not r.ok]
    errors = tuple(dict.fromkeys(first_line(r.error) or r.status for r in failed))
    s = summary.get((name, size))
    if s is None:
        return HeadlineCell(name, size, "failed" if failed else "missing",
                            failed=len(failed), errors=errors)
    return HeadlineCell(name, size, "ok", failed=len(failed), errors=errors, **s)


def _governance(profiles: list[ProfileInfo]) -> Governance:
    secured = [p for p in profiles if p.security and p.settings]
    keys = list(dict.fromkeys(k for p in secured for k in p.settings))
    varying = [k for k in keys
               if len({p.settings.get(k) for p in secured}) > 1 or k in _KEY_SETTINGS]
    columns = [k for k in _KEY_SETTINGS if k in varying]
    columns += sorted(k for k in varying if k not in _KEY_SETTINGS)
    common = [(k, secured[0].settings[k]) for k in keys if k not in columns]
    return Governance(columns, common, profiles)


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


# ---------------------------------------------------------------------- plots

# Okabe-Ito colours plus line styles, markers and hatches, so profiles separate in greyscale.
_COLOURS = ("#000000", "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7",
            "#999999")
_LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (3, 1, 1, 1, 1, 1)), (0, (8, 2)),
               (0, (1, 2)))
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_HATCHES = ("", "//", "\\\\", "xx", "..", "++", "oo", "--")
_RC = {
    "svg.fonttype": "none",
    "svg.hashsalt": "govkit-report",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Liberation Sans", "Arial", "Helvetica"],
    "font.size": 10,
    "axes.titlesize": 12,
    "axes.titleweight": "bold",
    "axes.labelsize": 10.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#d9d9d9",
    "grid.linewidth": 0.6,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "hatch.linewidth": 0.7,
    "hatch.color": "#333333",
}


def _style_indexes(model: ReportModel) -> dict[str, int]:
    """Catalog position per profile, so a profile keeps its colour from report to report."""
    from .profiles import PROFILES
    catalog = [p.name for p in PROFILES]
    extra = [p.name for p in model.profiles if p.name not in catalog]
    return {name: i for i, name in enumerate(catalog + extra)}


def _style(index: int) -> dict:
    return {"color": _COLOURS[index % len(_COLOURS)],
            "linestyle": _LINESTYLES[index % len(_LINESTYLES)],
            "marker": _MARKERS[index % len(_MARKERS)],
            "hatch": _HATCHES[index % len(_HATCHES)]}


def _new_figure(width: float, height: float):
    from matplotlib.figure import Figure as MplFigure
    return MplFigure(figsize=(width, height), layout="constrained")


def _size_axis(ax, sizes: list[int]) -> None:
    from matplotlib.ticker import NullFormatter, NullLocator
    if sizes[0] > 0:  # a 0-byte size cannot sit on a log axis
        ax.set_xscale("log")
    ax.set_xticks(sizes, [fmt_size(s) for s in sizes])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    if sizes[0] <= 0:
        ax.set_xlabel("Sample size (bytes)")
        return
    if len(sizes) == 1:
        ax.set_xlim(sizes[0] / 2, sizes[0] * 2)
    else:
        ax.set_xlim(sizes[0] / 1.6, sizes[-1] * 1.6)
    ax.set_xlabel("Sample size (bytes, log scale)")
    ax.grid(True, which="major", axis="both")


def _log_y(ax, values: list[float]) -> None:
    """Log y axis spanning `values`, ticks labelled as plain numbers (1-2-5 or finer)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
    values = [v for v in values if v > 0]
    if not values:
        return
    lo, hi = min(values) / 1.25, max(values) * 1.25
    ax.set_yscale("log")
    ax.set_ylim(lo, hi)
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    for steps in ((1, 2, 5), (1, 1.5, 2, 3, 4, 5, 6, 8)):   # coarse first
        ticks = [m * 10 ** e for e in decades for m in steps if lo <= m * 10 ** e <= hi]
        if len(ticks) >= 4:
            break
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def _to_svg(fig, key: str) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None},
                facecolor="white")
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]                       # drop <?xml ...?> and DOCTYPE
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    # Several SVGs share one HTML document: make every id (and reference to one) unique.
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{key}-\1"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{key}-\1)", svg)
    svg = re.sub(r'href="#([^"]+)"', rf'href="#{key}-\1"', svg)
    # Scale with the page: keep the viewBox, let CSS size the element.
    svg = re.sub(r'^<svg([^>]*?) width="[^"]*" height="[^"]*"',
                 rf'<svg\1 class="plot" role="img" aria-labelledby="{key}-caption"', svg,
                 count=1)
    return svg.strip()


def build_figures(model: ReportModel) -> list[Figure]:
    """The report's plots as inline SVG, in page order (throughput only if measured)."""
    import matplotlib

    figures = []
    with matplotlib.rc_context(_RC):
        if any(c.median_us is not None for r in model.headline for c in r.cells):
            figures.append(_latency_figure(model))
        if any(c.overhead_vs_none is not None or c.rti_ratio is not None
               for r in model.headline if r.profile.name != "none" for c in r.cells):
            figures.append(_overhead_figure(model))
        if model.has_throughput:
            figures.append(_throughput_figure(model))
    return figures


def _latency_figure(model: ReportModel) -> Figure:
    fig = _new_figure(10.0, 5.0)
    ax = fig.add_subplot()
    styles = _style_indexes(model)
    for row in model.headline:
        pts = [c for c in row.cells if c.median_us is not None]
        if not pts:
            continue
        st = _style(styles[row.profile.name])
        xs = [c.size for c in pts]
        ax.plot(xs, [c.median_us for c in pts], color=st["color"], linestyle=st["linestyle"],
                marker=st["marker"], markersize=6, linewidth=1.8, label=row.profile.name,
                zorder=3)
        band = [c for c in pts if c.p90_us is not None and c.p99_us is not None]
        if band:
            ax.fill_between([c.size for c in band], [c.p90_us for c in band],
                            [c.p99_us for c in band], color=st["color"], alpha=0.10,
                            linewidth=0, zorder=1)
    from matplotlib.patches import Patch
    handles, labels = ax.get_legend_handles_labels()
    handles.append(Patch(facecolor="#000000", alpha=0.15, linewidth=0))
    labels.append("p90\u2013p99 (shaded,\nsame colour)")
    _size_axis(ax, model.sizes)
    values = [v for r in model.headline for c in r.cells
              for v in (c.median_us, c.p90_us, c.p99_us) if v is not None]
    _log_y(ax, values)
    ax.set_ylabel("Median one-way latency (\u00b5s, log scale)")
    ax.set_title("Median latency vs sample size, per profile")
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="Profile",
              title_fontsize=9, alignment="left")
    return Figure("fig-latency", "Latency vs sample size",
                  "Median one-way latency per profile (lines); shaded: p90 to p99. "
                  "Lower is better.", _to_svg(fig, "fig-latency"))


def _overhead_figure(model: ReportModel) -> Figure:
    from matplotlib.patches import Patch
    rows = [r for r in model.headline if r.profile.name != "none"]
    styles = _style_indexes(model)
    sizes = model.sizes
    fig = _new_figure(10.0, 5.0)
    ax = fig.add_subplot()
    n = max(len(rows), 1)
    width = min(0.8 / n, 0.22)
    top = 1.0
    rti_drawn = False
    proxies = []
    for j, row in enumerate(rows):
        st = _style(styles[row.profile.name])
        xs = [k + width * (j + 0.5 - n / 2) for k in range(len(sizes))]
        vals = [c.overhead_vs_none for c in row.cells]
        bx = [x for x, v in zip(xs, vals, strict=True) if v is not None]
        bv = [v for v in vals if v is not None]
        bar = {"facecolor": st["color"], "alpha": 0.85, "hatch": st["hatch"],
               "edgecolor": "#333333", "linewidth": 0.6}
        if bv:
            ax.bar(bx, bv, width=width * 0.92, zorder=2, **bar)
        proxies.append((Patch(**bar), row.profile.name))  # legend even without bars
        for x, c in zip(xs, row.cells, strict=True):
            if c.status == "failed":
                ax.text(x, 0.04, "failed", rotation=90, ha="center", va="bottom", fontsize=8,
                        color="#b00020", zorder=4)
        rti = [(x, c.rti_ratio) for x, c in zip(xs, row.cells, strict=True)
               if c.rti_ratio is not None]
        if rti:
            ax.scatter([x for x, _ in rti], [v for _, v in rti], marker="D", s=34,
                       facecolor="white", edgecolor="black", linewidth=1.3, zorder=5,
                       label=None if rti_drawn else "RTI Connext published ratio")
            rti_drawn = True
        top = max([top, *bv, *(v for _, v in rti)])
    ax.axhline(1.0, color="black", linewidth=1.0, linestyle="--", zorder=3,
               label="none baseline (1\u00d7)")
    ax.set_xticks(range(len(sizes)), [fmt_size(s) for s in sizes])
    ax.set_xlim(-0.5, len(sizes) - 0.5)
    ax.set_ylim(0, top * 1.12)
    ax.grid(False, axis="x")
    ax.set_xlabel("Sample size")
    ax.set_ylabel("Median latency / median of none (\u00d7)")
    title = "Security overhead over the none baseline"
    if not model.has_overhead:
        title += " (no baseline measured)"
    ax.set_title(title)
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles + [h for h, _ in proxies], labels + [n for _, n in proxies],
              loc="upper left", bbox_to_anchor=(1.01, 1.0), title="Profile",
              title_fontsize=9, alignment="left")
    return Figure("fig-overhead", "Overhead over none",
                  "Bars: this run's median latency divided by none's at the same size. "
                  "Diamonds: the same ratio from RTI's published Connext figures.",
                  _to_svg(fig, "fig-overhead"))


def _throughput_figure(model: ReportModel) -> Figure:
    import statistics

    from matplotlib.ticker import FuncFormatter
    fig = _new_figure(10.0, 4.2)
    axes = fig.subplots(1, 2)
    sizes = sorted({r.size for r in model.throughput if r.ok})
    index = _style_indexes(model)
    for ax, attr, label in ((axes[0], "samples_per_s", "Samples per second"),
                            (axes[1], "mbps", "Throughput (Mbit/s)")):
        for p in model.profiles:
            pts = []
            for size in sizes:
                vals = [getattr(r, attr) for r in model.throughput
                        if r.ok and r.profile == p.name and r.size == size
                        and getattr(r, attr) is not None]
                if vals:
                    pts.append((size, statistics.median(vals)))
            if pts:
                st = _style(index[p.name])
                ax.plot([x for x, _ in pts], [y for _, y in pts], color=st["color"],
                        linestyle=st["linestyle"], marker=st["marker"], linewidth=1.8,
                        markersize=6, label=p.name)
        _size_axis(ax, sizes)
        ax.set_ylim(bottom=0)
        ax.set_ylabel(label)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_int(v)))
    axes[0].set_title("Samples per second")
    axes[1].set_title("Throughput (Mbit/s)")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside right upper",
               title="Profile", title_fontsize=9, alignment="left")
    fig.suptitle("Throughput vs sample size (median over repeats)", fontweight="bold")
    return Figure("fig-throughput", "Throughput",
                  "Subscriber-side throughput per profile; higher is better.",
                  _to_svg(fig, "fig-throughput"))


# ---------------------------------------------------------------------- rendering


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(TEMPLATES_DIR), undefined=StrictUndefined,
                      autoescape=select_autoescape(enabled_extensions=("html.j2",),
                                                   disabled_extensions=("md.j2",),
                                                   default=True),
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(wbr=wbr, us=fmt_us, ratio=fmt_ratio, int=fmt_int, size=fmt_size,
                       md=_md_cell, mdcode=_md_code, first_line=first_line)
    env.globals.update(DASH=DASH, hints=_KEY_SETTINGS)
    return env


def render_html(model: ReportModel) -> str:
    if not model.figures:
        model.figures = build_figures(model)
    figures = {f.key: {**f.__dict__, "svg": Markup(f.svg)} for f in model.figures}
    return _environment().get_template("report.html.j2").render(m=model, figures=figures)


def render_summary_md(model: ReportModel) -> str:
    return _environment().get_template("summary.md.j2").render(m=model)


def load_results(path: Path) -> dict:
    """Parse results.json; any problem is one GovkitError line naming the file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GovkitError(f"{path}: not found (run `govkit bench` first)", EXIT_USAGE) from None
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise GovkitError(f"{path}: cannot read: {reason}", EXIT_USAGE) from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise GovkitError(f"{path}: not valid JSON: {e.msg} at line {e.lineno} column "
                          f"{e.colno}", EXIT_USAGE) from None
    except ValueError as e:
        raise GovkitError(f"{path}: not valid JSON: {e}", EXIT_USAGE) from None


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def write_report(results_dir: Path) -> tuple[Path, Path]:
    """Read results_dir/results.json; write report.html and summary.md beside it (atomically).

    Returns (report.html, summary.md). Raises GovkitError (exit 2) if results.json is
    missing or malformed; nothing is written in that case.
    """
    results_dir = Path(results_dir)
    source = results_dir / RESULTS_NAME
    model = build_report_model(load_results(source), source=str(source))
    html = render_html(model)
    md = render_summary_md(model)
    html_path, md_path = results_dir / HTML_NAME, results_dir / SUMMARY_NAME
    write_atomic(html_path, html)
    write_atomic(md_path, md)
    return html_path, md_path
