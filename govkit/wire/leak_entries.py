"""What an eavesdropper learns, as entries: the kinds (one table), a `Sample` (bytes read
off the wire, each byte traceable to the frame that carried it) and `Leaks`, the collector
that merges what many frames repeat into one entry per thing learned.

An entry is what a passive reader of the capture learns, in words (`text`), with `evidence`:
bytes exactly as one frame carries them (`evidence_frame`), escaped (`escape`) so that
`unescape(evidence)` occurs byte for byte in the capture; `frames`: how many frames carry
it; `first_frame`: the first. Frame numbers are the capture's, 1-based, as tshark and
Wireshark number them. `field` names the Wireshark display field that decodes the same
bytes, where there is one (tshark cross-checks govkit's reading there).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from govkit.wire.cdr import Span

MAX_EVIDENCE = 96            # bytes of evidence kept per entry: enough to recognise it
MAX_ENTRIES = 2000           # per kind: a hostile capture naming a million topics stops here
MAX_TRACKED_FRAMES = 1 << 16  # per entry, as a set; beyond, frames arrive in order


@dataclass(frozen=True)
class Kind:
    name: str
    title: str               # the report's column
    what: str                # what an entry of it means


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("certificate", "identities",
         "identity certificates (subject, issuer, serial, validity) from the authentication "
         "handshake, identity tokens and the handshake's algorithms"),
    Kind("permissions", "permissions",
         "permissions documents (every grant's subject, the topics it may publish and "
         "subscribe to, its validity) and permissions tokens"),
    Kind("governance", "governance",
         "the protection settings a participant or endpoint announces, and the domain id"),
    Kind("participant", "participants",
         "what participants say about themselves: user data, properties (host, process), "
         "entity names, vendor-specific text"),
    Kind("addressing", "addresses",
         "GUID prefixes, vendors, and locators (addresses and ports)"),
    Kind("topic", "topics",
         "topic and type names (and partitions) in discovery"),
    Kind("payload", "data",
         "user payload bytes in clear"),
    Kind("unprotected", "sent in clear",
         "messages sent without protection: before protection started, and what the "
         "runtime always sends in clear"),
    Kind("traffic", "sizes and timing",
         "what shows whatever the protection: message sizes and timing, the number of "
         "participants and endpoints"),
)}


def escape(data: bytes) -> str:
    """Bytes as text: printable ASCII as is (backslash doubled), anything else \\xNN."""
    return "".join(chr(b) if 0x20 <= b < 0x7F and b != 0x5C else "\\\\" if b == 0x5C
                   else f"\\x{b:02x}" for b in data)


def unescape(text: str) -> bytes:
    """The bytes `escape` shows as `text` (ValueError for anything it never writes)."""
    out, i, n = bytearray(), 0, len(text)
    while i < n:
        c = text[i]
        if c != "\\":
            out.append(ord(c))
            i += 1
        elif text[i + 1:i + 2] == "\\":
            out.append(0x5C)
            i += 2
        elif text[i + 1:i + 2] == "x" and i + 4 <= n:
            out.append(int(text[i + 2:i + 4], 16))
            i += 4
        else:
            raise ValueError(f"not an escape at character {i}: {text[i:i + 4]!r}")
    return bytes(out)


@dataclass
class Sample:
    """Serialized bytes as read: `data` with `pieces`, each (start, length, frame): which
    frame carried which bytes (one piece for a whole datagram; one per fragment for a
    sample reassembled from DATA_FRAGs)."""
    data: bytes
    pieces: list[tuple[int, int, int]]

    @classmethod
    def of(cls, data: bytes, frame: int) -> Sample:
        return cls(data, [(0, len(data), frame)])

    def frames(self, span: Span) -> list[int]:
        return sorted({f for s, n, f in self.pieces if s < span.end and span.offset < s + n}
                      or {self.pieces[0][2]})

    def evidence(self, span: Span, limit: int = MAX_EVIDENCE) -> tuple[bytes, int]:
        """The bytes of `span` as one frame carries them (at most `limit`): from the first
        frame holding at least 8 of them (or all), else from the one holding the most."""
        best: tuple[int, int, int] | None = None
        want = min(span.length, 8)
        for s, n, f in self.pieces:
            a, b = max(s, span.offset), min(s + n, span.end)
            if b <= a:
                continue
            if b - a >= want:
                return self.data[a:min(b, a + limit)], f
            if best is None or b - a > best[1] - best[0]:
                best = (a, b, f)
        if best is None:                       # an empty span: where it would be
            return b"", self.pieces[0][2]
        return self.data[best[0]:min(best[1], best[0] + limit)], best[2]


@dataclass
class Entry:
    kind: str
    about: str               # what sort of thing, within its kind: "grant", "locator", ...
    value: str
    text: str
    message: str
    field: str | None
    evidence: bytes
    evidence_frame: int
    first_frame: int
    frames: set[int] = field(default_factory=set)
    count: int = 0
    last: int = 0

    def seen(self, frames: Iterable[int]) -> None:
        for f in frames:
            if f in self.frames:
                continue
            if len(self.frames) < MAX_TRACKED_FRAMES:
                self.frames.add(f)
            elif f <= self.last:      # past the tracked set: frames arrive in order
                continue
            self.count += 1
            self.last = max(self.last, f)
            self.first_frame = min(self.first_frame, f)

    def to_json(self) -> dict:
        return {"kind": self.kind, "about": self.about, "value": self.value, "text": self.text,
                "message": self.message, "evidence": escape(self.evidence),
                "evidence_frame": self.evidence_frame, "frames": self.count,
                "first_frame": self.first_frame, "field": self.field}


class Leaks:
    """Entries by (kind, value): the first sighting writes the text and the evidence, every
    sighting adds its frames."""

    def __init__(self):
        self.entries: dict[tuple[str, str], Entry] = {}
        self.per_kind: dict[str, int] = dict.fromkeys(KINDS, 0)
        self.dropped: dict[str, int] = dict.fromkeys(KINDS, 0)

    def add(self, kind: str, about: str, value: str, text: str, message: str,
            evidence: tuple[bytes, int], frames: Iterable[int], field: str | None = None
            ) -> None:
        key = (kind, value)
        entry = self.entries.get(key)
        if entry is None:
            if self.per_kind[kind] >= MAX_ENTRIES:
                self.dropped[kind] += 1
                return
            self.per_kind[kind] += 1
            data, where = evidence
            entry = self.entries[key] = Entry(kind, about, value, text, message, field, data,
                                              where, where)
        entry.seen(frames)

    def has(self, kind: str, value: str) -> bool:
        return (kind, value) in self.entries

    def to_json(self) -> list[dict]:
        order = {k: i for i, k in enumerate(KINDS)}
        return [e.to_json() for e in sorted(self.entries.values(),
                                            key=lambda e: (order[e.kind], e.first_frame,
                                                           e.value))]
