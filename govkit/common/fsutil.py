"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes | str, mode: int = 0o644, overwrite: bool = True) -> None:
    """Write via a temp file in the same directory, fsync, then rename (or link if
    `overwrite` is False, so an existing file is never replaced: FileExistsError)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if overwrite:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # fails with FileExistsError instead of clobbering
            os.unlink(tmp)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def collect_files(paths: list[Path], suffix: str) -> list[Path]:
    """Files named on the command line, plus every `*suffix` below named directories."""
    found: list[Path] = []
    for p in map(Path, paths):
        found += sorted(p.rglob(f"*{suffix}")) if p.is_dir() else [p]
    return found
