"""Build Cyclone DDS from a source tarball (the vendored 11.0.1) into a prefix, cached per machine.

The tarball is checked against the SHA-256 its `.sha256` file states (the format
`sha256sum -c` reads) before anything is unpacked. It is built with CMake, the security plugins
on and OpenSSL required (`ENABLE_SECURITY=ON`, `ENABLE_SSL=ON`: a machine without OpenSSL's
headers stops at configure instead of silently building no plugins), ddsperf and idlc included.

The prefix is `$XDG_CACHE_HOME/govkit/cyclonedds-VERSION-KEY`, KEY a hash of the tarball's
SHA-256, the C compiler's version and the CMake options, so a changed compiler or option
builds a new prefix and an unchanged one is reused at once. The build runs in a temporary
directory beside it and is renamed into place only when complete: a build interrupted or run
twice at once never leaves a half-installed prefix to be taken for a good one. CMake is told
the final prefix and installs into a staging copy of that path (DESTDIR), which is then
renamed; Cyclone's programs and plugins find its library by a run path relative to
themselves ($ORIGIN/../lib, set by its own CMakeLists), so no LD_LIBRARY_PATH is needed.

`python -m govkit.runners.cyclone_source_build [TARBALL]` builds it (the vendored 11.0.1 in
a checkout's `../shared/vendor` by default, or $GOVKIT_SHARED/vendor) and prints the prefix.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from govkit.common.errors import GovkitError, run_main
from govkit.common.paths import user_cache_dir
from govkit.runners.cyclone_build import first_line

TARBALL_NAME = "cyclonedds-11.0.1.tar.gz"
# Stated, not left to what CMake finds on the machine: security and OpenSSL required; shared
# memory (iceoryx, iceoryx2) off, because Debian's cyclonedds-dev pulls iceoryx in and the
# prefix would otherwise differ by machine; no tests or examples.
CMAKE_OPTIONS = ("-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DENABLE_SECURITY=ON", "-DENABLE_SSL=ON",
                 "-DBUILD_DDSPERF=ON", "-DBUILD_IDLC=ON", "-DBUILD_TESTING=OFF",
                 "-DBUILD_EXAMPLES=OFF", "-DENABLE_ICEORYX=OFF", "-DENABLE_ICEORYX2=OFF",
                 "-DCMAKE_INSTALL_LIBDIR=lib")
BUILD_TIMEOUT_S = 3 * 3600
_SHA_LINE = re.compile(r"^([0-9a-fA-F]{64})\s+\*?(\S+)\s*$")
_VERSION_IN_NAME = re.compile(r"cyclonedds-(\d+\.\d+\.\d+)\.tar\.gz$")


def default_tarball() -> Path:
    """The vendored tarball: $GOVKIT_SHARED/vendor, else the checkout's ../shared/vendor."""
    shared = os.environ.get("GOVKIT_SHARED") or Path(__file__).resolve().parents[3] / "shared"
    return Path(shared) / "vendor" / TARBALL_NAME


def tarball_sha256(tarball: Path) -> str:
    """The tarball's SHA-256 when it matches its `.sha256` file; GovkitError (exit 2) if the
    tarball or that file is missing, or they disagree."""
    sums = tarball.with_name(tarball.name + ".sha256")
    if not tarball.is_file():
        raise GovkitError(f"{tarball}: no such file (the Cyclone DDS source tarball)")
    if not sums.is_file():
        raise GovkitError(f"{sums}: no such file (the tarball's SHA-256, as sha256sum writes it)")
    stated = None
    for n, line in enumerate(sums.read_text(encoding="utf-8", errors="replace")
                             .splitlines()[:100], 1):
        m = _SHA_LINE.match(line)
        if m and Path(m[2]).name == tarball.name:
            stated = m[1].lower()
            break
        if line.strip():
            raise GovkitError(f"{sums}:{n}:1: not a `SHA256  {tarball.name}` line")
    if stated is None:
        raise GovkitError(f"{sums}:1:1: no SHA-256 for {tarball.name}")
    h = hashlib.sha256()
    with tarball.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    if h.hexdigest() != stated:
        raise GovkitError(f"{tarball}: SHA-256 {h.hexdigest()} is not the {stated} that "
                          f"{sums.name} states; refusing to build it")
    return stated


def _tool(name: str, env: str | None = None) -> str:
    found = shutil.which(os.environ.get(env) or name if env else name)
    if found is None:
        raise GovkitError(f"Cyclone DDS source build: {name} not found; install it "
                          f"(`sudo apt-get install cmake gcc libssl-dev`)")
    return found


def prefix_for(tarball: Path, sha256: str, cc: str) -> Path:
    """Where this tarball, built by this compiler with CMAKE_OPTIONS, is installed."""
    m = _VERSION_IN_NAME.search(tarball.name)
    version = m[1] if m else "source"
    h = hashlib.sha256()
    for part in (sha256, first_line([cc, "--version"]), " ".join(CMAKE_OPTIONS)):
        h.update(hashlib.sha256(part.encode()).digest())
    return user_cache_dir() / f"cyclonedds-{version}-{h.hexdigest()[:16]}"


