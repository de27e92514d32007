"""Benchmark results: results.json (schema govkit.bench/2), per-profile CSVs, summary.

results.json keeps every repeat's raw rows; every figure (per repeat, per point, overheads,
intervals, flags) is computed from them by `summarize`, which `govkit report` calls again:
nothing shown is taken on trust from the file. Everything is rewritten atomically after
every repeat, so Ctrl-C, a crash or a failed repeat never loses a completed one, and
`--resume` continues from the file (only with the same settings: `check_resumable`).
"""

from __future__ import annotations

import csv
import io
import json
import os
import platform
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from . import __version__, stats
from .errors import GovkitError
from .fsutil import write_atomic
from .profiles import PROFILES, get_profile
from .published import published_latency
from .wire import METHOD as WIRE_METHOD
from .wire import profile_verdicts

SCHEMA = "govkit.bench/2"
BASELINE = "none"
# Settings that make two runs different experiments: `--resume` refuses to mix them.
RESUME_KEYS = {"runner": "--runner", "modes": "--mode", "sizes": "--sizes",
               "profiles": "--profile", "duration_s": "--duration", "warmup_s": "--warmup",
               "pin": "--pin/--no-pin", "cpus": "pinned CPUs"}


def environment(extra: dict | None = None) -> dict:
    """govkit, OpenSSL and Python versions, CPU and kernel (plus runner versions)."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        openssl = subprocess.run(["openssl", "version"], capture_output=True, text=True,
                                 timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        openssl = "unknown"
    uname = platform.uname()
    return {"govkit": __version__, "openssl": openssl, "python": platform.python_version(),
            "cpu": cpu, "cores": os.cpu_count(),
            "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
            else os.cpu_count(),
            "kernel": f"{uname.system} {uname.release} {uname.machine}", **(extra or {})}


def point_key(r: dict) -> tuple:
    """(profile, mode, size): what a point is; its repeats share it."""
    return (r["profile"], r["mode"], r["size"])


def repeat_key(r: dict) -> tuple:
    return (*point_key(r), r.get("repeat", 0))


@dataclass
class ResultStore:
    """results.json plus the per-profile CSVs in one directory."""
    directory: Path
    doc: dict = field(default_factory=dict)
    summarizer: Summarizer = field(default_factory=lambda: Summarizer())

    @property
    def json_path(self) -> Path:
        return self.directory / "results.json"

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
        path = Path(directory) / "results.json"
        try:
            doc = json.loads(path.read_text())
        except FileNotFoundError:
            raise GovkitError(f"{path}: no results to resume") from None
        except (OSError, ValueError, RecursionError) as e:
            raise GovkitError(f"{path}: unreadable results file: {e}") from None
        if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
            found = doc.get("schema") if isinstance(doc, dict) else None
            raise GovkitError(f"{path}: schema is {found!r}, expected {SCHEMA!r}")
        return cls(Path(directory), doc)

    def completed(self) -> set[tuple]:
        return {repeat_key(r) for r in self.doc["results"] if r.get("status") == "ok"}

    def records(self, key: tuple) -> list[dict]:
        return [r for r in self.doc["results"] if point_key(r) == key]

    def add(self, result: dict) -> None:
        key = repeat_key(result)
        self.doc["results"] = [r for r in self.doc["results"] if repeat_key(r) != key]
        self.doc["results"].append(result)
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
        """Record the files this run hands the runner; a re-signed file's new SHA-256
        replaces the stale one."""
        fresh = {e["path"]: e for e in entries}
        self.doc["signed_files"] = [e for e in self.doc["signed_files"]
                                    if e["path"] not in fresh] + list(fresh.values())

    def save(self) -> None:
        self.doc["summary"] = self.summarizer.summarize(self.doc)
        write_atomic(self.json_path, json.dumps(self.doc, indent=2) + "\n")
        for profile in {r["profile"] for r in self.doc["results"]}:
            for mode in ("latency", "throughput"):
                rows = [r for r in self.doc["results"] if r["profile"] == profile
                        and r["mode"] == mode and r.get("status") == "ok"]
                if rows:
                    write_atomic(self.directory / csv_name(profile, mode), to_csv(rows, mode))


def check_resumable(stored: dict, wanted: dict, path: Path) -> None:
    """Refuse to continue a run with settings that make it another experiment."""
    for key, option in RESUME_KEYS.items():
        if stored.get(key) != wanted.get(key):
            raise GovkitError(
                f"--resume: {option} is {_show(wanted.get(key))} but the run in {path} used "
                f"{_show(stored.get(key))}; resume with the same settings or choose a new --out")


def _show(v) -> str:
    if isinstance(v, list):
        return ",".join(map(str, v))
    return str(v)


# -------------------------------------------------------------------------------- CSV

def csv_name(profile: str, mode: str) -> str:
    """The seeds' file names, so existing post-processing keeps working."""
    alias = get_profile(profile).alias
    prefixes = {"latency": "lat_udpv4_pub", "throughput": "thr_udpv4_sub"}
    if mode not in prefixes:
        raise GovkitError(f"unknown benchmark mode {mode!r}; valid: {', '.join(prefixes)}")
    return f"{prefixes[mode]}_unkeyed_rel_security_{alias}.csv"


