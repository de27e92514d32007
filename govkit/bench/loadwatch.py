"""How quiet the machine was while a run measured: load average, CPU steal, the CPU time
others used, busy processes.

A figure measured while other work ran is a different experiment from one measured on an
idle machine; results.json records which it was, and the report says "measured under
load" when the machine was not quiet.

Judged from the machine's own account: the CPU time all processes spent in user and system
mode (/proc/stat) less govkit's own (itself, its runners and spinners, the ones it has
reaped included: os.times). Sampling processes one by one missed what starts and ends
between two samples: a test suite spawning short-lived processes kept the load average at
4-5 on the 2-core VM while govkit said "machine quiet" (issue 37). The busiest other
processes are still listed, to say who it was.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

# "Under load": other processes used more than this share of one CPU over the run.
BUSY_SHARE = 0.2


def loadavg() -> list[float] | None:
    try:
        return [float(v) for v in Path("/proc/loadavg").read_text().split()[:3]]
    except (OSError, ValueError):
        return None


def cpu_times() -> dict | None:
    """Machine-wide jiffies from /proc/stat: total, steal, and busy (user + nice + system;
    not irq and softirq time, which the kernel charges to no process: a runner's own
    loopback traffic is counted there)."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
        values = [int(v) for v in fields]
    except (OSError, ValueError, IndexError):
        return None
    return {"total": sum(values[:8]), "steal": values[7] if len(values) > 7 else 0,
            "busy": sum(values[:3])}


def own_cpu_seconds() -> float:
    """CPU seconds govkit has used with every process it started: itself, its reaped
    children (and what they reaped), and those still running, with their children."""
    t = os.times()
    total = t.user + t.system + t.children_user + t.children_system
    hz = os.sysconf("SC_CLK_TCK")
    me = os.getpid()
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            rest = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()
            parents[int(entry.name)] = int(rest[1])
            # utime + stime, and cutime + cstime: what its own reaped children used. A
            # child's children reaped before the window reach os.times' children_* only
            # when govkit reaps the child, inside it; counted here from the start, they
            # are not taken for govkit's time in the window (a child that ran a 1 s
            # grandchild before the window made a loop using a whole CPU read as 34 %).
            ticks[int(entry.name)] = sum(int(v) for v in rest[11:15])
        except (OSError, ValueError, IndexError):
            continue
    live = {me}
    for _ in range(3):          # children, grandchildren, great-grandchildren
        live |= {pid for pid, ppid in parents.items() if ppid in live}
    return total + sum(ticks[pid] for pid in live - {me} if pid in ticks) / hz


def _process_times(exclude: set[int]) -> dict[int, tuple[str, int]]:
    """utime + stime (jiffies) of every process not in `exclude` (govkit and its children)."""
    out = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid in exclude:
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            rest = stat[stat.rindex(")") + 2:].split()
            if int(rest[1]) in exclude or int(rest[3]) in exclude:   # ppid / session: ours
                continue
            out[pid] = (name, int(rest[11]) + int(rest[12]))
        except (OSError, ValueError, IndexError):
            continue
    return out


def _ours() -> set[int]:
    """govkit's own pid, its children, and the sessions its children lead (each runner
    has its own). Never govkit's own session: that is the shell's that started govkit,
    and whatever else runs from it (a busy loop in the same terminal) is other load."""
    me = os.getpid()
    ours = {me}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                rest = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()
                if int(rest[1]) == me:
                    ours.add(int(entry.name))
                    if int(rest[3]) == int(entry.name):     # it leads a session of its own
                        ours.add(int(rest[3]))
            except (OSError, ValueError, IndexError):
                continue
    return ours


class LoadWatch:
    """Start before measuring, finish after: a dict for results.json."""

    def __init__(self) -> None:
        # Before govkit starts anything: later, its own runners count in the load average.
        self.load0 = loadavg()
        self.t0 = None

    def start(self) -> None:
        self.t0 = time.monotonic()
        self.cpu0 = cpu_times()
        self.own0 = own_cpu_seconds()
        self.procs0 = _process_times(_ours())

    def finish(self) -> dict:
        if self.t0 is None:
            return {}
        seconds = time.monotonic() - self.t0
        load1, cpu1 = loadavg(), cpu_times()
        own = own_cpu_seconds() - self.own0
        procs1 = _process_times(_ours())
        hz = os.sysconf("SC_CLK_TCK")
        busy = []
        for pid, (name, t1) in procs1.items():
            t0 = self.procs0.get(pid, (name, 0))[1] if pid in self.procs0 else 0
            share = (t1 - t0) / hz / seconds if seconds > 0 else 0
            if share >= 0.05:
                busy.append({"pid": pid, "name": name, "cpu_share": round(share, 3)})
        busy.sort(key=lambda b: -b["cpu_share"])
        steal = other = None
        if self.cpu0 and cpu1 and cpu1["total"] > self.cpu0["total"]:
            steal = 100 * (cpu1["steal"] - self.cpu0["steal"]) / (cpu1["total"]
                                                                  - self.cpu0["total"])
            if seconds > 0:
                busy_s = (cpu1["busy"] - self.cpu0["busy"]) / hz
                other = max(0.0, (busy_s - own) / seconds)
        return {"seconds": round(seconds, 1), "loadavg_before": self.load0,
                "loadavg_after": load1, "loadavg_after_includes": "govkit's own runners",
                "steal_pct": None if steal is None else round(steal, 2),
                "other_cpu_share": None if other is None else round(other, 3),
                "other_cpu_method": OTHER_CPU_METHOD,
                "busy_processes": busy[:10], "usable_cpus": len(os.sched_getaffinity(0)),
                "under_load": under_load(other, busy)}


OTHER_CPU_METHOD = ("CPUs' worth of user and system time (/proc/stat) that processes other "
                    "than govkit and those it started used over the run (govkit's own from "
                    "os.times and /proc, reaped children included)")


def under_load(other: float | None, busy) -> bool:
    """Whether other processes took CPU during the run: more than BUSY_SHARE of a CPU by
    the machine's account, or by the busiest processes seen. The load averages are recorded
    but not judged: they lag by a minute, so a run started right after another (govkit's
    own, back to back) read 1.12 on an idle 2-core VM and was called loaded."""
    return (other is not None and other > BUSY_SHARE) or \
        sum(b["cpu_share"] for b in busy) > BUSY_SHARE
