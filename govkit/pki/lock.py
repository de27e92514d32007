"""One writer at a time in a test PKI directory.

Every command that changes a PKI (`pki init`, `revoke`, `renew`, the SoftHSM2 move, the
participants `generate` adds) reads files, decides, and writes files: the CRL (revoke
adds a serial to the entries it read and numbers the new CRL one above the old), the
participant certificates, the manifest (govkit.pki.manifest). Two of them at once would
each write what they read, and the later write would silently drop the earlier one's
change: two `pki revoke` of different participants left one serial off the CRL, both
said "revoked", and both CRLs had the same number (issue 37).

`pki_lock` serialises them: an exclusive `flock` on `.govkit.lock` in the PKI directory,
held from before the first read to after the last write. The kernel releases it when
the process ends, however it ends, so a killed govkit never leaves a stale lock. The
file is never removed (removing it would let a second writer lock a new file while the
first still holds the old one). Readers take no lock: every file is replaced atomically,
so a reader sees each file's old or new version.

Re-entrant within a process: `init_pki` inside `generate` (which adds participants) and
the manifest written by a function that already holds the lock do not wait on themselves.
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.findings import one_line

LOCK_NAME = ".govkit.lock"
_held: dict[str, int] = {}   # real path of a PKI directory -> how deep this process holds it


@contextmanager
def pki_lock(directory: Path | str) -> Iterator[None]:
    """Hold the PKI directory's write lock (waiting for another writer to finish)."""
    key = os.path.realpath(directory)
    if _held.get(key):
        _held[key] += 1
        try:
            yield
        finally:
            _held[key] -= 1
        return
    path = os.path.join(directory, LOCK_NAME)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as e:
        why = "a symbolic link" if e.errno == errno.ELOOP else e.strerror or str(e)
        raise GovkitError(f"{one_line(path)}: cannot lock the PKI for writing: {why}",
                          EXIT_USAGE) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _held[key] = 1
        try:
            yield
        finally:
            del _held[key]
    finally:
        os.close(fd)   # releases the lock
