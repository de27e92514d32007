"""One source of revocation truth (govkit.pki.revocation.current_crl): the CRL together with
the PKI manifest's record of the last CRL govkit wrote. A CRL that was deleted, or put back
older, must not un-revoke anyone: every command that grants, signs, ships, verifies or
renews refuses (exit 2, one line naming the CRL file) and writes nothing, and `pki revoke`
with no names writes the CRL again, which real OpenSSL then checks (issue 46, items 1
and 13: the held-out battery's twelve cases, and the authentic manifests it tampered)."""

from __future__ import annotations

import hashlib
import hmac
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from helpers.cli import govkit
from helpers.dds import needs_cyclone

from govkit.bench.repeat import refuse_revoked
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.pki.issuance import init_pki
from govkit.pki.manifest import KEY_NAME, crl_record, manifest_path, read_manifest
from govkit.pki.revocation import crl_path, crl_problem, current_crl, load_crl, revoke_all
from govkit.pki.testpki import TestPKI

DATA = Path(__file__).resolve().parents[1] / "data" / "ros2"
POLICY, PROTECTION = DATA / "acceptance.policy.xml", DATA / "acceptance.protection.xml"
CAMERA = "/robot/camera"
GOVKIT = str(Path(sys.executable).with_name("govkit"))


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """A policy project (generate --policy --sign into build/) with a profile build beside
    it (generate --profile rtps_encrypt --sign into plain/, for `export sros2` without
    --policy), both signed before any revocation; then /robot/navigator revoked (CRL 1,
    kept as old.crl.pem) and /robot/camera (CRL 2)."""
    root = tmp_path_factory.mktemp("truth")
    pki = str(root / "pki")
    r = govkit("generate", "--policy", str(POLICY), "--protection", str(PROTECTION), "--ca",
               pki, "--out", str(root / "build"), "--sign")
    assert r.exit_code == 0, r.output
    r = govkit("generate", "-p", "rtps_encrypt", "--ca", pki, "--out", str(root / "plain"),
               "--sign")
    assert r.exit_code == 0, r.output
    assert govkit("pki", "revoke", "/robot/navigator", "--ca", pki).exit_code == 0
    shutil.copy(crl_path(TestPKI(Path(pki))), root / "old.crl.pem")
    assert govkit("pki", "revoke", CAMERA, "--ca", pki).exit_code == 0
    return root


@pytest.fixture(params=["deleted", "older"])
def broken(request, pristine, tmp_path) -> Path:
    """The project with its CRL deleted, or CRL 1 (which does not revoke the camera) put
    back in place of CRL 2."""
    root = tmp_path / "project"
    shutil.copytree(pristine, root)
    crl = crl_path(TestPKI(root / "pki"))
    if request.param == "deleted":
        crl.unlink()
    else:
        shutil.copy(root / "old.crl.pem", crl)
    return root


def _refused(r, root: Path) -> None:
    """Exit 2 and one line naming the CRL file and what is wrong with it."""
    assert r.exit_code == EXIT_USAGE, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    crl = str(crl_path(TestPKI(root / "pki")))
    assert lines[0].startswith(f"govkit: {crl}: "), lines[0]
    assert "missing, but the PKI manifest" in lines[0] or "is older than the CRL number 2" \
        in lines[0], lines[0]


# ------------------------------------------------------------------ every path refuses


@pytest.mark.parametrize("extra", [["--paranoid"], []], ids=["paranoid", "manifest"])
def test_generate_refuses_and_writes_nothing(broken, extra):
    before = _snapshot(broken)
    r = govkit("generate", "-p", "rtps_sign", "--ca", str(broken / "pki"), "--out",
               str(broken / "plain"), "--sign", *extra)
    _refused(r, broken)
    assert _snapshot(broken) == before


def test_generate_policy_refuses_and_writes_nothing(broken):
    before = _snapshot(broken)
    r = govkit("generate", "--policy", str(POLICY), "--protection", str(PROTECTION), "--ca",
               str(broken / "pki"), "--out", str(broken / "build"), "--sign")
    _refused(r, broken)
    assert _snapshot(broken) == before


@pytest.mark.parametrize("extra", [[], ["--renew"]], ids=["sign", "renew"])
def test_sign_refuses_to_sign_the_revoked_grant(broken, extra):
    before = _snapshot(broken)
    r = govkit("sign", "--ca", str(broken / "pki"), str(broken / "build"), *extra)
    _refused(r, broken)
    assert _snapshot(broken) == before


def test_verify_with_the_pki_refuses_rather_than_say_ok(broken):
    camera = broken / "build" / "permissions" / "+robot+camera.p7s"
    r = govkit("verify", "--ca", str(broken / "pki"), str(camera))
    _refused(r, broken)
    assert "OK" not in r.stdout


