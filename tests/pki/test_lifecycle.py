"""The key lifecycle of the test PKI: revocation (the Identity CA's CRL, checked by real
`openssl verify -crl_check`), renewal without re-keying, `pki status`, and what `verify`,
`lint` and `bench` make of a revoked participant. Real processes refusing a revoked
participant: tests/integration/test_revocation.py."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509
from helpers.dds import needs_cyclone
from helpers.json_schemas import assert_valid
from typer.testing import CliRunner

from govkit.cli.main import app
from govkit.common.errors import EXIT_INVALID, EXIT_USAGE, GovkitError
from govkit.pki.issuance import init_pki
from govkit.pki.renewal import renew
from govkit.pki.revocation import crl_path, load_crl, revoke, revoked_participants
from govkit.pki.status import pki_status
from govkit.pki.testpki import TestPKI

GOVKIT = str(Path(sys.executable).with_name("govkit"))


def _run(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result


def _openssl_crl_check(pki: TestPKI, name: str) -> subprocess.CompletedProcess:
    return subprocess.run(["openssl", "verify", "-crl_check", "-CRLfile", str(crl_path(pki)),
                           "-CAfile", str(pki.identity_ca), str(pki.path(name))],
                          capture_output=True, text=True, timeout=30)


@pytest.fixture
def pki(tmp_path) -> TestPKI:
    pki, _ = init_pki(tmp_path / "pki", participants=("pub", "sub", "other"))
    return pki


@pytest.fixture
def signed(tmp_path, pki) -> Path:
    """Governance and permissions generated and signed for the PKI (build/)."""
    out = tmp_path / "build"
    r = _run("generate", "--profile", "rtps_sign", "--ca", str(pki.directory), "--out",
             str(out), "--sign")
    assert r.exit_code == 0, r.output
    return out


# ------------------------------------------------------------------ revoke


def test_revoke_writes_a_crl_openssl_checks(pki):
    r = _run("pki", "revoke", "sub", "--ca", str(pki.directory), "--reason", "keyCompromise")
    assert r.exit_code == 0, r.output
    assert f"wrote {crl_path(pki)}" in r.output
    assert "sub.pem" in r.output and "revoked on" in r.output and "keyCompromise" in r.output
    refused = _openssl_crl_check(pki, "sub")
    assert refused.returncode != 0 and "certificate revoked" in refused.stdout + refused.stderr
    ok = _openssl_crl_check(pki, "pub")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert stat.S_IMODE(crl_path(pki).stat().st_mode) == 0o644


def test_the_crl_is_the_identity_cas_with_a_next_update_and_a_number(pki):
    now = dt.datetime.now(dt.UTC)
    revoke(pki, "sub", days=10)
    crl = load_crl(pki)
    ca = pki.certificate("identity_ca")
    assert crl.crl.issuer == ca.subject and crl.crl.is_signature_valid(ca.public_key())
    assert now + dt.timedelta(days=9) < crl.next_update <= now + dt.timedelta(days=10, seconds=5)
    assert crl.this_update < now     # backdated like the certificates
    assert crl.number == 1
    _, new = revoke(pki, "other", reason="superseded")
    crl = load_crl(pki)
    assert new and crl.number == 2
    assert {e.serial for e in crl.entries()} == {pki.certificate(n).serial_number
                                                 for n in ("sub", "other")}
    assert [e.reason for e in crl.entries() if e.serial ==
            pki.certificate("other").serial_number] == ["superseded"]
    before = crl_path(pki).read_bytes()
    line, new = revoke(pki, "sub")           # again: said, nothing rewritten
    assert not new and "revoked on" in line and crl_path(pki).read_bytes() == before


def test_revoke_refuses_what_it_cannot_revoke(pki, tmp_path):
    for args, words in ((["identity_ca"], "only a participant"),
                        (["nobody"], "no such participant"),
                        (["sub", "--reason", "boredom"], "unknown reason")):
        r = _run("pki", "revoke", *args, "--ca", str(pki.directory))
        assert r.exit_code == EXIT_USAGE and words in r.output, r.output
        assert not crl_path(pki).exists()
    r = _run("pki", "revoke", "sub", "--ca", str(tmp_path / "none"))
    assert r.exit_code == EXIT_USAGE and "pki init" in r.output


def test_a_crl_of_another_ca_is_refused_and_init_force_drops_it(pki, tmp_path):
    revoke(pki, "sub")
    other, _ = init_pki(tmp_path / "other", participants=("pub",))
    crl_path(other).write_bytes(crl_path(pki).read_bytes())
    with pytest.raises(GovkitError, match="not signed by the current Identity CA"):
        load_crl(other)
    init_pki(pki.directory, force=True)          # new CAs: the old CRL means nothing
    assert not crl_path(pki).exists()
    assert "identity_ca.crl" not in pki.identities()
    assert revoked_participants(pki, ["sub"]) == {}


# ------------------------------------------------------------------ renew


def test_renew_keeps_the_key_and_moves_the_validity(tmp_path):
    pki, _ = init_pki(tmp_path / "pki", participants=("pub",), days=3650)
    key_before = pki.path("pub", ".key").read_bytes()
    old = pki.certificate("pub")
    r = _run("pki", "renew", "pub", "--ca", str(pki.directory), "--days", "800")
    assert r.exit_code == 0, r.output
    assert "note" not in r.output   # well within the Identity CA's life
    new = pki.certificate("pub")
    assert pki.path("pub", ".key").read_bytes() == key_before
    assert new.public_key() == old.public_key()
    assert new.serial_number != old.serial_number
    expected = dt.datetime.now(dt.UTC) + dt.timedelta(days=800)
    assert abs(new.not_valid_after_utc - expected) < dt.timedelta(minutes=5)
    assert new.subject == old.subject and new.issuer == old.issuer
    assert new.extensions.get_extension_for_class(x509.KeyUsage).value == \
        old.extensions.get_extension_for_class(x509.KeyUsage).value
    ok = subprocess.run(["openssl", "verify", "-x509_strict", "-CAfile", str(pki.identity_ca),
                         str(pki.path("pub"))], capture_output=True, text=True, timeout=30)
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_renew_refuses_a_revoked_certificate_and_cas(pki):
    revoke(pki, "sub")
    before = pki.path("sub").read_bytes()
    with pytest.raises(GovkitError, match="revoked, not renewed"):
        renew(pki, "sub")
    assert pki.path("sub").read_bytes() == before
    r = _run("pki", "renew", "identity_ca", "--ca", str(pki.directory))
    assert r.exit_code == EXIT_USAGE and "renewing a CA is not supported" in r.output


# ------------------------------------------------------------------ status


def test_status_of_a_fresh_pki_is_clean_and_lists_everything(pki, signed):
    r = _run("pki", "status", str(pki.directory), "--documents", str(signed))
    assert r.exit_code == 0, r.output
    for word in ("identity CA", "permissions CA", "participant", "governance", "grant",
                 "pub", "sub", "other"):
        assert word in r.output
    r = _run("pki", "status", str(pki.directory), "--documents", str(signed), "--json")
    doc = json.loads(r.output)
    assert doc["schema"] == "govkit.pki-status/1"
    assert_valid(doc, "pki-status")
    kinds = {i["kind"] for i in doc["items"]}
    assert {"identity CA", "permissions CA", "participant", "governance", "grant"} <= kinds
    grants = [i for i in doc["items"] if i["kind"] == "grant"]
    assert len(grants) == 3 and all(g["within_certificate_and_signer"] for g in grants)
    assert all(363 <= i["days_left"] <= 365 for i in doc["items"])


def test_status_warns_before_expiry(pki, signed):
    r = _run("pki", "status", str(pki.directory), "--documents", str(signed),
             "--warn-days", "400")
    assert r.exit_code == 1
    assert "expires on" in r.output and "within 400 days" in r.output
    later = pki_status(pki, [], now=dt.datetime.now(dt.UTC) + dt.timedelta(days=400))
    assert later.exit_code == 1
    assert all(any("expired on" in p for p in i.problems) for i in later.items)


def test_status_names_a_revoked_participant_still_granted(pki, signed):
    assert _run("pki", "revoke", "sub", "--ca", str(pki.directory)).exit_code == 0
    r = _run("pki", "status", str(pki.directory), "--documents", str(signed))
    assert r.exit_code == 1, r.output
    problems = [line for line in r.output.splitlines() if "revoked" in line]
    assert any("sub: revoked yet still granted by" in line for line in problems), r.output
    assert any("grants sub, whose certificate is revoked" in line for line in problems)
    assert not any(" pub:" in line or "other" in line for line in problems), problems
    doc = json.loads(_run("pki", "status", str(pki.directory), "--documents", str(signed),
                          "--json").output)
    assert_valid(doc, "pki-status")
    revoked = {i["name"] for i in doc["items"] if i["revoked"]}
    assert revoked == {"sub", "sub.p7s:sub"} and doc["exit_code"] == 1
    crl = [i for i in doc["items"] if i["kind"] == "CRL"]
    assert len(crl) == 1 and crl[0]["days_left"] >= 364


def test_status_of_a_revoked_participant_no_longer_granted_passes(pki, signed):
    revoke(pki, "sub")
    (signed / "permissions" / "sub.p7s").unlink()
    status = pki_status(pki, [])
    assert status.exit_code == 0
    assert [i.name for i in status.items if i.revoked] == ["sub"]


# ------------------------------------------------------------------ verify, lint


def test_verify_finds_a_grant_for_a_revoked_certificate(pki, signed):
    perms = signed / "permissions"
    assert _run("verify", str(perms / "sub.p7s"), "--ca", str(pki.directory)).exit_code == 0
    revoke(pki, "sub")
    r = _run("verify", str(perms / "sub.p7s"), str(perms / "pub.p7s"),
             str(signed / "governance" / "rtps_sign.p7s"), "--ca", str(pki.directory))
    assert r.exit_code == 1, r.output
    bad = [line for line in r.output.splitlines() if "revoked" in line]
    assert len(bad) == 1 and "sub.p7s" in bad[0] and "grant 'sub'" in bad[0], r.output
    assert f"{perms / 'pub.p7s'}: OK" in r.output
    # the Permissions CA certificate alone: no PKI, no CRL, only the signature is judged
    r = _run("verify", str(perms / "sub.p7s"), "--ca", str(pki.permissions_ca))
    assert r.exit_code == 0, r.output


def test_sign_refuses_a_document_granting_a_revoked_certificate(pki, signed):
    """Plain `govkit sign` re-signed build/permissions/sub.xml after `pki revoke sub`, and
    said nothing. It refuses it in one line (exit 1), removes the .p7s signed for it
    before the revocation (as generate does), keeps the .xml, and signs the rest."""
    perms = signed / "permissions"
    revoke(pki, "sub")
    before = (perms / "sub.xml").read_bytes()
    r = _run("sign", str(signed), "--ca", str(pki.directory))
    assert r.exit_code == EXIT_INVALID, r.output
    (line,) = [line for line in r.stderr.splitlines() if "sub" in line]
    assert line.startswith(f"{perms / 'sub.xml'}: not signed, and {perms / 'sub.p7s'} "
                           f"signed for it earlier removed: grant 'sub' is for a revoked "
                           f"certificate: certificate {pki.path('sub')} ("), line
    assert not (perms / "sub.p7s").exists() and (perms / "sub.xml").read_bytes() == before
    assert f"signed {perms / 'pub.p7s'}" in r.stdout
    assert f"signed {signed / 'governance' / 'rtps_sign.p7s'}" in r.stdout
    # the certificate renewed under a new key: the grant names a valid identity again
    assert _run("pki", "renew", "sub", "--new-key", "--ca", str(pki.directory)).exit_code == 0
    r = _run("sign", str(perms / "sub.xml"), "--ca", str(pki.directory))
    assert r.exit_code == 0 and (perms / "sub.p7s").exists(), r.output


def test_lint_with_the_pki_finds_the_revoked_grant(pki, signed):
    revoke(pki, "sub")
    r = _run("lint", str(signed / "permissions" / "sub.p7s"), "--ca", str(pki.directory))
    assert r.exit_code == 1 and "GK216" in r.output and "revoked on" in r.output, r.output
    r = _run("lint", str(signed / "permissions" / "pub.p7s"), "--ca", str(pki.directory))
    assert "GK216" not in r.output, r.output


# ------------------------------------------------------------------ renew, then use


def test_renewed_certificate_keeps_permissions_verifying(pki, signed):
    old_after = pki.certificate("pub").not_valid_after_utc
    renew(pki, "pub", days=700)   # cut at the Identity CA's expiry
    assert pki.certificate("pub").not_valid_after_utc >= old_after
    r = _run("verify", str(signed / "permissions" / "pub.p7s"), "--ca", str(pki.directory))
    assert r.exit_code == 0, r.output
    # the old grant's validity is now within a longer certificate: still fine
    status = pki_status(pki, [], warn_days=30)
    assert status.exit_code == 0


# ------------------------------------------------------------------ permissions validity


def _grant_dates(p7s: Path) -> set[tuple[str, str]]:
    from govkit.check.loaded import load_document
    model = load_document(p7s).model
    return {(g.not_before.text.strip(), g.not_after.text.strip()) for g in model.grants}


def test_generate_with_a_chosen_validity(pki, tmp_path):
    out = tmp_path / "chosen"
    r = _run("generate", "--profile", "rtps_sign", "--ca", str(pki.directory), "--out",
             str(out), "--sign", "--valid-from", "2027-01-01", "--valid-for", "30")
    assert r.exit_code == 0, r.output
    assert _grant_dates(out / "permissions" / "pub.p7s") == {
        ("2027-01-01T00:00:00Z", "2027-01-31T00:00:00Z")}
    r = _run("generate", "--profile", "rtps_sign", "--ca", str(pki.directory), "--out",
             str(out), "--valid-from", "next week")
    assert r.exit_code == EXIT_USAGE and "--valid-from 'next week': not a date" in r.output


@pytest.mark.parametrize("window", [
    ("--valid-for", "99999999999999999999"),                      # no timedelta holds it
    ("--valid-for", "3000000"),                                   # a timedelta, past 9999
    ("--valid-from", "9999-12-30T23:00:00-14:00", "--valid-for", "5"),
    ("--valid-from", "0001-01-01T00:00:00+14:00", "--valid-for", "1"),   # before year 1 UTC
])
def test_a_validity_outside_the_calendar_is_a_usage_error(pki, tmp_path, window):
    # Each of these was an OverflowError (exit 3), from generate and from sign --renew alike.
    for command in (["generate", "--profile", "rtps_sign", "--out", str(tmp_path / "b")],
                    ["sign", "--renew", str(tmp_path / "b")]):
        r = _run(*command, "--ca", str(pki.directory), *window)
        assert r.exit_code == EXIT_USAGE, r.output
        assert r.output.count("\n") == 1 and "the window must lie between" in r.output


def test_sign_renew_resigns_permissions_with_a_new_validity_and_no_key(pki, signed):
    keys = {p.name: p.read_bytes() for p in pki.directory.glob("*.key")}
    certs = {p.name: p.read_bytes() for p in pki.directory.glob("*.pem")}
    gov = (signed / "governance" / "rtps_sign.p7s").read_bytes()
    r = _run("sign", str(signed), "--ca", str(pki.directory), "--renew", "--valid-from",
             "2026-06-01T12:00:00", "--valid-for", "90")
    assert r.exit_code == 0, r.output
    assert r.output.count("signed ") == 3         # the three permissions, not governance
    for name in ("pub", "sub", "other"):
        p7s = signed / "permissions" / f"{name}.p7s"
        assert _grant_dates(p7s) == {("2026-06-01T12:00:00Z", "2026-08-30T12:00:00Z")}
        v = _run("verify", str(p7s), "--ca", str(pki.directory))
        assert v.exit_code == 0, v.output
    assert (signed / "governance" / "rtps_sign.p7s").read_bytes() == gov
    assert {p.name: p.read_bytes() for p in pki.directory.glob("*.key")} == keys
    assert {p.name: p.read_bytes() for p in pki.directory.glob("*.pem")} == certs
    r = _run("sign", str(signed), "--ca", str(pki.directory), "--valid-for", "9")
    assert r.exit_code == EXIT_USAGE and "need --renew" in r.output


def test_status_refuses_documents_that_are_not_there(pki, tmp_path):
    r = _run("pki", "status", str(pki.directory), "--documents", str(tmp_path / "nowhere"))
    assert r.exit_code == EXIT_USAGE and "no such file or directory" in r.output


# ------------------------------------------------------------------ bench


@needs_cyclone
def test_bench_with_a_revoked_participant_stops_before_measuring(pki, tmp_path):
    revoke(pki, "sub")
    r = subprocess.run([GOVKIT, "bench", "--profile", "none,rtps_sign", "--duration", "1",
                        "--ca", str(pki.directory), "--build", str(tmp_path / "build"),
                        "--out", str(tmp_path / "res")], capture_output=True, text=True,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == EXIT_USAGE, r.stdout + r.stderr
    line = r.stderr.strip().splitlines()[-1]
    assert "participant sub is revoked" in line and "nothing measured" in line, r.stderr
    assert not (tmp_path / "res").exists() and not (tmp_path / "build").exists()


def test_sign_renew_says_when_it_renews_a_grant_for_a_revoked_certificate(pki, signed):
    revoke(pki, "sub")
    r = _run("sign", str(signed / "permissions"), "--ca", str(pki.directory), "--renew")
    assert r.exit_code == 0, r.output
    warnings = [line for line in r.output.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "sub.p7s" in warnings[0] and "revoked" in warnings[0]


def test_a_key_left_without_its_certificate_is_certified_not_replaced(tmp_path):
    """Killed between the key and the certificate (issue 23): the rerun keeps the key and
    writes its certificate; `generate` can use the participant again."""
    from cryptography.hazmat.primitives import serialization

    from govkit.pki.issuance import init_pki as init
    pki, _ = init(tmp_path / "pki", participants=("pub", "sub"))
    key_before = (tmp_path / "pki" / "sub.key").read_bytes()
    (tmp_path / "pki" / "sub.pem").unlink()
    pki, written = init(tmp_path / "pki", participants=("pub", "sub"))
    assert written == [str(tmp_path / "pki" / "sub.pem")]
    assert (tmp_path / "pki" / "sub.key").read_bytes() == key_before
    cert = pki.certificate("sub")
    key = serialization.load_pem_private_key(key_before, None)
    assert cert.public_key().public_numbers() == key.public_key().public_numbers()
    assert cert.issuer == pki.certificate("identity_ca").subject
    # and the directory says to keep keys out of version control
    assert "*.key" in (tmp_path / "pki" / ".gitignore").read_text().splitlines()


@pytest.mark.parametrize("command", ["revoke", "renew"])
@pytest.mark.parametrize("name", ["../other/pub", "pub\nfake", "a b"])
def test_revoke_and_renew_take_participant_names_only(pki, tmp_path, command, name):
    """`pki renew --ca pki ../other/pub` rewrote other/pub.pem, a certificate outside the
    PKI directory (its CA was the same: a copy), and `pki revoke` put it on the CRL; a
    newline in the name split the error in two. A name is checked as every participant
    name is, before any file is touched."""
    other = tmp_path / "other"
    shutil.copytree(pki.directory, other)
    before = {p: p.read_bytes() for p in (*other.iterdir(), *pki.directory.iterdir())}
    r = _run("pki", command, "--ca", str(pki.directory), name)
    assert r.exit_code == EXIT_USAGE and "invalid participant name" in r.output, r.output
    assert r.output.count("\n") == 1
    assert {p: p.read_bytes() for p in (*other.iterdir(), *pki.directory.iterdir())} == before
    assert not crl_path(pki).exists()


# ------------------------------------------------------------------ hostile input (issue 37, 15)


def _one_line_error(r, *words):
    assert r.exit_code == EXIT_USAGE, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("govkit: "), r.output
    assert all(w in lines[0] for w in words), r.output


def test_days_beyond_the_calendar_are_one_line_errors_not_crashes(pki, signed):
    before = pki.directory.joinpath("sub.pem").read_bytes()
    _one_line_error(_run("pki", "revoke", "sub", "--ca", str(pki.directory), "--crl-days",
                         "3000000"), "--crl-days", "between 1 and")
    assert not crl_path(pki).exists() and pki.path("sub").read_bytes() == before
    r = _run("pki", "status", str(pki.directory), "--documents", str(signed), "--warn-days",
             "1000000000")
    assert r.exit_code == 1, r.output   # everything expires within a billion days
    assert r.output.strip().splitlines()[-1].endswith(
        "expiring within 1000000000 days, not yet valid, revoked yet granted, outliving its "
        "CA, or a private key not kept 0600)")


def test_status_json_with_one_corrupt_certificate_reports_every_other_one(pki, signed):
    pki.path("other").write_bytes(b"-----BEGIN CERTIFICATE-----\nnot base64\n")
    r = _run("pki", "status", str(pki.directory), "--documents", str(signed), "--json")
    assert r.exit_code == 1, r.output
    doc = json.loads(r.output)
    assert_valid(doc, "pki-status")
    rows = {i["name"]: i for i in doc["items"]}
    assert {"identity_ca", "permissions_ca", "pub", "sub", "other", "pub.p7s:pub",
            "sub.p7s:sub", "rtps_sign.p7s"} <= set(rows)
    assert rows["other"]["problems"] == ["cannot read: not a PEM certificate"]
    assert not rows["pub"]["problems"] and rows["pub"]["days_left"] >= 363


def test_one_unreadable_certificate_does_not_make_verify_refuse_the_batch(pki, signed):
    revoke(pki, "sub")
    pki.path("other").write_bytes(b"garbage")
    perms = signed / "permissions"
    r = _run("verify", "--ca", str(pki.directory), str(perms / "pub.p7s"),
             str(perms / "sub.p7s"), str(signed / "governance" / "rtps_sign.p7s"))
    assert r.exit_code == 1, r.output   # sub's grant is refused; nothing else
    assert f"{perms / 'pub.p7s'}: OK" in r.output
    assert "rtps_sign.p7s: OK" in r.output and "grant 'sub' is for a revoked" in r.output
    assert f"govkit: warning: {pki.path('other')}: not a PEM certificate; whether it is " \
           f"revoked is not known" in r.output


def test_verify_of_a_fleet_finds_revoked_grants_on_its_fast_path_as_in_full(tmp_path):
    """verify reads the grants of a document of a proven shape on its fast path: the same
    revoked grants as the full path, which reads every document."""
    from govkit.smime.status import add_revocation_problems
    from govkit.smime.verify_batch import verify_files
    names = [f"m{i:02d}" for i in range(12)]
    pki, _ = init_pki(tmp_path / "pki", participants=names)
    r = _run("generate", "--ca", str(pki.directory), "--out", str(tmp_path / "b"), "--sign",
             "--profile", "rtps_sign")
    assert r.exit_code == 0, r.output
    revoke(pki, "m03")
    revoke(pki, "m07")
    files = sorted((tmp_path / "b" / "permissions").glob("*.p7s"))
    ca = pki.certificate("permissions_ca")
    fast = verify_files(files, ca, processes=1)
    full = verify_files(files, ca, processes=1, paranoid=True)
    assert sum(v.grants is not None for v in fast) >= 10 and all(v.grants is None
                                                                 for v in full)
    for results in (fast, full):
        assert add_revocation_problems(results, pki.directory) == []
    assert [(v.ok, v.problems) for v in fast] == [(v.ok, v.problems) for v in full]
    assert [Path(v.file).stem for v in fast if not v.ok] == ["m03", "m07"]


# ------------------------------------------------------------------ renew, re-key (issue 37, 5)


def test_renew_past_the_identity_ca_is_cut_at_its_expiry_and_says_so(tmp_path, monkeypatch):
    pki, _ = init_pki(tmp_path / "pki", participants=("pub",), days=100)
    ca_end = pki.certificate("identity_ca").not_valid_after_utc
    monkeypatch.chdir(tmp_path)
    r = _run("pki", "renew", "pub", "--days", "730")
    assert r.exit_code == 0, r.output
    new = pki.certificate("pub")
    assert new.not_valid_after_utc == ca_end
    assert f"valid to the Identity CA's own expiry, {ca_end:%Y-%m-%d %H:%M} UTC, not for " \
           f"730 days" in r.output
    chain = subprocess.run(["openssl", "verify", "-CAfile", str(pki.identity_ca),
                            str(pki.path("pub"))], capture_output=True, text=True, timeout=30)
    assert chain.returncode == 0, chain.stdout + chain.stderr
    # under an expired Identity CA nothing is issued
    later = dt.datetime.now(dt.UTC) + dt.timedelta(days=101)
    with pytest.raises(GovkitError, match="the Identity CA expired on"):
        renew(pki, "pub", now=later)
    assert pki.certificate("pub") == new


def _follow_up(output: str) -> list[str]:
    import re
    import shlex
    command = re.search(r"`(govkit generate [^`]*)`", output)[1]
    return shlex.split(command)[1:]


@pytest.mark.parametrize("ca", ["pki", "my pki"])
def test_the_command_renew_prints_next_works(tmp_path, monkeypatch, ca):
    monkeypatch.chdir(tmp_path)
    init_pki(tmp_path / ca, participants=("pub", "sub"))
    assert _run("generate", "--ca", ca, "-p", "rtps_sign", "--sign").exit_code == 0
    r = _run("pki", "renew", "pub", "--ca", ca)
    assert r.exit_code == 0, r.output
    again = _run(*_follow_up(r.output))
    assert again.exit_code == 0, again.output
    assert f"wrote {Path('build/permissions/pub.p7s')}" in again.output
    assert _run("verify", "--ca", ca, "build/permissions/pub.p7s").exit_code == 0


def test_a_revoked_participant_is_re_keyed_and_its_old_certificate_stays_revoked(pki, tmp_path,
                                                                                 monkeypatch):
    monkeypatch.chdir(tmp_path)
    ca = str(pki.directory)
    r = _run("pki", "renew", "sub", "--ca", ca, "--new-key")
    assert r.exit_code == EXIT_USAGE and "sub is not revoked" in r.output, r.output
    old_key, old = pki.path("sub", ".key").read_bytes(), pki.certificate("sub")
    revoke(pki, "sub", reason="keyCompromise")
    r = _run("pki", "renew", "sub", "--ca", ca)
    assert r.exit_code == EXIT_USAGE and "--new-key" in r.output, r.output
    r = _run("pki", "renew", "sub", "--ca", ca, "--new-key")
    assert r.exit_code == 0, r.output
    new = pki.certificate("sub")
    assert new.public_key() != old.public_key() and new.subject == old.subject
    assert pki.key_pair("sub")[0] == new
    retired = pki.directory / "retired"
    assert (retired / f"sub.{old.serial_number:x}.key").read_bytes() == old_key
    assert x509.load_pem_x509_certificate(
        (retired / f"sub.{old.serial_number:x}.pem").read_bytes()) == old
    assert stat.S_IMODE(pki.path("sub", ".key").stat().st_mode) == 0o600
    assert _openssl_crl_check(pki, "sub").returncode == 0       # the new one: not revoked
    assert load_crl(pki).revocation(old) is not None             # the old one: still is
    assert pki.participants() == ["other", "pub", "sub"]
    again = _run(*_follow_up(r.output))
    assert again.exit_code == 0, again.output
    r = _run("verify", "--ca", ca, "build/permissions/sub.p7s")
    assert r.exit_code == 0, r.output
