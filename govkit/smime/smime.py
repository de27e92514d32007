"""S/MIME signing and verification of governance and permissions documents.

Signing uses pyca/cryptography's PKCS7 builder for the CMS, and lays the MIME out byte for
byte as `openssl smime -sign -text -md sha256` does (detached multipart/signed, the signed
part starting with "Content-Type: text/plain" and canonicalised to CRLF line ends), which is
what DDS Security implementations read (Cyclone: SMIME_read_PKCS7 + PKCS7_verify with
PKCS7_TEXT). It signs only what it can sign correctly: a valid plain-XML governance or
permissions document, in UTF-8, with a key that matches its certificate; and it checks
its own output with `verify` before writing it.

Verification decides what OpenSSL's PKCS7_verify(PKCS7_TEXT) decides with the Permissions
CA as the only trusted certificate, which is what Cyclone DDS decides, on a separate code
path: govkit.documents.mime reads the MIME as OpenSSL does, asn1crypto parses the PKCS#7, and
govkit.smime.chain checks the signer's certificate as OpenSSL does. Then the document the
implementation would load is validated (schema and lint).
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from asn1crypto import cms
from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import dsa, ec, padding, rsa
from cryptography.hazmat.primitives.serialization import pkcs7

from govkit.check import validate as schema
from govkit.common.errors import EXIT_INVALID, EXIT_USAGE, GovkitError
from govkit.common.fsutil import collect_files, write_atomic
from govkit.common.inputs import read_input
from govkit.common.limits import MAX_DOCUMENT_BYTES, MAX_SMIME_BYTES
from govkit.documents import mime
from govkit.documents.parse import declared_encoding
from govkit.pki.testpki import load_certificate, load_private_key
from govkit.smime import chain

TEXT_HEADER = b"Content-Type: text/plain\r\n\r\n"


# ---------------------------------------------------------------- keys and certificates


@dataclass(frozen=True)
class Signer:
    certificate: x509.Certificate
    key: object
    cert_path: Path


def load_signer(cert_path: Path, key_path: Path) -> Signer:
    """The Permissions CA (or any signer) for `sign`, refused unless it can sign: a key that
    belongs to the certificate, of a type PKCS#7 signing supports."""
    cert, key = load_certificate(cert_path), load_private_key(key_path)
    if not isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
        raise GovkitError(f"{key_path}: a {type(key).__name__} cannot sign S/MIME here; "
                          f"use an EC or RSA key", EXIT_USAGE)
    if key.public_key() != cert.public_key():
        raise GovkitError(f"{key_path}: this private key does not belong to the certificate "
                          f"{cert_path}; signatures made with it would never verify",
                          EXIT_USAGE)
    return Signer(cert, key, Path(cert_path))


# ---------------------------------------------------------------- signing


def sign_bytes(content: bytes, signer_cert: x509.Certificate, signer_key) -> bytes:
    """Detached S/MIME (SHA-256) of `content` as text/plain, laid out like OpenSSL's."""
    signed_part = TEXT_HEADER + mime.signed_text(content)
    der = (pkcs7.PKCS7SignatureBuilder()
           .set_data(signed_part)
           .add_signer(signer_cert, signer_key, hashes.SHA256())
           .sign(serialization.Encoding.DER,
                 [pkcs7.PKCS7Options.DetachedSignature, pkcs7.PKCS7Options.Binary]))
    return smime_message(signed_part, der)


def smime_message(signed_part: bytes, der: bytes, boundary: str | None = None) -> bytes:
    """The file `openssl smime -sign -text` writes: `signed_part` (the text/plain entity
    that was signed) and the DER signature as a detached multipart/signed message, with a
    random boundary unless one is given."""
    boundary = boundary or "----" + os.urandom(16).hex().upper()
    b64 = base64.b64encode(der).decode()
    b64_lines = "\n".join(b64[i:i + 64] for i in range(0, len(b64), 64))
    head = (f'MIME-Version: 1.0\nContent-Type: multipart/signed; '
            f'protocol="application/x-pkcs7-signature"; micalg="sha-256"; '
            f'boundary="{boundary}"\n\nThis is an S/MIME signed message\n\n--{boundary}\n')
    tail = (f'\n--{boundary}\nContent-Type: application/x-pkcs7-signature; name="smime.p7s"\n'
            f'Content-Transfer-Encoding: base64\n'
            f'Content-Disposition: attachment; filename="smime.p7s"\n\n'
            f'{b64_lines}\n\n--{boundary}--\n\n')
    return head.encode() + signed_part + tail.encode()


