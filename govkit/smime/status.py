"""`govkit pki status` and the revoked-grant check of `verify`: the dates and subjects of
signed documents, read as an implementation reads them, for govkit.pki.status.

A document that does not verify against the PKI's Permissions CA is one row with its
problems (no implementation would load it, so its dates say nothing); one that verifies
was signed by that CA (the only certificate trusted), whose validity bounds it.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from govkit.common.errors import GovkitError
from govkit.common.fsutil import collect_files
from govkit.pki.names import certificate_grants
from govkit.pki.revocation import revoked_certificates
from govkit.pki.status import GrantDates, SignedDates, Status, pki_status
from govkit.pki.testpki import TestPKI
from govkit.pki.vocabulary import DEFAULT_WARN_DAYS
from govkit.smime.verify import Verification, verify_file


def _when(value) -> dt.datetime | None:
    return value.value.datetime() if value.value is not None else None


def signed_dates(path: Path, pki: TestPKI) -> SignedDates:
    """What `pki status` needs from one signed document (never raises for bad input)."""
    from govkit.check.loaded import load_document  # the typed model: only when needed
    try:
        check = verify_file(path, pki.permissions_ca)
        if not check.ok:
            return SignedDates(path, check.kind, None, tuple(check.problems))
        loaded = load_document(path)
    except GovkitError as e:
        return SignedDates(path, None, None, (f"cannot read: {e}",))
    grants = tuple(GrantDates(g.name, g.subject.value if isinstance(g.subject.value, str)
                              else None, _when(g.not_before), _when(g.not_after))
                   for g in getattr(loaded.model, "grants", ()))
    return SignedDates(path, check.kind, pki.certificate("permissions_ca"), (), grants)


def lifecycle_status(pki_dir: Path, documents: list[Path] | None = None,
                     warn_days: int = DEFAULT_WARN_DAYS, now: dt.datetime | None = None
                     ) -> Status:
    """The status of the PKI in `pki_dir` and of every .p7s in `documents` (files or
    directories; None: build/ if there is one). GovkitError (exit 2) for a named path
    that does not exist."""
    pki = TestPKI(Path(pki_dir))
    if documents is None:
        documents = [p for p in (Path("build"),) if p.is_dir()]
    for p in documents:
        if not Path(p).exists():
            raise GovkitError(f"{p}: no such file or directory (--documents)")
    files = collect_files(documents, ".p7s")
    return pki_status(pki, [signed_dates(f, pki) for f in files], warn_days, now)


def _grants(path: Path) -> list[tuple[str | None, str | None]]:
    """(name, subject) of every grant of a signed permissions document, read as `pki
    status` reads them."""
    from govkit.check.loaded import load_document  # the typed model: only when needed
    try:
        loaded = load_document(path)
    except GovkitError:
        return []
    return grant_subjects(loaded.model)


def grant_subjects(model) -> list[tuple[str | None, str | None]]:
    """(name, subject) of every grant of a document's model (none for a governance)."""
    return [(g.name, g.subject.value if isinstance(g.subject.value, str) else None)
            for g in getattr(model, "grants", ())]


def revoked_grant_lines(grants, revoked: list[tuple]) -> list[str]:
    """A line per grant that names a revoked certificate (`revoked`: (matcher, line), the
    matcher names.certificate_grants of the certificate)."""
    return [f"grant {name!r} is for a revoked certificate: {line}"
            for name, subject in grants for grants_it, line in revoked if grants_it(subject)]


def _revoked(pki: TestPKI, unreadable: list[str] | None = None) -> list[tuple]:
    return [(certificate_grants(cert), line) for cert, line in
            revoked_certificates(pki, pki.identities(), unreadable).values()]


def revoked_grants(path: Path, pki: TestPKI) -> list[str]:
    """The grants of signed permissions `path` that name a participant of `pki` whose
    certificate its CRL revokes, one line each ([] when there is no CRL)."""
    revoked = _revoked(pki)
    return revoked_grant_lines(_grants(path), revoked) if revoked else []


def add_revocation_problems(results: list[Verification], ca: Path) -> list[str]:
    """`verify --ca PKI_DIR`: a verified permissions document that grants a certificate the
    PKI's CRL revokes is not OK (each such grant is one problem). Nothing to do when `ca`
    is a certificate file or the PKI has no CRL. Returns a warning per participant
    certificate that cannot be read (its grants are not checked; every other one is).

    The revoked certificates are found once; each document's grants are those the fast
    path of `verify` read (govkit.smime.verify_batch), else read here."""
    pki = TestPKI(Path(ca))
    if not Path(ca).is_dir() or not pki.identity_ca.exists():
        return []
    # (a CRL missing or older than the PKI manifest records: refused, revocation.current_crl)
    unreadable: list[str] = []
    revoked = _revoked(pki, unreadable)
    if revoked:
        for r in results:
            if r.ok and r.kind == "permissions":
                grants = r.grants if r.grants is not None else _grants(Path(r.file))
                r.problems += revoked_grant_lines(grants, revoked)
                r.ok = not r.problems
    return unreadable
