"""Creating and extending a test PKI: the two CAs and the participant identities, issued
in worker processes when there are many, written key first (a key is never replaced
unless `force`), and each certificate recorded in the PKI manifest as it is issued.

`init_pki` holds the PKI's write lock (govkit.pki.lock) from its first read to its last
write. It sits above `testpki` (the PKI's files and certificates), `manifest` and
`revocation`, which it uses: those read a PKI, this writes one.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from govkit.common import staging, workers
from govkit.common.errors import GovkitError
from govkit.common.fsutil import write_atomic
from govkit.common.limits import KEY_TYPES
from govkit.pki.lock import pki_lock
from govkit.pki.manifest import check_certificate, update_manifest
from govkit.pki.participants import CRL_STEM, Participant, name_problem
from govkit.pki.revocation import load_crl
from govkit.pki.testpki import (
    DEFAULT_PARTICIPANTS,
    LAST_VALID_TIME,
    TOKEN_SUFFIX,
    TestPKI,
    certificate_pem,
    leaf_certificate,
    load_private_key,
    make_ca,
    make_leaf,
    max_days,
    private_key_pem,
    x509_name,
)
from govkit.pki.vocabulary import DEFAULT_CERT_DAYS


def _existing_participants(pki: TestPKI) -> list[str]:
    """Participant names with a key or a certificate in the directory."""
    return sorted({p.stem for p in pki.directory.iterdir() if p.suffix in (".pem", ".key")
                   and p.stem != CRL_STEM and name_problem(p.stem) is None})


GITIGNORE = ("# govkit's test PKI: its private keys are written unencrypted; keep them out of\n"
             "# version control (written by `govkit pki init`, never overwritten).\n"
             "*.key\nsofthsm/\nretired/\nmanifest-key\n")


def _write_gitignore(pki: TestPKI) -> None:
    path = pki.directory / ".gitignore"
    if not path.exists():
        write_atomic(path, GITIGNORE.encode(), mode=0o644)


def _certify_orphan_keys(pki: TestPKI, wanted: dict[str, Participant], present: set[str],
                         id_cert, id_key, days: int, now: dt.datetime) -> list[str]:
    """A participant's key without its certificate (govkit was killed between writing the
    one and the other): the key is kept, never replaced, and gets its certificate now."""
    repaired = []
    for p in wanted.values():
        if f"{p.name}.key" in present and f"{p.name}.pem" not in present:
            key = load_private_key(pki.path(p.name, ".key"))
            subject = x509_name(p.common_name, p.organization, p.unit, p.country)
            cert = leaf_certificate(subject, key.public_key(), id_cert, id_key, days, now)
            write_atomic(pki.path(p.name), certificate_pem(cert), mode=0o644)
            repaired.append(p.name)
    return repaired


def _write_pair(pki: TestPKI, stem: str, cert, key, force: bool) -> None:
    # Key first, refusing to replace an existing one unless forced; then the certificate.
    write_atomic(pki.path(stem, ".key"), private_key_pem(key), mode=0o600, overwrite=force)
    write_atomic(pki.path(stem), certificate_pem(cert), mode=0o644, overwrite=True)


def init_pki(directory: Path,
             participants: tuple[str | Participant, ...] | list[str | Participant]
             = DEFAULT_PARTICIPANTS,
             key_type: str = "ec-p256", days: int = DEFAULT_CERT_DAYS, force: bool = False,
             single_ca: bool = False, now: dt.datetime | None = None,
             processes: int | None = None) -> tuple[TestPKI, list[str]]:
    """Create (or extend) a test PKI. Returns it and the list of files created.

    Without `force` an existing CA is reused and existing participants are kept as they
    are: nothing with a key is replaced. With `force` both CAs are new and every
    participant, named or already present, is reissued by the new Identity CA.
    Participants are names or `Participant`s (with subject fields); many of them are
    issued in worker processes and written together (`staging`).
    """
    wanted = {}
    for p in participants:
        p = p if isinstance(p, Participant) else Participant(p)
        wanted.setdefault(p.name, p)
    if key_type not in KEY_TYPES:
        raise GovkitError(f"unknown key type {key_type!r}; Cyclone DDS 0.10 accepts only "
                          f"{', '.join(KEY_TYPES)}")
    now = now or dt.datetime.now(dt.UTC)
    if not 1 <= days <= max_days(now):
        raise GovkitError(f"--days must be between 1 and {max_days(now)} (no certificate can "
                          f"be valid after {LAST_VALID_TIME.date()})")
    for name in wanted:
        problem = name_problem(name)
        if problem:
            raise GovkitError(problem)
    pki = TestPKI(Path(directory))
    if pki.directory.exists() and not pki.directory.is_dir():
        raise GovkitError(f"{directory}: exists and is not a directory")
    pki.directory.mkdir(parents=True, exist_ok=True)
    with pki_lock(pki.directory):
        return _init_locked(pki, wanted, key_type, days, force, single_ca, now, processes)


def _init_locked(pki: TestPKI, wanted: dict[str, Participant], key_type: str, days: int,
                 force: bool, single_ca: bool, now: dt.datetime, processes: int | None
                 ) -> tuple[TestPKI, list[str]]:
    directory = pki.directory
    created: list[str] = []
    if force or not pki.exists():
        if not force:
            # New CAs would not have issued any identity already here: refuse to mix.
            for key in sorted(pki.directory.glob("*.key")):
                raise GovkitError(f"{key}: a key exists but the PKI is incomplete; refusing "
                                  f"to overwrite or mix it with new CAs (use --force, or "
                                  f"another directory)")
        id_cert, id_key = make_ca("govkit Identity CA", key_type, days, now)
        if single_ca:
            perm_cert, perm_key = id_cert, id_key
        else:
            perm_cert, perm_key = make_ca("govkit Permissions CA", key_type, days, now)
        _write_pair(pki, "identity_ca", id_cert, id_key, force)
        # A CRL here was signed by the CA just replaced: the new one has revoked nothing.
        pki.path(CRL_STEM).unlink(missing_ok=True)
        _write_pair(pki, "permissions_ca", perm_cert, perm_key, force)
        created += ["identity_ca", "permissions_ca"]
    elif single_ca and not pki.single_ca:
        raise GovkitError(f"{directory}: has separate identity and permissions CAs; use another "
                          f"directory for a single-CA PKI (or --force to replace it)")
    id_cert, id_key = pki.key_pair("identity_ca")
    _write_gitignore(pki)
    repaired: list[str] = []
    if force:  # the old participants' certificates are from the old Identity CA: reissue
        for name in _existing_participants(pki):
            wanted.setdefault(name, Participant(name))
        todo = [wanted[n] for n in sorted(wanted)]
    else:
        present = set(os.listdir(pki.directory))   # one listing, not a stat per participant
        todo = [p for p in wanted.values() if f"{p.name}.key" not in present
                and f"{p.name}{TOKEN_SUFFIX}" not in present]
        repaired = _certify_orphan_keys(pki, wanted, present, id_cert, id_key, days, now)
    checked = _issue(pki, todo, id_cert, id_key, key_type, days, now, force, processes)
    for p in todo:      # a new key file: a key a token held for the name is not its key now
        pki.path(p.name, TOKEN_SUFFIX).unlink(missing_ok=True)
    created += [p.name for p in todo]
    new_ca = "identity_ca" in created
    update_manifest(pki, load_crl(pki), None if new_ca else [*checked, *repaired], checked)
    return pki, [str(pki.path(s, x)) for s in created for x in (".pem", ".key")] + [
        str(pki.path(s)) for s in repaired]


@dataclass(frozen=True)
class _Issuer:
    """What a worker needs to issue identities (plain data: it may be pickled)."""
    directory: str
    ca_pem: bytes
    ca_key_pem: bytes
    key_type: str
    days: int
    now: dt.datetime
    force: bool


_issuer: tuple[_Issuer, x509.Certificate, object] | None = None


def _init_issuer(issuer: _Issuer) -> None:
    global _issuer
    _issuer = (issuer, x509.load_pem_x509_certificate(issuer.ca_pem),
               serialization.load_pem_private_key(issuer.ca_key_pem, None))


def _issue_chunk(todo: list[Participant]) -> tuple[list[staging.Staged], dict]:
    """Issue and stage the identities of `todo`; with the PKI manifest's entry of each
    certificate, from the full check made here (govkit.pki.manifest)."""
    issuer, ca_cert, ca_key = _issuer
    stager = staging.Stager()
    checked = {}
    try:
        for p in todo:
            cert, key = make_leaf(p, ca_cert, ca_key, issuer.key_type, issuer.days, issuer.now)
            base = os.path.join(issuer.directory, p.name)
            # Key first, never replacing one unless forced; then its certificate.
            stager.write(base + ".key", private_key_pem(key), mode=0o600, overwrite=issuer.force)
            pem = certificate_pem(cert)
            stager.write(base + ".pem", pem, mode=0o644)
            checked[p.name] = check_certificate(pem, ca_cert)
    except BaseException:
        stager.discard()
        raise
    return stager.staged, checked


def _issue(pki: TestPKI, todo: list[Participant], id_cert, id_key, key_type: str, days: int,
           now: dt.datetime, force: bool, processes: int | None) -> dict:
    """Issue and write identities for `todo`, in worker processes when there are many;
    returns the manifest's entry of each (name -> manifest.Entry)."""
    if not todo:
        return {}
    issuer = _Issuer(str(pki.directory), certificate_pem(id_cert), private_key_pem(id_key),
                     key_type, days, now, force)
    count, parts = workers.plan(todo, processes)
    staged: list[staging.Staged] = []
    checked: dict = {}
    try:
        for chunk, entries in workers.run(_issue_chunk, parts, _init_issuer, (issuer,), count):
            staged += chunk
            checked.update(entries)
        staging.commit(staged)
    except BaseException:
        staging.discard(staged)
        raise
    return checked