# Perftest's summary columns, then govkit's own. A perftest column the runner cannot fill
# with the quantity its name promises (ddsperf has no per-sample std or percentiles) stays
# empty; what ddsperf does give is in the extra, exactly named columns.
LATENCY_COLUMNS = (
    ("Length (Bytes)", None), ("Repeat", None), ("Latency Samples", None),
    ("Ave (us)", "mean_of_samples"), ("Std (us)", "std_of_samples"),
    ("Min (us)", "min"), ("Max (us)", "max"), ("50% (us)", "median_of_samples"),
    ("90% (us)", "p90_of_samples"), ("99% (us)", "p99_of_samples"),
    ("Median of per-second medians (us)", "median_of_second_medians"),
    ("Median of per-second 90% (us)", "p90_median_of_seconds"),
    ("Median of per-second 99% (us)", "p99_median_of_seconds"),
    ("Worst per-second 99% (us)", "p99_worst_second"),
    ("Std of per-second means (us)", "std_of_second_means"),
)
THROUGHPUT_COLUMNS = (
    ("Length (Bytes)", None), ("Repeat", None), ("Total Samples", None),
    ("Ave Samples/s", "mean_rate_sps"), ("Ave Mbps", "mean_mbps"), ("Lost Samples", "lost"),
    ("Seconds without samples", "stalled_seconds"),
)


def to_csv(rows: list[dict], mode: str) -> str:
    """Perftest-style summary columns, one line per size and repeat."""
    columns = LATENCY_COLUMNS if mode == "latency" else THROUGHPUT_COLUMNS
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow([title for title, _ in columns])
    for r in sorted(rows, key=lambda r: (r["size"], r.get("repeat", 0))):
        figures, count = stats.repeat_figures(r)
        w.writerow([r["size"], r.get("repeat", 0), "" if count is None else count]
                   + [_csv_number(figures.get(key)) for _, key in columns[3:]])
    return out.getvalue()


def _csv_number(v) -> str:
    if v is None:
        return ""
    return str(round(v, 3)) if isinstance(v, float) else str(v)


# ---------------------------------------------------------------------------- summary

class Summarizer:
    """`summarize` with the bootstrap of each point cached by its data, so rewriting the
    summary after every repeat only recomputes the point that changed."""

    def __init__(self) -> None:
        self._cache: dict[tuple, tuple[tuple, stats.Estimate]] = {}

    def point_estimate(self, key: tuple, fmt: stats.RowFormat, groups: list[list[float]]
                       ) -> stats.Estimate:
        signature = tuple(tuple(g) for g in groups)
        hit = self._cache.get(key)
        if hit is None or hit[0] != signature:
            seed = "govkit/" + "/".join(map(str, key))
            hit = (signature, stats.estimate(groups, fmt.pooled, seed))
            self._cache[key] = hit
        return hit[1]

    def summarize(self, doc: dict) -> list[dict]:
        return summarize(doc, self)


def summarize(doc: dict, summarizer: Summarizer | None = None) -> list[dict]:
    """One row per point (profile, mode, size): its statistic over all ok repeats with a
    95 % interval, the overhead over `none` (ratio and difference, with intervals), RTI's
    published figures, and flags saying what looks wrong and why."""
    summarizer = summarizer or Summarizer()
    settings = doc.get("settings", {})
    target = settings.get("target_ci_pct")
    secured = {p["name"]: p.get("security", True) for p in doc.get("profiles", [])}
    points: dict[tuple, list[dict]] = {}
    for r in doc["results"]:
        points.setdefault(point_key(r), []).append(r)

    estimates: dict[tuple, tuple[stats.RowFormat, stats.Estimate, list[list[float]]]] = {}
    for key, records in points.items():
        ok = sorted((r for r in records if r.get("status") == "ok"),
                    key=lambda r: r.get("repeat", 0))
        if ok:
            fmt = stats.row_format(ok[0]["raw"]["format"])
            groups = [stats.repeat_values(r) for r in ok]
            estimates[key] = (fmt, summarizer.point_estimate(key, fmt, groups), groups)

    order = {p.name: i for i, p in enumerate(PROFILES)}
    rows = []
    for key in sorted(points, key=lambda k: (order.get(k[0], 99), k[0], k[1], k[2])):
        profile, mode, size = key
        if key not in estimates:
            continue
        fmt, est, groups = estimates[key]
        records = points[key]
        ok = [r for r in records if r.get("status") == "ok"]
        failed = len(records) - len(ok)
        row = {
            "profile": profile, "mode": mode, "size": size, "statistic": fmt.statistic,
            "unit": fmt.unit, "estimate": est.value,
            "ci95": list(est.interval) if est.interval else None,
            "ci_halfwidth_pct": est.halfwidth_pct,
            "repeats": len(ok), "failed_repeats": failed,
            "seconds": sum(len(g) for g in groups) if fmt.value_key else None,
            "repeat_estimates": [fmt.pooled(g) for g in groups],
        }
        if fmt.mode == "latency" and fmt.value_key:
            measured = [x for r in ok for x in stats.measured(
                r["raw"]["rows"], r["warmup_rows"], r["measured_rows"])]
            p99 = [x["p99"] for x in measured]
            row["tail"] = {"p99_median_of_seconds": stats.statistics.median(p99),
                           "p99_worst_second": max(p99)}
        base = estimates.get((BASELINE, mode, size))
        row["vs_none"] = stats.compare(est, base[1]) if base and profile != BASELINE else None
        row["rti"] = _rti(profile, size) if mode == "latency" else None
        row["flags"] = _flags(row, groups, ok, secured.get(profile, profile != BASELINE),
                              target, fmt) + _wire_flags(doc, profile)
        rows.append(_rounded(row))
    return rows