def _run(argv: list[str], cwd: Path, log: Path, what: str, env: dict | None = None) -> None:
    with log.open("ab") as out:
        out.write(f"$ {' '.join(argv)}\n".encode())
        out.flush()
        try:
            rc = subprocess.run(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env,
                                timeout=BUILD_TIMEOUT_S).returncode
        except subprocess.TimeoutExpired:
            raise GovkitError(f"Cyclone DDS source build: {what} took over "
                              f"{BUILD_TIMEOUT_S // 3600} hours") from None
    if rc != 0:
        tail = log.read_text(errors="replace").splitlines()
        first = next((ln for ln in tail if "error" in ln.lower()), tail[-1] if tail else "")
        raise GovkitError(f"Cyclone DDS source build: {what} failed (exit {rc}): "
                          f"{first.strip()[:300]}")


def _safe_members(tar: tarfile.TarFile, top: str):
    # The tarball is checked by hash, but unpacking still keeps to one directory.
    for member in tar.getmembers():
        name = member.name
        if not (name == top or name.startswith(top + "/")) or ".." in Path(name).parts:
            raise GovkitError(f"tarball member {name!r} is outside {top}/; refusing to unpack")
        if member.isfile() or member.isdir() or member.issym():
            yield member


def remove_abandoned(prefix: Path) -> list[Path]:
    """Remove the temporary build directories of `prefix` that a killed build left behind:
    those older than BUILD_TIMEOUT_S, which no running build can still own."""
    removed = []
    for d in prefix.parent.glob(f".{prefix.name}.*"):
        try:
            if d.is_dir() and not d.is_symlink() \
                    and time.time() - d.stat().st_mtime > BUILD_TIMEOUT_S:
                shutil.rmtree(d)
                removed.append(d)
        except OSError:
            pass             # another process removed it first
    return removed


def ensure_built(tarball: Path | None = None, *, jobs: int | None = None,
                 progress=None) -> Path:
    """The installed prefix, built first when it is not cached. `progress(text)` is told
    when a build starts (a build takes many minutes; a cached prefix returns at once)."""
    tarball = Path(tarball) if tarball else default_tarball()
    sha256 = tarball_sha256(tarball)
    cc = _tool("gcc", "CC")
    prefix = prefix_for(tarball, sha256, cc)
    if (prefix / ".govkit-complete").is_file():
        return prefix
    cmake = _tool("cmake")
    ninja = shutil.which("ninja")
    prefix.parent.mkdir(parents=True, exist_ok=True)
    remove_abandoned(prefix)
    if progress:
        progress(f"building {tarball.name} into {prefix} (many minutes; cached afterwards)")
    with tempfile.TemporaryDirectory(prefix=f".{prefix.name}.", dir=prefix.parent) as work_s:
        work = Path(work_s)
        log = work / "build.log"
        top = tarball.name.removesuffix(".tar.gz")
        with tarfile.open(tarball, "r:gz") as tar:
            tar.extractall(work, members=_safe_members(tar, top), filter="data")
        src, build, stage = work / top, work / "build", work / "stage"
        generator = ["-G", "Ninja"] if ninja else []
        _run([cmake, "-S", str(src), "-B", str(build), *generator, *CMAKE_OPTIONS,
              f"-DCMAKE_C_COMPILER={cc}", f"-DCMAKE_INSTALL_PREFIX={prefix}"],
             work, log, "cmake configure")
        _run([cmake, "--build", str(build), "--parallel", str(jobs or os.cpu_count() or 1)],
             work, log, "cmake --build")
        _run([cmake, "--install", str(build)], work, log, "cmake --install",
             env=dict(os.environ, DESTDIR=str(stage)))
        staged = stage / prefix.relative_to(prefix.anchor)
        shutil.copyfile(log, staged / "govkit-build.log")
        (staged / ".govkit-complete").write_text(f"{tarball.name} {sha256}\n", encoding="utf-8")
        try:
            os.rename(staged, prefix)
        except OSError:
            # Another process renamed its complete build into place first: use that one.
            if not (prefix / ".govkit-complete").is_file():
                raise
    return prefix


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0].startswith("-")):
        print("usage: python -m govkit.runners.cyclone_source_build [TARBALL]", file=sys.stderr)
        return 2
    started = time.monotonic()

    def build() -> None:
        print(ensure_built(Path(args[0]) if args else None,
                           progress=lambda text: print(text, file=sys.stderr, flush=True)))
        print(f"({time.monotonic() - started:.0f} s)", file=sys.stderr)
    return run_main(build)


if __name__ == "__main__":
    sys.exit(main())
