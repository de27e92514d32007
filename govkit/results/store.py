"""The results store: results.json (schema `SCHEMA`) and the per-profile CSVs beside it,
read back (`load_results`) and continued (`--resume`).

Everything is rewritten atomically after every repeat, so Ctrl-C, a crash or a failed
repeat never loses a completed one, and `--resume` continues from the file (only with the
same settings: `check_resumable`). What it stores besides the raw rows is derived: the
summary by govkit.results.summary, the CSVs by govkit.results.perftest_csv.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.fsutil import write_atomic
from govkit.common.inputs import read_input
from govkit.common.limits import MAX_RESULTS_BYTES
from govkit.results.check import Malformed, load_run
from govkit.results.cost_model import cost_models, reader_cost_models, stored
from govkit.results.gates import run_gates
from govkit.results.latency_state import latency_state
from govkit.results.perftest_csv import csv_name, to_csv
from govkit.results.record import (
    SCHEMA_PREFIX,
    VERSION,
    Pair,
    Repeat,
    Rotation,
    RotationConfig,
    Round,
    Run,
    Slot,
    as_run,
)
from govkit.results.summary import Summarizer, point_key
from govkit.results.versions import run_versions
from govkit.wire.rtps import METHOD as WIRE_METHOD
from govkit.wire.verdict import profile_verdicts

SCHEMA = f"{SCHEMA_PREFIX}{VERSION}"
RESULTS_NAME = "results.json"
# Settings that make two runs different experiments: `--resume` refuses to mix them.
RESUME_KEYS = {"runner": "--runner", "modes": "--mode", "sizes": "--sizes",
               "profiles": "--profile", "duration_s": "--duration", "warmup_s": "--warmup",
               "pin": "--pin/--no-pin", "cpus": "pinned CPUs",
               "realtime": "--realtime/--no-realtime", "transports": "--transport",
               "paths": "--net", "loss_rates_pct": "--loss-rate", "hosts": "--hosts",
               "peer_addresses": "--peer-address", "cpus_kept_awake": "--allow-idle",
               "throughput_by_rotation": "--rotate-throughput/--per-repeat-throughput"}
# What a run stored before a setting existed means (runs before the network dimension
# were UDP over loopback without loss; before 2026-12-02's spinners, CPUs could halt).
RESUME_DEFAULTS = {"transports": ["udp"], "paths": ["lo"], "loss_rates_pct": [0],
                   "cpus_kept_awake": False, "throughput_by_rotation": False}
# ... and of a rotating run's rotation.settings (checked where the stored run has them).
ROTATION_RESUME_KEYS = {"slot_ms": "--slot-ms", "settle_ms": "--settle-ms"}
# Rotating runs rewrite results.json after a round only when this long has passed since the
# last write (seconds).
ROUND_SAVE_S = 2.0


@dataclass
class ResultStore:
    """results.json plus the per-profile CSVs in one directory. The repeats, pairs, slots
    and rounds are records (govkit.results.record), made as they come, so a bad value is
    refused when it is handed over; `doc` holds their JSON (what is written, and what
    bench reads back) and the run's other sections."""
    directory: Path
    doc: dict = field(default_factory=dict)
    summarizer: Summarizer = field(default_factory=lambda: Summarizer())
    saved_at: float = float("-inf")     # time.monotonic() of the last write
    repeats: list[Repeat] = field(default_factory=list)
    pairs: list[Pair] = field(default_factory=list)
    slots: list[Slot] = field(default_factory=list)
    rounds: list[Round] = field(default_factory=list)

    def __post_init__(self) -> None:
        """A store made from a document (not by `create` or `load`) reads its records from
        it."""
        if self.doc and not (self.repeats or self.pairs or self.slots or self.rounds):
            run = as_run(self.doc)
            self.repeats = list(run.results)
            if run.rotation is not None:
                self.pairs, self.slots, self.rounds = (list(run.rotation.pairs),
                                                       list(run.rotation.slots),
                                                       list(run.rotation.rounds))

    @property
    def json_path(self) -> Path:
        return self.directory / RESULTS_NAME

    @classmethod
    def create(cls, directory: Path, command: str, settings: dict, env: dict,
               profiles: list[dict]) -> ResultStore:
        store = cls(Path(directory), {
            "schema": SCHEMA, "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": command, "runner": settings["runner"], "environment": env,
            "settings": settings, "profiles": profiles, "signed_files": [], "results": [],
            "summary": []})
        store.save()
        return store

    @classmethod
    def load(cls, directory: Path) -> ResultStore:
        path = Path(directory) / RESULTS_NAME
        if not path.exists():
            raise GovkitError(f"{path}: no results to resume")
        doc = load_results(path)
        if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
            # resuming continues a run with this version's design, never an older one
            found = doc.get("schema") if isinstance(doc, dict) else None
            raise GovkitError(f"{path}: schema is {found!r}, expected {SCHEMA!r}")
        try:
            load_run(doc)
        except Malformed as e:
            raise GovkitError(f"{path}: {e}", EXIT_USAGE) from None
        return cls(Path(directory), doc)

    def run(self) -> Run:
        """The run as it stands: its records, and its settings and profiles as `doc`
        holds them now (bench may have added a setting since)."""
        rot = self.doc.get("rotation")
        rotation = None if rot is None else Rotation(
            RotationConfig.from_json(rot.get("settings")), tuple(self.pairs),
            tuple(self.slots), tuple(self.rounds), rot.get("method"), rot.get("estimator"),
            rot.get("interval"))
        head = {k: v for k, v in self.doc.items() if k not in ("results", "rotation")}
        return replace(Run.from_json(head, VERSION), results=tuple(self.repeats),
                       rotation=rotation, source=self.doc)

    def completed(self) -> set[tuple]:
        return {r.repeat_key for r in self.repeats if r.ok}

    def kept(self) -> str:
        """What `--resume` continues from, in words: completed repeats, and a rotating
        run's rounds and a discovery run's groups (a rotating run has no repeats: it said
        "0 completed repeat(s) kept" while keeping every round)."""
        parts = []
        repeats = len(self.completed())
        rounds, slots = len(self.rounds), len(self.slots)
        groups = len((self.doc.get("discovery") or {}).get("groups") or [])
        if repeats or not (rounds or slots or groups):
            parts.append(f"{repeats} completed repeat(s)")
        if rounds or slots:
            parts.append(f"{rounds} rotation round(s) ({slots} slot(s))")
        if groups:
            parts.append(f"{groups} discovery group(s)")
        return f"{' and '.join(parts)} kept"

    def records(self, key: tuple) -> list[Repeat]:
        return [r for r in self.repeats if r.point_key == key]

    def add(self, result: dict) -> None:
        """A repeat, as the runner's result (refused if a value is out of place: made
        into a Repeat first); one of the same repeat key is replaced."""
        record = Repeat.from_json(result, VERSION)
        self.repeats = [r for r in self.repeats if r.repeat_key != record.repeat_key]
        self.repeats.append(record)
        self.doc["results"] = [r.to_json() for r in self.repeats]
        self.save()

    # -------------------------------------------------- the rotating design (govkit.bench.rotation)

    def rotation(self) -> dict:
        """results.json's `rotation` section, made on first use; where a resumed run goes on
        (the next round and the next process instance number)."""
        rot = self.doc.setdefault("rotation", {"pairs": [], "slots": [], "rounds": []})
        return {**rot, "next_round": max((r.round for r in self.rounds), default=-1) + 1,
                "next_instance": max((p.instance for p in self.pairs), default=-1) + 1}

    def set_rotation_method(self, info: dict) -> None:
        self.doc.setdefault("rotation", {"pairs": [], "slots": [], "rounds": []}).update(info)

    def add_pair(self, record: dict) -> None:
        pair = Pair.from_json(record, VERSION)
        self.pairs.append(pair)
        self.doc["rotation"]["pairs"].append(pair.to_json())
        self.save(summary=False)

    def add_slots(self, rows: list[dict]) -> None:
        """One size's slots of one round (kept, unsaved until the round ends); each made a
        Slot first, so a bad value is refused here, not found by the report."""
        slots = [Slot.from_json(row, VERSION) for row in rows]
        self.slots += slots
        self.doc["rotation"]["slots"] += [s.to_json() for s in slots]

    def finish_round(self, rnd: int, seconds: float) -> None:
        """Record a finished round; results.json is rewritten at most every ROUND_SAVE_S
        (a round of 30 ms slots lasts well under a second, and rewriting megabytes after each
        would eat the budget). A run killed outright loses at most that much; an interrupted
        or finished run saves everything (govkit.bench.rotation's `finally`)."""
        done = Round(rnd, round(seconds, 3))
        self.rounds.append(done)
        self.doc["rotation"]["rounds"].append(done.to_json())
        if time.monotonic() - self.saved_at >= ROUND_SAVE_S:
            self.save(summary=False)
    def set_load(self, load: dict) -> None:
        if load:
            self.doc.setdefault("load", []).append(load)
        self.save()

    def add_wire(self, record: dict) -> None:
        """A captured repeat: kept under `wire`, apart from `results` (no statistic reads
        it); `wire.profiles` is the verdict per profile over its captured points."""
        wire = self.doc.setdefault("wire", {"method": WIRE_METHOD, "points": []})
        key = point_key(record)
        wire["points"] = [p for p in wire["points"] if point_key(p) != key] + [record]
        wire["profiles"] = profile_verdicts(wire["points"])
        self.save()

    def set_signed_files(self, entries: list[dict]) -> None:
        """Record the files this run hands the runner, per profile (the permissions are
        shared by all); a re-signed file's new SHA-256 replaces the stale one."""
        fresh = {(e["profile"], e["path"]): e for e in entries}
        self.doc["signed_files"] = [e for e in self.doc["signed_files"]
                                    if (e["profile"], e["path"]) not in fresh] \
            + list(fresh.values())

    def save(self, summary: bool = True) -> None:
        """Everything, atomically; `summary=False` writes results.json alone and keeps its
        stored summary as it was (the rotation's rounds save raw slots only; the final save
        writes the summary and the CSVs, and `govkit report` recomputes all anyway)."""
        run = self.run() if summary or "summary" not in self.doc else None
        if run is not None:
            self.doc["summary"] = self.summarizer.summarize(run)
            state = latency_state(run)      # the words beside every absolute µs
            if state is not None:
                self.doc["absolute_latency"] = state
            if run.rotation is not None:
                self.doc["cost_model"] = stored(cost_models(run))
                versions = run_versions(run, self.summarizer.overheads)
                if versions:            # a version axis (govkit.results.versions)
                    self.doc["versions"] = versions
                per_reader = reader_cost_models(run)       # --readers: N > 1 measured
                if per_reader is not None:
                    self.doc["cost_per_reader"] = per_reader
            gates = run_gates(run, self.doc["summary"], self.summarizer.overheads,
                              self.doc.get("versions"))
            if gates is None:
                self.doc.pop("gates", None)
            else:
                self.doc["gates"] = gates
        write_atomic(self.json_path, json.dumps(self.doc, indent=2) + "\n")
        self.saved_at = time.monotonic()
        if not summary:
            return      # the CSVs are derived from the raw rows too: with the summary
        groups: dict[tuple, list[Repeat]] = {}
        for r in self.summarizer.records:        # summarize's: all_records(run)
            if r.ok:
                groups.setdefault((r.profile, r.mode, r.network), []).append(r)
        processors = run.environment.get("cores")
        for (profile, mode, net), rows in groups.items():
            write_atomic(self.directory / csv_name(profile, mode, net),
                         to_csv(rows, mode, processors if isinstance(processors, int) else None))


