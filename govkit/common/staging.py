"""Many files written durably without an fsync per file.

`fsutil.write_atomic` makes one file durable on its own: temp file, fsync, rename. For
thousands of files that fsync is most of the time. Here every file is first written to a
temporary beside its final path (`Stager.write`, any process may do it), and `commit`
then makes the whole set durable at once:

1. one `syncfs` of each file system involved (`os.sync` where there is none; an fsync
   each for a handful of files): every temporary's data is on disk before any of them
   gets its final name;
2. each temporary renamed over its final path (or linked, where an existing file must not
   be replaced, as for keys): atomic, so a reader sees the old file or the new one;
3. one fsync of each directory, so the new names are on disk too.

A crash, a power loss or SIGKILL at any point leaves every final path holding either its
complete old document or its complete new one, never a torn one; what it may leave is
temporaries. Their names start with '.' and end with TMP_SUFFIX, so no scan for *.xml or
*.p7s ever takes them for documents, and `remove_orphans` deletes those whose writer
process is gone.
"""

from __future__ import annotations

import ctypes
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

TMP_SUFFIX = ".govkit-tmp"
# Up to this many files an fsync each is cheaper than flushing the whole file system
# (which, on a shared machine, also waits for everyone else's dirty data).
FSYNC_EACH_UP_TO = 16
_ORPHAN_AGE_S = 60   # a temporary this old whose writer is gone is left from a crash


@dataclass(frozen=True)
class Staged:
    tmp: str
    final: str
    overwrite: bool = True


class Stager:
    """Writes temporaries for one batch in one process (names carry the pid and a random
    token, so concurrent writers never collide)."""

    def __init__(self):
        self.token = f"{os.getpid()}-{secrets.token_hex(4)}"
        self.staged: list[Staged] = []

    def write(self, final: Path | str, data: bytes, mode: int = 0o644,
              overwrite: bool = True) -> None:
        final = os.fspath(final)
        directory, name = os.path.split(final)
        tmp = os.path.join(directory, f".{name}.{self.token}{TMP_SUFFIX}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW,
                     mode)
        try:
            os.fchmod(fd, mode)   # exact whatever the umask, as write_atomic makes it
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except BaseException:
            os.close(fd)
            os.unlink(tmp)
            raise
        os.close(fd)
        self.staged.append(Staged(tmp, final, overwrite))

    def discard(self) -> None:
        discard(self.staged)
        self.staged = []


def discard(staged: list[Staged]) -> None:
    """Remove temporaries that will not be committed."""
    for s in staged:
        try:
            os.unlink(s.tmp)
        except FileNotFoundError:
            pass


def _sync_data(directories: list[str]) -> None:
    """Every file system holding `directories` flushed to disk (syncfs: only those)."""
    syncfs = getattr(ctypes.CDLL(None, use_errno=True), "syncfs", None)
    if syncfs is None:
        os.sync()
        return
    seen: set[int] = set()
    for d in directories:
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            dev = os.fstat(fd).st_dev
            if dev not in seen:
                seen.add(dev)
                if syncfs(fd) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, os.strerror(err), d)
        finally:
            os.close(fd)


def _fsync(path: str, kind: int) -> None:
    """fsync a directory (kind O_DIRECTORY) or a file (kind O_NOFOLLOW) by path."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | kind)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def commit(staged: list[Staged]) -> None:
    """Make every staged file durable under its final name (steps in the module docstring).
    On an error the temporaries not yet committed are removed and the error raised; the
    files committed before it stay (each one complete)."""
    if not staged:
        return
    directories = sorted({os.path.dirname(s.final) or "." for s in staged})
    done = 0
    try:
        if len(staged) <= FSYNC_EACH_UP_TO:
            for s in staged:
                _fsync(s.tmp, os.O_NOFOLLOW)
        else:
            _sync_data(directories)
        for s in staged:
            if s.overwrite:
                os.rename(s.tmp, s.final)
            else:
                os.link(s.tmp, s.final)   # FileExistsError instead of replacing a file
                os.unlink(s.tmp)
            done += 1
        for d in directories:
            _fsync(d, os.O_DIRECTORY)
    except BaseException:
        discard(staged[done:])
        raise


def remove_orphans(directory: Path | str) -> int:
    """Delete temporaries in `directory` left by a writer that no longer runs (a crash);
    returns how many. A temporary of a live process, or a recent one, is never touched."""
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return 0
    now = time.time()
    for entry in entries:
        if not entry.name.endswith(TMP_SUFFIX) or not entry.name.startswith("."):
            continue
        token = entry.name[:-len(TMP_SUFFIX)].rsplit(".", 1)[-1]
        pid = token.split("-", 1)[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        try:
            if now - entry.stat(follow_symlinks=False).st_mtime > _ORPHAN_AGE_S:
                os.unlink(entry.path)
                removed += 1
        except FileNotFoundError:
            pass
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # someone else's process
        return True
    return True