def _wire_flags(doc: dict, profile: str) -> list[dict]:
    """A profile whose traffic did not match its governance: its figures are not the cost
    of the protection it claims, so every row of it says so."""
    verdict = doc.get("wire", {}).get("profiles", {}).get(profile)
    if not verdict or verdict["verdict"] == "match":
        return []
    return [stats.flag("wire_mismatch", "warning",
                       "on the wire this profile does not do what its governance says ("
                       + "; ".join(verdict["reasons"][:2]) + "): its figures are not the "
                       "cost of that protection")]


def _rti(profile: str, size: int) -> dict | None:
    mine, base = published_latency(profile, size), published_latency(BASELINE, size)
    if mine is None or not base:
        return None
    return {"ratio": mine / base, "added_us": mine - base, "median_us": mine}


def _flags(row: dict, groups: list[list[float]], ok: list[dict], secured: bool,
           target: float | None, fmt: stats.RowFormat) -> list[dict]:
    flags = []
    unit = "µs" if fmt.unit == "us" else fmt.unit
    if row["failed_repeats"]:
        total = row["failed_repeats"] + row["repeats"]
        flags.append(stats.flag("failed_repeats", "warning",
                                f"{row['failed_repeats']} of {total} repeats failed; the "
                                f"figures use the {row['repeats']} that completed"))
    if row["ci95"] is None:
        flags.append(stats.flag("no_interval", "warning",
                                "too little data for an interval (one value); run more repeats"))
    elif target is not None and row["ci_halfwidth_pct"] > target:
        flags.append(stats.flag(
            "wide_interval", "warning",
            f"95% interval ±{row['ci_halfwidth_pct']:.1f}% is wider than the target "
            f"±{target:g}% after {row['repeats']} repeats"))
    vs = row["vs_none"]
    if secured and vs is not None:
        ratio, ci = vs["ratio"], vs["ratio_ci95"]
        latency = fmt.mode == "latency"
        interval = f" (95% interval {ci[0]:.2f}–{ci[1]:.2f})" if ci else ""
        if ci is not None and (ci[1] < 1 if latency else ci[0] > 1):
            what = "lower latency" if latency else "higher throughput"
            flags.append(stats.flag(
                "faster_than_none", "warning",
                f"a secured profile measured {what} than no security at all: "
                f"× {ratio:.2f}{interval}; security cannot make DDS faster, so the "
                "machine was disturbed; re-run"))
        elif (ci[0] <= 1 <= ci[1]) if ci else (ratio <= 1 if latency else ratio >= 1):
            flags.append(stats.flag(
                "no_measurable_overhead", "note",
                f"× {ratio:.2f}{interval}: indistinguishable from no security at this "
                "precision (not faster: the interval includes 1)"))
    if fmt.value_key:
        split = stats.bimodal([v for g in groups for v in g])
        if split:
            flags.append(stats.flag(
                "bimodal", "warning",
                f"the measured seconds form two groups, around {split[0]:.4g} and "
                f"{split[1]:.4g} {unit}: the machine switched between two states"))
        series = {"medians": groups}
        if fmt.mode == "latency":
            series["means"] = [stats.repeat_values(r, "mean") for r in ok]
        for what, values in series.items():
            change = stats.trend(values)
            if change is not None:
                flags.append(stats.flag(
                    "trend", "warning",
                    f"the per-second {what} still drift: the first third of the measured "
                    f"seconds is {abs(change) * 100:.0f}% {'above' if change > 0 else 'below'} "
                    f"the last third on average over {len(values)} repeat(s); a longer "
                    "--warmup lets each repeat settle first"))
                break
    if fmt.mode == "throughput":
        figures = [stats.repeat_figures(r)[0] for r in ok]
        stalled = sum(f.get("stalled_seconds", 0) or 0 for f in figures)
        lost = sum(f.get("lost", 0) or 0 for f in figures)
        if stalled:
            flags.append(stats.flag("stalled_seconds", "warning",
                                    f"{stalled} measured second(s) without any sample "
                                    "(counted as rate 0)"))
        if lost:
            flags.append(stats.flag("lost_samples", "warning",
                                    f"{lost} samples lost although the writer is reliable"))
    return flags


def _rounded(obj):
    if isinstance(obj, float):
        return round(obj, 4)
    if isinstance(obj, dict):
        return {k: _rounded(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_rounded(v) for v in obj]
    return obj
