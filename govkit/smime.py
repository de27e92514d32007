"""S/MIME signing and verification of governance and permissions documents.

Signing uses pyca/cryptography's PKCS7 builder for the CMS, and lays the MIME out byte for
byte as `openssl smime -sign -text -md sha256` does (detached multipart/signed, the signed
part starting with "Content-Type: text/plain" and using CRLF line ends), which is what DDS
Security implementations parse (Cyclone: SMIME_read_PKCS7 + PKCS7_verify(PKCS7_TEXT)).

Verification does not share that code path: it parses the MIME and the CMS itself (with
asn1crypto), recomputes the content digest, checks the signature over the signed attributes,
checks that the signer is the Permissions CA or is issued by it, that it is within its
validity, and that the signed body is a valid document.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from asn1crypto import cms
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.serialization import pkcs7

from . import schema
from .errors import EXIT_USAGE, GovkitError
from .fsutil import write_atomic

TEXT_HEADER = b"Content-Type: text/plain\r\n\r\n"
# A signed part's MIME headers, the first being Content-Type: text/plain (any parameters).
_TEXT_ENTITY = re.compile(rb"(?i)content-type:[ \t]*text/plain[^\r\n]*\r\n"
                          rb"(?:[^\r\n]+\r\n)*\r\n")


def _crlf(data: bytes) -> bytes:
    # OpenSSL (and so Cyclone) canonicalises any run of CRs before LF to one CRLF.
    return re.sub(rb"\r*\n", b"\r\n", data)


def sign_bytes(content: bytes, signer_cert: x509.Certificate, signer_key) -> bytes:
    """Detached S/MIME (SHA-256) of `content` as text/plain, laid out like OpenSSL's."""
    signed_part = TEXT_HEADER + _crlf(content)
    der = (pkcs7.PKCS7SignatureBuilder()
           .set_data(signed_part)
           .add_signer(signer_cert, signer_key, hashes.SHA256())
           .sign(serialization.Encoding.DER,
                 [pkcs7.PKCS7Options.DetachedSignature, pkcs7.PKCS7Options.Binary]))
    boundary = "----" + os.urandom(16).hex().upper()
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


def sign_document(xml_path: Path, signer_cert_path: Path, signer_key_path: Path) -> Path:
    """Validate `xml_path`, sign it, write `<name>.p7s` beside it. Invalid documents raise."""
    xml_path = Path(xml_path)
    try:
        content = xml_path.read_bytes()
    except OSError as e:
        raise GovkitError(f"{xml_path}: cannot read: {e.strerror}") from None
    findings = schema.validate_bytes(content, str(xml_path))
    if findings:
        raise GovkitError("\n".join(map(str, findings)) + "\nnot signed: the document is invalid",
                          exit_code=1)
    cert = x509.load_pem_x509_certificate(Path(signer_cert_path).read_bytes())
    key = serialization.load_pem_private_key(Path(signer_key_path).read_bytes(), None)
    out = signed_path(xml_path)
    write_atomic(out, sign_bytes(content, cert, key))
    return out


# ---------------------------------------------------------------- verification

@dataclass
class Verification:
    file: str
    ok: bool
    problems: list[str] = field(default_factory=list)
    signer: str | None = None
    kind: str | None = None

    def to_json(self) -> dict:
        return {"file": self.file, "ok": self.ok, "problems": self.problems,
                "signer": self.signer, "kind": self.kind}


_HASHES = {"sha256": hashes.SHA256, "sha384": hashes.SHA384, "sha512": hashes.SHA512}


def _split_headers(part: bytes) -> tuple[bytes, bytes]:
    """(headers, body) of a MIME entity; LF or CRLF line ends."""
    m = re.search(rb"\r*\n\r*\n", part)
    return (part, b"") if not m else (part[:m.start()], part[m.end():])


