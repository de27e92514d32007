"""Turn a bench's results.json into report.html (self-contained) and summary.md.

`build_report_model` validates the document and reduces it to plain dataclasses; the
templates (templates/report.html.j2, templates/summary.md.j2) only format what the model
holds, so tests can compare every number on the page with results.json. Plots are drawn
with matplotlib in govkit.report_plots and inlined as SVG; the model dataclasses and the
value formatters live in govkit.report_model (all re-exported here).

Nothing here recomputes a statistic: medians, percentiles, overhead ratios and RTI's
published ratios are taken as the bench wrote them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from .errors import EXIT_USAGE, GovkitError
from .fsutil import write_atomic
from .paths import TEMPLATES_DIR
from .report_model import (
    DASH,
    Failure,
    Figure,
    Governance,
    HeadlineCell,
    HeadlineRow,
    LatencyRow,
    ProfileInfo,
    ProfileStats,
    ReportModel,
    Run,
    SignedFile,
    ThroughputRow,
    _md_cell,
    _md_code,
    first_line,
    fmt_int,
    fmt_ratio,
    fmt_size,
    fmt_us,
    wbr,
)
from .report_plots import build_figures

__all__ = [
    "DASH",
    "HTML_NAME",
    "RESULTS_NAME",
    "SCHEMA",
    "SUMMARY_NAME",
    "Failure",
    "Figure",
    "Governance",
    "HeadlineCell",
    "HeadlineRow",
    "LatencyRow",
    "ProfileInfo",
    "ProfileStats",
    "ReportModel",
    "Run",
    "SignedFile",
    "ThroughputRow",
    "build_figures",
    "build_report_model",
    "first_line",
    "fmt_int",
    "fmt_ratio",
    "fmt_size",
    "fmt_us",
    "load_results",
    "render_html",
    "render_summary_md",
    "wbr",
    "write_report",
]

SCHEMA = "govkit.bench/1"
RESULTS_NAME = "results.json"
HTML_NAME = "report.html"
SUMMARY_NAME = "summary.md"

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
