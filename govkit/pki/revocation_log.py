"""The third record of who is revoked: `pki/revocations.log`, appended by `pki revoke`.

The CRL says who is revoked and the PKI manifest records the last CRL govkit wrote, so a
CRL deleted or put back older is refused (govkit.pki.revocation.crl_problem). Deleting the
manifest too left nothing that remembered: every command granted the revoked participant
again (issue 46). So each revocation a CRL takes on is also appended here, one JSON line
({"ca", "serial", "at", "reason", "name"}; `ca`: the first 16 hex digits of the Identity
CA certificate's SHA-256, so `pki init --force`'s new CA starts clean), opened O_APPEND and
never rewritten.

It is evidence, never authority: a logged revocation the CRL lacks makes every command that
reads revocations refuse (exit 2), and `pki revoke` with no names writes the CRL again with
it; nothing here is ever taken to mean that a certificate is NOT revoked, so a forged line
can only make govkit refuse more. A line that cannot be read is a refusal too (whose
revocation it was is not known), until it is mended or removed.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from govkit.common.errors import GovkitError
from govkit.common.inputs import read_input
from govkit.common.limits import MAX_CRL_BYTES
from govkit.pki.testpki import TestPKI

LOG_NAME = "revocations.log"
MAX_LOG_BYTES = 4 * MAX_CRL_BYTES       # a line per revocation (~130 bytes, ~2x its PEM)


def log_path(pki: TestPKI) -> Path:
    return pki.directory / LOG_NAME


def ca_tag(pki: TestPKI) -> str:
    """The Identity CA a line belongs to: 16 hex digits of its certificate file's SHA-256."""
    return hashlib.sha256(pki.identity_ca.read_bytes()).hexdigest()[:16]


def append_revocations(pki: TestPKI, revocations: list[dict]) -> None:
    """Append one line per revocation ({"serial": "0x..", "at", "reason", "name"}), and
    make it durable before returning (fsync)."""
    if not revocations:
        return
    tag = ca_tag(pki)
    data = "".join(json.dumps({"ca": tag, **r}, sort_keys=True) + "\n" for r in revocations)
    fd = os.open(log_path(pki), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
                 | os.O_NOFOLLOW, 0o644)
    try:
        os.write(fd, data.encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def logged_revocations(pki: TestPKI) -> tuple[list[dict], list[int]]:
    """(the current Identity CA's logged revocations, each with an int `serial`; the
    numbers of the lines that cannot be read). An absent log is ([], [])."""
    path = log_path(pki)
    if not path.exists():
        return [], []
    data = read_input(path, MAX_LOG_BYTES, "revocation log")
    tag = ca_tag(pki)
    found, unreadable, seen = [], [], set()
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
            if r["ca"] != tag:
                continue             # a revocation by an earlier Identity CA
            serial = int(r["serial"], 16)
            str(r["at"])
        except (ValueError, KeyError, TypeError, RecursionError):
            unreadable.append(number)
            continue
        if serial not in seen:
            seen.add(serial)
            found.append({**r, "serial": serial})
    return found, unreadable


def log_problem(pki: TestPKI, serials: frozenset[int] | None, crl_file: Path) -> str | None:
    """Why the CRL (its serials; None: there is none) cannot be trusted, as the log sees
    it: it lacks a logged revocation, or a line cannot be read. None when neither."""
    try:
        logged, unreadable = logged_revocations(pki)
    except GovkitError as e:
        return f"{e}: who is revoked is not known, nothing done"
    path = log_path(pki)
    if unreadable:
        return (f"{path}: line {unreadable[0]} cannot be read: whose revocation it records is "
                f"not known, nothing done; mend or remove the line")
    lacking = [r for r in logged if serials is None or r["serial"] not in serials]
    if not lacking:
        return None
    shown = ", ".join(f"{r.get('name') or '?'} ({r['serial']:#x})" for r in lacking[:3])
    state = (f"missing, but {path} logs {len(lacking)} revocation(s)" if serials is None
             else f"lacks {len(lacking)} revocation(s) {path} logs")
    return (f"{crl_file}: {state} ({shown}{', …' if len(lacking) > 3 else ''}): who is "
            f"revoked is not known, nothing done; write the CRL again with `govkit pki "
            f"revoke --ca {pki.directory}` (it puts back every logged revocation)")
