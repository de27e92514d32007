"""The one MIME reader: an S/MIME file read exactly the way OpenSSL 3.0 reads it.

Cyclone DDS loads governance and permissions with OpenSSL's ``SMIME_read_PKCS7`` and
``PKCS7_verify(..., PKCS7_TEXT)``, and ``openssl smime -verify -text`` does the same. What
govkit says about an S/MIME file must be what they decide, so this module follows OpenSSL's
reading rules (asn_mime.c, bio_b64.c, encode.c), including the surprising ones:

* Lines are read into a 1024-byte buffer: a line longer than 1023 bytes arrives as several
  *pieces*, and every rule below applies to pieces, not to lines.
* Header lines are cut by a small state machine: a value ends at ``;`` unless inside
  double quotes or parentheses (so a ``boundary=`` inside another parameter's quoted
  value is not a parameter); a line ends at its first CR or LF; only an empty line ends
  the header block; names (and header values) are compared in lower case; for a repeated
  header or parameter the first one counts.
* A multipart body is cut at pieces that *start with* ``--boundary`` (anything may
  follow), ``--boundary--`` ends it, and exactly two parts must be found in between.
  Text before the first delimiter and after the last is ignored; each part's pieces are
  re-joined with CRLF after dropping their trailing CR/LF; the line break before a
  delimiter belongs to the delimiter.
* The signature part must be ``application/(x-)pkcs7-signature``; its body is decoded like
  OpenSSL's base64 BIO: leading lines that are not base64 are skipped, ``-`` ends the
  data, an invalid character loses the whole 1024-byte block it is in.
* The signed part must be a ``text/plain`` entity (PKCS7_TEXT); its headers are removed
  and the rest, byte for byte, is the document.

Everything here is linear in the input: pieces are found with ``bytes.find`` and
``split``, never with a backtracking pattern.
"""

from __future__ import annotations

import binascii
import itertools
import re
from dataclasses import dataclass, field

from govkit.common.limits import MAX_HEADER_BYTES, MAX_SIGNATURE_PART_BYTES

PIECE = 1023          # bytes per BIO_gets() call with OpenSSL's 1024-byte line buffer
B64_BLOCK = 1024      # bytes per read of OpenSSL's base64 BIO
_WHITE = b" \t\n\v\f\r"            # C isspace()
_SPACE = frozenset(_WHITE)
SIGNATURE_TYPES = ("application/x-pkcs7-signature", "application/pkcs7-signature")
OPAQUE_TYPES = ("application/x-pkcs7-mime", "application/pkcs7-mime")


class MimeError(ValueError):
    """The input is not an S/MIME message OpenSSL would read; the message says why."""


# ---------------------------------------------------------------- pieces (BIO_gets)


def pieces(data: bytes, start: int = 0, end: int | None = None):
    """(start, end) of each piece of data[start:end], as successive BIO_gets() calls return
    them: up to and including a LF, at most 1023 bytes. `start` must be a piece boundary
    (the start of the data, of a line, or the end of an earlier piece)."""
    end = len(data) if end is None else end
    pos = start
    while pos < end:
        limit = min(end, pos + PIECE)
        nl = data.find(b"\n", pos, limit)
        stop = nl + 1 if nl >= 0 else limit
        yield pos, stop
        pos = stop


# A line longer than one piece (tried only at line starts, so linear).
_LONG_LINE_RE = re.compile(rb"(?<![^\n])[^\n]{%d}" % PIECE)


def _crlf(chunk: bytes) -> bytes:
    """Every line end as CRLF, the CRs that preceded it dropped; the last line (after the
    last LF) loses its trailing CRs too. All in C: two replaces when no line ends in more
    than one CR, else split, strip and join."""
    if b"\r\r\n" in chunk:
        return b"\r\n".join(map(bytes.rstrip, chunk.split(b"\n"), itertools.repeat(b"\r")))
    out = chunk.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    return out if chunk.endswith(b"\n") else out.rstrip(b"\r")


