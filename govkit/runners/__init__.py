"""Benchmark runners: small adapters behind one interface (govkit.runners.base.Runner), where
a point's processes run, and govkit's native programs with their builds.

A runner is one module here, whose class it exports as `RUNNER`, plus one row in the runner
table (govkit.catalog.runners), which names the module: the CLI reads the table, never this
directory, so listing runners imports none of them. `get_runner` below makes one by name.

- `base`: the runner interface (and what a rotating runner offers), the point and bundle it
  is given, and `Runner.run`: prepare, run, parse;
- `cyclone`: Cyclone DDS through govkit's own program, latency by rotation (the default);
- `ddsperf`: Cyclone DDS's `ddsperf`;
- `fastdds`: Fast DDS 2 through govkit's own program (the system's 2.9, or one by prefix);
- `perftest`: RTI Perftest, the method of RTI's secure-performance pages;
- `crypto`: a secured arm's crypto variant (AES key size, rekeying) and who allows it;
- `network`: the network a point is measured over: transport, path, injected loss;
- `netpath`: where the two processes run: loopback, two namespaces, or two hosts;
- `cyclone_build`, `fastdds_build`: the native programs built once and cached;
- `dds_prefix`: which Cyclone DDS install a run uses (`--dds-prefix`), its version as its
  library states it, and a version axis's two installs (`--runner NAME@PREFIX,...`);
- `fastdds_prefix`: which Fast DDS install a run uses, its version as its headers state it;
- `cyclone_source_build`: Cyclone DDS built from a source tarball (the vendored 11.0.1) into
  a prefix cached per machine;
- `cyclone_refusal`, `fastdds_refusal`: why an implementation refused a participant;
- `native/`: the programs' sources (`cyclone_perf.c`, `fastdds_perf.cpp`, and `readers.h`,
  the reader processes' relay both include).
- `processes`: what a benchmark process is, and where every one is started, read and
  ended;
- `per_second`: ddsperf's and fastdds_perf's per-second lines read into rows, one way;
- `pair`: a long-lived ping/pong pair of govkit's programs and the line protocol of its slots;
- `readers`: one writer and N readers: the readers count and the per-reader figures;
- `cputime`: the CPU time a process tree spent, from /proc (the idle-pair watchdog's);
- `group`: a discovery group of participants started together;
- `doctor`: the DDS Security runtimes installed here against the advisory table (`govkit
  doctor`);
- `security_log`: Fast DDS's DDS Security logging plugin: its properties, its file read
  back into events, and what Fast DDS said in its own words;

May import: every stage up to govkit.smime and govkit.wire.
"""

import importlib
import inspect

from govkit.catalog.runners import runner_info
from govkit.common.errors import GovkitError
from govkit.runners.base import Runner


def get_runner(name: str, **options) -> Runner:
    """The runner `name` of the runner table, made with `options` (a usage error if one does
    not apply to it)."""
    cls = importlib.import_module(f"govkit.runners.{runner_info(name).module}").RUNNER
    try:
        inspect.signature(cls).bind(**options)
    except TypeError:
        raise GovkitError(f"option(s) {', '.join('--' + o for o in options)} do not apply to "
                          f"--runner {name}") from None
    return cls(**options)
