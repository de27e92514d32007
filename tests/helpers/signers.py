"""Signer-certificate variants: who signs governance/permissions, and which certificate is
trusted as the Permissions CA. Shared by the OpenSSL and the Cyclone differential tests.

Each variant is (trusted CA, signer certificate and key, extra certificates to embed) and
the verdict OpenSSL's smime_sign checks give for it (stated here only as documentation;
the tests compare govkit with the real OpenSSL and the real Cyclone).
"""

from __future__ import annotations

import datetime as dt
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from asn1crypto import algos as asn1_algos
from asn1crypto import x509 as asn1_x509
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

from govkit.pki.testpki import TestPKI

NOW = dt.datetime.now(dt.UTC)
HOUR, DAY = dt.timedelta(hours=1), dt.timedelta(days=1)


def key_usage(ds=False, nr=False, ke=False, cert_sign=False) -> x509.KeyUsage:
    return x509.KeyUsage(digital_signature=ds, content_commitment=nr, key_encipherment=ke,
                         data_encipherment=False, key_agreement=False, key_cert_sign=cert_sign,
                         crl_sign=cert_sign, encipher_only=False, decipher_only=False)


CA_USAGE = key_usage(ds=True, cert_sign=True)


def make_cert(cn: str, issuer: tuple[x509.Certificate, object] | None = None, *,
              key_type: str = "ec", extensions: list | None = None, ca: bool | None = True,
              path_length: int | None = None, not_before: dt.datetime = NOW - HOUR,
              not_after: dt.datetime = NOW + 30 * DAY, hash_cls=hashes.SHA256,
              usage: x509.KeyUsage | None = CA_USAGE):
    """(certificate, key); self-signed unless `issuer` is given."""
    key = rsa.generate_private_key(65537, int(key_type[3:])) if key_type.startswith("rsa") \
        else ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "govkit variants")])
    issuer_cert, issuer_key = issuer or (None, key)
    builder = (x509.CertificateBuilder().subject_name(name)
               .issuer_name(issuer_cert.subject if issuer_cert else name)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(not_before).not_valid_after(not_after)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                              critical=False))
    if ca is not None:
        builder = builder.add_extension(x509.BasicConstraints(ca=ca, path_length=path_length),
                                        critical=True)
    if usage is not None:
        builder = builder.add_extension(usage, critical=True)
    for ext, critical in extensions or []:
        builder = builder.add_extension(ext, critical=critical)
    cert = builder.sign(issuer_key, hashes.SHA256())
    return (_resigned_sha1(cert, issuer_key) if hash_cls is hashes.SHA1 else cert), key


def _resigned_sha1(cert: x509.Certificate, issuer_key) -> x509.Certificate:
    """The same certificate signed with SHA-1 (cryptography no longer makes SHA-1
    certificates; OpenSSL still accepts them, so the tests need some)."""
    parsed = asn1_x509.Certificate.load(cert.public_bytes(serialization.Encoding.DER))
    rsa_key = isinstance(issuer_key, rsa.RSAPrivateKey)
    algorithm = asn1_algos.SignedDigestAlgorithm(
        {"algorithm": "sha1_rsa" if rsa_key else "sha1_ecdsa"})
    tbs = parsed["tbs_certificate"]
    tbs["signature"] = algorithm
    data = tbs.dump(force=True)
    signature = issuer_key.sign(data, padding.PKCS1v15(), hashes.SHA1()) if rsa_key \
        else issuer_key.sign(data, ec.ECDSA(hashes.SHA1()))
    parsed["signature_algorithm"] = algorithm
    parsed["signature_value"] = signature
    return x509.load_der_x509_certificate(parsed.dump(force=True))


