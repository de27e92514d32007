"""The PKI manifest: every participant certificate proven once, when the PKI writes it.

`generate --sign` must know, for each participant, that its certificate is the current
Identity CA's (and what its subject and validity are). Checking that signature for each of
10,000 participants on every run was most of what a fleet cost (issue 35). So the check is
made when the PKI issues, renews, re-keys or revokes, and recorded: `pki/manifest` lists,
per participant, the SHA-256 of its certificate file, its subject (RFC 4514, as a
permissions document states it), serial, validity and issuer, the verdict of the full
check (issued by the current Identity CA, as TestPKI.stale_participants decides), and
whether the Identity CA's CRL revokes it. A later run reads the certificate file and
compares its hash instead.

The manifest is authenticated: HMAC-SHA256 under `pki/manifest-key`, 32 random bytes kept
beside the CA keys (mode 0600, never overwritten; whoever can read it can read the CA
keys). It is written under the PKI's write lock (govkit.pki.lock), atomically, by every
command that writes the PKI (`pki init` and what adds participants, `renew`, `revoke`),
and only ever about the current Identity CA (its certificate's hash is in it).

It fails closed. A manifest that is missing, edited, truncated, written for another
Identity CA or under another key is not used at all (`read_manifest` says why, in one
line); a certificate whose file does not hash to its entry, or that has none, gets the
full check. Revocation is never taken from the manifest alone: a participant is revoked
if the CRL or the manifest says so (an old manifest replayed after `revoke` still has a
valid HMAC, but the CRL revokes), and `revoke` puts back on the CRL every revocation the
manifest records (a deleted CRL un-revokes no one).

The manifest also records the last CRL it saw (its number and thisUpdate, `CrlRecord`)
and the revocations of certificates that are no participant's any more (re-keyed: `retired`),
so that govkit.pki.revocation.current_crl can refuse a CRL that is missing or older than
that one, and `revoke` can write back every revocation, the retired ones included.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509

from govkit.common.errors import GovkitError
from govkit.common.fsutil import write_atomic
from govkit.common.inputs import read_input
from govkit.common.limits import MAX_MANIFEST_BYTES, MAX_MANIFEST_PARTICIPANTS, MAX_PEM_BYTES
from govkit.common.xmltime import XML_DATETIME_FORMAT, xml_datetime
from govkit.pki.issued import issued_certificate
from govkit.pki.testpki import TestPKI, subject_rfc2253

MANIFEST_NAME = "manifest"
KEY_NAME = "manifest-key"
SCHEMA = "govkit.pki-manifest/1"
# RFC 5280 5.2.3: a CRL number is a non-negative integer of at most 20 octets.
MAX_CRL_NUMBER = 2 ** 159
_TAG = b"hmac-sha256 "
_TAG_LINE = len(_TAG) + 64 + 1
# An entry longer than this is left out (its participant then gets the full check): only
# a certificate put in the PKI by hand can have one (govkit's subjects are a few hundred
# characters), so MAX_MANIFEST_BYTES is a bound on what govkit writes.
MAX_ENTRY_BYTES = 1024


@dataclass(frozen=True)
class Entry:
    """What the full check found about one participant's certificate file."""
    sha256: bytes
    issued: bool                    # the current Identity CA issued it (the full check)
    subject: str = ""
    serial: int = 0
    not_before: str = ""            # xml_datetime
    not_after: str = ""
    issuer: str = ""
    revoked: dict | None = None     # {"serial", "at", "reason", "crl_number"} when revoked

    def to_json(self) -> dict:
        return {"sha256": self.sha256.hex(), "issued": self.issued, "subject": self.subject,
                "serial": f"{self.serial:#x}", "not_before": self.not_before,
                "not_after": self.not_after, "issuer": self.issuer, "revoked": self.revoked}

    @classmethod
    def from_json(cls, d: dict) -> Entry:
        return cls(bytes.fromhex(d["sha256"]), d["issued"] is True, str(d["subject"]),
                   int(d["serial"], 16), str(d["not_before"]), str(d["not_after"]),
                   str(d["issuer"]), checked_revocation(d["revoked"])
                   if isinstance(d["revoked"], dict) else None)


