"""Lifecycle status: what in a test PKI (and the documents signed with it) expires when,
what is revoked, and whether that matters yet.

Rows: both CAs, every participant certificate, the CRL (its next update: past it, both
runtimes refuse *every* certificate, govkit.pki.revocation), and, handed in by the caller
(govkit.smime.status reads them), every signed governance document (valid as long as its
signer) and every grant of every signed permissions document, with whether its validity
lies within its participant's certificate and its signer's. A row is a problem (`pki
status` exits 1) when it has expired, expires within `warn_days`, is not valid yet, or is
a grant of a revoked certificate; a revoked certificate that nothing grants any more is
only reported.

Three checks that RTI's reference architecture makes of its PKI (rticonnextdds-medtech-
reference-architecture, system_arch/security/security_tree.py: key permissions, "leaf
outlives CA", permissions against certificate validity), each a finding with its name:
- `key-mode` (a problem): a private key file that its group or others may read or write;
- `outlives-ca` (a problem): a participant certificate whose notAfter is past its Identity
  CA's: from that day no runtime accepts it, whatever its own date says;
- `grant-outlives-certificate`, `grant-ends-before-certificate` (warnings): a grant whose
  validity ends after, or before, its participant's certificate; the earlier one decides.
  RTI makes grants outlive certificates on purpose (a renewed certificate keeps them), and
  warns of the other way round (permissions lost while the certificate is valid).

This module reads no document: the caller gives the dates it read (plain data).
"""

from __future__ import annotations

import datetime as dt
import shlex
import stat
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509

from govkit.catalog.advisories import cite
from govkit.common.errors import GovkitError
from govkit.pki.manifest import crl_record
from govkit.pki.names import grants_certificate
from govkit.pki.revocation import Crl, crl_path, crl_problem, explain_revocation, load_crl
from govkit.pki.testpki import TestPKI
from govkit.pki.vocabulary import DEFAULT_WARN_DAYS

_DAY = dt.timedelta(days=1)


@dataclass(frozen=True)
class GrantDates:
    name: str | None
    subject: str | None
    not_before: dt.datetime | None
    not_after: dt.datetime | None


@dataclass(frozen=True)
class SignedDates:
    """What the caller read from one signed document."""
    path: Path
    kind: str | None                  # "governance" | "permissions" | None (unreadable)
    signer: x509.Certificate | None   # the certificate that signed it (None: does not verify)
    problems: tuple[str, ...] = ()    # why it does not verify or cannot be read
    grants: tuple[GrantDates, ...] = ()


@dataclass
class Item:
    kind: str         # identity CA | permissions CA | participant | CRL | governance | grant
    name: str
    path: str
    not_before: dt.datetime | None
    not_after: dt.datetime | None
    revoked: str | None = None        # the one-line explanation, for a revoked certificate
    within: bool | None = None        # grants: validity within certificate's and signer's
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    findings: list[dict] = field(default_factory=list)   # {"check", "severity", "message"}

    def find(self, check: str, severity: str, message: str) -> None:
        """A named check's finding; a problem is one of the item's problems too (exit 1)."""
        self.findings.append({"check": check, "severity": severity, "message": message})
        if severity == "problem":
            self.problems.append(message)

    def days_left(self, now: dt.datetime) -> int | None:
        if self.not_after is None:
            return None
        return (self.not_after - now) // dt.timedelta(days=1)

    def to_json(self, now: dt.datetime) -> dict:
        def iso(t: dt.datetime | None) -> str | None:
            return t.astimezone(dt.UTC).isoformat() if t else None
        return {"kind": self.kind, "name": self.name, "path": self.path,
                "not_before": iso(self.not_before), "not_after": iso(self.not_after),
                "days_left": self.days_left(now), "revoked": self.revoked is not None,
                "revocation": self.revoked, "within_certificate_and_signer": self.within,
                "notes": self.notes, "problems": self.problems, "findings": self.findings}


@dataclass
class Status:
    now: dt.datetime
    warn_days: int
    items: list[Item]

    @property
    def problems(self) -> list[Item]:
        return [i for i in self.items if i.problems]

    @property
    def exit_code(self) -> int:
        return 1 if self.problems else 0


def _dates_problems(item: Item, now: dt.datetime, warn_days: int, what: str = "") -> None:
    if item.not_before is not None and now < item.not_before:
        item.problems.append(f"{what}not valid before {_day(item.not_before)}")
    if item.not_after is None:
        return
    if now > item.not_after:
        item.problems.append(f"{what}expired on {_day(item.not_after)}")
    elif (item.not_after - now) / _DAY <= warn_days:   # any warn_days: no timedelta of it
        item.problems.append(f"{what}expires on {_day(item.not_after)}, within {warn_days} "
                             f"days")


