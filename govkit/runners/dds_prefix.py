"""Which Cyclone DDS install a run uses, and its version as the library states it.

A run uses the system's Cyclone DDS (Debian 12: 0.10.2 under /usr) unless it is given an
install prefix: `--dds-prefix DIR`, else $GOVKIT_DDS_PREFIX, else the first entry of
$AMENT_PREFIX_PATH (a sourced ROS 2 environment) that holds a Cyclone DDS. A prefix is what
CMake installs: `lib/libddsc.so`, the three DDS Security plugins beside it, `bin/ddsperf`,
and, for govkit's own program, `bin/idlc` and `include/dds/dds.h`. A prefix lacking any of
them is refused in one line naming what is missing (exit 2), before anything is built or
started.

The version is the library's own: the file `libddsc.so` resolves to is named
`libddsc.so.MAJOR.MINOR.PATCH` by Cyclone's build (its CMake project version), and the
library carries the same string, which it sends in every participant announcement (SPDP's
participant version info); govkit takes the name only when the library holds that string.
Failing that, the prefix's CMake package version file; else "unknown".
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from govkit.common.errors import GovkitError

ENV = "GOVKIT_DDS_PREFIX"
AMENT_ENV = "AMENT_PREFIX_PATH"
SYSTEM = Path("/usr")
PLUGINS = ("libdds_security_auth.so", "libdds_security_ac.so", "libdds_security_crypto.so")
# Where CMake (lib, lib64) and Debian (lib/<multiarch>) put the library, and where Debian
# puts the plugins (a private directory beside it).
_LIB_DIRS = ("lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu")
_PLUGIN_SUBDIRS = ("", "libddsc0debian")
_SONAME_VERSION = re.compile(r"^libddsc\.so\.(\d+\.\d+\.\d+)$")
_CMAKE_VERSION = re.compile(r'set\s*\(\s*PACKAGE_VERSION\s+"([^"]+)"')
MAX_LIBRARY_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class CycloneInstall:
    """One Cyclone DDS install: where its parts are, and its version."""
    prefix: Path
    library: Path          # the real file of lib/libddsc.so
    plugins: Path          # the directory of the three security plugins
    ddsperf: Path
    version: str
    source: str            # how the run was given it: the option, an environment variable
    idlc: Path | None = None
    include: Path | None = None

    @property
    def system(self) -> bool:
        return self.source == "system"

    @property
    def lib_dir(self) -> Path:
        return self.library.parent

    def to_json(self) -> dict:
        """results.json's settings.runtime."""
        return {"name": "Cyclone DDS", "version": self.version, "prefix": str(self.prefix),
                "library": str(self.library), "source": self.source}

    @property
    def said(self) -> str:
        """What a run says when it starts on this install (stderr)."""
        return f"govkit: Cyclone DDS {self.version} in {self.prefix} ({self.source})"

    def name_of(self) -> str:
        return f"Cyclone DDS {self.version} in {self.prefix}"

    @property
    def label(self) -> str:
        """`11.0.1 (/opt/ros/lyrical)`; the system's install by its version alone."""
        return self.version if self.system else f"{self.version} ({self.prefix})"


def chosen_prefix(option: Path | None, implementation: str = "Cyclone DDS"
                  ) -> tuple[Path, str] | None:
    """The prefix a run is given and by what (`--dds-prefix`, GOVKIT_DDS_PREFIX or
    AMENT_PREFIX_PATH), or None for the system's Cyclone DDS. AMENT_PREFIX_PATH counts only
    through an entry holding a Cyclone DDS library: a ROS 2 environment whose middleware is
    another leaves the run on the system's."""
    if option is not None:
        return Path(option), "--dds-prefix"
    if os.environ.get(ENV):
        return Path(os.environ[ENV]), ENV
    holds = _library_link if implementation == "Cyclone DDS" else _fastdds_library
    for entry in filter(None, os.environ.get(AMENT_ENV, "").split(os.pathsep)):
        if holds(Path(entry)) is not None:
            return Path(entry), AMENT_ENV
    return None


def _library_link(prefix: Path) -> Path | None:
    for d in _LIB_DIRS:
        for name in ("libddsc.so", "libddsc.so.0debian"):
            if (prefix / d / name).is_file():
                return prefix / d / name
    return None


def _fastdds_library(prefix: Path) -> Path | None:
    return next((prefix / d / "libfastrtps.so" for d in _LIB_DIRS
                 if (prefix / d / "libfastrtps.so").is_file()), None)