def _joined_pieces(data: bytes, start: int, end: int, keep_last_eol: bool) -> bytes:
    """The general case, piece by piece (lines over 1023 bytes)."""
    out, eol = [], False
    for s, e in pieces(data, start, end):
        piece = data[s:e]
        text = piece.rstrip(b"\r\n")             # OpenSSL's strip_eol()
        if eol:
            out.append(b"\r\n")
        out.append(text)
        eol = b"\n" in piece[len(text):]
    if eol and keep_last_eol:
        out.append(b"\r\n")
    return b"".join(out)


def canonical(data: bytes, start: int = 0, end: int | None = None,
              long_lines: bool | None = None) -> bytes:
    """data[start:end] as OpenSSL re-joins a part's pieces: trailing CR/LF of each piece
    dropped, CRLF between pieces that ended a line, nothing after the last piece.
    `long_lines` says whether a line may be longer than a piece (checked if None)."""
    end = len(data) if end is None else end
    chunk = data[start:end]
    if long_lines or long_lines is None and _LONG_LINE_RE.search(chunk):
        return _joined_pieces(data, start, end, keep_last_eol=False)
    # The last line break belongs to the delimiter.
    return _crlf(chunk)[:-2] if chunk.endswith(b"\n") else _crlf(chunk)


def signed_text(content: bytes) -> bytes:
    """`content` as `openssl smime -sign -text` canonicalises it before signing
    (SMIME_crlf_copy): per piece, trailing CR/LF dropped and CRLF added if it ended a line."""
    if _LONG_LINE_RE.search(content):
        return _joined_pieces(content, 0, len(content), keep_last_eol=True)
    return _crlf(content)


# ---------------------------------------------------------------- headers (mime_parse_hdr)


@dataclass
class Header:
    name: str | None                       # lower case; None if the line had no name
    value: str | None                      # lower case, stripped; None if empty
    params: list[tuple[str | None, str | None]] = field(default_factory=list)

    def param(self, name: str) -> str | None:
        """The first parameter called `name` (OpenSSL: stable sort, first match)."""
        return next((v for n, v in self.params if n == name), None)


def _strip_start(s: bytes) -> bytes | None:
    """OpenSSL's strip_start(): skip white space; a leading quote is dropped too."""
    s = s.lstrip(_WHITE)
    if not s:
        return None
    return (s[1:] or None) if s[0] == 0x22 else s


def _strip_end(s: bytes | None) -> bytes | None:
    """OpenSSL's strip_end(): drop trailing white space; a trailing quote ends the value
    there (quirk: a quote at index 1 gives no value at all)."""
    if s is None:
        return None
    s = s.rstrip(_WHITE)
    if not s:
        return None
    if s[-1] == 0x22:
        return None if len(s) == 2 else s[:-1]
    return s


def _token(s: bytes) -> str | None:
    t = _strip_end(_strip_start(s))
    return None if t is None else t.decode("latin-1")


def _lower(s: str | None) -> str | None:
    return None if s is None else s.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
_START, _TYPE, _NAME, _VALUE, _QUOTE, _COMMENT = range(6)
# Characters that can change each state (everything else is skipped in one jump).
_STATE_CHARS = {_START: re.compile(rb":"), _TYPE: re.compile(rb"[;(]"),
                _COMMENT: re.compile(rb"\)"), _NAME: re.compile(rb"="),
                _VALUE: re.compile(rb'[;"(]'), _QUOTE: re.compile(rb'"')}


