"""RTI Perftest runner: the exact method of RTI's secure-performance pages (shared/seeds/000).

One point is a subscriber (`perftest_cpp -sub`, started first) and a publisher
(`perftest_cpp -pub`, `-latencyTest` for latency points) with the seed scripts' options,
spelled out in full (perftest matches options case-insensitively and by prefix, so the
seed's `-datalen`/`-exec`/`-noPrint`/`-noXML` are `-dataLen`/`-executionTime`/
`-noPrintIntervals`/`-noXmlQos`). Secured profiles add the five `-secure*` files of the
bundle. Perftest has a single `-secureCertAuthority` that it uses as *both* the identity CA
(`authentication.ca_file`) and the permissions CA (`access_control.permissions_authority_file`),
so a bundle whose two CAs differ cannot be run: `prepare` says so.

Output parsing accepts perftest's CSV output (the default since Perftest 3.2, which
introduced `-outputFormat` and `-noOutputHeaders`), with or without header rows, the old
and new header spellings (`Length (Bytes)`/`Sample Size (Bytes)`, `Ave`/`Avg`, `us`/`μs`),
optional CPU and serialization columns, and the `legacy` one-line format
(`Length: 32 Latency: Ave 21 us ...`, `Length: 32 Packets: ... Mbps(ave): ... Lost: 0`).
"""

from __future__ import annotations

import math
import os
import re
import shlex
import shutil
from pathlib import Path

from govkit.catalog.measures import MODES
from govkit.catalog.profiles import Profile
from govkit.common.errors import GovkitError
from govkit.runners.base import (
    BenchPoint,
    Bundle,
    ParticipantFiles,
    PointResult,
    ProcessOutput,
    ProcessSpec,
    Runner,
    RunnerError,
)
from govkit.runners.processes import launch_argv

DEFAULT_EXECUTABLE = "perftest_cpp"
PERFTEST_URL = "https://github.com/rticommunity/rtiperftest"

LATENCY_KEYS = ("mean", "std", "min", "max", "median", "p90", "p99", "p9999", "p999999")
# Perftest computes its summary over every sample: its figures are sample statistics.
LATENCY_NAMES = {"mean": "mean_of_samples", "std": "std_of_samples", "min": "min",
                 "max": "max", "median": "median_of_samples", "p90": "p90_of_samples",
                 "p99": "p99_of_samples", "p9999": "p9999_of_samples",
                 "p999999": "p999999_of_samples"}

