"""The revocation log (govkit.pki.revocation_log): deleting the CRL AND the PKI manifest
un-revokes no one (issue 46's left-over). Every command that grants, signs or ships refuses
(exit 2, one line naming the CRL and the log, nothing written) until `pki revoke` writes
the CRL again with the logged revocations, which real OpenSSL then checks."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers.cli import govkit

from govkit.common.errors import EXIT_INVALID, EXIT_USAGE
from govkit.pki.manifest import manifest_path
from govkit.pki.revocation import crl_path, load_crl
from govkit.pki.revocation_log import log_path, logged_revocations
from govkit.pki.testpki import TestPKI


@pytest.fixture
def project(tmp_path) -> Path:
    """pki/ with pub and sub, sub revoked, build/ signed; then the CRL and the manifest
    both deleted."""
    pki = str(tmp_path / "pki")
    assert govkit("pki", "init", pki).exit_code == 0
    assert govkit("generate", "-p", "rtps_sign", "--ca", pki, "--out",
                  str(tmp_path / "build"), "--sign").exit_code == 0
    assert govkit("pki", "revoke", "sub", "--ca", pki).exit_code == 0
    return tmp_path


def _forget(root: Path) -> TestPKI:
    pki = TestPKI(root / "pki")
    crl_path(pki).unlink()
    manifest_path(pki).unlink()
    return pki


def _refused(r, pki: TestPKI) -> None:
    assert r.exit_code == EXIT_USAGE, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"govkit: {crl_path(pki)}: missing, but {log_path(pki)} logs "
                               f"1 revocation(s) (sub (0x"), lines[0]


def test_revoke_logs_the_revocation(project):
    pki = TestPKI(project / "pki")
    logged, unreadable = logged_revocations(pki)
    assert unreadable == [] and [r["name"] for r in logged] == ["sub"]
    assert logged[0]["serial"] == pki.certificate("sub").serial_number


@pytest.mark.parametrize("extra", [["--paranoid"], []], ids=["paranoid", "manifest"])
def test_generate_refuses_with_crl_and_manifest_deleted(project, extra):
    pki = _forget(project)
    out = project / "again"
    r = govkit("generate", "-p", "rtps_sign", "--ca", str(pki.directory), "--out", str(out),
               "--sign", *extra)
    _refused(r, pki)
    assert not out.exists()


def test_sign_export_and_status_refuse_too(project):
    pki = _forget(project)
    before = (project / "build" / "permissions" / "sub.p7s").read_bytes()
    _refused(govkit("sign", "--ca", str(pki.directory), str(project / "build")), pki)
    assert (project / "build" / "permissions" / "sub.p7s").read_bytes() == before
    keystore = project / "keystore"
    _refused(govkit("export", "sros2", str(keystore), "--ca", str(pki.directory), "--build",
                    str(project / "build"), "-p", "rtps_sign"), pki)
    assert not keystore.exists()
    r = govkit("pki", "status", str(pki.directory), "--documents", str(project / "build"))
    assert r.exit_code == EXIT_INVALID and f"{log_path(pki)} logs 1 revocation(s)" in r.output


def test_revoke_writes_the_logged_revocation_back(project):
    pki = _forget(project)
    r = govkit("pki", "revoke", "--ca", str(pki.directory))
    assert r.exit_code == 0, r.output
    assert pki.certificate("sub").serial_number in load_crl(pki).serials
    check = subprocess.run(["openssl", "verify", "-crl_check", "-CRLfile", str(crl_path(pki)),
                            "-CAfile", str(pki.identity_ca), str(pki.path("sub"))],
                           capture_output=True, text=True, timeout=30)
    assert check.returncode != 0 and "certificate revoked" in check.stdout + check.stderr
    out = project / "after"
    r = govkit("generate", "-p", "rtps_sign", "--ca", str(pki.directory), "--out", str(out),
               "--sign", "--paranoid")
    assert r.exit_code == 0, r.output
    assert (out / "permissions" / "pub.p7s").exists()
    assert not (out / "permissions" / "sub.p7s").exists()
    assert len(logged_revocations(pki)[0]) == 1          # logged once, not again


def test_a_replayed_old_manifest_with_the_crl_deleted_refuses(tmp_path):
    """The manifest from before the revocation, put back, is authentic and records no CRL:
    with the CRL deleted, only the log still says sub is revoked."""
    pki = TestPKI(tmp_path / "pki")
    assert govkit("pki", "init", str(pki.directory)).exit_code == 0
    before = manifest_path(pki).read_bytes()
    assert govkit("pki", "revoke", "sub", "--ca", str(pki.directory)).exit_code == 0
    crl_path(pki).unlink()
    manifest_path(pki).write_bytes(before)
    out = tmp_path / "build"
    r = govkit("generate", "-p", "rtps_sign", "--ca", str(pki.directory), "--out", str(out),
               "--sign", "--paranoid")
    _refused(r, pki)
    assert not out.exists()


def test_an_unreadable_line_refuses_and_a_new_ca_starts_clean(project):
    pki = TestPKI(project / "pki")
    with open(log_path(pki), "a") as f:
        f.write("{not json\n")
    r = govkit("generate", "-p", "rtps_sign", "--ca", str(pki.directory), "--out",
               str(project / "x"), "--sign")
    assert r.exit_code == EXIT_USAGE and "line 2 cannot be read" in r.stderr, r.output
    log_path(pki).write_text(log_path(pki).read_text().splitlines()[0] + "\n")
    assert govkit("pki", "init", str(pki.directory), "--force").exit_code == 0
    manifest_path(pki).unlink()             # the new CA's manifest gone (it has no CRL)
    r = govkit("generate", "-p", "rtps_sign", "--ca", str(pki.directory), "--out",
               str(project / "y"), "--sign", "--paranoid")
    assert r.exit_code == 0, r.output       # sub's old revocation was the old CA's
    assert (project / "y" / "permissions" / "sub.p7s").exists()
