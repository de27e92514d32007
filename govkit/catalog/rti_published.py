"""RTI's published secure-latency figures (median one-way latency, µs), shown beside a
run's overheads over `none`: as a ratio and as added microseconds.

Absolute microseconds from RTI's 10 GbE testbed are not comparable with a loopback run of
another DDS implementation. Both overhead forms are: a ratio depends on the baseline (the
network and the DDS stack), the added µs on the CPU doing the crypto.
"""

from __future__ import annotations

import csv
from functools import cache

from govkit.common.paths import DATA_DIR

DEFAULT_SOURCE = "connext6-cpp98-10gbe"


@cache
def _medians() -> dict[tuple[str, str, int], float]:
    with open(DATA_DIR / "rti_published.csv", newline="") as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        return {(r["source"], r["profile"], int(r["size_bytes"])): float(r["p50_us"])
                for r in rows}


def published_latency(profile: str, size: int, source: str = DEFAULT_SOURCE) -> float | None:
    """RTI's published median one-way latency (µs) of `profile` at `size`, or None."""
    return _medians().get((source, profile, size))


def published_overhead(profile: str, size: int, source: str = DEFAULT_SOURCE
                       ) -> dict | None:
    """RTI's published overhead of `profile` over `none` at `size`: {"ratio", "added_us",
    "median_us"}, or None where RTI did not publish both figures."""
    mine = published_latency(profile, size, source)
    base = published_latency("none", size, source)
    if mine is None or not base:
        return None
    return {"ratio": mine / base, "added_us": mine - base, "median_us": mine}


CIPHER_SOURCE = "connext7-linux-x64 (RTI Connext 7.0, seed 002)"


@cache
def _cipher_pairs() -> dict[tuple[str, int], tuple[float, float]]:
    with open(DATA_DIR / "rti_cipher_pair.csv", newline="") as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        return {(r["profile"], int(r["size_bytes"])): (float(r["p50_us"]),
                                                       float(r["reference_us"]))
                for r in rows}


def published_cipher_pair(profile: str, size: int) -> dict | None:
    """RTI's published AES-256/AES-128 pair of `profile` at `size` (seed 002: AES256+GCM
    medians against the AES128+GCM run as RTI's "Reference"), turned the way govkit states
    its own (AES-128 − AES-256, % of AES-256): {"aes256_us", "aes128_us", "difference_us",
    "difference_pct", "source"}, or None where RTI published no such pair."""
    pair = _cipher_pairs().get((profile, size))
    if pair is None or not pair[0]:
        return None
    aes256, aes128 = pair
    return {"aes256_us": aes256, "aes128_us": aes128, "difference_us": aes128 - aes256,
            "difference_pct": 100 * (aes128 - aes256) / aes256, "source": CIPHER_SOURCE}