def test_lint_with_the_pki_refuses(broken):
    r = govkit("lint", "--ca", str(broken / "pki"),
               str(broken / "build" / "permissions" / "+robot+camera.xml"))
    _refused(r, broken)


@pytest.mark.parametrize("how", ["profile", "policy", "policy-archive"])
def test_export_sros2_refuses_and_ships_nothing(broken, how):
    before = _snapshot(broken)
    args = ["export", "sros2", str(broken / "ks"), "--ca", str(broken / "pki")]
    if how == "profile":
        args += ["--build", str(broken / "plain")]
    else:
        args += ["--build", str(broken / "build"), "--policy", str(POLICY), "--protection",
                 str(PROTECTION)]
    if how == "policy-archive":
        args += ["--archive", str(broken / "ks.tar")]
    r = govkit(*args)
    _refused(r, broken)
    assert _snapshot(broken) == before
    assert not (broken / "ks").exists() and not (broken / "ks.tar").exists()


def test_renew_refuses_to_renew_the_revoked_certificate(broken):
    before = _snapshot(broken / "pki")
    r = govkit("pki", "renew", CAMERA, "--ca", str(broken / "pki"))
    _refused(r, broken)
    assert _snapshot(broken / "pki") == before


def test_status_counts_it_as_a_problem(broken):
    r = govkit("pki", "status", str(broken / "pki"), "--documents", str(broken / "build"))
    assert r.exit_code == 1, r.output
    assert "missing, but the PKI manifest" in r.stdout or \
        "is older than the CRL number 2" in r.stdout, r.stdout


def test_bench_refuses_before_it_signs(broken):
    with pytest.raises(GovkitError) as e:
        refuse_revoked(TestPKI(broken / "pki"), (CAMERA.replace("/", "+"),))
    assert e.value.exit_code == EXIT_USAGE
    assert str(e.value).startswith(f"{crl_path(TestPKI(broken / 'pki'))}: ")


@needs_cyclone
def test_bench_command_refuses_before_it_signs_or_measures(tmp_path):
    pki, _ = init_pki(tmp_path / "pki")   # pub and sub, bench's participants
    revoke_all(pki, ["sub"])
    crl_path(pki).unlink()
    r = subprocess.run([GOVKIT, "bench", "--profile", "none,rtps_sign", "--duration", "1",
                        "--ca", str(pki.directory), "--build", str(tmp_path / "build"),
                        "--out", str(tmp_path / "res")], capture_output=True, text=True,
                       timeout=300, stdin=subprocess.DEVNULL)
    assert r.returncode == EXIT_USAGE, r.stdout + r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith(f"govkit: {crl_path(pki)}: missing")
    assert not (tmp_path / "res").exists() and not (tmp_path / "build").exists()


# ------------------------------------------------------------------ and the way back


def _openssl_crl_check(pki: TestPKI, name: str) -> subprocess.CompletedProcess:
    return subprocess.run(["openssl", "verify", "-crl_check", "-CRLfile", str(crl_path(pki)),
                           "-CAfile", str(pki.identity_ca), str(pki.path(name))],
                          capture_output=True, text=True, timeout=30)


def test_revoke_with_no_names_writes_it_again_and_every_path_works(broken):
    pki = TestPKI(broken / "pki")
    r = govkit("pki", "revoke", "--ca", str(pki.directory))
    assert r.exit_code == 0, r.output
    assert f"wrote {crl_path(pki)}" in r.stdout
    crl = load_crl(pki)
    assert crl.number == 3   # after the last one the manifest saw
    for enclave in (CAMERA, "/robot/navigator"):
        stem = enclave.replace("/", "+")
        done = _openssl_crl_check(pki, stem)
        assert done.returncode != 0 and "certificate revoked" in done.stdout + done.stderr
    assert _openssl_crl_check(pki, "+robot+driver").returncode == 0
    r = govkit("generate", "--policy", str(POLICY), "--protection", str(PROTECTION), "--ca",
               str(pki.directory), "--out", str(broken / "build"), "--sign")
    assert r.exit_code == 0, r.output
    assert not (broken / "build" / "permissions" / "+robot+camera.p7s").exists()
    again = govkit("pki", "revoke", "--ca", str(pki.directory))
    assert again.exit_code == 0 and "nothing written" in again.stdout, again.output
    assert load_crl(pki).number == 3


