"""`govkit doctor`: the DDS Security runtimes installed here, each version as the runtime
itself states it, set against the advisory table (govkit.catalog.advisories).

The runtimes: the system's Cyclone DDS (Debian's libddsc0debian; its version from the
library, govkit.runners.dds_prefix), a Cyclone DDS install given by `--dds-prefix`,
$GOVKIT_DDS_PREFIX or a ROS 2 environment (the same rules as a run's), Fast DDS (its headers'
FASTRTPS_VERSION_STR, else Debian's package; govkit.runners.fastdds_build), and OpenSSL
(`openssl version`, the library it runs with). A distribution may fix a flaw without a new
upstream version: a Debian package's changelog names the CVEs it backports, and a row that
it names counts as fixed there.

Exit 1 when an installed runtime is affected by an advisory (every row bears on DDS
Security, so each is reachable with security on); a `defect` row is listed, never fails.
"""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from govkit.catalog import advisories as table
from govkit.catalog.advisories import PRODUCT_TITLES, Advisory, version_tuple
from govkit.runners import dds_prefix
from govkit.runners.ddsperf import cyclonedds_version
from govkit.runners.fastdds import fastdds_package_version
from govkit.runners.fastdds_build import fastdds_version

# Debian's package of each runtime's library, whose changelog names the CVEs it backports.
DEBIAN_PACKAGES = {"cyclonedds": "libddsc0debian", "fastdds": "libfastrtps2.9",
                   "openssl": "libssl3"}
CHANGELOG = "/usr/share/doc/{package}/changelog.Debian.gz"
MAX_CHANGELOG_BYTES = 4 * 1024 * 1024      # decompressed; Debian's are tens of kB
_CVE = re.compile(rb"CVE-\d{4}-\d{4,7}")
_OPENSSL = re.compile(r"Library: OpenSSL (\S+)|^OpenSSL (\S+)")


@dataclass(frozen=True)
class Runtime:
    product: str                 # a key of PRODUCT_TITLES
    version: str                 # upstream, as the runtime states it ("unknown" if not)
    read_from: str               # where that version was read
    location: str                # the prefix, library or program
    source: str                  # system | --dds-prefix | GOVKIT_DDS_PREFIX | AMENT_PREFIX_PATH
    package: str = ""            # "libfastrtps2.9 2.9.1+ds-1+deb12u2" for a system package
    backported: frozenset[str] = frozenset()   # CVEs its package's changelog names

    @property
    def title(self) -> str:
        return f"{PRODUCT_TITLES[self.product]} {self.version}"

    def to_json(self) -> dict:
        return {"product": self.product, "name": PRODUCT_TITLES[self.product],
                "version": self.version, "read_from": self.read_from,
                "location": self.location, "source": self.source,
                "package": self.package or None, "backported": sorted(self.backported)}


@dataclass(frozen=True)
class Match:
    runtime: Runtime
    advisory: Advisory
    status: str                  # affected | fixed_by_package | unknown_version

    @property
    def fails(self) -> bool:
        return self.status == "affected" and self.advisory.kind == "advisory"

    def to_json(self) -> dict:
        a = self.advisory
        return {"product": self.runtime.product, "version": self.runtime.version,
                "location": self.runtime.location, "id": a.id, "kind": a.kind,
                "status": self.status, "introduced": a.introduced, "fixed": list(a.fixed),
                "security_only": a.security_only, "summary": a.summary,
                "sources": list(a.sources), "checked": a.checked}


@dataclass
class Report:
    runtimes: list[Runtime]
    matches: list[Match] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 1 if any(m.fails for m in self.matches) else 0


def debian_package(package: str) -> tuple[str, frozenset[str]]:
    """("PACKAGE VERSION", the CVEs its changelog names) of an installed Debian package, or
    ("", {}) where it is not installed (or this is not Debian)."""
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "", frozenset()
    if out.returncode != 0 or not out.stdout.strip():
        return "", frozenset()
    return f"{package} {out.stdout.strip()}", changelog_cves(
        Path(CHANGELOG.format(package=package)))


def changelog_cves(path: Path) -> frozenset[str]:
    """The CVE ids a Debian changelog names (read capped: a changelog is small)."""
    try:
        if not path.is_file():
            return frozenset()
        with gzip.open(path, "rb") as f:
            text = f.read(MAX_CHANGELOG_BYTES)
    except (OSError, EOFError, gzip.BadGzipFile):
        return frozenset()
    return frozenset(m.decode() for m in _CVE.findall(text))


def _upstream(package: str) -> str:
    """2.9.1 of "libfastrtps2.9 2.9.1+ds-1+deb12u2"; "unknown" if none."""
    v = version_tuple(package.split(" ", 1)[1]) if " " in package else None
    return ".".join(map(str, v)) if v else "unknown"