def checked_revocation(r: dict) -> dict:
    """A recorded revocation ({"serial", "at", "reason", "crl_number"}) as `revoke` can
    write it back on a CRL; ValueError if it is not one (an authentic manifest holds only
    what govkit wrote, but one that is not is refused, never a traceback)."""
    serial = int(r["serial"], 16) if isinstance(r.get("serial"), str) else -1
    if not 0 < serial < 2 ** 159:   # RFC 5280 4.1.2.2: positive, at most 20 octets
        raise ValueError("not a serial number")
    at = dt.datetime.fromisoformat(str(r["at"]))
    if at.tzinfo is None:
        raise ValueError("a revocation time without a zone")
    if r.get("reason") is not None and not isinstance(r["reason"], str):
        raise ValueError("not a reason")
    number = r.get("crl_number")
    if number is not None and (type(number) is not int or number < 0):
        raise ValueError("not a CRL number")
    return r


def check_certificate(pem: bytes, ca: x509.Certificate) -> Entry:
    """The full check of one certificate file's bytes: its entry (issued False for one
    the Identity CA `ca` did not issue, or that cannot be read)."""
    digest = hashlib.sha256(pem).digest()
    cert = issued_certificate(pem, ca)
    if cert is None:
        return Entry(digest, False)
    return Entry(digest, True, subject_rfc2253(cert), cert.serial_number,
                 xml_datetime(cert.not_valid_before_utc), xml_datetime(cert.not_valid_after_utc),
                 cert.issuer.rfc4514_string())


@dataclass(frozen=True)
class CrlRecord:
    """The last CRL a manifest saw (at `path`): its number and thisUpdate (xml_datetime;
    None in a manifest of an earlier govkit), and the participants it records revoked."""
    path: Path
    number: int | None
    this_update: str | None
    revoked: tuple[str, ...] = ()


@dataclass(frozen=True)
class Manifest:
    path: Path
    identity_ca: bytes              # SHA-256 of the Identity CA certificate file
    crl_number: int | None          # the CRL's number when it was written
    entries: dict[str, Entry]
    crl_this_update: str | None = None   # that CRL's thisUpdate (xml_datetime)
    # revocations of certificates no participant holds any more (re-keyed ones)
    retired: tuple[dict, ...] = ()

    @property
    def crl(self) -> CrlRecord:
        return CrlRecord(self.path, self.crl_number, self.crl_this_update,
                         tuple(sorted(n for n, e in self.entries.items() if e.revoked)))


def manifest_path(pki: TestPKI) -> Path:
    return pki.directory / MANIFEST_NAME


def _key(pki: TestPKI, create: bool) -> bytes | None:
    """The HMAC key (created if `create` and there is none); None if there is none, or
    it is not one (never replaced: a key is never overwritten)."""
    path = pki.directory / KEY_NAME
    if create and not path.exists():
        try:
            write_atomic(path, secrets.token_hex(32) + "\n", mode=0o600, overwrite=False)
        except FileExistsError:
            pass
    try:
        text = read_input(path, 1024, "manifest key").decode("ascii").strip()
        key = bytes.fromhex(text)
    except (GovkitError, UnicodeDecodeError, ValueError):
        return None
    return key if len(key) == 32 else None


def sha256_file(path: Path) -> bytes:
    return hashlib.sha256(read_input(path, MAX_PEM_BYTES, "certificate")).digest()


