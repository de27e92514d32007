"""Renewal: a new certificate for a participant's existing key, and re-keying a revoked one.

`renew` reissues a participant's certificate from the current Identity CA with the same
subject and the same public key, a new serial and a new validity; the private key file is
read (to prove it belongs to the certificate) and never written. A certificate on the CRL
is not renewed: revocation usually means the key is not to be trusted any more, and a new
serial for the same key would quietly undo it.

`rekey` is what a revoked participant gets instead: a new key and a certificate for it
(same subject, new serial). The revoked certificate stays on the CRL; it and its key are
moved, never deleted or overwritten, to `retired/NAME.SERIAL.pem/.key` in the PKI
directory (a subdirectory, so they are never taken for an identity).

Neither issues a certificate valid after the Identity CA: OpenSSL refuses such a chain at
depth 1 from the CA's expiry on (issue 37). The validity is cut at the CA's expiry, and
the caller is told (`notes`); under an expired Identity CA nothing is issued.
"""

from __future__ import annotations

import datetime as dt
import os

from cryptography.hazmat.primitives.asymmetric import rsa

from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.fsutil import write_atomic
from govkit.pki.lock import pki_lock
from govkit.pki.manifest import update_manifest
from govkit.pki.participants import CA_STEMS
from govkit.pki.revocation import load_crl, revoked_participants
from govkit.pki.testpki import (
    LAST_VALID_TIME,
    TestPKI,
    certificate_pem,
    leaf_certificate,
    max_days,
    new_key,
    private_key_pem,
)
from govkit.pki.vocabulary import DEFAULT_CERT_DAYS

RETIRED_DIR = "retired"


def renew(pki: TestPKI, name: str, days: int = DEFAULT_CERT_DAYS, now: dt.datetime | None = None,
          notes: list[str] | None = None) -> tuple[object, object]:
    """Reissue `name`'s certificate for its own key; returns (old, new) certificates.
    A validity cut at the Identity CA's expiry is said in `notes`."""
    now = now or dt.datetime.now(dt.UTC)
    name = _checked(pki, name, days, now, "renewing")
    with pki_lock(pki.directory):   # no revocation lands between the check and the write
        return _renew_locked(pki, name, days, now, notes)


def rekey(pki: TestPKI, name: str, days: int = DEFAULT_CERT_DAYS, now: dt.datetime | None = None,
          notes: list[str] | None = None) -> tuple[object, object, list[str]]:
    """A new key and certificate for revoked participant `name` (module docstring);
    returns (old certificate, new certificate, where the old files went)."""
    now = now or dt.datetime.now(dt.UTC)
    name = _checked(pki, name, days, now, "re-keying")
    with pki_lock(pki.directory):
        return _rekey_locked(pki, name, days, now, notes)


def _checked(pki: TestPKI, name: str, days: int, now: dt.datetime, doing: str) -> str:
    if name in CA_STEMS:
        raise GovkitError(f"{name}: {doing} a CA is not supported (its signatures and every "
                          f"certificate it issued hang on it); `govkit pki init --force` "
                          f"replaces both CAs", EXIT_USAGE)
    name = pki.participant_stem(name)
    if not 1 <= days <= max_days(now):
        raise GovkitError(f"--days must be between 1 and {max_days(now)} (no certificate can "
                          f"be valid after {LAST_VALID_TIME.date()})", EXIT_USAGE)
    if not pki.exists():
        raise GovkitError(f"{pki.directory}: no test PKI here (create one with `govkit pki "
                          f"init {pki.directory}`)", EXIT_USAGE)
    return name


def _current(pki: TestPKI, name: str) -> None:
    if not pki.path(name).is_file():
        raise GovkitError(f"{pki.path(name)}: no such participant certificate; create it "
                          f"with `govkit pki init {pki.directory} --participant {name}`",
                          EXIT_USAGE)
    if name in pki.stale_participants([name]):
        raise GovkitError(f"{pki.path(name)}: not issued by the current Identity CA (left "
                          f"from an earlier PKI); `govkit pki init {pki.directory} --force` "
                          f"reissues it", EXIT_USAGE)