def cyclone_runtimes(prefix_option: Path | None) -> list[Runtime]:
    """The system's Cyclone DDS and the install a run would be given, if any."""
    out = []
    package, fixed = debian_package(DEBIAN_PACKAGES["cyclonedds"])
    system = dds_prefix.system_install()
    if system is not None:
        out.append(Runtime("cyclonedds", system.version, str(system.library), str(system.prefix),
                           "system", package, fixed))
    elif package:               # the library without ddsperf or the plugins: its package
        out.append(Runtime("cyclonedds", _upstream(package), f"dpkg ({cyclonedds_version()})",
                           "/usr", "system", package, fixed))
    chosen = dds_prefix.chosen_prefix(prefix_option)
    if chosen is not None:
        prefix, source = chosen
        install = dds_prefix.find_install(prefix.absolute(), source, for_build=False)
        out.append(Runtime("cyclonedds", install.version, str(install.library),
                           str(install.prefix), source))
    return out


def fastdds_runtime() -> Runtime | None:
    """Fast DDS 2.x as the runners find it: its headers' version, else Debian's package."""
    package, fixed = debian_package(DEBIAN_PACKAGES["fastdds"])
    headers = fastdds_version()
    if headers != "unknown":
        return Runtime("fastdds", headers, "FASTRTPS_VERSION_STR (fastrtps/config.h)", "/usr",
                       "system", package, fixed)
    if package:
        return Runtime("fastdds", _upstream(package), f"dpkg ({fastdds_package_version()})",
                       "/usr", "system", package, fixed)
    return None


def openssl_runtime() -> Runtime | None:
    """OpenSSL as `openssl version` states the library it runs with."""
    try:
        out = subprocess.run(["openssl", "version"], capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    m = _OPENSSL.search(out.stdout)
    if out.returncode != 0 or m is None:
        return None
    package, fixed = debian_package(DEBIAN_PACKAGES["openssl"])
    return Runtime("openssl", m[1] or m[2], "openssl version", shutil.which("openssl") or
                   "openssl", "system", package, fixed)


def installed_runtimes(prefix_option: Path | None = None) -> list[Runtime]:
    """Every runtime found (see the module docstring); a bad prefix is GovkitError (2)."""
    found = [*cyclone_runtimes(prefix_option), fastdds_runtime(), openssl_runtime()]
    return [r for r in found if r is not None]


def match(runtimes: list[Runtime], rows: tuple[Advisory, ...] | None = None) -> list[Match]:
    """Each (runtime, row) of its product that affects it, is fixed by its package only, or
    cannot be judged (a version govkit could not read)."""
    out = []
    for runtime in runtimes:
        for a in rows if rows is not None else table.advisories():
            if a.product != runtime.product:
                continue
            hit = a.affects(runtime.version)
            if hit is None:
                out.append(Match(runtime, a, "unknown_version"))
            elif hit:
                out.append(Match(runtime, a, "fixed_by_package" if a.id in runtime.backported
                                 else "affected"))
    return out


def doctor(prefix_option: Path | None = None) -> Report:
    runtimes = installed_runtimes(prefix_option)
    return Report(runtimes, match(runtimes))


_STATUS = {"affected": "affected", "fixed_by_package": "fixed by its package (changelog)",
           "unknown_version": "version unknown: cannot tell"}


def doctor_lines(report: Report) -> list[str]:
    """The runtimes as a table, one line per advisory that bears on one, then the verdict."""
    header = ("RUNTIME", "VERSION", "PACKAGE", "WHERE", "VERSION READ FROM")
    rows = [header] + [(PRODUCT_TITLES[r.product], r.version, r.package or "-",
                        r.location if r.source == "system" else f"{r.location} ({r.source})",
                        r.read_from) for r in report.runtimes]
    widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    if not report.runtimes:
        lines.append("no DDS Security runtime found")
    for m in report.matches:
        a = m.advisory
        reach = "only with DDS Security on" if a.security_only else "with or without security"
        lines += [f"{m.runtime.title}: {a.id}: {_STATUS[m.status]}"
                  f"{' (a defect, not an advisory)' if a.kind == 'defect' else ''}; fixed in "
                  f"{', '.join(a.fixed)}; reachable {reach}",
                  f"  {a.summary}",
                  f"  source: {' '.join(a.sources)} (checked {a.checked})"]
    failing = [m for m in report.matches if m.fails]
    if failing:
        per = {}
        for m in failing:
            per[m.runtime.title] = per.get(m.runtime.title, 0) + 1
        lines.append(f"{len(failing)} advisories reachable with DDS Security on affect "
                     f"installed runtimes ({'; '.join(f'{k}: {n}' for k, n in per.items())})")
    else:
        lines.append(f"no advisory of govkit's table ({len(table.advisories())} rows) affects an "
                     f"installed runtime")
    return lines


def doctor_json(report: Report) -> dict:
    return {"exit_code": report.exit_code,
            "runtimes": [r.to_json() for r in report.runtimes],
            "advisories": [m.to_json() for m in report.matches],
            "table_rows": len(table.advisories())}
