"""Eclipse Cyclone DDS `ddsperf` runner (the embedded default).

Latency: `ddsperf pong` (subscriber role) and `ddsperf ping size S` (publisher role). ddsperf
already reports one-way latency: round trip / 2 (process_pong in ddsperf.c).
Throughput: `ddsperf sub` and `ddsperf pub size S`.

ddsperf prints one summary line per second, not raw samples: the runner hands those lines
over as rows, and govkit.stats computes every figure from them.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

import jinja2

from .. import __version__
from ..errors import GovkitError
from ..paths import TEMPLATES_DIR
from .base import (
    BenchPoint,
    Bundle,
    ForeignParticipant,
    PointResult,
    ProcessOutput,
    ProcessSpec,
    RunnerError,
)

METHOD = (
    "Eclipse Cyclone DDS ddsperf, two processes with a loopback-only configuration each. "
    "Latency: `ddsperf ping size S` against `ddsperf pong`; ping sends the next ping when "
    "the pong arrives and reports one-way latency (round trip / 2). Throughput: `ddsperf "
    "pub size S` (as fast as it can, reliable) into `ddsperf -1 sub`. ddsperf prints one "
    "summary line per second (latency: count, mean, min, 50/90/99 % and max of that "
    "second, the percentiles over at most the first 20000 samples of the second; "
    "throughput: samples, lost samples and rate of that second, also for seconds without "
    "samples); govkit keeps every line as a raw row.")

INSTALL_HINT = ("install Cyclone DDS and its security plugins: `sudo apt-get install "
                "cyclonedds-tools libddsc0debian` (or run `bash .ci/setup`)")
PLUGINS = ("libdds_security_auth.so", "libdds_security_ac.so", "libdds_security_crypto.so")

_LATENCY_RE = re.compile(
    r"^\[(?P<pid>\d+)\]\s+(?P<t>[\d.]+)\s+(?P<peer>\S+) size (?P<size>\d+) mean (?P<mean>[\d.]+)us "
    r"min (?P<min>[\d.]+)us 50% (?P<p50>[\d.]+)us 90% (?P<p90>[\d.]+)us 99% (?P<p99>[\d.]+)us "
    r"max (?P<max>[\d.]+)us cnt (?P<cnt>\d+)", re.M)
_THROUGHPUT_RE = re.compile(
    r"^\[(?P<pid>\d+)\]\s+(?P<t>[\d.]+)\s+size (?P<size>\d+) total (?P<total>\d+) lost \d+ "
    r"delta (?P<delta>\d+) lost (?P<lost>\d+) "
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
    per_second = True
    init_wait_s = 10      # -Qinitwait: how long a process waits for its peer to match
    # ddsperf ping sends its first ping one second after its peer matched, so the first
    # latency line (t = 2.000) already covers a full second of round trips.
    idle_s = 1
    # govkit stops both processes as soon as the seconds it needs are in; ddsperf's own -D
    # (counted from the match) is only a backstop this much later.
    backstop_s = 10
    # ddsperf fills its samples' baggage with 0xee: a run of them on the wire is a readable
    # payload (govkit.wire); a runner without such a filler leaves this out.
    wire_filler = b"\xee"

    def __init__(self, ddsperf: str | None = None):
        self.executable = ddsperf or "ddsperf"
        self.plugins: Path | None = None

    def method(self) -> str:
        return METHOD

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

    def config_path(self, bundle: Bundle, participant: str, workdir: Path) -> Path:
        return Path(workdir).resolve() / f"cyclonedds-{bundle.profile.name}-{participant}.xml"

    def config_text(self, bundle: Bundle, participant: str) -> str:
        files = bundle.participants.get(participant)
        if bundle.profile.security and files is None:
            raise GovkitError(f"bundle for {bundle.profile.name} has no participant "
                              f"{participant!r}")
        # --dry-run on a machine without Cyclone: show where the plugins are expected.
        plugins = self.plugins or find_security_plugins() or "/usr/lib/MULTIARCH/libddsc0debian"
        return _template().render(name=participant, files=files if bundle.profile.security
                                  else None, plugins=plugins, version=__version__)

    def configs(self, point: BenchPoint, bundle: Bundle, workdir: Path) -> dict[Path, str]:
        return {self.config_path(bundle, role, workdir): self.config_text(bundle, role)
                for role in ("sub", "pub")}

    def commands(self, point: BenchPoint, bundle: Bundle, workdir: Path) -> list[ProcessSpec]:
        needed = point.warmup + point.duration          # per-second lines to collect
        backstop = self.idle_s + needed + self.backstop_s
        common = [self.executable, "-i", str(point.domain_id), "-Qminmatch:1",
                  f"-Qinitwait:{self.init_wait_s}"]
        cpu_pub, cpu_sub = point.cpus if point.cpus else (None, None)

        def env(participant):
            return {"CYCLONEDDS_URI": self.config_path(bundle, participant, workdir).as_uri()}

        if point.mode == "latency":
            sub = [*common, "-D", str(backstop + 2), "pong"]
            pub = [*common, "-D", str(backstop), "ping", "size", str(point.size)]
            primary = "pub"

            def enough(text: str) -> bool:
                return len(_LATENCY_RE.findall(text)) >= needed
        elif point.mode == "throughput":
            # -1: a line every second, also for seconds without samples (stalls count).
            sub = [*common, "-D", str(backstop + 2), "-1", "sub"]
            pub = [*common, "-D", str(backstop), "pub", "size", str(point.size)]
            primary = "sub"   # the subscriber holds the numbers

            def enough(text: str) -> bool:
                return len(_throughput_rows(text)) >= needed
        else:
            raise GovkitError(f"unknown mode {point.mode!r}")
        # Both start at once: -Qinitwait makes each wait for the other.
        return [ProcessSpec("sub", sub, env("sub"), cpu=cpu_sub, primary=primary == "sub",
                            stop_when=enough if primary == "sub" else None),
                ProcessSpec("pub", pub, env("pub"), cpu=cpu_pub, primary=primary == "pub",
                            stop_when=enough if primary == "pub" else None)]

    def timeout(self, point: BenchPoint) -> float:
        return self.init_wait_s + self.idle_s + point.warmup + point.duration + self.backstop_s

    # ------------------------------------------------------------------ parsing

    def _check_peers(self, outputs: dict[str, ProcessOutput], role: str) -> None:
        """The only participant a process may see is this run's other process."""
        me, other = outputs[role], outputs["sub" if role == "pub" else "pub"]
        for m in _PARTICIPANT_RE.finditer(me.stdout):
            if other.pid is not None and not m["peer"].endswith(f":{other.pid}"):
                raise ForeignParticipant(f"a foreign participant {m['peer']} matched this run's "
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
            result = self.parse_latency(outputs["pub"].stdout, peer_pid=outputs["sub"].pid)
        else:
            result = self.parse_throughput(outputs["sub"].stdout)
        needed = point.warmup + point.duration
        if len(result.rows) < needed:
            raise RunnerError(f"only {len(result.rows)} of {needed} seconds ({point.warmup} "
                              f"warm-up + {point.duration} measured) arrived (the peer stopped "
                              f"answering?)")
        return result

    @staticmethod
    def parse_latency(text: str, peer_pid: int | None = None) -> PointResult:
        """Every per-second latency line for the peer, as rows (µs)."""
        rows = [{"t": float(m["t"]), "count": int(m["cnt"]), "mean": float(m["mean"]),
                 "min": float(m["min"]), "p50": float(m["p50"]), "p90": float(m["p90"]),
                 "p99": float(m["p99"]), "max": float(m["max"])}
                for m in _LATENCY_RE.finditer(text)
                if peer_pid is None or m["peer"].endswith(f":{peer_pid}")]
        if not rows:
            raise RunnerError("ddsperf printed no latency lines (did the peer match and "
                              "answer?)")
        return PointResult("latency-per-second", rows)

    @staticmethod
    def parse_throughput(text: str) -> PointResult:
        """Every per-second subscriber line from the first one with samples on."""
        rows = _throughput_rows(text)
        if not rows:
            raise RunnerError("ddsperf sub received no samples (did the publisher match?)")
        return PointResult("throughput-per-second", rows)


def _throughput_rows(text: str) -> list[dict]:
    """Subscriber lines as rows, from the first second with samples: the seconds before it
    are the subscriber waiting for the publisher, not a stall. Later seconds without
    samples are kept (rate 0)."""
    rows = [{"t": float(m["t"]), "count": int(m["delta"]), "lost": int(m["lost"]),
             "rate_sps": float(m["ksps"]) * 1000, "mbps": float(m["mbps"])}
            for m in _THROUGHPUT_RE.finditer(text)]
    first = next((i for i, r in enumerate(rows) if r["count"] > 0), len(rows))
    return rows[first:]


RUNNER = DdsperfRunner
