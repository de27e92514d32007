"""eProsima Fast DDS 2.9 runner: govkit's own program, built against the system's Fast DDS.

Fast DDS ships no ddsperf, so govkit brings one: govkit/runners/native/fastdds_perf.cpp, compiled
and cached on first use (govkit.runners.fastdds_build). It speaks ddsperf's type, topics and
partitions, so the permissions govkit writes for ddsperf hold for it unchanged and a
Fast DDS process can be paired with a Cyclone ddsperf one (tests/integration/test_cross_vendor.py).

Latency by rotation (govkit.bench.rotation, as for the default runner `cyclone`): long-lived
`fastdds_perf -S pong` / `fastdds_perf -S ping` pairs driven through short slots. The
program's per-second mode (`fastdds_perf pong` and `fastdds_perf ping S`) stays for pairing
with ddsperf across vendors. With --rotate-throughput, throughput rotates too: the same
pairs get throughput slots (`tput`/`count`, cyclone_perf's protocol). Otherwise throughput
points run
`fastdds_perf sub` and `fastdds_perf pub S` per repeat: the subscriber prints one line per
second from the moment its peer matched, handed over as the runner-neutral per-second rows
of govkit.results.stats, the same rows ddsperf's give, read by the same code
(govkit.runners.per_second).
"""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path

from govkit import __version__
from govkit.common.errors import GovkitError
from govkit.runners.base import (
    BenchPoint,
    Bundle,
    PointResult,
    ProcessOutput,
    ProcessSpec,
    RotatingRunner,
    RunnerError,
    topics_env,
)
from govkit.runners.crypto import CRYPTO_DEFAULTS, CryptoVariant
from govkit.runners.fastdds_build import cached_path, ensure_built, fastdds_version
from govkit.runners.fastdds_prefix import FastddsInstall
from govkit.runners.fastdds_refusal import CRL_PROPERTY, PROPERTY_FILES, explain
from govkit.runners.per_second import PerSecondLines, check_seconds
from govkit.runners.readers import check_readers
from govkit.runners.security_log import (
    SECURITY_LOG_ENV,
    fastdds_properties,
    log_file_of,
    read_events,
    said,
)

try:    # a stranger on the domain: main's base.py reruns such a point on another domain
    from govkit.runners.base import ForeignParticipant
except ImportError:  # pragma: no cover - until this branch meets main
    ForeignParticipant = RunnerError

METHOD = (
    "eProsima Fast DDS (Debian's libfastrtps, DDS Security built in) through govkit's "
    "fastdds_perf program (govkit/runners/native/fastdds_perf.cpp), two processes, UDPv4 on "
    "127.0.0.1 only (no shared memory, no data sharing, no multicast), each with the DDS "
    "Security properties of its participant; ddsperf's type, topics and partitions. "
    "Latency: 'fastdds_perf -S ping' against 'fastdds_perf -S pong'; "
    "ping sends the next ping when the pong arrives and takes one-way latency as round "
    "trip / 2 (monotonic clock). Every pair stays up for the whole run and ping-pongs only "
    "when govkit gives it a slot: round trips sent in the slot's settle time are kept apart, "
    "every other one is a sample; per slot the exact mean, min, 50/90/99 % (nearest rank), "
    "max and a 1 % histogram of all its samples. Throughput by rotation (--rotate-"
    "throughput): the same pairs in "
    "throughput slots: ping writes on the data topic (reliable, keep-all, at most 100 "
    "samples, heartbeats every 10 ms) as fast as the writer lets it, then an end marker, "
    "then waits until pong acknowledged every sample; pong counts the samples written after "
    "the settle time, and the slot's rate is those arriving after the first of them over "
    "the time from the first arrival to the last. Per repeat (the default): "
    "'fastdds_perf pub S' "
    "(reliable, keep-all, as fast as it can) into 'fastdds_perf sub', one line per second "
    "from the match on (samples, lost samples (sequence gaps), samples/s and Mb/s = samples "
    "× S × 8, also for seconds without samples); govkit keeps every line as a raw row.")