class PerftestRunner(Runner):
    name = "perftest"
    per_second = False       # one end-of-run summary; perftest discards its own warm-up
    wire_filler = None       # perftest's payload bytes are its own: none is looked for
    pub_delay = 1.0  # seconds between starting the subscriber and the publisher

    def __init__(self, perftest: str | Path | None = None, nic: str = "127.0.0.1") -> None:
        self._perftest = None if perftest in (None, "") else str(perftest)
        self.nic = nic

    def timeout(self, point: BenchPoint) -> float:
        return self.pub_delay + math.ceil(point.duration) + 60  # discovery + secure handshake

    def method(self) -> str:
        return ("RTI Perftest's own end-of-run summary, computed by perftest over all samples "
                "of the run (after perftest's own warm-up); latency is one-way.")

    def versions(self) -> dict:
        return {"perftest": self.executable}

    def runtime(self) -> dict | None:
        return None         # perftest does not say which Connext it was built with

    # -- installation ------------------------------------------------------------------

    def _resolve(self) -> Path | None:
        """The executable to run, or None if it cannot be found."""
        given = os.path.expanduser(self._perftest or DEFAULT_EXECUTABLE)
        if os.sep not in given and (self._perftest is None or not os.path.exists(given)):
            given = shutil.which(given)  # a bare name: look it up on PATH
            if given is None:
                return None
        # Absolute, so "./perftest_cpp" is never looked up on PATH by the process launcher.
        return Path(os.path.abspath(given))

    @property
    def executable(self) -> str:
        """What argv[0] is: the resolved path, else the name as given (for --dry-run)."""
        exe = self._resolve()
        if exe is not None:
            return str(exe)
        return os.path.expanduser(self._perftest) if self._perftest else DEFAULT_EXECUTABLE

    def check_installed(self) -> None:
        exe = self._resolve()
        what = self._perftest or f"{DEFAULT_EXECUTABLE} (not on PATH)"
        if exe is None or not exe.is_file():
            problem = f"RTI Perftest executable not found: {what}"
        elif not os.access(exe, os.X_OK):
            problem = f"RTI Perftest executable is not executable: {exe}"
        else:
            return
        raise GovkitError(
            f"{problem}. Pass --perftest PATH pointing at perftest_cpp built with security "
            f"support (RTI Perftest: {PERFTEST_URL}, source and binaries on its Releases "
            "page; it needs RTI Connext DDS Professional with the Security Plugins)")

    # -- command lines -----------------------------------------------------------------

    def configs(self, point: BenchPoint, bundle: Bundle, workdir: Path) -> dict[Path, str]:
        # For reproducing a point by hand: the exact commands, in start order.
        specs = self.commands(point, bundle, workdir)
        return {Path(workdir) / "perftest-commands.sh": (
            "#!/bin/sh\n# start in this order, the publisher "
            f"{self.pub_delay:g} s after the subscriber\n"
            + "".join(shlex.join(launch_argv(s)) + "\n" for s in specs))}

    def commands(self, point: BenchPoint, bundle: Bundle, workdir: Path) -> list[ProcessSpec]:
        return self._specs(point, bundle)

    def _specs(self, point: BenchPoint, bundle: Bundle) -> list[ProcessSpec]:
        if point.mode not in MODES:
            raise GovkitError(f"unknown benchmark mode {point.mode!r}; valid modes: "
                              f"{', '.join(MODES)}")
        exe = self.executable
        pub_cpu, sub_cpu = point.cpus if point.cpus is not None else (None, None)
        common = ["-domain", str(point.domain_id), "-dataLen", str(point.size)]
        transport = ["-transport", "UDPv4", "-nic", self.nic, "-noPrintIntervals",
                     "-noOutputHeaders", "-outputFormat", "csv", "-noXmlQos"]
        execution = ["-executionTime", str(max(1, math.ceil(point.duration)))]
        latency = ["-latencyTest"] if point.mode == "latency" else []

        sub = [exe, "-sub"] + common + transport + self._secure_args(point.profile, bundle, "sub")
        pub = ([exe, "-pub"] + common + transport + execution + latency
               + self._secure_args(point.profile, bundle, "pub"))
        # Latency: the publisher prints the summary and ends the run. Throughput: the
        # subscriber prints it, and must exit by itself (stdout to a file is block-buffered:
        # a killed process would lose its summary), so it is the primary process there.
        return [
            ProcessSpec("sub", sub, primary=point.mode == "throughput", cpu=sub_cpu,
                        realtime=point.realtime),
            ProcessSpec("pub", pub, start_delay=self.pub_delay, primary=point.mode == "latency",
                        cpu=pub_cpu, realtime=point.realtime),
        ]

    def _secure_args(self, profile: Profile, bundle: Bundle, role: str) -> list[str]:
        if not profile.security:
            return []
        part = bundle.participants.get(role)
        if part is None:
            raise GovkitError(f"the bundle for profile {profile.name!r} has no {role!r} "
                              f"participant (it has: {', '.join(bundle.participants) or 'none'})")
        _require_single_ca(profile, part)
        return [
            "-secureGovernanceFile", str(part.governance),
            "-securePermissionsFile", str(part.permissions),
            "-secureCertAuthority", str(part.identity_ca),
            "-secureCertFile", str(part.certificate),
            "-securePrivateKey", str(part.private_key),
        ]

    # -- output ------------------------------------------------------------------------

    def parse(self, point: BenchPoint, outputs: dict[str, ProcessOutput]) -> PointResult:
        role = "pub" if point.mode == "latency" else "sub"
        out = outputs.get(role)
        if out is None:
            raise RunnerError(f"perftest: no output from the {role} process")
        text = out.stdout + "\n" + out.stderr
        if point.mode == "latency":
            found = parse_latency_summaries(text)
        else:
            found = parse_throughput_summaries(text)
        if not found:
            raise RunnerError(self._failure(point, role, outputs,
                                            f"no {point.mode} summary line"))
        values, fmt, line = _pick(found, point.size)
        extra = {"source": "perftest summary", "format": fmt,
                 "length": int(values["length"]), "line": line}
        if point.mode == "latency":
            if values["max"] == 0 and values["mean"] == 0:
                raise RunnerError(self._failure(point, role, outputs,
                                                "the latency summary reports no samples"))
            if "cpu" in values:
                extra["cpu_percent"] = values["cpu"]
            return PointResult("latency-summary", extra=extra, summary={
                honest: values[k] for k, honest in LATENCY_NAMES.items()
                if values.get(k) is not None})
        if values["total_samples"] == 0:
            raise RunnerError(self._failure(point, role, outputs,
                                            "the throughput summary reports no samples"))
        extra["total_samples"] = int(values["total_samples"])
        if values.get("lost_percent") is not None:
            extra["lost_percent"] = values["lost_percent"]
        if "cpu" in values:
            extra["cpu_percent"] = values["cpu"]
        return PointResult("throughput-summary", extra=extra, summary={
            "mean_rate_sps": values["samples_per_s"], "mean_mbps": values["mbps"],
            "lost": int(values["lost"]), "count": int(values["total_samples"])})

    @staticmethod
    def _failure(point: BenchPoint, role: str, outputs: dict[str, ProcessOutput],
                 what: str) -> str:
        lines = [f"perftest {point.profile.name} {point.mode} {point.size} B: {what} in the "
                 f"{role} output ({outputs[role].status})", outputs[role].tail(12)]
        for other, out in outputs.items():
            if other != role and out.returncode not in (0, None):
                lines += [f"-- {other} ({out.status}):", out.tail(8)]
        return "\n".join(line for line in lines if line)


