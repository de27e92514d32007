"""Where a runner's processes live: what one is (`ProcessSpec`, its command line
`launch_argv`) and what it printed (`ProcessOutput`); started (`spawn`), read line by line
against a deadline (`LineReader`), ended (`end_processes`, or the block `ended`), and the
per-repeat road that does all three for a point (`run_processes`). Every process govkit
starts for a benchmark starts here, once, and is ended here, one way.

Why one place: a process started for a repeat, a long-lived rotating pair and a discovery
group had three lives in two packages, each with its own Popen, session and kill; a change
to how a child is started (its session, below) reached one of them and not the others.
Later they still had three endings (a repeat's, a pair's, a group's) and two line readers;
now the pair (govkit.runners.pair), the group (govkit.runners.group) and `run_processes`
share `ended` and `LineReader`.

The session. A child gets a process group of its own (so a timeout or Ctrl-C stops its
whole group with one killpg), but stays in govkit's *session*. On Linux with
sched_autogroup_enabled = 1 (Debian's default) every session is a CFS group of its own, and
scheduling policy and nice weigh only inside a group (sched(7), "The autogroup feature"):
children started with setsid() competed with govkit's SCHED_IDLE spinners
(govkit.bench.awake) group against group, at equal weight. Measured 2026-12-04 on the
2-core VM, a ddsperf pub/sub pair at 1024 B pinned like govkit's: 349-401 kS/s in sessions
of their own beside the spinners, 659-686 kS/s in govkit's session, 787 kS/s with no
spinner (benchmarks/spinners.py measures it again). A latency pair under SCHED_FIFO was
spared (real-time tasks are outside CFS); every normally scheduled process was not.
Processes on another host (ssh) still get a session of their own: without a controlling
terminal ssh cannot stop at a password prompt in the background.
"""

from __future__ import annotations

import os
import selectors
import shlex
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass, field

