"""Why Cyclone DDS 0.10 refused: real ddsperf processes refuse a broken bundle, and govkit
says in one line which file, which rule and the fix (govkit.runners.cyclone_refusal), from
Cyclone's own log line and govkit's checks of the files the process was given. The same
explanation reaches the rotating design's pairs (govkit.runners.pair.Pair)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from helpers.dds import make_bundle, needs_cyclone, next_domain, run_pair, with_file

from govkit.catalog.profiles import get_profile
from govkit.catalog.runners import runner_info
from govkit.documents import render
from govkit.generate.bundle import BundleLog, ensure_bundle
from govkit.pki.issuance import init_pki
from govkit.pki.revocation import revoke
from govkit.pki.testpki import TestPKI
from govkit.runners.base import RunnerError
from govkit.runners.cyclone_refusal import explain_cyclone_refusal, read_config
from govkit.smime.sign import sign_document

pytestmark = [needs_cyclone, pytest.mark.cyclone]


def _refused(bundle, workdir: Path, role: str = "pub") -> str:
    """Run the pair; `role` must be refused; the runner's error message."""
    runner, point, outputs = run_pair(bundle, workdir)
    assert outputs[role].returncode not in (0, None), outputs[role].tail()
    with pytest.raises(RunnerError) as e:
        runner.parse(point, outputs)
    message = str(e.value)
    assert "\n" not in message
    assert "fix: " in message
    return message


def _resign(tmp_path, xml: bytes, name: str, pki: TestPKI | None = None) -> Path:
    pki = pki or TestPKI(tmp_path / "pki")
    path = tmp_path / f"{name}.xml"
    path.write_bytes(xml)
    return sign_document(path, pki.permissions_ca, pki.permissions_ca_key)


def test_governance_altered_after_signing(tmp_path):
    bundle = make_bundle(tmp_path, "rtps_sign")
    signed = bundle.participants["pub"].governance.read_bytes()
    tampered = tmp_path / "tampered.p7s"
    tampered.write_bytes(signed.replace(b"<rtps_protection_kind>SIGN<",
                                        b"<rtps_protection_kind>NONE<"))
    message = _refused(with_file(bundle, "pub", governance=tampered), tmp_path / "cfg")
    assert f"{tampered}:" in message and "signature does not verify" in message, message
    assert "govkit sign" in message
    assert str(bundle.participants["pub"].permissions) + ":" not in message


def test_permissions_signed_by_another_ca(tmp_path):
    bundle = make_bundle(tmp_path, "rtps_sign")
    other, _ = init_pki(tmp_path / "other-pki")
    xml = bundle.participants["pub"].permissions.with_suffix(".xml")
    foreign = sign_document(xml, other.permissions_ca, other.permissions_ca_key)
    message = _refused(with_file(bundle, "pub", permissions=foreign), tmp_path / "cfg")
    assert "certificate verify error" in message            # Cyclone's own words
    assert f"{foreign}:" in message and "Permissions CA" in message, message


def test_permissions_subject_not_matching_the_certificate(tmp_path):
    bundle = make_bundle(tmp_path, "rtps_sign")
    xml = bundle.participants["pub"].permissions.with_suffix(".xml").read_bytes()
    signed = _resign(tmp_path, xml.replace(b"CN=pub<", b"CN=mallory<"), "mallory")
    message = _refused(with_file(bundle, "pub", permissions=signed), tmp_path / "cfg")
    assert "Subject name is invalid" in message
    assert f"{signed}:" in message and "subject_name" in message and "CN=mallory" in message
    assert "govkit generate" in message


def test_expired_permissions(tmp_path):
    bundle = make_bundle(tmp_path, "rtps_sign")
    pki = TestPKI(tmp_path / "pki")
    now = dt.datetime.now(dt.UTC)
    doc = render.PermissionsDocument.for_participant(
        pki, "pub", runner_info("ddsperf"),
        validity=(now - dt.timedelta(days=3), now - dt.timedelta(days=1)))
    signed = _resign(tmp_path, doc.render(), "expired", pki)
    message = _refused(with_file(bundle, "pub", permissions=signed), tmp_path / "cfg")
    assert "Permissions validity period expired" in message
    assert f"{signed}:" in message and "not_after" in message and "which has passed" in message
    assert "validity that covers now" in message


