"""Benchmark runners: small adapters behind one interface (govkit.runners.base.Runner).

A runner is one module here, whose class it exports as `RUNNER`, plus one row in the runner
table (govkit.catalog.runners), which names the module: the CLI reads the table, never this
directory, so listing runners imports none of them. Where the processes run (`network`,
`netpath`) and govkit's native programs (`native/`, `cyclone_build`, `fastdds_build`) live
here too.

May import: every stage up to govkit.smime and govkit.wire.
"""

import importlib
import inspect

from govkit.catalog.runners import RUNNERS, runner_info
from govkit.common.errors import GovkitError
from govkit.common.faces import lazy_face
from govkit.runners.base import Runner

_EXPORTS = {
    "BenchPoint": "base",
    "Bundle": "base",
    "CIPHERS": "crypto",
    "CRYPTO_DEFAULTS": "crypto",
    "CryptoVariant": "crypto",
    "DEFAULT": "network",
    "ForeignParticipant": "base",
    "LOSS_MEANING": "network",
    "MAX_REKEY": "crypto",
    "NetPaths": "netpath",
    "Network": "network",
    "PATHS": "network",
    "Pair": "pair",
    "PairFailed": "pair",
    "ParticipantFiles": "base",
    "ProcessSpec": "base",
    "ROLES": "network",
    "RotatingRunner": "base",
    "THROUGHPUT": "pair",
    "RunnerError": "base",
    "TRANSPORTS": "network",
    "command_line": "base",
    "crypto_refusal": "crypto",
    "csv_prefix": "network",
    "csv_suffix": "network",
    "dies_with_govkit": "processes",
    "explain_cyclone_refusal": "cyclone_refusal",
    "launch_argv": "base",
    "networks": "network",
    "parse_hosts": "network",
    "parse_loss_rates": "network",
    "parse_paths": "network",
    "parse_peer_addresses": "network",
    "parse_transports": "network",
    "prepare": "base",
    "process_placement": "processes",
    "run_group": "group",
    "run_processes": "processes",
    "shown_path": "network",
    "sort_key": "network",
    "variants_of": "crypto",
}
__all__ = ["Runner", "get_runner", "runner_names", *sorted(_EXPORTS)]
__getattr__ = lazy_face(__name__, _EXPORTS)


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
