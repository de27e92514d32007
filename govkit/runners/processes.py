"""Where a runner's processes live: started (`spawn`), read line by line against a deadline
(`LineReader`), ended (`end_processes`), and the per-repeat road that does all three for a
point (`run_processes`). Every process govkit starts for a benchmark starts here, once.

Why one place: a process started for a repeat, a long-lived rotating pair and a discovery
group had three lives in two packages, each with its own Popen, session and kill; a change
to how a child is started (its session, below) reached one of them and not the others.

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
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable

from govkit.common.workers import dies_with_parent
from govkit.runners.base import ProcessOutput, ProcessSpec, launch_argv


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
    """The lines a process writes on its standard output, one at a time, each awaited
    until a deadline (the native programs' line protocol: govkit.runners.slot_protocol)."""

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.buffer = b""

    def line(self, deadline: float, on_timeout: Callable[[], Exception],
             on_exit: Callable[[int], Exception]) -> str:
        """The next line (without its newline). `on_timeout()` is raised if none is complete
        by `deadline` (time.monotonic), `on_exit(status)` if the process closes its output
        first."""
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise on_timeout()
                if not sel.select(timeout=min(left, 1.0)):
                    continue
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    self.proc.wait(timeout=5)
                    raise on_exit(self.proc.returncode)
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode("utf-8", "replace")


def end_processes(procs: list[subprocess.Popen], grace_s: float) -> None:
    """Close every process's input (govkit's programs then delete their participants and
    exit), wait up to `grace_s` for each, kill the group of one that does not, and close
    its pipes."""
    for proc in procs:
        try:
            if proc.stdin:
                proc.stdin.close()
        except OSError:
            pass
    for proc in procs:
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        for pipe in (proc.stdout, proc.stderr):
            if pipe:
                pipe.close()


def run_processes(specs: list[ProcessSpec], timeout: float, grace: float = 0.5
                  ) -> dict[str, ProcessOutput]:
    """Start the processes in order, wait for the primary one, stop the rest.

    Every process gets its own process group so a timeout kills the whole group. Output goes
    to temp files (not pipes) so a chatty process can never block on a full pipe.
    """
    procs: list[tuple[ProcessSpec, subprocess.Popen, object, object]] = []
    deadline = time.monotonic() + timeout
    timed_out = False
    stopped: set[int] = set()   # pids we signalled: their exit status is ours, not theirs
    placement: dict[int, dict] = {}
    try:
        for spec in specs:
            if spec.start_delay:
                time.sleep(spec.start_delay)
            out = tempfile.TemporaryFile()
            err = tempfile.TemporaryFile()
            remote = spec.endpoint is not None and spec.endpoint.remote
            # ssh: stdin stays open while the remote process should run (remote_script)
            p = spawn(spec, stdin=subprocess.PIPE if remote else subprocess.DEVNULL,
                      stdout=out, stderr=err)
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