def _require_single_ca(profile: Profile, part: ParticipantFiles) -> None:
    ident, perms = Path(part.identity_ca), Path(part.permissions_ca)
    if not ident.exists() and not perms.exists():
        return   # a plan (--dry-run): `bench` creates a single-CA PKI for this runner
    try:
        same = ident.resolve() == perms.resolve() or ident.read_bytes() == perms.read_bytes()
    except OSError as e:
        raise GovkitError(f"cannot read the CA certificates of participant {part.name!r}: "
                          f"{e}") from None
    if not same:
        raise GovkitError(
            f"RTI Perftest takes one CA (-secureCertAuthority) for both identity and "
            f"permissions, but participant {part.name!r} of profile {profile.name!r} has a "
            f"different identity CA ({ident}) and permissions CA ({perms}); create a "
            "single-CA test PKI with `govkit pki init --single-ca` and build the bundle "
            "from it")


# -- summary parsing (module level, so it can be used on saved perftest output) ----------

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_US = r"\s*(?:us|μs|µs)"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_FLOAT = re.compile(_NUM + r"$")

_LEGACY_LATENCY = re.compile(
    rf"Length:\s*(?P<length>\d+)\s+Latency:\s+Ave\s+(?P<mean>{_NUM}){_US}"
    rf"\s+Std\s+(?P<std>{_NUM}){_US}\s+Min\s+(?P<min>{_NUM}){_US}"
    rf"\s+Max\s+(?P<max>{_NUM}){_US}\s+50%\s+(?P<median>{_NUM}){_US}"
    rf"\s+90%\s+(?P<p90>{_NUM}){_US}\s+99%\s+(?P<p99>{_NUM}){_US}"
    rf"(?:\s+99\.99%\s+(?P<p9999>{_NUM}){_US})?(?:\s+99\.9999%\s+(?P<p999999>{_NUM}){_US})?"
    rf"(?:\s+CPU\s+(?P<cpu>{_NUM})\s*\(%\))?")
_LEGACY_THROUGHPUT = re.compile(
    rf"Length:\s*(?P<length>\d+)\s+Packets:\s*(?P<total_samples>\d+)"
    rf"\s+Packets/s\(ave\):\s*(?P<samples_per_s>{_NUM})\s+Mbps\(ave\):\s*(?P<mbps>{_NUM})"
    rf"\s+Lost:\s*(?P<lost>\d+)(?:\s*\((?P<lost_percent>{_NUM})%\))?"
    rf"(?:\s+CPU\s+(?P<cpu>{_NUM})\s*\(%\))?")

