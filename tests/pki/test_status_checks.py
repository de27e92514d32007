"""`pki status`'s checks that RTI's reference architecture makes of its PKI
(rticonnextdds-medtech-reference-architecture, system_arch/security/security_tree.py): a
private key others may read, a certificate that outlives its CA, a grant whose validity
ends after or before its certificate's. Each a named finding, in the terminal and in
--json; on govkit's own PKI none of them (its keys are 0600, its grants follow their
certificates)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from helpers.json_schemas import assert_valid
from typer.testing import CliRunner

from govkit.cli.main import app
from govkit.pki.issuance import init_pki
from govkit.pki.testpki import TestPKI, certificate_pem


def _run(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output, result.output
    return result


def _status(pki: TestPKI, *more: str) -> tuple[int, str, dict]:
    text = _run("pki", "status", str(pki.directory), *more)
    js = _run("pki", "status", str(pki.directory), *more, "--json")
    doc = json.loads(js.output)
    assert_valid(doc, "pki-status")
    assert text.exit_code == js.exit_code == doc["exit_code"]
    return text.exit_code, text.output, doc


def _findings(doc: dict, check: str) -> dict[str, dict]:
    return {i["name"]: f for i in doc["items"] for f in i["findings"] if f["check"] == check}


@pytest.fixture
def pki(tmp_path) -> TestPKI:
    pki, _ = init_pki(tmp_path / "pki", participants=("pub", "sub"))
    return pki


def _signed(tmp_path: Path, pki: TestPKI, *validity: str) -> Path:
    out = tmp_path / "build"
    r = _run("generate", "--profile", "rtps_sign", "--ca", str(pki.directory), "--out",
             str(out), "--sign", *validity)
    assert r.exit_code == 0, r.output
    return out


def test_govkits_own_pki_has_none_of_the_findings(tmp_path, pki):
    code, text, doc = _status(pki, "--documents", str(_signed(tmp_path, pki)))
    assert code == 0, text
    assert all(i["findings"] == [] for i in doc["items"]), doc


def test_a_private_key_others_may_read_is_a_problem(pki):
    key = pki.path("pub", ".key")
    key.chmod(0o644)
    code, text, doc = _status(pki)
    assert code == 1
    found = _findings(doc, "key-mode")
    assert set(found) == {"pub"} and found["pub"]["severity"] == "problem"
    assert f"private key {key} has mode 0644: its group or others may read it; make it " \
           f"0600 or stricter (chmod 600 {key})" in text
    pki.path("permissions_ca", ".key").chmod(0o620)       # group-writable
    code, text, doc = _status(pki)
    assert set(_findings(doc, "key-mode")) == {"pub", "permissions_ca"}
    assert "may write it" in _findings(doc, "key-mode")["permissions_ca"]["message"]
    key.chmod(0o600)
    pki.path("permissions_ca", ".key").chmod(0o400)
    code, text, doc = _status(pki)
    assert code == 0 and not _findings(doc, "key-mode"), text


def test_a_certificate_outliving_its_ca_is_a_problem(pki):
    """A leaf the Identity CA signed with a notAfter past its own (as `openssl ca -days`
    allows): named, with both dates."""
    ca, ca_key = pki.certificate("identity_ca"), pki.private_key("identity_ca")
    old = pki.certificate("sub")
    late = ca.not_valid_after_utc + dt.timedelta(days=30)
    cert = (x509.CertificateBuilder().subject_name(old.subject).issuer_name(ca.subject)
            .public_key(old.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(old.not_valid_before_utc).not_valid_after(late)
            .sign(ca_key, hashes.SHA256()))
    pki.path("sub").write_bytes(certificate_pem(cert))
    code, text, doc = _status(pki)
    assert code == 1
    found = _findings(doc, "outlives-ca")
    assert set(found) == {"sub"} and found["sub"]["severity"] == "problem"
    assert f"expires {late:%Y-%m-%d %H:%M} UTC, after its issuer, the Identity CA " \
           f"({ca.not_valid_after_utc:%Y-%m-%d %H:%M} UTC)" in text


@pytest.mark.parametrize("days,check,says", [
    ("3000", "grant-outlives-certificate", "past pub's certificate"),
    ("90", "grant-ends-before-certificate", "loses its permissions while its certificate"),
])
def test_a_grant_ending_after_or_before_its_certificate_is_a_warning(tmp_path, pki, days,
                                                                      check, says):
    now = dt.datetime.now(dt.UTC)
    built = _signed(tmp_path, pki, "--valid-from", f"{now:%Y-%m-%dT%H:%M:%SZ}",
                    "--valid-for", days)
    code, text, doc = _status(pki, "--documents", str(built))
    found = _findings(doc, check)
    assert set(found) == {"pub.p7s:pub", "sub.p7s:sub"}, found
    assert all(f["severity"] == "warning" for f in found.values())
    assert "pub.p7s:pub: warning: the grant " in text and says in text and f"[{check}]" in text
    other = ({"grant-outlives-certificate", "grant-ends-before-certificate"} - {check}).pop()
    assert not _findings(doc, other)
    assert code == 0, text        # a warning, not a problem