MAX_DEPTH = 32       # results.json nests 5 deep; deeper is not ours


def load_results(path: Path) -> Any:
    """Parse a results.json (a regular file within MAX_RESULTS_BYTES); any problem is one
    GovkitError line naming the file. Checked for depth without recursion, so no input can
    make a reader of it recurse."""
    if not Path(path).exists():
        raise GovkitError(f"{path}: not found (run `govkit bench` first)", EXIT_USAGE)
    data = read_input(Path(path), MAX_RESULTS_BYTES, "results file")
    try:
        text = data.decode("utf-8")
        doc = json.loads(text, parse_constant=_reject_constant)
        deep = _too_deep(doc)
    except UnicodeDecodeError as e:
        raise GovkitError(f"{path}: cannot read: {e}", EXIT_USAGE) from None
    except json.JSONDecodeError as e:
        raise GovkitError(f"{path}: not valid JSON: {e.msg} at line {e.lineno} column "
                          f"{e.colno}", EXIT_USAGE) from None
    except RecursionError:              # the parser's own limit, far deeper than ours
        doc, deep = None, True
    except ValueError as e:
        raise GovkitError(f"{path}: not valid JSON: {e}", EXIT_USAGE) from None
    if deep:
        raise GovkitError(f"{path}: nested deeper than {MAX_DEPTH} levels; not a govkit "
                          "results file", EXIT_USAGE)
    lone = lone_surrogate_at(text)
    if lone is not None:
        line = text.count("\n", 0, lone) + 1
        column = lone - (text.rfind("\n", 0, lone) + 1) + 1
        raise GovkitError(f"{path}:{line}:{column}: {text[lone:lone + 6]} is half of a UTF-16 "
                          "surrogate pair, which no text holds (govkit never writes one)",
                          EXIT_USAGE)
    return doc


