"""One live ping/pong pair of govkit's own programs for `govkit lifetime-check`: started,
awaited until both sides say `ready` (or one ends), driven through short latency slots,
every line of both sides kept with the moment govkit read it, and ended.

The programs and their line protocol are the rotating runners' (govkit.runners.pair,
cyclone_perf.c, fastdds_perf.cpp -S); this driver differs from `Pair` only in what it
keeps: every stderr line with its time (what the runtime said, and when), and a side that
ends is an outcome here, not a failure.
"""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from govkit.common.fsutil import write_atomic
from govkit.runners.base import BenchPoint, Bundle
from govkit.runners.pair import PairFailed, parse_slot
from govkit.runners.processes import end_processes, spawn

ROLES = ("sub", "pub")        # pong, ping: the order pair_specs gives them
# ping's own limit for a round trip that does not come back (its exit 6), and a margin
STALL_S = 10.0 + 5.0


@dataclass(frozen=True)
class Line:
    t: float          # time.monotonic() when govkit read it
    role: str
    text: str


@dataclass
class LivePair:
    """A started pair: its processes, and every stderr line so far (`said`)."""
    procs: dict[str, subprocess.Popen]
    said: list[Line] = field(default_factory=list)
    stdout: dict[str, queue.Queue] = field(default_factory=dict)
    ready: dict[str, float] = field(default_factory=dict)
    ending: float = float("inf")    # when govkit began to end it (its lines after: not said)

    @staticmethod
    def _read(role: str, stream, into, at_end: bool) -> None:
        for raw in iter(stream.readline, b""):
            into(Line(time.monotonic(), role, raw.decode("utf-8", "replace").rstrip("\n")))
        if at_end:
            into(None)        # stdout: a reader waiting for the next line learns it ended

    def watch(self) -> None:
        for role, proc in self.procs.items():
            self.stdout[role] = queue.Queue()
            for stream, into, at_end in ((proc.stdout, self.stdout[role].put, True),
                                         (proc.stderr, self.said.append, False)):
                threading.Thread(target=self._read, args=(role, stream, into, at_end),
                                 daemon=True).start()

    def next_line(self, role: str, deadline: float) -> Line | None:
        """`role`'s next stdout line; None when it ended or nothing came by `deadline`."""
        try:
            line = self.stdout[role].get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None
        if line is None:
            self.stdout[role].put(None)     # ended: so it says to the next call too
        return line

    def await_ready(self, deadline: float) -> bool:
        """True once both sides said `ready`; False as soon as either ended first (a refused
        participant, or no match within the programs' own wait) or at `deadline`."""
        for role in ROLES:
            line = self.next_line(role, deadline)
            if line is None or not line.text.startswith("ready "):
                return False
            self.ready[role] = line.t
        return True

    def slot(self, measure_us: int) -> tuple[float, float, int] | None:
        """One latency slot: (began, ended, round trips); None when ping ended instead (a
        round trip that never came back: its exit 6) or answered something else."""
        began = time.monotonic()
        try:
            self.procs["pub"].stdin.write(f"slot 32 0 {measure_us}\n".encode())
            self.procs["pub"].stdin.flush()
        except OSError:
            return None
        line = self.next_line("pub", began + measure_us / 1e6 + STALL_S)
        if line is None:
            return None
        try:
            return began, line.t, parse_slot(line.text)["n"]
        except PairFailed:
            return None

    def returncodes(self, wait_s: float = 0.0) -> dict[str, int | None]:
        """Each side's exit status (None: still running), after up to `wait_s` for both."""
        deadline = time.monotonic() + wait_s
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        return {role: proc.poll() for role, proc in self.procs.items()}

    def end(self) -> dict[str, int | None]:
        """Both ended (input closed, then signals: govkit.runners.processes); their status
        as they were before govkit ended them."""
        before = {role: proc.poll() for role, proc in self.procs.items()}
        self.ending = time.monotonic()
        end_processes(list(self.procs.values()), grace_s=3)
        time.sleep(0.2)      # the reader threads take the last lines
        return before


def start_pair(runner, bundle: Bundle, workdir: Path, domain_id: int, wait_s: float
               ) -> LivePair:
    """The runner's configuration files written and its pair started (pong, then ping) on
    `domain_id`; each side waits `wait_s` for its peer (the programs' own WAIT_S / -w)."""
    point = BenchPoint(bundle.profile, "latency", 32, 1, domain_id=domain_id)
    workdir.mkdir(parents=True, exist_ok=True)
    for path, text in runner.configs(point, bundle, workdir).items():
        write_atomic(path, text)
    specs = runner.pair_specs(bundle, domain_id, None, False, workdir, wait_s=wait_s)
    procs = {s.role: spawn(s, stdin=subprocess.PIPE) for s in specs}
    pair = LivePair(procs)
    pair.watch()
    return pair
