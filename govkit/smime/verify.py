"""S/MIME verification: the verdict OpenSSL's PKCS7_verify(PKCS7_TEXT) gives with the
Permissions CA as the only trusted certificate, which is what Cyclone DDS and Fast DDS decide.

A CA file may hold several certificates (an intermediate, then its root: Fast DDS's own
test data). The implementations read it differently, so each verdict says which
certificates it trusted:

* `openssl smime -verify -CAfile FILE` and Fast DDS 2.9 trust every certificate of the file
  (Fast-DDS v2.9.1 src/cpp/security/artifact_providers/FileProvider.cpp,
  FileProvider::load_ca: PEM_X509_INFO_read_bio, then X509_STORE_add_cert for each one;
  Permissions.cpp load_permissions_ca calls it). That is `ok`.
* Cyclone DDS 0.10 trusts only the first (cyclonedds 0.10.2
  src/security/builtin_plugins/access_control/src/access_control_utils.c:
  ac_X509_certificate_read -> load_X509_certificate_from_bio reads one PEM_read_bio_X509,
  and PKCS7_document_verify puts that one certificate in the store). That verdict is
  `first_only` (its problems; None when the file holds one certificate, as then all agree).

It is reached on a separate code path from signing: govkit.documents.mime reads the MIME as
OpenSSL does, asn1crypto parses the PKCS#7, and govkit.smime.chain checks the signer's
certificate and every signature as OpenSSL does. Then the document the implementation would
load is validated (schema and lint).
"""


from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from asn1crypto import cms
from cryptography import x509
from cryptography.hazmat.primitives import hashes

from govkit.catalog.targets import PORTABLE_TARGET, VENDOR_TARGETS
from govkit.check import validate
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.inputs import read_input
from govkit.common.limits import MAX_PEM_BYTES, MAX_SMIME_BYTES
from govkit.documents import mime
from govkit.smime import chain

# ---------------------------------------------------------------- verification

@dataclass
class Verification:
    file: str
    ok: bool
    problems: list[str] = field(default_factory=list)
    signer: str | None = None
    kind: str | None = None
    warnings: list[str] = field(default_factory=list)
    # What `openssl smime -verify -text -CAfile` says (the signature, its chain, the
    # text/plain entity), whatever the document inside: None if not reached
    signature_ok: bool | None = None
    # The subjects of the trusted certificates (every one of the CA file)
    trusted: list[str] = field(default_factory=list)
    # The problems when only the first certificate of the CA file is trusted, as Cyclone
    # DDS 0.10 does; None when the file holds one certificate
    first_only: list[str] | None = None
    # (name, subject) of each grant of a permissions document, where verify read them
    # on the way (a document of a proven shape); None: not read (smime.status reads them)
    grants: list[tuple[str | None, str | None]] | None = None

    def targets(self) -> dict[str, bool]:
        """The verdict per implementation (catalog.targets names) and OpenSSL's."""
        verdicts = {"openssl": self.ok}
        for t in VENDOR_TARGETS:
            if t.permissions_ca_certs == "all" or \
                    (t.permissions_ca_certs == "first" and self.first_only is None):
                verdicts[t.name] = self.ok
            elif t.permissions_ca_certs == "first":
                verdicts[t.name] = not self.first_only
        return verdicts

    def target_lines(self) -> list[str]:
        """A line per implementation whose verdict differs from OpenSSL's, saying why."""
        lines = []
        for t in VENDOR_TARGETS:
            if t.permissions_ca_certs != "first" or self.first_only is None or \
                    (not self.first_only) == self.ok:
                continue
            first = self.trusted[0] if self.trusted else "?"
            verdict = "accepts it" if not self.first_only else \
                "refuses it: " + "; ".join(self.first_only)
            lines.append(f"{t.title} trusts only the first certificate of the CA file "
                         f"({first}), so it {verdict}")
        return lines

    def to_json(self) -> dict:
        return {"file": self.file, "ok": self.ok, "problems": self.problems,
                "signer": self.signer, "kind": self.kind, "warnings": self.warnings,
                "signature_ok": self.signature_ok, "trusted": self.trusted,
                "targets": self.targets(), "first_only_problems": self.first_only}


