"""Permissions documents from a byte template compiled once per *shape*.

A fleet's permissions documents differ only in a few values: the participant's name, its
certificate's subject and validity, its topics and partitions. What surrounds them depends
only on the shape: the domains, which actions carry how many topics, how many partitions.
So the Jinja template is rendered once per shape with a unique marker in every value
(`shape`); the text between the markers is the shape's constant part, and a document of
that shape is those parts joined with its values escaped exactly as Jinja's autoescape
escapes them (markupsafe: & < > " '), by one `str.format`.

`Shape.parse` goes the other way for `verify`: a pattern built from the constant parts
finds the values, and the document is taken for that shape's only if rendering those
values gives back its very bytes.

Nothing here judges a value: govkit.check.construct proves a shape valid once and checks
each document's values (what the XSD and the lint rules look at), and whatever it cannot
prove is rendered and validated in full by `render.PermissionsDocument`.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from functools import lru_cache

from govkit import __version__
from govkit.common.templating import get_template
from govkit.documents.render import DomainSet, PermissionsDocument

# What each value of a document is, in the order of `values_of` (topics, then partitions,
# follow the five named ones).
PARTICIPANT, PURPOSE, SUBJECT, NOT_BEFORE, NOT_AFTER = range(5)
NAMED = ("participant", "purpose", "subject", "not_before", "not_after")

# Where an escaped value (what `escape` makes of a value without a line end) may be in a
# document: `parse` only finds values with it (one character class: fast), rendering the
# values found decides.
_ESCAPED = r"[^<>\"'\n]*"


def escape(value: str) -> str:
    """What Jinja's autoescape writes for `value` (markupsafe.escape, byte for byte)."""
    return (value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&#34;").replace("'", "&#39;"))


def unescape(text: str) -> str:
    return (text.replace("&#39;", "'").replace("&#34;", '"').replace("&gt;", ">")
            .replace("&lt;", "<").replace("&amp;", "&"))


@dataclass(frozen=True)
class Structure:
    """What the constant parts of a permissions document depend on."""
    domains: DomainSet
    actions: tuple[tuple[str, int], ...]   # (publish | subscribe, how many topics)
    partitions: int                        # how many partitions (each action lists them)

    @property
    def size(self) -> int:
        """How many values a document of this structure has."""
        return len(NAMED) + sum(n for _, n in self.actions) + self.partitions


def values_of(doc: PermissionsDocument) -> tuple[Structure, tuple[str, ...]]:
    """The structure of `doc` and its values: the five NAMED, its topics (in document
    order), its partitions."""
    actions = doc.actions
    partitions = doc.partitions
    topics = [t for _, ts in actions for t in ts]
    return (Structure(doc.domains, tuple((a, len(ts)) for a, ts in actions), len(partitions)),
            (doc.participant, doc.purpose, doc.subject_name, doc.not_before, doc.not_after,
             *topics, *partitions))


@dataclass(frozen=True)
class _Values:
    """What permissions.xml.j2 reads from a document (`doc.…`), given directly."""
    participant: str
    purpose: str
    subject_name: str
    not_before: str
    not_after: str
    actions: list
    partitions: tuple


def render_jinja(structure: Structure, values: tuple[str, ...]) -> bytes:
    """The Jinja template rendered with these values (what PermissionsDocument.render
    writes for a document of this structure with these values)."""
    named, rest = values[:len(NAMED)], values[len(NAMED):]
    actions, at = [], 0
    for action, n in structure.actions:
        actions.append((action, tuple(rest[at:at + n])))
        at += n
    doc = _Values(*named, actions, tuple(rest[at:]))
    return get_template("permissions.xml.j2").render(
        doc=doc, domains=structure.domains, version=__version__).encode()


@dataclass(frozen=True)
class Shape:
    """The constant parts of every permissions document of one structure, and where each
    value goes (`slots[i]`: the value between parts[i] and parts[i + 1])."""
    structure: Structure
    parts: tuple[str, ...]
    slots: tuple[int, ...]
    _format: str = field(repr=False, compare=False, default="")
    _pattern: re.Pattern | None = field(repr=False, compare=False, default=None)

    def render(self, values: tuple[str, ...], plain: bool = False) -> bytes:
        """The document with these values (escaped as Jinja escapes them; `plain`: the
        caller knows none of them has a character escaping changes)."""
        return self._format.format(*(values if plain else map(escape, values))).encode()

    def parse(self, data: bytes) -> tuple[str, ...] | None:
        """The values of `data` if it is exactly a document of this shape, else None."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        found = self._pattern.fullmatch(text)
        if found is None:
            return None
        present = sorted(set(self.slots))
        got = found.group(*(f"v{i}" for i in present)) if len(present) > 1 else \
            (found.group(f"v{present[0]}"),) if present else ()
        values = [""] * self.structure.size
        plain = "&" not in text   # then nothing was escaped: the values are as written
        for i, v in zip(present, got, strict=True):
            values[i] = v if plain else unescape(v)
        values = tuple(values)
        if plain:   # the text is the parts and these very values: rendering gives it back
            return values
        return values if self.render(values) == data else None


@lru_cache(maxsize=4096)
def shape(structure: Structure) -> Shape:
    """The shape of `structure`: the template rendered once with markers as values."""
    nonce = secrets.token_hex(6)
    marks = tuple(f"gk{nonce}v{i}x" for i in range(structure.size))
    text = render_jinja(structure, marks).decode()
    pieces = re.split(f"gk{nonce}v([0-9]+)x", text)
    parts, slots = tuple(pieces[0::2]), tuple(int(i) for i in pieces[1::2])
    fmt = "".join(p.replace("{", "{{").replace("}", "}}") + (f"{{{slots[k]}}}"
                  if k < len(slots) else "") for k, p in enumerate(parts))
    seen: set[int] = set()
    pattern = []
    for k, p in enumerate(parts):
        pattern.append(re.escape(p))
        if k < len(slots):
            i = slots[k]
            pattern.append(f"(?P=v{i})" if i in seen else f"(?P<v{i}>{_ESCAPED})")
            seen.add(i)
    return Shape(structure, parts, slots, fmt, re.compile("".join(pattern)))


def structure_from(root) -> Structure | None:
    """The structure a permissions document (its parsed root) would have if govkit wrote
    it; None where it could not be one of govkit's (`Shape.parse` then decides whether it
    is, byte for byte)."""
    rules = root.findall("permissions/grant/allow_rule")
    if len(rules) != 1:
        return None
    ranges, actions, partitions = [], [], set()
    for child in rules[0]:
        if child.tag == "domains":
            for item in child:
                if item.tag == "id":
                    ranges.append((int(item.text), int(item.text)))
                elif item.tag == "id_range":
                    ranges.append((int(item.findtext("min")), int(item.findtext("max"))))
        elif child.tag in ("publish", "subscribe"):
            actions.append((child.tag, len(child.findall("topics/topic"))))
            partitions.add(len(child.findall("partitions/partition")))
    if not ranges or len(partitions) > 1:
        return None
    return Structure(DomainSet(tuple(ranges)), tuple(actions), partitions.pop() if partitions
                     else 0)
