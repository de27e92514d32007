"""Check a bench's results.json and load it as the run record (`load_run`: a
govkit.results.record.Run) before govkit.report.run recomputes from it.

Everything govkit.results.summary.summarize, govkit.results.stats, govkit.results.paired,
govkit.runners.network.Network.of and the report (govkit.report.run) read must be there, of
the right shape and sound, so a malformed file is one line naming the file and the first
problem, never a traceback:
- every number anywhere is finite and within ±MAX_MAGNITUDE (JSON allows 10^4000, and
  `1e400` parses as infinity);
- every field read has its type (a `transport` that is a list is refused here, not found
  unhashable later) and the shape the readers assume (null only where they read it as
  absent);
- sizes, counts and indexes are integers in a range a run can have, and every measured
  value (µs, samples/s, Mb/s, counts of samples) is 0 or between MIN_VALUE and MAX_VALUE,
  so no sum, ratio, square or logarithm of them can overflow or divide by zero.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from govkit.catalog.measures import MODES, PATHS, TRANSPORTS
from govkit.results import stats
from govkit.results.record import (
    SCHEMA_PREFIX,
    SLOT_VALUE_KEYS,
    VERSION,
    RecordInvalid,
    Run,
    version_of,
)
from govkit.results.summary import point_key

SCHEMA = f"{SCHEMA_PREFIX}{VERSION}"
OLD_SCHEMAS = ("govkit.bench/1",)      # per-repeat figures only, no raw rows
# Earlier schemas `govkit report` still reads (govkit.results.record.Run.from_json): /2 had
# no `rotation` section (the same records otherwise); a run is never resumed across them.
READABLE_SCHEMAS = ("govkit.bench/2", SCHEMA)
# The numbers a usable slot of a rotating run must hold, per mode: its row format's, and
# a CPU slot's (written at a fixed rate: govkit.bench.rotation).
_SLOT_KEYS = {**{mode: stats.row_format(name).row_keys
                 for mode, name in stats.ROTATION_FORMAT.items()},
              "cpu": ("count", "rate_sps", "offered_rate_sps", "cpu_us_per_sample",
                      "ping_us_per_sample", "pong_us_per_sample")}
_CPU_KEYS = ("cpu_us", "wall_us", "pong_cpu_us")     # optional in a usable slot

# Bounds. No run comes near them; they keep every computation on the numbers finite.
MAX_MAGNITUDE = 2 ** 64        # any number anywhere in the file
MAX_SIZE = 2 ** 31 - 1         # a sample size in bytes
MAX_INDEX = 10 ** 9            # repeats, orders, rounds, positions, process instances
MAX_ROWS = 10 ** 7             # warm-up and measured rows of one repeat
MAX_VALUE = 1e12               # a measured value: µs, samples/s, Mb/s, samples, bytes
MIN_VALUE = 1e-9               # ... or 0; below any runner's resolution
MAX_COUNT = 10 ** 15           # a wire capture's counters (messages, bytes)
MAX_PERCENT = 100
# A slot's 1 % histogram as cyclone_perf prints it: "bin:count,bin:count,…".
_HIST = re.compile(r"-?\d{1,4}:\d{1,13}(?:,-?\d{1,4}:\d{1,13})*,?")

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
         default: Any = None, null: bool = True) -> Any:
    """obj[key] if it is `kind`. Absent (or null, where `null` says its readers take null
    for absent): an error if `required`, else `default`."""
    here = f"{path}.{key}" if path else key
    if key not in obj or (obj[key] is None and null):
        if required:
            raise Malformed(f"missing '{here}' (expected {kind})")
        return default
    value = obj[key]
    if not _KINDS[kind](value):
        raise _where(here, f"expected {kind}, got {json_excerpt(value)}")
    return value


def _bounded(obj: dict, key: str, path: str, low: float, high: float, kind: str = "an integer",
             required: bool = True, null: bool = True) -> Any:
    """obj[key] as _get, an integer (or a number) from `low` to `high`."""
    value = _get(obj, key, path, kind, required, null=null)
    if value is not None and not low <= value <= high:
        raise _where(f"{path}.{key}" if path else key,
                     f"expected {kind} from {_text(low)} to {_text(high)}, got "
                     f"{json_excerpt(value)}")
    return value


def _measured(obj: dict, key: str, path: str, required: bool = True, null: bool = True
              ) -> Any:
    """A measured value: 0, or a number from MIN_VALUE to MAX_VALUE."""
    value = _get(obj, key, path, "a number", required, null=null)
    if value is not None and not (value == 0 or MIN_VALUE <= value <= MAX_VALUE):
        raise _where(f"{path}.{key}" if path else key,
                     f"expected 0 or a number from {MIN_VALUE:g} to {MAX_VALUE:g}, got "
                     f"{json_excerpt(value)}")
    return value


def _is_measured(v: Any) -> bool:
    """What _measured accepts as a value: 0, or a number from MIN_VALUE to MAX_VALUE."""
    t = type(v)
    return (t is float or t is int) and (v == 0 or MIN_VALUE <= v <= MAX_VALUE)


def measured_rows(rows: Any, keys: tuple[str, ...], optional: tuple[str, ...] = ()) -> bool:
    """Whether `rows` is a list of objects each holding a measured value under every one
    of `keys` (and, if anything, one under each of `optional`), in one pass that builds
    no path for a message (a long run holds tens of thousands of rows); False at anything
    else: each row is then checked by _measured, which names the first problem."""
    return type(rows) is list and all(
        type(row) is dict and all(_is_measured(row.get(k)) for k in keys)
        and all(row.get(k) is None or _is_measured(row[k]) for k in optional)
        for row in rows)


def _text(bound: float) -> str:
    return f"{bound:g}" if isinstance(bound, float) else str(bound)


def _is_number(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) or \
        isinstance(v, float) and math.isfinite(v)


def json_excerpt(v: Any) -> str:
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) > MAX_MAGNITUDE:
        return f"an integer of {int(v.bit_length() * math.log10(2)) + 1} digits"
    text = json.dumps(v, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _entries(obj: dict, key: str, path: str = "", required: bool = True, null: bool = True
             ) -> list[tuple[str, dict]]:
    items = _get(obj, key, path, "a list", required, default=[], null=null)
    out = []
    for i, item in enumerate(items):
        here = f"{path + '.' if path else ''}{key}[{i}]"
        if not isinstance(item, dict):
            raise _where(here, f"expected an object, got {json_excerpt(item)}")
        out.append((here, item))
    return out


def _strings(obj: dict, key: str, path: str, null: bool = True) -> list[str]:
    items = _get(obj, key, path, "a list", required=False, default=[], null=null)
    for i, c in enumerate(items):
        if not isinstance(c, str):
            raise _where(f"{path}.{key}[{i}]", f"expected a string, got {json_excerpt(c)}")
    return list(items)


def _check_numbers(doc: Any) -> None:
    """Every number in the document finite and within ±MAX_MAGNITUDE. Without recursion
    (load_results has bounded the depth), and a place's name made only for the message."""
    high, low, fhigh, flow = MAX_MAGNITUDE, -MAX_MAGNITUDE, float(MAX_MAGNITUDE), \
        -float(MAX_MAGNITUDE)
    stack: list[tuple[Any, tuple]] = [(doc, ())]
    while stack:
        obj, where = stack.pop()
        for k, v in obj.items() if type(obj) is dict else enumerate(obj):
            t = type(v)
            if t is dict or t is list:
                stack.append((v, (where, k)))
            elif t is float and not flow <= v <= fhigh or t is int and not low <= v <= high:
                raise _where(_path((where, k)), f"{json_excerpt(v)} is beyond any number a "
                                                f"run records (±2^64)")