def load_trusted(path: Path) -> list[x509.Certificate]:
    """Every certificate of a PEM CA file, in order (what `-CAfile` trusts; Cyclone DDS 0.10
    uses the first only); GovkitError (exit 2) if it holds none or a broken one."""
    data = read_input(path, MAX_PEM_BYTES, "Permissions CA certificate")
    try:
        return x509.load_pem_x509_certificates(data)
    except ValueError:
        raise GovkitError(f"{path}: not a PEM certificate", EXIT_USAGE) from None


def trust_note(path: Path, trusted: list[x509.Certificate]) -> str:
    """What a CA file with several certificates means to each reader."""
    names = "; ".join(c.subject.rfc4514_string() for c in trusted)
    def who(reads: str) -> str:
        return " and ".join(t.title for t in VENDOR_TARGETS if t.permissions_ca_certs == reads)
    return (f"{path} holds {len(trusted)} certificates, all trusted, as `openssl smime "
            f"-verify -CAfile` and {who('all')} trust them: {names}. {who('first')} trusts "
            f"only the first; where that changes a verdict, a line says so.")


# Digests OpenSSL's PKCS#7 code accepts, by asn1crypto name.
_HASHES = {"md5": hashes.MD5, "sha1": hashes.SHA1, "sha224": hashes.SHA224,
           "sha256": hashes.SHA256, "sha384": hashes.SHA384, "sha512": hashes.SHA512,
           "sha512_224": hashes.SHA512_224, "sha512_256": hashes.SHA512_256,
           "sha3_224": hashes.SHA3_224, "sha3_256": hashes.SHA3_256,
           "sha3_384": hashes.SHA3_384, "sha3_512": hashes.SHA3_512}
_WEAK_HASHES = {"md5", "sha1"}


class _Malformed(ValueError):
    pass


# Anything else escaping verification is a govkit bug: it is not turned into a verdict.
_PARSER_ERRORS = (KeyError, IndexError, OverflowError, RecursionError,
                  *chain.CERTIFICATE_ERRORS)


@dataclass
class _SignedData:
    signer_infos: list
    certificates: list[x509.Certificate]
    digests: set[str]
    content: bytes | None


def _der_set(contents: bytes) -> bytes:
    """A DER SET header around `contents` (the signed attributes are signed as a SET)."""
    n = len(contents)
    if n < 0x80:
        return bytes([0x31, n]) + contents
    size = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x31, 0x80 | len(size)]) + size + contents


def _parse_signed_data(der: bytes) -> _SignedData:
    """The parts of a PKCS#7 SignedData that PKCS7_verify uses; _Malformed where OpenSSL's
    d2i_PKCS7 or PKCS7_verify would fail before looking at the signature."""
    try:
        info = cms.ContentInfo.load(der)
        if info["content_type"].native != "signed_data":
            raise _Malformed(f"the PKCS#7 object is {info['content_type'].native}, "
                             f"not signed data")
        sd = info["content"]
        infos = list(sd["signer_infos"])
        digests = {a["algorithm"].native for a in sd["digest_algorithms"]}
        certs = []
        for choice in (sd["certificates"] if sd["certificates"].native is not None else []):
            if choice.name != "certificate":
                raise _Malformed(f"a {choice.name} in the certificates (PKCS#7 has none)")
            certs.append(x509.load_der_x509_certificate(choice.chosen.dump()))
        econtent = sd["encap_content_info"]["content"]
        content = None if econtent.native is None else econtent.native
    except _Malformed:
        raise
    except (KeyError, AttributeError, RecursionError, *chain.CERTIFICATE_ERRORS) as e:
        raise _Malformed(f"the PKCS#7 object does not parse: {e}") from None
    if not infos:
        raise _Malformed("the signature holds no signer")
    unknown = sorted(d for d in digests if d not in _HASHES)
    if unknown:
        raise _Malformed(f"unknown digest algorithm {', '.join(unknown)}")
    if content is not None and not isinstance(content, bytes):
        raise _Malformed("the signed content is not an OCTET STRING")
    return _SignedData(infos, certs, digests, content)


def _find_signer(si, certs: list[x509.Certificate]) -> x509.Certificate | None:
    sid = si["sid"]
    if sid.name != "issuer_and_serial_number":
        raise _Malformed("the signer is named by a key identifier (CMS); PKCS#7 readers such "
                         "as OpenSSL's PKCS7 and Cyclone DDS need issuer and serial number")
    issuer, serial = sid.chosen["issuer"].dump(), sid.chosen["serial_number"].native
    return next((c for c in certs if c.serial_number == serial
                 and c.issuer.public_bytes() == issuer), None)


