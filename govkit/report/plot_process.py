"""The report's plots drawn in a second process, started before the report's own work.

Importing matplotlib takes 0.5 to 0.9 s on the 2-core VM, a fifth of a report's time, and
reading, checking and summarising a run keeps one CPU busy and the other mostly idle. So
`govkit report` forks a plotter first: it imports matplotlib on the idle CPU, then waits
for the report's model and draws it (plots.build_figures, the very function this process
would call). Whatever goes wrong there (the plotter died, the model cannot be pickled, the
drawing raised) the plots are drawn here instead, so a report never depends on it and an
error is raised where it would have been.

The plotter dies with this process (common.workers.die_with_parent) and is ended when the
report is done or refused. It is started only from a process with no other thread (a fork
then copies no lock another thread holds) and where fork exists.
"""

from __future__ import annotations

import os
import pickle
import sys
import threading

from govkit.common import workers
from govkit.report.model import Figure, ReportModel
from govkit.report.plots import build_figures

# How long the report waits for the plotter's figures before drawing them itself: more
# than any drawing takes (0.3-1.5 s), less than a user would wait for a stuck child.
WAIT_S = 60


def _serve(conn, report_end, parent: int) -> None:
    """The plotter: import what drawing needs, then draw the one model it is sent."""
    workers.die_with_parent(parent)
    report_end.close()     # inherited: closed, so the report's closing its end is an EOF here
    try:
        import matplotlib.backends.backend_svg  # noqa: F401 - the point: import while idle
        import matplotlib.figure  # noqa: F401
        model = conn.recv()
        conn.send(("ok", build_figures(model)))
    except EOFError:            # the report ended (or was refused) before sending a model
        pass
    except BaseException:   # noqa: BLE001 - the report draws again, and raises there
        try:
            conn.send(("failed", None))
        except (OSError, ValueError):
            pass
    finally:
        conn.close()


class Plotter:
    """`figures(model)`: build_figures(model), in the forked plotter where there is one."""

    def __init__(self) -> None:
        self._conn = self._process = None
        if threading.active_count() != 1 or not hasattr(os, "fork"):
            return
        import multiprocessing
        context = multiprocessing.get_context("fork")
        for stream in (sys.stdout, sys.stderr):    # nothing buffered is written twice
            stream.flush()
        workers.dies_with_parent()    # looks prctl up here: the child need not load libc
        self._conn, theirs = context.Pipe()
        self._process = context.Process(target=_serve, args=(theirs, self._conn, os.getpid()),
                                        daemon=True, name="govkit-plotter")
        self._process.start()
        theirs.close()

    def figures(self, model: ReportModel) -> list[Figure]:
        if self._conn is not None:
            try:
                self._conn.send(model)
                if self._conn.poll(WAIT_S):
                    status, figures = self._conn.recv()
                    if status == "ok":
                        return figures
            except (OSError, EOFError, ValueError, TypeError, AttributeError,
                    pickle.PickleError):
                pass            # not picklable, or the plotter is gone: drawn here
            finally:
                self.close()
        return build_figures(model)

    def close(self) -> None:
        """End the plotter and reap it: given a moment to exit once it has sent its figures
        (or failed), killed at once where the report ends before sending it a model."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._process is not None:
            self._process.join(0.2)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()
            self._process = None

    def __enter__(self) -> Plotter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