# fastdds_perf's exit codes (see the program's header comment)
EXIT_PARTICIPANT = 3
EXIT_NO_MATCH = 4
EXIT_DDS = 5

LINES = PerSecondLines(
    latency=re.compile(
        r"^\[(?P<pid>\d+)\] latency t (?P<t>[\d.]+) size (?P<size>\d+) count (?P<count>\d+) "
        r"mean (?P<mean>[\d.]+) min (?P<min>[\d.]+) p50 (?P<p50>[\d.]+) p90 (?P<p90>[\d.]+) "
        r"p99 (?P<p99>[\d.]+) max (?P<max>[\d.]+) us$", re.M),
    throughput=re.compile(
        r"^\[(?P<pid>\d+)\] throughput t (?P<t>[\d.]+) size (?P<size>\d+) "
        r"count (?P<count>\d+) lost (?P<lost>\d+) rate (?P<rate>[\d.]+) samples/s "
        r"mbps (?P<mbps>[\d.]+)$", re.M),
    ping="fastdds_perf ping", sub="fastdds_perf sub")
_PARTICIPANT_RE = re.compile(r"^\[\d+\] participant (?P<peer>\S+): new(?P<note> \(\w+\))?$",
                             re.M)
_UNAUTHORIZED_RE = re.compile(r"^\[\d+\] authentication (\S+): unauthorized$", re.M)


@cache
def fastdds_package_version() -> str:
    """Debian's package version of the Fast DDS library (with its security patches), else
    the version its headers state."""
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libfastrtps2.9"],
                             capture_output=True, text=True, timeout=10)
        if out.returncode == 0 and out.stdout:
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return fastdds_version()


