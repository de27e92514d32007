"""The typed model of a governance or permissions document, for lint, identify, explain and
diff.

It is built from the tree :mod:`govkit.documents.parse` parsed (no second parser) and keeps every
element, so whatever a command says about a value points at its ``FILE:LINE:COL``. Values
are decoded by xmlschema from govkit's own XSDs (``schemas/``): booleans, domain ids,
xs:dateTime, enumerations, exactly as the XSD defines them. lxml has already validated the
document, so xmlschema only converts (``text_decode``), which costs microseconds a value.

A document that is not schema-valid still gets a model: a value the XSD does not accept
keeps its text with ``valid=False`` and ``value`` None, except booleans written in another
letter case (``TRUE``), which read as the boolean most implementations take them for; a
missing element is a Value without element. Unknown elements are ignored; of the DDS
Security 1.0-beta layout, the root <permissions> and <topic> directly in <publish> are read
(explain says what else a 1.0-beta document holds).

xmlschema is imported on first use, and only for a value `leaf_types` cannot read exactly
as it would (a boolean written ` true`, a date of year 0, ...): the leaf types of the XSDs
are compiled once and cached (loading xmlschema and the two schemas costs about a second of
CPU, ten times a `lint` of one file).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from govkit.common.findings import DocumentKind
from govkit.common.paths import SCHEMA_FILES, SCHEMAS_DIR
from govkit.documents.leaf_types import leaf_types
from govkit.documents.parse import local_name, text_value

if TYPE_CHECKING:
    from fractions import Fraction

_EPOCH = dt.datetime(1, 1, 1, tzinfo=dt.UTC)
_UNIX_EPOCH_S = 62135596800          # 0001-01-01 to 1970-01-01, in seconds
_LIMIT_US = dt.timedelta.max // dt.timedelta(microseconds=1)

# --------------------------------------------------------------------- xs:dateTime

_DATETIME_RE = re.compile(
    r"^\s*(?P<y>-?\d{4,})-(?P<mo>\d{2})-(?P<d>\d{2})T(?P<h>\d{2}):(?P<mi>\d{2}):"
    r"(?P<s>\d{2})(?P<frac>\.\d+)?(?P<tz>Z|[+-]\d{2}:\d{2})?\s*$")


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 in the proleptic Gregorian calendar, for any year."""
    y -= m <= 2
    era = y // 400          # floor division (Hinnant's C original adjusts for truncation)
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def is_xml_datetime(text: str) -> bool:
    """True for an xs:dateTime (surrounding whitespace allowed)."""
    return _DATETIME_RE.match(text) is not None


def datetime_key(text: str) -> Fraction | None:
    """Seconds since 1970-01-01 UTC of an xs:dateTime, exactly (no time zone: taken as
    UTC). The one reader govkit has: Instant and validate's GK200 both use it. Years are
    XSD 1.0's, as libxml2 validates them: there is no year 0, so -0001 is 1 BCE."""
    from fractions import Fraction  # only documents with dates need it (lint's start-up)
    m = _DATETIME_RE.match(text or "")
    if not m:
        return None
    year = int(m["y"])
    seconds = (_days_from_civil(year + 1 if year < 0 else year, int(m["mo"]), int(m["d"]))
               * 86400
               + int(m["h"]) * 3600 + int(m["mi"]) * 60 + int(m["s"]))
    value = Fraction(seconds) + (Fraction(m["frac"]) if m["frac"] else 0)
    tz = m["tz"]
    if tz and tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        value -= sign * (int(tz[1:3]) * 3600 + int(tz[4:6]) * 60)
    return value




@dataclass(frozen=True)
class Value:
    """One leaf: its element (None if missing), its text as written, and its typed value
    (None if missing or not valid, save the lenient booleans above)."""
    elem: Any
    text: str | None
    value: Any
    valid: bool

    @property
    def missing(self) -> bool:
        return self.elem is None

    def shown(self) -> str:
        return "(missing)" if self.text is None else self.text.strip()