def _check_signer_info(si, sd: _SignedData, content: bytes, trusted: list[x509.Certificate],
                       now: dt.datetime, result: Verification) -> None:
    problems = result.problems
    cert = _find_signer(si, sd.certificates)
    if cert is None:
        problems.append("the signer's certificate is not in the signature (signed with "
                        "-nocerts?); OpenSSL and Cyclone DDS find the signer only there")
        return
    result.signer = result.signer or cert.subject.rfc4514_string()
    problems += chain.check_signer(cert, sd.certificates, trusted, now)
    for t in VENDOR_TARGETS:     # a later release that takes the Permissions CA alone
        later = t.later
        if later and later.permissions_signer == "ca" and t.permissions_signer != "ca" \
                and trusted and cert != trusted[0]:
            note = (f"signed by {cert.subject.rfc4514_string()}, not by the Permissions CA "
                    f"certificate itself: {later.version} accepts only that one as the "
                    f"signer (PKCS7_NOINTERN) and refuses it; this verdict is {t.title}'s "
                    f"and OpenSSL's")
            if note not in result.warnings:
                result.warnings.append(note)
    for c in (cert, *trusted):
        note = chain.weak_key_warning(c)
        if note and note not in result.warnings:
            result.warnings.append(note)
    digest_name = si["digest_algorithm"]["algorithm"].native
    if digest_name not in sd.digests or digest_name not in _HASHES:
        problems.append(f"the signer's digest algorithm {digest_name} is not among the "
                        f"signature's digest algorithms")
        return
    if digest_name in _WEAK_HASHES:
        result.warnings.append(f"the signature uses {digest_name.upper()} (weak, but OpenSSL "
                               f"accepts it)")
    hash_cls = _HASHES[digest_name]
    attrs = si["signed_attrs"]
    if attrs.native:
        # With signed attributes the signature covers them (as a SET, as received) and
        # they carry the content's digest; without, it covers the content itself.
        digests = [a["values"][0].native for a in attrs if a["type"].native == "message_digest"]
        if not digests:
            problems.append("the signed attributes carry no message digest")
            return
        if digests[0] != hashlib.new(digest_name, content).digest():
            problems.append("content digest mismatch: the document was altered after signing")
        signed = _der_set(attrs.contents)
    else:
        signed = content
    if not chain.signature_ok(cert.public_key(), si["signature"].native, signed, hash_cls):
        problems.append("signature does not verify with the signer's public key")


def check_signed_document(content: bytes, filename: str, result: Verification,
                          line_offset: int | None = 0, target: str | None = None) -> None:
    """What an implementation loads from the signed part `content`: a text/plain entity
    whose body is a valid governance or permissions document (problems, kind and
    warnings go into `result`; `signature_ok` from the problems found before it).
    `content` starts after `line_offset` lines of the file, so problems name lines of the
    file, as `validate` does; None: it is not in the file (opaque signed data).
    `target` None (govkit's own checks of what it wrote): the document must load in every
    implementation the target table knows, so what the omg target warns about (domain 231:
    Cyclone DDS 0.10 refuses it) is a problem too; a target (`verify --target`, `sign
    --target` checking its own output): that target's verdict, as `validate --target`
    gives it, its warnings as warnings."""
    try:
        document, start = mime.text_body(content)
    except mime.MimeError as e:
        result.signature_ok = False   # PKCS7_TEXT: PKCS7_verify itself refuses it
        result.problems.append(f"signed part is not a text/plain MIME entity: {e} (sign with "
                               f"`openssl smime -sign -text`; DDS Security plugins verify "
                               f"with PKCS7_TEXT)")
        return
    # Everything said so far is about the signature: what OpenSSL (-text) decides.
    result.signature_ok = not result.problems
    nul = document.find(b"\0")
    if nul >= 0:  # Cyclone parses the document as a C string
        result.warnings.append(f"the signed document has a NUL byte after {nul} bytes; DDS "
                               f"Security plugins read only what precedes it")
        document = document[:nul]
    if mime.looks_like_mime(document):
        result.problems.append("the signed document is itself a MIME message (signed twice?), "
                               "not a governance or permissions document")
        return
    where = "line" if line_offset is not None else "line of the signed content"
    check = validate.check_bytes(document, filename, allow_smime=False,
                                 line_offset=(line_offset or 0) + content.count(b"\n", 0, start),
                                 target=target or PORTABLE_TARGET)
    def at(f) -> str:   # line and column: two findings on one line stay two lines
        return f"({where} {f.line}" + (f", column {f.column})" if f.column else ")")
    result.problems += [f"signed document is invalid: {f.message} {at(f)}"
                        for f in check.findings]
    if target is None:
        result.problems += [f"signed document is refused by an implementation: {f.message} "
                            f"{at(f)}" for f in check.warnings]
    else:
        result.warnings += [f"signed document: {f.message} {at(f)}"
                            for f in check.warnings]
    if check.valid and check.kind is not None:
        result.kind = check.kind.value