from govkit.common.workers import dies_with_parent
from govkit.runners.network import Endpoint


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
    autogroup: str | None = None       # its CFS autogroup (govkit.runners.processes)
    env: dict[str, str] = field(default_factory=dict)   # what govkit added (its config file)

    @property
    def status(self) -> str:
        if self.timed_out:
            return "killed after the timeout"
        return "stopped by govkit" if self.returncode is None else f"exit code {self.returncode}"

    def tail(self, n: int = 8) -> str:
        lines = (self.stdout + self.stderr).strip().splitlines()
        return "\n".join(lines[-n:])


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
    orphaned: a ddsperf ping whose pong died waits for a match forever. The signal follows
    the thread that started the child: govkit starts, waits for and stops its processes in
    one thread. None where prctl is unavailable. The mechanism is the worker pools'
    (govkit.common.workers.dies_with_parent)."""
    return dies_with_parent()


def spawn(spec: ProcessSpec, *, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
          stderr=subprocess.PIPE) -> subprocess.Popen:
    """Start one process of a spec: its scheduling prefixes and place (launch_argv), its
    environment added to govkit's, its own process group in govkit's session (see the
    module docstring; a remote one: a session of its own), gone when govkit is."""
    remote = spec.endpoint is not None and spec.endpoint.remote
    return subprocess.Popen(launch_argv(spec), stdin=stdin, stdout=stdout, stderr=stderr,
                            env={**os.environ, **spec.env}, preexec_fn=dies_with_govkit(),
                            **({"start_new_session": True} if remote
                               else {"process_group": 0}))


class LineReader:
    """The lines processes write on their standard output (started with stdout=PIPE), each
    awaited until a deadline: one process's next line (`line`: the native programs' line
    protocol, govkit.runners.pair), or the lines of several as they come (`lines`: a
    discovery group, govkit.runners.group). `procs` maps a key (a role, an index) to its
    process."""

    def __init__(self, procs: dict[Hashable, subprocess.Popen]):
        self.procs = dict(procs)
        self.buffers: dict[Hashable, bytes] = {key: b"" for key in self.procs}

    def line(self, key: Hashable, deadline: float, on_timeout: Callable[[], Exception],
             on_exit: Callable[[int], Exception]) -> str:
        """The next line of `key`'s process (without its newline). `on_timeout()` is
        raised if none is complete by `deadline` (time.monotonic), `on_exit(status)` if
        the process closes its output first."""
        with closing(self.lines(deadline, [key])) as found:
            for _, line in found:
                if line is None:
                    self.procs[key].wait(timeout=5)
                    raise on_exit(self.procs[key].returncode)
                return line
        raise on_timeout()

    def lines(self, deadline: float, keys: list[Hashable] | None = None
              ) -> Iterator[tuple[Hashable, str | None]]:
        """(key, line) for every complete line of the processes of `keys` (all: None) as
        it arrives, until `deadline`; (key, None) once a process has closed its output
        (a part line before it is dropped)."""
        keys = list(self.procs) if keys is None else list(keys)
        with selectors.DefaultSelector() as sel:
            for key in keys:
                sel.register(self.procs[key].stdout.fileno(), selectors.EVENT_READ, key)
            while True:
                for key in keys:
                    while b"\n" in self.buffers[key]:
                        line, _, self.buffers[key] = self.buffers[key].partition(b"\n")
                        yield key, line.decode("utf-8", "replace")
                left = deadline - time.monotonic()
                if left <= 0 or not sel.get_map():
                    return
                for ready, _ in sel.select(timeout=min(left, 1.0)):
                    chunk = os.read(ready.fd, 1 << 16)
                    if chunk:
                        self.buffers[ready.data] += chunk
                        continue
                    sel.unregister(ready.fd)
                    yield ready.data, None


def end_processes(procs: list[subprocess.Popen], grace_s: float, interrupt: bool = False
                  ) -> None:
    """The one way govkit ends the processes it started: close every process's input
    (govkit's programs then delete their participants and exit; a remote process's watcher
    stops it: remote_script), with `interrupt` also send SIGINT to the group of each one
    still running (ddsperf ends on it), wait up to `grace_s` for each, SIGKILL the group of
    one that does not end, reap it, and close its pipes."""
    for proc in procs:
        try:
            if proc.stdin:
                proc.stdin.close()
        except OSError:
            pass
    if interrupt:
        for proc in procs:
            if proc.poll() is None:
                _signal_group(proc, signal.SIGINT)
    for proc in procs:
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)
            proc.wait()
        for pipe in (proc.stdout, proc.stderr):
            if pipe:
                pipe.close()


@contextmanager
def ended(procs: list[subprocess.Popen], grace_s: float, interrupt: bool = False
          ) -> Iterator[list[subprocess.Popen]]:
    """A block whose processes (`procs`, appended to as they are started inside it) are
    ended however it is left: at its end, on an error, on Ctrl-C (`end_processes`; pyperf's
    popen_killer, for a group of processes)."""
    try:
        yield procs
    finally:
        end_processes(procs, grace_s, interrupt)


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


# How long run_processes waits for a process it interrupted before it is killed.
INTERRUPT_GRACE_S = 2.0


def run_processes(specs: list[ProcessSpec], timeout: float, grace: float = 0.5
                  ) -> dict[str, ProcessOutput]:
    """Start the processes in order, wait for the primary one, stop the rest.

    Every process gets its own process group so a timeout kills the whole group. Output goes
    to temp files (not pipes) so a chatty process can never block on a full pipe.
    """
    started: list[tuple[ProcessSpec, subprocess.Popen, object, object]] = []
    deadline = time.monotonic() + timeout
    stopped: set[int] = set()   # pids we signalled: their exit status is ours, not theirs
    with ExitStack() as files:
        procs: list[subprocess.Popen] = []
        with ended(procs, INTERRUPT_GRACE_S, interrupt=True):
            for spec in specs:
                if spec.start_delay:
                    time.sleep(spec.start_delay)
                out = files.enter_context(tempfile.TemporaryFile())
                err = files.enter_context(tempfile.TemporaryFile())
                remote = spec.endpoint is not None and spec.endpoint.remote
                # ssh: stdin stays open while the remote process should run (remote_script)
                procs.append(spawn(spec, stdin=subprocess.PIPE if remote
                                   else subprocess.DEVNULL, stdout=out, stderr=err))
                started.append((spec, procs[-1], out, err))
            pspec, primary, pout, _ = next((x for x in started if x[0].primary), started[-1])
            timed_out = not _wait_primary(primary, pout, pspec.stop_when, deadline)
            # Read while they still run: the affinity and policy each process really had
            # (chrt and taskset have exec'd into the runner by now).
            placement = {p.pid: REMOTE_PLACEMENT if s.endpoint is not None
                         and s.endpoint.remote else process_placement(p.pid)
                         for s, p, _, _ in started}
            _stop_remote(procs, stopped, deadline)
            if primary.poll() is None:    # done (or timed out): ask politely
                for p in procs:
                    if p.poll() is None:
                        stopped.add(p.pid)
                        _signal_group(p, signal.SIGINT)
            # The primary holds the numbers: give the others a moment to finish, then stop
            # them (`ended`).
            for p in procs:
                try:
                    p.wait(timeout=max(0.1, min(grace, deadline - time.monotonic())))
                except subprocess.TimeoutExpired:
                    pass
            stopped.update(p.pid for p in procs if p.poll() is None)
        results: dict[str, ProcessOutput] = {}
        for spec, p, out, err in started:
            killed = p.pid in stopped
            out.seek(0)
            err.seek(0)
            results[spec.role] = ProcessOutput(
                spec.role, spec.argv, None if killed else p.returncode,
                out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"),
                pid=p.pid, timed_out=timed_out and killed, env=dict(spec.env),
                **placement.get(p.pid, {}))
    return results


# govkit pins and prioritises only the processes it starts here: a remote host's CPUs are
# not known to it (docs/guide/across-machines.md).
REMOTE_PLACEMENT = {"cpus_allowed": "remote (not pinned)", "policy": "remote (normal)"}


def _stop_remote(procs: list[subprocess.Popen], stopped: set[int], deadline: float) -> None:
    """Close the remote processes' ssh stdin (their watcher stops them, remote_script) and
    give their ssh a moment to end by itself: a remote process that ends while its ssh
    session is still open is reaped by sshd instead of being orphaned."""
    remote = [p for p in procs if p.stdin is not None and p.poll() is None]
    stopped.update(p.pid for p in remote)
    for p in remote:
        try:
            p.stdin.close()
        except OSError:
            pass
    for p in remote:
        try:
            p.wait(timeout=max(0.1, min(3.0, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            pass


_POLICIES = {0: "normal", 1: "fifo", 2: "rr", 3: "batch", 5: "idle", 6: "deadline"}


def process_placement(pid: int) -> dict:
    """The CPU list, scheduling policy and CFS autogroup a running process has (Linux /proc;
    the autogroup where the kernel has them: the module docstring); {} if unknown."""
    found = {}
    try:
        with open(f"/proc/{pid}/autogroup") as f:
            found["autogroup"] = f.read().split()[0]      # "/autogroup-N nice K"
    except (OSError, IndexError):
        pass
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