def _path(where: tuple, dotted: bool = False) -> str:
    """results[0].raw.rows[1].p50 from (((((), 'results'), 0), 'raw'), …); `dotted`: with
    a leading dot (to follow a path already written)."""
    keys = []
    while where:
        where, key = where
        keys.append(key)
    out = ""
    for key in reversed(keys):
        out += f"[{key}]" if isinstance(key, int) else f".{key}" if out or dotted \
            else str(key)
    return out


def _check_network(r: dict, here: str) -> None:
    """What govkit.runners.network.Network.of reads (absent: UDP over loopback, no loss)."""
    for key, known in (("transport", TRANSPORTS), ("path", PATHS)):
        value = _get(r, key, here, "a string", required=False, null=False)
        if value is not None and value not in known:
            raise _where(f"{here}.{key}", f"expected one of {', '.join(known)}, got "
                                          f"{json_excerpt(value)}")
    _bounded(r, "loss_pct", here, 0, MAX_PERCENT, "a number", required=False, null=False)


def _check_result(here: str, r: dict) -> None:
    """What summarize, repeat_figures and the report read from one result must be there and
    sound."""
    _get(r, "profile", here, "a string")
    mode = _get(r, "mode", here, "a string")
    if mode not in MODES:
        raise _where(f"{here}.mode", f"expected 'latency' or 'throughput', got {mode!r}")
    _bounded(r, "size", here, 0, MAX_SIZE)
    _bounded(r, "repeat", here, 0, MAX_INDEX, required=False, null=False)
    _bounded(r, "order", here, 0, MAX_INDEX, required=False)
    _check_network(r, here)
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
    if fmt.rotating:
        raise _where(f"{here}.raw.format", f"{name!r} rows are a rotating run's slots: "
                                           "they belong under rotation.slots")
    if fmt.mode != mode:
        raise _where(f"{here}.raw.format", f"{name!r} rows cannot make a {mode} result")
    if fmt.value_key is None:
        summary = _get(raw, "summary", f"{here}.raw", "an object")
        for k in fmt.row_keys:
            _measured(summary, k, f"{here}.raw.summary")
        for k in summary:
            _measured(summary, k, f"{here}.raw.summary", null=False)
        return
    optional = ("rexmit_bytes",) if fmt.mode == "throughput" else ()
    rows = raw.get("rows")
    if not measured_rows(rows, fmt.row_keys, optional):   # then say where and why
        rows = [row for _, row in _entries(raw, "rows", f"{here}.raw")]
        for i, row in enumerate(rows):
            where = f"{here}.raw.rows[{i}]"
            for k in fmt.row_keys:
                _measured(row, k, where)
            for k in optional:
                _measured(row, k, where, required=False)
    warmup = _get(r, "warmup_rows", here, "an integer")
    measured = _get(r, "measured_rows", here, "an integer")
    if warmup < 0 or measured < 1:
        raise _where(here, f"warmup_rows {warmup} and measured_rows {measured}: expected "
                           "warmup_rows >= 0 and measured_rows >= 1")
    if warmup > MAX_ROWS or measured > MAX_ROWS:
        raise _where(here, f"warmup_rows {warmup} and measured_rows {measured}: expected at "
                           f"most {MAX_ROWS:,} each")
    kept = stats.measured(rows, warmup, measured)
    if not kept:
        raise _where(f"{here}.raw.rows", f"no measured rows ({len(rows)} rows, all within "
                                         f"the {warmup} warm-up rows)")
    if mode == "latency" and not sum(row["count"] for row in kept):
        raise _where(f"{here}.raw.rows", "the measured rows hold no samples")