def _plugin_dir(lib_dir: Path) -> Path | None:
    for sub in _PLUGIN_SUBDIRS:
        d = lib_dir / sub if sub else lib_dir
        if all((d / p).is_file() for p in PLUGINS):
            return d
    return None


def find_install(prefix: Path, source: str, *, for_build: bool = True) -> CycloneInstall:
    """The Cyclone DDS install at `prefix`; GovkitError (exit 2), one line naming every part
    missing, when it is not one, or has no security plugins, or (`for_build`) lacks what
    govkit's program is compiled with."""
    shown = f"{source} {prefix}" if source != "system" else f"Cyclone DDS in {prefix}"
    if not prefix.is_dir():
        raise GovkitError(f"{shown}: no such directory")
    link = _library_link(prefix)
    if link is None:
        raise GovkitError(f"{shown}: not a Cyclone DDS install (no lib/libddsc.so)")
    plugins = _plugin_dir(link.parent)
    ddsperf = prefix / "bin" / "ddsperf"
    idlc, include = prefix / "bin" / "idlc", prefix / "include" / "dds" / "dds.h"
    missing = []
    if plugins is None:
        missing.append(f"the DDS Security plugins ({', '.join(PLUGINS)} in "
                       f"{link.parent}; build with -DENABLE_SECURITY=ON and OpenSSL)")
    if not os.access(ddsperf, os.X_OK):
        missing.append("bin/ddsperf (build with -DBUILD_DDSPERF=ON)")
    if for_build and not os.access(idlc, os.X_OK):
        missing.append("bin/idlc (build with -DBUILD_IDLC=ON)")
    if for_build and not include.is_file():
        missing.append("include/dds/dds.h")
    if missing:
        raise GovkitError(f"{shown}: a Cyclone DDS install without {'; without '.join(missing)}")
    library = link.resolve()
    return CycloneInstall(prefix=prefix, library=library, plugins=plugins, ddsperf=ddsperf,
                          version=library_version(library, prefix), source=source,
                          idlc=idlc if for_build else None,
                          include=include.parent.parent if for_build else None)


def install_for(option: Path | None) -> CycloneInstall | None:
    """The install a run was given (checked), or None: the system's."""
    chosen = chosen_prefix(option)
    if chosen is None:
        return None
    prefix, source = chosen
    return find_install(prefix.absolute(), source)


@cache
def library_version(library: Path, prefix: Path | None = None) -> str:
    """The version the library states (see the module docstring), or "unknown"."""
    m = _SONAME_VERSION.match(library.name)
    if m and _holds(library, m[1]):
        return m[1]
    if prefix is not None:
        for d in _LIB_DIRS:
            f = prefix / d / "cmake" / "CycloneDDS" / "CycloneDDSConfigVersion.cmake"
            if f.is_file():
                found = _CMAKE_VERSION.search(f.read_text(encoding="utf-8", errors="replace"))
                if found:
                    return found[1]
    return "unknown"


def _holds(library: Path, version: str) -> bool:
    """Whether the library's read-only data holds `version` as a string of its own."""
    try:
        if not library.is_file() or library.stat().st_size > MAX_LIBRARY_BYTES:
            return False
        return b"\0" + version.encode() + b"\0" in library.read_bytes()
    except OSError:
        return False


def system_install() -> CycloneInstall | None:
    """The system's Cyclone DDS (/usr), or None where it is not installed whole."""
    try:
        return find_install(SYSTEM, "system", for_build=False)
    except GovkitError:
        return None


def prefix_options(runner: str, option: Path | None) -> dict:
    """The runner options (govkit.runners.get_runner) that make `runner` use the install a
    run was given: {"dds_prefix": CycloneInstall}, or {} for the system's. Checked here, so
    a bad prefix is refused before anything is signed, built or started; a prefix given to
    a runner that cannot take one is refused too (AMENT_PREFIX_PATH is left to the runners
    that can)."""
    from govkit.catalog.runners import RUNNERS, runner_info
    info = runner_info(runner)
    chosen = chosen_prefix(option, info.implementation)
    if chosen is None:
        return {}
    prefix, source = chosen
    if info.dds_prefix and info.implementation == "Fast DDS":
        # govkit's Fast DDS program is compiled against it (govkit.runners.fastdds_build)
        from govkit.runners.fastdds_prefix import find_fastdds_install
        return {"dds_prefix": find_fastdds_install(prefix.absolute(), source)}
    if not runner_info(runner).dds_prefix:
        if source == AMENT_ENV:
            return {}
        takers = ", ".join(n for n, r in RUNNERS.items() if r.dds_prefix)
        raise GovkitError(f"{source} applies to --runner {takers} (a DDS install); "
                          f"--runner {runner} runs the system's "
                          f"{runner_info(runner).implementation}")
    # govkit's own program (cyclone) is compiled against the prefix: its idlc and headers too
    return {"dds_prefix": find_install(prefix.absolute(), source,
                                       for_build=runner_info(runner).rotates)}