@dataclass(frozen=True)
class Instant:
    """An xs:dateTime as the XSD reads it: time since 0001-01-01 UTC (no time zone: read
    as UTC), so years beyond 9999 still compare."""
    since_epoch: dt.timedelta
    has_timezone: bool

    @classmethod
    def from_datetime(cls, t: dt.datetime) -> Instant:
        return cls(t.astimezone(dt.UTC) - _EPOCH, True)

    @classmethod
    def from_text(cls, text: str) -> Instant | None:
        """The instant datetime_key reads, to the microsecond; beyond timedelta's range
        (about 2.7 million years) clamped, which keeps the order."""
        key = datetime_key(text)
        if key is None:
            return None
        micro = max(-_LIMIT_US, min(_LIMIT_US, math.floor((key + _UNIX_EPOCH_S) * 10**6)))
        return cls(dt.timedelta(microseconds=micro), _DATETIME_RE.match(text)["tz"] is not None)

    def datetime(self) -> dt.datetime | None:
        try:
            return _EPOCH + self.since_epoch
        except OverflowError:
            return None


@dataclass(frozen=True)
class DomainSpan:
    """One <id> (lo == hi) or <id_range>: `hi` None means an open range (min only)."""
    elem: Any
    lo: int | None
    hi: int | None
    open: bool = False

    def bounds(self, open_range: str = "up") -> tuple[int, float] | None:
        """(lo, hi) with hi possibly infinite; None if a bound is not a valid number."""
        if self.lo is None or (self.hi is None and not self.open):
            return None
        if self.open:
            return (self.lo, self.lo if open_range == "single" else float("inf"))
        return (self.lo, self.hi)


@dataclass(frozen=True)
class TopicRule:
    elem: Any
    expression: Value
    discovery: Value        # enable_discovery_protection
    liveliness: Value       # enable_liveliness_protection
    read_ac: Value          # enable_read_access_control
    write_ac: Value         # enable_write_access_control
    metadata: Value         # metadata_protection_kind
    data: Value             # data_protection_kind


@dataclass(frozen=True)
class DomainRule:
    elem: Any
    domains: list[DomainSpan]
    allow_unauthenticated: Value
    join_ac: Value          # enable_join_access_control
    discovery_kind: Value
    liveliness_kind: Value
    rtps_kind: Value
    topic_rules: list[TopicRule]


@dataclass(frozen=True)
class Governance:
    rules: list[DomainRule]
    kind: DocumentKind = DocumentKind.GOVERNANCE


@dataclass(frozen=True)
class Criteria:
    """One <publish>, <subscribe> or <relay>. `partitions` None: no <partitions> element,
    which means the default (empty-named) partition only."""
    elem: Any
    action: str
    topics: list[Value]
    partitions: list[Value] | None
    data_tags: list[tuple[str, str]] | None


@dataclass(frozen=True)
class AccessRule:
    elem: Any
    verdict: str            # "allow" or "deny"
    domains: list[DomainSpan]
    criteria: list[Criteria]


@dataclass(frozen=True)
class Grant:
    elem: Any
    name: str | None
    subject: Value
    not_before: Value       # value: Instant
    not_after: Value
    rules: list[AccessRule]
    default: Value


@dataclass(frozen=True)
class Permissions:
    grants: list[Grant]
    kind: DocumentKind = DocumentKind.PERMISSIONS


Model = Governance | Permissions

# ------------------------------------------------------------------------- decoding


@cache
def _schema(kind: DocumentKind):
    import xmlschema  # slow to import: only the commands that need typed values load it
    return xmlschema.XMLSchema(str(Path(SCHEMAS_DIR) / SCHEMA_FILES[kind.value]))


@cache
def schema_type(kind: DocumentKind, path: str):
    """The XSD type (xmlschema's) of the element at `path` of `kind`'s schema."""
    decl = _schema(kind).find(path)
    if decl is None:  # a path this module spells wrong: a govkit bug, not a user error
        raise LookupError(f"no element {path} in the {kind.value} schema")
    return decl.type


