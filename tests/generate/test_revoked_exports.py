"""After a revoke, nothing stale is left to ship (issue 46, item 4): `generate --policy
--sign` removes the revoked enclave's signed grant of an earlier run, and the guide's
"revoke, then export again" works as written: `export sros2 --force` replaces the
keystore, leaving the revoked enclave (and its key, which the PKI keeps) out."""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers.cli import enclave_project, govkit

from govkit.pki.testpki import TestPKI

DATA = Path(__file__).resolve().parents[1] / "data" / "ros2"
POLICY, PROTECTION = DATA / "acceptance.policy.xml", DATA / "acceptance.protection.xml"


def test_generate_policy_removes_a_revoked_enclaves_earlier_grant(tmp_path):
    pki, build = str(tmp_path / "pki"), tmp_path / "build"
    args = ["generate", "--policy", str(POLICY), "--protection", str(PROTECTION), "--ca", pki,
            "--out", str(build), "--sign"]
    assert govkit(*args).exit_code == 0
    camera = build / "permissions" / "+robot+camera.p7s"
    assert camera.exists()
    assert govkit("pki", "revoke", "/robot/camera", "--ca", pki).exit_code == 0
    r = govkit(*args)
    assert r.exit_code == 0, r.output
    assert not camera.exists() and not camera.with_suffix(".xml").exists()
    warned = [line for line in r.stderr.splitlines() if "/robot/camera" in line]
    assert len(warned) == 1 and f"removed {camera} and {camera.with_suffix('.xml')}" in \
        warned[0], r.stderr
    r = govkit("pki", "status", pki, "--documents", str(build))
    assert r.exit_code == 0, r.output   # no grant of a revoked certificate is left


def test_revoke_then_export_again_replaces_the_keystore(tmp_path):
    root = enclave_project(tmp_path)
    pki, ks = TestPKI(root / "pki"), root / "ks"
    common = ["--ca", str(pki.directory), "--build", str(root / "build")]
    assert govkit("export", "sros2", str(ks), *common).exit_code == 0
    talker = ks / "enclaves" / "talker_listener" / "talker"
    assert (talker / "key.pem").exists()
    assert govkit("pki", "revoke", "/talker_listener/talker", "--ca",
                  str(pki.directory)).exit_code == 0
    r = govkit("export", "sros2", str(ks), *common, "--force")
    assert r.exit_code == 0, r.output
    assert not talker.exists()
    assert "/talker_listener/talker left out: its certificate is revoked" in r.stderr
    assert f"{talker / 'key.pem'}: not in the new keystore (its enclave is left out); the " \
        f"PKI {pki.directory}/ keeps this key" in r.stderr, r.stderr
    listener = ks / "enclaves" / "talker_listener" / "listener"
    assert (listener / "key.pem").exists() and (listener / "crl.pem").exists()
    # the CRL every enclave holds refuses the revoked certificate (real OpenSSL)
    done = subprocess.run(["openssl", "verify", "-crl_check", "-CRLfile",
                           str(listener / "crl.pem"), "-CAfile",
                           str(listener / "identity_ca.cert.pem"),
                           str(pki.path("+talker_listener+talker"))],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode != 0 and "certificate revoked" in done.stdout + done.stderr
