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
*.p7s ever takes them for documents, and `remove_orphans` deletes those whose owner is
gone: the next run over a directory (`commit`, `fsutil.write_atomic`, generate's start)
removes what a killed one left.

A temporary is named by its *owner*, the process that will commit it: the one that
started the worker pool (govkit.common.workers.owner), whichever worker wrote it. Workers
die with their owner, so once the owner is gone nothing will ever commit or write its
temporaries. The name carries the owner's pid, its start time and where that pid means
something (this boot's pid namespace), so "gone" is exact: a reused pid, or a zombie, is
not taken for the owner. A temporary from another machine or pid namespace (a shared
directory) is removed only when old (FOREIGN_AGE_S): its owner cannot be seen from here.

Every OSError while writing, syncing or renaming is raised as one GovkitError naming the
file the caller asked for (not its temporary) and the reason (`write_error`), except
FileExistsError where an existing file must not be replaced (names that file).
"""

from __future__ import annotations

import errno
import os
import secrets
import time
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from govkit.common import workers
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.findings import one_line

TMP_SUFFIX = ".govkit-tmp"
# Up to this many files an fsync each is cheaper than flushing the whole file system
# (which, on a shared machine, also waits for everyone else's dirty data).
FSYNC_EACH_UP_TO = 16
# A temporary whose owner cannot be checked from here (another machine or pid namespace,
# or from before a reboot) is left from a crash when this old: a live owner's temporaries
# wait for its commit, minutes for a large batch.
FOREIGN_AGE_S = 3600
_LEGACY_AGE_S = 60   # names of govkit before owners (pid-token): the rule of then


def write_all(fd: int, data: bytes) -> None:
    """Every byte of `data` to the open `fd`. os.write, not a file object: a fleet's sign
    writes thousands of files."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_error(path: Path | str, err: OSError) -> GovkitError:
    """The one line for an OSError while writing `path`: `path: cannot write: reason`
    (exit 2, unwritable output), whatever file (a temporary) the error itself names."""
    reason = err.strerror or str(err) or type(err).__name__
    return GovkitError(f"{one_line(os.fspath(path))}: cannot write: {reason}", EXIT_USAGE)


@dataclass(frozen=True)
class Staged:
    tmp: str
    final: str
    overwrite: bool = True


class Stager:
    """Writes temporaries for one batch in one process (names carry the owner and a random
    token, so concurrent writers never collide: module docstring)."""

    def __init__(self):
        self.token = f"{_owner_tag()}-{secrets.token_hex(4)}"
        self.staged: list[Staged] = []

    def _tmp_name(self, final: str) -> str:
        """The temporary's name beside `final`."""
        directory, name = os.path.split(final)
        return os.path.join(directory, f".{name}.{self.token}{TMP_SUFFIX}")

    def _open(self, final: str, tmp: str, mode: int) -> int:
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
                         | os.O_NOFOLLOW, mode)
        except OSError as e:
            raise write_error(final, e) from e
        try:
            os.fchmod(fd, mode)   # exact whatever the umask
        except OSError as e:
            os.close(fd)
            _unlink(tmp)
            raise write_error(final, e) from e
        return fd

    def write(self, final: Path | str, data: bytes, mode: int = 0o644,
              overwrite: bool = True) -> None:
        """`data` into a temporary beside `final`; GovkitError naming `final` if it cannot
        be written (the temporary removed)."""
        with self._staging(final, mode, overwrite) as fd:
            try:
                write_all(fd, data)
            finally:
                os.close(fd)

    @contextmanager
    def stream(self, final: Path | str, mode: int = 0o644, overwrite: bool = True):
        """A binary file writing into a temporary beside `final`, staged when the block
        ends: for what is too large to hold in memory first (an archive). On an error the
        temporary is removed, and an OSError is one GovkitError naming `final`."""
        with self._staging(final, mode, overwrite) as fd, \
                os.fdopen(fd, "wb") as f:   # closes fd, also on an error
            yield f

    @contextmanager
    def _staging(self, final: Path | str, mode: int, overwrite: bool):
        """The open temporary's descriptor for the block (which closes it); staged after
        the block, removed on an error (an OSError raised as one naming `final`)."""
        final = os.fspath(final)
        tmp = self._tmp_name(final)
        fd = self._open(final, tmp, mode)
        try:
            yield fd
        except BaseException as e:
            _unlink(tmp)
            if isinstance(e, OSError):
                raise write_error(final, e) from e
            raise
        self.staged.append(Staged(tmp, final, overwrite))

    def discard(self) -> None:
        discard(self.staged)
        self.staged = []


def discard(staged: list[Staged]) -> None:
    """Remove temporaries that will not be committed."""
    for s in staged:
        _unlink(s.tmp)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def sync_data(directories: list[str]) -> None:
    """Every file system holding `directories` flushed to disk (syncfs: only those)."""
    import ctypes  # here: most writes never need it
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
    except OSError as e:
        # A file system that cannot fsync a directory (EINVAL) makes renames durable
        # by itself or not at all: nothing to do about it here.
        if not (kind == os.O_DIRECTORY and e.errno == errno.EINVAL):
            raise
    finally:
        os.close(fd)


def commit(staged: list[Staged]) -> None:
    """Make every staged file durable under its final name (steps in the module docstring).
    On an error the temporaries not yet committed are removed and a GovkitError naming the
    file (or directory) raised, or FileExistsError naming a file that must not be
    replaced; the files committed before it stay (each one complete). Then orphans left
    in those directories by killed runs are removed."""
    if not staged:
        return
    directories = sorted({os.path.dirname(s.final) or "." for s in staged})
    done = 0
    target = None   # what the step that fails was writing
    try:
        if len(staged) <= FSYNC_EACH_UP_TO:
            for s in staged:
                target = s.final
                _fsync(s.tmp, os.O_NOFOLLOW)
        else:
            target = None   # sync_data's errors name the directory
            sync_data(directories)
        for s in staged:
            target = s.final
            if s.overwrite:
                os.rename(s.tmp, s.final)
            else:
                try:
                    os.link(s.tmp, s.final)
                except FileExistsError as e:   # never replaced: the caller's to say why
                    raise _Kept(s.final) from e
                os.unlink(s.tmp)
            done += 1
        for d in directories:
            target = d
            _fsync(d, os.O_DIRECTORY)
    except BaseException as e:
        discard(staged[done:])
        if isinstance(e, _Kept):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), e.path) from None
        if isinstance(e, OSError):
            raise write_error(target or e.filename or directories[0], e) from e
        raise
    for d in directories:
        try:
            remove_orphans(d)
        except OSError:   # tidying only: the files are committed
            pass


