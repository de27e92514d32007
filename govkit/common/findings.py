"""The result types every validation stage shares: :class:`Finding` (one problem at one
position), :class:`DocumentKind`, :class:`DocumentError`, and :func:`quote_value` for quoting
document values inside messages.

Kept apart from the stages (``govkit.documents.parse``, ``govkit.check.validate``,
``govkit.check.lint``) so each
of them can import these without importing the others.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import cache


@dataclass(frozen=True)
class Finding:
    """One problem in one document."""

    file: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{one_line(self.file)}:{self.line}:{self.column}: {self.message}"

    def to_json(self) -> dict:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "message": self.message,
        }


class DocumentKind(StrEnum):  # a str and an Enum: DocumentKind('governance'), kind.value
    GOVERNANCE = "governance"
    PERMISSIONS = "permissions"
    # ROS 2: an sros2 policy and govkit's protection sidecar (lint reads them; they are no
    # DDS Security documents)
    POLICY = "policy"
    PROTECTION = "protection"


class DocumentError(Exception):
    """The input could not be turned into an XML tree (malformed, hostile, too large, ...)."""

    def __init__(self, findings: list[Finding]):
        self.findings = list(findings)
        super().__init__("; ".join(str(f) for f in self.findings) or "invalid document")


NAME_CHARS = r"[A-Za-z0-9_.\-]"


def quote_input(value: str, allowed: str = NAME_CHARS) -> str:
    """A value read from an input file (a participants file), for an error message: quoted
    when it is short and made of `allowed` characters only (a regular expression character
    class), else described by its length and its first other character. A file that is a
    link to a secret must not get its first line printed (issue 23): a password hash or
    'root:x:0:0' is never a valid value anyway."""
    ok = re.compile(allowed)
    bad = next((i for i, c in enumerate(value) if not ok.fullmatch(c)), None)
    if bad is None and 0 < len(value) <= 40:
        return f"'{value}'"
    if bad is None:
        return f"({len(value)} characters)"
    shown = value[bad] if value[bad].isprintable() else \
        value[bad].encode("unicode_escape").decode("ascii")
    return f"({len(value)} characters, {shown!r} at character {bad + 1})"


# Characters that act instead of being seen, the one table for the terminal and the report
# pages (issue 23, items 4 and 5): the C0 controls, DEL and the C1 controls (ESC starts a
# sequence that can clear the screen, retitle the window or move the cursor; CR overwrites a
# line), and the Unicode bidi overrides, isolates and marks, which reverse how the text
# after them reads ('Trojan source': a profile 'x\u202eengis_sptr' reads as rtps_sign).
UNSEEN = "\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"


@cache
def _unseen_except(keep: str) -> re.Pattern:
    return re.compile(f"(?![{re.escape(keep)}])[{UNSEEN}]" if keep else f"[{UNSEEN}]")


def shown_as_escapes(text: str, keep: str = "\t\n") -> str:
    """`text` with every UNSEEN character but those in `keep` as \\xNN or \\uNNNN: the
    characters it is made of, never obeyed."""
    def escape(m: re.Match) -> str:
        c = ord(m.group())
        return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"
    return _unseen_except(keep).sub(escape, text)


def without_surrogates(obj):
    """`obj` (strings, lists, dicts of them) fit for JSON that strict readers accept: a file
    name that is not UTF-8 reaches Python as lone surrogates (surrogateescape), which
    json.dumps writes as "\\udcff", an escape a UTF-8 JSON reader refuses. Each such byte is
    written as the text \\xff instead (as the terminal shows that name), any other lone
    surrogate as \\udXXX."""
    if isinstance(obj, str):
        return _SURROGATE.sub(_surrogate_text, obj) if _SURROGATE.search(obj) else obj
    if isinstance(obj, dict):
        return {without_surrogates(k): without_surrogates(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [without_surrogates(v) for v in obj]
    return obj


_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_text(m: re.Match) -> str:
    c = ord(m.group())
    return f"\\x{c - 0xdc00:02x}" if 0xdc80 <= c <= 0xdcff else f"\\u{c:04x}"


def printable(text: str) -> str:
    """`text` as a terminal should show it: every UNSEEN character but tab and newline as an
    escape, so a file name or a value holding an escape sequence or a bidi override is
    printed as the characters it is made of, never obeyed. Lines stay lines."""
    return shown_as_escapes(text)


def one_line(text: object) -> str:
    """A file name (or any one-line value) as a message shows it: `printable`, and a
    newline or tab in it as \\n, \\t, so a name holding a newline cannot split its line in
    two or forge a second one ('x.xml\\nfake.xml: valid')."""
    return printable(str(text)).replace("\n", "\\n").replace("\t", "\\t")


def quote_value(value: str, limit: int = 60) -> str:
    """Quote a document value for a message: visible whitespace, bounded length."""
    if len(value) > limit:
        value = value[:limit] + "..."
    escaped = value.encode("unicode_escape").decode("ascii") if not value.isprintable() \
        else value
    return f"'{escaped}'"