# ---------------------------------------------------------------- the version axis
# `--runner cyclone@/usr,cyclone@/opt/ros/lyrical`: one runner, two installs, measured in one
# rotation (govkit.bench.rotation): the first install is the baseline, whose arms keep the
# profiles' names; the second's arms are `PROFILE@TAG`, TAG its version
# (govkit.results.versions reads them back).

AXIS_RUNTIMES = 2


@dataclass(frozen=True)
class RuntimeAxis:
    """The runner a run names and each install's runner options (one, or two for a
    version axis), with what the run says of them when it starts."""
    runner: str | None
    options: list[dict]        # per install, in the order given: {"dds_prefix": ...} or {}
    tags: list[str]            # a version axis: per install, the name its arms carry
    said: list[str]

    @property
    def axis(self) -> list[tuple[str, dict]]:
        """govkit.bench.options.BenchOptions.runtime_axis: empty for one install."""
        return list(zip(self.tags, self.options, strict=True)) if len(self.options) > 1 \
            else []


def select_runtimes(text: str | None, option: Path | None, default_runner: str
                    ) -> RuntimeAxis:
    """`--runner NAME` (its install from --dds-prefix and the environment: prefix_options),
    or `--runner NAME@PREFIX,NAME@PREFIX` (a version axis: two installs of one runner, each
    checked here, before anything is signed, built or started). GovkitError (exit 2), one
    line, for anything else."""
    from govkit.catalog.runners import RUNNERS, runner_info
    if text is None or "@" not in text and "," not in text:
        if text is not None:
            runner_info(text)
        options = prefix_options(text or default_runner, option)
        return RuntimeAxis(text, [options],
                           [], [options["dds_prefix"].said] if options else [])
    items = [t.strip() for t in text.split(",")]
    names = {i.partition("@")[0] for i in items}
    bad = [i for i in items if "@" not in i or not i.partition("@")[2]]
    if bad or len(names) != 1:
        raise GovkitError(f"--runner {text}: a version axis is NAME@PREFIX,NAME@PREFIX, one "
                          f"runner and two install prefixes (e.g. cyclone@/usr,"
                          f"cyclone@/opt/ros/lyrical)")
    name = names.pop()
    info = runner_info(name)
    if not (info.dds_prefix and info.rotates and info.implementation == "Cyclone DDS"):
        takers = ", ".join(n for n, r in RUNNERS.items() if r.dds_prefix and r.rotates
                           and r.implementation == "Cyclone DDS")
        raise GovkitError(f"--runner {text}: a version axis pairs two installs in one "
                          f"rotation: --runner {takers}")
    if len(items) != AXIS_RUNTIMES:
        raise GovkitError(f"--runner {text}: a version axis pairs {AXIS_RUNTIMES} installs, "
                          f"not {len(items)}")
    if option is not None:
        raise GovkitError(f"--runner {text} names its installs: drop --dds-prefix")
    installs = []
    for item in items:
        prefix = Path(item.partition("@")[2]).absolute()
        installs.append(_system_for_axis(name) if prefix == SYSTEM
                        else find_install(prefix, "--runner", for_build=info.rotates))
    seen = [(i.prefix, i.library) for i in installs]
    if len(set(seen)) != len(seen):
        raise GovkitError(f"--runner {text}: both name the same install")
    tags = [i.version for i in installs]
    if len(set(tags)) != len(tags):
        tags = [f"{t}~{k + 1}" for k, t in enumerate(tags)]
    # the system's install runs as a plain run does (no prefix: govkit's usual program)
    options = [{} if i.system else {"dds_prefix": i} for i in installs]
    arms = ["PROFILE (the baseline)", *(f"PROFILE@{t}" for t in tags[1:])]
    said = [f"govkit: version axis: {i.name_of()}, arms {a}"
            for i, a in zip(installs, arms, strict=True)]
    return RuntimeAxis(name, options, tags, said)


def _system_for_axis(runner: str) -> CycloneInstall:
    install = system_install()
    if install is None:
        raise GovkitError(f"--runner {runner}@/usr: the system has no whole Cyclone DDS "
                          f"(libddsc, its DDS Security plugins, ddsperf)")
    return install
