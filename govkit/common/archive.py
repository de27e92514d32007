"""One archive of files being shipped onward: a tar (gzip when the name ends in .tar.gz or
.tgz), written atomically beside them, with its SHA-256 in `NAME.sha256`.

What it holds is exactly the members it is given (and their directories), so the caller
decides what ships and the archive cannot add to it. What makes it safe to hand on:

- names are relative, never absolute, never `..` or `.` or empty parts (a member that
  would be is a govkit bug, refused before anything is written);
- modes are the files' own without group or world write, set-id or sticky bits; a member
  holding a private key is 0600 whatever the caller said; owner and group are 0 with no
  names, so an extraction by root gives root's files and by anyone else their own;
- deterministic: members sorted (a directory before what is in it), every mtime 0, PAX
  headers, gzip without a name or time in its header; two runs over the same bytes give
  the same archive byte for byte, and so the same SHA-256;
- the archive itself is 0600 when a member is a private key, else 0644.

Written like every govkit file (`staging`): streamed into a temporary beside its final
name, then the archive and `NAME.sha256` synced and renamed into place together, so each
is absent, complete old or complete new; a crash between the two renames leaves a
checksum that `sha256sum -c` refuses, never a silent mismatch. An existing archive is
never replaced without `force`, and never one holding a private key the new one does not
(`refuse_destination`); a destination that is not a regular file is refused either way.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
import tarfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from govkit.common import staging
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.findings import one_line
from govkit.common.limits import MAX_PEM_BYTES

SUFFIXES = {".tar": False, ".tar.gz": True, ".tgz": True}   # suffix -> gzip
CHECKSUM_SUFFIX = ".sha256"
KEY_MARK = b"PRIVATE KEY-----"   # a PEM private key of any kind (PKCS#8, EC, RSA)
_MODE_MASK = 0o755          # no group/world write, no set-id, no sticky bit


@dataclass(frozen=True)
class Member:
    """One file of the archive: its relative POSIX name, bytes and mode."""
    name: str
    data: bytes
    mode: int = 0o644


@dataclass(frozen=True)
class Written:
    path: Path
    checksum: Path      # NAME.sha256
    sha256: str
    files: int
    private: bool       # holds a private key (the archive is 0600)


def compressed(path: Path) -> bool:
    """Whether `path` names a gzip archive; GovkitError (exit 2) for a name that is no
    archive's, or one `sha256sum -c` could not read back from NAME.sha256."""
    name = path.name
    for suffix, gz in sorted(SUFFIXES.items(), key=lambda s: -len(s[0])):
        if name.endswith(suffix) and len(name) > len(suffix):
            if "\n" in name or "\\" in name:
                raise GovkitError(f"{one_line(path)}: an archive's name may not hold a newline "
                                  f"or a backslash (its {CHECKSUM_SUFFIX} line could not be "
                                  f"checked with sha256sum -c)", EXIT_USAGE)
            return gz
    raise GovkitError(f"{one_line(path)}: an archive's name ends in "
                      f"{', '.join(SUFFIXES)} (a tar, gzipped for the last two)", EXIT_USAGE)


def checksum_path(path: Path) -> Path:
    return path.with_name(path.name + CHECKSUM_SUFFIX)


def _mode(member: Member) -> int:
    return 0o600 if KEY_MARK in member.data else member.mode & _MODE_MASK


def _parts(name: str) -> tuple[str, ...]:
    """The parts of a member name; ValueError for one that could land outside the directory
    it is extracted into, or that tar would rewrite."""
    parts = tuple(name.split("/"))
    if not name or name.startswith("/") or any(p in ("", ".", "..") for p in parts) \
            or "\0" in name:
        raise ValueError(f"not a relative archive member name: {name!r}")
    return parts


def _entries(members: Iterable[Member], dir_modes: Mapping[str, int]):
    """(TarInfo, data) for every file, and (TarInfo, None) for every directory above one,
    in the archive's order: sorted by path parts, so a directory comes before what is in
    it; ValueError for a name that is not a safe member name or is used twice."""
    entries, dirs = {}, set()
    for m in members:
        parts = _parts(m.name)
        if parts in entries:
            raise ValueError(f"archive member named twice: {m.name!r}")
        info = tarfile.TarInfo("/".join(parts))
        info.size, info.mode = len(m.data), _mode(m)
        entries[parts] = (info, m.data)
        dirs.update(parts[:i] for i in range(1, len(parts)))
    for parts in dirs:
        if parts in entries:
            raise ValueError(f"archive member is also a directory: {'/'.join(parts)!r}")
        info = tarfile.TarInfo("/".join(parts))
        info.type = tarfile.DIRTYPE
        info.mode = dir_modes.get("/".join(parts), 0o755) & _MODE_MASK
        entries[parts] = (info, None)
    for parts in sorted(entries):
        info, data = entries[parts]
        info.mtime = 0                  # not the files' times: a rerun gives the same bytes
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        yield info, data


class _Hashing:
    """A write-only file that hashes what passes through it (tarfile asks for tell)."""

    def __init__(self, raw):
        self.raw, self.hash, self.size = raw, hashlib.sha256(), 0

    def write(self, data) -> int:
        self.raw.write(data)
        self.hash.update(data)
        self.size += len(data)
        return len(data)

    def tell(self) -> int:
        return self.size

    def flush(self) -> None:
        self.raw.flush()


