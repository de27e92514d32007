"""The runner interface: build config, build command lines, run, parse output.

A runner never signs or validates anything: it receives a `Bundle` of already signed,
verified files (govkit.generate.bundle) and turns one `BenchPoint` into configuration files
(`configs`, pure) and `ProcessSpec`s (`commands`, pure), which the shared
govkit.runners.processes.run_processes executes; the runner then parses their output into a
`PointResult` that holds the raw rows it read. `Runner.run` is that road, whole: prepare,
run, parse, handed back as a `PointRun`. Statistics are not the runner's business:
govkit.results.stats computes every figure from those rows, the same way for every runner.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from govkit.catalog.profiles import Profile
from govkit.common.fsutil import write_atomic
from govkit.runners.crypto import CryptoVariant
from govkit.runners.network import DEFAULT, LOOPBACK, Endpoint, Network
from govkit.runners.pair import Pair, PairFailed
from govkit.runners.processes import ProcessOutput, ProcessSpec, run_processes


@dataclass(frozen=True)
class ParticipantFiles:
    """What one secured participant needs (all paths absolute)."""
    name: str
    identity_ca: Path
    certificate: Path
    private_key: Path | str   # a file, or a pkcs11: URI (a key in a token: Fast DDS only)
    permissions_ca: Path
    governance: Path      # signed governance (.p7s)
    permissions: Path     # signed permissions (.p7s)
    # The Identity CA's CRL, once the PKI has one (govkit.pki.revocation): every
    # configuration names it, so each side refuses revoked peers (and itself if revoked).
    crl: Path | None = None
    # With a key in a SoftHSM2 token: its configuration (SOFTHSM2_CONF of the process).
    token_conf: Path | None = None


# The environment variable that names the ping, pong and data topics of govkit's own
# programs (cyclone_perf.c, fastdds_perf.cpp): "PING,PONG,DATA"; unset, ddsperf's.
TOPICS_ENV = "GOVKIT_PERF_TOPICS"


def topics_env(profile: Profile) -> dict[str, str]:
    """The environment that puts a pair on its profile's topics (`Profile.topics`); a name
    with a comma is never one of them (govkit.bench.policy_points leaves it out)."""
    if any("," in t for t in profile.topics or ()):
        raise ValueError(f"{TOPICS_ENV}: a topic name holds a comma: {profile.topics}")
    return {TOPICS_ENV: ",".join(profile.topics)} if profile.topics else {}


@dataclass(frozen=True)
class Bundle:
    """Signed files for one profile; `participants` is empty for the `none` baseline."""
    profile: Profile
    participants: dict[str, ParticipantFiles] = field(default_factory=dict)
    # TLS transport only: per participant, one PEM holding its TLS certificate, its key and
    # the Identity CA certificate (Cyclone's <SSL><KeystoreFile>; govkit.generate.bundle.ensure_tls)
    tls: dict[str, Path] = field(default_factory=dict)


@dataclass(frozen=True)
class BenchPoint:
    profile: Profile
    mode: str              # "latency" | "throughput"
    size: int              # payload bytes
    duration: int          # measured seconds (warm-up excluded)
    repeat: int = 0        # repetition index
    domain_id: int = 0     # private per run: strays on other domains cannot match
    cpus: tuple[int, int] | None = None  # optional pinning (publisher, subscriber)
    warmup: int = 1        # leading seconds recorded but not measured
    realtime: bool = False  # run both processes SCHED_FIFO (see govkit.bench.machine)
    network: Network = DEFAULT  # transport, path and injected loss (govkit.runners.network)
    tcp_port: int | None = None  # tcp/tls: the port the sub side listens on
    # Where each side runs (govkit.runners.netpath): None is both on this machine's loopback.
    endpoints: tuple[Endpoint, Endpoint] | None = None

    def endpoint(self, role: str) -> Endpoint:
        found = {e.role: e for e in self.endpoints or ()}
        return found.get(role) or LOOPBACK[role]


@dataclass
class PointResult:
    """What a runner read from one point's output, before any statistics.

    Either `rows`: one dict per reporting interval (ddsperf: per second), warm-up rows
    included, in the runner's `row_format` (see govkit.results.stats); or, for a runner that only
    prints an end-of-run summary (RTI Perftest), `summary`: that summary's own statistics.
    """
    row_format: str
    rows: list[dict] = field(default_factory=list)
    summary: dict | None = None
    extra: dict = field(default_factory=dict)  # runner-specific details (e.g. the raw line)


class RunnerError(Exception):
    """A point failed: the message names what happened and shows the runner's last lines."""


@dataclass
class PointRun:
    """One run of a point's processes (`Runner.run`): what was started, what each printed,
    and what the runner read from it, or why it could not (`error`)."""
    specs: list[ProcessSpec]
    outputs: dict[str, ProcessOutput]
    result: PointResult | None = None
    error: RunnerError | None = None


# `around(point, specs)` in Runner.run: a block open while a point's processes run
Around = Callable[["BenchPoint", list[ProcessSpec]], AbstractContextManager]


class ForeignParticipant(RunnerError):
    """Another DDS application shared the point's domain: the point is not failed but
    contaminated, and is run again on another domain."""


