"""Which topics and partitions the permissions allow, per benchmark runner.

Kept apart from govkit.documents (which imports the XML and crypto stacks) so the command
line can list the runners without loading them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import GovkitError


@dataclass(frozen=True)
class AccessScope:
    """The topics and partitions one benchmark runner's participants use."""
    runner: str
    topics: tuple[str, ...]
    partitions: tuple[str, ...]


# ddsperf's topics for its default KS type; pongs are written to per-ping partitions
# whose names ddsperf makes up at run time, so partitions need "*".
ACCESS_SCOPES = {
    "ddsperf": AccessScope("ddsperf", ("DDSPerfRDataKS", "DDSPerfRPingKS", "DDSPerfRPongKS",
                                       "DDSPerfCPUStats"), ("*",)),
    "perftest": AccessScope("perftest", ("Throughput", "Latency", "Announcement"), ("*",)),
}
# govkit's Cyclone program (runner "cyclone") speaks ddsperf's type and topics too.
ACCESS_SCOPES["cyclone"] = AccessScope("cyclone", ACCESS_SCOPES["ddsperf"].topics,
                                       ACCESS_SCOPES["ddsperf"].partitions)
# govkit's Fast DDS program speaks ddsperf's topics and partitions (one bundle serves both).
ACCESS_SCOPES["fastdds"] = AccessScope("fastdds", ACCESS_SCOPES["ddsperf"].topics,
                                       ACCESS_SCOPES["ddsperf"].partitions)


def access_scope(runner: str) -> AccessScope:
    try:
        return ACCESS_SCOPES[runner]
    except KeyError:
        raise GovkitError(f"unknown runner {runner!r}; valid: {', '.join(ACCESS_SCOPES)}") \
            from None