def _authentic(pki: TestPKI) -> tuple[dict | None, str | None]:
    """(the manifest's JSON, None) when it is there, authentic, and about the current
    Identity CA; else (None, one line saying why it is not used)."""
    path = manifest_path(pki)
    if not path.exists():
        return None, (f"{path}: no PKI manifest (written by every `govkit pki` command that "
                      f"writes the PKI, e.g. `govkit pki init {pki.directory}`)")
    key = _key(pki, create=False)
    if key is None:
        return None, f"{pki.directory / KEY_NAME}: missing or not a manifest key"
    try:
        data = read_input(path, MAX_MANIFEST_BYTES, "PKI manifest")
    except GovkitError as e:
        return None, str(e)
    body, tag = data[:-_TAG_LINE], data[-_TAG_LINE:]
    mac = hmac.new(key, body, hashlib.sha256).hexdigest().encode()
    if not (tag.startswith(_TAG) and tag.endswith(b"\n")
            and hmac.compare_digest(tag[len(_TAG):-1], mac)):
        return None, (f"{path}: does not authenticate under {pki.directory / KEY_NAME} "
                      f"(edited, truncated, or not this PKI's)")
    unreadable = f"{path}: authentic, but not a manifest this govkit reads"
    try:
        doc = json.loads(body)
        if doc["schema"] != SCHEMA:
            return None, f"{path}: not a {SCHEMA} manifest"
        ca = bytes.fromhex(doc["identity_ca"])
        number, this_update = doc["crl_number"], doc.get("crl_this_update")
        if number is not None and (type(number) is not int or number < 0):
            return None, f"{unreadable} (its crl_number is not a CRL number)"
        if this_update is not None:
            dt.datetime.strptime(this_update, XML_DATETIME_FORMAT)
        doc["retired"] = [checked_revocation(r) for r in doc.get("retired", [])]
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        # (RecursionError: JSON nested too deep for the parser)
        return None, unreadable
    try:
        current = sha256_file(pki.identity_ca)
    except GovkitError as e:
        return None, str(e)
    if ca != current:
        return None, f"{path}: written for another Identity CA than {pki.identity_ca}"
    return doc, None


