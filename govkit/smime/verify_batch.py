"""`govkit verify` over many files: the verdicts of `verify_file`, faster.

`verify_bytes` reads any S/MIME file as OpenSSL does, which for the usual file
(signed by govkit or `openssl smime -sign -text`) mostly means re-deriving facts that
are the same in every file: the certificates, the signer's chain, the algorithms. Here a
`Verifier` takes those facts from the first file of each *layout* it sees, after that
file passed the full check, and for every later file that has the very same layout it
checks only what varies:

* the file must be byte for byte what `sign.smime_message` writes for its parts (a
  signed part whose lines all end in CRLF and fit in one OpenSSL line buffer, a random
  boundary that occurs nowhere in it, the base64 of the DER signature), so OpenSSL reads
  exactly those parts back;
* the DER must be byte for byte what the learned `pkcs7.SignerTemplate` assembles from
  this file's signing time, message digest and signature, so it names the same signer,
  certificates and algorithms, whose checks (chain, key usage, validity at `now`, no
  warnings) the first file passed;
* then what the full check does with those values: the signing time parsed as asn1crypto
  parses it, the digest compared, the signature verified with the signer's key, and the
  signed document checked: by the same function (`check_signed_document`), or, for a
  permissions document of a shape a fully checked file had (govkit.check.construct), by
  checking only its values: that shape's documents are valid exactly when they are.

Anything else, or any of these failing, goes to the full check, which gives the verdict
and its reasons: the fast path only ever says OK, and only where the full check would.
"""

from __future__ import annotations

import binascii
import datetime as dt
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from asn1crypto import cms
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from govkit.check import construct
from govkit.common import workers
from govkit.common.errors import GovkitError
from govkit.common.inputs import read_input
from govkit.common.limits import MAX_SIGNATURE_PART_BYTES, MAX_SMIME_BYTES
from govkit.documents.compiled import PARTICIPANT, SUBJECT
from govkit.smime import chain, pkcs7, sign
from govkit.smime.verify import Verification, check_signed_document, verify_bytes

# sign.smime_message's layout, restated only to find a file's parts quickly: message_parts
# takes a file only if smime_message would write it so byte for byte (a test holds the two
# together), so if they ever disagree a file merely misses the fast path; the verdict is
# unchanged.
_HEAD = (b'MIME-Version: 1.0\nContent-Type: multipart/signed; '
         b'protocol="application/x-pkcs7-signature"; micalg="sha-256"; boundary="')
_BOUNDARY_RE = re.compile(rb"----[0-9A-F]{32}")
_BOUNDARY_LEN = 36
_SIGNATURE_HEAD = (b'\nContent-Type: application/x-pkcs7-signature; name="smime.p7s"\n'
                   b'Content-Transfer-Encoding: base64\n'
                   b'Content-Disposition: attachment; filename="smime.p7s"\n\n')
_MAX_PIECE = 1022   # the longest line OpenSSL reads in one piece (1023 with its LF)
_QUOTE = ord('"')


@dataclass(frozen=True)
class _Layout:
    """What the first file of a layout established, for the files after it."""
    public_key: object
    signer: str


def message_parts(data: bytes) -> tuple[bytes, bytes, bytes] | None:
    """(boundary, signed part, DER) of a file exactly as `smime_message` lays it out,
    whose signed part OpenSSL reads back unchanged; None for anything else."""
    if not data.startswith(_HEAD) or b"\0" in data:
        return None
    start = len(_HEAD)
    boundary = data[start:start + _BOUNDARY_LEN]
    if not _BOUNDARY_RE.fullmatch(boundary):
        return None
    delimiter = b"\n--" + boundary
    part = data.find(b"\n\nThis is an S/MIME signed message\n" + delimiter + b"\n", start)
    if part != start + _BOUNDARY_LEN + 1:
        return None
    part = data.index(delimiter, part) + len(delimiter) + 1
    middle = data.find(delimiter + _SIGNATURE_HEAD, part)
    if middle < 0 or len(data) - middle > MAX_SIGNATURE_PART_BYTES:
        return None
    signed_part = data[part:middle]
    crlf = signed_part.count(b"\r\n")
    if boundary in signed_part or signed_part.count(b"\r") != crlf or \
            signed_part.count(b"\n") != crlf or \
            max(map(len, signed_part.split(b"\n"))) > _MAX_PIECE:
        return None
    tail = b"\n\n--" + boundary + b"--\n\n"
    b64_start = middle + len(delimiter) + len(_SIGNATURE_HEAD)
    if data[start + _BOUNDARY_LEN] != _QUOTE or not data.endswith(tail) or \
            len(data) - len(tail) <= b64_start:
        return None
    # the base64 exactly as smime_message lays it out: canonical, in lines of 64 (what
    # rendering the parts again and comparing checked, for a sixth of the time; a test
    # keeps the two the same)
    b64 = data[b64_start:len(data) - len(tail)]
    flat = b64.replace(b"\n", b"")
    breaks = (len(flat) - 1) // 64
    if len(b64) != len(flat) + breaks or b64[64::65] != b"\n" * breaks:
        return None
    try:
        der = binascii.a2b_base64(flat, strict_mode=True)
    except binascii.Error:
        return None
    if binascii.b2a_base64(der, newline=False) != flat:
        return None
    return boundary, signed_part, der


