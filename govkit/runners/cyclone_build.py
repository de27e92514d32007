"""Build govkit's Cyclone DDS program (govkit/runners/native/cyclone_perf.c) once, and cache it.

Compiled with the system C compiler against the Cyclone DDS the system has (Debian 12:
cyclonedds-dev 0.10.2), its type support generated from cyclone_perf_types.idl by that
Cyclone's own `idlc`. Cached like the Fast DDS program (govkit.runners.fastdds_build): under
`$XDG_CACHE_HOME/govkit`, named by a hash of the sources, the compiler's version, Cyclone's
version and the command line, written to a temporary name and renamed into place.

Against a Cyclone DDS installed elsewhere (`--dds-prefix`, govkit.runners.dds_prefix) it is
compiled with that install's idlc and headers, linked to its library with the library's
directory as the program's run path (so it loads that library, not /usr's, with no
LD_LIBRARY_PATH), and cached per (sources, compiler, that install's library: its path and a
hash of its bytes).

`python -m govkit.runners.cyclone_build` builds it and prints its path (`.ci/setup` does that).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from govkit.common.errors import GovkitError
from govkit.common.paths import user_cache_dir
from govkit.runners.dds_prefix import CycloneInstall
from govkit.runners.fastdds_build import print_built, runtime_build

NATIVE = Path(__file__).resolve().parent / "native"
SOURCE = NATIVE / "cyclone_perf.c"
IDL = NATIVE / "cyclone_perf_types.idl"
READERS = NATIVE / "readers.h"       # the reader processes' relay, included by the source
PROGRAM = "cyclone_perf"
FLAGS = ("-std=gnu11", "-O2", "-pthread")
LIBS = ("-lddsc", "-lm")
INSTALL_HINT = ("install a C compiler and Cyclone DDS with its headers and idlc: `sudo apt-get "
                "install gcc cyclonedds-dev cyclonedds-tools` "
                "(in a govkit checkout, `bash .ci/setup` installs all of it)")


def compiler() -> str | None:
    """$CC if set, else gcc."""
    return shutil.which(os.environ.get("CC") or "gcc")


def first_line(argv: list[str]) -> str:
    """The first line a tool prints (e.g. `cc --version`), "unknown" if it cannot run:
    part of a build's cache key."""
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return ((out.stdout or out.stderr).splitlines() or ["unknown"])[0].strip()


def prefix_flags(install: CycloneInstall | None) -> tuple[str, ...]:
    """The compiler's flags for an install in a prefix: its headers, its library, and its
    library directory as the run path; none for the system's."""
    if install is None:
        return ()
    return (f"-I{install.include}", f"-L{install.lib_dir}", f"-Wl,-rpath,{install.lib_dir}")


def build_key(cc: str, install: CycloneInstall | None = None) -> str:
    """16 hex digits naming the binary: sources + compiler + Cyclone + command line."""
    from govkit.runners.ddsperf import cyclonedds_version
    h = hashlib.sha256()
    runtime = runtime_build(install.library) if install else cyclonedds_version().encode()
    for part in (SOURCE.read_bytes(), IDL.read_bytes(), READERS.read_bytes(),
                 first_line([cc, "--version"]).encode(),
                 runtime, " ".join(FLAGS + LIBS + prefix_flags(install)).encode()):
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()[:16]


def ensure_built(install: CycloneInstall | None = None) -> Path:
    """The cached binary, compiled first if needed (against `install`, else the system's
    Cyclone DDS); GovkitError (exit 2) naming the packages to install when the compiler,
    idlc or Cyclone's headers are missing."""
    cc = compiler()
    idlc = str(install.idlc) if install and install.idlc else shutil.which("idlc")
    if cc is None or idlc is None:
        missing = "a C compiler" if cc is None else "Cyclone's idlc"
        raise GovkitError(f"Cyclone runner: {missing} not found; {INSTALL_HINT}")
    if install is None and not Path("/usr/include/dds/dds.h").exists() \
            and not os.environ.get("CPATH"):
        raise GovkitError(f"Cyclone runner: Cyclone DDS headers (dds/dds.h) not found; "
                          f"{INSTALL_HINT}")
    target = user_cache_dir() / f"{PROGRAM}-{build_key(cc, install)}"
    if os.access(target, os.X_OK):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="govkit-cyclone-build-") as gen:
        steps = ([idlc, "-o", gen, str(IDL)],
                 [cc, *FLAGS, "-I", gen, *prefix_flags(install), "-o", f"{gen}/{PROGRAM}",
                  str(SOURCE), f"{gen}/{IDL.stem}.c", *LIBS])
        for argv in steps:
            try:
                out = subprocess.run(argv, capture_output=True, text=True, timeout=600)
            except subprocess.TimeoutExpired:
                raise GovkitError(f"Cyclone runner: {Path(argv[0]).name} took over 10 minutes") \
                    from None
            if out.returncode != 0:
                first = next((ln for ln in out.stderr.splitlines() if "error" in ln),
                             out.stderr.strip())
                raise GovkitError(f"Cyclone runner: {Path(argv[0]).name} failed: "
                                  f"{first[:300]}; {INSTALL_HINT}")
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        os.close(fd)
        try:
            shutil.copyfile(f"{gen}/{PROGRAM}", tmp)
            os.chmod(tmp, 0o755)
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return target


def main() -> int:
    return print_built(ensure_built)


if __name__ == "__main__":
    sys.exit(main())
