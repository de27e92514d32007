"""Keep the measured CPUs awake: one lowest-priority spinner per CPU while a run measures.

Why: on a VM whose kernel has no cpuidle driver (this 2-core KVM guest: `cpuidle` driver
"none", so neither idle=poll at run time nor /dev/cpu_dma_latency applies), an idle vCPU
halts, and waking it costs a VM exit. A round trip wakes the two sides several times, so
on an idle machine every latency carries those wake-ups, more of them for profiles whose
messages cross more threads, and on a busy machine it does not (the CPU is running
something else and is merely preempted). Measured 2026-12-02, same profiles, idle against
a `nice -n 10` busy loop on each CPU: `none` 32 B 15.3 µs idle, 12.6 µs busy; rtps_sign
29.1 against 21.9 µs; so the overhead ratios moved by up to 13 % with nothing but the
other load changed. The figures then describe whether the machine happened to be idle,
not the security.

A spinner per measured CPU at SCHED_IDLE (runs only when nothing else on that CPU wants
to; any other thread, a normal one as much as the benchmark's SCHED_FIFO ones, preempts it
at once) keeps the CPU out of halt, the user-space equivalent of idle=poll: an idle and a
busy machine then measure the same state. "Any other thread" holds only within one CFS
autogroup (one session): the spinners and every runner process share govkit's session
(govkit.runners.processes says why; until 2026-12-04 the runners had sessions of their own,
and the spinners took about half of each CPU from every normally scheduled runner).
`--allow-idle` turns it off; results.json says which (settings.cpus_kept_awake).
"""

from __future__ import annotations

import functools
import os
import subprocess

from govkit.common.errors import GovkitError
from govkit.common.workers import dies_with_parent

# The smallest loop at hand on every Debian/Ubuntu machine: the shell's. A Python loop
# served too, but its interpreter's footprint showed: the heaviest profile's per-round
# ratios spread 1.5x as wide behind it as behind this one (2026-12-02).
SPIN = ("/bin/sh", "-c", "while :; do :; done")


def _spin_on(cpu: int, die_with_parent) -> None:
    """Set in the child before exec: this CPU only, SCHED_IDLE, gone with govkit."""
    if die_with_parent is not None:
        die_with_parent()
    os.sched_setaffinity(0, {cpu})
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


METHOD = ("the measured CPUs were kept out of idle halt: a SCHED_IDLE spinner on each (any "
          "other thread of govkit's session, the runner processes included, preempts it), "
          "the user-space equivalent of idle=poll, so an idle machine and a busy one measure "
          "the same state (docs/background/method.md)")
IDLE_METHOD = ("the measured CPUs were allowed to halt when idle (--allow-idle): every "
               "wake-up's cost is in the figures, and it differs between an idle machine "
               "and a busy one")


class AwakeCpus:
    """Context manager: a spinner on each CPU of `cpus` (none for an empty tuple)."""

    def __init__(self, cpus: tuple[int, ...]):
        self.cpus = tuple(dict.fromkeys(cpus))
        self.procs: list[subprocess.Popen] = []

    def __enter__(self) -> AwakeCpus:
        # Popen returns once the child has exec'd, so its CPU and policy are set by then
        # (a failure in _spin_on is raised here).
        for cpu in self.cpus:
            try:
                self.procs.append(subprocess.Popen(
                    SPIN, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    preexec_fn=functools.partial(_spin_on, cpu, dies_with_parent())))
            except (OSError, subprocess.SubprocessError) as e:
                self.__exit__(None, None, None)
                raise GovkitError(f"cannot keep CPU {cpu} awake: {e} (--allow-idle measures "
                                  "without the spinners)") from None
        return self

    def __exit__(self, *exc) -> None:
        for proc in self.procs:
            proc.kill()
        for proc in self.procs:
            proc.wait()
        self.procs = []

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]


def awake_cpus(pin) -> tuple[int, ...]:
    """The CPUs the pairs run on (pinned), else every CPU govkit may use."""
    return tuple(pin.cpus) if pin.cpus else tuple(sorted(os.sched_getaffinity(0)))