def verify_bytes(data: bytes, filename: str,
                 ca_cert: x509.Certificate | list[x509.Certificate],
                 now: dt.datetime | None = None, target: str | None = None) -> Verification:
    """Check a signed document against the Permissions CA (or every certificate of a CA
    file); never raises for bad input.

    OK means: OpenSSL's PKCS7_verify (as Cyclone DDS and Fast DDS call it) accepts the file
    with these certificates as the only trusted ones, and the document it extracts is a
    valid governance or permissions document that every implementation loads (`target`:
    valid as that target reads it, see check_signed_document). With several certificates,
    `first_only` holds what changes when only the first is trusted (Cyclone DDS 0.10).
    """
    trusted = [ca_cert] if isinstance(ca_cert, x509.Certificate) else list(ca_cert)
    now = now or dt.datetime.now(dt.UTC)
    result = _verdict(data, filename, trusted, now, target)
    if len(trusted) > 1:
        result.first_only = _verdict(data, filename, trusted[:1], now, target).problems
    return result


def _verdict(data: bytes, filename: str, trusted: list[x509.Certificate],
             now: dt.datetime, target: str | None = None) -> Verification:
    result = Verification(filename, ok=False,
                          trusted=[c.subject.rfc4514_string() for c in trusted])
    try:
        _verify(bytes(data), filename, trusted, now, result, target)
    except _Malformed as e:
        result.problems.append(f"malformed S/MIME: {e}")
    except _PARSER_ERRORS as e:  # what the ASN.1/X.509 parsers raise on hostile bytes
        result.problems.append(f"malformed S/MIME: {type(e).__name__}: {e}")
    result.ok = not result.problems
    if result.signature_ok is None:
        result.signature_ok = False
    return result


def _verify(data: bytes, filename: str, trusted: list[x509.Certificate], now: dt.datetime,
            result: Verification, target: str | None = None) -> None:
    nul = data.find(b"\0")
    if nul >= 0:  # Cyclone reads the file as a C string: it never sees past a NUL
        result.warnings.append(f"NUL byte at offset {nul}: DDS Security plugins read only "
                               f"the {nul} bytes before it")
        data = data[:nul]
    try:
        message = mime.read_smime(data)
        sd = _parse_signed_data(message.signature())
    except mime.MimeError as e:
        raise _Malformed(str(e)) from None
    # A detached signature covers the first MIME part (even if the PKCS#7 also carries
    # content); opaque signed data covers the content inside it.
    content = message.content.data if message.content is not None else sd.content
    if content is None:
        raise _Malformed("detached signature without the signed content")
    for si in sd.signer_infos:
        _check_signer_info(si, sd, content, trusted, now, result)
    lines_before = None if message.content is None else \
        data.count(b"\n", 0, message.content.offset)
    check_signed_document(content, filename, result, lines_before, target)


def verify_file(path: Path, ca_cert_path: Path | x509.Certificate | list[x509.Certificate],
                now: dt.datetime | None = None, target: str | None = None) -> Verification:
    """Verify one file against the Permissions CA (a certificate, several, or a PEM file:
    every certificate in it is trusted, see load_trusted); `target` as in verify_bytes.
    GovkitError (exit 2) if the file cannot be read."""
    ca = load_trusted(ca_cert_path) if isinstance(ca_cert_path, Path) else ca_cert_path
    data = read_input(path, MAX_SMIME_BYTES, "signed document")
    return verify_bytes(data, str(path), ca, now, target)
