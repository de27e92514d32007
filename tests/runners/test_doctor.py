"""`govkit doctor` on this machine, for real: the runtimes it finds (their versions as they
state them) and the advisories of govkit's table that affect them. On Debian 12, Fast DDS
2.9.1 carries the 2025-26 Fast DDS security fixes of none of its releases: doctor lists them
and exits 1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.json_schemas import assert_valid
from helpers.require import missing

from govkit.catalog.advisories import advisories
from govkit.common.errors import EXIT_INVALID, EXIT_USAGE
from govkit.runners.doctor import changelog_cves, fastdds_runtime, match

GOVKIT = str(Path(sys.executable).with_name("govkit"))


def _doctor(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([GOVKIT, "doctor", *args], capture_output=True, text=True,
                          timeout=120, env=env)


@pytest.fixture(scope="module")
def fastdds():
    runtime = fastdds_runtime()
    if runtime is None:
        pytest.skip(missing("fastdds", "Fast DDS is not installed"))
    return runtime


def test_doctor_lists_fastdds_with_its_advisories_and_exits_1(fastdds):
    text, js = _doctor(), _doctor("--json")
    doc = json.loads(js.stdout)
    assert_valid(doc, "doctor")
    affected = [m for m in match([fastdds]) if m.fails]
    assert text.returncode == js.returncode == doc["exit_code"]
    row = next(r for r in doc["runtimes"] if r["product"] == "fastdds")
    assert row["version"] == fastdds.version
    listed = {a["id"] for a in doc["advisories"]
              if a["product"] == "fastdds" and a["status"] == "affected"}
    assert listed == {m.advisory.id for m in match([fastdds]) if m.status == "affected"}
    for m in affected:
        assert f"Fast DDS {fastdds.version}: {m.advisory.id}: affected" in text.stdout
        assert m.advisory.sources[0] in text.stdout
    if fastdds.version == "2.9.1":          # Debian 12's
        assert text.returncode == EXIT_INVALID, text.stdout + text.stderr
        assert {"CVE-2025-67108", "CVE-2026-45094", "CVE-2025-62599"} <= listed
        assert "advisories reachable with DDS Security on affect installed runtimes" \
            in text.stdout.splitlines()[-1]
    assert text.stderr == ""


def test_debian_changelog_backports_are_read(fastdds):
    """Debian 12's package names the 2023 CVEs it backported; a row it names would count as
    fixed there (none of the table's rows is among them today)."""
    if not fastdds.package:
        pytest.skip("Fast DDS is not a Debian package here")
    assert fastdds.backported == changelog_cves(
        Path(f"/usr/share/doc/{fastdds.package.split()[0]}/changelog.Debian.gz"))
    if fastdds.package.startswith("libfastrtps2.9 2.9.1+ds-1+deb12u"):
        assert "CVE-2023-39946" in fastdds.backported
    backported_row = next(a for a in advisories() if a.product == "fastdds")
    marked = match([fastdds.__class__(**{**fastdds.__dict__, "backported": frozenset(
        {backported_row.id})})])
    assert {m.status for m in marked if m.advisory.id == backported_row.id} == \
        {"fixed_by_package"}


def test_a_bad_prefix_is_one_line_and_exit_2(tmp_path):
    result = _doctor("--dds-prefix", str(tmp_path / "nowhere"))
    assert result.returncode == EXIT_USAGE
    assert result.stderr.count("\n") == 1 and "no such directory" in result.stderr
