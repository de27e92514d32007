"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

import errno
import os
from pathlib import Path

from govkit.common import staging


def write_atomic(path: Path, data: bytes | str, mode: int = 0o644, overwrite: bool = True) -> None:
    """Write via a temp file in the same directory, fsync, then rename (or link if
    `overwrite` is False, so an existing file is never replaced: FileExistsError naming
    `path`), then fsync the directory: `staging` for one file.

    Any other OSError (unwritable directory, no space, ...) is one GovkitError naming
    `path`, never the temporary, which is removed; temporaries left in the directory by
    killed writers are removed too (staging.commit)."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError as e:   # a parent's name is taken by a file
        raise staging.write_error(path, NotADirectoryError(
            errno.ENOTDIR, os.strerror(errno.ENOTDIR))) from e
    except OSError as e:
        raise staging.write_error(path, e) from e
    if isinstance(data, str):
        data = data.encode("utf-8")
    stager = staging.Stager()
    stager.write(path, data, mode=mode, overwrite=overwrite)
    staging.commit(stager.staged)


def collect_files(paths: list[Path], suffix: str) -> list[Path]:
    """Files named on the command line, plus every `*suffix` below named directories."""
    found: list[Path] = []
    for p in map(Path, paths):
        if not p.is_dir():
            found.append(p)
            continue
        # not the files in a staging directory (staging.StagingDir) of a running or
        # killed generate: they are not documents yet
        found += sorted(f for f in p.rglob(f"*{suffix}")
                        if not any(part.endswith(staging.TMP_SUFFIX)
                                   for part in f.relative_to(p).parts[:-1]))
    return found
