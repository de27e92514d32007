"""Benchmark runners: small adapters behind one interface (govkit.runners.base.Runner).

A runner is one module here, whose class it exports as `RUNNER`, plus one row in the runner
table (govkit.catalog.runners), which names the module: the CLI reads the table, never this
directory, so listing runners imports none of them.
"""

import importlib
import inspect

from govkit.catalog.runners import RUNNERS, runner_info
from govkit.common.errors import GovkitError
from govkit.runners.base import Runner


def runner_names() -> tuple[str, ...]:
    return tuple(RUNNERS)


def get_runner(name: str, **options) -> Runner:
    cls = importlib.import_module(f"govkit.runners.{runner_info(name).module}").RUNNER
    try:
        inspect.signature(cls).bind(**options)
    except TypeError:
        raise GovkitError(f"option(s) {', '.join('--' + o for o in options)} do not apply to "
                          f"--runner {name}") from None
    return cls(**options)
