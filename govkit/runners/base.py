"""The runner interface: build config, build command lines, run, parse output.

A runner never signs or validates anything: it receives a `Bundle` of already signed,
verified files (govkit.generate.bundle) and turns one `BenchPoint` into configuration files
(`configs`, pure) and `ProcessSpec`s (`commands`, pure), which the shared `run_processes`
executes; the runner then parses their output into a `PointResult` that holds the raw rows
it read. Statistics are not the runner's business: govkit.results.stats computes every figure from
those rows, the same way for every runner.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from govkit.catalog.profiles import Profile
from govkit.common.fsutil import write_atomic
from govkit.common.workers import dies_with_parent
from govkit.runners.network import DEFAULT, LOOPBACK, Endpoint, Network


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
class ProcessSpec:
    role: str                          # e.g. "pub" / "sub"
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    start_delay: float = 0.0           # seconds after the previous process started
    primary: bool = False              # the run ends when the primary process exits
    cpu: int | None = None             # pin to this CPU (taskset) when set
    realtime: bool = False             # SCHED_FIFO priority 1 (chrt) when set
    # Primary only: called with the output so far; True ends the run early (all stopped).
    stop_when: Callable[[str], bool] | None = None
    # Where it runs (netns / ssh); None: here, as it is. See launch_argv.
    endpoint: Endpoint | None = None


@dataclass
class ProcessOutput:
    role: str
    argv: list[str]
    returncode: int | None             # None: still running when we stopped it
    stdout: str
    stderr: str
    pid: int | None = None
    timed_out: bool = False            # stopped because the point's timeout expired
    cpus_allowed: str | None = None    # the affinity the process really ran with (/proc)
    policy: str | None = None          # the scheduling policy it really ran with (/proc)
    env: dict[str, str] = field(default_factory=dict)   # what govkit added (its config file)

    @property
    def status(self) -> str:
        if self.timed_out:
            return "killed after the timeout"
        return "stopped by govkit" if self.returncode is None else f"exit code {self.returncode}"

    def tail(self, n: int = 8) -> str:
        lines = (self.stdout + self.stderr).strip().splitlines()
        return "\n".join(lines[-n:])


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


class ForeignParticipant(RunnerError):
    """Another DDS application shared the point's domain: the point is not failed but
    contaminated, and is run again on another domain."""


class Runner(Protocol):
    name: str
    per_second: bool        # True: rows per second (warm-up applies); False: one summary

    def method(self) -> str:
        """What the runner measures and prints (stored with every result)."""

    def versions(self) -> dict:
        """Versions of the runner's software for results.json's environment."""

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


def prepare(runner: Runner, point: BenchPoint, bundle: Bundle, workdir: Path,
            write: Callable[[Path, str], None] | None = None) -> list[ProcessSpec]:
    """Write the point's configuration files (atomically; `write` puts a remote side's on
    its host: govkit.runners.netpath.NetPaths.write) and return its processes."""
    for path, text in runner.configs(point, bundle, workdir).items():
        (write or write_atomic)(path, text)
    return runner.commands(point, bundle, workdir)


def launch_argv(spec: ProcessSpec) -> list[str]:
    """argv with the scheduling prefixes: `chrt -f 1` (real-time) and `taskset -c N`; in a
    network namespace behind `ip netns exec NAME` (which execs: the pid stays the runner's,
    so its placement is read as before); on a remote host the whole command as one ssh
    command (see remote_script)."""
    argv = ((["chrt", "-f", "1"] if spec.realtime else [])
            + (["taskset", "-c", str(spec.cpu)] if spec.cpu is not None else []) + spec.argv)
    where = spec.endpoint
    if where is not None and where.netns:
        argv = ["ip", "netns", "exec", where.netns, *argv]
    if where is not None and where.ssh:
        return [*where.ssh, remote_script(spec.role, where.workdir or ".", spec.env, argv)]
    return argv


def remote_script(role: str, workdir: str, env: dict[str, str], argv: list[str]) -> str:
    """The remote shell command for one process.

    A remote process does not end when its ssh connection does (no tty, no SIGHUP), so the
    script ties it to ssh's standard input, which govkit holds open while the process should
    run: when govkit closes it (the point is done, Ctrl-C) or dies (even by SIGKILL), a
    watcher reading it sees end-of-file and sends the process SIGINT. `$$` in the watcher
    subshell is the outer shell's pid, which `exec` hands to the runner. The pid is also
    written to ROLE.pid, so the final cleanup can make sure.
    """
    assign = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    return (f"cd {shlex.quote(workdir)} && echo $$ > {role}.pid && exec 3<&0 && "
            f"{{ (cat <&3 >/dev/null 2>&1; kill -INT $$ 2>/dev/null) >/dev/null 2>&1 & }} && "
            f"exec 3<&- && exec env {assign} {shlex.join(argv)}")


def command_line(spec: ProcessSpec) -> str:
    """The shell command line that starts `spec` by hand, environment and pinning included."""
    if spec.endpoint is not None and spec.endpoint.ssh:
        return shlex.join(launch_argv(spec))      # the environment is inside the ssh command
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in spec.env.items())
    return f"{env + ' ' if env else ''}{shlex.join(launch_argv(spec))}"


def dies_with_govkit():
    """A preexec function: the child asks the kernel for SIGKILL when govkit dies, even by
    SIGKILL or the OOM killer (prctl PR_SET_PDEATHSIG; kept across the exec of chrt,
    taskset, `ip netns exec` and the runner). Without it a killed govkit left its runners
    orphaned in their own sessions: a ddsperf ping whose pong died waits for a match
    forever. The signal follows the thread that started the child; run_processes starts,
    waits for and stops its processes in one thread. None where prctl is unavailable.
    The mechanism is the worker pools' (govkit.common.workers.dies_with_parent)."""
    return dies_with_parent()


