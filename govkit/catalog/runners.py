"""The runner table: every fact about a benchmark runner that is not its code, in one row.

The CLI lists runners and checks `generate --runner` from this table without importing any
runner (start-up); bench, generate, compare and report read their facts here. Adding a runner
is one module under govkit/runners/ (a class exported as `RUNNER`) plus one row below.
"""

from __future__ import annotations

from dataclasses import dataclass

from govkit.common.errors import GovkitError

# ddsperf's topics for its default KS type; pongs are written to per-ping partitions whose
# names ddsperf makes up at run time, so partitions need "*". govkit's Cyclone and Fast DDS
# programs speak the same type, topics and partitions (one set of permissions serves all three).

DDSPERF_TOPICS = ("DDSPerfRDataKS", "DDSPerfRPingKS", "DDSPerfRPongKS", "DDSPerfCPUStats")


@dataclass(frozen=True)
class RunnerInfo:
    """One benchmark runner: what it drives and what its participants may do."""
    name: str
    module: str                    # govkit.runners.<module>, imported only when the runner runs
    implementation: str            # the DDS implementation it drives
    environment_key: str | None    # results.json environment key of that implementation's version
    topics: tuple[str, ...]        # the topics its participants' permissions allow
    partitions: tuple[str, ...]
    single_ca: bool                # one CA signs identities and permissions (RTI Perftest)
    networks: bool                 # takes --transport, --net, --hosts and --loss-rate
    build_subdir: str              # its bundles under --build ("": --build itself)
    # Latency points by rotation (govkit.bench.rotation): its own program serves long-lived
    # pairs in slots (the runner is a govkit.runners.base.RotatingRunner).
    rotates: bool = False
    rotates_throughput: bool = False   # ... throughput points too (its `tput` slots)
    pkcs11_keys: bool = False      # private keys in a token, by pkcs11: URI (govkit.pki.hsm)
    # takes --dds-prefix: its implementation installed elsewhere than /usr
    # (govkit.runners.dds_prefix, govkit.runners.fastdds_prefix)
    dds_prefix: bool = False


RUNNERS: dict[str, RunnerInfo] = {r.name: r for r in (
    # pkcs11_keys off for both Cyclone runners, whatever the install: 0.10.2 refuses a
    # pkcs11: PrivateKey ("PrivateKey pkcs11 format currently not supported"); 11.0.1 built
    # against OpenSSL 3 reads the URI but loads it through OpenSSL 3's `pkcs11` provider, not
    # the engine Fast DDS uses, and Debian 12 has no such provider: "Failed to load pkcs11
    # provider" (both run on a SoftHSM2 token, 2026-12-07).
    RunnerInfo("cyclone", "cyclone", "Cyclone DDS", "cyclonedds", DDSPERF_TOPICS, ("*",),
               single_ca=False, networks=False, build_subdir="cyclone", rotates=True,
               rotates_throughput=True, dds_prefix=True),
    RunnerInfo("ddsperf", "ddsperf", "Cyclone DDS", "cyclonedds", DDSPERF_TOPICS, ("*",),
               single_ca=False, networks=True, build_subdir="", dds_prefix=True),
    RunnerInfo("fastdds", "fastdds", "Fast DDS", "fastdds", DDSPERF_TOPICS, ("*",),
               single_ca=False, networks=False, build_subdir="fastdds", rotates=True,
               rotates_throughput=True, pkcs11_keys=True, dds_prefix=True),
    # perftest: one -secureCertAuthority for identities and permissions; its results record
    # only the executable's path, not Connext's version.
    RunnerInfo("perftest", "perftest", "RTI Connext DDS", None,
               ("Throughput", "Latency", "Announcement"), ("*",),
               single_ca=True, networks=False, build_subdir="perftest"),
)}


def runner_info(name: str) -> RunnerInfo:
    try:
        return RUNNERS[name]
    except KeyError:
        raise GovkitError(f"unknown runner {name!r}; valid runners: {', '.join(RUNNERS)}") \
            from None