def _check_discovery(doc: dict) -> None:
    """`--mode discovery` groups, as govkit.results.discovery reads them."""
    section = _get(doc, "discovery", "", "an object", required=False)
    if not section:
        return
    for here, g in _entries(section, "groups", "discovery", required=False, null=False):
        _get(g, "arm", here, "a string")
        _get(g, "profile", here, "a string")
        _get(g, "status", here, "a string")
        _get(g, "error", here, "a string", required=False)
        for key in ("round", "position"):
            _bounded(g, key, here, 0, MAX_INDEX)
        _bounded(g, "peers", here, 2, 100_000)
        if g["status"] == "ok":
            times = _get(g, "matched_s", here, "a list")
            if len(times) != g["peers"]:
                raise _where(f"{here}.matched_s", f"expected {g['peers']} times (one per "
                                                  f"participant), got {len(times)}")
            for i, t in enumerate(times):
                if not (_is_number(t) and (t == 0 or MIN_VALUE <= t <= MAX_VALUE)):
                    raise _where(f"{here}.matched_s[{i}]", f"expected a number of seconds, "
                                                           f"got {json_excerpt(t)}")


def _check_rotation(doc: dict) -> None:
    """A rotating run's pairs, slots and rounds, as govkit.results.summary and
    govkit.results.paired read them (the cost matrix, the A/A floor, the run's shape)."""
    rot = _get(doc, "rotation", "", "an object", required=False)
    if not rot:
        return
    settings = _get(rot, "settings", "rotation", "an object", required=False, default={})
    _get(settings, "target_ci_pct", "rotation.settings", "a number", required=False)
    for key in ("method", "estimator", "interval"):
        _get(rot, key, "rotation", "a string", required=False)
    _get(rot, "rounds", "rotation", "a list", required=False, null=False)
    for here, pair in _entries(rot, "pairs", "rotation", required=False, null=False):
        _get(pair, "arm", here, "a string")
        _bounded(pair, "instance", here, 0, MAX_INDEX)
        for key in ("status", "error"):
            _get(pair, key, here, "a string", required=False)
        _strings(pair, "commands", here, null=False)
        _bounded(pair, "time_to_match_s", here, 0, MAX_VALUE, "a number", required=False)
    slots = rot.get("slots")
    plain = type(slots) is list and all(type(s) is dict for s in slots)
    for i, slot in enumerate(slots) if plain else ():
        if not plain_slot(slot):         # then say where and why
            _check_slot(f"rotation.slots[{i}]", slot)
    for here, slot in () if plain else _entries(rot, "slots", "rotation", required=False,
                                                null=False):
        _check_slot(here, slot)


