"""A test PKI for DDS Security: an Identity CA, a *separate* Permissions CA, and participants.

Separate CAs matter: with one CA, any participant holding an identity could also sign
its own permissions document (sros2 issue #282). RTI Perftest can only take one CA, so
`single_ca=True` makes one CA serve both roles, for that runner only.

Files are flat in the PKI directory:
  identity_ca.pem/.key, permissions_ca.pem/.key, <participant>.pem/.key
govkit.pki.issuance writes them (this module reads them and makes certificates). Keys
are written atomically with mode 0600 and never overwritten unless `force`; with
`force` the CAs are replaced and every participant already there is reissued by the new
Identity CA, so the directory always holds one consistent PKI. Every file is read with a
size limit, and a file that is not what it should be is one clean error, never a crash.

Vendor notes (Cyclone DDS 0.10):
- identities must be RSA-2048 or EC P-256; nothing else is accepted;
- the CA that signs governance/permissions needs keyUsage digitalSignature, not only
  keyCertSign, or the S/MIME signer is refused;
- subject names are split on ',', '/', '|' and '+' and spaces are not trimmed, so our
  names contain none of those characters inside values.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.fsutil import write_atomic
from govkit.common.inputs import read_input
from govkit.common.limits import KEY_TYPES, MAX_PEM_BYTES
from govkit.pki.issued import issued_by, issued_certificate
from govkit.pki.participants import CA_STEMS, Participant, name_problem
from govkit.pki.vocabulary import DEFAULT_CERT_DAYS

DEFAULT_PARTICIPANTS = ("pub", "sub")
# Backdate not_before (certificates, and permissions validity, which follows the
# certificate): a slightly-behind peer agrees, and so does Fast DDS 2.9, which reads the
# permissions dates as *local* time (mktime): in any zone (UTC-12 .. UTC+14) a day covers it.
CLOCK_SKEW = dt.timedelta(days=1)
ORGANIZATION = "govkit test PKI"
_CA_FILES = CA_STEMS
# <name>.pkcs11 in place of <name>.key: the key is in a PKCS#11 token (govkit.pki.hsm).
TOKEN_SUFFIX = ".pkcs11"
# The last instant an X.509 certificate can state (GeneralizedTime 99991231235959Z).
LAST_VALID_TIME = dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=dt.UTC)


def load_certificate(path: Path, what: str = "certificate") -> x509.Certificate:
    """A PEM certificate (the first in the file); GovkitError (exit 2) otherwise."""
    data = read_input(path, MAX_PEM_BYTES, what)
    try:
        return x509.load_pem_x509_certificate(data)
    except ValueError:
        raise GovkitError(f"{path}: not a PEM certificate", EXIT_USAGE) from None


def load_private_key(path: Path):
    """An unencrypted PEM private key; GovkitError (exit 2) otherwise."""
    data = read_input(path, MAX_PEM_BYTES, "private key")
    try:
        return serialization.load_pem_private_key(data, None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise GovkitError(f"{path}: not an unencrypted PEM private key", EXIT_USAGE) from None


def max_days(now: dt.datetime) -> int:
    """The longest validity (in days) a certificate issued at `now` can have."""
    return (LAST_VALID_TIME - now).days


def new_key(key_type: str):
    if key_type == "ec-p256":
        return ec.generate_private_key(ec.SECP256R1())
    if key_type == "rsa-2048":
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    raise GovkitError(f"unknown key type {key_type!r}; valid: {', '.join(KEY_TYPES)}")


def x509_name(common_name: str, organization: str | None = None, unit: str | None = None,
          country: str | None = None) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if unit:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, unit))
    attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization or ORGANIZATION))
    if country:
        attributes.append(x509.NameAttribute(NameOID.COUNTRY_NAME, country))
    return x509.Name(attributes)


def _builder(subject: x509.Name, issuer: x509.Name, public_key, days: int,
             now: dt.datetime, until: dt.datetime | None = None) -> x509.CertificateBuilder:
    return (x509.CertificateBuilder()
            .subject_name(subject).issuer_name(issuer).public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - CLOCK_SKEW)
            .not_valid_after(min(now + dt.timedelta(days=days), until or LAST_VALID_TIME))
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False))


def make_ca(common_name: str, key_type: str, days: int, now: dt.datetime):
    key = new_key(key_type)
    name = x509_name(common_name)
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


def make_leaf(who: Participant, ca_cert, ca_key, key_type: str, days: int, now: dt.datetime):
    key = new_key(key_type)
    subject = x509_name(who.common_name, who.organization, who.unit, who.country)
    return leaf_certificate(subject, key.public_key(), ca_cert, ca_key, days, now), key


def leaf_certificate(subject: x509.Name, public_key, ca_cert, ca_key, days: int,
                     now: dt.datetime) -> x509.Certificate:
    """A participant certificate for `public_key` (EC P-256 or RSA-2048), issued by the CA:
    a new serial, valid from `now` (less CLOCK_SKEW) for `days`, but never after the CA
    itself (OpenSSL refuses such a chain at depth 1 from the CA's expiry on: the
    certificate would only seem to last longer; `renew` says when it is cut short)."""
    ec_key = isinstance(public_key, ec.EllipticCurvePublicKey)
    ski = ca_cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    return (_builder(subject, ca_cert.subject, public_key, days, now,
                     ca_cert.not_valid_after_utc)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(
                digital_signature=True, key_agreement=ec_key,
                key_encipherment=not ec_key, content_commitment=False,
                data_encipherment=False, key_cert_sign=False, crl_sign=False,
                encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH,
                                                  ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))


def certificate_pem(cert) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def private_key_pem(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def subject_rfc2253(cert: x509.Certificate) -> str:
    """The subject exactly as a permissions <subject_name> must state it (RFC 2253 order).

    Cyclone 0.10 compares it without trimming spaces, so we emit no spaces around '='/','.
    """
    return cert.subject.rfc4514_string()


@dataclass(frozen=True)
class TestPKI:
    """A PKI directory on disk; `issuance.init_pki` creates or extends one."""
    directory: Path

    def __post_init__(self):
        object.__setattr__(self, "directory", Path(self.directory))

    def path(self, stem: str, suffix: str = ".pem") -> Path:
        return self.directory / f"{stem}{suffix}"

    def participant_stem(self, name: str) -> str:
        """The file stem of participant `name` as a user gives it (a name or an enclave
        path), checked like every participant name: GovkitError (exit 2) for one that is
        not, so no name can reach a file outside the directory ('../other/pub', an
        absolute enclave-looking path) or one that no participant has."""
        problem = name_problem(name)
        if problem:
            raise GovkitError(problem, EXIT_USAGE)
        return Participant(name).name

    @property
    def identity_ca(self) -> Path:
        return self.path("identity_ca")

    @property
    def permissions_ca(self) -> Path:
        return self.path("permissions_ca")

    @property
    def permissions_ca_key(self) -> Path:
        return self.path("permissions_ca", ".key")

    def identities(self) -> list[str]:
        """Every participant with a certificate and a key here (a key file or a key in a
        token), current or not. A file pair whose name is no participant name (a space, a
        newline, `--`: put there by hand) is not one: see stray_identities."""
        return [s for s in self._pairs() if name_problem(s) is None]

    def stray_identities(self) -> list[tuple[str, str]]:
        """(stem, why) of the certificate and key pairs whose name no participant may have."""
        return [(s, problem) for s in self._pairs() if (problem := name_problem(s))]

    def _pairs(self) -> list[str]:
        """The stems with a certificate and a key, from one listing of the directory (a
        stat per participant cost 0.1 s for 10,000); what glob("*.pem") and has_key
        decide: no hidden names, and a symbolic link counts only if it leads somewhere."""
        with os.scandir(self.directory) as entries:
            present = {e.name: e for e in entries if not e.name.startswith(".")}

        def there(name: str) -> bool:
            entry = present.get(name)
            return entry is not None and (not entry.is_symlink() or os.path.exists(entry.path))
        return sorted(stem for name in present if name.endswith(".pem")
                      and (stem := name[:-4]) not in _CA_FILES and there(name)
                      and (there(f"{stem}.key") or there(f"{stem}{TOKEN_SUFFIX}")))

    def has_key(self, stem: str) -> bool:
        return self.path(stem, ".key").exists() or self.path(stem, TOKEN_SUFFIX).exists()

    def participants(self) -> list[str]:
        """The participants whose certificate the current Identity CA issued (the only
        ones a permissions document may be written for)."""
        stale = set(self.stale_participants())
        return [n for n in self.identities() if n not in stale]

    def stale_participants(self, names: list[str] | None = None) -> list[str]:
        """Participants (of `names`, default all identities) whose certificate the current
        Identity CA did not issue (left over from an earlier PKI), or that cannot be read."""
        ca = self.certificate("identity_ca")
        identities = self.identities()
        if names is not None:
            wanted = set(names)
            identities = [n for n in identities if n in wanted]
        stale = []
        for name in identities:
            try:
                cert = self.certificate(name)
            except (GovkitError, ValueError):
                stale.append(name)
                continue
            if not issued_by(cert, ca):
                stale.append(name)
        return stale

    def certificate(self, stem: str) -> x509.Certificate:
        return load_certificate(self.path(stem))

    def private_key(self, stem: str):
        return load_private_key(self.path(stem, ".key"))

    def key_pair(self, stem: str):
        """(certificate, key) of a CA or participant; GovkitError if they do not match."""
        cert, key = self.certificate(stem), self.private_key(stem)
        if key.public_key() != cert.public_key():
            raise GovkitError(f"{self.path(stem, '.key')}: does not belong to the certificate "
                              f"{self.path(stem)}", EXIT_USAGE)
        return cert, key

    @property
    def single_ca(self) -> bool:
        return self.certificate("identity_ca") == self.certificate("permissions_ca")

    def exists(self) -> bool:
        return all(self.path(s, x).exists() for s in _CA_FILES for x in (".pem", ".key"))


def permissions_ca_paths(ca: Path, command: str, need_key: bool) -> tuple[Path, Path | None]:
    """(certificate, key) of the Permissions CA that `ca` names: a test PKI directory or,
    when no key is needed (verify), a PEM certificate file; the key is None unless
    `need_key` (sign). Never creates a CA: a wrong `ca` is a GovkitError pointing at
    `govkit pki init` (`command` names the command that refuses)."""
    if not need_key and ca.exists() and not ca.is_dir():
        return ca, None   # a certificate file (read_input refuses it if not a regular file)
    hint = f"create a test PKI with `govkit pki init {ca}`; {command} never creates one"
    if not ca.is_dir():
        raise GovkitError(f"{ca}: no such directory ({hint})", EXIT_USAGE)
    pki = TestPKI(ca)
    for path in (pki.permissions_ca, pki.permissions_ca_key)[:2 if need_key else 1]:
        if not path.is_file():
            raise GovkitError(f"{path}: not found: {ca} holds no Permissions CA ({hint})",
                              EXIT_USAGE)
    return pki.permissions_ca, pki.permissions_ca_key if need_key else None


# ------------------------------------------------------------------ TLS transport material
# Kept apart from the DDS Security PKI above (nothing above calls it): `govkit bench
# --transport tls` needs one TLS key pair per participant for Cyclone's <SSL> (DDSI over
# TCP with TLS 1.3, both ends verified).
#
# Issued by the *Identity CA*, because TLS authenticates the same parties the Identity CA
# already vouches for (who a participant is); the Permissions CA states what a participant
# may do and signs nothing but governance and permissions documents, so its key stays out
# of this. A third "TLS CA" would add a key without a distinction Cyclone could check: its
# TLS verifies the certificate chain only, not names. A separate key pair (not the
# participant's DDS identity key) keeps one key per purpose.

TLS_DIR = "tls"


def tls_paths(pki: TestPKI, participant: str) -> tuple[Path, Path]:
    """(certificate, key) of a participant's TLS key pair: <pki>/tls/<name>.pem/.key (a
    subdirectory, so they are never taken for DDS identities)."""
    d = pki.directory / TLS_DIR
    return d / f"{participant}.pem", d / f"{participant}.key"


def init_tls(pki: TestPKI, participants: tuple[str, ...] | list[str] = DEFAULT_PARTICIPANTS,
             days: int = DEFAULT_CERT_DAYS, now: dt.datetime | None = None) -> list[str]:
    """Issue a TLS key pair per participant from the Identity CA where it is missing (or
    was issued by another CA); returns the files written. EC P-256, serverAuth and
    clientAuth (a DDSI TCP connection may be opened by either side)."""
    now = now or dt.datetime.now(dt.UTC)
    id_cert = pki.certificate("identity_ca")
    written: list[str] = []
    id_key = None
    for name in participants:
        cert_path, key_path = tls_paths(pki, name)
        if cert_path.exists() and key_path.exists():
            cert = issued_certificate(cert_path.read_bytes(), id_cert)
            if cert is not None and cert.not_valid_after_utc > now:
                continue
        id_key = id_key or pki.private_key("identity_ca")
        cert, key = make_leaf(Participant(f"{name}-tls"), id_cert, id_key, "ec-p256", days, now)
        write_atomic(key_path, private_key_pem(key), mode=0o600)
        write_atomic(cert_path, certificate_pem(cert), mode=0o644)
        written += [str(cert_path), str(key_path)]
    return written
