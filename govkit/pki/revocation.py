"""Revocation: the Identity CA's certificate revocation list (CRL), kept in the PKI directory.

`revoke` adds a participant's certificate (by serial) to `identity_ca.crl.pem`, signed by
the Identity CA, with a next update (the CRL's own expiry) and a CRL number one above the
last, and writes it atomically, holding the PKI's write lock from reading the old CRL to
writing the new one (govkit.pki.lock). It never writes a CRL govkit would not read back
(common.limits.MAX_CRL_BYTES, derived from MAX_REVOCATIONS). The CRL is the record: who
was revoked, when and why is read back from it.

One source of revocation truth, `current_crl`: the CRL together with the PKI manifest,
which records the last CRL govkit wrote (its number and thisUpdate, govkit.pki.manifest).
A CRL the manifest records that is missing, or older (a lower number, or the same number
and an earlier thisUpdate), is refused (exit 2, one line): deleting the CRL or putting an
old one back would otherwise un-revoke. Every command that grants, signs, ships, verifies
or renews reads the CRL through it; `revoke` (with no names: `govkit pki revoke --ca DIR`)
writes the CRL again with every revocation the manifest records.

Both runtimes govkit runs take this one file (govkit.generate.bundle names it for every
participant once it exists):
- Cyclone DDS 0.10: `<Security><Authentication><CRL>` (property
  org.eclipse.cyclonedds.sec.auth.crl, file: or data:), checked with X509_V_FLAG_CRL_CHECK
  on its own certificate when the participant is created and on every remote one in the
  handshake. It refuses a CRL together with `<TrustedCADirectory>` ("Cannot specify both
  CRL and trusted_ca_list"), which govkit never writes.
- Fast DDS 2.9: property dds.sec.auth.builtin.PKI-DH.identity_crl, `file://` URIs only,
  checked the same way (PKIDH.cpp verify_certificate).
With X509_V_FLAG_CRL_CHECK OpenSSL refuses *every* certificate once the CRL's next update
has passed (X509_V_ERR_CRL_HAS_EXPIRED), so the next update is a date to watch: `pki status`
lists it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization

from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.fsutil import write_atomic
from govkit.common.inputs import read_input
from govkit.common.limits import (
    CRL_ENTRY_DER_BYTES,
    CRL_FRAME_DER_BYTES,
    MAX_CRL_BYTES,
    MAX_REVOCATIONS,
)
from govkit.common.xmltime import xml_datetime
from govkit.pki.issued import issued_by
from govkit.pki.lock import pki_lock
from govkit.pki.manifest import (
    MAX_CRL_NUMBER,
    CrlRecord,
    Manifest,
    crl_record,
    last_crl_number,
    read_manifest,
    recorded_revocations,
    sha256_file,
    update_manifest,
)
from govkit.pki.participants import CA_STEMS, CRL_STEM
from govkit.pki.revocation_log import append_revocations, log_problem, logged_revocations
from govkit.pki.testpki import CLOCK_SKEW, LAST_VALID_TIME, TestPKI, max_days
from govkit.pki.vocabulary import DEFAULT_CRL_DAYS, REASON_NAMES

# The reasons a participant's certificate may be revoked for (pki.vocabulary), each as
# cryptography's flag, whose value is RFC 5280's name.
REASONS = {name: x509.ReasonFlags(name) for name in REASON_NAMES}
_REASON_NAMES = {flag: name for name, flag in REASONS.items()}


def crl_path(pki: TestPKI) -> Path:
    return pki.path(CRL_STEM)


@dataclass(frozen=True)
class Revocation:
    """One certificate on the CRL, as the CRL states it."""
    serial: int
    revoked_at: dt.datetime
    reason: str | None


@dataclass(frozen=True)
class Crl:
    """The Identity CA's CRL as read (and checked) from `path`."""
    path: Path
    crl: x509.CertificateRevocationList

    @property
    def number(self) -> int | None:
        try:
            return self.crl.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number
        except x509.ExtensionNotFound:
            return None

    @property
    def this_update(self) -> dt.datetime:
        return self.crl.last_update_utc

    @property
    def next_update(self) -> dt.datetime | None:
        return self.crl.next_update_utc

    @cached_property
    def _by_serial(self) -> dict[int, x509.RevokedCertificate]:
        # one pass: looking a serial up in the CRL itself walks the whole list each time
        return {e.serial_number: e for e in self.crl}

    def revocation(self, cert: x509.Certificate) -> Revocation | None:
        """The CRL's entry for `cert` (same issuer, same serial), or None."""
        if cert.issuer != self.crl.issuer:
            return None
        return self.entry(cert.serial_number)

    def entry(self, serial: int) -> Revocation | None:
        """The CRL's entry for `serial` (of a certificate of its issuer), or None."""
        entry = self._by_serial.get(serial)
        if entry is None:
            return None
        return Revocation(entry.serial_number, entry.revocation_date_utc, _reason(entry))

    @property
    def serials(self) -> frozenset[int]:
        return frozenset(self._by_serial)

    def entries(self) -> list[Revocation]:
        return [Revocation(e.serial_number, e.revocation_date_utc, _reason(e))
                for e in self.crl]


