"""Real DDS Security: Cyclone DDS 0.10 (Debian) accepts what govkit signs, refuses the rest.

Each test starts two real ddsperf processes (ping/pong) with the security plugins loaded,
on a private domain id and a loopback-only configuration, and asserts on Cyclone's own
error text where it must refuse.
"""

from __future__ import annotations

import datetime as dt
import re

import pytest
from helpers.dds import make_bundle, needs_cyclone, next_domain, run_pair, with_file

from govkit.catalog.profiles import SECURED_PROFILES
from govkit.catalog.runners import runner_info
from govkit.documents import render
from govkit.pki.issuance import init_pki
from govkit.smime.sign import sign_document
from govkit.smime.verify import verify_file

pytestmark = [needs_cyclone, pytest.mark.cyclone]


def _refusals(outputs) -> str:
    return "\n".join(o.stdout + o.stderr for o in outputs.values())


@pytest.mark.parametrize("profile", [p.name for p in SECURED_PROFILES])
def test_signed_bundle_is_accepted_and_samples_flow(tmp_path, profile):
    bundle = make_bundle(tmp_path, profile)
    runner, point, outputs = run_pair(bundle, tmp_path / "cfg", duration=1)
    pub, sub = outputs["pub"], outputs["sub"]
    # None: still running when govkit stopped it after the measured seconds.
    assert pub.returncode in (0, None) and not pub.timed_out, pub.tail()
    # The two processes matched each other (and nobody else) ...
    assert f"participant {_host(pub)}:{sub.pid}: new" in pub.stdout
    # ... and exchanged samples: a latency line from exactly that peer, with a count.
    result = runner.parse(point, outputs)
    assert sum(r["count"] for r in result.rows) > 100
    assert all(0 < r["p50"] < 100_000 for r in result.rows)


def _host(out) -> str:
    return re.search(r"participant (\S+):\d+: new \(self\)", out.stdout).group(1)


def _resign(tmp_path, xml: bytes, pki_dir, name: str):
    from govkit.pki.testpki import TestPKI
    pki = TestPKI(pki_dir)
    path = tmp_path / f"{name}.xml"
    path.write_bytes(xml)
    return sign_document(path, pki.permissions_ca, pki.permissions_ca_key)


def test_governance_altered_after_signing_is_refused(tmp_path):
    bundle = make_bundle(tmp_path, "rtps_sign")
    signed = bundle.participants["pub"].governance.read_bytes()
    tampered = tmp_path / "tampered.p7s"
    tampered.write_bytes(signed.replace(b"<rtps_protection_kind>SIGN<",
                                        b"<rtps_protection_kind>NONE<"))
    assert tampered.read_bytes() != signed
    assert not verify_file(tampered, bundle.participants["pub"].permissions_ca).ok
    _, _, outputs = run_pair(with_file(bundle, "pub", governance=tampered), tmp_path / "cfg")
    assert outputs["pub"].returncode not in (0, None)
    assert "PKCS7_signatureVerify:digest failure" in _refusals(outputs)


def test_permissions_signed_by_another_ca_are_refused(tmp_path):
    bundle = make_bundle(tmp_path, "rtps_sign")
    other, _ = init_pki(tmp_path / "other-pki")
    xml = bundle.participants["pub"].permissions.with_suffix(".xml")
    foreign = sign_document(xml, other.permissions_ca, other.permissions_ca_key)
    _, _, outputs = run_pair(with_file(bundle, "pub", permissions=foreign), tmp_path / "cfg")
    assert outputs["pub"].returncode not in (0, None)
    text = _refusals(outputs)
    assert "Error occurred while validating local permissions" in text
    assert "certificate verify error" in text


def test_permissions_subject_not_matching_the_certificate_is_refused(tmp_path):
    bundle = make_bundle(tmp_path, "rtps_sign")
    xml = bundle.participants["pub"].permissions.with_suffix(".xml").read_bytes()
    wrong = xml.replace(b"CN=pub<", b"CN=mallory<")
    assert wrong != xml
    signed = _resign(tmp_path, wrong, tmp_path / "pki", "mallory")
    _, _, outputs = run_pair(with_file(bundle, "pub", permissions=signed), tmp_path / "cfg")
    assert outputs["pub"].returncode not in (0, None)
    assert "Subject name is invalid" in _refusals(outputs)


def test_expired_permissions_are_refused(tmp_path):
    bundle = make_bundle(tmp_path, "rtps_sign")
    from govkit.pki.testpki import TestPKI
    pki = TestPKI(tmp_path / "pki")
    now = dt.datetime.now(dt.UTC)
    doc = render.PermissionsDocument.for_participant(
        pki, "pub", runner_info("ddsperf"),
        validity=(now - dt.timedelta(days=3), now - dt.timedelta(days=1)))
    signed = _resign(tmp_path, doc.render(), tmp_path / "pki", "expired")
    _, _, outputs = run_pair(with_file(bundle, "pub", permissions=signed), tmp_path / "cfg")
    assert outputs["pub"].returncode not in (0, None)
    assert "Permissions validity period expired" in _refusals(outputs)


# ---- where Cyclone DDS 0.10 differs from the letter of DDS Security 1.1 -----------------