class Verifier:
    """Verifies files against one Permissions CA at one instant (`now`), learning the
    layouts of the files that pass in full."""

    def __init__(self, ca: x509.Certificate | list[x509.Certificate],
                 now: dt.datetime | None = None, paranoid: bool = False,
                 target: str | None = None):
        self.ca = ca
        # whose verdict (verify_bytes): one per Verifier, so a layout or document shape
        # learned under it holds for the files after
        self.target = target
        self._trusted = [c.subject.rfc4514_string() for c in
                         ([ca] if isinstance(ca, x509.Certificate) else ca)]
        self.now = now or dt.datetime.now(dt.UTC)
        self.paranoid = paranoid   # every file checked in full
        self._layouts: dict[tuple, _Layout] = {}
        self._times: dict[bytes, bool] = {}
        self._documents = construct.Recognizer()
        # DER length -> (template, where the signing time, digest and signature start and
        # end) in files of that length parsed before: a file of a known layout is sliced
        # there, not parsed, and taken only if the slices re-assemble it byte for byte.
        self._offsets: dict[int, list[tuple]] = {}

    def verify(self, data: bytes, filename: str) -> Verification:
        if self.paranoid:
            return verify_bytes(data, filename, self.ca, self.now, self.target)
        parts = message_parts(data)
        parsed, canonical = None, False
        if parts is not None:
            parsed = self._sliced(parts[2])
            canonical = parsed is not None
            if parsed is None:
                try:
                    parsed = pkcs7.SignerTemplate.parse(parts[2])
                    self._note_offsets(parsed, parts[2])
                except pkcs7.TemplateError:
                    parsed = None
        if parsed is not None:
            layout = self._layouts.get(parsed.template.layout)
            if layout is not None:
                result = self._fast(parts, parsed, layout, filename, canonical)
                if result is not None:
                    return result
        result = verify_bytes(data, filename, self.ca, self.now, self.target)
        # (several trusted certificates: a verdict per target, which the full check gives)
        if parsed is not None and result.ok and not result.warnings and \
                result.first_only is None:
            self._learn(parsed, parts[2], result)
            document = parts[1][len(sign.TEXT_HEADER):]
            if parts[1].startswith(sign.TEXT_HEADER):
                self._learn_document(document.replace(b"\r\n", b"\n"), result)
        return result

    def _sliced(self, der: bytes) -> pkcs7.Parsed | None:
        """The values of `der` if it is the canonical encoding of a layout seen before at
        offsets seen before (checked by re-assembling it), else None."""
        for template, w0, w1, d0, d1, s0 in self._offsets.get(len(der), ()):
            when, digest, signature = der[w0:w1], der[d0:d1], der[s0:]
            attributes = template.attributes_with(digest, when)
            if template.assemble(attributes, signature) == der:
                return pkcs7.Parsed(template, when, digest, signature, attributes)
        return None

    def _note_offsets(self, parsed: pkcs7.Parsed, der: bytes) -> None:
        known = self._offsets.setdefault(len(der), [])
        if len(known) >= 4 or not der.endswith(parsed.signature):
            return
        w0, d0 = der.find(parsed.when), der.find(parsed.digest)
        entry = (parsed.template, w0, w0 + len(parsed.when), d0, d0 + len(parsed.digest),
                 len(der) - len(parsed.signature))
        if w0 >= 0 and d0 >= 0 and entry not in known:
            known.append(entry)

    def _fast(self, parts, parsed: pkcs7.Parsed, layout: _Layout, filename: str,
              canonical: bool = False) -> Verification | None:
        _, signed_part, der = parts
        template = parsed.template
        if not canonical and template.assemble(template.attributes_with(
                parsed.digest, parsed.when), parsed.signature) != der:
            return None   # not the canonical encoding of these values
        # The full check reads every signed attribute with asn1crypto; a signing time it
        # cannot read fails it. The other attributes are the learned file's very bytes
        # (which it read) and an OCTET STRING digest (which it always reads), so only
        # the signing time is read here, by the same class; if that fails, the full
        # check decides.
        if not self._readable_time(parsed.when):
            return None
        if parsed.digest != hashlib.sha256(signed_part).digest() or \
                not chain.signature_ok(layout.public_key, parsed.signature,
                                       pkcs7.tlv(0x31, parsed.attributes), hashes.SHA256):
            return None
        result = Verification(filename, ok=False, signer=layout.signer,
                              trusted=list(self._trusted))
        # The signed part is TEXT_HEADER and a document whose lines all end in CRLF
        # (message_parts): what PKCS7_TEXT hands on is that document, which XML reads
        # exactly as its LF form (line ends are normalised before anything else).
        document = signed_part[len(sign.TEXT_HEADER):] \
            if signed_part.startswith(sign.TEXT_HEADER) else None
        found = None if document is None else \
            self._documents.recognize_values(document.replace(b"\r\n", b"\n"))
        if found is not None:   # a proven shape loads in every implementation (construct.
            # prove): valid under any target; the signature was checked above, as the full
            # check's signature_ok says
            kind, values = found
            result.kind, result.ok, result.signature_ok = kind.value, True, True
            result.grants = [(values[PARTICIPANT], values[SUBJECT])]
            return result
        check_signed_document(signed_part, filename, result, target=self.target)
        if result.problems or result.warnings:
            return None
        if document is not None:
            self._learn_document(document.replace(b"\r\n", b"\n"), result)
        result.ok = True
        return result

    def _learn_document(self, document: bytes, result: Verification) -> None:
        """Learn the shape of a document that passed the full check, and take its grant
        from it (as for the documents of that shape after it)."""
        self._documents.learn(document)
        found = self._documents.recognize_values(document)
        if found is not None:
            result.grants = [(found[1][PARTICIPANT], found[1][SUBJECT])]

    def _readable_time(self, when: bytes) -> bool:
        """asn1crypto reads this signing time (files signed in one second share it, so
        each value is read once)."""
        if when not in self._times:
            try:
                cms.CMSAttribute.load(pkcs7.signing_time_attribute(when)).native  # noqa: B018
                self._times[when] = True
            except Exception:  # whatever it is, the full check reports it
                self._times[when] = False
        return self._times[when]

    def _learn(self, parsed: pkcs7.Parsed, der: bytes, result: Verification) -> None:
        """Remember a layout whose file passed the full check: its signer's key and name."""
        try:
            sd = cms.ContentInfo.load(der)["content"]
            info = sd["signer_infos"][0]
            if info["digest_algorithm"]["algorithm"].native != "sha256":
                return
            sid = info["sid"].chosen
            for choice in sd["certificates"]:
                cert = choice.chosen
                if cert.serial_number == sid["serial_number"].native and \
                        cert.issuer.dump() == sid["issuer"].dump():
                    key = x509.load_der_x509_certificate(cert.dump()).public_key()
                    if isinstance(key, rsa.RSAPublicKey | ec.EllipticCurvePublicKey):
                        self._layouts[parsed.template.layout] = _Layout(key, result.signer)
                    return
        except (ValueError, TypeError, KeyError):
            return


