"""The plotter process of `govkit report` (govkit.report.plot_process): the same figures as
drawing them here, drawn here whenever it cannot, and never outliving the report."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from helpers.large_results import catalog, rotating

from govkit.common.errors import GovkitError
from govkit.report.plot_process import Plotter
from govkit.report.plots import build_figures
from govkit.report.run import build_report_model, write_report
from govkit.results.store import RESULTS_NAME


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _children() -> set[int]:
    """This process's live children (from /proc: zombies are not alive)."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == os.getpid() and fields[0] != "Z":
                out.add(int(entry.name))
    return out


@pytest.fixture(scope="module")
def model():
    return build_report_model(rotating(catalog(3), [32, 1024], 12))


def test_the_plotter_draws_what_this_process_would(model):
    before = _children()
    with Plotter() as plotter:
        assert plotter._process is not None and plotter._process.pid not in before
        figures = plotter.figures(model)
    assert figures == build_figures(model) and len(figures) == 2
    assert _children() == before                         # reaped


def test_a_model_that_cannot_be_sent_is_drawn_here(model):
    odd = replace(model, method=lambda: None)        # not picklable
    with Plotter() as plotter:
        assert plotter.figures(odd) == build_figures(model)
        assert plotter._process is None


def test_a_plotter_that_died_leaves_the_drawing_here(model):
    with Plotter() as plotter:
        os.kill(plotter._process.pid, signal.SIGKILL)
        plotter._process.join()
        assert plotter.figures(model) == build_figures(model)


def test_a_drawing_that_fails_there_fails_here(model):
    """The plotter's error is not swallowed: the report draws again and raises as before."""
    broken = replace(model, sizes=["not a size"])
    with pytest.raises(Exception) as here:
        build_figures(broken)
    with Plotter() as plotter, pytest.raises(type(here.value)):
        plotter.figures(broken)


def test_no_plotter_beside_another_thread(model):
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with Plotter() as plotter:
            assert plotter._process is None
            assert plotter.figures(model) == build_figures(model)
    finally:
        stop.set()
        other.join()


def test_a_refused_report_leaves_no_plotter(tmp_path):
    (tmp_path / RESULTS_NAME).write_text('{"schema": "govkit.bench/3"}')
    before = _children()
    started = time.monotonic()
    with pytest.raises(GovkitError):
        write_report(tmp_path)
    assert _children() == before
    assert time.monotonic() - started < 5       # killed, not waited for
    assert not (tmp_path / "report.html").exists()


def test_the_plotter_dies_with_the_report(tmp_path):
    """A SIGKILLed report (nothing of it runs to end the plotter) takes its plotter along."""
    script = ("import os, sys, time\n"
              "from govkit.report.plot_process import Plotter\n"
              "p = Plotter()\n"
              "print(p._process.pid, flush=True)\n"
              "time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    plotter = int(proc.stdout.readline())
    assert _alive(plotter)
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 10
    while _alive(plotter) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(plotter)
