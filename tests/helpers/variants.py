"""Generators of S/MIME wrapper variants for the differential tests.

A signed file is taken apart into a :class:`Wrapper` (header lines, preamble, delimiters,
parts, epilogue) and put back together with one thing changed: boundaries, headers, line
ends, extra or missing parts, nesting, encodings. `craft_pkcs7` builds signatures with
chosen signed attributes (order, content type, digest) for CMS-level variants.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from asn1crypto import algos, cms, core
from asn1crypto import x509 as asn1_x509
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa


@dataclass
class Wrapper:
    """A multipart/signed file, line by line (lines without their LF; CRs are kept)."""
    headers: list[bytes]
    preamble: list[bytes]
    boundary: bytes
    content: list[bytes]          # the signed part's lines (its header, blank line, body)
    signature: list[bytes]        # the signature part's lines (headers, blank, base64)
    epilogue: list[bytes] = field(default_factory=list)
    extra_parts: list[list[bytes]] = field(default_factory=list)
    delimiter: bytes | None = None  # the delimiter line, if not "--" + boundary
    final: bytes | None = None      # the closing line, if not "--" + boundary + "--"
    eol: bytes = b"\n"

    @classmethod
    def parse(cls, data: bytes) -> Wrapper:
        head, _, body = data.partition(b"\n\n")
        boundary = re.search(rb'boundary="?([^";\r\n]+)"?', head).group(1)
        delim = b"--" + boundary
        lines = body.split(b"\n")
        marks = [i for i, line in enumerate(lines) if line.startswith(delim)]
        first, second, last = marks[0], marks[1], marks[2]
        return cls(head.split(b"\n"), lines[:first], boundary, lines[first + 1:second],
                   lines[second + 1:last], lines[last + 1:])

    def render(self) -> bytes:
        delim = self.delimiter if self.delimiter is not None else b"--" + self.boundary
        final = self.final if self.final is not None else b"--" + self.boundary + b"--"
        lines = [*self.headers, b"", *self.preamble, delim, *self.content, delim,
                 *self.signature]
        for part in self.extra_parts:
            lines += [delim, *part]
        lines += [final, *self.epilogue]
        return self.eol.join(lines)

    def set_header(self, name: bytes, line: bytes) -> Wrapper:
        key = name.lower() + b":"
        return replace(self, headers=[line if h.lower().startswith(key) else h
                                      for h in self.headers])

    @property
    def ctype(self) -> bytes:
        return next(h for h in self.headers if h.lower().startswith(b"content-type:"))

    def base64_lines(self) -> list[bytes]:
        blank = self.signature.index(b"")
        return [line for line in self.signature[blank + 1:] if line]

    def with_base64(self, lines: list[bytes]) -> Wrapper:
        blank = self.signature.index(b"")
        return replace(self, signature=[*self.signature[:blank + 1], *lines, b""])

    def with_boundary(self, boundary: bytes, ctype: bytes | None = None) -> Wrapper:
        ctype = ctype or self.ctype.replace(self.boundary, boundary)
        return replace(self.set_header(b"content-type", ctype), boundary=boundary)


Variant = tuple[str, bytes]


def wrapper_variants(signed: bytes) -> list[Variant]:
    """Structural variants of one valid signed file (boundaries, headers, line ends,
    parts, signature encoding). Each is named; most are refused by OpenSSL, some not."""
    w = Wrapper.parse(signed)
    assert w.render() == signed
    b = w.boundary
    out: list[Variant] = [("unchanged", signed)]

    def add(name: str, data: bytes | Wrapper) -> None:
        out.append((name, data.render() if isinstance(data, Wrapper) else data))

    ct = w.ctype
    proto = b'protocol="application/x-pkcs7-signature"'
    # -- boundaries -------------------------------------------------------------------
    for name, boundary in [("plain", b"simple-boundary"), ("one-char", b"x"),
                           ("two-char", b"xy"), ("with-spaces", b"a b c"),
                           ("special", b"'()+_,-./:=?"), ("long-70", b"B" * 70),
                           ("long-1000", b"C" * 1000), ("long-1100", b"D" * 1100)]:
        add(f"boundary-{name}-quoted", w.with_boundary(
            boundary, b'Content-Type: multipart/signed; ' + proto + b'; boundary="' + boundary +
            b'"'))
        if b" " not in boundary:
            add(f"boundary-{name}-unquoted", w.with_boundary(
                boundary, b"Content-Type: multipart/signed; " + proto + b"; boundary=" +
                boundary))
    add("boundary-empty-quoted", w.set_header(
        b"content-type", b'Content-Type: multipart/signed; boundary=""'))
    add("boundary-missing", w.set_header(b"content-type", b"Content-Type: multipart/signed; "
                                         + proto))
    add("boundary-param-uppercase", w.set_header(
        b"content-type", ct.replace(b"boundary=", b"BOUNDARY=")))
    add("boundary-spaces-around-equals", w.set_header(
        b"content-type", ct.replace(b"boundary=", b"boundary = ")))
    add("boundary-first-param", w.set_header(
        b"content-type", b'Content-Type: multipart/signed; boundary="' + b + b'"; ' + proto))
    add("boundary-duplicate-real-first", w.set_header(
        b"content-type", ct + b'; boundary="evil"'))
    add("boundary-duplicate-real-second", w.set_header(
        b"content-type", b'Content-Type: multipart/signed; boundary="evil"; ' + proto +
        b'; boundary="' + b + b'"'))
    add("boundary-injected-in-quoted-param", w.set_header(
        b"content-type", b'Content-Type: multipart/signed; protocol="application/'
        b'x-pkcs7-signature; boundary=evil"; boundary="' + b + b'"'))
    add("boundary-injected-unquoted", w.set_header(
        b"content-type", b"Content-Type: multipart/signed; micalg=sha-256; boundary=evil; "
        b'boundary="' + b + b'"'))
    add("boundary-in-comment", w.set_header(
        b"content-type", b'Content-Type: multipart/signed; micalg=(x; boundary=evil)sha-256; '
        b'boundary="' + b + b'"'))
    add("boundary-on-folded-line", replace(w, headers=[
        *(h for h in w.headers if not h.lower().startswith(b"content-type")),
        b"Content-Type: multipart/signed; " + proto + b";", b'\tboundary="' + b + b'"']))
    add("boundary-after-1023-bytes", w.set_header(
        b"content-type", b"Content-Type: multipart/signed; x-pad=\"" + b"p" * 1100 + b"\"; "
        b'boundary="' + b + b'"'))
    add("boundary-value-trailing-space-quoted", w.set_header(
        b"content-type", ct.replace(b'boundary="' + b + b'"', b'boundary="' + b + b' "')))
    # -- headers ----------------------------------------------------------------------
    add("ctype-uppercase", w.set_header(b"content-type", ct.replace(b"multipart/signed",
                                                                    b"MULTIPART/SIGNED")))
    add("ctype-quoted", w.set_header(b"content-type", ct.replace(b"multipart/signed",
                                                                 b'"multipart/signed"')))
    add("ctype-comment", w.set_header(b"content-type", ct.replace(
        b"multipart/signed", b"multipart/signed (clear-signed)")))
    add("ctype-mixed", w.set_header(b"content-type", ct.replace(b"multipart/signed",
                                                                b"multipart/mixed")))
    add("ctype-name-spaces", w.set_header(b"content-type",
                                          ct.replace(b"Content-Type:", b"Content-Type   :")))
    add("ctype-duplicate-text-first", replace(w, headers=[b"Content-Type: text/plain",
                                                          *w.headers]))
    add("ctype-duplicate-text-second", replace(w, headers=[*w.headers,
                                                           b"Content-Type: text/plain"]))
    add("ctype-missing", replace(w, headers=[h for h in w.headers
                                             if not h.lower().startswith(b"content-type")]))
    add("mime-version-missing", replace(w, headers=[h for h in w.headers
                                                    if not h.lower().startswith(b"mime")]))
    add("header-extra-before", replace(w, headers=[b"X-Whatever: 1", *w.headers]))
    add("header-junk-line", replace(w, headers=[*w.headers, b"this line has no colon"]))
    add("header-whitespace-line", replace(w, headers=[*w.headers, b"   "]))
    add("header-long-extra", replace(w, headers=[b"X-Long: " + b"L" * 3000, *w.headers]))
    add("header-bare-cr-in-ctype", w.set_header(b"content-type",
                                                ct.replace(b"; boundary", b";\r boundary")))
    add("no-blank-after-headers", Wrapper.render(w).replace(b"\n\n", b"\n", 1))
    # -- delimiters and parts ----------------------------------------------------------
    add("delimiter-trailing-space", replace(w, delimiter=b"--" + b + b"  "))
    add("delimiter-trailing-text", replace(w, delimiter=b"--" + b + b"XYZ"))
    add("final-trailing-text", replace(w, final=b"--" + b + b"--and more"))
    add("final-missing", w.render()[:w.render().rindex(b"--" + b + b"--")])
    add("third-part", replace(w, extra_parts=[[b"Content-Type: text/plain", b"", b"hi"]]))
    add("third-part-empty-line", replace(w, extra_parts=[[b""]]))
    add("empty-part-before-content", replace(w, preamble=[*w.preamble, b"--" + b]))
    add("preamble-none", replace(w, preamble=[]))
    add("preamble-long", replace(w, preamble=[b"preamble line"] * 500))
    add("preamble-looks-like-delimiter", replace(w, preamble=[b"--" + b + b" (the boundary)",
                                                             b"text"]))
    add("epilogue-text", replace(w, epilogue=[b"epilogue", b"--" + b]))
    add("parts-swapped", replace(w, content=w.signature[:-1], signature=w.content + [b""]))
    add("content-extra-header", replace(w, content=[w.content[0], b"X-Extra: 1\r",
                                                    *w.content[1:]]))
    add("content-extra-blank-line", replace(w, content=[*w.content, b""]))
    # -- line ends ----------------------------------------------------------------------
    add("eol-crlf", replace(w, eol=b"\r\n"))
    add("eol-crcrlf", replace(w, eol=b"\r\r\n"))
    add("eol-cr-only", w.render().replace(b"\r\n", b"\r").replace(b"\n", b"\r"))
    add("eol-lf-only", w.render().replace(b"\r\n", b"\n"))
    add("eol-mixed-headers-crlf", replace(w, headers=[h + b"\r" for h in w.headers]))
    add("no-final-newline", w.render().rstrip(b"\n"))
    add("bare-cr-in-content", replace(w, content=[*w.content[:-1], w.content[-1] + b"\r"]))
    # -- signature part -------------------------------------------------------------------
    sig_ct = w.signature[0]
    sig = w.base64_lines()
    raw = b"".join(sig)
    for name, ctype_line in [("pkcs7-signature", b"Content-Type: application/pkcs7-signature"),
                             ("text-plain", b"Content-Type: text/plain"),
                             ("octet-stream", b"Content-Type: application/octet-stream")]:
        add(f"sig-ctype-{name}", replace(w, signature=[ctype_line, *w.signature[1:]]))
    add("sig-ctype-missing", replace(w, signature=w.signature[1:]))
    add("sig-cte-quoted-printable", replace(w, signature=[
        sig_ct, b"Content-Transfer-Encoding: quoted-printable",
        *[line for line in w.signature[1:] if not line.lower().startswith(b"content-trans")]]))
    for width in (76, 1000, 1022, 1023, 1100):
        add(f"sig-base64-width-{width}", w.with_base64(
            [raw[i:i + width] for i in range(0, len(raw), width)]))
    add("sig-base64-one-line", w.with_base64([raw]))
    add("sig-base64-garbage-line-first", w.with_base64([b"not base64!", *sig]))
    add("sig-base64-valid-line-first", w.with_base64([b"QUJD", *sig]))
    add("sig-base64-junk-after", w.with_base64([*sig, b"junk!"]))
    add("sig-base64-junk-far-after", w.with_base64([*sig, *([b""] * 1200), b"junk!"]))
    add("sig-base64-pem-armour", w.with_base64([b"-----BEGIN PKCS7-----", *sig,
                                                b"-----END PKCS7-----"]))
    add("sig-base64-spaces", w.with_base64([b" " + line + b" " for line in sig]))
    add("sig-base64-crlf", w.with_base64([line + b"\r" for line in sig]))
    add("sig-base64-truncated", w.with_base64(sig[:len(sig) // 2]))
    add("sig-base64-no-padding", w.with_base64([*sig[:-1], sig[-1].rstrip(b"=")]))
    return out


def mutants(signed: bytes, count: int, seed: int) -> list[Variant]:
    """Seeded random line-level edits of a signed file (outside the signed content, where an
    edit only ever breaks the digest): delete, duplicate, swap, retype or insert lines."""
    rng = random.Random(seed)
    w = Wrapper.parse(signed)
    inserts = [b"", b" ", b"--" + w.boundary, b"--" + w.boundary + b"--", b"X-A: b",
               b"Content-Type: text/plain", b"boundary=zz", b"\t; boundary=zz", b"-",
               b"QUJD", b"!", b"\r", b"Content-Type: application/pkcs7-signature"]
    out: list[Variant] = []
    for i in range(count):
        lines = [*w.headers, b"", *w.preamble, b"--" + w.boundary]
        lead = len(lines)
        content = list(w.content)
        tail = [b"--" + w.boundary, *w.signature, b"--" + w.boundary + b"--", *w.epilogue]
        for _ in range(rng.randint(1, 3)):
            where = rng.choice(("lead", "tail"))
            target = lines if where == "lead" else tail
            op = rng.choice(("delete", "duplicate", "swap", "insert", "crlf"))
            j = rng.randrange(len(target))
            if op == "delete" and len(target) > 1:
                del target[j]
            elif op == "duplicate":
                target.insert(j, target[j])
            elif op == "swap" and j + 1 < len(target):
                target[j], target[j + 1] = target[j + 1], target[j]
            elif op == "insert":
                target.insert(j, rng.choice(inserts))
            else:
                target[j] = target[j] + b"\r"
        del lead
        out.append((f"mutant-{seed}-{i}", b"\n".join([*lines, *content, *tail])))
    return out


# ---------------------------------------------------------------- crafted PKCS#7


def _der(tag: int, contents: bytes) -> bytes:
    n = len(contents)
    if n < 0x80:
        return bytes([tag, n]) + contents
    size = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(size)]) + size + contents


def _attr(name: str, value) -> cms.CMSAttribute:
    return cms.CMSAttribute({"type": name, "values": [value]})


def craft_pkcs7(signed_part: bytes, cert: x509.Certificate, key, *,
                order: Callable[[list], list] | None = None, content_type: str = "data",
                message_digest: bool = True, digest: str = "sha256") -> bytes:
    """A detached PKCS#7 signature of `signed_part` with hand-made signed attributes."""
    attrs = [_attr("content_type", content_type),
             _attr("signing_time", cms.Time({"utc_time": core.UTCTime(
                 dt.datetime.now(dt.UTC))})),
             _attr("message_digest", hashlib.new(digest, signed_part).digest())]
    if not message_digest:
        attrs = attrs[:2]
    attrs = order(attrs) if order else attrs
    # Encoded by hand in the order given (asn1crypto would sort the SET as DER requires;
    # OpenSSL signs and verifies the order it receives).
    contents = b"".join(a.dump() for a in attrs)
    to_sign = _der(0x31, contents)
    signed_attrs = cms.CMSAttributes.load(to_sign)
    hash_cls = {"sha256": hashes.SHA256, "sha384": hashes.SHA384, "sha1": hashes.SHA1}[digest]
    if isinstance(key, rsa.RSAPrivateKey):
        signature = key.sign(to_sign, padding.PKCS1v15(), hash_cls())
        sig_alg = "rsassa_pkcs1v15"
    else:
        signature = key.sign(to_sign, ec.ECDSA(hash_cls()))
        sig_alg = f"{digest}_ecdsa"
    cert_asn1 = asn1_x509.Certificate.load(cert.public_bytes(serialization.Encoding.DER))
    signer = cms.SignerInfo({
        "version": "v1",
        "sid": cms.SignerIdentifier({"issuer_and_serial_number": cms.IssuerAndSerialNumber({
            "issuer": cert_asn1.issuer, "serial_number": cert_asn1.serial_number})}),
        "digest_algorithm": algos.DigestAlgorithm({"algorithm": digest}),
        "signed_attrs": signed_attrs,
        "signature_algorithm": algos.SignedDigestAlgorithm({"algorithm": sig_alg}),
        "signature": signature,
    })
    sd = cms.SignedData({
        "version": "v1",
        "digest_algorithms": [algos.DigestAlgorithm({"algorithm": digest})],
        "encap_content_info": {"content_type": "data"},
        "certificates": [cert_asn1],
        "signer_infos": [signer],
    })
    return cms.ContentInfo({"content_type": "signed_data", "content": sd}).dump()


def with_signature(w: Wrapper, der: bytes) -> Wrapper:
    b64 = base64.b64encode(der)
    return w.with_base64([b64[i:i + 64] for i in range(0, len(b64), 64)])