def _reason(entry: x509.RevokedCertificate) -> str | None:
    try:
        flag = entry.extensions.get_extension_for_class(x509.CRLReason).value.reason
    except x509.ExtensionNotFound:
        return None
    return _REASON_NAMES.get(flag, flag.value)


def load_crl(pki: TestPKI) -> Crl | None:
    """The PKI's CRL, or None if it has none. GovkitError (exit 2) if the file is not a PEM
    CRL or was not signed by the current Identity CA (left from an earlier PKI)."""
    path = crl_path(pki)
    if not path.exists():
        return None
    data = read_input(path, MAX_CRL_BYTES, "CRL")
    try:
        crl = x509.load_pem_x509_crl(data)
    except ValueError:
        raise GovkitError(f"{path}: not a PEM certificate revocation list", EXIT_USAGE) \
            from None
    ca = pki.certificate("identity_ca")
    if crl.issuer != ca.subject or not crl.is_signature_valid(ca.public_key()):
        raise GovkitError(f"{path}: not signed by the current Identity CA {pki.identity_ca} "
                          f"(left from an earlier PKI?); remove it or revoke again",
                          EXIT_USAGE)
    return Crl(path, crl)


def crl_problem(pki: TestPKI, crl: Crl | None, record: CrlRecord | None) -> str | None:
    """Why `crl` (the PKI's, None: there is none) is not the last one the manifest saw
    (`record`), or lacks a revocation the revocation log holds (govkit.pki.revocation_log:
    the manifest deleted too), in one line; None when neither."""
    return _record_problem(pki, crl, record) or log_problem(
        pki, crl.serials if crl is not None else None, crl_path(pki))


def _record_problem(pki: TestPKI, crl: Crl | None, record: CrlRecord | None) -> str | None:
    if record is None or (record.number is None and record.this_update is None):
        return None
    seen = f"CRL number {record.number}" + (f" (this update {record.this_update})"
                                            if record.this_update else "")
    fix = (f"put that CRL back, or write it again with `govkit pki revoke --ca "
           f"{pki.directory}` (it puts back every revocation the manifest records"
           + (f": {', '.join(record.revoked[:3])}{', …' if len(record.revoked) > 3 else ''})"
              if record.revoked else ")"))
    if crl is None:
        return (f"{crl_path(pki)}: missing, but the PKI manifest {record.path} records "
                f"{seen}: who is revoked is not known, nothing done; {fix}")
    number, this_update = crl.number or 0, xml_datetime(crl.this_update)
    older = number < (record.number or 0) or number == (record.number or 0) and \
        record.this_update is not None and this_update < record.this_update
    if not older:
        return None
    return (f"{crl_path(pki)}: CRL number {crl.number} (this update {this_update}) is older "
            f"than the {seen} the PKI manifest {record.path} records: revocations may be "
            f"missing from it, nothing done; {fix}")


def current_crl(pki: TestPKI, manifest: Manifest | None = None) -> Crl | None:
    """The PKI's CRL (load_crl), refused (GovkitError, exit 2) when it is missing or older
    than the last one an authentic PKI manifest records (`manifest`, if read already)."""
    crl = load_crl(pki)
    problem = crl_problem(pki, crl, crl_record(pki, manifest))
    if problem:
        raise GovkitError(problem, EXIT_USAGE)
    return crl


