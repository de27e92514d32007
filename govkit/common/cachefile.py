"""Small files govkit can make again, kept in the user's cache and read back as untrusted
input.

A cache file is `user_cache_dir()/<name>`: a first line holding the SHA-256 (hex) of the
rest, then the content. It is read only from a directory this user owns and no one else
may write to, only if it is a regular file (no symlink, FIFO or device) of this user, at
most `MAX_CACHE_BYTES` long, and only if the digest matches; anything else (missing,
truncated, edited, unreadable) is a miss, never an error, and the caller makes the content
again. Writes are atomic (temp file, rename), so a reader sees a whole file or none; a
write that fails (read-only or full disk) is ignored.

The digest catches truncation and corruption, not a forger who can write to the
directory: whoever can do that can also edit the user's shell start-up files.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from govkit.common.paths import user_cache_dir

MAX_CACHE_BYTES = 1 << 20       # a cache entry is kilobytes; anything larger is not ours

try:        # CPython's own SHA-256: hashlib would load OpenSSL's libcrypto first (start-up)
    from _sha2 import sha256  # 3.12 and later
except ImportError:
    try:
        from _sha256 import sha256
    except ImportError:
        from hashlib import sha256


def digest(data: bytes) -> str:
    """The SHA-256 of `data`, in hex."""
    return sha256(data).hexdigest()


def _private_dir(directory: Path, create: bool) -> bool:
    """True if `directory` is a directory of this user that others cannot write to."""
    try:
        if create:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(directory)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()
            and not st.st_mode & 0o022)


def read_cached(name: str) -> bytes | None:
    """The content stored under `name`, or None if there is none that can be trusted."""
    path = user_cache_dir() / name
    if not _private_dir(path.parent, create=False):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid()
                or st.st_size > MAX_CACHE_BYTES):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            raw = f.read(MAX_CACHE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    stored, newline, content = raw.partition(b"\n")
    if not newline or len(raw) > MAX_CACHE_BYTES:
        return None
    if stored != digest(content).encode():
        return None
    return content


def write_cached(name: str, content: bytes) -> bool:
    """Store `content` under `name` (atomically); False if it could not be stored."""
    path = user_cache_dir() / name
    if len(content) + 65 > MAX_CACHE_BYTES or not _private_dir(path.parent, create=True):
        return False
    data = digest(content).encode() + b"\n" + content
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
        try:
            from govkit.common.staging import write_all  # only on a miss (start-up)
            write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    return True
