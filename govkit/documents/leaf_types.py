"""The simple type of every leaf element of govkit's XSDs, compiled once per XSD and cached,
so that reading a document's values (govkit.documents.model) needs no xmlschema.

Importing xmlschema and building one schema costs about half a second of CPU, most of a
`govkit lint` of one file. What the model needs of the schema is small: for each element
path, the built-in type its simple type derives from (xs:boolean, xs:string, ...), the
enumeration its restrictions allow, and whether any other facet restricts it. That table
is made with xmlschema (`build_table`, the authority on what the XSD means) and kept in
the user's cache (govkit.common.cachefile: a digest-checked file, a miss on anything
wrong with it) under the SHA-256 of the XSD, so an edited XSD gets a new table.

`LeafType.read` decides only what it can decide exactly as xmlschema's ``text_decode``
would (a canonical boolean, ASCII digits, an enumeration member, any string, a plain
xs:dateTime): everything else, and every type with other facets, returns None and the
model asks xmlschema itself. tests/check/test_leaf_types.py holds the two to the same
answers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from govkit.common.cachefile import digest as sha256_hex
from govkit.common.cachefile import read_cached, write_cached
from govkit.common.findings import DocumentKind
from govkit.common.paths import SCHEMA_FILES, SCHEMAS_DIR

FORMAT = 1                     # of the cached table: bump when LeafType or the walk changes
CACHE_DIR = "xsd-leaf-types"   # under user_cache_dir()
BASES = ("boolean", "string", "nonNegativeInteger", "dateTime")   # the ones read here
_XS = "http://www.w3.org/2001/XMLSchema"
_ENUMERATION = f"{{{_XS}}}enumeration"
_MAX_DEPTH = 64                # element nesting walked (govkit's XSDs have no recursion)

# A plain xs:dateTime: four-digit year, at most microseconds, a zone or none; its fields'
# ranges are checked below. Anything else (spaces, a fifth year digit, 24:00:00) is left
# to xmlschema.
_DATETIME = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})"
                       r"(?:\.[0-9]{1,6})?(?:Z|[+-]([0-9]{2}):([0-9]{2}))?")
_DIGITS = re.compile(r"[0-9]{1,18}")
_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


@dataclass(frozen=True)
class LeafType:
    base: str                                   # the built-in type's local name
    enumeration: frozenset[str] | None = None   # what every restriction's enumeration allows
    plain: bool = True                          # no facet besides enumerations

    def read(self, text: str) -> tuple[object, bool] | None:
        """(value, valid) exactly as xmlschema decodes `text`, where that is certain; a
        dateTime's value is the text (the model reads it); None: ask xmlschema."""
        if not self.plain:
            return None
        if self.enumeration is not None:
            return (text, True) if self.base == "string" and text in self.enumeration else None
        if self.base == "string":
            return text, True
        if self.base == "boolean":
            if text in ("true", "1"):
                return True, True
            return (False, True) if text in ("false", "0") else None
        if self.base == "nonNegativeInteger":
            return (int(text), True) if _DIGITS.fullmatch(text) else None
        if self.base == "dateTime":
            return (text, True) if _plain_datetime(text) else None
        return None


def _plain_datetime(text: str) -> bool:
    m = _DATETIME.fullmatch(text)
    if m is None:
        return False
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    if not (1 <= year and 1 <= month <= 12 and 1 <= day <= _DAYS[month - 1]
            and hour <= 23 and minute <= 59 and second <= 59):
        return False
    if month == 2 and day == 29 and not (year % 4 == 0 and (year % 100 or year % 400 == 0)):
        return False
    if m[7] is not None and not (int(m[7]) <= 13 and int(m[8]) <= 59):
        return False
    return True


# ------------------------------------------------------------------ the table


def xsd_path(kind: DocumentKind) -> Path:
    return Path(SCHEMAS_DIR) / SCHEMA_FILES[DocumentKind(kind).value]


