"""Benchmark runners: small adapters behind one interface (see base.Runner).

Every module here except `base` is a runner named like the module, whose class it exports
as `RUNNER`: adding a runner (e.g. Fast DDS) is one new module, nothing else.
"""

import importlib
import inspect
import pkgutil

from .base import Runner


def runner_names() -> tuple[str, ...]:
    """The runners there are, found without importing them (the CLI lists them)."""
    return tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name != "base"))


def get_runner(name: str, **options) -> Runner:
    from ..errors import GovkitError

    if name not in runner_names():
        raise GovkitError(f"unknown runner {name!r}; valid runners: {', '.join(runner_names())}")
    cls = importlib.import_module(f".{name}", __name__).RUNNER
    try:
        inspect.signature(cls).bind(**options)
    except TypeError:
        raise GovkitError(f"option(s) {', '.join('--' + o for o in options)} do not apply to "
                          f"--runner {name}") from None
    return cls(**options)
