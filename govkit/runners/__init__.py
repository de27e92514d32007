"""Benchmark runners: small adapters behind one interface (see base.Runner).

Adding a runner (e.g. Fast DDS) means one new module here and one entry in `_runners`.
"""

import inspect

from .base import Runner


def _runners() -> dict:
    from .ddsperf import DdsperfRunner
    from .perftest import PerftestRunner
    return {r.name: r for r in (DdsperfRunner, PerftestRunner)}


RUNNER_NAMES = ("ddsperf", "perftest")


def get_runner(name: str, **options) -> Runner:
    from ..errors import GovkitError

    runners = _runners()
    if name not in runners:
        raise GovkitError(f"unknown runner {name!r}; valid runners: {', '.join(runners)}")
    try:
        inspect.signature(runners[name]).bind(**options)
    except TypeError:
        raise GovkitError(f"option(s) {', '.join('--' + o for o in options)} do not apply to "
                          f"--runner {name}") from None
    return runners[name](**options)
