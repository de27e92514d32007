"""A group of participants started together for `govkit bench --mode discovery`
(govkit.bench.discovery): each of the runner's discovery processes prints `matched T` once
its endpoints have matched every other participant's; the group ends when all have said so,
one has failed, or the wait is over.
"""

from __future__ import annotations

import subprocess
import time
from contextlib import closing

from govkit.runners.processes import LineReader, ProcessSpec, ended, spawn


def run_group(specs: list[ProcessSpec], wait_s: float) -> dict:
    """Start the group at once, read each process's `matched T`, then end them all: a
    record with `matched_s` per participant (status ok), or why the group failed."""
    procs: list[subprocess.Popen] = []
    t0 = time.monotonic()
    matched: dict[int, float] = {}
    errors: list[str] = []
    with ended(procs, grace_s=10):
        for spec in specs:
            procs.append(spawn(spec, stdin=subprocess.PIPE))
        answered: set[int] = set()      # each process's first line (or end) is its answer
        with closing(LineReader(dict(enumerate(procs))).lines(t0 + wait_s + 5)) as lines:
            for i, line in lines:
                if i in answered:
                    continue
                answered.add(i)
                word, _, value = (line or "").partition(" ")
                if line is None:
                    errors.append(_why(procs[i], i))
                elif word == "matched":
                    matched[i] = float(value)
                else:
                    errors.append(f"participant {i}: unexpected {word!r}")
                if len(answered) == len(procs):
                    break
        wall = time.monotonic() - t0
    if len(matched) < len(specs):
        missing = len(specs) - len(matched)
        why = errors[0] if errors else f"not matched within {wait_s:g} s"
        return {"status": "failed", "error": f"{missing} of {len(specs)} participants did not "
                                              f"match every peer: {why}", "wall_s": wall}
    return {"status": "ok", "matched_s": [matched[i] for i in range(len(specs))],
            "wall_s": round(wall, 6)}


def _why(proc: subprocess.Popen, i: int) -> str:
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return f"participant {i} closed its output"
    err = proc.stderr.read().decode("utf-8", "replace").strip().splitlines() if proc.stderr \
        else []
    return f"participant {i} exited with status {proc.returncode}" + (
        f": {err[-1]}" if err else "")
