"""The idle-pair watchdog of the rotation (issue 41 follow-up).

In a round, the pairs that run no slot are idle: their processes wait on a pipe and a DDS
participant's few timers (heartbeats, lease renewals), a few per cent of a CPU at most.
One did not: a runner process spun in the kernel at 100 % of a CPU for 77 minutes while
it had nothing to do, and on a 2-CPU machine it took a CPU from every slot measured
meanwhile. So between rounds, each idle pair's CPU time (utime + stime summed over its
processes and their children, govkit.runners.cputime) is compared with what it had
before the round: a pair that burnt more than IDLE_CPU_LIMIT of one CPU over the round's
wall time is stopped (its whole process tree killed) and counted as a failed pair, the
message naming the process, and the run goes on without it (as after any pair that
fails).
"""

from __future__ import annotations

from govkit.runners.cputime import ProcessCpu, kill_tree, spent, tree_cpu

# An idle pair may spend up to half of one CPU over a round (its share of the round's wall
# time). Far above an idle participant's timers (measured: under 1 % of a CPU), far below a
# spin (100 %): the margin absorbs a round too short for the clock ticks' resolution.
IDLE_CPU_LIMIT = 0.5
# Below this many CPU seconds nothing is judged: a 10 ms tick on a 20 ms round is no spin.
MIN_JUDGED_CPU_S = 0.1


def pair_roots(pair) -> list[int]:
    """The pids a pair's process tree hangs from (its ping and pong, as started)."""
    return [p.pid for p in pair.procs.values() if p.poll() is None]


def read_pairs(pairs: dict) -> dict:
    """Each pair's processes' CPU time now, keyed as `pairs` is."""
    return tree_cpu({key: pair_roots(pair) for key, pair in pairs.items()})


def idle_burners(before: dict, after: dict, idle: set, wall_s: float,
                 limit: float = IDLE_CPU_LIMIT) -> dict:
    """Per idle pair key that burnt more than `limit` of one CPU over `wall_s` seconds,
    the message saying which process spent what; `before`/`after`: read_pairs."""
    out = {}
    for key in idle:
        if key not in before or key not in after or wall_s <= 0:
            continue
        used = spent(before[key], after[key])
        total = sum(p.cpu_s for p in used)
        if total < MIN_JUDGED_CPU_S or total <= limit * wall_s:
            continue
        out[key] = burn_message(used, total, wall_s, limit)
    return out


def stop(pair) -> None:
    """A burning pair's whole process tree killed, then the pair closed: closing alone
    ends ping and pong, and a child of theirs that spins outlives them (found so by the
    test: an orphan handed to init, still spinning)."""
    kill_tree(pair_roots(pair))
    pair.close()


def burn_message(used: list[ProcessCpu], total: float, wall_s: float, limit: float) -> str:
    top = ", ".join(f"{p.name} (pid {p.pid}) {p.cpu_s:.2f} s" for p in used[:3]
                    if p.cpu_s > 0)
    return (f"burnt {total:.2f} CPU s in a {wall_s:.2f} s round while idle "
            f"({100 * total / wall_s:.0f} % of one CPU, the limit {100 * limit:.0f} %): "
            f"{top}; stopped")