def plain_slot(slot: dict) -> bool:
    """Whether _check_slot accepts `slot`, in one pass that builds no path for a message (a
    run of thousands of rounds holds tens of thousands of slots); False wherever it may
    not (a crypto variant's slot, anything odd): _check_slot then says why, if it does."""
    if type(slot.get("arm")) is not str or type(slot.get("profile")) is not str:
        return False
    size = slot.get("size")
    if type(size) is not int or not 0 <= size <= MAX_SIZE:
        return False
    for key in ("round", "position", "instance"):
        v = slot.get(key)
        if type(v) is not int or not 0 <= v <= MAX_INDEX:
            return False
    if "status" in slot and type(slot["status"]) is not str or \
            slot.get("error") is not None and type(slot["error"]) is not str or \
            slot.get("variant") is not None:
        return False
    mode = slot.get("mode")
    mode = "latency" if mode is None else mode
    if type(mode) is not str or mode not in _SLOT_KEYS:
        return False
    value = slot.get(SLOT_VALUE_KEYS[mode])
    if value is not None and not _is_measured(value):
        return False
    if slot.get("status") != "ok" or not value:     # not usable: no figure reads it
        return True
    for key in _SLOT_KEYS[mode]:
        if not _is_measured(slot.get(key)):
            return False
    for key in _CPU_KEYS:
        if key in slot and not _is_measured(slot[key]):
            return False
    hist = slot.get("hist")
    return hist is None or type(hist) is str and (not hist or _HIST.fullmatch(hist) is not None)


def _check_slot(here: str, slot: dict) -> None:
    """One slot of a rotating run, as govkit.results.summary and paired read it."""
    for key in ("arm", "profile"):
        _get(slot, key, here, "a string")
    _bounded(slot, "size", here, 0, MAX_SIZE)
    for key in ("round", "position", "instance"):
        _bounded(slot, key, here, 0, MAX_INDEX)
    _get(slot, "status", here, "a string", required=False, null=False)
    _get(slot, "error", here, "a string", required=False)
    _check_variant(slot, here)
    mode = _get(slot, "mode", here, "a string", required=False, default="latency")
    if mode not in _SLOT_KEYS:
        raise _where(f"{here}.mode", f"expected {', '.join(_SLOT_KEYS)}, got "
                                     f"{json_excerpt(mode)}")
    value = _measured(slot, SLOT_VALUE_KEYS[mode], here, required=False)
    if slot.get("status") != "ok" or not value:     # not usable: no figure reads it
        return
    for key in _SLOT_KEYS[mode]:            # a usable slot's figures are computed
        _measured(slot, key, here)
    for key in _CPU_KEYS:
        _measured(slot, key, here, required=False, null=False)
    hist = _get(slot, "hist", here, "a string", required=False)
    if hist and not _HIST.fullmatch(hist):
        raise _where(f"{here}.hist", f"expected bin:count,… (integers), got "
                                     f"{json_excerpt(hist)}")


def _check_variant(slot: dict, here: str) -> None:
    """A crypto variant's slot (govkit.results.summary.add_variant_differences reads its
    name, cipher and rekey_blocks)."""
    variant = _get(slot, "variant", here, "an object", required=False)
    if variant is None:
        return
    _get(variant, "name", f"{here}.variant", "a string")
    _get(variant, "cipher", f"{here}.variant", "a string", required=False)
    _bounded(variant, "rekey_blocks", f"{here}.variant", 1, 2 ** 31 - 1, required=False)
    if "@" not in slot["arm"]:
        raise _where(f"{here}.arm", f"a crypto variant's arm is PROFILE@VARIANT, got "
                                    f"{json_excerpt(slot['arm'])}")


