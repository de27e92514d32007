"""Sets of domain ids as sorted, merged, closed intervals (hi may be infinite, for an open
<id_range>): union, difference, intersection and a short description ("0-230", "5 and up").
"""

from __future__ import annotations

from collections.abc import Iterable

Interval = tuple[int, float]
# a set of domain ids, normalised: sorted, merged, closed (govkit.documents.render.DomainSet
# is the --domain option as written, which a generated document renders)
Intervals = tuple[Interval, ...]

INF = float("inf")


def normalise(intervals: Iterable[Interval]) -> Intervals:
    merged: list[list] = []
    for lo, hi in sorted(i for i in intervals if i[0] <= i[1]):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return tuple((lo, hi) for lo, hi in merged)


def of_spans(spans, open_range: str = "up") -> Intervals:
    """The domain ids a <domains> element selects (spans whose numbers are not valid are
    left out)."""
    return normalise(b for s in spans if (b := s.bounds(open_range)) is not None)


def intersect(a: Intervals, b: Intervals) -> Intervals:
    out = []
    for lo1, hi1 in a:
        for lo2, hi2 in b:
            lo, hi = max(lo1, lo2), min(hi1, hi2)
            if lo <= hi:
                out.append((lo, hi))
    return normalise(out)


def subtract(a: Intervals, b: Intervals) -> Intervals:
    out = list(a)
    for blo, bhi in b:
        nxt = []
        for lo, hi in out:
            if bhi < lo or blo > hi:
                nxt.append((lo, hi))
                continue
            if lo < blo:
                nxt.append((lo, blo - 1))
            if bhi < hi:
                nxt.append((bhi + 1, hi))
        out = nxt
    return normalise(out)


def union(*sets: Intervals) -> Intervals:
    return normalise(i for s in sets for i in s)


def domains_text(s: Intervals) -> str:
    if not s:
        return "no domain"
    parts = []
    for lo, hi in s:
        if hi == INF:
            parts.append(f"{lo} and up")
        elif lo == hi:
            parts.append(str(lo))
        else:
            parts.append(f"{lo}-{int(hi)}")
    return ", ".join(parts)
