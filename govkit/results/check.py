"""Read a bench's results.json and check it before govkit.report.run recomputes from it.

Everything govkit.results.summary.summarize and govkit.results.stats.repeat_figures read
must be there, of
the right type and sound (finite numbers, measured rows that exist and hold samples), so a
malformed file is one line naming the file and the first problem, never a traceback.
"""

from __future__ import annotations

import json
import math
from typing import Any

from govkit.catalog.runners import MODES
from govkit.results import stats
from govkit.results import store as results
from govkit.results.summary import point_key

SCHEMA = results.SCHEMA
OLD_SCHEMAS = ("govkit.bench/1",)      # per-repeat figures only, no raw rows
# The numbers each raw row (or runner summary) must hold, per row format (govkit.results.stats).
_ROW_KEYS = {
    "latency-per-second": ("count", "mean", "min", "p50", "p90", "p99", "max"),
    "throughput-per-second": ("count", "lost", "rate_sps", "mbps"),
    "latency-summary": ("median_of_samples",),
    "throughput-summary": ("mean_rate_sps",),
}

# -------------------------------------------------------------------- checking


class Malformed(Exception):
    """Raised by the validators; turned into one GovkitError line naming the file."""


def _where(path: str, msg: str) -> Malformed:
    return Malformed(f"{path}: {msg}")


_KINDS = {
    "a string": lambda v: isinstance(v, str),
    "an object": lambda v: isinstance(v, dict),
    "a list": lambda v: isinstance(v, list),
    "an integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "a number": lambda v: _is_number(v),
    "true or false": lambda v: isinstance(v, bool),
}


