"""A test PKI for DDS Security: an Identity CA, a *separate* Permissions CA, and participants.

Separate CAs matter: with one CA, any participant holding an identity could also sign
its own permissions document (sros2 issue #282). RTI Perftest can only take one CA, so
`single_ca=True` makes one CA serve both roles, for that runner only.

Files are flat in the PKI directory:
  identity_ca.pem/.key, permissions_ca.pem/.key, <participant>.pem/.key
Keys are written atomically with mode 0600 and never overwritten unless `force`.

Vendor notes (Cyclone DDS 0.10):
- identities must be RSA-2048 or EC P-256; nothing else is accepted;
- the CA that signs governance/permissions needs keyUsage digitalSignature, not only
  keyCertSign, or the S/MIME signer is refused;
- subject names are split on ',', '/', '|' and '+' and spaces are not trimmed, so our
  names contain none of those characters inside values.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from .errors import GovkitError
from .fsutil import write_atomic

KEY_TYPES = ("ec-p256", "rsa-2048")  # the two identity key types Cyclone DDS 0.10 accepts
DEFAULT_PARTICIPANTS = ("pub", "sub")
# Backdate not_before (certificates, and permissions validity, which follows the
# certificate): a slightly-behind peer agrees, and so does Fast DDS 2.9, which reads the
# permissions dates as *local* time (mktime): in any zone (UTC-12 .. UTC+14) a day covers it.
CLOCK_SKEW = dt.timedelta(days=1)
ORGANIZATION = "govkit test PKI"
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
_CA_FILES = ("identity_ca", "permissions_ca")


def _new_key(key_type: str):
    if key_type == "ec-p256":
        return ec.generate_private_key(ec.SECP256R1())
    if key_type == "rsa-2048":
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    raise GovkitError(f"unknown key type {key_type!r}; valid: {', '.join(KEY_TYPES)}")


def _name(common_name: str) -> x509.Name:
    return x509.Name([
        x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORGANIZATION),
    ])


def _builder(subject: x509.Name, issuer: x509.Name, public_key, days: int,
             now: dt.datetime) -> x509.CertificateBuilder:
    return (x509.CertificateBuilder()
            .subject_name(subject).issuer_name(issuer).public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - CLOCK_SKEW)
            .not_valid_after(now + dt.timedelta(days=days))
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False))


def _make_ca(common_name: str, key_type: str, days: int, now: dt.datetime):
    key = _new_key(key_type)
    name = _name(common_name)
    cert = (_builder(name, name, key.public_key(), days, now)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(
                digital_signature=True,  # Cyclone 0.10 refuses an S/MIME signer without it
                key_cert_sign=True, crl_sign=True, content_commitment=False,
                key_encipherment=False, data_encipherment=False, key_agreement=False,
                encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(key.public_key()),
                           critical=False)
            .sign(key, hashes.SHA256()))
    return cert, key


def _make_leaf(common_name: str, ca_cert, ca_key, key_type: str, days: int, now: dt.datetime):
    key = _new_key(key_type)
    ski = ca_cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    cert = (_builder(_name(common_name), ca_cert.subject, key.public_key(), days, now)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(
                digital_signature=True, key_agreement=key_type.startswith("ec"),
                key_encipherment=key_type.startswith("rsa"), content_commitment=False,
                data_encipherment=False, key_cert_sign=False, crl_sign=False,
                encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH,
                                                  ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    return cert, key


def _pem(cert) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def subject_rfc2253(cert: x509.Certificate) -> str:
    """The subject exactly as a permissions <subject_name> must state it (RFC 2253 order).

    Cyclone 0.10 compares it without trimming spaces, so we emit no spaces around '='/','.
    """
    return cert.subject.rfc4514_string()


@dataclass(frozen=True)
class TestPKI:
    """A PKI directory on disk. `load` reads one; `init_pki` creates or extends one."""
    directory: Path

    __test__ = False  # not a pytest test class

    def __post_init__(self):
        object.__setattr__(self, "directory", Path(self.directory))

    def path(self, stem: str, suffix: str = ".pem") -> Path:
        return self.directory / f"{stem}{suffix}"

    @property
    def identity_ca(self) -> Path:
        return self.path("identity_ca")

    @property
    def permissions_ca(self) -> Path:
        return self.path("permissions_ca")

    @property
    def permissions_ca_key(self) -> Path:
        return self.path("permissions_ca", ".key")

    def participants(self) -> list[str]:
        return sorted(p.stem for p in self.directory.glob("*.pem")
                      if p.stem not in _CA_FILES and p.with_suffix(".key").exists())

    def certificate(self, stem: str) -> x509.Certificate:
        return x509.load_pem_x509_certificate(self.path(stem).read_bytes())

    def private_key(self, stem: str):
        return serialization.load_pem_private_key(self.path(stem, ".key").read_bytes(), None)

    @property
    def single_ca(self) -> bool:
        return self.identity_ca.read_bytes() == self.permissions_ca.read_bytes()

    def exists(self) -> bool:
        return all(self.path(s, x).exists() for s in _CA_FILES for x in (".pem", ".key"))

    @classmethod
    def load(cls, directory: Path) -> TestPKI:
        pki = cls(Path(directory))
        if not pki.exists():
            raise GovkitError(f"{directory}: no test PKI here (expected identity_ca.pem/.key and "
                              f"permissions_ca.pem/.key); create one with `govkit pki init "
                              f"{directory}`")
        return pki


def _write_pair(pki: TestPKI, stem: str, cert, key, force: bool) -> None:
    # Key first, refusing to replace an existing one unless forced; then the certificate.
    write_atomic(pki.path(stem, ".key"), _key_pem(key), mode=0o600, overwrite=force)
    write_atomic(pki.path(stem), _pem(cert), mode=0o644, overwrite=True)


def init_pki(directory: Path, participants: tuple[str, ...] | list[str] = DEFAULT_PARTICIPANTS,
             key_type: str = "ec-p256", days: int = 365, force: bool = False,
             single_ca: bool = False, now: dt.datetime | None = None) -> tuple[TestPKI, list[str]]:
    """Create (or extend) a test PKI. Returns it and the list of files created.

    An existing CA is reused and existing participants are kept as they are; nothing with a
    key is replaced unless `force` is set.
    """
    if key_type not in KEY_TYPES:
        raise GovkitError(f"unknown key type {key_type!r}; Cyclone DDS 0.10 accepts only "
                          f"{', '.join(KEY_TYPES)}")
    if days < 1:
        raise GovkitError("--days must be at least 1")
    for name in participants:
        if not _NAME_RE.fullmatch(name) or name in _CA_FILES:
            raise GovkitError(f"invalid participant name {name!r}: use letters, digits, '_', "
                              f"'.', '-' (no ',' '/' '|' '+' or spaces: Cyclone splits subject "
                              f"names on them) and not {' or '.join(_CA_FILES)}")
    now = now or dt.datetime.now(dt.UTC)
    pki = TestPKI(Path(directory))
    pki.directory.mkdir(parents=True, exist_ok=True)
    created: list[str] = []
    if force or not pki.exists():
        if not force:
            # New CAs would not have issued any identity already here: refuse to mix.
            for key in sorted(pki.directory.glob("*.key")):
                raise GovkitError(f"{key}: a key exists but the PKI is incomplete; refusing "
                                  f"to overwrite or mix it with new CAs (use --force, or "
                                  f"another directory)")
        id_cert, id_key = _make_ca("govkit Identity CA", key_type, days, now)
        if single_ca:
            perm_cert, perm_key = id_cert, id_key
        else:
            perm_cert, perm_key = _make_ca("govkit Permissions CA", key_type, days, now)
        _write_pair(pki, "identity_ca", id_cert, id_key, force)
        _write_pair(pki, "permissions_ca", perm_cert, perm_key, force)
        created += ["identity_ca", "permissions_ca"]
    elif single_ca and not pki.single_ca:
        raise GovkitError(f"{directory}: has separate identity and permissions CAs; use another "
                          f"directory for a single-CA PKI (or --force to replace it)")
    id_cert, id_key = pki.certificate("identity_ca"), pki.private_key("identity_ca")
    for name in participants:
        if pki.path(name, ".key").exists() and not force:
            continue
        cert, key = _make_leaf(name, id_cert, id_key, key_type, days, now)
        _write_pair(pki, name, cert, key, force)
        created.append(name)
    return pki, [str(pki.path(s, x)) for s in created for x in (".pem", ".key")]
