"""The documents of `govkit lifetime-check`: a cell's test PKI and signed bundle, and the
one file of it that expires, is not yet valid, or revokes, seconds from now.

Everything is made by govkit's own PKI and signing code (govkit.pki.issuance,
govkit.pki.revocation, govkit.generate.bundle, govkit.generate.validity): a cell's pub
gets a certificate for its own key with chosen dates (`leaf_certificate` with `now` moved
so that its `days` end where the cell needs), or its permissions re-signed with a chosen
<validity>, while sub keeps the files `generate` would write. Only one thing differs from
an ordinary bundle per cell, so what the runtime does is about that one thing.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

from govkit.catalog.profiles import get_profile
from govkit.common.fsutil import write_atomic
from govkit.generate.bundle import BundleLog, ensure_bundle
from govkit.generate.validity import with_validity
from govkit.pki.issuance import init_pki
from govkit.pki.revocation import revoke
from govkit.pki.testpki import TestPKI, certificate_pem, leaf_certificate
from govkit.runners.base import Bundle
from govkit.smime.sign import sign_document

# Every cell runs the same profile: its permissions are checked at join (access control
# on) and its discovery is protected, so each side's identity and grant are in use.
PROFILE = "sign_submsg_encrypt_origin_data_encrypt"
# The participant whose files a cell changes; sub keeps its own as generate writes them.
SUBJECT = "pub"
# A third identity, revoked when a CRL cell starts, so that both sides read a CRL from
# their first moment on and the CRL naming pub later is the same file rewritten.
SPARE = "spare"
DAY = dt.timedelta(days=1)


def cell_bundle(directory: Path, runner: str, crl: bool = False) -> tuple[TestPKI, Bundle]:
    """A fresh test PKI (pub, sub, spare) and the profile's signed bundle for `runner`;
    with `crl`, the spare identity revoked first, so every side's configuration names the
    CRL (govkit.generate.bundle.participant_files)."""
    pki, _ = init_pki(Path(directory) / "pki", participants=(SUBJECT, "sub", SPARE))
    if crl:
        revoke(pki, SPARE, reason="superseded")
    bundle = ensure_bundle(get_profile(PROFILE), pki, Path(directory) / "build", runner,
                           BundleLog())
    return pki, bundle


def with_pub(bundle: Bundle, **files) -> Bundle:
    """`bundle` with pub's files replaced by `files` (ParticipantFiles fields)."""
    people = dict(bundle.participants)
    people[SUBJECT] = replace(people[SUBJECT], **files)
    return replace(bundle, participants=people)


def certificate_issued_at(pki: TestPKI, directory: Path, now: dt.datetime) -> Path:
    """pub's certificate again, for its own key and subject, as `pki init` would issue it
    at `now` for one day: valid from `now` less a day (CLOCK_SKEW) to `now` plus a day.
    `now` a day before an instant makes a certificate that ends then; a day after one,
    one that starts then. Written to directory/pub.pem."""
    ca_cert, ca_key = pki.key_pair("identity_ca")
    cert = pki.certificate(SUBJECT)
    issued = leaf_certificate(cert.subject, cert.public_key(), ca_cert, ca_key, 1, now)
    path = Path(directory) / f"{SUBJECT}.pem"
    write_atomic(path, certificate_pem(issued), mode=0o644)
    return path.resolve()


def permissions_until(pki: TestPKI, bundle: Bundle, directory: Path,
                      window: tuple[dt.datetime, dt.datetime]) -> Path:
    """pub's permissions document with every grant's <validity> set to `window`, signed
    by the Permissions CA, written to directory/pub.xml and .p7s."""
    source = bundle.participants[SUBJECT].permissions.with_suffix(".xml")
    xml, count = with_validity(source.read_bytes(), window)
    assert count >= 1, f"{source}: no <validity> in pub's permissions"
    path = Path(directory) / f"{SUBJECT}-permissions.xml"
    write_atomic(path, xml)
    return sign_document(path, pki.permissions_ca, pki.permissions_ca_key).resolve()


def revoke_pub(pki: TestPKI) -> str:
    """The CRL rewritten, now revoking pub too (as `govkit pki revoke pub` does): govkit's
    one-line explanation."""
    return revoke(pki, SUBJECT, reason="keyCompromise")[0]


def whole_second(t: dt.datetime) -> dt.datetime:
    """`t` rounded up to a whole second (a certificate's and a grant's dates have none
    finer), so an event is never earlier than asked."""
    return t.replace(microsecond=0) + (dt.timedelta(seconds=1) if t.microsecond else
                                       dt.timedelta())