def _get(obj: dict, key: str, path: str, kind: str, required: bool = True,
         default: Any = None) -> Any:
    here = f"{path}.{key}" if path else key
    if key not in obj or obj[key] is None:
        if required:
            raise Malformed(f"missing '{here}' (expected {kind})")
        return default
    value = obj[key]
    if not _KINDS[kind](value):
        raise _where(here, f"expected {kind}, got {json_excerpt(value)}")
    return value


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def json_excerpt(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _entries(obj: dict, key: str, path: str = "", required: bool = True
             ) -> list[tuple[str, dict]]:
    items = _get(obj, key, path, "a list", required, default=[])
    out = []
    for i, item in enumerate(items):
        here = f"{path + '.' if path else ''}{key}[{i}]"
        if not isinstance(item, dict):
            raise _where(here, f"expected an object, got {json_excerpt(item)}")
        out.append((here, item))
    return out


def _strings(obj: dict, key: str, path: str) -> list[str]:
    items = _get(obj, key, path, "a list", required=False, default=[])
    for i, c in enumerate(items):
        if not isinstance(c, str):
            raise _where(f"{path}.{key}[{i}]", f"expected a string, got {json_excerpt(c)}")
    return list(items)


def _check_result(here: str, r: dict) -> None:
    """What summarize and repeat_figures read from one result must be there and sound."""
    _get(r, "profile", here, "a string")
    mode = _get(r, "mode", here, "a string")
    if mode not in MODES:
        raise _where(f"{here}.mode", f"expected 'latency' or 'throughput', got {mode!r}")
    _get(r, "size", here, "an integer")
    _get(r, "repeat", here, "an integer", required=False)
    _get(r, "order", here, "an integer", required=False)
    _get(r, "error", here, "a string", required=False)
    _strings(r, "commands", here)
    for key in ("cpus", "output_tail"):
        for role, v in _get(r, key, here, "an object", required=False, default={}).items():
            if v is not None and not isinstance(v, str):
                raise _where(f"{here}.{key}.{role}", f"expected a string, got {json_excerpt(v)}")
    if _get(r, "status", here, "a string") != "ok":
        return
    raw = _get(r, "raw", here, "an object")
    name = _get(raw, "format", f"{here}.raw", "a string")
    if name not in stats.ROW_FORMATS:
        raise _where(f"{here}.raw.format", f"unknown row format {name!r} (known: "
                                           f"{', '.join(stats.ROW_FORMATS)})")
    fmt = stats.row_format(name)
    if fmt.mode != mode:
        raise _where(f"{here}.raw.format", f"{name!r} rows cannot make a {mode} result")
    if fmt.value_key is None:
        summary = _get(raw, "summary", f"{here}.raw", "an object")
        for k in _ROW_KEYS[name]:
            _get(summary, k, f"{here}.raw.summary", "a number")
        for k, v in summary.items():
            if not _is_number(v):
                raise _where(f"{here}.raw.summary.{k}", f"expected a number, got {json_excerpt(v)}")
        return
    rows = _entries(raw, "rows", f"{here}.raw")
    for where, row in rows:
        for k in _ROW_KEYS[name]:
            if _get(row, k, where, "a number") < 0:
                raise _where(f"{where}.{k}", f"expected a number >= 0, got {row[k]}")
    warmup = _get(r, "warmup_rows", here, "an integer")
    measured = _get(r, "measured_rows", here, "an integer")
    if warmup < 0 or measured < 1:
        raise _where(here, f"warmup_rows {warmup} and measured_rows {measured}: expected "
                           "warmup_rows >= 0 and measured_rows >= 1")
    kept = stats.measured([row for _, row in rows], warmup, measured)
    if not kept:
        raise _where(f"{here}.raw.rows", f"no measured rows ({len(rows)} rows, all within "
                                         f"the {warmup} warm-up rows)")
    if mode == "latency" and not sum(row["count"] for row in kept):
        raise _where(f"{here}.raw.rows", "the measured rows hold no samples")


def check_results(doc: Any) -> None:
    if not isinstance(doc, dict):
        raise Malformed(f"expected a JSON object at the top level, got {json_excerpt(doc)}")
    schema = _get(doc, "schema", "", "a string")
    if schema in OLD_SCHEMAS:
        raise Malformed(f"schema {schema!r} predates raw per-second rows, from which the "
                         f"report recomputes every figure; re-run `govkit bench` (it writes "
                         f"{SCHEMA!r})")
    if schema not in results.READABLE_SCHEMAS:
        raise Malformed(f"schema is {schema!r}, expected {SCHEMA!r}")
    for here, p in _entries(doc, "profiles"):
        _get(p, "name", here, "a string")
        _get(p, "title", here, "a string", required=False)
        _get(p, "security", here, "true or false", required=False)
        _strings(p, "aliases", here)
        for k, v in _get(p, "settings", here, "an object", required=False, default={}).items():
            if not isinstance(v, str | int | float | bool):
                raise _where(f"{here}.settings.{k}", f"expected a value, got {json_excerpt(v)}")
    formats: dict[tuple, str] = {}
    for here, r in _entries(doc, "results"):
        _check_result(here, r)
        if r["status"] == "ok":
            first = formats.setdefault(point_key(r), r["raw"]["format"])
            if r["raw"]["format"] != first:
                raise _where(f"{here}.raw.format", f"{r['raw']['format']!r}, but another "
                                                   f"repeat of this point has {first!r}")
    for here, f in _entries(doc, "signed_files", required=False):
        for key in ("path", "sha256"):
            _get(f, key, here, "a string")
        _get(f, "profile", here, "a string", required=False)
    settings = _get(doc, "settings", "", "an object", required=False, default={})
    _get(settings, "target_ci_pct", "settings", "a number", required=False)
    for key in ("method", "interval"):
        _get(settings, key, "settings", "a string", required=False)
    for key in ("sizes", "modes"):
        values = _get(settings, key, "settings", "a list", required=False, default=[])
        kind = int if key == "sizes" else str
        if not all(isinstance(x, kind) and not isinstance(x, bool) for x in values):
            raise _where(f"settings.{key}", f"expected a list of "
                                            f"{'integers' if kind is int else 'strings'}, "
                                            f"got {json_excerpt(values)}")
    for key in ("created", "command", "runner"):
        _get(doc, key, "", "a string", required=False)
    _get(doc, "environment", "", "an object", required=False)



# --------------------------------------------------------------------- reading


