"""Eclipse Cyclone DDS `ddsperf` runner (the embedded default).

Latency: `ddsperf pong` (subscriber role) and `ddsperf ping size S` (publisher role). ddsperf
already reports one-way latency: round trip / 2 (process_pong in ddsperf.c).
Throughput: `ddsperf sub` and `ddsperf pub size S`.

ddsperf prints one summary line per second, not raw samples, so a point's statistics are
aggregated from those lines (AGGREGATION below says how; it is stored with every result).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import statistics
import subprocess
from functools import cache
from pathlib import Path

import jinja2

from .. import __version__
from ..errors import GovkitError
from ..fsutil import write_atomic
from ..paths import TEMPLATES_DIR
from .base import BenchPoint, Bundle, PointResult, ProcessOutput, ProcessSpec, RunnerError

AGGREGATION = (
    "ddsperf prints one summary per second (its percentiles come from at most 20000 samples "
    "of that second). govkit drops the first {warmup} second(s) as warm-up, then over the "
    "measured seconds reports: median = median of the per-second medians; p90/p99 = median "
    "of the per-second p90/p99; mean = count-weighted mean of the per-second means; min/max "
    "= overall min/max; std = standard deviation of the per-second means (ddsperf prints no "
    "per-sample deviation); count = samples in the measured seconds. Throughput: mean of "
    "the per-second rates; lost = sum of samples lost in the measured seconds."
)

INSTALL_HINT = ("install Cyclone DDS and its security plugins: `sudo apt-get install "
                "cyclonedds-tools libddsc0debian` (or run `bash .ci/setup`)")
PLUGINS = ("libdds_security_auth.so", "libdds_security_ac.so", "libdds_security_crypto.so")

_LATENCY_RE = re.compile(
    r"^\[(?P<pid>\d+)\]\s+(?P<t>[\d.]+)\s+(?P<peer>\S+) size (?P<size>\d+) mean (?P<mean>[\d.]+)us "
    r"min (?P<min>[\d.]+)us 50% (?P<p50>[\d.]+)us 90% (?P<p90>[\d.]+)us 99% (?P<p99>[\d.]+)us "
    r"max (?P<max>[\d.]+)us cnt (?P<cnt>\d+)", re.M)
_THROUGHPUT_RE = re.compile(
    r"^\[(?P<pid>\d+)\]\s+(?P<t>[\d.]+)\s+size (?P<size>\d+) total (?P<total>\d+) lost \d+ "
    r"delta (?P<delta>[1-9]\d*) lost (?P<lost>\d+) "   # seconds with data only
    r"rate (?P<ksps>[\d.]+) kS/s (?P<mbps>[\d.]+) Mb/s",
    re.M)
_PARTICIPANT_RE = re.compile(r"^\[(?P<pid>\d+)\] participant (?P<peer>\S+): new(?! \(self\))",
                             re.M)


def find_security_plugins() -> Path | None:
    """The directory holding Cyclone's three security plugins (Debian puts them in a
    private libddsc0debian/ directory that the loader does not search by itself)."""
    candidates = [os.environ.get("GOVKIT_CYCLONE_PLUGINS", "")]
    candidates += sorted(glob.glob("/usr/lib/*/libddsc0debian")) + sorted(glob.glob("/usr/lib/*"))
    candidates += ["/usr/lib", "/usr/local/lib", "/usr/local/lib64"]
    for d in filter(None, candidates):
        if all(os.path.exists(os.path.join(d, p)) for p in PLUGINS):
            return Path(d)
    return None


@cache
def cyclonedds_version() -> str:
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libddsc0debian"],
                             capture_output=True, text=True, timeout=10)
        if out.returncode == 0 and out.stdout:
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown"


@cache
def _template() -> jinja2.Template:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES_DIR), autoescape=True,
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.get_template("cyclonedds.xml.j2")


class DdsperfRunner:
    name = "ddsperf"
    needs_single_ca = False
    warmup_s = 1
    init_wait_s = 10      # -Qinitwait: how long a process waits for its peer to match
    # govkit stops both processes as soon as the measured seconds are in; ddsperf's own -D
    # (counted from process start, including discovery and the secure handshake) is only
    # a backstop this much later.
    backstop_s = 10

    def __init__(self, ddsperf: str | None = None, pin: bool = False, **_ignored):
        self.executable = ddsperf or "ddsperf"
        self.pin = pin
        self.plugins: Path | None = None

    def aggregation(self) -> str:
        return AGGREGATION.format(warmup=self.warmup_s)

    def check_installed(self) -> None:
        path = shutil.which(self.executable)
        if not path:
            raise GovkitError(f"ddsperf not found; {INSTALL_HINT}")
        self.executable = path
        self.plugins = find_security_plugins()
        if self.plugins is None:
            raise GovkitError(f"Cyclone DDS security plugins ({', '.join(PLUGINS)}) not found; "
                              f"{INSTALL_HINT}; or set GOVKIT_CYCLONE_PLUGINS to their directory")

    def versions(self) -> dict:
        return {"cyclonedds": cyclonedds_version()}

    def write_config(self, bundle: Bundle, participant: str, workdir: Path) -> Path:
        files = bundle.participants.get(participant)
        if bundle.profile.security and files is None:
            raise GovkitError(f"bundle for {bundle.profile.name} has no participant "
                              f"{participant!r}")
        path = Path(workdir).resolve() / f"cyclonedds-{bundle.profile.name}-{participant}.xml"
        text = _template().render(name=participant, files=files if bundle.profile.security
                                  else None, plugins=self.plugins, version=__version__)
        write_atomic(path, text)
        return path

    def prepare(self, point: BenchPoint, bundle: Bundle, workdir: Path) -> list[ProcessSpec]:
        if self.plugins is None:
            self.check_installed()
        needed = self.warmup_s + int(point.duration)     # per-second lines to collect
        backstop = needed + self.backstop_s
        common = [self.executable, "-i", str(point.domain_id), "-Qminmatch:1",
                  f"-Qinitwait:{self.init_wait_s}"]
        cpu_pub, cpu_sub = point.cpus if (self.pin and point.cpus) else (None, None)

        def env(participant):
            return {"CYCLONEDDS_URI": self.write_config(bundle, participant, workdir).as_uri()}

        if point.mode == "latency":
            sub = [*common, "-D", str(backstop + 2), "pong"]
            pub = [*common, "-D", str(backstop), "ping", "size", str(point.size)]
            pattern, primary = _LATENCY_RE, "pub"
        elif point.mode == "throughput":
            sub = [*common, "-D", str(backstop + 2), "sub"]
            pub = [*common, "-D", str(backstop), "pub", "size", str(point.size)]
            pattern, primary = _THROUGHPUT_RE, "sub"   # the subscriber holds the numbers
        else:
            raise GovkitError(f"unknown mode {point.mode!r}")

        def enough(text: str) -> bool:
            return len(pattern.findall(text)) >= needed

        return [ProcessSpec("sub", sub, env("sub"), cpu=cpu_sub, primary=primary == "sub",
                            stop_when=enough if primary == "sub" else None),
                ProcessSpec("pub", pub, env("pub"), cpu=cpu_pub, start_delay=0.2,
                            primary=primary == "pub",
                            stop_when=enough if primary == "pub" else None)]

    def timeout(self, point: BenchPoint) -> float:
        return self.init_wait_s + self.warmup_s + point.duration + self.backstop_s

    # ------------------------------------------------------------------ parsing

    def _check_peers(self, outputs: dict[str, ProcessOutput], role: str) -> None:
        """The only participant a process may see is this run's other process."""
        me, other = outputs[role], outputs["sub" if role == "pub" else "pub"]
        for m in _PARTICIPANT_RE.finditer(me.stdout):
            if other.pid is not None and not m["peer"].endswith(f":{other.pid}"):
                raise RunnerError(f"a foreign participant {m['peer']} matched this run's "
                                  f"{role} process; result discarded (another DDS application "
                                  f"on domain {me.argv[me.argv.index('-i') + 1]}?)")

    def parse(self, point: BenchPoint, outputs: dict[str, ProcessOutput]) -> PointResult:
        role = "pub" if point.mode == "latency" else "sub"
        for o in outputs.values():
            name = f"ddsperf {o.argv[-1] if o.role == 'sub' else ' '.join(o.argv[-3:])}"
            if o.timed_out:
                raise RunnerError(f"{name} did not finish within {self.timeout(point):.0f} s "
                                  f"(peer never matched, or stopped answering)")
            if o.returncode not in (None, 0):
                raise RunnerError(f"{name} exited with status {o.returncode}")
        self._check_peers(outputs, role)
        if point.mode == "latency":
            result = self.parse_latency(outputs["pub"].stdout, point.duration,
                                        peer_pid=outputs["sub"].pid)
        else:
            result = self.parse_throughput(outputs["sub"].stdout, point.duration)
        if result.extra["seconds"] < int(point.duration):
            raise RunnerError(f"only {result.extra['seconds']} of {int(point.duration)} measured "
                              f"seconds arrived (the peer stopped answering?)")
        return result

    def _measured(self, rows: list[dict], duration: float) -> list[dict]:
        return rows[self.warmup_s:self.warmup_s + max(1, int(duration))]

    def parse_latency(self, text: str, duration: float, peer_pid: int | None = None
                      ) -> PointResult:
        rows = [m.groupdict() for m in _LATENCY_RE.finditer(text)
                if peer_pid is None or m["peer"].endswith(f":{peer_pid}")]
        rows = self._measured(rows, duration)
        if not rows:
            raise RunnerError("ddsperf printed no latency lines after the warm-up "
                              "(did the peer match and answer?)")
        cnt = [int(r["cnt"]) for r in rows]
        means = [float(r["mean"]) for r in rows]
        total = sum(cnt)
        mean = sum(m * c for m, c in zip(means, cnt, strict=True)) / total
        stats = {
            "median": statistics.median([float(r["p50"]) for r in rows]),
            "mean": mean,
            "std": statistics.pstdev(means) if len(means) > 1 else 0.0,
            "min": min(float(r["min"]) for r in rows),
            "max": max(float(r["max"]) for r in rows),
            "p90": statistics.median([float(r["p90"]) for r in rows]),
            "p99": statistics.median([float(r["p99"]) for r in rows]),
        }
        return PointResult(latency_us={k: round(v, 3) for k, v in stats.items()}, count=total,
                           extra={"seconds": len(rows), "per_second": rows})

    def parse_throughput(self, text: str, duration: float) -> PointResult:
        rows = [m.groupdict() for m in _THROUGHPUT_RE.finditer(text)]  # seconds with data
        rows = self._measured(rows, duration)
        if not rows:
            raise RunnerError("ddsperf sub printed no throughput lines after the warm-up "
                              "(did the publisher match?)")
        sps = statistics.fmean(float(r["ksps"]) * 1000 for r in rows)
        mbps = statistics.fmean(float(r["mbps"]) for r in rows)
        lost = sum(int(r["lost"]) for r in rows)
        return PointResult(throughput={"samples_per_s": round(sps, 1), "mbps": round(mbps, 2),
                                       "lost": lost},
                           count=sum(int(r["delta"]) for r in rows),
                           extra={"seconds": len(rows), "per_second": rows})
