"""Renewal: a new certificate for a participant's existing key.

`renew` reissues a participant's certificate from the current Identity CA with the same
subject and the same public key, a new serial and a new validity; the private key file is
read (to prove it belongs to the certificate) and never written. A certificate on the CRL
is not renewed: revocation usually means the key is not to be trusted any more, and a new
serial for the same key would quietly undo it.
"""

from __future__ import annotations

import datetime as dt

from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.fsutil import write_atomic
from govkit.pki.lock import pki_lock
from govkit.pki.participants import CA_STEMS
from govkit.pki.revocation import revoked_participants
from govkit.pki.testpki import LAST_VALID_TIME, TestPKI, certificate_pem, leaf_certificate, max_days


def renew(pki: TestPKI, name: str, days: int = 365, now: dt.datetime | None = None
          ) -> tuple[object, object]:
    """Reissue `name`'s certificate for its own key; returns (old, new) certificates."""
    now = now or dt.datetime.now(dt.UTC)
    if name in CA_STEMS:
        raise GovkitError(f"{name}: renewing a CA is not supported (its signatures and every "
                          f"certificate it issued hang on it); `govkit pki init --force` "
                          f"replaces both CAs", EXIT_USAGE)
    name = pki.participant_stem(name)
    if not 1 <= days <= max_days(now):
        raise GovkitError(f"--days must be between 1 and {max_days(now)} (no certificate can "
                          f"be valid after {LAST_VALID_TIME.date()})", EXIT_USAGE)
    if not pki.exists():
        raise GovkitError(f"{pki.directory}: no test PKI here (create one with `govkit pki "
                          f"init {pki.directory}`)", EXIT_USAGE)
    with pki_lock(pki.directory):   # no revocation lands between the check and the write
        return _renew_locked(pki, name, days, now)


def _renew_locked(pki: TestPKI, name: str, days: int, now: dt.datetime
                  ) -> tuple[object, object]:
    if not pki.path(name).is_file() or not pki.has_key(name):
        raise GovkitError(f"{pki.path(name)}: no such participant (certificate and key); "
                          f"create it with `govkit pki init {pki.directory} --participant "
                          f"{name}`", EXIT_USAGE)
    if name in pki.stale_participants([name]):
        raise GovkitError(f"{pki.path(name)}: not issued by the current Identity CA (left "
                          f"from an earlier PKI); `govkit pki init {pki.directory} --force` "
                          f"reissues it", EXIT_USAGE)
    revoked = revoked_participants(pki, [name])
    if revoked:
        raise GovkitError(f"{name} is revoked, not renewed: {revoked[name]}", EXIT_USAGE)
    if pki.path(name, ".key").exists():
        old, _key = pki.key_pair(name)     # the key must be this certificate's
    else:                                  # in a token: checked when it was moved there
        old = pki.certificate(name)
    ca_cert, ca_key = pki.key_pair("identity_ca")
    new = leaf_certificate(old.subject, old.public_key(), ca_cert, ca_key, days, now)
    write_atomic(pki.path(name), certificate_pem(new), mode=0o644, overwrite=True)
    return old, new