# ------------------------------------------------------------------ staging directories


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class StagingDir:
    """The files of one final directory, written under their own names into a fresh hidden
    directory (`.NAME.<owner>-<random>.govkit-tmp`, named like a temporary, so
    `remove_orphans` removes it once its owner is gone) and committed together by
    `commit_dirs`: beside a final directory that does not exist yet and renamed to it in
    one step, else inside the existing one and each file renamed out of it. A file then
    costs one create and one write; until the commit nothing of it is under a final name.

    Made in the process that will commit it (`create`); any worker may `write` into it
    (plain data: it may be pickled)."""

    def __init__(self, final: Path | str, token: str | None = None):
        self.final = os.path.normpath(os.fspath(final))
        parent, name = os.path.split(self.final)
        self.existed = os.path.isdir(self.final)
        # Beside a new directory (renamed to it whole); inside an existing one, which may
        # be a link to another file system (its files renamed out of it one by one).
        self.parent = self.final if self.existed else parent or "."
        self.path = os.path.join(self.parent,
                                 f".{name}.{token or Stager().token}{TMP_SUFFIX}")
        self.exact_mode = _umask() & 0o644 == 0   # O_CREAT's mode is the file's: no fchmod

    def create(self) -> None:
        try:
            os.makedirs(self.parent, exist_ok=True)
            os.mkdir(self.path)   # 0777 less the umask, as os.makedirs would make `final`
        except OSError as e:
            raise write_error(self.final, e) from e

    def write(self, name: str, data: bytes, mode: int = 0o644) -> None:
        """`data` as `name` in the staging directory (a new file: O_EXCL); GovkitError
        naming the final path if it cannot be written."""
        path = os.path.join(self.path, name)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
                         | os.O_NOFOLLOW, mode)
        except OSError as e:
            raise write_error(os.path.join(self.final, name), e) from e
        try:
            if not self.exact_mode or mode != 0o644:
                os.fchmod(fd, mode)
            done = os.write(fd, data)
            if done < len(data):   # a short write: the rest
                view = memoryview(data)[done:]
                while view:
                    view = view[os.write(fd, view):]
        except OSError as e:
            os.close(fd)
            _unlink(path)
            raise write_error(os.path.join(self.final, name), e) from e
        os.close(fd)


def discard_dirs(dirs: list[StagingDir]) -> None:
    import shutil
    for d in dirs:
        shutil.rmtree(d.path, ignore_errors=True)