class FastddsRunner(RotatingRunner):
    """A RotatingRunner (its row in govkit.catalog.runners says what it rotates) with
    `fastdds_perf -S`."""
    name = "fastdds"
    per_second = True
    # The wire check does not look for filler bytes in Fast DDS's traffic (fastdds_perf
    # fills with ddsperf's 0xee too): it judges the submessages alone (govkit.wire.rtps).
    wire_filler = None
    init_wait_s = 10      # -w: how long a process waits for its peer to match
    # govkit stops both processes as soon as the seconds it needs are in; the program's
    # own -D (counted from the match) is only a backstop this much later.
    backstop_s = 10

    def __init__(self, dds_prefix: FastddsInstall | None = None):
        self.executable: str | None = None
        self.install = dds_prefix      # --dds-prefix's Fast DDS 2 (None: the system's)

    def method(self) -> str:
        if self.install is None:
            return METHOD
        return f"{METHOD} Fast DDS: {self.install.name_of()} (--dds-prefix)."

    def check_installed(self) -> None:
        self.executable = str(ensure_built(self.install))

    def versions(self) -> dict:
        return {"fastdds": self.install.label if self.install else fastdds_package_version(),
                "fastdds_perf": Path(self.executable or cached_path(self.install)).name}

    def runtime(self) -> dict | None:
        """results.json's settings.runtime: the Fast DDS the run used, as its headers state
        it."""
        if self.install is not None:
            return self.install.to_json()
        return {"name": "Fast DDS", "version": fastdds_version(), "prefix": "/usr",
                "library": None, "source": "system"}

    # ------------------------------------------------------------------ configuration

    def properties_path(self, bundle: Bundle, participant: str, workdir: Path) -> Path:
        return Path(workdir).resolve() / f"fastdds-{bundle.profile.name}-{participant}.properties"

    def security_log_path(self, bundle: Bundle, participant: str, workdir: Path) -> Path:
        """Where the participant's DDS Security log goes (govkit.runners.security_log)."""
        return Path(workdir).resolve() / f"fastdds-{bundle.profile.name}-{participant}.security.log"

    def properties_text(self, bundle: Bundle, participant: str,
                        security_log: Path | None = None) -> str:
        """The DDS Security properties of one participant, as Fast DDS names them; with
        `security_log`, its logging plugin on, writing there."""
        files = bundle.participants.get(participant)
        if files is None:
            raise GovkitError(f"bundle for {bundle.profile.name} has no participant "
                              f"{participant!r}")
        # a key in a token is already a pkcs11: URI (Pkcs11Provider.cpp: OpenSSL's pkcs11 engine)
        uris = {key: value if isinstance(value := getattr(files, key), str) else value.as_uri()
                for key in PROPERTY_FILES}
        lines = [f"# Fast DDS DDS Security properties of participant {participant!r}, "
                 f"profile {bundle.profile.name} (govkit {__version__}); "
                 f"read by fastdds_perf -s",
                 "dds.sec.auth.plugin=builtin.PKI-DH",
                 "dds.sec.access.plugin=builtin.Access-Permissions",
                 "dds.sec.crypto.plugin=builtin.AES-GCM-GMAC"]
        lines += [f"{name}={uris[key]}" for key, name in PROPERTY_FILES.items()]
        if files.crl is not None:    # Fast DDS 2.9 reads a file:// CRL URI only
            lines.append(f"{CRL_PROPERTY}={files.crl.as_uri()}")
        if security_log is not None:
            lines += fastdds_properties(security_log)
        return "\n".join(lines) + "\n"

    def configs(self, point: BenchPoint, bundle: Bundle, workdir: Path) -> dict[Path, str]:
        if not bundle.profile.security:
            return {}       # the baseline loads no security plugins at all
        return {self.properties_path(bundle, role, workdir): self.properties_text(
                    bundle, role, self.security_log_path(bundle, role, workdir))
                for role in ("sub", "pub")}

    def commands(self, point: BenchPoint, bundle: Bundle, workdir: Path) -> list[ProcessSpec]:
        needed = point.warmup + point.duration          # per-second lines to collect
        backstop = needed + self.backstop_s
        exe = self.executable or str(cached_path(self.install))
        cpu_pub, cpu_sub = point.cpus if point.cpus else (None, None)

        def argv(participant: str, duration: int, *mode: str) -> list[str]:
            args = [exe, "-i", str(point.domain_id), "-w", str(self.init_wait_s),
                    "-D", str(duration)]
            if bundle.profile.security:
                args += ["-s", str(self.properties_path(bundle, participant, workdir))]
            return args + list(mode)

        if point.mode == "latency":
            sub = argv("sub", backstop + 2, "pong")
            pub = argv("pub", backstop, "ping", str(point.size))
            primary = "pub"
        elif point.mode == "throughput":
            sub = argv("sub", backstop, "sub")
            pub = argv("pub", backstop + 2, "pub", str(point.size))
            primary = "sub"   # the subscriber holds the numbers
        else:
            raise GovkitError(f"unknown mode {point.mode!r}")
        enough = LINES.enough(point.mode, needed)
        # Both start at once: -w makes each wait for the other.
        return [ProcessSpec("sub", sub, token_env(bundle, "sub"), cpu=cpu_sub,
                            primary=primary == "sub",
                            stop_when=enough if primary == "sub" else None,
                            realtime=point.realtime),
                ProcessSpec("pub", pub, token_env(bundle, "pub"), cpu=cpu_pub,
                            primary=primary == "pub",
                            stop_when=enough if primary == "pub" else None,
                            realtime=point.realtime)]

    def pair_specs(self, bundle: Bundle, domain_id: int, cpus: tuple[int, int] | None,
                   realtime: bool, workdir: Path, wait_s: float = 30.0,
                   variant: CryptoVariant | None = None, readers: int = 1
                   ) -> list[ProcessSpec]:
        """pong then ping of one long-lived pair serving slots (fastdds_perf -S); the
        property files are the per-repeat ones (written by the caller with `configs`).
        A crypto variant (govkit.runners.crypto) becomes -k/-r: its properties on both
        participants and on all their writers and readers. `readers` > 1 becomes -n: pong
        forks that many reader processes, all on pong's CPU (govkit.runners.readers); at 1
        the command lines are what they always were."""
        exe = self.executable or str(cached_path(self.install))
        specs = []
        for role, verb, cpu in (("sub", "pong", cpus[1] if cpus else None),
                                ("pub", "ping", cpus[0] if cpus else None)):
            args = [exe, "-S", "-i", str(domain_id), "-w", f"{wait_s:g}"]
            if readers != 1:
                args += ["-n", str(check_readers(readers))]
            if bundle.profile.security:
                args += ["-s", str(self.properties_path(bundle, role, workdir))]
                if variant is not None and variant.key_bits:
                    args += ["-k", str(variant.key_bits)]
                if variant is not None and variant.rekey is not None:
                    args += ["-r", str(variant.rekey)]
            # where its security log is, for explain_refusal (fastdds_perf ignores it)
            log = {SECURITY_LOG_ENV: str(self.security_log_path(bundle, role, workdir))} \
                if bundle.profile.security else {}
            specs.append(ProcessSpec(role, [*args, verb],
                                     {**token_env(bundle, role), **topics_env(bundle.profile),
                                      **log},
                                     cpu=cpu, realtime=realtime))
        return specs

    @staticmethod
    def crypto_applied(variant: CryptoVariant | None) -> dict:
        """What a variant's pair was given, for results.json."""
        if variant is None:
            return {"properties": {}, "where": "nothing set: " + CRYPTO_DEFAULTS["fastdds"]}
        return {"properties": variant.properties(),
                "where": "fastdds_perf -k/-r: on both participants (RTPS-level key) and on "
                         "every writer and reader (submessage and payload keys)"}

    @staticmethod
    def explain_refusal(env: dict[str, str], stderr: str, domain_id: int) -> str:
        """A rotating pair's side that refused: what Fast DDS said about security on its
        stderr and, on the pair's domain, in its security log (the side's
        SECURITY_LOG_ENV), in its own words ("" when it said nothing: the per-repeat road
        adds govkit's own checks of the files, refusal_message)."""
        log = env.get(SECURITY_LOG_ENV)
        events = [e for e in read_events(Path(log)) if e.domain == domain_id] if log else []
        words = said(stderr, events)
        return f"Fast DDS said: {' | '.join(words)}" if words else ""

    def timeout(self, point: BenchPoint) -> float:
        return self.init_wait_s + point.warmup + point.duration + self.backstop_s

    # ------------------------------------------------------------------ parsing

    def parse(self, point: BenchPoint, outputs: dict[str, ProcessOutput]) -> PointResult:
        # A refused participant first: its peer then only says that nobody matched.
        for o in outputs.values():
            if o.returncode == EXIT_PARTICIPANT:
                raise RunnerError(refusal_message(o))
        for o in outputs.values():
            name = f"fastdds_perf {' '.join(_mode_args(o.argv))}"
            if o.timed_out:
                raise RunnerError(f"{name} did not finish within {self.timeout(point):.0f} s "
                                  f"(peer never matched, or stopped answering)")
            if o.returncode == EXIT_NO_MATCH:
                raise RunnerError(f"{name}: no peer matched within {self.init_wait_s} s"
                                  + _unauthorized_note(outputs) + _runtime_said(outputs))
            if o.returncode not in (None, 0):
                raise RunnerError(f"{name} exited with status {o.returncode}"
                                  + _error_line(o) + _known_crash(o))
        role = "pub" if point.mode == "latency" else "sub"
        self._check_peers(outputs, role)
        if point.mode == "latency":
            return check_seconds(point, self.parse_latency(outputs["pub"].stdout))
        return check_seconds(point, self.parse_throughput(outputs["sub"].stdout))

    def _check_peers(self, outputs: dict[str, ProcessOutput], role: str) -> None:
        """The only participant a process may see is this run's other process."""
        me, other = outputs[role], outputs["sub" if role == "pub" else "pub"]
        for m in _PARTICIPANT_RE.finditer(me.stdout):
            if m["note"] == " (self)":
                continue
            if m["note"] == " (foreign)" or (other.pid is not None
                                             and not m["peer"].endswith(f":{other.pid}")):
                raise ForeignParticipant(
                    f"a foreign participant {m['peer']} was discovered by this run's {role} "
                    f"process; result discarded (another DDS application on domain "
                    f"{_option(me.argv, '-i')}?)")

    @staticmethod
    def parse_latency(text: str) -> PointResult:
        """Every per-second latency line, as rows (µs)."""
        return LINES.latency_result(text)

    @staticmethod
    def parse_throughput(text: str) -> PointResult:
        """Every per-second subscriber line from the first one with samples on."""
        return LINES.throughput_result(text)


