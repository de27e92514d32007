"""The CPU time a process tree has spent, read from /proc: what a watchdog compares before
and after a stretch of time (govkit.bench.watchdog).

A process's /proc/PID/stat holds the user and system time of all its threads (utime,
stime, in clock ticks). A pair's processes are its ping and pong and whatever they started
(pong's reader processes, govkit.runners.readers); a tree is read as every living
descendant, found through each process's parent id. A child that exited and was reaped
moves into its parent's cutime, which is left out: only the living can be stopped.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
TICKS_PER_S = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class ProcessCpu:
    pid: int
    name: str          # its comm (the kernel's 15-character name)
    cpu_s: float       # utime + stime, seconds


def read_stat(pid: int) -> tuple[str, int, float] | None:
    """(comm, parent pid, utime + stime in seconds) of `pid`, None once it is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # comm may hold spaces and parentheses: it ends at the last ')'
    head, _, rest = text.rpartition(")")
    fields = rest.split()
    if len(fields) < 13 or "(" not in head:
        return None
    # fields[0] is state (field 3 of proc(5)): ppid is field 4, utime 14, stime 15
    return (head.partition("(")[2], int(fields[1]),
            (int(fields[11]) + int(fields[12])) / TICKS_PER_S)


def _parents() -> dict[int, int]:
    """Every living process's parent id, one pass over /proc."""
    out = {}
    for entry in os.scandir(PROC):
        if entry.name.isdigit():
            stat = read_stat(int(entry.name))
            if stat is not None:
                out[int(entry.name)] = stat[1]
    return out


def descendants(roots: list[int], parents: dict[int, int] | None = None) -> list[int]:
    """`roots` that still live and every living descendant of theirs."""
    parents = _parents() if parents is None else parents
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [r for r in roots if r in parents]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def tree_cpu(trees: dict, parents: dict[int, int] | None = None
             ) -> dict[object, dict[int, ProcessCpu]]:
    """Per key of `trees` (key: its root pids), the CPU time of each living process of
    those trees, by pid; one pass over /proc for all of them."""
    parents = _parents() if parents is None else parents
    out: dict[object, dict[int, ProcessCpu]] = {}
    for key, roots in trees.items():
        found = {}
        for pid in descendants(list(roots), parents):
            stat = read_stat(pid)
            if stat is not None:
                found[pid] = ProcessCpu(pid, stat[0], stat[2])
        out[key] = found
    return out


def spent(before: dict[int, ProcessCpu], after: dict[int, ProcessCpu]
          ) -> list[ProcessCpu]:
    """What each process of a tree spent between two readings (a process born in between
    counts all it spent), most first."""
    out = [ProcessCpu(p.pid, p.name,
                      max(0.0, p.cpu_s - (before[p.pid].cpu_s if p.pid in before else 0.0)))
           for p in after.values()]
    return sorted(out, key=lambda p: -p.cpu_s)


def kill_tree(roots: list[int]) -> list[int]:
    """SIGKILL `roots` and every living descendant, all found before any is killed (a
    child whose parent dies first is handed to init and out of the tree). The pids
    signalled."""
    pids = descendants(roots)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return pids