def build_table(kind: DocumentKind) -> dict[str, LeafType] | None:
    """Every leaf element path of `kind`'s XSD and its type, as xmlschema reads the XSD;
    None if the XSD pulls in other schema files (the cache key covers one file only)."""
    import xmlschema  # slow to import: only when the cached table is missing or stale
    schema = xmlschema.XMLSchema(str(xsd_path(kind)))
    if schema.includes or schema.imports:
        return None
    table: dict[str, LeafType] = {}

    def walk(element, path: str, depth: int) -> None:
        xsd_type = element.type
        if xsd_type.is_simple():
            leaf = _leaf_type(xsd_type)
            if table.get(path, leaf) != leaf:   # one path, two types: let xmlschema decide
                leaf = LeafType(leaf.base, None, plain=False)
            table[path] = leaf
            return
        content = getattr(xsd_type, "content", None)
        if depth >= _MAX_DEPTH or content is None or not hasattr(content, "iter_elements"):
            return
        for child in content.iter_elements():
            walk(child, f"{path}/{child.local_name}", depth + 1)

    for element in schema.elements.values():
        walk(element, element.local_name, 0)
    return table


def _leaf_type(xsd_type) -> LeafType:
    enumeration: frozenset[str] | None = None
    plain = True
    while xsd_type is not None and xsd_type.target_namespace != _XS:
        facets = getattr(xsd_type, "facets", None)
        if facets is None or not xsd_type.is_atomic():   # a list, a union: not read here
            return LeafType("", None, plain=False)
        for name, facet in facets.items():
            if name == _ENUMERATION and facet is not None:
                allowed = frozenset(str(v) for v in xsd_type.enumeration)
                enumeration = allowed if enumeration is None else enumeration & allowed
            else:            # a pattern, a length, a bound: xmlschema checks it
                plain = False
        xsd_type = getattr(xsd_type, "base_type", None)
    base = xsd_type.local_name if xsd_type is not None else ""
    return LeafType(base, enumeration, plain and base in BASES)


def table_json(kind: DocumentKind, digest: str, table: dict[str, LeafType]) -> bytes:
    return json.dumps({
        "format": FORMAT, "kind": DocumentKind(kind).value, "xsd_sha256": digest,
        "types": {path: [t.base, sorted(t.enumeration) if t.enumeration is not None
                         else None, t.plain] for path, t in sorted(table.items())},
    }, sort_keys=True).encode()


def table_from_json(data: bytes, kind: DocumentKind, digest: str
                    ) -> dict[str, LeafType] | None:
    """The table in `data` if it is one for this kind and XSD, in this format; else None."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not (isinstance(doc, dict) and doc.get("format") == FORMAT
            and doc.get("kind") == DocumentKind(kind).value
            and doc.get("xsd_sha256") == digest and isinstance(doc.get("types"), dict)):
        return None
    table: dict[str, LeafType] = {}
    for path, entry in doc["types"].items():
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str)
                and isinstance(entry[2], bool)
                and (entry[1] is None or (isinstance(entry[1], list)
                                          and all(isinstance(v, str) for v in entry[1])))):
            return None
        if entry[2] and entry[0] not in BASES:
            return None
        table[path] = LeafType(entry[0], None if entry[1] is None else frozenset(entry[1]),
                               entry[2])
    return table


def cache_name(kind: DocumentKind, digest: str) -> str:
    return f"{CACHE_DIR}/{DocumentKind(kind).value}-{digest[:32]}.json"


@cache
def leaf_types(kind: DocumentKind) -> dict[str, LeafType] | None:
    """The table of `kind`'s XSD: from the user's cache, else built (and cached). None if
    it cannot be had (the XSD unreadable, or not one file): the model asks xmlschema."""
    try:
        xsd = xsd_path(kind).read_bytes()
    except OSError:
        return None
    digest = sha256_hex(xsd)
    name = cache_name(kind, digest)
    cached = read_cached(name)
    if cached is not None:
        table = table_from_json(cached, kind, digest)
        if table is not None:
            return table
    try:
        table = build_table(kind)
    except Exception:   # noqa: BLE001 - a broken XSD: the model's own xmlschema call says why
        return None
    if table is not None:
        write_cached(name, table_json(kind, digest, table))
    return table