def _parse_header_line(line: bytes, headers: list[Header], current: Header | None
                       ) -> Header | None:
    """Feed one header piece to OpenSSL's state machine; returns the current header."""
    nul = line.find(b"\0")
    cstr = line if nul < 0 else line[:nul]       # a C string: it ends at the first NUL
    stop = len(cstr)
    for eol in (cstr.find(b"\r"), cstr.find(b"\n")):
        if 0 <= eol < stop:
            stop = eol                             # the state machine stops at CR or LF
    state = _NAME if current is not None and line[:1] and line[0] in _SPACE else _START
    save, q, name, pos = _START, 0, None, 0
    while True:
        m = _STATE_CHARS[state].search(cstr, pos, stop)
        if m is None:
            break
        i, c = m.start(), cstr[m.start()]
        pos = i + 1
        if state == _START:
            state, name, q = _TYPE, _lower(_token(cstr[q:i])), i + 1
        elif state == _TYPE and c == 0x3B:  # ;
            current = Header(name, _lower(_token(cstr[q:i])))
            headers.append(current)
            state, name, q = _NAME, None, i + 1
        elif state in (_TYPE, _VALUE) and c == 0x28:  # (
            save, state = state, _COMMENT
        elif state == _COMMENT:
            state = save
        elif state == _NAME:
            state, name, q = _VALUE, _lower(_token(cstr[q:i])), i + 1
        elif state == _VALUE and c == 0x3B:
            current.params.append((name, _token(cstr[q:i])))
            state, name, q = _NAME, None, i + 1
        elif state == _VALUE:  # "
            state = _QUOTE
        else:  # _QUOTE, "
            state = _VALUE
    # The last token runs to the end of the C string (past a lone CR, OpenSSL quirk).
    if state == _TYPE:
        current = Header(name, _lower(_token(cstr[q:])))
        headers.append(current)
    elif state == _VALUE:
        current.params.append((name, _token(cstr[q:])))
    return current


def parse_headers(data: bytes, start: int = 0, limit: int = MAX_HEADER_BYTES
                  ) -> tuple[list[Header], int]:
    """OpenSSL's mime_parse_hdr(): the header block at `start` and where the body begins
    (after the empty line, or at the end of data if there is none). A block longer than
    `limit` is refused (MimeError): OpenSSL has no limit, govkit does."""
    headers: list[Header] = []
    current = None
    for s, e in pieces(data, start):
        if e - start > limit:
            raise MimeError(f"MIME header block longer than {limit} bytes (govkit's limit)")
        first = data[s]
        if first in (0x0D, 0x0A, 0x00):        # an empty line ends the headers
            return headers, e
        current = _parse_header_line(data[s:e], headers, current)
    return headers, len(data)


def find_header(headers: list[Header], name: str) -> Header | None:
    """The first header called `name` (OpenSSL sorts stably and takes the first match)."""
    return next((h for h in headers if h.name == name), None)


_HEADER_NAME_RE = re.compile(rb"[!-9;-~]{1,80}:")


def looks_like_mime(data: bytes) -> bool:
    """True if `data` starts like a MIME message (a header line, and a Content-Type or
    MIME-Version header before the first empty line) rather than like an XML document."""
    if not _HEADER_NAME_RE.match(data):
        return False
    try:
        headers, _ = parse_headers(data)
    except MimeError:  # a header block that long: treat it as MIME, and let read_smime say
        return True
    return any(h.name in ("content-type", "mime-version") for h in headers)


# ---------------------------------------------------------------- multipart (multi_split)


@dataclass
class Part:
    data: bytes        # the part's pieces re-joined with CRLF (what OpenSSL digests)
    offset: int        # where the part's first piece starts in the file


def _too_many(count: int) -> MimeError:
    return MimeError(f"multipart/signed message with {count} parts between its delimiters; "
                     f"exactly 2 (content, signature) are required")


def _spans_by_lines(body: bytes, delim: bytes, boundary: str) -> list[tuple[int, int]]:
    """The parts of a body whose lines are all single pieces, found in C: a part starts
    after a delimiter line not followed by another delimiter line, and runs to the next
    one. So a flood of empty delimiters costs no Python loop."""
    quoted = re.escape(delim)
    final = re.compile(b"(?m)^" + quoted + b"--").search(body)
    if final is None:
        if re.compile(b"(?m)^" + quoted).search(body) is None:
            raise MimeError(f"boundary {boundary!r} not found")
        raise MimeError(f"the closing boundary --{boundary}-- is missing")
    any_delimiter = re.compile(b"(?m)^" + quoted)
    part_start = re.compile(b"(?m)^" + quoted + b"[^\n]*\n(?!" + quoted + b")")
    spans = []
    for m in part_start.finditer(body):
        if m.start() >= final.start():
            break
        spans.append((m.end(), any_delimiter.search(body, m.end()).start()))
        if len(spans) > 2:
            raise _too_many(len(spans))
    return spans