# CSV column titles (lower case, units removed, Avg spelled Ave) -> our keys.
_COLUMNS = {
    "length": "length", "sample size": "length",
    "ave": "mean", "std": "std", "min": "min", "max": "max", "50%": "median", "90%": "p90",
    "99%": "p99", "99.99%": "p9999", "99.9999%": "p999999", "latency": "latency",
    "total samples": "total_samples", "samples/s": "interval_samples_per_s",
    "ave samples/s": "samples_per_s", "mbps": "interval_mbps", "ave mbps": "mbps",
    "lost samples": "lost", "lost samples (%)": "lost_percent", "cpu (%)": "cpu", "cpu %": "cpu",
    "serialization": "serialization", "deserialization": "deserialization",
    "total": "serialization_total",
}
# Positional layouts when perftest ran with -noOutputHeaders (field count -> keys).
_LATENCY_SUMMARY = ("length",) + LATENCY_KEYS
_POSITIONAL_LATENCY = {
    10: _LATENCY_SUMMARY,
    11: _LATENCY_SUMMARY + ("cpu",),
    13: _LATENCY_SUMMARY + ("serialization", "deserialization", "serialization_total"),
    14: _LATENCY_SUMMARY + ("serialization", "deserialization", "serialization_total", "cpu"),
}
_THROUGHPUT_SUMMARY = ("length", "total_samples", "samples_per_s", "mbps", "lost",
                       "lost_percent")
_POSITIONAL_THROUGHPUT = {6: _THROUGHPUT_SUMMARY, 7: _THROUGHPUT_SUMMARY + ("cpu",)}


def _column_key(title: str) -> str:
    t = title.strip().lower().replace("avg", "ave")
    t = re.sub(r"\((?:us|μs|µs|ns|bytes)\)", "", t)
    t = " ".join(t.split())
    return _COLUMNS.get(t, t)


def _header_kind(keys: list[str]) -> str | None:
    if "median" in keys and "mean" in keys:
        return "latency"
    if "total_samples" in keys and "samples_per_s" in keys and \
            "interval_samples_per_s" not in keys:
        return "throughput"
    return "other"  # an intervals table


def _csv_row(line: str) -> list[float] | None:
    """The numbers of a perftest CSV data row, or None for anything else.

    An empty field is 0: perftest prints Ave Samples/s with `%14.0llu`, which prints
    nothing at all for 0 (seen in seed 003's tables)."""
    fields = [f.strip() for f in line.split(",")]
    if len(fields) < 2 or not fields[0].isdigit():
        return None
    values = []
    for f in fields:
        if f == "":
            values.append(0.0)
        elif _FLOAT.match(f):
            values.append(float(f))
        else:
            return None
    return values


def _lines(text: str) -> list[str]:
    return [_ANSI.sub("", line).strip() for line in text.splitlines()]


def _summaries(text: str, kind: str, legacy: re.Pattern,
               positional: dict[int, tuple[str, ...]]) -> list[tuple[dict, str, str]]:
    found: list[tuple[dict, str, str]] = []
    header: list[str] | None = None
    for line in _lines(text):
        if not line:
            continue
        if "(bytes)" in line.lower() and "," in line:
            header = [_column_key(t) for t in line.split(",")]
            continue
        m = legacy.search(line)
        if m:
            found.append(({k: (None if v is None else float(v))
                           for k, v in m.groupdict().items()
                           if v is not None or k in LATENCY_KEYS}, "legacy", line))
            continue
        row = _csv_row(line)
        if row is None:
            continue
        if header is not None and len(header) == len(row):
            if _header_kind(header) == kind:
                found.append((dict(zip(header, row, strict=True)), "csv", line))
        elif len(row) in positional:
            found.append((dict(zip(positional[len(row)], row, strict=True)), "csv", line))
    return found


def parse_latency_summaries(text: str) -> list[tuple[dict, str, str]]:
    """Every one-way latency summary in perftest publisher output: (values, format, line)."""
    return _summaries(text, "latency", _LEGACY_LATENCY, _POSITIONAL_LATENCY)


def parse_throughput_summaries(text: str) -> list[tuple[dict, str, str]]:
    """Every throughput summary in perftest subscriber output: (values, format, line)."""
    return _summaries(text, "throughput", _LEGACY_THROUGHPUT, _POSITIONAL_THROUGHPUT)


def _pick(found: list[tuple[dict, str, str]], size: int) -> tuple[dict, str, str]:
    """The summary for `size` if one is labelled so, else the last one."""
    for item in reversed(found):
        if int(item[0]["length"]) == size:
            return item
    return found[-1]


RUNNER = PerftestRunner