def read_manifest(pki: TestPKI) -> tuple[Manifest | None, str | None]:
    """(the manifest, None) when it is there, authentic, and about the current Identity
    CA; else (None, one line saying why it is not used)."""
    doc, why = _authentic(pki)
    if doc is None:
        return None, why
    path = manifest_path(pki)
    if doc.get("too_many"):
        return None, (f"{path}: the PKI had {doc['too_many']} participants, more than "
                      f"a manifest lists ({MAX_MANIFEST_PARTICIPANTS})")
    try:
        entries = {str(name): Entry.from_json(e) for name, e in doc["participants"].items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        return None, f"{path}: authentic, but not a manifest this govkit reads"
    return Manifest(path, bytes.fromhex(doc["identity_ca"]), doc["crl_number"], entries,
                    doc.get("crl_this_update"), tuple(doc["retired"])), None


def crl_record(pki: TestPKI, manifest: Manifest | None = None) -> CrlRecord | None:
    """The last CRL an authentic manifest saw (`manifest`, if read already), also from one
    that lists no participants (too many); None without an authentic manifest."""
    if manifest is not None:
        return manifest.crl
    doc, _ = _authentic(pki)   # (no entry read: half the time of read_manifest)
    if doc is None:
        return None
    listed = doc.get("participants")
    revoked = sorted(str(n) for n, e in listed.items() if isinstance(e, dict) and
                     e.get("revoked")) if isinstance(listed, dict) else []
    return CrlRecord(manifest_path(pki), doc["crl_number"], doc.get("crl_this_update"),
                     tuple(revoked))


def update_manifest(pki: TestPKI, crl, changed=None,
                    checked: dict[str, Entry] | None = None) -> None:
    """Rewrite the manifest (the caller holds the PKI's write lock). `changed`: the
    participants whose certificate files were written or may have changed (None: all of
    them); an entry of `checked` (the full check made where the certificate was issued)
    is used when it is still the file's. Every other entry is kept from the manifest
    there, if that one is authentic and about the current Identity CA; else every
    participant is checked now. `crl`: the Identity CA's CRL (revocation.Crl, or None).
    Nothing is written when there is no key and none can be made."""
    key = _key(pki, create=True)
    if key is None:
        return   # a bad key is never replaced; read_manifest says so to the reader
    old, _ = read_manifest(pki)
    names = set(pki.identities())
    ca_pem = read_input(pki.identity_ca, MAX_PEM_BYTES, "certificate")
    # the last CRL seen: this one, unless the manifest saw a later one (a CRL deleted or
    # put back older is then refused by its readers: revocation.current_crl)
    seen = crl_record(pki, old)
    crl_number, this_update = (seen.number, seen.this_update) if seen else (None, None)
    if crl is not None and (crl.number or 0) >= (crl_number or 0):
        crl_number, this_update = crl.number, xml_datetime(crl.this_update)
    header = {"schema": SCHEMA, "identity_ca": hashlib.sha256(ca_pem).hexdigest(),
              "crl_number": crl_number, "crl_this_update": this_update}
    if len(names) > MAX_MANIFEST_PARTICIPANTS:
        _write(pki, key, {**header, "too_many": len(names)}, [])
        return
    todo = names if old is None or changed is None else set(changed) & names
    entries = {n: e for n, e in (old.entries.items() if old else ()) if n in names}
    ca = None
    for name in sorted(todo):
        try:
            pem = read_input(pki.path(name), MAX_PEM_BYTES, "certificate")
        except GovkitError:
            entries.pop(name, None)   # not readable now: the reader checks it in full
            continue
        given = (checked or {}).get(name)
        if given is not None and given.sha256 == hashlib.sha256(pem).digest():
            entries[name] = given
        else:
            ca = ca or x509.load_pem_x509_certificate(ca_pem)
            entries[name] = check_certificate(pem, ca)
    entries = {n: _revocation(e, crl, old.entries.get(n) if old else None)
               for n, e in entries.items()}
    header["retired"] = _retired(old, entries)
    lines = []
    for name in sorted(entries):
        line = json.dumps(name) + ": " + json.dumps(entries[name].to_json())
        if len(line) <= MAX_ENTRY_BYTES:
            lines.append(line)
    _write(pki, key, header, lines)


def _revocation(entry: Entry, crl, old: Entry | None) -> Entry:
    """`entry`, revoked if the CRL revokes its serial or the manifest already said so for
    this very certificate file (a CRL that went missing un-revokes no one)."""
    if not entry.issued:
        return entry
    revoked = old.revoked if old is not None and old.sha256 == entry.sha256 else None
    found = crl.entry(entry.serial) if crl is not None else None
    if found is not None:
        revoked = {"serial": f"{entry.serial:#x}", "at": xml_datetime(found.revoked_at),
                   "reason": found.reason, "crl_number": crl.number}
    return dataclasses.replace(entry, revoked=revoked)


def _retired(old: Manifest | None, entries: dict[str, Entry]) -> list[dict]:
    """The revocations the old manifest records of certificates no entry holds now (a
    re-keyed participant's old one): kept, so that `revoke` can put them back on a CRL."""
    if old is None:
        return []
    current = {e.revoked["serial"] for e in entries.values() if e.revoked}
    kept = [*old.retired, *(e.revoked for e in old.entries.values() if e.revoked)]
    out: dict[str, dict] = {}
    for r in kept:
        if r["serial"] not in current:
            out.setdefault(r["serial"], r)
    return list(out.values())


def _write(pki: TestPKI, key: bytes, header: dict, lines: list[str]) -> None:
    head = json.dumps(header)[:-1]   # the header's fields, then the participants
    body = (head + ', "participants": {\n' + ",\n".join(lines) + "\n}}\n").encode()
    if len(body) + _TAG_LINE > MAX_MANIFEST_BYTES:   # cannot be: entries are bounded
        manifest_path(pki).unlink(missing_ok=True)
        return
    mac = hmac.new(key, body, hashlib.sha256).hexdigest().encode()
    data = body + _TAG + mac + b"\n"
    try:
        if manifest_path(pki).read_bytes() == data:
            return   # nothing changed: nothing written
    except OSError:
        pass
    write_atomic(manifest_path(pki), data, mode=0o644)


def recorded_revocations(pki: TestPKI) -> list[dict]:
    """The revocations an authentic manifest records ({"serial", "at", "reason", ...})."""
    manifest, _ = read_manifest(pki)
    if manifest is None:
        return []
    return [*(e.revoked for e in manifest.entries.values() if e.revoked), *manifest.retired]


def last_crl_number(pki: TestPKI) -> int:
    """The number of the last CRL an authentic manifest saw (0 if none)."""
    record = crl_record(pki)
    return (record.number or 0) if record else 0