@dataclass
class SignerVariant:
    name: str
    anchor: x509.Certificate          # the certificate trusted as the Permissions CA
    signer: x509.Certificate
    key: object
    chain: list[x509.Certificate] = field(default_factory=list)  # embedded as well

    def files(self, directory: Path) -> dict[str, Path]:
        directory.mkdir(parents=True, exist_ok=True)
        paths = {k: directory / f"{self.name}-{k}.pem" for k in ("anchor", "signer", "key",
                                                                 "chain")}
        paths["anchor"].write_bytes(_pem(self.anchor))
        paths["signer"].write_bytes(_pem(self.signer))
        paths["key"].write_bytes(self.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption()))
        paths["chain"].write_bytes(b"".join(_pem(c) for c in self.chain))
        return paths

    def sign(self, xml: Path, out: Path, *extra: str) -> Path:
        """`openssl smime -sign -text` with this signer (and its chain embedded)."""
        f = self.files(out.parent / "signers")
        certfile = ["-certfile", str(f["chain"])] if self.chain else []
        subprocess.run(["openssl", "smime", "-sign", "-text", "-md", "sha256", *extra,
                        "-signer", str(f["signer"]), "-inkey", str(f["key"]), *certfile,
                        "-in", str(xml), "-out", str(out)],
                       check=True, capture_output=True, timeout=30)
        return out


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def signer_variants(pki: TestPKI) -> list[SignerVariant]:
    """Signers around the PKI's Permissions CA: the CA itself, leaves it issued, CAs that
    are wrong in one way each (usage, constraints, time, key, hash, extensions)."""
    ca, ca_key = pki.certificate("permissions_ca"), pki.private_key("permissions_ca")
    out = [SignerVariant("permissions-ca", ca, ca, ca_key)]

    def self_signed(name: str, **kw) -> None:
        cert, key = make_cert(f"govkit {name}", **kw)
        out.append(SignerVariant(name, cert, cert, key))

    def leaf(name: str, issuer=(ca, ca_key), anchor=None, chain=(), **kw) -> None:
        kw.setdefault("ca", False)
        kw.setdefault("usage", key_usage(ds=True))
        cert, key = make_cert(f"govkit {name}", issuer, **kw)
        out.append(SignerVariant(name, anchor or ca, cert, key, list(chain)))

    # The Permissions CA as the signer, wrong in one way each.
    self_signed("ca-without-digital-signature", usage=key_usage(cert_sign=True))
    self_signed("ca-nonrepudiation-only", usage=key_usage(nr=True, cert_sign=True))
    self_signed("ca-false", ca=False, usage=key_usage(ds=True))
    self_signed("ca-without-basic-constraints", ca=None)
    self_signed("ca-without-key-usage", usage=None)
    self_signed("ca-expired", not_before=NOW - 10 * DAY, not_after=NOW - DAY)
    self_signed("ca-not-yet-valid", not_before=NOW + DAY, not_after=NOW + 10 * DAY)
    self_signed("ca-sha1", key_type="rsa2048", hash_cls=hashes.SHA1)
    self_signed("ca-rsa-1024", key_type="rsa1024")
    self_signed("ca-eku-server-auth", extensions=[(x509.ExtendedKeyUsage(
        [ExtendedKeyUsageOID.SERVER_AUTH]), False)])
    self_signed("ca-eku-email", extensions=[(x509.ExtendedKeyUsage(
        [ExtendedKeyUsageOID.EMAIL_PROTECTION]), False)])
    self_signed("ca-unknown-critical-extension", extensions=[(x509.UnrecognizedExtension(
        ObjectIdentifier("1.3.6.1.4.1.55555.1"), b"\x05\x00"), True)])
    # Another CA with the very same name as the Permissions CA (only the key differs).
    other_key = ec.generate_private_key(ec.SECP256R1())
    other = (x509.CertificateBuilder().subject_name(ca.subject).issuer_name(ca.subject)
             .public_key(other_key.public_key()).serial_number(x509.random_serial_number())
             .not_valid_before(NOW - HOUR).not_valid_after(NOW + 30 * DAY)
             .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
             .add_extension(CA_USAGE, critical=True).sign(other_key, hashes.SHA256()))
    out.append(SignerVariant("other-ca-same-name", ca, other, other_key))
    # Leaves the Permissions CA issued (Cyclone does not require the CA itself).
    leaf("leaf")
    leaf("leaf-without-extensions", ca=None, usage=None)
    leaf("leaf-nonrepudiation-only", usage=key_usage(nr=True))
    leaf("leaf-key-encipherment-only", usage=key_usage(ke=True))
    leaf("leaf-eku-client-auth", extensions=[(x509.ExtendedKeyUsage(
        [ExtendedKeyUsageOID.CLIENT_AUTH]), False)])
    leaf("leaf-eku-email", extensions=[(x509.ExtendedKeyUsage(
        [ExtendedKeyUsageOID.EMAIL_PROTECTION]), False)])
    leaf("leaf-expired", not_before=NOW - 10 * DAY, not_after=NOW - DAY)
    leaf("leaf-sha1", hash_cls=hashes.SHA1)
    leaf("leaf-rsa-1024", key_type="rsa1024")
    leaf("leaf-is-a-ca", ca=True, usage=CA_USAGE)
    # Leaves of CAs that may not issue them.
    no_sign_ca, no_sign_key = make_cert("govkit ca-without-cert-sign", usage=key_usage(ds=True))
    leaf("leaf-of-ca-without-cert-sign", (no_sign_ca, no_sign_key), no_sign_ca)
    false_ca, false_key = make_cert("govkit ca-false-issuer", ca=False,
                                    usage=key_usage(ds=True, cert_sign=True))
    leaf("leaf-of-ca-false", (false_ca, false_key), false_ca)
    # Chains through an intermediate carried in the signature.
    inter, inter_key = make_cert("govkit intermediate", (ca, ca_key))
    leaf("leaf-via-intermediate-under-pathlen-0", (inter, inter_key), chain=[inter])
    open_ca, open_key = make_cert("govkit open ca")   # no path length limit
    inter2, inter2_key = make_cert("govkit intermediate 2", (open_ca, open_key))
    leaf("leaf-via-intermediate", (inter2, inter2_key), open_ca, chain=[inter2])
    leaf("leaf-via-intermediate-not-embedded", (inter2, inter2_key), open_ca)
    return out