def _check_load(doc: dict) -> None:
    """How quiet the machine was (govkit.results.summary.load_line, the headline)."""
    for here, load in _entries(doc, "load", required=False):
        before = _get(load, "loadavg_before", here, "a list", required=False)
        for i, v in enumerate(before or []):
            if not _is_number(v):
                raise _where(f"{here}.loadavg_before[{i}]", f"expected a number, got "
                                                            f"{json_excerpt(v)}")
        _get(load, "steal_pct", here, "a number", required=False)
        _get(load, "under_load", here, "true or false", required=False)
        for where, busy in _entries(load, "busy_processes", here, required=False, null=False):
            _get(busy, "name", where, "a string")
            _get(busy, "cpu_share", where, "a number")


def _check_wire_counts(doc: dict) -> None:
    """A captured point's counts are counts: whole, not negative, bounded (the wire part
    is read by govkit.report.wire_section, which names any other problem in it). One pass,
    a place named only for the message (20,000 points: issue 37)."""
    wire = doc.get("wire")
    points = wire.get("points") if isinstance(wire, dict) else None
    for i, point in enumerate(points if isinstance(points, list) else []):
        observed = point.get("observed") if isinstance(point, dict) else None
        stack: list[tuple[dict, tuple]] = [(observed, ())] if isinstance(observed, dict) \
            else []
        while stack:
            obj, where = stack.pop()
            for k, v in obj.items():
                t = type(v)
                if t is int:
                    if 0 <= v <= MAX_COUNT:
                        continue
                elif t is dict:
                    stack.append((v, (where, k)))
                    continue
                elif t is not float:       # text, true/false, lists: not counted here
                    continue
                raise _where(f"wire.points[{i}].observed{_path((where, k), dotted=True)}",
                             f"expected a count (an integer from 0 to {MAX_COUNT:g}), got "
                             f"{json_excerpt(v)}")


def check_results(doc: Any) -> None:
    if not isinstance(doc, dict):
        raise Malformed(f"expected a JSON object at the top level, got {json_excerpt(doc)}")
    schema = _get(doc, "schema", "", "a string")
    if schema in OLD_SCHEMAS:
        raise Malformed(f"schema {schema!r} predates raw per-second rows, from which the "
                         f"report recomputes every figure; re-run `govkit bench` (it writes "
                         f"{SCHEMA!r})")
    if schema not in READABLE_SCHEMAS:
        raise Malformed(f"schema is {schema!r}, expected {SCHEMA!r}")
    _check_numbers(doc)
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
    settings = _get(doc, "settings", "", "an object", required=False, default={}, null=False)
    _get(settings, "target_ci_pct", "settings", "a number", required=False)
    for key in ("method", "interval"):
        _get(settings, key, "settings", "a string", required=False)
    for key in ("sizes", "modes"):
        values = _get(settings, key, "settings", "a list", required=False, default=[])
        if key == "sizes":
            for i, size in enumerate(values):
                if not (_KINDS["an integer"](size) and 0 <= size <= MAX_SIZE):
                    raise _where(f"settings.sizes[{i}]", f"expected an integer from 0 to "
                                                         f"{MAX_SIZE}, got {json_excerpt(size)}")
        elif not all(isinstance(x, str) for x in values):
            raise _where(f"settings.{key}", f"expected a list of strings, got "
                                            f"{json_excerpt(values)}")
    for key in ("created", "command", "runner"):
        _get(doc, key, "", "a string", required=False)
    _get(doc, "environment", "", "an object", required=False)
    _check_rotation(doc)
    _check_discovery(doc)
    _check_load(doc)
    _check_wire_counts(doc)


# --------------------------------------------------------------------- reading


def load_run(doc: Any) -> Run:
    """A parsed results.json checked (check_results: a Malformed naming the first problem
    by its place) and read as the run record, whatever its readable format version."""
    check_results(doc)
    try:
        return Run.from_json(doc, version_of(doc["schema"]))
    except RecordInvalid as e:     # a value the checks above let through: named by its place
        raise Malformed(str(e)) from None


