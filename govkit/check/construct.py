"""Validation by construction: a permissions shape proven valid once, each document's values
checked where they can change the verdict.

A document of a shape (govkit.documents.compiled) is the shape's constant parts with its
values escaped between them. Whether `validate` accepts it depends on the constant parts,
which `prove` checks once, and on the values only through:

* well-formedness: an escaped value has no markup, but a character XML forbids (controls,
  surrogates, U+FFFE/FFFF) or '--' in a comment breaks the document;
* its XSD simple type where the value is the text of an element or an attribute: xs:string
  (subject_name, grant/@name; topic and partition are NamePattern, xs:string without a
  facet) takes any text, xs:dateTime (not_before, not_after) is checked here;
* the lint rules `validate` runs that read a value: GK200 (not_before before not_after);
  GK201 compares grant names (one grant per document: never) and GK010/GK011 read the
  domains (constant);
* the size limits: the document's length (the element counts are the shape's).

`prove` renders the shape with sample values and runs the full validation on it; it finds
where each value sits by parsing the shape with markers as values, and refuses a shape
with a value anywhere else. `ProvenShape.admits` checks the rest per document. Anything
not admitted goes to the full path, which gives the verdict; values are admitted only
where that verdict is sure to be "valid" (stricter than needed: no control characters
even where XML allows tab or line ends, no line longer than OpenSSL reads in one piece, so
the signed text is the document with CRLF line ends). tests/properties/test_construct.py
checks it on thousands of random and hostile participants.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import lru_cache

from lxml import etree

from govkit.check.validate import portable_findings
from govkit.common.findings import DocumentKind
from govkit.common.limits import MAX_DOCUMENT_BYTES
from govkit.documents import compiled
from govkit.documents.parse import safe_parser
from govkit.documents.render import PermissionsDocument

# The longest line OpenSSL reads back in one piece (1023 bytes with its LF, the CR
# counted): longer lines are signed piece by piece, which the fast path does not do.
LINE_ROOM = 1022
MAX_VALUE = 1000   # characters; a longer value goes the full path
# Not an XML 1.0 Char, or a control character XML allows (tab, LF, CR): refused.
_NOT_PLAIN = re.compile("[^\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# xs:dateTime as govkit writes it (whole seconds, UTC): the lexical order is then the order
# in time, the comparison GK200 makes.
_DATETIME = re.compile(r"([1-9][0-9]{3})-([0-9]{2})-([0-9]{2})T([01][0-9]|2[0-3]):"
                       r"[0-5][0-9]:[0-5][0-9]Z")
_META = re.compile("[&<>\"']")   # what escaping changes
_STRING_TEXT = ("subject_name", "topic", "partition")
_DATETIME_TEXT = ("not_before", "not_after")
_SAMPLE_TIMES = {compiled.NOT_BEFORE: "2000-01-01T00:00:00Z",
                 compiled.NOT_AFTER: "2100-01-01T00:00:00Z"}


@lru_cache(maxsize=1024)
def _is_datetime(text: str) -> bool:
    """An xs:dateTime libxml2 accepts (a real day of a real month), in govkit's form."""
    m = _DATETIME.fullmatch(text)
    if m is None:
        return False
    try:
        dt.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class ProvenShape:
    """A shape whose documents are valid whenever `admits` their values."""
    shape: compiled.Shape
    kinds: tuple[frozenset, ...]          # per value: where it sits (string/comment/datetime)
    comments: tuple[int, ...]             # values inside a comment
    lines: tuple[tuple[tuple[int, ...], int], ...]   # (values on a line, bytes left there)
    least_room: int                       # the least of those
    one_per_line: bool                    # no line holds two values
    kind: DocumentKind = DocumentKind.PERMISSIONS

    def admits(self, values: tuple[str, ...]) -> bool:
        return self._admits(values, " ".join(values))

    def _admits(self, values: tuple[str, ...], joined: str) -> bool:
        """`joined`: the values joined by spaces (one scan for all of them)."""
        if len(values) != len(self.kinds):
            return False
        longest = max(map(len, values))
        if longest > MAX_VALUE or _NOT_PLAIN.search(joined):
            return False
        for i in self.comments:
            v = values[i]
            if "--" in v or v[:1] == "-" or v[-1:] == "-":
                return False
        nb, na = values[compiled.NOT_BEFORE], values[compiled.NOT_AFTER]
        if not (nb < na and _is_datetime(nb) and _is_datetime(na)):
            return False
        if self.one_per_line and longest <= self.least_room and joined.isascii() and \
                _META.search(joined) is None:
            return True   # escaped as they are, one byte a character, one value a line
        for on_line, room in self.lines:
            if sum(len(compiled.escape(values[i]).encode()) for i in on_line) > room:
                return False
        return True

    def render(self, values: tuple[str, ...]) -> bytes | None:
        """The document with these values if they are admitted (None: the full path)."""
        joined = " ".join(values)
        if not self._admits(values, joined):
            return None
        data = self.shape.render(values, plain=_META.search(joined) is None)
        # CRLF line ends (signing) add a byte per line: refused as the full path would
        if len(data) + data.count(b"\n") > MAX_DOCUMENT_BYTES:
            return None
        return data


