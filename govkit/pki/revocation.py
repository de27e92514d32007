"""Revocation: the Identity CA's certificate revocation list (CRL), kept in the PKI directory.

`revoke` adds a participant's certificate (by serial) to `identity_ca.crl.pem`, signed by
the Identity CA, with a next update (the CRL's own expiry) and a CRL number one above the
last, and writes it atomically, holding the PKI's write lock from reading the old CRL to
writing the new one (govkit.pki.lock). It never writes a CRL govkit would not read back
(common.limits.MAX_CRL_BYTES, derived from MAX_REVOCATIONS). The CRL is the record: who
was revoked, when and why is read back from it.

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
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization

from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.fsutil import write_atomic
from govkit.common.inputs import read_input
from govkit.common.limits import MAX_CRL_BYTES, MAX_REVOCATIONS
from govkit.pki.lock import pki_lock
from govkit.pki.manifest import (
    last_crl_number,
    read_manifest,
    recorded_revocations,
    sha256_file,
    update_manifest,
)
from govkit.pki.participants import CA_STEMS, CRL_STEM
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


def revoked_certificates(pki: TestPKI, names, unreadable: list[str] | None = None
                         ) -> dict[str, tuple[x509.Certificate, str]]:
    """`revoked_participants`, with each revoked certificate. A certificate file the PKI
    manifest lists (the same bytes) is not parsed unless the CRL lists its serial."""
    crl = load_crl(pki)
    if crl is None:
        return {}
    manifest, _ = read_manifest(pki)
    entries = manifest.entries if manifest else {}
    serials = crl.serials
    found = {}
    for name in names:
        entry = entries.get(name)
        if entry is not None and entry.issued and entry.serial not in serials:
            try:
                if sha256_file(pki.path(name)) == entry.sha256:
                    continue   # the very certificate whose serial the CRL does not list
            except GovkitError:
                pass
        if not pki.path(name).exists():
            continue
        try:
            cert = pki.certificate(name)
        except GovkitError as e:
            if unreadable is None:
                raise
            unreadable.append(f"{e}; whether it is revoked is not known")
            continue
        r = crl.revocation(cert)
        if r is not None:
            found[name] = cert, explain_revocation(pki.path(name), cert, crl, r)
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
    deleted or replaced by hand) are put back, said in `notes`: no one is un-revoked."""
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
    """CRL entries for the revocations the manifest records and the CRL lacks."""
    have = old.serials if old else frozenset()
    out = []
    for r in recorded:
        serial = int(r["serial"], 16)
        if serial in have:
            continue
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
        try:
            cert.verify_directly_issued_by(ca_cert)
        except (ValueError, TypeError, InvalidSignature):
            raise GovkitError(f"{path}: not issued by the current Identity CA (left from an "
                              f"earlier PKI); its CRL cannot revoke it", EXIT_USAGE) from None
        certs[name] = cert
    old = load_crl(pki)
    done = {name: old.revocation(cert) for name, cert in certs.items()} if old else {}
    new = [name for name in names if done.get(name) is None]
    restored = _restored(old, recorded_revocations(pki))
    if not new and not restored:
        update_manifest(pki, old, changed=[])   # (the manifest may not say so yet)
        return [(explain_revocation(pki.path(n), certs[n], old, done[n]), False) for n in names]
    if restored:
        notes.append(f"{crl_path(pki)}: lacked {len(restored)} revocation(s) the PKI manifest "
                     f"records (serial {', '.join(f'{e.serial_number:#x}' for e in restored[:3])}"
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
    return [(explain_revocation(pki.path(n), certs[n], written, written.revocation(certs[n])),
             n in new) for n in names]
