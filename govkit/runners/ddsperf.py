"""Eclipse Cyclone DDS `ddsperf` runner (the embedded default).

Latency: `ddsperf pong` (subscriber role) and `ddsperf ping size S` (publisher role). ddsperf
already reports one-way latency: round trip / 2 (process_pong in ddsperf.c).
Throughput: `ddsperf sub` and `ddsperf pub size S`.

ddsperf prints one summary line per second, not raw samples: the runner hands those lines
over as rows (govkit.runners.per_second, as for fastdds_perf's), and govkit.results.stats
computes every figure from them.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path, PurePosixPath

from govkit import __version__
from govkit.common.errors import GovkitError
from govkit.common.templating import get_template
from govkit.runners.base import (
    BenchPoint,
    Bundle,
    ForeignParticipant,
    PointResult,
    ProcessOutput,
    ProcessSpec,
    Runner,
    RunnerError,
)
from govkit.runners.cyclone_refusal import explain_cyclone_refusal
from govkit.runners.dds_prefix import CycloneInstall, system_install
from govkit.runners.per_second import PerSecondLines, check_seconds
from govkit.runners.security_events import cyclone_log_pattern

METHOD = (
    "Eclipse Cyclone DDS ddsperf, two processes with a configuration each that names one "
    "interface (loopback unless the point's path is netns or hosts) and the peer's address. "
    "Latency: 'ddsperf ping size S' against 'ddsperf pong'; ping sends the next ping when "
    "the pong arrives and reports one-way latency (round trip / 2). Throughput: 'ddsperf "
    "pub size S' (as fast as it can, reliable) into 'ddsperf -1 sub'. ddsperf prints one "
    "summary line per second (latency: count, mean, min, 50/90/99 % and max of that "
    "second, the percentiles over at most the first 20000 samples of the second; "
    "throughput: samples, lost samples and rate of that second, also for seconds without "
    "samples); govkit keeps every line as a raw row.")

INSTALL_HINT = ("install Cyclone DDS and its security plugins: `sudo apt-get install "
                "cyclonedds-tools libddsc0debian` "
                "(in a govkit checkout, `bash .ci/setup` installs all of it)")
PLUGINS = ("libdds_security_auth.so", "libdds_security_ac.so", "libdds_security_crypto.so")

LINES = PerSecondLines(
    latency=re.compile(
        r"^\[(?P<pid>\d+)\]\s+(?P<t>[\d.]+)\s+(?P<peer>\S+) size (?P<size>\d+) "
        r"mean (?P<mean>[\d.]+)us min (?P<min>[\d.]+)us 50% (?P<p50>[\d.]+)us "
        r"90% (?P<p90>[\d.]+)us 99% (?P<p99>[\d.]+)us max (?P<max>[\d.]+)us "
        r"cnt (?P<count>\d+)", re.M),
    throughput=re.compile(
        r"^\[(?P<pid>\d+)\]\s+(?P<t>[\d.]+)\s+size (?P<size>\d+) total (?P<total>\d+) "
        r"lost \d+ delta (?P<count>\d+) lost (?P<lost>\d+) "
        r"rate (?P<rate>[\d.]+) kS/s (?P<mbps>[\d.]+) Mb/s", re.M),
    ping="ddsperf ping", sub="ddsperf sub", rate_scale=1000)
# ddsperf -X (extended statistics), the publisher's data writer; cumulative counters.
_XMIT_RE = re.compile(
    r"^\[(?P<pid>\d+)\]\s+(?P<t>[\d.]+)\s+discarded (?P<discarded>\d+) rexmit (?P<rexmit>\d+) "
    r"Trexmit (?P<trexmit>\d+) Tthrottle (?P<tthrottle>\d+) Nthrottle (?P<nthrottle>\d+)", re.M)
_SELF_RE = re.compile(r"^\[\d+\] participant (?P<name>\S+): new \(self\)", re.M)
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


class DdsperfRunner(Runner):
    name = "ddsperf"
    per_second = True
    init_wait_s = 10      # -Qinitwait: how long a process waits for its peer to match
    # ddsperf ping sends its first ping one second after its peer matched, so the first
    # latency line (t = 2.000) already covers a full second of round trips.
    idle_s = 1
    # govkit stops both processes as soon as the seconds it needs are in; ddsperf's own -D
    # (counted from the match) is only a backstop this much later.
    backstop_s = 10
    # ddsperf fills its samples' baggage with 0xee: a run of them on the wire is a readable
    # payload (govkit.wire.rtps); a runner without such a filler leaves this out.
    wire_filler = b"\xee"

    def __init__(self, ddsperf: str | None = None, dds_prefix: CycloneInstall | None = None):
        # dds_prefix: a Cyclone DDS installed in a prefix (checked by
        # govkit.runners.dds_prefix.prefix_options): its ddsperf and plugins, not /usr's
        self.install = dds_prefix
        self.executable = ddsperf or (str(dds_prefix.ddsperf) if dds_prefix else "ddsperf")
        self.plugins: Path | None = dds_prefix.plugins if dds_prefix else None

    def method(self) -> str:
        return METHOD

    def check_installed(self) -> None:
        if self.install is not None:
            return          # checked whole when the run was given it
        path = shutil.which(self.executable)
        if not path:
            raise GovkitError(f"ddsperf not found; {INSTALL_HINT}")
        self.executable = path
        self.plugins = find_security_plugins()
        if self.plugins is None:
            raise GovkitError(f"Cyclone DDS security plugins ({', '.join(PLUGINS)}) not found; "
                              f"{INSTALL_HINT}; or set GOVKIT_CYCLONE_PLUGINS to their directory")

    def versions(self) -> dict:
        if self.install is not None:
            return {"cyclonedds": self.install.label}
        return {"cyclonedds": cyclonedds_version()}

    def runtime(self) -> dict | None:
        """results.json's settings.runtime: the Cyclone DDS the run used, its version as its
        library states it (govkit.runners.dds_prefix)."""
        install = self.install or system_install()
        return install.to_json() if install else None

    def config_path(self, bundle: Bundle, participant: str, workdir: Path,
                    point: BenchPoint | None = None) -> Path:
        """Where the side's configuration goes: the local work directory, or the remote
        host's for a side run over ssh (govkit.runners.netpath ships it there)."""
        net = f"-{point.network.slug}" if point is not None else ""
        name = f"cyclonedds-{bundle.profile.name}{net}-{participant}.xml"
        where = point.endpoint(participant) if point is not None else None
        if where is not None and where.remote:
            return PurePosixPath(where.workdir or ".") / name
        return Path(workdir).resolve() / name

    def config_text(self, bundle: Bundle, participant: str, point: BenchPoint | None = None,
                    security_log: str | None = None) -> str:
        files = bundle.participants.get(participant)
        if bundle.profile.security and files is None:
            raise GovkitError(f"bundle for {bundle.profile.name} has no participant "
                              f"{participant!r}")
        if bundle.profile.security and isinstance(files.private_key, str):
            # auth_utils.c load_X509_private_key: "PrivateKey pkcs11 format currently not
            # supported" (Cyclone DDS 0.10 reads file: and data: keys only)
            raise GovkitError(f"{participant}'s private key is in a PKCS#11 token "
                              f"({files.private_key.split('?')[0]}); Cyclone DDS 0.10 cannot "
                              f"use a pkcs11: key (only file: and data:): use --runner "
                              f"fastdds, or a PKI whose keys are files")
        me = point.endpoint(participant) if point is not None else None
        # --dry-run on a machine without Cyclone: show where the plugins are expected.
        plugins = (me and me.plugins) or self.plugins or find_security_plugins() \
            or "/usr/lib/MULTIARCH/libddsc0debian"
        return get_template("cyclonedds.xml.j2").render(
            name=participant, files=files if bundle.profile.security else None,
            plugins=plugins, version=__version__, net=self._net(point, bundle, participant),
            uri=lambda p: PurePosixPath(p).as_uri(), security_log=security_log)

    @staticmethod
    def _net(point: BenchPoint | None, bundle: Bundle, role: str) -> dict:
        """The network part of one side's configuration, from the point alone."""
        if point is None:
            return {"interface": "lo", "address": "127.0.0.1", "peers": ["127.0.0.1"],
                    "transport": "udp", "path": "lo", "loss_per_mille": 0}
        me, other = point.endpoint(role), point.endpoint("sub" if role == "pub" else "pub")
        net = point.network
        tcp = net.transport in ("tcp", "tls")
        if tcp and point.tcp_port is None:
            raise GovkitError("a tcp/tls point needs a TCP port "
                              "(govkit.bench.repeat chooses one)")
        if not tcp:
            peers = [other.address]
        else:    # the sub side listens; the pub side connects to it
            peers = [f"{other.address}:{point.tcp_port}"] if role == "pub" else []
        keystore = bundle.tls.get(role) if net.transport == "tls" else None
        if net.transport == "tls" and keystore is None:
            raise GovkitError(f"no TLS keystore for {role} (govkit.generate.bundle.ensure_tls)")
        return {"interface": me.interface, "address": me.address, "peers": peers,
                "transport": net.transport, "path": net.path,
                "tcp_port": (point.tcp_port if role == "sub" else -1) if tcp else None,
                "keystore": str(keystore) if keystore else None,
                # 002's driver drops on the publisher's NIC only; so does govkit
                "loss_per_mille": net.loss_per_mille if role == "pub" else 0}

    def configs(self, point: BenchPoint, bundle: Bundle, workdir: Path) -> dict[Path, str]:
        paths = {role: self.config_path(bundle, role, workdir, point) for role in ("sub", "pub")}
        return {path: self.config_text(bundle, role, point, cyclone_log_pattern(path))
                for role, path in paths.items()}

    def commands(self, point: BenchPoint, bundle: Bundle, workdir: Path) -> list[ProcessSpec]:
        needed = point.warmup + point.duration          # per-second lines to collect
        backstop = self.idle_s + needed + self.backstop_s
        cpu_pub, cpu_sub = point.cpus if point.cpus else (None, None)

        def common(role):
            where = point.endpoint(role)
            return [where.ddsperf or "ddsperf" if where.remote else self.executable,
                    "-i", str(point.domain_id), "-Qminmatch:1", f"-Qinitwait:{self.init_wait_s}"]

        def env(participant):
            path = self.config_path(bundle, participant, workdir, point)
            return {"CYCLONEDDS_URI": PurePosixPath(path).as_uri()}

        if point.mode == "latency":
            sub = [*common("sub"), "-D", str(backstop + 2), "pong"]
            pub = [*common("pub"), "-D", str(backstop), "ping", "size", str(point.size)]
            primary = "pub"
        elif point.mode == "throughput":
            # -1: a line every second, also for seconds without samples (stalls count).
            sub = [*common("sub"), "-D", str(backstop + 2), "-1", "sub"]
            # -X: the publisher's retransmitted bytes per second, when loss is injected
            # (ddsperf counts them for its throughput writer only, not for ping/pong)
            extended = ["-X"] if point.network.loss_pct else []
            pub = [*common("pub"), *extended, "-D", str(backstop), "pub", "size",
                   str(point.size)]
            primary = "sub"   # the subscriber holds the numbers
        else:
            raise GovkitError(f"unknown mode {point.mode!r}")
        enough = LINES.enough(point.mode, needed)

        def spec(role, argv, cpu):
            where = point.endpoint(role)
            local = not where.remote      # govkit pins and prioritises local processes only
            return ProcessSpec(role, argv, env(role), cpu=cpu if local else None,
                               primary=primary == role,
                               stop_when=enough if primary == role else None,
                               realtime=point.realtime and local,
                               endpoint=where if point.endpoints else None)

        # Both start at once: -Qinitwait makes each wait for the other.
        return [spec("sub", sub, cpu_sub), spec("pub", pub, cpu_pub)]

    def timeout(self, point: BenchPoint) -> float:
        return self.init_wait_s + self.idle_s + point.warmup + point.duration + self.backstop_s

    # ------------------------------------------------------------------ parsing

    @staticmethod
    def _peer_name(other: ProcessOutput) -> str | None:
        """How the other process names itself (`host:pid`, from its own "(self)" line; a
        remote process's pid is not the local ssh's), else `:pid` for a local one."""
        m = _SELF_RE.search(other.stdout)
        if m:
            return m["name"]
        return f":{other.pid}" if other.pid is not None else None

    def _check_peers(self, outputs: dict[str, ProcessOutput], role: str) -> None:
        """The only participant a process may see is this run's other process."""
        me, other = outputs[role], outputs["sub" if role == "pub" else "pub"]
        peer = self._peer_name(other)
        for m in _PARTICIPANT_RE.finditer(me.stdout):
            if peer is not None and not _same(m["peer"], peer):
                raise ForeignParticipant(f"a foreign participant {m['peer']} matched this run's "
                                  f"{role} process; result discarded (another DDS application "
                                  f"on domain {me.argv[me.argv.index('-i') + 1]}?)")

    def parse(self, point: BenchPoint, outputs: dict[str, ProcessOutput]) -> PointResult:
        role = "pub" if point.mode == "latency" else "sub"
        # A refused participant first: its peer then only waits for a match that never comes.
        for o in sorted(outputs.values(), key=lambda o: o.returncode in (None, 0)):
            name = f"ddsperf {o.argv[-1] if o.role == 'sub' else ' '.join(o.argv[-3:])}"
            if o.returncode not in (None, 0):
                why = explain_cyclone_refusal(o.env, o.stdout + o.stderr, point.domain_id)
                raise RunnerError(f"{name} exited with status {o.returncode}"
                                  + (f"; {why}" if why else ""))
            if o.timed_out:
                why = explain_cyclone_refusal(o.env, o.stdout + o.stderr, point.domain_id)
                raise RunnerError(f"{name} did not finish within {self.timeout(point):.0f} s "
                                  f"(peer never matched, or stopped answering)"
                                  + (f"; {why}" if why else ""))
        self._check_peers(outputs, role)
        try:
            if point.mode == "latency":
                result = self.parse_latency(outputs["pub"].stdout,
                                            peer=self._peer_name(outputs["sub"]))
            else:
                result = self.parse_throughput(outputs["sub"].stdout)
                if point.network.loss_pct:
                    add_retransmissions(result, outputs["pub"].stdout)
        except RunnerError as e:
            # The peers never matched: a side that refused the other's handshake says why.
            why = next((f"{o.role}: {w}" for o in outputs.values()
                        if (w := explain_cyclone_refusal(o.env, o.stdout + o.stderr,
                                                         point.domain_id))), "")
            if not why:
                raise
            raise RunnerError(f"{e}; {why}") from None
        return check_seconds(point, result)

    @staticmethod
    def parse_latency(text: str, peer_pid: int | None = None, peer: str | None = None
                      ) -> PointResult:
        """Every per-second latency line for the peer (`host:pid`, or any host with
        `peer_pid`), as rows (µs)."""
        if peer is None and peer_pid is not None:
            peer = f":{peer_pid}"
        return LINES.latency_result(text, None if peer is None
                                    else lambda name: _same(name, peer))

    @staticmethod
    def parse_throughput(text: str) -> PointResult:
        """Every per-second subscriber line from the first one with samples on."""
        return LINES.throughput_result(text)