@dataclass
class _Reader:
    kind: DocumentKind
    values: dict = field(default_factory=dict)
    _last: tuple = (None, {})   # (parent, {name: first child}) of the latest lookup

    def child(self, parent, name: str):
        """The first child element called `name`; a rule's children are looked up one
        after another, so the parent's are indexed once."""
        if self._last[0] is not parent:
            index: dict = {}
            for c in _children(parent, None):
                index.setdefault(local_name(c), c)
            self._last = (parent, index)
        return self._last[1].get(name)

    def value(self, parent, name: str, path: str) -> Value:
        elem = self.child(parent, name)
        return self.leaf(elem, path) if elem is not None else Value(None, None, None, False)

    def leaf(self, elem, path: str) -> Value:
        text = text_value(elem)
        key = (path, text)
        if key not in self.values:
            self.values[key] = self._decode(path, text)
        value, valid = self.values[key]
        return Value(elem, text, value, valid)

    def _decode(self, path: str, text: str) -> tuple[Any, bool]:
        table = leaf_types(self.kind)
        leaf = table.get(path) if table is not None else None
        read = leaf.read(text) if leaf is not None else None
        if read is not None:        # exactly what xmlschema would say (leaf_types)
            if leaf.base == "dateTime":
                return Instant.from_text(text), True
            return read
        from xmlschema import XMLSchemaValidationError
        xsd_type = schema_type(self.kind, path)
        try:
            value = xsd_type.text_decode(text, validation="strict")
        except (XMLSchemaValidationError, ValueError, ArithmeticError):
            if xsd_type.is_boolean() and text.strip().lower() in ("true", "false"):
                return text.strip().lower() == "true", False
            return None, False
        if xsd_type.is_datetime():   # xmlschema validated it; govkit's one reader reads it
            instant = Instant.from_text(text)
            return (instant, True) if instant is not None else (None, False)
        return value, True

    def domains(self, parent, base: str) -> list[DomainSpan]:
        box = _child(parent, "domains")
        spans: list[DomainSpan] = []
        for item in _children(box, None) if box is not None else ():
            if local_name(item) == "id":
                n = self.leaf(item, f"{base}/domains/id").value
                spans.append(DomainSpan(item, n, n))
            elif local_name(item) == "id_range":
                lo, hi = (self.value(item, b, f"{base}/domains/id_range/{b}")
                          for b in ("min", "max"))
                if lo.missing:   # <max> alone: 0..max
                    spans.append(DomainSpan(item, 0, hi.value))
                else:
                    spans.append(DomainSpan(item, lo.value, hi.value, open=hi.missing))
        return spans


def _children(parent, name: str | None) -> list:
    kids = [c for c in parent if isinstance(c.tag, str)]
    return kids if name is None else [c for c in kids if local_name(c) == name]


def _child(parent, name: str):
    found = _children(parent, name)
    return found[0] if found else None


# ------------------------------------------------------------------------- building

_G = "dds/domain_access_rules/domain_rule"
_T = f"{_G}/topic_access_rules/topic_rule"
_P = "dds/permissions/grant"


def _topic_rule(r: _Reader, elem) -> TopicRule:
    def v(name: str) -> Value:
        return r.value(elem, name, f"{_T}/{name}")
    return TopicRule(elem, v("topic_expression"), v("enable_discovery_protection"),
                     v("enable_liveliness_protection"), v("enable_read_access_control"),
                     v("enable_write_access_control"), v("metadata_protection_kind"),
                     v("data_protection_kind"))


def _governance(r: _Reader, root) -> Governance:
    rules = []
    for box in _children(root, "domain_access_rules"):
        for elem in _children(box, "domain_rule"):
            def v(name: str, elem=elem) -> Value:
                return r.value(elem, name, f"{_G}/{name}")
            topics = [_topic_rule(r, t) for box2 in _children(elem, "topic_access_rules")
                      for t in _children(box2, "topic_rule")]
            rules.append(DomainRule(
                elem, r.domains(elem, _G), v("allow_unauthenticated_participants"),
                v("enable_join_access_control"), v("discovery_protection_kind"),
                v("liveliness_protection_kind"), v("rtps_protection_kind"), topics))
    return Governance(rules)