def signed_path(xml_path: Path) -> Path:
    return Path(xml_path).with_suffix(".p7s")


def _encoding_problem(content: bytes) -> str | None:
    """Why `content` cannot be signed as it is, encoding-wise (None if it can).

    Implementations read the signed bytes as UTF-8 text (Cyclone's XML parser ignores the
    encoding declaration and stops at a NUL), and signing rewrites line ends byte-wise, which
    would corrupt UTF-16 or UTF-32. govkit does not transcode: it asks for UTF-8.
    """
    if content.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\0" in content:
        return ("the document is not UTF-8 (UTF-16 or UTF-32?); signing would corrupt it and "
                "DDS Security implementations read UTF-8: convert it to UTF-8 first")
    try:
        content.decode("utf-8")
    except UnicodeDecodeError as e:
        return (f"the document is not valid UTF-8 (byte {e.start}); DDS Security "
                f"implementations read UTF-8: convert it to UTF-8 first")
    declared = declared_encoding(content)
    if declared and declared.lower() not in ("utf-8", "utf8", "us-ascii", "ascii"):
        return (f"the document declares encoding {declared!r}; DDS Security implementations "
                f"ignore that and read UTF-8: convert it and declare UTF-8")
    return None


def sign_document(xml_path: Path, signer_cert_path: Path, signer_key_path: Path,
                  signer: Signer | None = None) -> Path:
    """Validate `xml_path`, sign it, write `<name>.p7s` beside it. Refused (GovkitError,
    exit 1) for anything that is not a valid plain-XML document in UTF-8."""
    xml_path = Path(xml_path)
    signer = signer or load_signer(signer_cert_path, signer_key_path)
    content = read_input(xml_path, MAX_DOCUMENT_BYTES, "document")
    check_signable(content, xml_path)
    signed = sign_bytes(content, signer.certificate, signer.key)
    check_own_signature(signed, xml_path, signer.certificate)
    out = signed_path(xml_path)
    write_atomic(out, signed)
    return out


def _refusal(xml_path: Path, reason: str) -> GovkitError:
    return GovkitError(f"{xml_path}: not signed: {reason}", exit_code=EXIT_INVALID)


def check_signable(content: bytes, xml_path: Path, validated: bool = False) -> bytes:
    """Refuse (GovkitError, exit 1) what cannot be signed correctly: anything but a valid
    plain-XML governance or permissions document in UTF-8. Returns the text that is
    signed (`content` with CRLF line ends). `validated`: the caller has just validated
    these very bytes (a document it rendered), so that step is skipped."""
    if mime.looks_like_mime(content):
        raise _refusal(xml_path, "this is already a MIME (S/MIME) message, not a plain XML "
                                 "document")
    problem = _encoding_problem(content)
    if problem:
        raise _refusal(xml_path, problem)
    findings = [] if validated else schema.validate_bytes(content, str(xml_path),
                                                         allow_smime=False)
    if findings:
        raise GovkitError("\n".join(map(str, findings)) + f"\n{xml_path}: not signed: the "
                          f"document is invalid", exit_code=EXIT_INVALID)
    text = mime.signed_text(content)
    if len(text) > MAX_DOCUMENT_BYTES:
        raise _refusal(xml_path, f"with CRLF line ends the document exceeds "
                                 f"{MAX_DOCUMENT_BYTES} bytes")
    return text


def check_own_signature(signed: bytes, xml_path: Path, signer_cert: x509.Certificate,
                        now: dt.datetime | None = None) -> None:
    """Refuse (GovkitError, exit 1) a signed file `verify` would not accept, e.g. one
    signed by an expired CA or one without digitalSignature."""
    check = verify_bytes(signed, str(signed_path(xml_path)), signer_cert, now)
    if not check.ok:
        raise _refusal(xml_path, f"the signature would not verify: {'; '.join(check.problems)}")


def sign_paths(paths: list[Path], signer_cert_path: Path, signer_key_path: Path
               ) -> tuple[list[Path], list[GovkitError]]:
    """Sign every .xml named or found below named directories. Returns (signed, errors);
    an invalid (exit code 1) or unreadable (2) document is reported and skipped."""
    signer = load_signer(signer_cert_path, signer_key_path)
    signed, errors = [], []
    for xml in collect_files(paths, ".xml"):
        try:
            signed.append(sign_document(xml, signer_cert_path, signer_key_path, signer))
        except GovkitError as e:
            errors.append(e)
    return signed, errors


# ---------------------------------------------------------------- verification

