"""S/MIME signing of governance and permissions documents.

Signing uses pyca/cryptography's PKCS7 builder for the CMS, and lays the MIME out byte for
byte as `openssl smime -sign -text -md sha256` does (detached multipart/signed, the signed
part starting with "Content-Type: text/plain" and canonicalised to CRLF line ends), which is
what DDS Security implementations read (Cyclone: SMIME_read_PKCS7 + PKCS7_verify with
PKCS7_TEXT). It signs only what it can sign correctly: a valid plain-XML governance or
permissions document, in UTF-8, with a key that matches its certificate; and it checks
its own output with govkit.smime.verify before writing it.
"""


from __future__ import annotations

import base64
import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import pkcs7

from govkit.catalog.targets import DEFAULT_TARGET
from govkit.check import validate
from govkit.common.errors import EXIT_INVALID, EXIT_USAGE, GovkitError
from govkit.common.findings import Finding, one_line
from govkit.common.fsutil import collect_files, write_atomic
from govkit.common.inputs import read_input
from govkit.common.limits import MAX_DOCUMENT_BYTES, MAX_SMIME_BYTES
from govkit.documents import mime
from govkit.documents.parse import declared_encoding
from govkit.pki.testpki import load_certificate, load_private_key
from govkit.smime.verify import verify_bytes

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
                  signer: Signer | None = None, target: str = DEFAULT_TARGET) -> Path:
    """Validate `xml_path` (as `target` reads it: `validate --target`), sign it, write
    `<name>.p7s` beside it. Refused (GovkitError, exit 1) for anything that is not a valid
    plain-XML document in UTF-8."""
    xml_path = Path(xml_path)
    signer = signer or load_signer(signer_cert_path, signer_key_path)
    content = read_input(xml_path, MAX_DOCUMENT_BYTES, "document")
    check_signable(content, xml_path, target=target)
    signed = sign_bytes(content, signer.certificate, signer.key)
    check_own_signature(signed, xml_path, signer.certificate, target=target)
    out = signed_path(xml_path)
    write_atomic(out, signed)
    return out


def signature_of_unchanged(xml_path: Path, content: bytes, ca_cert: x509.Certificate
                           ) -> bytes | None:
    """The bytes of the .p7s beside `xml_path` when it already signs exactly `content`
    (the .xml holds those bytes, the .p7s verifies against the Permissions CA as OpenSSL
    would and its signed text is `content`'s); None otherwise. An S/MIME signature carries
    its signing time and ECDSA draws a fresh nonce, so signing unchanged bytes again makes
    another file: a regenerated project, and an archive of it, stay byte-identical only if
    it is kept."""
    p7s = signed_path(xml_path)
    try:
        if read_input(xml_path, MAX_DOCUMENT_BYTES) != content:
            return None
        signed = read_input(p7s, MAX_SMIME_BYTES, "signed document")
    except GovkitError:
        return None   # missing or unreadable: signed again
    if not verify_bytes(signed, str(p7s), ca_cert).ok:
        return None
    inner = validate.signed_document(signed, str(p7s))
    return signed if inner.data == mime.signed_text(content) else None


def _refusal(xml_path: Path, reason: str) -> GovkitError:
    return GovkitError(f"{one_line(xml_path)}: not signed: {reason}", exit_code=EXIT_INVALID)


def check_signable(content: bytes, xml_path: Path, validated: bool = False,
                   target: str = DEFAULT_TARGET) -> bytes:
    """Refuse (GovkitError, exit 1) what cannot be signed correctly: anything but a valid
    plain-XML governance or permissions document in UTF-8, valid as `target` reads it (the
    verdict of `govkit validate --target`). Returns the text that is signed (`content` with
    CRLF line ends). `validated`: the caller has just validated these very bytes (a
    document it rendered), so that step is skipped."""
    return signable_text(content, xml_path, validated, target)[0]


def signable_text(content: bytes, xml_path: Path, validated: bool = False,
                  target: str = DEFAULT_TARGET) -> tuple[bytes, list[Finding]]:
    """check_signable, and the warnings validation gave under `target` (what another
    implementation refuses: signed all the same, as `validate` calls it valid)."""
    text, check = signable_check(content, xml_path, validated, target)
    return text, check.warnings if check is not None else []


def signable_check(content: bytes, xml_path: Path, validated: bool = False,
                   target: str = DEFAULT_TARGET
                   ) -> tuple[bytes, validate.DocumentCheck | None]:
    """signable_text, with validation's whole verdict: the document's kind and parsed
    tree besides the warnings (None when `validated`: nothing was checked here)."""
    if mime.looks_like_mime(content):
        raise _refusal(xml_path, "this is already a MIME (S/MIME) message, not a plain XML "
                                 "document")
    problem = _encoding_problem(content)
    if problem:
        raise _refusal(xml_path, problem)
    check = None if validated else validate.check_bytes(content, str(xml_path),
                                                        allow_smime=False, target=target)
    if check is not None and check.findings:
        raise GovkitError("\n".join(map(str, check.findings)) +
                          f"\n{one_line(xml_path)}: not signed: the document is invalid",
                          exit_code=EXIT_INVALID)
    text = mime.signed_text(content)
    if len(text) > MAX_DOCUMENT_BYTES:
        raise _refusal(xml_path, f"with CRLF line ends the document exceeds "
                                 f"{MAX_DOCUMENT_BYTES} bytes")
    return text, check


def check_own_signature(signed: bytes, xml_path: Path, signer_cert: x509.Certificate,
                        now: dt.datetime | None = None, target: str = DEFAULT_TARGET) -> None:
    """Refuse (GovkitError, exit 1) a signed file `verify` would not accept, e.g. one
    signed by an expired CA or one without digitalSignature; the document as `target`
    reads it (the one `sign --target` validated)."""
    check = verify_bytes(signed, str(signed_path(xml_path)), signer_cert, now, target)
    if not check.ok:
        raise _refusal(xml_path, f"the signature would not verify: {'; '.join(check.problems)}")


def sign_paths(paths: list[Path], signer_cert_path: Path, signer_key_path: Path,
               target: str = DEFAULT_TARGET) -> tuple[list[Path], list[GovkitError]]:
    """Sign every .xml named or found below named directories. Returns (signed, errors);
    an invalid (exit code 1) or unreadable (2) document is reported and skipped."""
    signer = load_signer(signer_cert_path, signer_key_path)
    signed, errors = [], []
    for xml in collect_files(paths, ".xml"):
        try:
            signed.append(sign_document(xml, signer_cert_path, signer_key_path, signer,
                                        target))
        except GovkitError as e:
            errors.append(e)
    return signed, errors