def test_cyclone_does_not_trim_spaces_in_subject_names(tmp_path):
    """RFC 2253 allows a space after ','; Cyclone 0.10 compares the subject verbatim and
    refuses it. That is why govkit writes the subject exactly as RFC 2253 without spaces."""
    bundle = make_bundle(tmp_path, "rtps_sign")
    xml = bundle.participants["pub"].permissions.with_suffix(".xml").read_bytes()
    spaced = re.sub(rb"<subject_name>([^<]*),([^<]*)</subject_name>",
                    rb"<subject_name>\1, \2</subject_name>", xml)
    assert spaced != xml
    signed = _resign(tmp_path, spaced, tmp_path / "pki", "spaced")
    _, _, outputs = run_pair(with_file(bundle, "pub", permissions=signed), tmp_path / "cfg")
    assert "Subject name is invalid" in _refusals(outputs)


def test_cyclone_reads_an_open_id_range_as_domain_0_only(tmp_path):
    """The seeds' <id_range><min>0</min></id_range> means '0 and up' in Connext, but Cyclone
    0.10 refuses a participant on domain 1 with it: govkit always writes an explicit max."""
    bundle = make_bundle(tmp_path, "rtps_sign")
    xml = bundle.participants["pub"].governance.with_suffix(".xml").read_bytes()
    open_range = re.sub(rb"\s*<max>230</max>", b"", xml)
    assert open_range != xml
    signed = _resign(tmp_path, open_range, tmp_path / "pki", "open-range")
    bundle = with_file(with_file(bundle, "pub", governance=signed), "sub", governance=signed)
    _, _, outputs = run_pair(bundle, tmp_path / "cfg", domain=1)
    assert "Could not find domain 1 in governance" in _refusals(outputs)
    # The same document with govkit's explicit max is accepted on domain 1.
    ok = make_bundle(tmp_path, "rtps_sign")
    _, _, outputs = run_pair(ok, tmp_path / "cfg-ok", domain=1 + next_domain() % 5)
    assert "Could not find domain" not in _refusals(outputs)
    assert outputs["pub"].returncode in (0, None) and not outputs["pub"].timed_out


def test_cyclone_accepts_only_rsa2048_and_p256_identities(tmp_path):
    """Cyclone 0.10's authentication plugin refuses other identity keys (here EC P-384),
    which is why `govkit pki init --key-type` offers only ec-p256 and rsa-2048."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    from govkit.pki.testpki import TestPKI, certificate_pem, private_key_pem, x509_name

    bundle = make_bundle(tmp_path, "rtps_sign")
    pki = TestPKI(tmp_path / "pki")
    ca_cert, ca_key = pki.certificate("identity_ca"), pki.private_key("identity_ca")
    key = ec.generate_private_key(ec.SECP384R1())
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(x509_name("p384")).issuer_name(ca_cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(hours=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .sign(ca_key, hashes.SHA256()))
    pki.path("p384").write_bytes(certificate_pem(cert))
    pki.path("p384", ".key").write_bytes(private_key_pem(key))
    doc = render.PermissionsDocument.for_participant(pki, "p384",
                                                     runner_info("ddsperf"))
    signed = _resign(tmp_path, doc.render(), tmp_path / "pki", "p384")
    p384 = with_file(bundle, "pub", certificate=pki.path("p384").resolve(),
                     private_key=pki.path("p384", ".key").resolve(), permissions=signed)
    _, _, outputs = run_pair(p384, tmp_path / "cfg")
    assert outputs["pub"].returncode not in (0, None)
    assert "Certificate authentication algorithm unknown" in _refusals(outputs)


@pytest.mark.parametrize("top", [230, 231])
def test_cyclone_refuses_a_domain_id_above_230_as_its_target_row_says(tmp_path, top):
    """The cyclone row of the target table (max_domain_id 230, GK010): a governance whose
    domains reach 231 fails to load in Cyclone DDS 0.10 even for a participant on domain
    1, which the document covers; `validate --target cyclone` calls it invalid, and under
    omg (which signs it) it is a warning naming Cyclone. 230 loads."""
    from govkit.catalog.targets import TARGETS
    from govkit.check.validate import check_bytes
    bundle = make_bundle(tmp_path, "rtps_sign")
    xml = bundle.participants["pub"].governance.with_suffix(".xml").read_bytes()
    edited = xml.replace(b"<max>230</max>", f"<max>{top}</max>".encode())
    assert (edited != xml) == (top != 230)
    cyclone, omg = (check_bytes(edited, "g.xml", target=t) for t in ("cyclone", "omg"))
    assert cyclone.valid == (top <= TARGETS["cyclone"].max_domain_id) and omg.valid
    assert [w.message.split(":")[0] for w in omg.warnings] == \
        ([] if top == 230 else ["GK010 warning"])
    signed = _resign(tmp_path, edited, tmp_path / "pki", f"domains-{top}")
    bundle = with_file(with_file(bundle, "pub", governance=signed), "sub", governance=signed)
    _, _, outputs = run_pair(bundle, tmp_path / "cfg", domain=1)
    loaded = outputs["pub"].returncode in (0, None) and not outputs["pub"].timed_out
    assert loaded == (top == 230), _refusals(outputs)[-2000:]
    if top > 230:   # access_control_parser.c's data callback refuses the value
        assert "failed in data callback" in _refusals(outputs)
        assert "Can not parse governance file" in _refusals(outputs)