class Runner(Protocol):
    """What every runner offers. What it can do beyond running per-repeat points (rotate,
    keys in a token) is a column of its row in the runner table
    (govkit.catalog.runners.RunnerInfo), read without importing the runner. A runner
    class names this one as its base, and so has `run`."""
    name: str
    per_second: bool        # True: rows per second (warm-up applies); False: one summary
    # The byte the runner's samples are filled with (ddsperf's 0xee), which the wire check
    # looks for in clear (govkit.wire.verdict); None: not known, the check is skipped.
    wire_filler: bytes | None

    def method(self) -> str:
        """What the runner measures and prints (stored with every result)."""

    def versions(self) -> dict:
        """Versions of the runner's software for results.json's environment."""

    def runtime(self) -> dict | None:
        """results.json's settings.runtime: the DDS implementation the run used, its version
        and where it is installed (None where govkit cannot tell)."""

    def check_installed(self) -> None:
        """Raise GovkitError (exit 2) with install instructions if the runner is unusable."""

    def configs(self, point: BenchPoint, bundle: Bundle, workdir: Path) -> dict[Path, str]:
        """The configuration files the point's processes read (path -> text); pure."""

    def commands(self, point: BenchPoint, bundle: Bundle, workdir: Path) -> list[ProcessSpec]:
        """The processes to start, in order; pure (nothing is written or started)."""

    def parse(self, point: BenchPoint, outputs: dict[str, ProcessOutput]) -> PointResult:
        """Turn the processes' output into statistics; raise RunnerError if it cannot."""

    def timeout(self, point: BenchPoint) -> float:
        """Seconds after which a point's processes are killed and the point fails."""

    def run(self, point: BenchPoint, bundle: Bundle, workdir: Path,
            write: Callable[[Path, str], None] | None = None, around: Around | None = None
            ) -> PointRun:
        """One run of the point: its configuration files written (`prepare`), its processes
        run until the primary one is done (`run_processes`; `around(point, specs)`, if
        given, is a block open meanwhile: a capture, link counters) and their output
        parsed. A RunnerError of the parse is handed back in the run, with the output it
        could not read."""
        specs = prepare(self, point, bundle, workdir, write)
        with around(point, specs) if around else nullcontext():
            outputs = run_processes(specs, timeout=self.timeout(point))
        try:
            return PointRun(specs, outputs, self.parse(point, outputs))
        except RunnerError as e:
            return PointRun(specs, outputs, error=e)


class RotatingRunner(Runner, Protocol):
    """A runner whose row says `rotates`: its own program serves long-lived pairs in slots
    (govkit.runners.pair, govkit.bench.rotation) and groups of participants for
    `--mode discovery` (govkit.runners.group)."""

    def pair_specs(self, bundle: Bundle, domain_id: int, cpus: tuple[int, int] | None,
                   realtime: bool, workdir: Path, wait_s: float = 30.0,
                   variant: CryptoVariant | None = None) -> list[ProcessSpec]:
        """pong ("sub") then ping ("pub") of one long-lived pair on `domain_id`; the
        configuration files are the per-repeat ones (`configs`, written by the caller)."""

    def discovery_specs(self, bundle: Bundle, domain_id: int, peers: int, wait_s: float,
                        workdir: Path) -> list[ProcessSpec]:
        """`peers` participants started together, each printing `matched T`."""

    def crypto_applied(self, variant: CryptoVariant | None) -> dict:
        """What a crypto variant's pair was given, for results.json."""

    def explain_refusal(self, env: dict[str, str], stderr: str, domain_id: int) -> str:
        """One line naming the file, the rule and the fix when a side refused to start or
        to match ("" when the output says nothing govkit knows)."""

    def ready_pair(self, bundle: Bundle, domain_id: int, request: PairRequest) -> Pair:
        """A pair of this runner's program, started and matched: its specs, its refusal
        explainer and its scheduling policy (`request.realtime`: SCHED_FIFO from its
        start, its latency slots so) are the runner's, so bench schedules slots and never
        builds a pair. PairFailed if it did not match (the pair closed; the error's
        `commands` are its command lines)."""
        extra: dict = {} if request.variant is None else {"variant": request.variant}
        if request.readers != 1:
            extra["readers"] = request.readers
        wait_s = request.match_wait_s()
        pair = Pair(request.name, request.label, request.instance, domain_id,
                    self.pair_specs(bundle, domain_id, request.cpus, request.realtime,
                                    request.workdir, wait_s=wait_s, **extra),
                    self.explain_refusal, realtime=request.realtime)
        try:
            pair.start(timeout=request.timeout_s or wait_s + START_MARGIN_S)
        except PairFailed as e:
            pair.close()
            e.commands = pair.commands()
            raise
        return pair


@dataclass(frozen=True)
class PairRequest:
    """What bench asks of a rotating runner's pair besides its bundle and domain: the arm
    it measures (`name`), how messages name it (`label`), its instance, the CPUs (ping's,
    pong's) and policy it runs with, its work directory, crypto variant and readers."""
    name: str
    label: str
    instance: int
    cpus: tuple[int, int] | None
    realtime: bool
    workdir: Path
    variant: CryptoVariant | None = None
    readers: int = 1
    timeout_s: float | None = None      # None: the match wait and START_MARGIN_S

    def match_wait_s(self) -> float:
        """How long each side waits for its peers to match: MATCH_WAIT_S per reader.
        Every participant authenticates every other, so N readers are N + 1 participants
        and N(N + 1)/2 handshakes; with 30 s for any count, 7 of the 4-reader Fast DDS
        pairs of a loaded run (2026-12-07, load 13) gave up before the last matched."""
        return MATCH_WAIT_S * max(1, self.readers)


MATCH_WAIT_S = 30.0     # a pair's wait for its peer to match, per reader
START_MARGIN_S = 30.0   # govkit's wait for both sides' `ready` beyond theirs


def prepare(runner: Runner, point: BenchPoint, bundle: Bundle, workdir: Path,
            write: Callable[[Path, str], None] | None = None) -> list[ProcessSpec]:
    """Write the point's configuration files (atomically; `write` puts a remote side's on
    its host: govkit.runners.netpath.NetPaths.write) and return its processes."""
    for path, text in runner.configs(point, bundle, workdir).items():
        (write or write_atomic)(path, text)
    return runner.commands(point, bundle, workdir)
