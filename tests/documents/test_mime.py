"""govkit.documents.mime's building blocks against a plain, line-by-line statement of
OpenSSL's rules.

The differential tests compare whole files with the real OpenSSL; these pin the pieces:
the 1023-byte line pieces, the CRLF re-joining (whose fast paths must equal the slow
one), the header state machine's quirks, and the base64 BIO model.
"""

from __future__ import annotations

import base64
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from govkit.documents import mime


def reference_pieces(data: bytes) -> list[bytes]:
    """BIO_gets with a 1024-byte buffer, one call at a time."""
    out, pos = [], 0
    while pos < len(data):
        nl = data.find(b"\n", pos, pos + 1023)
        end = nl + 1 if nl >= 0 else min(len(data), pos + 1023)
        out.append(data[pos:end])
        pos = end
    return out


def reference_canonical(data: bytes, keep_last_eol: bool) -> bytes:
    out, eol = b"", False
    for piece in reference_pieces(data):
        text = piece.rstrip(b"\r\n")
        out += (b"\r\n" if eol else b"") + text
        eol = b"\n" in piece[len(text):]
    return out + (b"\r\n" if eol and keep_last_eol else b"")


LINE_BYTES = st.lists(st.sampled_from([b"a", b"\r", b"\n", b"\r\n", b"-", b"a" * 1022,
                                       b"b" * 1023, b"\r" * 1024]), max_size=12).map(b"".join)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(LINE_BYTES)
def test_canonical_forms_equal_the_piece_by_piece_rules(data):
    assert [data[s:e] for s, e in mime.pieces(data)] == reference_pieces(data)
    assert mime.canonical(data) == reference_canonical(data, keep_last_eol=False)
    assert mime.signed_text(data) == reference_canonical(data, keep_last_eol=True)


def test_long_runs_of_crs_are_linear():
    data = b"\r" * 2_000_000 + b"\n" + b"x\r" * 500_000
    assert mime.canonical(data) == reference_canonical(data, keep_last_eol=False)


@pytest.mark.parametrize(("line", "name", "value", "params"), [
    (b"Content-Type: Multipart/Signed; Boundary=\"AbC\"\r\n", "content-type",
     "multipart/signed", [("boundary", "AbC")]),
    # a quoted value keeps ';' and '=' inside it
    (b'Content-Type: a/b; protocol="x; boundary=evil"; boundary=ok\n', "content-type", "a/b",
     [("protocol", "x; boundary=evil"), ("boundary", "ok")]),
    # a comment hides ';' too, and stays in the value
    (b"Content-Type: a/b (c; d); e=f\n", "content-type", "a/b (c; d)", [("e", "f")]),
    # OpenSSL quirk: a one-character quoted value is no value at all
    (b'Content-Type: a/b; boundary="x"\n', "content-type", "a/b", [("boundary", None)]),
    (b'Content-Type: a/b; boundary=""\n', "content-type", "a/b", [("boundary", "")]),
    # the line ends at a CR for the state machine, but the last value runs past it
    (b"Content-Type: text/plain\rjunk\n", "content-type", "text/plain\rjunk", []),
    (b"X: a\0; b=c\n", "x", "a", []),
])
def test_header_quirks(line, name, value, params):
    headers, _ = mime.parse_headers(line)
    assert (headers[0].name, headers[0].value, headers[0].params) == (name, value, params)


def test_header_block_ends_only_at_an_empty_line():
    data = b"A: 1\n   \nB: 2\n\tc=d\n\rX: y\nbody"
    headers, body = mime.parse_headers(data)
    assert [(h.name, h.params) for h in headers] == [("a", []), ("b", [("c", "d")])]
    # a line starting with CR is "empty": it ends the headers and is consumed whole
    assert data[body:] == b"body"
    first, _ = mime.parse_headers(b"Content-Type: a/b\nContent-Type: c/d\n\n")
    assert mime.find_header(first, "content-type").value == "a/b"   # the first one counts


def test_header_block_limit():
    with pytest.raises(mime.MimeError, match="header block longer"):
        mime.parse_headers(b"a: b\n" * 10_000)


def test_base64_bio_model():
    der = bytes(range(256)) * 3
    b64 = base64.encodebytes(der)
    assert mime.decode_base64_bio(b64) == der
    assert mime.decode_base64_bio(b"not base64!\n" + b64) == der      # skipped line
    assert mime.decode_base64_bio(b64 + b"-----END-----\njunk!\n") == der  # '-' ends it
    assert mime.decode_base64_bio(base64.b64encode(der)) == b""       # no line end: no start
    broken = b64[:100] + b"!" + b64[101:]
    assert len(mime.decode_base64_bio(broken)) < len(der)          # the block is lost


def test_asn1_object_reads_one_object():
    rng = random.Random(1)
    inner = bytes(rng.randrange(256) for _ in range(300))
    obj = b"\x30\x82\x01\x2c" + inner
    assert mime.asn1_object(obj + b"trailing") == obj
    indefinite = b"\x30\x80\x04\x02ab\x00\x00"
    assert mime.asn1_object(indefinite + b"zz") == indefinite
    with pytest.raises(mime.MimeError):
        mime.asn1_object(obj[:-1])
    with pytest.raises(mime.MimeError, match="nested too deeply"):
        mime.asn1_object(b"\x30\x80" * 40)
