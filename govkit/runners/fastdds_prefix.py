"""Which Fast DDS install a run uses: the system's (Debian 12: 2.9.1 under /usr) or one in a
prefix (`--dds-prefix DIR` with `--runner fastdds`, or $GOVKIT_DDS_PREFIX), and its version
as its headers state it.

A Fast DDS 2 prefix is what its CMake installs: `lib/libfastrtps.so` and `lib/libfastcdr.so`,
and `include/fastrtps/config.h` (FASTRTPS_VERSION_STR; HAVE_SECURITY 1 when built with
-DSECURITY=ON) beside the `fastdds/` and `fastrtps/` headers govkit's program is compiled
with (govkit.runners.fastdds_build). A prefix lacking any of them, one built without DDS
Security, or a Fast DDS 3 (`libfastdds.so`: its API is not the one govkit's program is
written against) is refused in one line naming what is wrong (exit 2), before anything is
signed, built or started.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from govkit.common.errors import GovkitError
from govkit.common.inputs import read_input

_LIB_DIRS = ("lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu")
_INCLUDE_DIRS = ("include", "include/x86_64-linux-gnu", "include/aarch64-linux-gnu")
_VERSION = re.compile(r'#define\s+FASTRTPS_VERSION_STR\s+"([^"]+)"')
_SECURITY = re.compile(r"#define\s+HAVE_SECURITY\s+1\b")
MAX_CONFIG_BYTES = 1 << 20


@dataclass(frozen=True)
class FastddsInstall:
    """One Fast DDS 2 install: where its library and headers are, and its version."""
    prefix: Path
    library: Path           # the real file of lib/libfastrtps.so
    include: Path           # the directory holding fastrtps/config.h
    version: str
    source: str             # --dds-prefix, GOVKIT_DDS_PREFIX

    @property
    def system(self) -> bool:
        return False

    @property
    def lib_dir(self) -> Path:
        return self.library.parent

    def to_json(self) -> dict:
        """results.json's settings.runtime."""
        return {"name": "Fast DDS", "version": self.version, "prefix": str(self.prefix),
                "library": str(self.library), "source": self.source}

    def name_of(self) -> str:
        return f"Fast DDS {self.version} in {self.prefix}"

    @property
    def said(self) -> str:
        return f"govkit: {self.name_of()} ({self.source})"

    @property
    def label(self) -> str:
        return f"{self.version} ({self.prefix})"


def _first(prefix: Path, dirs: tuple[str, ...], name: str) -> Path | None:
    return next((prefix / d / name for d in dirs if (prefix / d / name).is_file()), None)


def find_fastdds_install(prefix: Path, source: str) -> FastddsInstall:
    """The Fast DDS install at `prefix`; GovkitError (exit 2), one line naming what is
    missing, when it is not a Fast DDS 2 install with DDS Security."""
    shown = f"{source} {prefix}"
    if not prefix.is_dir():
        raise GovkitError(f"{shown}: no such directory")
    link = _first(prefix, _LIB_DIRS, "libfastrtps.so")
    if link is None:
        if _first(prefix, _LIB_DIRS, "libfastdds.so") is not None:
            raise GovkitError(f"{shown}: a Fast DDS 3 install (lib/libfastdds.so): govkit's "
                              "Fast DDS program is written against Fast DDS 2's API "
                              "(lib/libfastrtps.so, fastrtps/ headers)")
        raise GovkitError(f"{shown}: not a Fast DDS install (no lib/libfastrtps.so)")
    config = _first(prefix, _INCLUDE_DIRS, "fastrtps/config.h")
    missing = []
    if _first(prefix, _LIB_DIRS, "libfastcdr.so") is None:
        missing.append("Fast CDR (lib/libfastcdr.so)")
    if config is None:
        missing.append("its headers (include/fastrtps/config.h)")
    if missing:
        raise GovkitError(f"{shown}: a Fast DDS install without {'; without '.join(missing)}")
    text = read_input(config, MAX_CONFIG_BYTES).decode("utf-8", errors="replace")
    if not _SECURITY.search(text):
        raise GovkitError(f"{shown}: a Fast DDS install without DDS Security ({config} does "
                          "not define HAVE_SECURITY 1; build with -DSECURITY=ON and OpenSSL)")
    found = _VERSION.search(text)
    return FastddsInstall(prefix=prefix, library=link.resolve(),
                          include=config.parent.parent,
                          version=found[1] if found else "unknown", source=source)
