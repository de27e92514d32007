"""Work spread over the CPUs: chunks of items in a process pool, or in this process when
there are too few for forking to pay.

Each worker runs `init(*initargs)` once (loading the template, schema, keys, ... it needs
into module state) and then `fn(chunk)` per chunk. The fork start method is preferred
where it exists: the workers then inherit what this process has already loaded (schemas,
compiled templates) instead of loading it again; `init` must still work without that.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor

# Below this many items one process does everything: starting workers (fork, pickling
# chunks and results) costs more than the second CPU saves for a few hundred documents.
IN_PROCESS_BELOW = 200
CHUNK = 250   # items per task: large enough to amortise pickling, small enough to balance


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:   # not Linux
        return os.cpu_count() or 1


def plan(items: Sequence, jobs: int | None = None) -> tuple[int, list[Sequence]]:
    """(processes, parts) for `items`: this process alone below IN_PROCESS_BELOW items
    (unless `jobs` asks for more), else one process per CPU (or `jobs`), in chunks of at
    most CHUNK items, enough of them for every process."""
    n = len(items)
    if jobs is None:
        jobs = 1 if n < IN_PROCESS_BELOW else cpu_count()
    count = max(1, min(jobs, n))
    if count == 1:
        return 1, [items]
    size = max(1, min(CHUNK, -(-n // count)))
    return count, [items[i:i + size] for i in range(0, n, size)]


def run(fn: Callable, parts: list, init: Callable, initargs: tuple = (),
        workers: int = 1) -> Iterator:
    """fn(part) for every part, in order; in `workers` processes (this one if 1)."""
    if workers <= 1:
        init(*initargs)
        yield from map(fn, parts)
        return
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(workers, mp_context=context, initializer=init,
                             initargs=initargs) as pool:
        yield from pool.map(fn, parts)
