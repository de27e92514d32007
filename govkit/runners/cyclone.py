"""Cyclone DDS through govkit's own program, latency by rotation (the default runner).

Latency points are measured by govkit.bench.rotation: long-lived `cyclone_perf ping`/`pong`
pairs (govkit/runners/native/cyclone_perf.c, built on first use by
govkit.runners.cyclone_build), one or
more per profile, each on a domain of its own, driven through short slots. Everything else
is ddsperf's: the same Cyclone DDS library, the same configuration files (one per profile
and side) and the same signed bundle (cyclone_perf speaks ddsperf's type and topics).
With --rotate-throughput, throughput points rotate too (cyclone_perf's throughput slots,
on ddsperf's data topic); otherwise they, points on other networks and `--wire` captures
run `ddsperf` exactly as `--runner ddsperf` does.
"""

from __future__ import annotations

from pathlib import Path

from govkit.runners.base import BenchPoint, Bundle, ProcessSpec, RotatingRunner, topics_env
from govkit.runners.crypto import CRYPTO_DEFAULTS, CryptoVariant
from govkit.runners.cyclone_refusal import explain_cyclone_refusal
from govkit.runners.dds_prefix import CycloneInstall
from govkit.runners.ddsperf import METHOD as DDSPERF_METHOD
from govkit.runners.ddsperf import DdsperfRunner
from govkit.runners.readers import check_readers

SLOT_METHOD = (
    "Latency: govkit's cyclone_perf program (govkit/runners/native/cyclone_perf.c) against the "
    "system's Cyclone DDS, ddsperf's type, topics and ping/pong QoS (reliable, KEEP_LAST 1, "
    "the reply written from the data-available listener and flushed); one-way latency = "
    "round trip / 2 (monotonic clock). Every pair stays up for the whole run and ping-pongs "
    "only when govkit gives it a slot: round trips sent in the slot's settle time are kept "
    "apart, every other one is a sample; per slot the exact mean, min, 50/90/99 % "
    "(nearest rank), max and a 1 % histogram of all its samples.")
THROUGHPUT_SLOT_METHOD = (
    "Throughput (by rotation, the default): the same long-lived pairs, in throughput slots, "
    "normally scheduled: ping writes on ddsperf's data topic (reliable, KEEP_ALL, at most "
    "10000 samples) as fast as the writer lets it, batched (ddsperf's `pub` at no rate), then "
    "an end marker; pong takes in its data-available listener (ddsperf's `sub`), counts the "
    "samples written after the settle time and answers once the end marker, behind every "
    "sample of the slot, has arrived, so no slot's data runs into the next: the slot's rate "
    "is those arriving after the first of them over the time from the first arrival to the "
    "last (samples/s; Mbit/s counts the payload, as ddsperf); per slot also the writer's "
    "protocol counters (ddsperf -X) and the arrivals per 5 ms. CPU slots write the same way "
    "paced at one fixed rate per size (lower where the slowest arm could not sustain it): "
    "each side's CPU time "
    "over the samples written. Samples above 1344 B travel as fragments (Cyclone 0.10's "
    "defaults: FragmentSize 1344 B, MaxMessageSize 14720 B, a 1 MiB socket receive buffer "
    "requested, at most net.core.rmem_max granted).")
DISCOVERY_METHOD = (
    "Discovery (--mode discovery): N 'cyclone_perf discover' processes started together, "
    "each with a writer and a reader on ddsperf's ping topic (reliable, KEEP_LAST 1), taking "
    "turns at the pair's two identities; each reports when both its endpoints have matched "
    "the other N - 1 participants, timed from before its participant's creation.")
METHOD = (f"{SLOT_METHOD} {THROUGHPUT_SLOT_METHOD} {DISCOVERY_METHOD} Throughput points "
          f"otherwise, points on other networks and --wire captures: {DDSPERF_METHOD}")


class CycloneRunner(DdsperfRunner, RotatingRunner):
    """A RotatingRunner (its row in govkit.catalog.runners says what it rotates)."""
    name = "cyclone"

    def __init__(self, ddsperf: str | None = None, dds_prefix: CycloneInstall | None = None):
        super().__init__(ddsperf, dds_prefix)
        self.program: Path | None = None

    def method(self) -> str:
        if self.install is None:
            return METHOD
        return METHOD.replace("the system's Cyclone DDS",
                              f"Cyclone DDS {self.install.label}", 1)

    def check_installed(self) -> None:
        from govkit.runners.cyclone_build import ensure_built
        super().check_installed()           # ddsperf and the security plugins
        self.program = ensure_built(self.install)     # against --dds-prefix's, if given

    def versions(self) -> dict:
        return {**super().versions(), "latency_program": "cyclone_perf (govkit)"}

    def pair_specs(self, bundle: Bundle, domain_id: int, cpus: tuple[int, int] | None,
                   realtime: bool, workdir: Path, wait_s: float = 30.0,
                   variant: CryptoVariant | None = None, readers: int = 1
                   ) -> list[ProcessSpec]:
        """pong then ping of one long-lived pair; the configuration files are ddsperf's
        (written by the caller with `configs`). A crypto variant can only be AES-256 here
        (govkit.runners.crypto.refusal), what Cyclone does anyway: nothing to set.
        `readers` > 1: pong forks that many reader processes, all on pong's CPU
        (govkit.runners.readers); at 1 the command lines are what they always were."""
        point = BenchPoint(bundle.profile, "latency", 32, 1, domain_id=domain_id)
        program = str(self.program or "cyclone_perf")
        extra = [str(check_readers(readers))] if readers != 1 else []
        specs = []
        for role, verb, cpu in (("sub", "pong", cpus[1] if cpus else None),
                                ("pub", "ping", cpus[0] if cpus else None)):
            path = self.config_path(bundle, role, workdir, point)
            specs.append(ProcessSpec(role, [program, verb, str(domain_id), f"{wait_s:g}",
                                            *extra],
                                     {"CYCLONEDDS_URI": path.as_uri(),
                                      **topics_env(bundle.profile)}, cpu=cpu,
                                     realtime=realtime))
        return specs

    @staticmethod
    def crypto_applied(variant: CryptoVariant | None) -> dict:
        """What a variant's pair was given, for results.json: nothing (see pair_specs)."""
        return {"properties": {}, "where": "nothing set: " + CRYPTO_DEFAULTS["cyclone"]}

    @staticmethod
    def explain_refusal(env: dict[str, str], stderr: str, domain_id: int) -> str:
        """Cyclone's refusal mapped to the file, the rule and the fix."""
        return explain_cyclone_refusal(env, stderr, domain_id)

    def discovery_specs(self, bundle: Bundle, domain_id: int, peers: int, wait_s: float,
                        workdir: Path) -> list[ProcessSpec]:
        """`peers` participants started together (govkit bench --mode discovery). They take
        turns at the pair's two identities and configuration files: DDS Security lets
        participants share a certificate, and every one is authenticated with every other
        all the same. Not pinned, not real-time: more processes than CPUs."""
        point = BenchPoint(bundle.profile, "latency", 32, 1, domain_id=domain_id)
        program = str(self.program or "cyclone_perf")
        uris = {role: self.config_path(bundle, role, workdir, point).as_uri()
                for role in ("pub", "sub")}
        return [ProcessSpec(f"p{i}", [program, "discover", str(domain_id), f"{wait_s:g}",
                                      str(peers)],
                            {"CYCLONEDDS_URI": uris["pub" if i % 2 == 0 else "sub"]})
                for i in range(peers)]


RUNNER = CycloneRunner