_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.S)


def lone_surrogate_at(text: str) -> int | None:
    """Where the first \\uD800-\\uDFFF escape of a JSON `text` stands that is not half of a
    pair, or None. json.loads takes one into a str that no encoder writes out again (the
    report failed on it as an internal error), so it is refused at the load. Linear: every
    escape is read once, left to right (so '\\\\ud800', an escaped backslash, is none)."""
    if not re.search(r"\\u[dD][89a-fA-F]", text):
        return None
    high_at = high_end = None
    for m in _ESCAPE.finditer(text):
        code = int(m.group(1), 16) if m.group(1) else 0
        if high_at is not None:
            if 0xDC00 <= code <= 0xDFFF and m.start() == high_end:
                high_at = None
                continue
            return high_at
        if 0xD800 <= code <= 0xDBFF:
            high_at, high_end = m.start(), m.end()
        elif 0xDC00 <= code <= 0xDFFF:
            return m.start()
    return high_at


def _too_deep(doc: Any) -> bool:
    """Iteratively (no recursion), whether any value sits deeper than MAX_DEPTH: whether a
    non-empty object or list sits at MAX_DEPTH. Each level keeps only the objects and lists
    (a results.json's hundreds of thousands of numbers are never listed)."""
    level = [doc] if isinstance(doc, dict | list) else []
    for _ in range(MAX_DEPTH):
        level = [v for x in level for v in (x.values() if type(x) is dict else x)
                 if type(v) is dict or type(v) is list]
        if not level:
            return False
    return any(level)


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def check_resumable(stored: dict, wanted: dict, path: Path,
                    stored_rotation: dict | None = None,
                    wanted_rotation: dict | None = None) -> None:
    """Refuse to continue a run with settings that make it another experiment; a rotating
    run's slots too (rotation.settings: a round of other slot lengths measures something
    else, and the stored settings would no longer say what its first rounds did)."""
    pairs = [(stored.get(key, RESUME_DEFAULTS.get(key)), wanted.get(key, RESUME_DEFAULTS.get(key)),
              option) for key, option in RESUME_KEYS.items()]
    if stored_rotation and wanted_rotation:
        pairs += [(stored_rotation.get(key), wanted_rotation.get(key), option)
                  for key, option in ROTATION_RESUME_KEYS.items() if key in stored_rotation]
    for was, now, option in pairs:
        if was != now:
            raise GovkitError(
                f"--resume: {option} is {_show(now)} but the run in {path} used "
                f"{_show(was)}; resume with the same settings or choose a new --out")
    was, now = runtime_identity(stored), runtime_identity(wanted)
    if was is not None and was != now:
        # (a run from before settings.runtime existed names none: nothing to compare)
        raise GovkitError(
            f"--resume: the runtime is {_runtimes(now)} but the run in {path} used "
            f"{_runtimes(was)} (--runner, --dds-prefix); resume with the same runtime or "
            f"choose a new --out")
    for key, option in (("ciphers", "--cipher"), ("rekeys", "--rekey")):
        # (settings.crypto; a run without it varied nothing)
        was = (stored.get("crypto") or {}).get(key, [])
        now = (wanted.get("crypto") or {}).get(key, [])
        if was != now:
            raise GovkitError(
                f"--resume: {option} is {_show(now) or 'not given'} but the run in {path} "
                f"used {_show(was) or 'none'}; resume with the same settings or choose a "
                f"new --out")


def runtime_identity(settings: dict) -> list[tuple] | None:
    """What makes a run's runtime(s) the same one again: per runtime the runner, the
    implementation, its version and its install prefix (settings.runtime, and a version
    axis's settings.runtimes); None where the run recorded no runtime."""
    runtimes = settings.get("runtimes") or ([settings["runtime"]] if settings.get("runtime")
                                             else [])
    if not runtimes:
        return None
    return [(r.get("runner", settings.get("runner")), r.get("name"), r.get("version"),
             r.get("prefix")) for r in runtimes]


def _runtimes(identity: list[tuple] | None) -> str:
    return " and ".join(f"{name} {version} in {prefix}"
                        for _, name, version, prefix in identity or []) or "no runtime"


def _show(v) -> str:
    if isinstance(v, list):
        return ",".join(map(str, v))
    if isinstance(v, dict):
        return ",".join(f"{k}={x}" for k, x in v.items())
    return str(v)