def run_processes(specs: list[ProcessSpec], timeout: float, grace: float = 0.5
                  ) -> dict[str, ProcessOutput]:
    """Start the processes in order, wait for the primary one, stop the rest.

    Every process gets its own session so a timeout kills its whole group. Output goes to
    temp files (not pipes) so a chatty process can never block on a full pipe.
    """
    import tempfile

    procs: list[tuple[ProcessSpec, subprocess.Popen, object, object]] = []
    deadline = time.monotonic() + timeout
    timed_out = False
    stopped: set[int] = set()   # pids we signalled: their exit status is ours, not theirs
    placement: dict[int, dict] = {}
    preexec = dies_with_govkit()
    try:
        for spec in specs:
            if spec.start_delay:
                time.sleep(spec.start_delay)
            out = tempfile.TemporaryFile()
            err = tempfile.TemporaryFile()
            env = {**os.environ, **spec.env}
            remote = spec.endpoint is not None and spec.endpoint.remote
            # ssh: stdin stays open while the remote process should run (remote_script)
            p = subprocess.Popen(launch_argv(spec), stdout=out, stderr=err,
                                 stdin=subprocess.PIPE if remote else subprocess.DEVNULL,
                                 env=env, start_new_session=True, preexec_fn=preexec)
            procs.append((spec, p, out, err))
        pspec, primary, pout, _ = next((x for x in procs if x[0].primary), procs[-1])
        timed_out = not _wait_primary(primary, pout, pspec.stop_when, deadline)
        # Read while they still run: the affinity and policy each process really had
        # (chrt and taskset have exec'd into the runner by now).
        placement = {p.pid: REMOTE_PLACEMENT if s.endpoint is not None and s.endpoint.remote
                     else process_placement(p.pid) for s, p, _, _ in procs}
        _stop_remote(procs, stopped, deadline)
        if primary.poll() is None:
            _signal_all(procs, signal.SIGINT, stopped)   # done (or timed out): ask politely
        # The primary holds the numbers: give the others a moment to finish, then stop them.
        for _, p, _, _ in procs:
            try:
                p.wait(timeout=max(0.1, min(grace, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                pass
    finally:
        _close_stdin(procs)
        results: dict[str, ProcessOutput] = {}
        for spec, p, out, err in procs:
            killed = p.poll() is None or p.pid in stopped
            if p.poll() is None:
                _kill_group(p)
            out.seek(0)
            err.seek(0)
            results[spec.role] = ProcessOutput(
                spec.role, spec.argv, None if killed else p.returncode,
                out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"),
                pid=p.pid, timed_out=timed_out and killed, env=dict(spec.env),
                **placement.get(p.pid, {}))
            out.close()
            err.close()
    return results


# govkit pins and prioritises only the processes it starts here: a remote host's CPUs are
# not known to it (docs/guide/across-machines.md).
REMOTE_PLACEMENT = {"cpus_allowed": "remote (not pinned)", "policy": "remote (normal)"}


def _stop_remote(procs, stopped: set[int], deadline: float) -> None:
    """Close the remote processes' ssh stdin (their watcher stops them, remote_script) and
    give their ssh a moment to end by itself: a remote process that ends while its ssh
    session is still open is reaped by sshd instead of being orphaned."""
    remote = [p for s, p, _, _ in procs if p.stdin is not None and p.poll() is None]
    stopped.update(p.pid for p in remote)
    _close_stdin(procs)
    for p in remote:
        try:
            p.wait(timeout=max(0.1, min(3.0, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            pass


def _close_stdin(procs) -> None:
    for _, p, _, _ in procs:
        if p.stdin is not None and not p.stdin.closed:
            try:
                p.stdin.close()
            except OSError:
                pass


_POLICIES = {0: "normal", 1: "fifo", 2: "rr", 3: "batch", 5: "idle", 6: "deadline"}


def process_placement(pid: int) -> dict:
    """The CPU list and scheduling policy a running process has (Linux /proc); {} if
    unknown."""
    found = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Cpus_allowed_list:"):
                    found["cpus_allowed"] = line.split(":", 1)[1].strip()
        with open(f"/proc/{pid}/stat") as f:
            # fields after the command name (which may hold spaces) start after ") "
            fields = f.read().rsplit(")", 1)[1].split()
            found["policy"] = _POLICIES.get(int(fields[38]), fields[38])  # field 41
    except (OSError, IndexError, ValueError):
        pass
    return found


def _wait_primary(p: subprocess.Popen, out, stop_when, deadline: float) -> bool:
    """Wait until the primary exits or its stop condition holds (True), or the deadline
    passes (False). Wakes ten times a second and re-reads the output only when it grew:
    negligible CPU beside the runner processes."""
    seen = 0
    while time.monotonic() < deadline:
        time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
        if p.poll() is not None:
            return True
        if stop_when is not None:
            size = os.fstat(out.fileno()).st_size
            if size != seen:
                seen = size
                if stop_when(os.pread(out.fileno(), size, 0).decode("utf-8", "replace")):
                    return True
    return p.poll() is not None


def _signal_all(procs, sig, stopped: set[int]) -> None:
    for _, p, _, _ in procs:
        if p.poll() is None:
            stopped.add(p.pid)
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                pass


def _kill_group(p: subprocess.Popen) -> None:
    for sig in (signal.SIGINT, signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(timeout=2)
            return
        except subprocess.TimeoutExpired:
            continue
