"""Build govkit's Fast DDS program (govkit/runners/native/fastdds_perf.cpp) once, and cache it.

The program is compiled with the system C++ compiler against the Fast DDS the system has
(Debian 12: libfastrtps-dev 2.9.1, built with DDS Security), or against a Fast DDS 2 in a
prefix (`--dds-prefix`, govkit.runners.fastdds_prefix): its headers, its library, and its
library directory as the run path. The binary is cached per user
under `$XDG_CACHE_HOME/govkit` (default `~/.cache/govkit`), named by a hash of everything
that makes it what it is: the source, the compiler's version, the Fast DDS version (a
prefix's: that build of its library) and the command line. A changed source, compiler or
library therefore builds a new binary; an unchanged one is reused. The build writes to a
temporary name and renames it into place, so two govkit processes building at the same
time never run a half-written file.

`python -m govkit.runners.fastdds_build` builds it and prints its path (`.ci/setup` does that).
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

from govkit.common.errors import GovkitError, run_main
from govkit.common.paths import user_cache_dir
from govkit.runners.fastdds_prefix import FastddsInstall

SOURCE = Path(__file__).resolve().parent / "native" / "fastdds_perf.cpp"
READERS = SOURCE.with_name("readers.h")    # the reader processes' relay, included by SOURCE
PROGRAM = "fastdds_perf"
FLAGS = ("-std=c++17", "-O2", "-pthread")
LIBS = ("-lfastrtps", "-lfastcdr")
INSTALL_HINT = ("install a C++ compiler and Fast DDS with its headers: `sudo apt-get install "
                "g++ libfastrtps-dev` "
                "(in a govkit checkout, `bash .ci/setup` installs all of it)")
_HEADER_MISSING = re.compile(r"fatal error: (fast\w+/\S+): No such file or directory")


def compiler() -> str | None:
    """The C++ compiler to use: $CXX if set, else g++ (what Debian's g++ package installs)."""
    return shutil.which(os.environ.get("CXX") or "g++")


@cache
def fastdds_version() -> str:
    """Fast DDS's version as its own headers state it (FASTRTPS_VERSION_STR), or 'unknown'."""
    for header in _config_headers():
        m = re.search(r'#define\s+FASTRTPS_VERSION_STR\s+"([^"]+)"',
                      Path(header).read_text(errors="replace"))
        if m:
            return m[1]
    return "unknown"


def _config_headers() -> list[str]:
    # Debian installs the generated config.h under the multiarch include directory.
    return (sorted(glob.glob("/usr/include/*/fastrtps/config.h"))
            + glob.glob("/usr/include/fastrtps/config.h")
            + glob.glob("/usr/local/include/fastrtps/config.h"))


def _compiler_version(cxx: str) -> str:
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (out.stdout.splitlines() or ["unknown"])[0].strip()


def build_key(cxx: str, install: FastddsInstall | None = None) -> str:
    """16 hex digits naming the binary: source + compiler + Fast DDS + command line; for
    an install in a prefix, that build of its library (path and bytes) in place of the
    system's version, so another build of the same version is another program."""
    h = hashlib.sha256()
    runtime = runtime_build(install.library) if install else fastdds_version().encode()
    for part in (SOURCE.read_bytes(), READERS.read_bytes(), _compiler_version(cxx).encode(),
                 runtime, " ".join(FLAGS + LIBS + prefix_flags(install)).encode()):
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()[:16]


def runtime_build(library: Path) -> bytes:
    """What names one build of an installed runtime library (Fast DDS's or Cyclone's): its
    path and its bytes' hash."""
    h = hashlib.sha256()
    with library.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return f"{library} {h.hexdigest()}".encode()


def prefix_flags(install: FastddsInstall | None) -> tuple[str, ...]:
    """Its headers, its library, and its library directory as the run path (so the program
    loads that install's Fast DDS without LD_LIBRARY_PATH); none for the system's."""
    if install is None:
        return ()
    return (f"-I{install.include}", f"-I{install.prefix / 'include'}", f"-L{install.lib_dir}",
            f"-Wl,-rpath,{install.lib_dir}")


def cached_path(install: FastddsInstall | None = None) -> Path:
    """Where the binary is (or would be) cached; a placeholder name without a compiler."""
    cxx = compiler()
    return user_cache_dir() / (f"{PROGRAM}-{build_key(cxx, install)}" if cxx else PROGRAM)


def ensure_built(install: FastddsInstall | None = None) -> Path:
    """The cached binary, compiled first if it is not there yet (against `install`, else the
    system's Fast DDS); GovkitError (exit 2) with the install command when the compiler or
    Fast DDS's headers are missing."""
    cxx = compiler()
    if cxx is None:
        raise GovkitError(f"Fast DDS runner: no C++ compiler "
                          f"({os.environ.get('CXX') or 'g++'}) found; {INSTALL_HINT}")
    target = user_cache_dir() / f"{PROGRAM}-{build_key(cxx, install)}"
    if os.access(target, os.X_OK):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        out = subprocess.run([cxx, *FLAGS, *prefix_flags(install), "-o", tmp, str(SOURCE),
                              *LIBS],
                             capture_output=True, text=True, timeout=600)
        if out.returncode != 0:
            raise GovkitError(_build_error(out.stderr))
        os.chmod(tmp, 0o755)
        os.replace(tmp, target)
    except subprocess.TimeoutExpired:
        raise GovkitError("Fast DDS runner: compiling fastdds_perf took over 10 minutes") \
            from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def _build_error(stderr: str) -> str:
    m = _HEADER_MISSING.search(stderr)
    if m:
        return f"Fast DDS runner: Fast DDS headers not found ({m[1]}); {INSTALL_HINT}"
    if re.search(r"cannot find -l(fastrtps|fastcdr)", stderr):
        return f"Fast DDS runner: the Fast DDS library is not installed; {INSTALL_HINT}"
    first = next((line for line in stderr.splitlines() if "error" in line), stderr.strip())
    return f"Fast DDS runner: compiling {SOURCE.name} failed: {first[:300]}"


def print_built(ensure) -> int:
    """`python -m govkit.<program>_build`: build (or find) the program, print its path; an
    error is rendered as the root command renders it (common.errors.run_main)."""
    return run_main(lambda: print(ensure()))


def main() -> int:
    return print_built(ensure_built)


if __name__ == "__main__":
    sys.exit(main())