def split_multipart_signed(data: bytes) -> tuple[bytes, bytes]:
    """(signed part exactly as transmitted, DER signature) of a multipart/signed message."""
    head, rest = _split_headers(data)
    m = re.search(rb'boundary="?([^";\r\n]+)"?', head, re.IGNORECASE)
    if not rest or not re.search(rb"multipart/signed", head, re.IGNORECASE) or not m:
        raise ValueError("not an S/MIME multipart/signed message")
    delim = re.escape(b"--" + m.group(1))
    # The line break before a delimiter belongs to the delimiter (RFC 2046 5.1.1).
    parts = re.split(rb"(?:\r*\n|^)" + delim + rb"(?:--)?[ \t]*(?:\r*\n|$)", rest)
    if len(parts) < 3:  # preamble, signed content, signature part (, epilogue)
        raise ValueError("multipart/signed message has fewer than two parts")
    signed, (sig_head, sig_body) = parts[1], _split_headers(parts[2])
    if b"pkcs7-signature" not in sig_head.lower():
        raise ValueError("second part is not an application/(x-)pkcs7-signature")
    try:
        der = base64.b64decode(re.sub(rb"\s+", b"", sig_body), validate=True)
    except ValueError:
        raise ValueError("signature part is not valid base64") from None
    return signed, der


def _verify_signature(pubkey, signature: bytes, data: bytes, hash_cls) -> None:
    if isinstance(pubkey, ec.EllipticCurvePublicKey):
        pubkey.verify(signature, data, ec.ECDSA(hash_cls()))
    elif isinstance(pubkey, rsa.RSAPublicKey):
        pubkey.verify(signature, data, padding.PKCS1v15(), hash_cls())
    else:
        raise InvalidSignature("unsupported signer key type")


def _verify_issued_by(cert: x509.Certificate, issuer: x509.Certificate) -> bool:
    if cert.issuer != issuer.subject:
        return False
    try:
        cert.verify_directly_issued_by(issuer)
        return True
    except (ValueError, TypeError, InvalidSignature):
        return False


def verify_bytes(data: bytes, filename: str, ca_cert: x509.Certificate,
                 now: dt.datetime | None = None) -> Verification:
    """Check a signed document against the Permissions CA; never raises for bad input.

    Note: the spec (and govkit) accept a signer issued by the Permissions CA; Cyclone DDS
    0.10 verifies with PKCS7_NOINTERN and only the CA certificate, so it accepts documents
    signed by the Permissions CA itself only, which is what govkit signs with.
    """
    result = Verification(filename, ok=False)
    try:
        _verify(data, filename, ca_cert, now or dt.datetime.now(dt.UTC), result)
    except Exception as e:  # noqa: BLE001 - hostile bytes can break any parser layer
        result.problems.append(f"malformed S/MIME: {type(e).__name__}: {e}")
    result.ok = not result.problems
    return result