def write_tar(out, members: Iterable[Member], gz: bool,
              dir_modes: Mapping[str, int] | None = None) -> None:
    """The archive of `members` into the binary file `out` (module docstring)."""
    # compresslevel 6, gzip(1)'s own: 9 takes twice as long for a few per cent here
    sink = gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=6) \
        if gz else out
    try:
        with tarfile.TarFile(fileobj=sink, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for info, data in _entries(members, dir_modes or {}):
                if data is None:
                    tar.addfile(info)
                else:
                    tar.addfile(info, io.BytesIO(data))
    finally:
        if gz:
            sink.close()   # the gzip trailer; `out` stays open


def tar_bytes(members: Iterable[Member], dir_modes: Mapping[str, int] | None = None) -> bytes:
    """The uncompressed archive of `members`, in memory (a small one, e.g. a tar stream)."""
    buf = io.BytesIO()
    write_tar(buf, members, False, dir_modes)
    return buf.getvalue()


# ---------------------------------------------------------------- the destination


def _existing(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise GovkitError(f"{one_line(path)}: cannot read: {e.strerror or e}", EXIT_USAGE) \
            from None


def _not_regular(path: Path, st: os.stat_result) -> GovkitError:
    kind = ("a symlink (name the file itself)" if stat.S_ISLNK(st.st_mode) else
            "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file")
    return GovkitError(f"{one_line(path)}: is {kind}; an archive is written as a regular "
                       f"file only, and never in place of anything else", EXIT_USAGE)


def refuse_destination(path: Path, force: bool,
                       members: list[Member] | None = None) -> bool:
    """Check, before anything is written, that the archive `path` and its NAME.sha256 may
    be written: GovkitError (exit 2) for a name that is no archive's, a destination that
    is not a regular file (with or without `force`), one that exists without `force`, or
    (given the `members`) an existing archive holding a private key they do not. Returns
    whether either exists (so `write_archive` replaces it)."""
    compressed(path)
    exists = False
    for p in (path, checksum_path(path)):
        st = _existing(p)
        if st is None:
            continue
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(p, st)
        if not force:
            raise GovkitError(f"{one_line(p)}: already exists; refusing to replace it "
                              f"(use --force to write the archive again)", EXIT_USAGE)
        exists = True
    parent = _existing(path.parent) if str(path.parent) else None
    if parent is not None and not stat.S_ISDIR(parent.st_mode):
        raise GovkitError(f"{one_line(path)}: cannot write: {one_line(path.parent)} is not "
                          f"a directory", EXIT_USAGE)
    if exists and members is not None:
        _refuse_lost_keys(path, members)
    return exists


def _old_keys(path: Path) -> tuple[list[tuple[str, bytes | None]], bool]:
    """The members of the existing archive `path` that hold a private key (name, bytes;
    None for one too large to read, named like a key), and whether it could be read."""
    keys: list[tuple[str, bytes | None]] = []
    try:
        with tarfile.open(path, "r:*") as tar:
            for info in tar:
                if not info.isreg():
                    continue
                if info.size > MAX_PEM_BYTES:   # no key of govkit's is this large
                    if "key" in info.name:
                        keys.append((info.name, None))
                    continue
                data = tar.extractfile(info).read()
                if KEY_MARK in data:
                    keys.append((info.name, data))
    except Exception:   # whatever made it unreadable (tar, zlib, bz2, xz): fails closed
        return [], False
    return keys, True


def _refuse_lost_keys(path: Path, members: list[Member]) -> None:
    """An existing archive is replaced only if every private key in it is in the new one
    too: a key is never overwritten, also inside an archive."""
    if _existing(path) is None:
        return
    old, readable = _old_keys(path)
    if not readable:
        raise GovkitError(f"{one_line(path)}: exists and is not a tar govkit can read; "
                          f"--force never replaces it: move it away first", EXIT_USAGE)
    ours = {m.data for m in members if KEY_MARK in m.data}
    lost = [name for name, data in old if data not in ours]
    if lost:
        shown = ", ".join(map(one_line, lost[:3])) + (" …" if len(lost) > 3 else "")
        raise GovkitError(f"{one_line(path)}: holds private keys this archive would not hold "
                          f"again ({shown}); never replaced: move it away first", EXIT_USAGE)


def write_archive(path: Path, members: Iterable[Member], force: bool = False,
                  dir_modes: Mapping[str, int] | None = None) -> Written:
    """Write the archive `path` of `members` and `path`.sha256 (module docstring).
    GovkitError (exit 2): see `refuse_destination`; an existing archive holding a private
    key the new one does not; any write error, naming the file."""
    path = Path(path)
    members = list(members)
    gz = compressed(path)
    replace = refuse_destination(path, force, members)
    private = any(KEY_MARK in m.data for m in members)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:   # a parent's name is taken by a file
        raise GovkitError(f"{one_line(path)}: cannot write: a parent is not a directory",
                          EXIT_USAGE) from None
    except OSError as e:
        raise staging.write_error(path, e) from None
    stager = staging.Stager()
    try:
        with stager.stream(path, 0o600 if private else 0o644, overwrite=replace) as raw:
            hashing = _Hashing(raw)
            write_tar(hashing, members, gz, dir_modes)
        digest = hashing.hash.hexdigest()
        check = checksum_path(path)
        # sha256sum's own format: the hex, two spaces (a binary-safe read either way), the
        # name as it stands beside the archive, so `sha256sum -c NAME.sha256` run there
        stager.write(check, f"{digest}  {path.name}\n".encode(), overwrite=replace)
        try:
            staging.commit(stager.staged)
        except FileExistsError as e:   # made meanwhile by someone else: still never replaced
            raise GovkitError(f"{one_line(e.filename)}: already exists; refusing to replace "
                              f"it (use --force to write the archive again)", EXIT_USAGE) \
                from None
    except ValueError as e:   # a member name govkit made wrong: say it, write nothing
        stager.discard()
        raise GovkitError(f"{one_line(path)}: not written: {e}", EXIT_USAGE) from None
    except BaseException:
        stager.discard()
        raise
    return Written(path, check, digest, len(members), private)