def commit_dirs(dirs: list[StagingDir]) -> None:
    """Every staging directory's files durable under their final names: their data and
    names synced (one syncfs, or an fsync each for a handful), then each directory renamed
    to its final name, or, where that exists, each file renamed into it; then the
    directories that changed fsynced. SIGKILL or a crash at any point leaves each final
    path absent, or its complete old or complete new file. On an error the files not yet
    committed are removed and a GovkitError naming the file or directory raised."""
    listing = {d.path: sorted(os.listdir(d.path)) for d in dirs}
    target = None
    try:
        if sum(map(len, listing.values())) <= FSYNC_EACH_UP_TO:
            for d in dirs:
                for name in listing[d.path]:
                    target = os.path.join(d.final, name)
                    _fsync(os.path.join(d.path, name), os.O_NOFOLLOW)
                target = d.final
                _fsync(d.path, os.O_DIRECTORY)
        else:
            sync_data(sorted({d.parent for d in dirs}))
        changed = set()
        for d in dirs:
            target = d.final
            if not os.path.isdir(d.final):
                try:
                    os.rename(d.path, d.final)   # atomic: none of the files, or all
                    changed.add(d.parent)
                    continue
                except OSError as e:
                    if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                        raise
            for name in listing[d.path]:   # the final directory exists: file by file
                target = os.path.join(d.final, name)
                os.rename(os.path.join(d.path, name), target)
            os.rmdir(d.path)
            changed.add(d.final)
        for directory in sorted(changed):
            target = directory
            _fsync(directory, os.O_DIRECTORY)
    except BaseException as e:
        discard_dirs(dirs)
        if isinstance(e, OSError):
            raise write_error(target or e.filename or dirs[0].final, e) from e
        raise


class _Kept(Exception):
    """os.link refused to replace `path` (commit turns it into FileExistsError)."""

    def __init__(self, path: str):
        super().__init__(path)
        self.path = path


def remove_orphans(directory: Path | str) -> int:
    """Delete temporaries in `directory` whose owner is gone (module docstring); returns
    how many. A temporary whose owner runs is never touched, nor a recent one whose owner
    cannot be checked from here."""
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return 0
    now = time.time()
    for entry in entries:
        if not entry.name.endswith(TMP_SUFFIX) or not entry.name.startswith("."):
            continue
        token = entry.name[:-len(TMP_SUFFIX)].rsplit(".", 1)[-1]
        age = _orphan_age(token.split("-"))
        if age is None:
            continue
        try:
            if age == 0 or now - entry.stat(follow_symlinks=False).st_mtime > age:
                if entry.is_dir(follow_symlinks=False):   # a StagingDir's
                    import shutil
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
                removed += 1
        except FileNotFoundError:
            pass
    return removed


def _orphan_age(fields: list[str]) -> float | None:
    """How old a temporary with these token fields must be to be an orphan: 0 (now: its
    owner is gone), an age (its owner cannot be checked), or None (a live owner's, or
    not a name govkit makes)."""
    if not all(f.isalnum() for f in fields):
        return None
    if len(fields) == 4 and fields[0].isdigit():          # pid-start-place-random
        pid, start, place, _ = fields
        if place != pid_place():
            return FOREIGN_AGE_S
        return None if _running(int(pid), start) else 0
    if len(fields) == 2 and fields[0].isdigit():          # pid-random (legacy)
        return None if _running(int(fields[0]), None) else _LEGACY_AGE_S
    return None


def _owner_tag() -> str:
    """pid-start-place of this process's owner (workers.owner)."""
    pid = workers.owner()
    return f"{pid}-{_start_time(pid) or 0}-{pid_place()}"


@cache
def pid_place() -> str:
    """Where a pid means one process: this boot of this machine, this pid namespace
    (6 hex digits; '0' where Linux's /proc does not say)."""
    import hashlib
    try:
        with open("/proc/sys/kernel/random/boot_id", "rb") as f:
            boot = f.read().strip()
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return "0"
    return hashlib.blake2b(boot + b"/%d" % namespace, digest_size=3).hexdigest()


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat from its third field (state) on; None if unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read()
    except OSError:
        return None
    return text[text.rfind(b")") + 2:].decode("ascii", "replace").split()


def _start_time(pid: int) -> str | None:
    """When `pid` started (clock ticks since boot, Linux), None if unknown."""
    fields = _stat_fields(pid)
    return fields[19] if fields and len(fields) > 19 else None


def _running(pid: int, start: str | None) -> bool:
    """`pid` is a live process (not a zombie) and, if `start` is known, the one started
    then (not a later process given the same pid)."""
    fields = _stat_fields(pid)
    if fields is None:   # gone, or hidden (hidepid): ask the kernel
        return _alive(pid)
    if fields[0] in ("Z", "X"):
        return False
    return not start or start == "0" or len(fields) <= 19 or fields[19] == start


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # someone else's process
        return True
    return True