def token_env(bundle: Bundle, role: str) -> dict[str, str]:
    """SoftHSM2 finds a participant's token through SOFTHSM2_CONF (govkit.pki.hsm)."""
    files = bundle.participants.get(role) if bundle.profile.security else None
    conf = files.token_conf if files is not None else None
    return {"SOFTHSM2_CONF": str(conf)} if conf is not None else {}


def _option(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv[:-1] else None


def _mode_args(argv: list[str]) -> list[str]:
    """The mode words after the options of a fastdds_perf command line ('ping 32', 'sub')."""
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        i += 1 if argv[i] == "-E" else 2     # -E is the only option without a value
    return argv[i:]


def _error_line(output: ProcessOutput) -> str:
    """The program's own last 'error:' line, if it printed one."""
    found = re.findall(r"^\[\d+\] error: (.*)$", output.stderr, re.M)
    return f": {found[-1]}" if found else ""


def _known_crash(output: ProcessOutput) -> str:
    if "add_statistics_submessage" in output.stderr:
        return ("; Fast DDS 2.9 aborted on its own assertion: an RTPS-protected message filled "
                "to the transport's maximum leaves no room for its statistics submessage "
                "(fixed upstream in Fast DDS 2.13, eProsima/Fast-DDS#2485)")
    return ""


def _unauthorized_note(outputs: dict[str, ProcessOutput]) -> str:
    guids = sorted({g for o in outputs.values() for g in _UNAUTHORIZED_RE.findall(o.stdout)})
    if not guids:
        return ""
    return (f"; Fast DDS reported participant(s) {', '.join(guids)} unauthorized (their "
            f"authentication handshake failed)")


def security_said(output: ProcessOutput) -> list[str]:
    """What Fast DDS said about security in one process: its security warnings on stderr
    and the events of its DDS Security log (govkit.runners.security_log), its own words."""
    props = _option(output.argv, "-s")
    log = log_file_of(Path(props)) if props else None
    return said(output.stderr, read_events(log, output.pid))


def _runtime_said(outputs: dict[str, ProcessOutput]) -> str:
    words = [f"{o.role}: {w}" for o in outputs.values() for w in security_said(o)]
    return f"; Fast DDS said: {' | '.join(words)}" if words else ""


def refusal_message(output: ProcessOutput) -> str:
    """What to say when a process could not create its participant: what Fast DDS said
    (its security warnings and security log, where it says anything), and govkit's own
    checks of the files that process was given."""
    domain = int(_option(output.argv, "-i") or 0)
    props = _option(output.argv, "-s")
    reasons = explain(Path(props) if props else None, domain)
    words = security_said(output)
    head = (f"fastdds_perf {' '.join(_mode_args(output.argv))} ({output.role}) could not "
            f"create its participant on domain {domain}"
            + (f"; Fast DDS said: {' | '.join(words)}" if words
               else " (Fast DDS 2.9 gives no reason)"))
    if not reasons:
        return (head + "; govkit's own checks of the files it was given find nothing wrong "
                "(signatures, CAs, validity as Fast DDS reads it, subject, domain)")
    return head + "; govkit's own checks of the files it was given: " + "; ".join(reasons)


RUNNER = FastddsRunner
