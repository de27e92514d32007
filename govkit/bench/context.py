"""One run's context: what every part of a `govkit bench` run (and of `govkit wire-check`)
shares, made once when the run knows it and handed down whole.

Why: the schedule, the rotation, discovery, the wire phase and each repeat read the same
dozen things (the options, the runner, the store, the signed bundles, the pinning, the
order seed, the console, the budget's start, the work directory, the network paths, the
load watch), and passed them along one by one: twelve functions took 8 to 13 parameters,
and a new one (the load watch) had to be threaded through four signatures. A
`RunContext` is frozen: what it holds is fixed for the run; the store, the paths and the
load watch are objects that change inside (results are added, namespaces set up).
tests/bench/test_context.py keeps every function of govkit.bench at six parameters or
fewer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from govkit.bench.defaults import budget_note
from govkit.bench.loadwatch import LoadWatch
from govkit.bench.machine import Pinning
from govkit.bench.options import BenchOptions
from govkit.catalog.profiles import Profile
from govkit.results.store import ResultStore
from govkit.runners.base import Bundle, Runner
from govkit.runners.netpath import NetPaths

if TYPE_CHECKING:
    from rich.console import Console


@dataclass(frozen=True)
class RunContext:
    opts: BenchOptions
    runner: Runner
    pin: Pinning
    seed: int                       # the order's seed (the stored one when resuming)
    console: Console
    workdir: Path                   # where the configuration files go
    bundles: dict[str, Bundle] = field(default_factory=dict)   # per profile name
    store: ResultStore | None = None   # None: a dry run, wire-check (nothing is stored)
    paths: NetPaths | None = None      # None: everything on this machine's loopback
    load: LoadWatch | None = None
    started: float = field(default_factory=time.monotonic)    # --budget counts from here
    # a version axis: the other install's runner, by the tag its arms carry
    # (govkit.bench.rotation.Arm.runtime); the baseline's is `runner`
    runtimes: dict[str, Runner] = field(default_factory=dict)

    def runner_of(self, runtime: str | None) -> Runner:
        return self.runtimes[runtime] if runtime is not None else self.runner

    def workdir_of(self, runtime: str | None) -> Path:
        """Where an install's configuration files go (each names its own plugins)."""
        return self.workdir / f"runtime-{runtime}" if runtime is not None else self.workdir

    @property
    def budget(self) -> int:
        return self.opts.budget

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def passes_budget(self, more_s: float) -> bool:
        """Whether `more_s` seconds more would pass --budget."""
        return self.elapsed() + more_s > self.budget

    def budget_note(self, left: float | None = None) -> str:
        """The budget's state for a progress line (govkit.bench.defaults.budget_note)."""
        return budget_note(self.elapsed(), self.budget, left)

    def bundle(self, profile: Profile) -> Bundle:
        return self.bundles[profile.name]

    def say(self, text: str, **style) -> None:
        """One line on the console, printed as it is (no markup, no highlighting)."""
        self.console.print(text, markup=False, highlight=False, **style)
