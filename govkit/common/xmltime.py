"""xs:dateTime as govkit writes it: UTC, whole seconds, `Z` (2026-12-07T18:00:00Z).

The one writer of the validity bounds of a permissions grant (from a certificate, from
--valid-from/--valid-for, from an sros2 policy) and of the times the PKI manifest records;
the form Cyclone DDS 0.10 and Fast DDS 2.9 both read.
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache

XML_DATETIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


@lru_cache(maxsize=256)   # a fleet's certificates share a few validity periods
def xml_datetime(t: dt.datetime) -> str:
    """`t` (aware) as an xs:dateTime in UTC."""
    return t.astimezone(dt.UTC).strftime(XML_DATETIME_FORMAT)
