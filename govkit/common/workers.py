"""Work spread over the CPUs: chunks of items in a process pool, or in this process when
there are too few for forking to pay.

Each worker runs `init(*initargs)` once (loading the template, schema, keys, ... it needs
into module state) and then `fn(chunk)` per chunk. The fork start method is preferred
where it exists: the workers then inherit what this process has already loaded (schemas,
compiled templates) instead of loading it again; `init` must still work without that.

No worker outlives the process that started it: each asks the kernel for SIGKILL when that
process dies, however it dies (`die_with_parent`). A SIGKILLed govkit otherwise left its
workers blocked forever on the pool's pipe. The same mechanism keeps the benchmark
runners' processes from outliving govkit (`dies_with_parent`, a preexec function).
"""

from __future__ import annotations

import functools
import os
import signal
from collections.abc import Callable, Iterator, Sequence

# Below this many items one process does everything: starting workers (fork, pickling
# chunks and results) costs more than the second CPU saves for a few hundred documents.
IN_PROCESS_BELOW = 200
CHUNK = 250   # items per task: large enough to amortise pickling, small enough to balance


_PR_SET_PDEATHSIG = 1
_prctl = None          # libc's prctl once looked up; False where there is none
_owner: int | None = None   # in a worker: the pid of the process whose pool it serves


def _libc_prctl():
    """libc's prctl, or None (not Linux). Looked up in the parent before it forks
    (`dies_with_parent`, `run`): a forked child then never has to load a library."""
    global _prctl
    if _prctl is None:
        import ctypes
        try:
            _prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (AttributeError, OSError):
            _prctl = False
    return _prctl or None


def die_with_parent(parent: int) -> None:
    """In a child of `parent`: have the kernel SIGKILL this process when its parent dies,
    even by SIGKILL or the OOM killer (prctl PR_SET_PDEATHSIG), and exit at once if the
    parent died before that was set (this process has then been handed to another). Linux
    only; elsewhere nothing is done.

    The signal follows the *thread* that started the child: a child started by a thread
    that ends before it is killed then. govkit starts its pools and runner processes in
    the thread that waits for them (`run`; runners.processes.run_processes)."""
    prctl = _libc_prctl()
    if prctl is None:
        return
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def dies_with_parent() -> Callable[[], None] | None:
    """A preexec function for subprocess.Popen: the child dies with this process
    (`die_with_parent`). None where prctl is unavailable."""
    if _libc_prctl() is None:
        return None
    return functools.partial(die_with_parent, os.getpid())


def owner() -> int:
    """The pid of the process that will use what this one produces: in a pool worker the
    process that started the pool, else this process (staging names temporaries by it, so
    they are known to be orphans as soon as that process is gone)."""
    return _owner if _owner is not None else os.getpid()


def _start_worker(parent: int, init: Callable, initargs: tuple) -> None:
    """A pool worker's first act (a module function: picklable for spawn)."""
    global _owner
    die_with_parent(parent)
    _owner = parent
    init(*initargs)


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
    # Imported here: they cost more than the rest of this module.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    methods = multiprocessing.get_all_start_methods()
    # Not forkserver: the workers' parent would be the server, not this process.
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    _libc_prctl()   # looked up here, inherited by the forked workers
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker,
                             initargs=(os.getpid(), init, initargs)) as pool:
        yield from pool.map(fn, parts)