def _issuer(pki: TestPKI, days: int, now: dt.datetime, notes: list[str] | None):
    """The Identity CA's certificate and key, refused if it has expired; a note when
    `days` would outlive it."""
    ca_cert, ca_key = pki.key_pair("identity_ca")
    ca_end = ca_cert.not_valid_after_utc
    when = f"{ca_end:%Y-%m-%d %H:%M} UTC"
    if ca_end <= now:
        raise GovkitError(f"{pki.identity_ca}: the Identity CA expired on {when}; a "
                          f"certificate it issues now is refused by every "
                          f"peer (replace both CAs with `govkit pki init {pki.directory} "
                          f"--force`)", EXIT_USAGE)
    # (a cut of less than a day is the CA's and the certificate's start moments apart)
    if now + dt.timedelta(days=days) - ca_end > dt.timedelta(days=1) and notes is not None:
        notes.append(f"valid to the Identity CA's own expiry, {when}, not for {days} "
                     f"days: past it OpenSSL refuses the chain (the CA at depth 1), so a "
                     f"longer certificate would only seem to last longer; `govkit pki init "
                     f"{pki.directory} --force` replaces both CAs (and every key)")
    return ca_cert, ca_key


def _renew_locked(pki: TestPKI, name: str, days: int, now: dt.datetime,
                  notes: list[str] | None) -> tuple[object, object]:
    _current(pki, name)
    if not pki.has_key(name):
        raise GovkitError(f"{pki.path(name, '.key')}: no key for the certificate (lost?): "
                          f"revoke it (`govkit pki revoke {name} --ca {pki.directory}`), "
                          f"then `govkit pki renew {name} --ca {pki.directory} --new-key`",
                          EXIT_USAGE)
    revoked = revoked_participants(pki, [name])
    if revoked:
        raise GovkitError(f"{name} is revoked, not renewed: {revoked[name]} (a new key and "
                          f"certificate: `govkit pki renew {name} --ca {pki.directory} "
                          f"--new-key`)", EXIT_USAGE)
    if pki.path(name, ".key").exists():
        old, _key = pki.key_pair(name)     # the key must be this certificate's
    else:                                  # in a token: checked when it was moved there
        old = pki.certificate(name)
    ca_cert, ca_key = _issuer(pki, days, now, notes)
    new = leaf_certificate(old.subject, old.public_key(), ca_cert, ca_key, days, now)
    write_atomic(pki.path(name), certificate_pem(new), mode=0o644, overwrite=True)
    update_manifest(pki, load_crl(pki), changed=[name])
    return old, new


def _rekey_locked(pki: TestPKI, name: str, days: int, now: dt.datetime,
                  notes: list[str] | None) -> tuple[object, object, list[str]]:
    _current(pki, name)
    if pki.path(name, ".pkcs11").exists():
        raise GovkitError(f"{pki.path(name, '.pkcs11')}: {name}'s key is in the SoftHSM2 "
                          f"token; re-keying a token key is not supported (replace the PKI "
                          f"with `govkit pki init {pki.directory} --force --hsm softhsm`)",
                          EXIT_USAGE)
    if name not in revoked_participants(pki, [name]):
        raise GovkitError(f"{name} is not revoked: its certificate would stay valid for the "
                          f"old key; revoke it first (`govkit pki revoke {name} --ca "
                          f"{pki.directory}`), then re-key it", EXIT_USAGE)
    old = pki.certificate(name)
    ca_cert, ca_key = _issuer(pki, days, now, notes)
    key = new_key("rsa-2048" if isinstance(old.public_key(), rsa.RSAPublicKey)
                  else "ec-p256")
    new = leaf_certificate(old.subject, key.public_key(), ca_cert, ca_key, days, now)
    retired = pki.directory / RETIRED_DIR
    retired.mkdir(mode=0o700, exist_ok=True)
    moved = []
    for suffix in (".key", ".pem"):   # the key first: a certificate never lacks its key
        source = pki.path(name, suffix)
        if not source.exists():
            continue
        target = retired / f"{name}.{old.serial_number:x}{suffix}"
        if target.exists():
            raise GovkitError(f"{target}: exists; not overwritten", EXIT_USAGE)
        os.rename(source, target)
        moved.append(str(target))
    write_atomic(pki.path(name, ".key"), private_key_pem(key), mode=0o600, overwrite=False)
    write_atomic(pki.path(name), certificate_pem(new), mode=0o644, overwrite=False)
    update_manifest(pki, load_crl(pki), changed=[name])
    return old, new, moved