# ---------------------------------------------------------------- many files

_verifier: Verifier | None = None


def _init(ca_ders: list[bytes], now: dt.datetime, paranoid: bool = False,
          target: str | None = None) -> None:
    global _verifier
    _verifier = Verifier([x509.load_der_x509_certificate(d) for d in ca_ders], now, paranoid,
                         target)


def _verify_chunk(paths: list[str]) -> list[Verification | tuple[str, int]]:
    out: list[Verification | tuple[str, int]] = []
    for path in paths:
        try:
            data = read_input(path, MAX_SMIME_BYTES, "signed document")
        except GovkitError as e:   # unreadable: reported as the per-file path reports it
            out.append((str(e), e.exit_code))
            continue
        out.append(_verifier.verify(data, path))
    return out


def verify_files(files: list[Path], ca: x509.Certificate | list[x509.Certificate],
                 now: dt.datetime | None = None, processes: int | None = None,
                 paranoid: bool = False, target: str | None = None
                 ) -> list[Verification | GovkitError]:
    """`verify_file` for every file, in order: its Verification, or the GovkitError
    it raised for a file it could not read. `paranoid`: every file checked in full;
    `target`: whose verdict on the signed documents (verify_bytes)."""
    from cryptography.hazmat.primitives import serialization
    now = now or dt.datetime.now(dt.UTC)
    paths = [str(f) for f in files]
    count, parts = workers.plan(paths, processes)
    cas = [ca] if isinstance(ca, x509.Certificate) else ca
    results: list[Verification | GovkitError] = []
    for chunk in workers.run(_verify_chunk, parts, _init,
                             ([c.public_bytes(serialization.Encoding.DER) for c in cas], now,
                              paranoid, target),
                             count):
        results += [GovkitError(*r) if isinstance(r, tuple) else r for r in chunk]
    return results