def _spans_by_pieces(data: bytes, start: int, delim: bytes, boundary: str
                     ) -> list[tuple[int, int]]:
    """The same, piece by piece: with a line over 1023 bytes a piece also starts every
    1023 bytes into it, and may be a delimiter."""
    marks: list[tuple[int, int, bool]] = []
    for s, e in pieces(data, start):
        if data.startswith(delim, s):
            marks.append((s - start, e - start, data.startswith(b"--", s + len(delim))))
            if marks[-1][2]:
                break
    if not marks:
        raise MimeError(f"boundary {boundary!r} not found")
    if not marks[-1][2]:
        raise MimeError(f"the closing boundary --{boundary}-- is missing")
    spans = [(prev_end, next_start) for (_, prev_end, _), (next_start, _, _)
             in zip(marks, marks[1:], strict=False) if next_start > prev_end]
    if len(spans) > 2:
        raise _too_many(len(spans))
    return spans


def split_multipart(data: bytes, start: int, boundary: str) -> list[Part]:
    """OpenSSL's multi_split(): the parts of the multipart body at `start`. A part exists
    only where a piece follows its delimiter; exactly two are required."""
    if len(boundary) > 1024:
        raise MimeError("multipart boundary longer than 1024 characters")
    delim = b"--" + boundary.encode("latin-1")
    body = data[start:]
    long_lines = _LONG_LINE_RE.search(body) is not None
    if long_lines:
        spans = _spans_by_pieces(data, start, delim, boundary)
    else:
        spans = _spans_by_lines(body, delim, boundary)
    if len(spans) != 2:
        raise MimeError(f"multipart/signed message with {len(spans)} part(s) between its "
                        f"delimiters; exactly 2 (content, signature) are required")
    return [Part(canonical(data, start + s, start + e, long_lines), start + s)
            for s, e in spans]


# ---------------------------------------------------------------- base64 (bio_b64.c)

_B64_INVALID_RE = re.compile(rb"[^A-Za-z0-9+/=\t\n\r -]")
_B64_SPACE = b" \t\r\n"