def _day(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _certificate_item(kind: str, name: str, path: Path, cert: x509.Certificate,
                      crl: Crl | None) -> Item:
    item = Item(kind, name, str(path), cert.not_valid_before_utc, cert.not_valid_after_utc)
    r = crl.revocation(cert) if crl is not None else None
    if r is not None:
        item.revoked = explain_revocation(path, cert, crl, r)
    return item


def _grant_owner(subject: str | None, certs: dict[str, x509.Certificate]) -> str | None:
    """The participant whose certificate the grant names (as a distinguished name, or as
    Cyclone or Fast DDS would match it)."""
    return next((name for name, cert in certs.items()
                 if grants_certificate(subject, cert)), None)


def pki_status(pki: TestPKI, documents: list[SignedDates] = (), warn_days: int =
               DEFAULT_WARN_DAYS, now: dt.datetime | None = None) -> Status:
    """Every row (see the module docstring), problems marked."""
    now = now or dt.datetime.now(dt.UTC)
    if not pki.exists():
        raise GovkitError(f"{pki.directory}: no test PKI here (create one with `govkit pki "
                          f"init {pki.directory}`)")
    crl = load_crl(pki)
    items = [_certificate_item("identity CA", "identity_ca", pki.identity_ca,
                               pki.certificate("identity_ca"), None),
             _certificate_item("permissions CA", "permissions_ca", pki.permissions_ca,
                               pki.certificate("permissions_ca"), None)]
    stale = set(pki.stale_participants())
    certs: dict[str, x509.Certificate] = {}
    participants: dict[str, Item] = {}
    for name in pki.identities():
        try:
            cert = pki.certificate(name)
        except GovkitError as e:   # one bad file: said on its row, every other one listed
            item = Item("participant", name, str(pki.path(name)), None, None)
            item.problems.append(f"cannot read: {str(e).removeprefix(f'{pki.path(name)}: ')}")
            items.append(item)
            continue
        item = _certificate_item("participant", name, pki.path(name), cert, crl)
        if name in stale:
            item.notes.append("not issued by the current Identity CA (left from an earlier "
                              "PKI)")
        else:
            certs[name] = cert
        participants[name] = item
        items.append(item)
    if crl is not None:
        item = Item("CRL", crl.path.name, str(crl.path), crl.this_update, crl.next_update)
        item.notes.append(f"{len(crl.entries())} revoked; past its next update Cyclone DDS "
                          f"and Fast DDS refuse every certificate")
        items.append(item)
    stale_crl = crl_problem(pki, crl, crl_record(pki))
    if stale_crl:   # missing or older than the PKI manifest records: revocations lost
        item = next((i for i in items if i.kind == "CRL"), None)
        if item is None:
            item = Item("CRL", crl_path(pki).name, str(crl_path(pki)), None, None)
            items.append(item)
        item.problems.append(stale_crl.removeprefix(f"{crl_path(pki)}: "))
    identity_ca = pki.certificate("identity_ca")
    for name, cert in certs.items():
        if cert.not_valid_after_utc > identity_ca.not_valid_after_utc:
            participants[name].find("outlives-ca", "problem", (
                f"expires {_day(cert.not_valid_after_utc)}, after its issuer, the Identity CA "
                f"({_day(identity_ca.not_valid_after_utc)}): from then on no runtime accepts "
                f"it, whatever its own date says"))
    keyed = {"identity_ca": items[0], "permissions_ca": items[1], **participants}
    for stem, item in keyed.items():
        _key_mode(pki.path(stem, ".key"), item)
    for doc in documents:
        items += _document_items(doc, certs, participants)
    for item in items:
        if item.kind == "grant":
            continue     # its own dates were judged with the certificate's and signer's
        _dates_problems(item, now, warn_days)
    for item in items:
        if item.kind == "grant":
            _dates_problems(item, now, warn_days, "grant ")
    return Status(now, warn_days, items)


def _document_items(doc: SignedDates, certs: dict[str, x509.Certificate],
                    participants: dict[str, Item]) -> list[Item]:
    signer = doc.signer
    if doc.kind is None or signer is None:
        item = Item(doc.kind or "document", doc.path.name, str(doc.path), None, None)
        item.problems += list(doc.problems) or ["does not verify"]
        return [item]
    if doc.kind == "governance":
        item = Item("governance", doc.path.name, str(doc.path), signer.not_valid_before_utc,
                    signer.not_valid_after_utc)
        item.notes.append("valid as long as its signer "
                          f"({signer.subject.rfc4514_string()})")
        return [item]
    out = []
    for g in doc.grants:
        label = f"{doc.path.name}:{g.name or '?'}"
        item = Item("grant", label, str(doc.path), g.not_before, g.not_after)
        owner = _grant_owner(g.subject, certs)
        bounds = [(signer.not_valid_before_utc, signer.not_valid_after_utc, "the signer's")]
        if owner is None:
            item.notes.append(f"names no participant certificate here ({g.subject!r})")
        else:
            cert = certs[owner]
            bounds.append((cert.not_valid_before_utc, cert.not_valid_after_utc,
                           f"{owner}'s certificate's"))
            revoked = participants[owner].revoked
            if revoked is not None:
                item.revoked = revoked
                item.problems.append(f"grants {owner}, whose certificate is revoked")
                participants[owner].problems.append(f"revoked yet still granted by "
                                                    f"{doc.path}")
        if g.not_before is None or g.not_after is None:
            item.problems.append("validity is missing or not a date")
        else:
            if owner is not None:
                _grant_against_certificate(item, g, owner, certs[owner])
            outside = [what for lo, hi, what in bounds if g.not_before < lo or g.not_after > hi]
            item.within = not outside
            if outside:
                item.notes.append(f"validity is not within {' and '.join(outside)}: the "
                                  f"shorter one decides")
        out.append(item)
    return out


def _key_mode(key: Path, item: Item) -> None:
    """`key-mode`: a private key file its group or others may read or write (RTI's check
    asks for 0600 or stricter)."""
    try:
        mode = key.stat().st_mode
    except OSError:          # no key file (a PKCS#11 token holds it), or unreadable
        return
    if stat.S_ISREG(mode) and mode & 0o077:
        item.find("key-mode", "problem", (
            f"private key {key} has mode {mode & 0o777:04o}: its group or others may "
            f"{'read' if mode & 0o044 else 'write'} it; make it 0600 or stricter "
            f"(chmod 600 {shlex.quote(str(key))})"))


def _grant_against_certificate(item: Item, grant: GrantDates, owner: str,
                               cert: x509.Certificate) -> None:
    """`grant-outlives-certificate` and `grant-ends-before-certificate` (warnings)."""
    cert_end = cert.not_valid_after_utc
    if grant.not_after > cert_end:
        item.find("grant-outlives-certificate", "warning", (
            f"the grant runs to {_day(grant.not_after)}, past {owner}'s certificate "
            f"({_day(cert_end)}): no handshake succeeds after the certificate expires, though "
            f"Fast DDS before its fix keeps a peer already matched ({cite('CVE-2025-67108')}); "
            f"a renewed certificate (`govkit pki renew {owner}`, same subject) keeps this "
            f"grant"))
    elif grant.not_after < cert_end:
        item.find("grant-ends-before-certificate", "warning", (
            f"the grant ends {_day(grant.not_after)}, before {owner}'s certificate "
            f"({_day(cert_end)}): the participant loses its permissions while its "
            f"certificate is still valid; sign a longer grant before then"))


def status_lines(status: Status) -> list[str]:
    """A table, one row per item, then one line per problem."""
    now = status.now
    header = ("KIND", "NAME", "NOT BEFORE", "NOT AFTER", "DAYS LEFT", "REVOKED", "WITHIN")
    rows = [header]
    for i in status.items:
        rows.append((i.kind, i.name, _day(i.not_before) if i.not_before else "-",
                     _day(i.not_after) if i.not_after else "-",
                     str(i.days_left(now)) if i.not_after else "-",
                     "yes" if i.revoked else "no" if i.kind in ("participant", "grant")
                     else "-",
                     "-" if i.within is None else "yes" if i.within else "no"))
    widths = [max(len(r[c]) for r in rows) for c in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
             for r in rows]
    for i in status.items:
        lines += [f"{i.path}: {i.name}: note: {n}" for n in i.notes]
    for i in status.items:
        lines += [f"{i.path}: {i.name}: warning: {f['message']} [{f['check']}]"
                  for f in i.findings if f["severity"] == "warning"]
    for i in status.items:
        lines += [f"{i.path}: {i.name}: {p}" for p in i.problems]
        if i.revoked and i.kind == "participant":
            lines.append(f"{i.path}: {i.name}: {i.revoked}")
    verdict = (f"{len(status.problems)} item(s) need attention (expired, expiring within "
               f"{status.warn_days} days, not yet valid, revoked yet granted, outliving its "
               f"CA, or a private key not kept 0600)"
               if status.problems else f"nothing expires within {status.warn_days} days, "
               f"nothing revoked is granted")
    return [*lines, verdict]
