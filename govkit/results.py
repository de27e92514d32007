"""Benchmark results: results.json (schema govkit.bench/1), per-profile CSV, and summary.

Everything is rewritten atomically after every point, so Ctrl-C, a crash or a failed point
never loses a completed point, and `--resume` can continue from the file.
"""

from __future__ import annotations

import csv
import io
import json
import os
import platform
import statistics
import subprocess
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path

from . import __version__
from .errors import GovkitError
from .fsutil import write_atomic
from .profiles import PROFILES, get_profile
from .published import published_ratio

SCHEMA = "govkit.bench/1"


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
            "cpu": cpu, "cores": os.cpu_count(), "kernel": f"{uname.system} {uname.release} "
            f"{uname.machine}", **(extra or {})}


def point_key(r: dict) -> tuple:
    return (r["profile"], r["mode"], r["size"], r.get("repeat", 0))


@dataclass
class ResultStore:
    """results.json plus the per-profile CSVs in one directory."""
    directory: Path
    doc: dict = field(default_factory=dict)

    @property
    def json_path(self) -> Path:
        return self.directory / "results.json"

    @classmethod
    def create(cls, directory: Path, command: str, runner: str, settings: dict,
               env: dict, profiles: list[dict]) -> ResultStore:
        from datetime import datetime
        store = cls(Path(directory), {
            "schema": SCHEMA, "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": command, "runner": runner, "environment": env, "settings": settings,
            "profiles": profiles, "signed_files": [], "results": [], "summary": []})
        store.save()
        return store

    @classmethod
    def load(cls, directory: Path) -> ResultStore:
        path = Path(directory) / "results.json"
        try:
            doc = json.loads(path.read_text())
        except FileNotFoundError:
            raise GovkitError(f"{path}: no results to resume") from None
        except (OSError, ValueError) as e:
            raise GovkitError(f"{path}: unreadable results file: {e}") from None
        if doc.get("schema") != SCHEMA:
            raise GovkitError(f"{path}: schema is {doc.get('schema')!r}, expected {SCHEMA!r}")
        return cls(Path(directory), doc)

    def completed(self) -> set[tuple]:
        return {point_key(r) for r in self.doc["results"] if r.get("status") == "ok"}

    def add(self, result: dict) -> None:
        key = point_key(result)
        self.doc["results"] = [r for r in self.doc["results"] if point_key(r) != key]
        self.doc["results"].append(result)
        self.save()

    def add_signed_files(self, entries: list[dict]) -> None:
        known = {e["path"] for e in self.doc["signed_files"]}
        self.doc["signed_files"] += [e for e in entries if e["path"] not in known]

    def save(self) -> None:
        self.doc["summary"] = summarize(self.doc["results"])
        write_atomic(self.json_path, json.dumps(self.doc, indent=2) + "\n")
        for profile in {r["profile"] for r in self.doc["results"]}:
            for mode in ("latency", "throughput"):
                rows = [r for r in self.doc["results"] if r["profile"] == profile
                        and r["mode"] == mode and r.get("status") == "ok"]
                if rows:
                    write_atomic(self.directory / csv_name(profile, mode), to_csv(rows, mode))


def csv_name(profile: str, mode: str) -> str:
    """The seeds' file names, so existing post-processing keeps working."""
    alias = get_profile(profile).alias
    prefixes = {"latency": "lat_udpv4_pub", "throughput": "thr_udpv4_sub"}
    if mode not in prefixes:
        raise GovkitError(f"unknown benchmark mode {mode!r}; valid: {', '.join(prefixes)}")
    prefix = prefixes[mode]
    return f"{prefix}_unkeyed_rel_security_{alias}.csv"


def to_csv(rows: list[dict], mode: str) -> str:
    """Perftest-style summary columns (µs), one line per size and repetition."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    if mode == "latency":
        w.writerow(["Length (Bytes)", "Repeat", "Latency Samples", "Ave (us)", "Std (us)",
                    "Min (us)", "Max (us)", "50% (us)", "90% (us)", "99% (us)"])
        for r in sorted(rows, key=lambda r: (r["size"], r.get("repeat", 0))):
            s = r["latency_us"]
            w.writerow([r["size"], r.get("repeat", 0), r.get("count"), s["mean"], s["std"],
                        s["min"], s["max"], s["median"], s["p90"], s["p99"]])
    else:
        w.writerow(["Length (Bytes)", "Repeat", "Samples/s", "Mbps", "Lost Samples"])
        for r in sorted(rows, key=lambda r: (r["size"], r.get("repeat", 0))):
            t = r["throughput"]
            w.writerow([r["size"], r.get("repeat", 0), t["samples_per_s"], t["mbps"], t["lost"]])
    return out.getvalue()


def summarize(results: list[dict]) -> list[dict]:
    """One latency row per (profile, size): median over repeats, spread, overhead vs none."""
    groups: dict[tuple[str, int], list[dict]] = {}
    for r in results:
        if r["mode"] == "latency" and r.get("status") == "ok":
            groups.setdefault((r["profile"], r["size"]), []).append(r["latency_us"])
    medians = {k: statistics.median(s["median"] for s in v) for k, v in groups.items()}
    order = {p.name: i for i, p in enumerate(PROFILES)}
    rows = []
    for (profile, size), stats in sorted(groups.items(),
                                         key=lambda kv: (order.get(kv[0][0], 99), kv[0][1])):
        med = medians[(profile, size)]
        base = medians.get(("none", size))
        rows.append({
            "profile": profile, "mode": "latency", "size": size, "repeats": len(stats),
            "median_us": round(med, 3),
            "spread_us": [min(s["median"] for s in stats), max(s["median"] for s in stats)],
            "p90_us": round(statistics.median(s["p90"] for s in stats), 3),
            "p99_us": round(statistics.median(s["p99"] for s in stats), 3),
            "overhead_vs_none": round(med / base, 3) if base else None,
            "rti_ratio": (round(r, 3) if (r := published_ratio(profile, size)) else None),
        })
    return rows
