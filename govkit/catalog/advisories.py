"""The security advisories that bear on DDS Security (`data/advisories.csv`, its header says
what each column means), and which versions each affects.

`govkit doctor` sets the installed runtimes against it, and lint's target facts
(govkit.catalog.targets) name their sources by its ids, so the two read the same fixed
versions. A row is there only where its source was read; the table says the day.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache

from govkit.common.paths import DATA_DIR

PRODUCT_TITLES = {"fastdds": "Fast DDS", "cyclonedds": "Cyclone DDS", "openssl": "OpenSSL"}
_VERSION = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")


def version_tuple(text: str) -> tuple[int, ...] | None:
    """(2, 9, 1) of "2.9.1", "v2.9.1" or Debian's "2.9.1+ds-1+deb12u2"; None if no number
    leads it."""
    m = _VERSION.match(text or "")
    return tuple(int(p) for p in m[1].split(".")) if m else None


def _padded(v: tuple[int, ...]) -> tuple[int, ...]:
    return v + (0,) * (3 - len(v)) if len(v) < 3 else v


@dataclass(frozen=True)
class Advisory:
    id: str
    product: str
    introduced: str
    fixed: tuple[str, ...]
    security_only: bool
    kind: str              # advisory | defect
    summary: str
    sources: tuple[str, ...]
    checked: str

    @property
    def fixed_in(self) -> str:
        """"Fast DDS 2.6.12, 2.14.7 and 3.2.5", for sentences."""
        versions = list(self.fixed)
        shown = " and ".join(filter(None, (", ".join(versions[:-1]), versions[-1])))
        return f"{PRODUCT_TITLES[self.product]} {shown}"

    def affects(self, version: str) -> bool | None:
        """Whether `version` is affected (the rule in the table's header); None when it
        cannot be read as a version."""
        v = version_tuple(version)
        if v is None:
            return None
        v = _padded(v)
        intro = version_tuple(self.introduced) or (0,)
        if v < _padded(intro):
            return False
        fixes = [_padded(version_tuple(f)) for f in self.fixed]
        same_branch = [f for f in fixes if f[:2] == v[:2]]
        if same_branch:
            return v < min(same_branch)
        return v < max(fixes)


def _row(r: dict[str, str]) -> Advisory:
    return Advisory(id=r["id"], product=r["product"], introduced=r["introduced"],
                    fixed=tuple(r["fixed"].split()), security_only=r["security_only"] == "yes",
                    kind=r["kind"], summary=r["summary"], sources=tuple(r["source"].split()),
                    checked=r["checked"])


@cache
def advisories() -> tuple[Advisory, ...]:
    """Every row of data/advisories.csv, in its order."""
    with open(DATA_DIR / "advisories.csv", newline="", encoding="utf-8") as f:
        return tuple(_row(r) for r in csv.DictReader(
            line for line in f if not line.startswith("#")))


def advisory(advisory_id: str) -> Advisory:
    """The row of `advisory_id` (KeyError when the table has none: a catalog bug)."""
    for a in advisories():
        if a.id == advisory_id:
            return a
    raise KeyError(advisory_id)


def cite(*ids: str) -> str:
    """How lint cites rows: "CVE-2026-45094/45095/45096, fixed in Fast DDS 2.6.12, 2.14.7,
    3.2.5 and 3.4.3" (ids sharing one prefix shortened; the fixed releases of the first)."""
    rows = [advisory(i) for i in ids]
    shown = rows[0].id
    for a in rows[1:]:
        head, _, tail = a.id.rpartition("-")
        shown += f"/{tail}" if head and rows[0].id.startswith(head + "-") else f", {a.id}"
    return f"{shown}, fixed in {rows[0].fixed_in}"