@dataclass
class Verification:
    file: str
    ok: bool
    problems: list[str] = field(default_factory=list)
    signer: str | None = None
    kind: str | None = None
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"file": self.file, "ok": self.ok, "problems": self.problems,
                "signer": self.signer, "kind": self.kind, "warnings": self.warnings}


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


def _signature_ok(cert: x509.Certificate, signature: bytes, data: bytes, hash_cls) -> bool:
    key = cert.public_key()
    try:
        if isinstance(key, rsa.RSAPublicKey):
            key.verify(signature, data, padding.PKCS1v15(), hash_cls())
        elif isinstance(key, ec.EllipticCurvePublicKey):
            key.verify(signature, data, ec.ECDSA(hash_cls()))
        elif isinstance(key, dsa.DSAPublicKey):
            key.verify(signature, data, hash_cls())
        else:  # PKCS#7 signer infos exist for RSA, EC and DSA keys only
            return False
        return True
    except (InvalidSignature, ValueError, TypeError, UnsupportedAlgorithm):
        return False


def _check_signer_info(si, sd: _SignedData, content: bytes, ca: x509.Certificate,
                       now: dt.datetime, result: Verification) -> None:
    problems = result.problems
    cert = _find_signer(si, sd.certificates)
    if cert is None:
        problems.append("the signer's certificate is not in the signature (signed with "
                        "-nocerts?); OpenSSL and Cyclone DDS find the signer only there")
        return
    result.signer = result.signer or cert.subject.rfc4514_string()
    problems += chain.check_signer(cert, sd.certificates, ca, now)
    for c in (cert, ca):
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
    if not _signature_ok(cert, si["signature"].native, signed, hash_cls):
        problems.append("signature does not verify with the signer's public key")


def check_signed_document(content: bytes, filename: str, result: Verification) -> None:
    """What an implementation loads from the signed part `content`: a text/plain entity
    whose body is a valid governance or permissions document (problems, kind and
    warnings go into `result`)."""
    try:
        document, _ = mime.text_body(content)
    except mime.MimeError as e:
        result.problems.append(f"signed part is not a text/plain MIME entity: {e} (sign with "
                               f"`openssl smime -sign -text`; DDS Security plugins verify "
                               f"with PKCS7_TEXT)")
        return
    nul = document.find(b"\0")
    if nul >= 0:  # Cyclone parses the document as a C string
        result.warnings.append(f"the signed document has a NUL byte after {nul} bytes; DDS "
                               f"Security plugins read only what precedes it")
        document = document[:nul]
    if mime.looks_like_mime(document):
        result.problems.append("the signed document is itself a MIME message (signed twice?), "
                               "not a governance or permissions document")
        return
    check = schema.check_bytes(document, filename, allow_smime=False)
    result.problems += [f"signed document is invalid: {f.message} (line {f.line})"
                        for f in check.findings]
    if check.valid and check.kind is not None:
        result.kind = check.kind.value


def verify_bytes(data: bytes, filename: str, ca_cert: x509.Certificate,
                 now: dt.datetime | None = None) -> Verification:
    """Check a signed document against the Permissions CA; never raises for bad input.

    OK means: OpenSSL's PKCS7_verify (as Cyclone DDS calls it) accepts the file with this
    CA as the only trusted certificate, and the document it extracts is a valid governance
    or permissions document.
    """
    result = Verification(filename, ok=False)
    now = now or dt.datetime.now(dt.UTC)
    try:
        _verify(bytes(data), filename, ca_cert, now, result)
    except _Malformed as e:
        result.problems.append(f"malformed S/MIME: {e}")
    except _PARSER_ERRORS as e:  # what the ASN.1/X.509 parsers raise on hostile bytes
        result.problems.append(f"malformed S/MIME: {type(e).__name__}: {e}")
    result.ok = not result.problems
    return result


def _verify(data: bytes, filename: str, ca: x509.Certificate, now: dt.datetime,
            result: Verification) -> None:
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
        _check_signer_info(si, sd, content, ca, now, result)
    check_signed_document(content, filename, result)


def verify_file(path: Path, ca_cert_path: Path | x509.Certificate,
                now: dt.datetime | None = None) -> Verification:
    """Verify one file against the Permissions CA (a certificate or its PEM file).
    GovkitError (exit 2) if the file cannot be read."""
    ca = ca_cert_path if isinstance(ca_cert_path, x509.Certificate) else \
        load_certificate(ca_cert_path, "Permissions CA certificate")
    data = read_input(path, MAX_SMIME_BYTES, "signed document")
    return verify_bytes(data, str(path), ca, now)
