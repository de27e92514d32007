"""Lint stage: semantic rules run only when a document is schema-valid.

Every message starts with the rule:

* ``lint/domain-range``     a domain id (``id``, ``min`` or ``max``) above MAX_DOMAIN_ID
                            (230): Cyclone DDS refuses such documents.
* ``lint/id-range-order``   ``id_range`` with ``min`` greater than ``max`` (an empty range).
* ``lint/validity-order``   ``not_before`` is not earlier than ``not_after``.
* ``lint/empty-topic-expression``  empty governance ``topic_expression`` (matches no topic).
* ``lint/duplicate-grant-name``    two grants with the same ``name``.

Values are read the way the schema validator reads them: all of an element's text, with
comments and processing instructions inside it ignored (``<max>2<!-- -->31</max>`` is
231, so a comment cannot hide a value from these rules).
"""

from __future__ import annotations

import re
from fractions import Fraction

from govkit.findings import DocumentKind, Finding, quote_value
from govkit.limits import MAX_DOMAIN_ID
from govkit.xmlsource import ParsedDocument, local_name, text_value

# --------------------------------------------------------------------------- lint

_DATETIME_RE = re.compile(
    r"^\s*(?P<y>-?\d{4,})-(?P<mo>\d{2})-(?P<d>\d{2})T(?P<h>\d{2}):(?P<mi>\d{2}):"
    r"(?P<s>\d{2})(?P<frac>\.\d+)?(?P<tz>Z|[+-]\d{2}:\d{2})?\s*$")


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 in the proleptic Gregorian calendar, for any year."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def is_xml_datetime(text: str) -> bool:
    """True for an xs:dateTime (surrounding whitespace allowed)."""
    return _DATETIME_RE.match(text) is not None


def _datetime_key(text: str) -> Fraction | None:
    """Seconds since the epoch of an xs:dateTime (no timezone: taken as UTC)."""
    m = _DATETIME_RE.match(text or "")
    if not m:
        return None
    seconds = (_days_from_civil(int(m["y"]), int(m["mo"]), int(m["d"])) * 86400
               + int(m["h"]) * 3600 + int(m["mi"]) * 60 + int(m["s"]))
    value = Fraction(seconds) + (Fraction(m["frac"]) if m["frac"] else 0)
    tz = m["tz"]
    if tz and tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        value -= sign * (int(tz[1:3]) * 3600 + int(tz[4:6]) * 60)
    return value


def _int_text(elem) -> int | None:
    text = text_value(elem).strip()
    # Schema-valid values are decimal integers; a huge one is simply "too big".
    if not (text.isascii() and text.isdigit()):
        return None
    return int(text) if len(text) <= 18 else 10 ** 18


def _children(elem, name: str) -> list:
    return [c for c in elem if isinstance(c.tag, str) and local_name(c) == name]


def lint_findings(doc: ParsedDocument, kind: DocumentKind) -> list[Finding]:
    """The lint rules above, for a schema-valid document."""
    findings: list[Finding] = []
    for domains in doc.root.iter("domains"):
        for item in domains:
            if not isinstance(item.tag, str):
                continue
            if item.tag == "id":
                values = [item]
            elif item.tag == "id_range":
                values = _children(item, "min") + _children(item, "max")
                lo = _children(item, "min")
                hi = _children(item, "max")
                if lo and hi:
                    a, b = _int_text(lo[0]), _int_text(hi[0])
                    if a is not None and b is not None and a > b:
                        findings.append(doc.finding(item, (
                            f"lint/id-range-order: id_range min {a} is greater than max {b}; "
                            "the range selects no domain")))
            else:
                continue
            for v in values:
                n = _int_text(v)
                if n is not None and n > MAX_DOMAIN_ID:
                    shown = text_value(v).strip()
                    shown = shown if len(shown) <= 20 else shown[:20] + "..."
                    findings.append(doc.finding(v, (
                        f"lint/domain-range: domain id {shown} in <{v.tag}> is above "
                        f"{MAX_DOMAIN_ID}, the highest domain id Cyclone DDS accepts")))
    if kind is DocumentKind.GOVERNANCE:
        for expr in doc.root.iter("topic_expression"):
            if not text_value(expr).strip():
                findings.append(doc.finding(expr, (
                    "lint/empty-topic-expression: topic_expression is empty, so this "
                    "topic_rule matches no topic")))
    else:
        for validity in doc.root.iter("validity"):
            nb, na = _children(validity, "not_before"), _children(validity, "not_after")
            if not (nb and na):
                continue
            before, after = text_value(nb[0]).strip(), text_value(na[0]).strip()
            a, b = _datetime_key(before), _datetime_key(after)
            if a is not None and b is not None and a >= b:
                findings.append(doc.finding(na[0], (
                    f"lint/validity-order: not_before {before} is not earlier than "
                    f"not_after {after}; the grant is never valid")))
        first_use: dict[str, object] = {}
        for grant in doc.root.iter("grant"):
            name = grant.get("name")
            if name is None:
                continue
            if name in first_use:
                line, _ = doc.locate(first_use[name])
                findings.append(doc.finding(grant, (
                    f"lint/duplicate-grant-name: grant name {quote_value(name)} is already used "
                    f"by the grant on line {line}")))
            else:
                first_use[name] = grant
    return findings