def _verify(data: bytes, filename: str, ca_cert: x509.Certificate, now: dt.datetime,
            result: Verification) -> None:
    problems = result.problems
    try:
        signed, der = split_multipart_signed(data)
        content_info = cms.ContentInfo.load(der)
        if content_info["content_type"].native != "signed_data":
            raise ValueError("CMS content is not SignedData")
        sd = content_info["content"]
        signer_infos = sd["signer_infos"]
        if len(signer_infos) != 1:
            raise ValueError(f"expected one signer, found {len(signer_infos)}")
        si = signer_infos[0]
        certs = [x509.load_der_x509_certificate(c.chosen.dump()) for c in sd["certificates"]
                 if c.name == "certificate"] if sd["certificates"].native else []
    except (ValueError, TypeError, KeyError) as e:
        problems.append(f"malformed S/MIME: {e}")
        return

    # Which certificate signed? (issuer + serial, or subject key identifier)
    sid = si["sid"]
    signer = None
    for c in certs + [ca_cert]:
        if sid.name == "issuer_and_serial_number":
            if (c.serial_number == sid.chosen["serial_number"].native
                    and c.issuer.public_bytes() == sid.chosen["issuer"].dump()):
                signer = c
                break
        else:
            try:
                ski = c.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
                if ski.digest == sid.chosen.native:
                    signer = c
                    break
            except x509.ExtensionNotFound:
                continue
    if signer is None:
        problems.append("the signer's certificate is not in the signature")
        return
    result.signer = signer.subject.rfc4514_string()

    digest_name = si["digest_algorithm"]["algorithm"].native
    if digest_name not in _HASHES:
        problems.append(f"digest algorithm {digest_name} is not accepted (use sha256 or better)")
        return
    hash_cls = _HASHES[digest_name]
    canonical = _crlf(signed)
    attrs = si["signed_attrs"]
    if not attrs.native:
        problems.append("the signature has no signed attributes")
        return
    by_type = {a["type"].native: a["values"][0].native for a in attrs}
    digest = hashlib.new(digest_name, canonical).digest()
    if by_type.get("message_digest") != digest:
        problems.append("content digest mismatch: the document was altered after signing")
    if by_type.get("content_type") != "data":
        problems.append("signed content type is not 'data'")
    try:
        # The signature covers the DER of the signed attributes as a SET (RFC 5652 5.4).
        attrs_der = cms.CMSAttributes(list(attrs)).dump(force=True)
        attrs_der = b"\x31" + attrs_der[1:]
        _verify_signature(signer.public_key(), si["signature"].native, attrs_der, hash_cls)
    except InvalidSignature:
        problems.append("signature does not verify with the signer's public key")

    if signer != ca_cert and not _verify_issued_by(signer, ca_cert):
        problems.append(f"signer {result.signer} is not the Permissions CA "
                        f"({ca_cert.subject.rfc4514_string()}) and is not issued by it")
    for who, cert in (("signer", signer), ("Permissions CA", ca_cert)):
        if now < cert.not_valid_before_utc:
            problems.append(f"{who} certificate is not valid before "
                            f"{cert.not_valid_before_utc.isoformat()}")
        if now > cert.not_valid_after_utc:
            problems.append(f"{who} certificate expired on {cert.not_valid_after_utc.isoformat()}")

    # The signed part must be a text/plain MIME entity: Cyclone verifies with PKCS7_TEXT,
    # which refuses content signed without `-text`, and so do we.
    m = _TEXT_ENTITY.match(canonical)
    if not m:
        problems.append("signed part is not a text/plain MIME entity (sign with "
                        "`openssl smime -sign -text`; DDS Security plugins verify with "
                        "PKCS7_TEXT)")
        return
    body = canonical[m.end():]
    findings = schema.validate_bytes(body.replace(b"\r\n", b"\n"), filename)
    problems.extend(f"signed document is invalid: {f.message} (line {f.line})" for f in findings)
    if not findings:
        try:
            result.kind = schema.document_kind(
                schema.parse_document(body, filename)).value
        except schema.DocumentError:
            pass


def verify_file(path: Path, ca_cert_path: Path, now: dt.datetime | None = None) -> Verification:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise GovkitError(f"{path}: cannot read: {e.strerror}", EXIT_USAGE) from None
    try:
        ca = x509.load_pem_x509_certificate(Path(ca_cert_path).read_bytes())
    except OSError as e:
        raise GovkitError(f"{ca_cert_path}: cannot read: {e.strerror}", EXIT_USAGE) from None
    except ValueError:
        raise GovkitError(f"{ca_cert_path}: not a PEM certificate", EXIT_USAGE) from None
    return verify_bytes(data, str(path), ca, now)


def sign_paths(paths: list[Path], signer_cert_path: Path, signer_key_path: Path
               ) -> tuple[list[Path], list[str]]:
    """Sign every .xml named or found below named directories. Returns (signed, errors);
    an invalid or unreadable document is reported and skipped, never signed."""
    from .fsutil import collect_files

    signed, errors = [], []
    for xml in collect_files(paths, ".xml"):
        try:
            signed.append(sign_document(xml, signer_cert_path, signer_key_path))
        except GovkitError as e:
            errors.append(str(e))
    return signed, errors