def test_revoked_certificate(tmp_path):
    pki, _ = init_pki(tmp_path / "pki", participants=("pub", "sub", "other"))
    revoke(pki, "other", reason="keyCompromise")
    bundle = ensure_bundle(get_profile("rtps_sign"), pki, tmp_path / "build", "ddsperf",
                           BundleLog(), participants=("pub", "sub", "other"))
    f = bundle.participants["other"]
    bundle = with_file(bundle, "sub", certificate=f.certificate, private_key=f.private_key,
                       permissions=f.permissions)
    message = _refused(bundle, tmp_path / "cfg", role="sub")
    assert "certificate revoked" in message
    assert f"{f.certificate}:" in message and "CRL" in message and "keyCompromise" in message
    assert "govkit pki renew" in message


def test_a_good_bundle_gets_no_explanation(tmp_path):
    bundle = make_bundle(tmp_path, "rtps_sign")
    runner, point, outputs = run_pair(bundle, tmp_path / "cfg")
    runner.parse(point, outputs)                    # no refusal
    for o in outputs.values():
        assert "CYCLONEDDS_URI" in o.env
        assert explain_cyclone_refusal(o.env, o.stdout + o.stderr, point.domain_id) == ""


def test_the_configuration_is_read_back_as_written(tmp_path):
    from govkit.runners.ddsperf import DdsperfRunner
    bundle = make_bundle(tmp_path, "rtps_sign")
    runner = DdsperfRunner()
    path = tmp_path / "c.xml"
    path.write_text(runner.config_text(bundle, "pub"))
    given, crl = read_config(path)
    files = bundle.participants["pub"]
    assert given["permissions"] == files.permissions.as_uri()
    assert given["certificate"] == files.certificate.as_uri()
    assert crl is None
    assert explain_cyclone_refusal({}, "Subject name is invalid", next_domain()) == ""


def test_a_rotating_pair_that_cannot_start_says_why(tmp_path):
    """The default runner's latency pairs (govkit.runners.pair): cyclone_perf refused."""
    from govkit.common.fsutil import write_atomic
    from govkit.runners.base import BenchPoint
    from govkit.runners.cyclone import CycloneRunner
    from govkit.runners.pair import Pair, PairFailed

    bundle = make_bundle(tmp_path, "rtps_sign")
    xml = bundle.participants["pub"].permissions.with_suffix(".xml").read_bytes()
    signed = _resign(tmp_path, xml.replace(b"CN=pub<", b"CN=mallory<"), "mallory")
    bundle = with_file(bundle, "pub", permissions=signed)
    runner = CycloneRunner()
    runner.check_installed()
    domain = next_domain()
    workdir = tmp_path / "cfg"
    workdir.mkdir()
    point = BenchPoint(bundle.profile, "latency", 32, 1, domain_id=domain)
    for path, text in runner.configs(point, bundle, workdir).items():
        write_atomic(Path(path), text.encode())
    pair = Pair("rtps_sign", "rtps_sign", 0, domain,
                runner.pair_specs(bundle, domain, None, False, workdir, wait_s=5),
                runner.explain_refusal)
    try:
        with pytest.raises(PairFailed) as e:
            pair.start(timeout=20)
    finally:
        pair.close()
    message = str(e.value)
    assert "\n" not in message
    assert "ping" in message and "Subject name is invalid" in message, message
    assert f"{signed}:" in message and "fix: " in message


def test_a_peer_that_never_matches_because_it_is_revoked(tmp_path):
    """The revoked participant drops the CRL from its own configuration: it starts, but
    its peer refuses its handshake; govkit says it is the peer's certificate."""
    pki, _ = init_pki(tmp_path / "pki", participants=("pub", "sub", "other"))
    revoke(pki, "other")
    bundle = ensure_bundle(get_profile("rtps_sign"), pki, tmp_path / "build", "ddsperf",
                           BundleLog(), participants=("pub", "sub", "other"))
    f = bundle.participants["other"]
    bundle = with_file(bundle, "sub", certificate=f.certificate, private_key=f.private_key,
                       permissions=f.permissions, crl=None)
    runner, point, outputs = run_pair(bundle, tmp_path / "cfg")
    with pytest.raises(RunnerError) as e:
        runner.parse(point, outputs)
    message = str(e.value)
    assert "\n" not in message
    assert "pub: Cyclone DDS says" in message and "certificate revoked" in message, message
    assert "the peer's certificate (subject /CN=other" in message
    assert "fix (on the peer's side)" in message