def _criteria(r: _Reader, elem, base: str) -> Criteria:
    action = local_name(elem)
    path = f"{base}/{action}"

    def patterns(box: str, item: str) -> list[Value] | None:
        found = _child(elem, box)
        if found is None:
            return None
        return [r.leaf(x, f"{path}/{box}/{item}") for x in _children(found, item)]

    tags_box = _child(elem, "data_tags")
    topics = patterns("topics", "topic")
    if topics is None:   # DDS Security 1.0-beta: <topic> directly inside <publish>
        topics = [r.leaf(x, f"{path}/topics/topic") for x in _children(elem, "topic")]
    tags = None if tags_box is None else [
        (text_value(_child(t, "name")) if _child(t, "name") is not None else "",
         text_value(_child(t, "value")) if _child(t, "value") is not None else "")
        for t in _children(tags_box, "tag")]
    return Criteria(elem, action, topics, patterns("partitions", "partition"), tags)


def _grant(r: _Reader, elem) -> Grant:
    rules = []
    for rule in _children(elem, None):
        verdict = local_name(rule)
        if verdict not in ("allow_rule", "deny_rule"):
            continue
        base = f"{_P}/{verdict}"
        rules.append(AccessRule(rule, verdict.removesuffix("_rule"), r.domains(rule, base),
                                [_criteria(r, c, base) for c in _children(rule, None)
                                 if local_name(c) in ("publish", "subscribe", "relay")]))
    validity = _child(elem, "validity")

    def when(name: str) -> Value:
        if validity is None:
            return Value(None, None, None, False)
        return r.value(validity, name, f"{_P}/validity/{name}")
    return Grant(elem, elem.get("name"), r.value(elem, "subject_name", f"{_P}/subject_name"),
                 when("not_before"), when("not_after"), rules,
                 r.value(elem, "default", f"{_P}/default"))


def build_model(root, kind: DocumentKind) -> Model:
    """The model of a parsed document of a known kind (valid or not)."""
    r = _Reader(DocumentKind(kind))
    if r.kind is DocumentKind.GOVERNANCE:
        return _governance(r, root)
    # DDS Security 1.0-beta permissions have <permissions> as the root (no <dds>)
    boxes = [root] if local_name(root) == "permissions" else _children(root, "permissions")
    return Permissions([_grant(r, g) for box in boxes for g in _children(box, "grant")])


# ------------------------------------------------------------------------- settings

# The catalog's setting names (govkit.catalog.profiles: the XML element names) and where each lives
# in the model: on the domain_rule or on the topic_rule.
DOMAIN_SETTINGS = {
    "allow_unauthenticated_participants": "allow_unauthenticated",
    "enable_join_access_control": "join_ac",
    "discovery_protection_kind": "discovery_kind",
    "liveliness_protection_kind": "liveliness_kind",
    "rtps_protection_kind": "rtps_kind",
}
TOPIC_SETTINGS = {
    "topic_expression": "expression",
    "enable_discovery_protection": "discovery",
    "enable_liveliness_protection": "liveliness",
    "enable_read_access_control": "read_ac",
    "enable_write_access_control": "write_ac",
    "metadata_protection_kind": "metadata",
    "data_protection_kind": "data",
}


def setting_text(v: Value) -> str | None:
    """A value as the catalog writes it ('true', 'SIGN'); the text as written if the XSD
    does not accept it; None if the element is missing."""
    if v.missing:
        return None
    if isinstance(v.value, bool):
        return "true" if v.value else "false"
    return v.value if isinstance(v.value, str) else v.text.strip()


def rule_settings(d: DomainRule, t: TopicRule) -> dict[str, Value]:
    """Every catalog setting of one (domain_rule, topic_rule) pair, by element name."""
    return {**{k: getattr(d, a) for k, a in DOMAIN_SETTINGS.items()},
            **{k: getattr(t, a) for k, a in TOPIC_SETTINGS.items()}}
