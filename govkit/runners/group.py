"""A group of participants started together for `govkit bench --mode discovery`
(govkit.bench.discovery): each of the runner's discovery processes prints `matched T` once
its endpoints have matched every other participant's; the group ends when all have said so,
one has failed, or the wait is over.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import time

from govkit.runners.base import ProcessSpec
from govkit.runners.processes import end_processes, spawn


def run_group(specs: list[ProcessSpec], wait_s: float) -> dict:
    """Start the group at once, read each process's `matched T`, then end them all: a
    record with `matched_s` per participant (status ok), or why the group failed."""
    procs = []
    t0 = time.monotonic()
    try:
        for spec in specs:
            procs.append(spawn(spec, stdin=subprocess.PIPE))
        matched: dict[int, float] = {}
        buffers = {i: b"" for i in range(len(procs))}
        errors: list[str] = []
        with selectors.DefaultSelector() as sel:
            for i, p in enumerate(procs):
                sel.register(p.stdout.fileno(), selectors.EVENT_READ, i)
            deadline = t0 + wait_s + 5
            while len(matched) + len(errors) < len(procs) and time.monotonic() < deadline:
                for key, _ in sel.select(timeout=0.5):
                    i = key.data
                    chunk = os.read(key.fd, 4096)
                    if not chunk:
                        sel.unregister(key.fd)
                        errors.append(_why(procs[i], i))
                        continue
                    buffers[i] += chunk
                    if b"\n" in buffers[i]:
                        word, _, value = buffers[i].partition(b"\n")[0].decode().partition(" ")
                        if word == "matched":
                            matched[i] = float(value)
                        else:
                            errors.append(f"participant {i}: unexpected {word!r}")
                        sel.unregister(key.fd)
        wall = time.monotonic() - t0
    finally:
        end_processes(procs, grace_s=10)
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
