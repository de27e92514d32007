"""The report's bootstraps spread over the CPUs (issue 23, item 9: a report of a large run
within seconds). Each point's interval and each arm's paired overhead is an independent
bootstrap seeded by its own name, so computing them in worker processes gives the very
figures one process gives, in the same order.

Only `govkit report` spreads them (a Summarizer made with `parallel=True`): during a run,
`govkit bench` summarises after every round while the benchmark's processes hold the
CPUs, and a pool there would take the CPUs they are measured on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from govkit.common import workers
from govkit.results import paired, stats

# Below this many resampled values in all, one process does everything: forking and
# pickling cost more than the second CPU saves (a usual run's report is above it).
MIN_PARALLEL_VALUES = 2_000


def _nothing() -> None:
    """The workers need no set-up: forked, they hold what this process has loaded."""


def point_estimates(part: list[tuple[str, list[list[float]], str, int, int]]
                    ) -> list[stats.Estimate]:
    """stats.estimate of each (row format name, groups, seed, cap, resamples)."""
    return [stats.estimate(groups, stats.row_format(fmt).pooled, seed, cap, resamples)
            for fmt, groups, seed, cap, resamples in part]


def overheads(part: list[tuple]) -> list[paired.Overhead]:
    """paired.overhead of each (pairings, seed, ratio_only, resamples, instance term,
    run term)."""
    return [paired.overhead(*task) for task in part]


def in_workers(fn: Callable[[list], list], tasks: Sequence, weights: Sequence[int]) -> list:
    """fn over `tasks`, its results in their order: in one worker per CPU, each given about
    the same weight (values resampled), or here when the work is too small to pay."""
    count = min(workers.cpu_count(), len(tasks))
    if count < 2 or sum(weights) < MIN_PARALLEL_VALUES:
        return fn(list(tasks))
    parts: list[list] = [[] for _ in range(count)]
    where: list[list[int]] = [[] for _ in range(count)]
    load = [0] * count
    for i in sorted(range(len(tasks)), key=lambda i: -weights[i]):   # heaviest first
        j = load.index(min(load))
        parts[j].append(tasks[i])
        where[j].append(i)
        load[j] += weights[i]
    out: list = [None] * len(tasks)
    for indexes, results in zip(where, workers.run(fn, parts, _nothing, (), count),
                                strict=True):
        for i, result in zip(indexes, results, strict=True):
            out[i] = result
    return out