def _contexts(root) -> dict[str, set[str]] | None:
    """Where each marker sits in the marked shape: {marker text: kinds}; None if one sits
    where a value cannot be proven (anything but the places in the module docstring)."""
    found: dict[str, set[str]] = {}
    marker = re.compile("gk[0-9a-f]+v[0-9]+x")

    def note(text: str | None, kind: str | None, whole: bool = False) -> bool:
        for m in marker.findall(text or ""):
            if kind is None or (kind.startswith("datetime") and not (whole and m == text)):
                return False
            found.setdefault(m, set()).add(kind)
        return True

    nodes = [*root.itersiblings(preceding=True), *root.iter(), *root.itersiblings()]
    for elem in nodes:
        if isinstance(elem, etree._Comment):
            ok = note(elem.text, "comment")
        elif not isinstance(elem.tag, str):
            ok = not marker.search(elem.text or "")
        else:
            kind = ("string" if elem.tag in _STRING_TEXT else
                    f"datetime:{elem.tag}" if elem.tag in _DATETIME_TEXT else None)
            ok = note(elem.text, kind, whole=True) and all(
                note(v, "string" if (elem.tag, k) == ("grant", "name") else None)
                for k, v in elem.attrib.items())
        if not ok or not note(elem.tail, None):
            return None
    return found


@lru_cache(maxsize=4096)   # a participants file's grants make a few hundred at most
def prove(structure: compiled.Structure) -> ProvenShape | None:
    """The structure's shape, proven (module docstring); None if it cannot be."""
    shape = compiled.shape(structure)
    n = structure.size
    marks = tuple(f"gk{'0' * 12}v{i}x" for i in range(n))
    marked = shape.render(marks)
    try:
        root = etree.fromstring(marked, safe_parser())
    except etree.XMLSyntaxError:
        return None
    contexts = _contexts(root)
    if contexts is None or len(list(root.iter("grant"))) != 1 or \
            len(list(root.iter("validity"))) != 1:
        return None
    kinds = tuple(frozenset(contexts.get(m, ())) for m in marks)
    dates = {i for i, k in enumerate(kinds) if any(x.startswith("datetime") for x in k)}
    if dates != set(_SAMPLE_TIMES) or \
            kinds[compiled.NOT_BEFORE] != {"datetime:not_before"} or \
            kinds[compiled.NOT_AFTER] != {"datetime:not_after"}:
        return None
    sample = tuple(_SAMPLE_TIMES.get(i) or ("c" if "comment" in k else "s")
                   for i, k in enumerate(kinds))
    data = shape.render(sample)
    if data != compiled.render_jinja(structure, sample) or \
            portable_findings(data, "<permissions template>", DocumentKind.PERMISSIONS):
        return None
    lines = []
    for line in marked.split(b"\n"):
        on_line = tuple(int(m[2 + 12 + 1:-1]) for m in
                        re.findall(rb"gk0{12}v[0-9]+x", line))
        if on_line:
            constant = len(re.sub(rb"gk0{12}v[0-9]+x", b"", line)) + 1   # and its CR
            lines.append((on_line, LINE_ROOM - constant))
    return ProvenShape(shape, kinds, tuple(i for i, k in enumerate(kinds) if "comment" in k),
                       tuple(lines), min((room for _, room in lines), default=LINE_ROOM),
                       all(len(on_line) == 1 for on_line, _ in lines))


def render_proven(doc: PermissionsDocument) -> bytes | None:
    """`doc.render()`, valid by construction; None where that is not proven (then render
    and validate it in full)."""
    structure, values = compiled.values_of(doc)
    proven = prove(structure)
    return None if proven is None else proven.render(values)


class Recognizer:
    """Recognizes documents of proven shapes (for `verify`): a shape is learned from a
    document that passed the full check, and later documents of it need only their values
    checked."""

    def __init__(self, limit: int = 64):
        self.limit = limit
        self.shapes: dict[tuple[int, int], list[ProvenShape]] = {}
        self.count = 0

    @staticmethod
    def _key(data: bytes) -> tuple[int, int]:
        return data.count(b"<topic>"), data.count(b"<partition>")

    def recognize(self, data: bytes) -> DocumentKind | None:
        """The kind of `data` (a document with LF line ends) if it is a document of a
        learned shape whose values are admitted: valid without a full check."""
        found = self.recognize_values(data)
        return found[0] if found else None

    def recognize_values(self, data: bytes) -> tuple[DocumentKind, tuple[str, ...]] | None:
        """`recognize`, with the document's values (compiled.values_of's order: the one
        grant's name and subject are values[PARTICIPANT] and values[SUBJECT])."""
        for proven in self.shapes.get(self._key(data), ()):
            values = proven.shape.parse(data)   # `data` is the shape's with these values
            if values is not None:
                admitted = proven.admits(values) and \
                    len(data) + data.count(b"\n") <= MAX_DOCUMENT_BYTES
                return (proven.kind, values) if admitted else None
        return None

    def learn(self, data: bytes) -> None:
        """Remember the shape of `data` (which passed the full check), if it has one."""
        if self.count >= self.limit:
            return
        try:
            structure = compiled.structure_from(etree.fromstring(data, safe_parser()))
        except (etree.XMLSyntaxError, ValueError, TypeError):
            return
        proven = prove(structure) if structure is not None else None
        if proven is None or proven.shape.parse(data) is None:
            return
        same = self.shapes.setdefault(self._key(data), [])
        if proven not in same:
            same.append(proven)
            self.count += 1
