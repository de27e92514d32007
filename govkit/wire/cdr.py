"""Read the CDR an eavesdropper sees: RTPS parameter lists (discovery data), and the DDS
Security DataHolder (tokens and handshake messages), from untrusted bytes.

`Cdr` reads XCDR1 (OMG CDR, as DDS Security 1.1's IDL requires for its types) over one
buffer, aligned from the start of the serialized data, in either byte order; every read is
checked against the end first, and a sequence's element count is checked against what is
left before anything is allocated (a count of 4 billion in 20 bytes is refused at once), so
reading costs time linear in the bytes read. `parameters` walks a ParameterList (RTPS 2.x
9.4.2.11): each parameter advances by at least its 4-byte header, so a list of a million
parameters costs a million steps and no more. Everything raises `CdrError`, whose text says
where the bytes stopped making sense.

Values are returned with their offsets (`Span`), so a reader can show the very bytes it read.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import NamedTuple

PID_PAD, PID_SENTINEL = 0x0000, 0x0001
MAX_STRING = 1 << 20           # a DDS name or property never needs a megabyte


class CdrError(ValueError):
    """Bytes that stop being CDR; the text says where."""


class Span(NamedTuple):
    """`length` bytes at `offset` of the buffer they were read from."""
    offset: int
    length: int

    @property
    def end(self) -> int:
        return self.offset + self.length


class Cdr:
    """A bounded XCDR1 reader of buf[start:end], aligned from `start`."""

    __slots__ = ("buf", "pos", "end", "origin", "order")

    def __init__(self, buf: bytes, start: int, end: int, little: bool):
        if not 0 <= start <= end <= len(buf):
            raise CdrError(f"bytes {start}..{end} are outside the {len(buf)} read")
        self.buf, self.pos, self.end, self.origin = buf, start, end, start
        self.order = "<" if little else ">"

    @property
    def left(self) -> int:
        return self.end - self.pos

    def align(self, n: int) -> None:
        self.pos += -(self.pos - self.origin) % n
        if self.pos > self.end:
            raise CdrError(f"padding runs past the end at byte {self.end}")

    def _take(self, n: int, what: str) -> int:
        if n < 0 or self.pos + n > self.end:
            raise CdrError(f"{what} at byte {self.pos} needs {n} bytes, only {self.left} left")
        at = self.pos
        self.pos += n
        return at

    def u32(self, what: str = "a 4-byte integer") -> int:
        self.align(4)
        return struct.unpack_from(self.order + "I", self.buf, self._take(4, what))[0]

    def octets(self, n: int, what: str = "octets") -> Span:
        return Span(self._take(n, what), n)

    def count(self, least: int, what: str) -> int:
        """A sequence's length, refused when its elements (at least `least` bytes each)
        cannot fit in what is left."""
        n = self.u32(f"the length of {what}")
        if n * least > self.left:
            raise CdrError(f"{what} at byte {self.pos - 4} claims {n:,} elements of at least "
                           f"{least} bytes, only {self.left:,} bytes left")
        return n

    def string(self, what: str = "a string") -> tuple[str, Span]:
        """A CDR string: its text (NUL and anything not UTF-8 shown as escapes) and the span
        of its characters without the terminating NUL."""
        n = self.u32(f"the length of {what}")
        if n > MAX_STRING:
            raise CdrError(f"{what} at byte {self.pos - 4} claims {n:,} bytes")
        span = self.octets(n, what)
        raw = self.buf[span.offset:span.end]
        if raw.endswith(b"\0"):
            raw, span = raw[:-1], Span(span.offset, n - 1)
        return raw.decode("utf-8", "backslashreplace"), span

    def sequence_octets(self, what: str) -> Span:
        n = self.count(1, what)
        return self.octets(n, what)


class Property(NamedTuple):
    name: str
    value: str | None           # a string property's value; None for a binary one
    span: Span                  # the value's bytes


class DataHolder(NamedTuple):
    """DDS Security 1.1's DataHolder: every Token, and the handshake's message tokens."""
    class_id: str
    class_span: Span
    properties: list[Property]         # string properties, then binary ones


def data_holder(r: Cdr) -> DataHolder:
    """One DataHolder: class_id, PropertySeq (name, value), BinaryPropertySeq (name,
    OctetSeq). A property's `propagate` flag is not serialized."""
    class_id, span = r.string("a DataHolder's class_id")
    props: list[Property] = []
    for _ in range(r.count(8, "a PropertySeq")):
        name, _ = r.string("a property's name")
        value, vspan = r.string(f"property {name!r}'s value")
        props.append(Property(name, value, vspan))
    for _ in range(r.count(8, "a BinaryPropertySeq")):
        name, _ = r.string("a binary property's name")
        props.append(Property(name, None, r.sequence_octets(f"binary property {name!r}")))
    return DataHolder(class_id, span, props)


def data_holders(r: Cdr) -> list[DataHolder]:
    return [data_holder(r) for _ in range(r.count(12, "a DataHolderSeq"))]


# ------------------------------------------------------------------- parameter lists

class Parameter(NamedTuple):
    pid: int
    offset: int                 # of its value, in the buffer
    length: int


def parameters(buf: bytes, start: int, end: int, little: bool) -> Iterator[Parameter]:
    """The parameters of a ParameterList in buf[start:end], up to PID_SENTINEL (or the
    end). A parameter whose length runs past the end raises CdrError."""
    order = "<HH" if little else ">HH"
    at = start
    while at + 4 <= end:
        pid, length = struct.unpack_from(order, buf, at)
        if pid == PID_SENTINEL:
            return
        value = at + 4
        if value + length > end:
            raise CdrError(f"parameter 0x{pid:04x} at byte {at} claims {length:,} bytes, "
                           f"only {end - value:,} left")
        if pid != PID_PAD:
            yield Parameter(pid, value, length)
        at = value + length
    if at != end:
        raise CdrError(f"{end - at} stray byte(s) after the last parameter at byte {at}")


def encapsulation(buf: bytes, start: int, end: int) -> tuple[str, bool, int]:
    """The serialized payload's representation (RTPS 2.x 10.2): ('cdr' | 'pl_cdr',
    little-endian, where the data starts); CdrError for anything else."""
    if end - start < 4:
        raise CdrError(f"a serialized payload of {end - start} bytes has no encapsulation")
    kind = int.from_bytes(buf[start:start + 2], "big")
    known = {0x0000: ("cdr", False), 0x0001: ("cdr", True), 0x0002: ("pl_cdr", False),
             0x0003: ("pl_cdr", True), 0x0006: ("cdr", False), 0x0007: ("cdr", True)}
    if kind not in known:
        raise CdrError(f"encapsulation 0x{kind:04x} is not CDR or PL_CDR")
    name, little = known[kind]
    return name, little, start + 4


def parameter_list_end(buf: bytes, start: int, end: int, little: bool) -> int:
    """Where a ParameterList that must end with PID_SENTINEL (inline QoS) ends: the offset
    after its sentinel; CdrError when it runs past `end` first."""
    order = "<HH" if little else ">HH"
    at = start
    while at + 4 <= end:
        pid, length = struct.unpack_from(order, buf, at)
        if pid == PID_SENTINEL:
            return at + 4
        at += 4 + length
    raise CdrError(f"a parameter list from byte {start} runs past byte {end} without its "
                   "sentinel")
