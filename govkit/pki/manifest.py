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
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm

from govkit.common.errors import GovkitError
from govkit.common.fsutil import write_atomic
from govkit.common.inputs import read_input
from govkit.common.limits import MAX_MANIFEST_BYTES, MAX_MANIFEST_PARTICIPANTS, MAX_PEM_BYTES
from govkit.pki.testpki import TestPKI, subject_rfc2253

MANIFEST_NAME = "manifest"
KEY_NAME = "manifest-key"
SCHEMA = "govkit.pki-manifest/1"
_TAG = b"hmac-sha256 "
_TAG_LINE = len(_TAG) + 64 + 1
# An entry longer than this is left out (its participant then gets the full check): only
# a certificate put in the PKI by hand can have one (govkit's subjects are a few hundred
# characters), so MAX_MANIFEST_BYTES is a bound on what govkit writes.
MAX_ENTRY_BYTES = 1024


@lru_cache(maxsize=256)   # a fleet's certificates share a few validity periods
def xml_datetime(t: dt.datetime) -> str:
    """A validity bound as a permissions document (xs:dateTime, UTC) and the manifest
    state it."""
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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
                   str(d["issuer"]), d["revoked"] if isinstance(d["revoked"], dict) else None)


def check_certificate(pem: bytes, ca: x509.Certificate) -> Entry:
    """The full check of one certificate file's bytes: its entry (issued False for one
    the Identity CA `ca` did not issue, or that cannot be read)."""
    digest = hashlib.sha256(pem).digest()
    try:
        cert = x509.load_pem_x509_certificate(pem)
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature, UnsupportedAlgorithm):
        return Entry(digest, False)
    return Entry(digest, True, subject_rfc2253(cert), cert.serial_number,
                 xml_datetime(cert.not_valid_before_utc), xml_datetime(cert.not_valid_after_utc),
                 cert.issuer.rfc4514_string())


@dataclass(frozen=True)
class Manifest:
    path: Path
    identity_ca: bytes              # SHA-256 of the Identity CA certificate file
    crl_number: int | None          # the CRL's number when it was written
    entries: dict[str, Entry]


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


def read_manifest(pki: TestPKI) -> tuple[Manifest | None, str | None]:
    """(the manifest, None) when it is there, authentic, and about the current Identity
    CA; else (None, one line saying why it is not used)."""
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
    try:
        doc = json.loads(body)
        if doc["schema"] != SCHEMA:
            return None, f"{path}: not a {SCHEMA} manifest"
        ca = bytes.fromhex(doc["identity_ca"])
        if doc.get("too_many"):
            return None, (f"{path}: the PKI had {doc['too_many']} participants, more than "
                          f"a manifest lists ({MAX_MANIFEST_PARTICIPANTS})")
        entries = {name: Entry.from_json(e) for name, e in doc["participants"].items()}
        number = doc["crl_number"]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None, f"{path}: authentic, but not a manifest this govkit reads"
    try:
        current = sha256_file(pki.identity_ca)
    except GovkitError as e:
        return None, str(e)
    if ca != current:
        return None, f"{path}: written for another Identity CA than {pki.identity_ca}"
    return Manifest(path, ca, number if isinstance(number, int) else None, entries), None


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
    crl_number = max((crl.number or 0) if crl else 0,
                     (old.crl_number or 0) if old else 0) or None
    header = {"schema": SCHEMA, "identity_ca": hashlib.sha256(ca_pem).hexdigest(),
              "crl_number": crl_number}
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
    return [e.revoked for e in manifest.entries.values() if e.revoked]


def last_crl_number(pki: TestPKI) -> int:
    """The number of the last CRL an authentic manifest saw (0 if none)."""
    manifest, _ = read_manifest(pki)
    return (manifest.crl_number or 0) if manifest else 0