class _Decoder:
    """EVP_DecodeUpdate(): base64 characters are kept in blocks of 64 and decoded per
    block, or at the end of a call if a multiple of 4 is pending."""

    def __init__(self):
        self.pending = b""

    def update(self, chunk: bytes) -> tuple[int, bytes]:
        """(1 more wanted | 0 end of data | -1 error, decoded bytes). On an error the
        bytes are those of the 64-character blocks completed before it."""
        if not chunk:
            return 0, b""
        bad = _B64_INVALID_RE.search(chunk)
        dash = chunk.find(b"-")
        error = bad is not None and (dash < 0 or bad.start() < dash)
        seof = dash >= 0 and not error
        cut = bad.start() if error else dash if seof else len(chunk)
        total = self.pending + chunk[:cut].translate(None, _B64_SPACE)
        pad = total.find(b"=")
        if pad >= 0:
            # After the first '=' only '=' may follow, and at most two of them.
            run = len(total) - pad - len(total[pad:].lstrip(b"="))
            violation = pad + 2 if run > 2 else pad + run if pad + run < len(total) else -1
            if violation >= 0:
                return -1, self._decode(total, violation // 64 * 64, pad)
        if error:
            return -1, self._decode(total, len(total) // 64 * 64, pad)
        if len(total) % 4 == 0:
            flushed = len(total)
        elif seof:
            return -1, b""      # the data ended inside a 4-character group
        else:
            flushed = len(total) // 64 * 64
        self.pending = total[flushed:]
        rv = 0 if seof or (not self.pending and pad >= 0) else 1
        return rv, self._decode(total, flushed, pad)

    @staticmethod
    def _decode(total: bytes, flushed: int, pad: int) -> bytes:
        decoded = binascii.a2b_base64(total[:flushed].replace(b"=", b"A"))
        if 0 <= pad < flushed:     # '=' decode as zero bits, then are taken off
            decoded = decoded[:len(decoded) - (flushed - pad)]
        return decoded


def _starts_base64(line: bytes) -> bool:
    rv, out = _Decoder().update(line)
    return rv > 0 or bool(out)


# Lines that may start the base64 data: valid characters up to the line end or a '-', or
# at least 64 of them before anything else. Any other line is certainly skipped, so these
# two single-class patterns find the next line worth decoding without a Python loop.
_CLEAN_LINE_RE = re.compile(rb"(?m)^[A-Za-z0-9+/=\t\r ]*[\n-]")
_LONG_PREFIX_RE = re.compile(rb"(?m)^[A-Za-z0-9+/=\t\r ]{64}")


def _next_candidate(buf: bytes, pos: int) -> int:
    found = [m.start() for m in (_CLEAN_LINE_RE.search(buf, pos),
                                 _LONG_PREFIX_RE.search(buf, pos)) if m is not None]
    return min(found) if found else -1


def decode_base64_bio(data: bytes) -> bytes:
    """What OpenSSL's base64 BIO delivers when `data` is read through it: the decoded
    bytes up to the end of the data, a '-', or the 1024-byte block holding an error."""
    out = bytearray()
    decoder = _Decoder()
    pos, tmp, skip_to_newline, started = 0, b"", False, False
    while True:
        chunk = data[pos:pos + B64_BLOCK - len(tmp)]
        pos += len(chunk)
        more = bool(chunk)
        if not chunk and not tmp:
            break
        buf, tmp = tmp + chunk, b""
        if not started:
            # Skip whole lines until one decodes; a line filling the buffer is skipped
            # up to its newline.
            p = 0
            while (nl := buf.find(b"\n", p)) >= 0:
                if skip_to_newline:
                    skip_to_newline, p = False, nl + 1
                    continue
                candidate = _next_candidate(buf, p)
                if candidate < 0:
                    p = buf.rfind(b"\n") + 1     # every complete line is skipped
                    break
                if candidate > p:  # skip the lines before it (p stays a line start)
                    p = candidate
                    continue
                if _starts_base64(buf[p:nl + 1]):
                    started = True
                    break
                p = nl + 1
            if not started:
                if p == 0:
                    if len(buf) == B64_BLOCK:
                        skip_to_newline = True
                    else:
                        tmp = buf
                else:
                    tmp = buf[p:]
                if more:
                    continue
                break
            buf = buf[p:]
        elif len(buf) < B64_BLOCK and more:
            tmp = buf
            continue
        rv, decoded = decoder.update(buf)
        if rv < 0:
            break               # the whole block is lost
        out += decoded
        if rv == 0 or not more:
            break
    return bytes(out)


def asn1_object(stream: bytes, max_nesting: int = 30) -> bytes:
    """The first BER/DER object of `stream` (what d2i reads from a BIO); MimeError if it
    is incomplete. Indefinite lengths are followed up to OpenSSL's nesting limit (30)."""
    pos, open_ = 0, 0
    while True:
        if pos + 2 > len(stream):
            raise MimeError("the signature is not a complete ASN.1 object")
        tag = stream[pos]
        pos += 1
        if tag & 0x1F == 0x1F:  # high tag number: base-128 digits
            while pos < len(stream) and stream[pos] & 0x80:
                pos += 1
            pos += 1
        if pos >= len(stream):
            raise MimeError("the signature is not a complete ASN.1 object")
        first = stream[pos]
        pos += 1
        if tag == 0 and first == 0 and open_:       # end-of-contents of an indefinite
            open_ -= 1
            if not open_:
                return stream[:pos]
            continue
        if first == 0x80:
            if not tag & 0x20:
                raise MimeError("indefinite length on a primitive ASN.1 value")
            open_ += 1
            if open_ > max_nesting:
                raise MimeError("ASN.1 nested too deeply")
            continue
        if first & 0x80:
            n = first & 0x7F
            if n > 4 or pos + n > len(stream):
                raise MimeError("the signature is not a complete ASN.1 object")
            length = int.from_bytes(stream[pos:pos + n], "big")
            pos += n
        else:
            length = first
        pos += length
        if pos > len(stream):
            raise MimeError("the signature is not a complete ASN.1 object")
        if not open_:
            return stream[:pos]


# ---------------------------------------------------------------- S/MIME (SMIME_read_PKCS7)


@dataclass
class SMimeMessage:
    """An S/MIME file as SMIME_read_PKCS7 sees it."""
    content: Part | None    # multipart/signed: the detached signed part, as digested;
    #                         None for opaque signed data (the content is in the signature)
    signature_text: bytes   # the base64 text of the signature

    def signature(self) -> bytes:
        """The PKCS#7 object (DER or BER) OpenSSL decodes from the base64 text."""
        return asn1_object(decode_base64_bio(self.signature_text))


def read_smime(data: bytes) -> SMimeMessage:
    """Split `data` as OpenSSL's SMIME_read_PKCS7 does; MimeError with the reason if it
    would refuse. The base64 signature is decoded later, by SMimeMessage.signature()."""
    headers, body = parse_headers(data)
    ctype = find_header(headers, "content-type")
    if ctype is None or ctype.value is None:
        raise MimeError("no Content-Type header")
    if ctype.value in OPAQUE_TYPES:
        return SMimeMessage(None, data[body:])
    if ctype.value != "multipart/signed":
        raise MimeError(f"MIME type {ctype.value}; a signed document is multipart/signed "
                        f"(or application/pkcs7-mime)")
    boundary = ctype.param("boundary")
    if boundary is None:
        raise MimeError("multipart/signed without a boundary parameter")
    content, sig = split_multipart(data, body, boundary)
    if len(sig.data) > MAX_SIGNATURE_PART_BYTES:
        raise MimeError(f"signature part larger than {MAX_SIGNATURE_PART_BYTES} bytes")
    sig_headers, sig_body = parse_headers(sig.data)
    sig_type = find_header(sig_headers, "content-type")
    if sig_type is None or sig_type.value is None:
        raise MimeError("the signature part has no Content-Type")
    if sig_type.value not in SIGNATURE_TYPES:
        raise MimeError(f"the second part is {sig_type.value}, not "
                        f"application/pkcs7-signature")
    return SMimeMessage(content, sig.data[sig_body:])


def opaque_content(der: bytes) -> bytes:
    """The content inside opaque PKCS#7 signed data (MimeError if there is none)."""
    try:
        from asn1crypto import cms  # only opaque signed data needs it (start-up: 25 ms)
        info = cms.ContentInfo.load(der)
        if info["content_type"].native != "signed_data":
            raise MimeError("the PKCS#7 object is not signed data")
        content = info["content"]["encap_content_info"]["content"]
        data = None if content is None else content.native
    except (ValueError, TypeError, KeyError) as e:
        raise MimeError(f"the PKCS#7 object does not parse: {e}") from None
    if not isinstance(data, bytes):
        raise MimeError("opaque signed data without content")
    return data


def text_body(entity: bytes) -> tuple[bytes, int]:
    """OpenSSL's SMIME_text(): the body of a text/plain MIME entity and where it starts;
    MimeError if the entity is not text/plain (PKCS7_TEXT refuses it)."""
    headers, body = parse_headers(entity)
    ctype = find_header(headers, "content-type")
    if ctype is None or ctype.value is None:
        raise MimeError("the signed content has no MIME header (Content-Type: text/plain): "
                        "it was signed without -text, and PKCS7_TEXT refuses that")
    if ctype.value != "text/plain":
        raise MimeError(f"the signed content is {ctype.value}, not text/plain")
    return entity[body:], body
