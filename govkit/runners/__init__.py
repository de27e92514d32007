"""Benchmark runners: small adapters behind one interface (see base.Runner).

Adding a runner (e.g. Fast DDS) means one new module here and one entry in RUNNERS.
"""

from .base import Runner


def get_runner(name: str, **options) -> Runner:
    from ..errors import GovkitError
    from .ddsperf import DdsperfRunner
    from .perftest import PerftestRunner

    runners = {r.name: r for r in (DdsperfRunner, PerftestRunner)}
    if name not in runners:
        raise GovkitError(f"unknown runner {name!r}; valid runners: {', '.join(runners)}")
    return runners[name](**options)
