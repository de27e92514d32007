"""RTI's published secure-latency figures, used only as overhead ratios over `none`.

Absolute microseconds from RTI's 10 GbE testbed are not comparable with a loopback run of
another DDS implementation; the ratio profile/none at the same size is.
"""

from __future__ import annotations

import csv
from functools import cache

from .paths import DATA_DIR

DEFAULT_SOURCE = "connext6-cpp98-10gbe"


@cache
def _medians() -> dict[tuple[str, str, int], float]:
    with open(DATA_DIR / "rti_published.csv", newline="") as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        return {(r["source"], r["profile"], int(r["size_bytes"])): float(r["p50_us"])
                for r in rows}


def published_ratio(profile: str, size: int, source: str = DEFAULT_SOURCE) -> float | None:
    """RTI's median latency of `profile` over `none` at `size`, or None if not published."""
    medians = _medians()
    mine, base = medians.get((source, profile, size)), medians.get((source, "none", size))
    if mine is None or not base:
        return None
    return mine / base