def _same(name: str, peer: str) -> bool:
    """`host:pid` is `peer` (or, for `:pid`, ends with it)."""
    return name.endswith(peer) if peer.startswith(":") else name == peer


def add_retransmissions(result: PointResult, pub_text: str) -> None:
    """Each subscriber second gets the bytes the publisher retransmitted in its own second
    ending within half a second of it (`rexmit_bytes`, None where there is none): ddsperf -X
    prints cumulative counters once a second, from the publisher's clock, which starts
    with the subscriber's to within milliseconds (both are started at once). The
    publisher's lines are kept as they were printed, in `publisher_xmit`."""
    xmit = [{"t": float(m["t"]), "discarded_bytes": int(m["discarded"]),
             "rexmit_bytes": int(m["rexmit"]), "rexmit_ns": int(m["trexmit"]),
             "throttle_ns": int(m["tthrottle"]), "throttle_count": int(m["nthrottle"])}
            for m in _XMIT_RE.finditer(pub_text)]
    deltas = [(b["t"], b["rexmit_bytes"] - a["rexmit_bytes"])
              for a, b in zip([{"rexmit_bytes": 0}, *xmit], xmit, strict=False)]
    for row in result.rows:
        near = [d for t, d in deltas if abs(t - row["t"]) < 0.5]
        row["rexmit_bytes"] = near[0] if near else None
    result.extra["publisher_xmit"] = xmit


RUNNER = DdsperfRunner
