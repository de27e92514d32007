"""Reading user-named files: regular files only, a size limit checked before reading.

A FIFO, a device or a directory is refused from its metadata, before it is ever opened for
reading (a FIFO would block, /dev/zero would never end); a file above the limit is refused
from its size. The file is then opened non-blocking and checked again, so a path swapped
for something else in between cannot make govkit block or read more than the limit.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.findings import one_line

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def _not_regular(path: Path, mode: int, what: str) -> GovkitError:
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return GovkitError(f"{one_line(path)}: is {kind}, not a {what} (only regular files are read)",
                       EXIT_USAGE)


def too_large_message(size: int, limit: int, what: str) -> str:
    return f"{what} is too large: {size} bytes (limit {limit} bytes)"


def read_input(path: Path, limit: int, what: str = "document") -> bytes:
    """The bytes of a regular file of at most `limit` bytes; GovkitError (exit 2) otherwise."""
    try:
        before = os.stat(path)
    except OSError as e:
        raise GovkitError(f"{one_line(path)}: cannot read: {e.strerror or e}", EXIT_USAGE) from None
    if not stat.S_ISREG(before.st_mode):
        raise _not_regular(path, before.st_mode, what)
    if before.st_size > limit:
        raise GovkitError(f"{one_line(path)}: {too_large_message(before.st_size, limit, what)}",
                          EXIT_USAGE)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as e:
        raise GovkitError(f"{one_line(path)}: cannot read: {e.strerror or e}", EXIT_USAGE) from None
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (before.st_dev,
                                                                          before.st_ino):
            raise GovkitError(f"{one_line(path)}: changed while it was being opened; not read",
                              EXIT_USAGE)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as e:
        raise GovkitError(f"{one_line(path)}: cannot read: {e.strerror or e}", EXIT_USAGE) from None
    finally:
        os.close(fd)
    if size > limit:  # it grew after the size check
        raise GovkitError(f"{one_line(path)}: {what} is too large: more than {limit} bytes "
                          f"(limit {limit} bytes)", EXIT_USAGE)
    return b"".join(chunks)


def read_text_input(path: Path, limit: int, what: str, encoding: str = "utf-8") -> str:
    """read_input, decoded: text that is not `encoding` is one error naming its line."""
    data = read_input(path, limit, what)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise GovkitError(f"{one_line(path)}:{line}: not UTF-8 text (byte {e.start})", EXIT_USAGE) \
            from None