def test_a_crl_of_the_same_number_with_an_earlier_this_update_is_older(pristine, tmp_path):
    shutil.copytree(pristine / "pki", tmp_path / "pki")
    pki = TestPKI(tmp_path / "pki")
    crl = load_crl(pki)
    record = crl_record(pki)
    assert record.number == crl.number == 2 and record.this_update
    assert crl_problem(pki, crl, record) is None
    _, key = pki.key_pair("identity_ca")
    earlier = x509.CertificateRevocationListBuilder(
        issuer_name=crl.crl.issuer, last_update=crl.this_update.replace(year=2020),
        next_update=crl.next_update, extensions=list(crl.crl.extensions),
        revoked_certificates=[]).sign(key, hashes.SHA256())
    from cryptography.hazmat.primitives.serialization import Encoding
    crl_path(pki).write_bytes(earlier.public_bytes(Encoding.PEM))
    with pytest.raises(GovkitError, match=r"CRL number 2 \(this update 2020-.*\) is older"):
        current_crl(pki)


# ------------------------------------------------------------------ authentic, but hostile


def _authentic(pki: TestPKI, body: bytes) -> None:
    """Write `body` as the manifest, with the HMAC of the PKI's own key (as only someone
    holding the CA keys could)."""
    key = bytes.fromhex((pki.directory / KEY_NAME).read_text().strip())
    tag = hmac.new(key, body, hashlib.sha256).hexdigest().encode()
    manifest_path(pki).write_bytes(body + b"hmac-sha256 " + tag + b"\n")


def _manifest_json(pki: TestPKI) -> dict:
    data = manifest_path(pki).read_bytes()
    return json.loads(data[:data.rindex(b"hmac-sha256 ")])


@pytest.fixture
def small(tmp_path) -> TestPKI:
    pki, _ = init_pki(tmp_path / "pki", participants=("pub", "sub", "other"))
    revoke_all(pki, ["sub"])
    return pki


def test_a_crl_number_past_20_octets_is_refused_not_written(small):
    doc = _manifest_json(small)
    doc["crl_number"] = int("9" * 400)
    _authentic(small, json.dumps(doc).encode())
    before = crl_path(small).read_bytes()
    r = govkit("pki", "revoke", "other", "--ca", str(small.directory))
    assert r.exit_code == EXIT_USAGE and "20 octets" in r.stderr, r.output
    assert len(r.stderr.strip().splitlines()) == 1
    assert crl_path(small).read_bytes() == before


def test_a_manifest_nested_too_deep_is_one_line_not_a_traceback(small):
    depth = 100_000
    _authentic(small, b"[" * depth + b"]" * depth)
    assert "not a manifest this govkit reads" in read_manifest(small)[1]
    r = govkit("pki", "revoke", "other", "--ca", str(small.directory))
    assert r.exit_code == 0, r.output
    r = govkit("generate", "-p", "rtps_sign", "--ca", str(small.directory), "--out",
               str(small.directory.parent / "build"))
    assert r.exit_code == 0, r.output


def test_a_revoked_serial_that_is_not_hex_is_one_line_not_a_traceback(small):
    doc = _manifest_json(small)
    doc["participants"]["sub"]["revoked"]["serial"] = "0xnothex"
    _authentic(small, json.dumps(doc).encode())
    assert "not a manifest this govkit reads" in read_manifest(small)[1]
    crl_path(small).unlink()
    r = govkit("pki", "revoke", "other", "--ca", str(small.directory))
    assert r.exit_code == 0, r.output


def test_revoke_refuses_a_crl_far_larger_than_govkit_writes(small):
    crl = load_crl(small)
    _, key = small.key_pair("identity_ca")
    padding = x509.UnrecognizedExtension(x509.ObjectIdentifier("1.3.6.1.4.1.99999.1"),
                                         b"\0" * 0x100000)
    big = x509.CertificateRevocationListBuilder(
        issuer_name=crl.crl.issuer, last_update=crl.this_update, next_update=crl.next_update,
        extensions=[*crl.crl.extensions, x509.Extension(padding.oid, False, padding)],
        revoked_certificates=list(crl.crl)).sign(key, hashes.SHA256())
    from cryptography.hazmat.primitives.serialization import Encoding
    crl_path(small).write_bytes(big.public_bytes(Encoding.PEM))
    before = crl_path(small).read_bytes()
    r = govkit("pki", "revoke", "other", "--ca", str(small.directory))
    assert r.exit_code == EXIT_USAGE and "more than govkit writes for them" in r.stderr, \
        r.output
    assert crl_path(small).read_bytes() == before


def test_a_re_keyed_participants_old_revocation_survives_a_deleted_crl(small):
    old = small.certificate("sub")
    r = govkit("pki", "renew", "sub", "--ca", str(small.directory), "--new-key")
    assert r.exit_code == 0, r.output
    crl_path(small).unlink()
    r = govkit("pki", "revoke", "--ca", str(small.directory))
    assert r.exit_code == 0, r.output
    assert load_crl(small).revocation(old) is not None