def _when(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def explain_revocation(cert_path: Path, cert: x509.Certificate, crl: Crl, r: Revocation) -> str:
    """One line: which certificate, revoked when (and why), by which CRL."""
    why = f" ({r.reason})" if r.reason else ""
    number = f"number {crl.number}, " if crl.number is not None else ""
    nxt = f", next update {_when(crl.next_update)}" if crl.next_update else ""
    return (f"certificate {cert_path} ({cert.subject.rfc4514_string()}, serial "
            f"{cert.serial_number:#x}) revoked on {_when(r.revoked_at)}{why} by CRL "
            f"{crl.path} ({number}issued by {crl.crl.issuer.rfc4514_string()}, this update "
            f"{_when(crl.this_update)}{nxt})")


def revoked_participants(pki: TestPKI, names, unreadable: list[str] | None = None
                         ) -> dict[str, str]:
    """Of `names`, the participants whose current certificate the PKI's CRL revokes:
    name -> the one-line explanation. A certificate that cannot be read is a GovkitError,
    or, given `unreadable`, one line there (and the others are still looked at)."""
    return {name: line for name, (_, line) in
            revoked_certificates(pki, names, unreadable).items()}


def explain_recorded(pki: TestPKI, name: str, recorded: dict, manifest: Path) -> str:
    """One line: a revocation the PKI manifest records and the CRL does not state."""
    return (f"certificate {pki.path(name)} (serial {recorded['serial']}) revoked on "
            f"{recorded['at']} by CRL number {recorded.get('crl_number')}, as the PKI "
            f"manifest {manifest} records (the CRL does not say so: `govkit pki revoke "
            f"--ca {pki.directory}` puts it back)")


def revoked_certificates(pki: TestPKI, names, unreadable: list[str] | None = None
                         ) -> dict[str, tuple[x509.Certificate, str]]:
    """`revoked_participants`, with each revoked certificate: those the CRL revokes and
    those the PKI manifest records revoked (the same certificate file); a CRL missing or
    older than the manifest's is refused (current_crl). A certificate file the manifest
    lists (the same bytes) is not parsed unless it is revoked."""
    crl = load_crl(pki)   # read once: it may be tens of MB
    manifest = None
    if crl is None:   # the common case, checked without reading every entry
        record = crl_record(pki)
    else:
        manifest, _ = read_manifest(pki)
        record = crl_record(pki, manifest)
    problem = crl_problem(pki, crl, record)
    if problem:
        raise GovkitError(problem, EXIT_USAGE)
    if crl is None:
        if record is None or not record.revoked:
            return {}
        manifest, _ = read_manifest(pki)
    entries = manifest.entries if manifest else {}
    serials = crl.serials if crl is not None else frozenset()
    found = {}
    for name in names:
        entry = entries.get(name)
        same = None
        if entry is not None and entry.issued:
            try:
                same = sha256_file(pki.path(name)) == entry.sha256
            except GovkitError:
                same = False
            if same and entry.serial not in serials and not entry.revoked:
                continue   # the very certificate the CRL does not list, nor the manifest
        if not pki.path(name).exists():
            continue
        try:
            cert = pki.certificate(name)
        except GovkitError as e:
            if unreadable is None:
                raise
            unreadable.append(f"{e}; whether it is revoked is not known")
            continue
        r = crl.revocation(cert) if crl is not None else None
        if r is not None:
            found[name] = cert, explain_revocation(pki.path(name), cert, crl, r)
        elif same and entry.revoked:
            found[name] = cert, explain_recorded(pki, name, entry.revoked, manifest.path)
    return found


def revoke(pki: TestPKI, name: str, reason: str | None = None,
           days: int = DEFAULT_CRL_DAYS, now: dt.datetime | None = None
           ) -> tuple[str, bool]:
    """Put participant `name`'s current certificate on the Identity CA's CRL and rewrite the
    CRL (atomically). Returns (the one-line explanation, whether it was newly revoked: a
    certificate already on the CRL is left as it is)."""
    return revoke_all(pki, [name], reason, days, now)[0]


def revoke_all(pki: TestPKI, names: list[str], reason: str | None = None,
               days: int = DEFAULT_CRL_DAYS, now: dt.datetime | None = None,
               notes: list[str] | None = None) -> list[tuple[str, bool]]:
    """`revoke` for each of `names`, with one new CRL for all of them (none if every one
    was revoked already). The PKI's write lock is held from reading the old CRL to
    writing the new one, so two revocations at once both land, in CRLs numbered one
    after the other (govkit.pki.lock). The CRL's number follows the last one the PKI
    manifest saw too, and revocations the manifest records but the CRL lacks (a CRL
    deleted or replaced by hand) are put back, said in `notes`: no one is un-revoked.
    With no `names`, only that: the CRL written again when it lacks a recorded
    revocation or is older than the last one the manifest saw (current_crl)."""
    now = now or dt.datetime.now(dt.UTC)
    if reason is not None and reason not in REASONS:
        raise GovkitError(f"unknown reason {reason!r}; valid: {', '.join(REASONS)}",
                          EXIT_USAGE)
    if not 1 <= days <= max_days(now):
        raise GovkitError(f"--crl-days must be between 1 and {max_days(now)} (no CRL can "
                          f"name a next update after {LAST_VALID_TIME.date()}; it is "
                          f"capped at the Identity CA's expiry anyway)", EXIT_USAGE)
    stems = []
    for name in names:
        if name in CA_STEMS or name == CRL_STEM:
            raise GovkitError(f"{name}: only a participant's certificate can be revoked here "
                              f"(a CA is replaced with `govkit pki init --force`)", EXIT_USAGE)
        stems.append(pki.participant_stem(name))
    if not pki.exists():
        raise GovkitError(f"{pki.directory}: no test PKI here (create one with `govkit pki "
                          f"init {pki.directory}`)", EXIT_USAGE)
    with pki_lock(pki.directory):
        return _revoke_locked(pki, list(dict.fromkeys(stems)), reason, days, now,
                              notes if notes is not None else [])


def _restored(old: Crl | None, recorded: list[dict]) -> list[x509.RevokedCertificate]:
    """CRL entries for the revocations the manifest records (or the log) and the CRL
    lacks, each serial once."""
    have = set(old.serials if old else ())
    out = []
    for r in recorded:
        serial = r["serial"] if isinstance(r["serial"], int) else int(r["serial"], 16)
        if serial in have:
            continue
        have.add(serial)
        entry = x509.RevokedCertificateBuilder().serial_number(serial).revocation_date(
            dt.datetime.fromisoformat(r["at"]))
        if r.get("reason") in REASONS:
            entry = entry.add_extension(x509.CRLReason(REASONS[r["reason"]]), critical=False)
        out.append(entry.build())
    return out


def _revoke_locked(pki: TestPKI, names: list[str], reason: str | None, days: int,
                   now: dt.datetime, notes: list[str]) -> list[tuple[str, bool]]:
    ca_cert, ca_key = pki.key_pair("identity_ca")
    certs = {}
    for name in names:
        path = pki.path(name)
        if not path.is_file():
            raise GovkitError(f"{path}: no such participant certificate", EXIT_USAGE)
        cert = pki.certificate(name)
        if not issued_by(cert, ca_cert):
            raise GovkitError(f"{path}: not issued by the current Identity CA (left from an "
                              f"earlier PKI); its CRL cannot revoke it", EXIT_USAGE)
        certs[name] = cert
    old = load_crl(pki)
    _refuse_oversized(old)
    record = crl_record(pki)
    stale = crl_problem(pki, old, record)
    logged, _ = logged_revocations(pki)
    restored = _restored(old, recorded_revocations(pki) + logged)
    back = {e.serial_number for e in restored}
    done = {name: old.revocation(cert) for name, cert in certs.items()} if old else {}
    # (a certificate whose revocation is put back is not revoked again, at another time)
    new = [name for name in names if done.get(name) is None
           and certs[name].serial_number not in back]
    if not new and not restored and not stale:
        update_manifest(pki, old, changed=[])   # (the manifest may not say so yet)
        return [(explain_revocation(pki.path(n), certs[n], old, done[n]), False) for n in names]
    if stale and not restored and record is not None and record.number is not None:
        notes.append(f"{crl_path(pki)}: {'older than' if old else 'missing, after'} CRL "
                     f"number {record.number}, the last the PKI manifest {record.path} "
                     f"records: written again, numbered after it")
    elif stale and not restored:
        notes.append(stale)
    if restored:
        serials = ", ".join(f"{e.serial_number:#x}" for e in restored[:3])
        notes.append(f"{crl_path(pki)}: lacked {len(restored)} revocation(s) the PKI manifest "
                     f"records, or its revocation log (serial {serials}"
                     f"{', …' if len(restored) > 3 else ''}): put back, so no one is "
                     f"un-revoked")
    kept = (list(old.crl) if old else []) + restored
    if len(kept) + len(new) > MAX_REVOCATIONS:
        raise GovkitError(f"{crl_path(pki)}: holds {len(kept)} revocations; {len(new)} more "
                          f"would pass {MAX_REVOCATIONS}, the most a govkit CRL holds; "
                          f"nothing revoked (replace the PKI with `govkit pki init "
                          f"{pki.directory} --force`)", EXIT_USAGE)
    next_update = min(now + dt.timedelta(days=days), ca_cert.not_valid_after_utc)
    if next_update <= now:
        raise GovkitError(f"{pki.identity_ca}: the Identity CA has expired; a CRL it signs "
                          f"now would already be out of date", EXIT_USAGE)
    entries = []
    for name in new:
        entry = x509.RevokedCertificateBuilder().serial_number(certs[name].serial_number) \
            .revocation_date(now)
        if reason is not None:
            entry = entry.add_extension(x509.CRLReason(REASONS[reason]), critical=False)
        entries.append(entry.build())
    number = max((old.number or 0) if old else 0, last_crl_number(pki)) + 1
    if number >= MAX_CRL_NUMBER:
        raise GovkitError(f"{crl_path(pki)}: the next CRL number, {str(number)[:24]}… "
                          f"({len(str(number))} digits, after the last one the CRL or the "
                          f"PKI manifest records), would pass the 20 octets RFC 5280 5.2.3 "
                          f"allows; nothing revoked (replace the PKI with `govkit pki init "
                          f"{pki.directory} --force`)", EXIT_USAGE)
    # The entries are handed to the builder at once: adding them one by one copies the
    # list each time (100,000 revocations took minutes).
    builder = x509.CertificateRevocationListBuilder(
        issuer_name=ca_cert.subject,
        # thisUpdate backdated like the certificates: a peer whose clock is behind would
        # otherwise find the CRL "not yet valid" and refuse everyone
        last_update=now - CLOCK_SKEW, next_update=next_update,
        extensions=[x509.Extension(x509.CRLNumber.oid, False, x509.CRLNumber(number)),
                    x509.Extension(x509.AuthorityKeyIdentifier.oid, False,
                                   x509.AuthorityKeyIdentifier.from_issuer_public_key(
                                       ca_key.public_key()))],
        revoked_certificates=entries + kept)
    crl = builder.sign(ca_key, hashes.SHA256())
    pem = crl.public_bytes(serialization.Encoding.PEM)
    if len(pem) > MAX_CRL_BYTES:   # never write what govkit would refuse to read back
        raise GovkitError(f"{crl_path(pki)}: the new CRL would be {len(pem)} bytes, more "
                          f"than govkit reads ({MAX_CRL_BYTES}); nothing revoked",
                          EXIT_USAGE)
    write_atomic(crl_path(pki), pem, mode=0o644)
    written = Crl(crl_path(pki), crl)
    update_manifest(pki, written, changed=[])   # every entry's revocation, from this CRL
    # and every revocation of this CRL the log lacks (older ones too, the first time)
    known = {r["serial"] for r in logged}
    by_serial = {c.serial_number: n for n, c in certs.items()}
    append_revocations(pki, [
        {"serial": f"{e.serial_number:#x}", "at": e.revocation_date_utc.isoformat(),
         "reason": _reason(e), "name": by_serial.get(e.serial_number)}
        for e in crl if e.serial_number not in known])
    return [(explain_revocation(pki.path(n), certs[n], written, written.revocation(certs[n])),
             n in new) for n in names]


def _refuse_oversized(crl: Crl | None) -> None:
    """A CRL larger than govkit writes for its entries (CRL_FRAME_DER_BYTES and
    CRL_ENTRY_DER_BYTES each) is not one govkit wrote; `revoke` would copy what it holds
    besides the entries into every CRL after it. Refused (exit 2)."""
    if crl is None:
        return
    size = len(crl.crl.public_bytes(serialization.Encoding.DER))
    most = CRL_FRAME_DER_BYTES + len(crl.crl) * CRL_ENTRY_DER_BYTES
    if size > most:
        raise GovkitError(f"{crl.path}: {size} bytes (DER) for {len(crl.crl)} revocation(s), "
                          f"more than govkit writes for them ({most}): not a CRL govkit "
                          f"wrote; nothing revoked (remove it: `govkit pki revoke` writes "
                          f"it again from the PKI manifest's records)", EXIT_USAGE)
