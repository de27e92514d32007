"""The test PKI: separate CAs, Cyclone-compatible certificates, safe key handling, CLI."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from typer.testing import CliRunner

from govkit.cli.main import app
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.fsutil import write_atomic
from govkit.pki.issuance import init_pki
from govkit.pki.lock import LOCK_NAME
from govkit.pki.testpki import CLOCK_SKEW, TestPKI, max_days

CA_STEMS = ("identity_ca", "permissions_ca")
FORBIDDEN_IN_VALUES = ",/|+"  # Cyclone DDS 0.10 splits subject names on these


@pytest.fixture(scope="module")
def pki(pki_dir) -> TestPKI:
    return TestPKI(pki_dir)


def _openssl_verify(ca: Path, cert: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["openssl", "verify", "-x509_strict", "-CAfile", str(ca), str(cert)],
                          capture_output=True, text=True, timeout=30)


def _issued_by(cert: x509.Certificate, issuer: x509.Certificate) -> bool:
    try:
        cert.verify_directly_issued_by(issuer)
        return True
    except (ValueError, TypeError, InvalidSignature):
        return False


def _files(directory: Path) -> dict[str, bytes]:
    """Every file but the write lock (empty, and made by any command that may write)."""
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.name != LOCK_NAME}


# ------------------------------------------------------------------ the CAs


def test_identity_and_permissions_cas_are_separate(pki):
    id_ca, perm_ca = pki.certificate("identity_ca"), pki.certificate("permissions_ca")
    assert id_ca.subject != perm_ca.subject
    assert id_ca.public_key() != perm_ca.public_key()
    assert pki.identity_ca.read_bytes() != pki.permissions_ca.read_bytes()
    assert pki.path("identity_ca", ".key").read_bytes() != pki.permissions_ca_key.read_bytes()
    assert not pki.single_ca
    assert "Identity" in id_ca.subject.rfc4514_string()
    assert "Permissions" in perm_ca.subject.rfc4514_string()


@pytest.mark.parametrize("stem", CA_STEMS)
def test_cas_are_self_signed(pki, stem):
    ca = pki.certificate(stem)
    assert ca.issuer == ca.subject
    ca.verify_directly_issued_by(ca)  # raises if not self-signed
    result = _openssl_verify(pki.path(stem), pki.path(stem))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("stem", CA_STEMS)
def test_ca_extensions(pki, stem):
    ca = pki.certificate(stem)
    assert ca.version == x509.Version.v3
    bc = ca.extensions.get_extension_for_class(x509.BasicConstraints)
    assert bc.critical
    assert bc.value.ca is True
    ku = ca.extensions.get_extension_for_class(x509.KeyUsage).value
    assert ku.key_cert_sign and ku.crl_sign
    # Cyclone DDS 0.10 refuses an S/MIME signer (the Permissions CA) without digitalSignature.
    assert ku.digital_signature
    ski = ca.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    aki = ca.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value
    assert ski.digest == x509.SubjectKeyIdentifier.from_public_key(ca.public_key()).digest
    assert aki.key_identifier == ski.digest


# ------------------------------------------------------------------ participants


@pytest.mark.parametrize("name", ["pub", "sub"])
def test_participants_issued_by_identity_ca_only(pki, name):
    leaf = pki.certificate(name)
    id_ca, perm_ca = pki.certificate("identity_ca"), pki.certificate("permissions_ca")
    assert leaf.issuer == id_ca.subject
    leaf.verify_directly_issued_by(id_ca)
    ok = _openssl_verify(pki.identity_ca, pki.path(name))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f"{pki.path(name)}: OK" in ok.stdout
    # The Permissions CA did not issue identities.
    assert not _issued_by(leaf, perm_ca)
    refused = _openssl_verify(pki.permissions_ca, pki.path(name))
    assert refused.returncode != 0


@pytest.mark.parametrize("name", ["pub", "sub"])
def test_participant_extensions(pki, name):
    leaf = pki.certificate(name)
    assert leaf.version == x509.Version.v3
    bc = leaf.extensions.get_extension_for_class(x509.BasicConstraints)
    assert bc.critical and bc.value.ca is False
    ku = leaf.extensions.get_extension_for_class(x509.KeyUsage).value
    assert ku.digital_signature
    assert not ku.key_cert_sign and not ku.crl_sign
    aki = leaf.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value
    id_ski = pki.certificate("identity_ca").extensions.get_extension_for_class(
        x509.SubjectKeyIdentifier).value
    assert aki.key_identifier == id_ski.digest
    leaf.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)  # present
    assert leaf.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value == name


def test_private_keys_match_certificates(pki):
    for stem in (*CA_STEMS, *pki.participants()):
        assert pki.private_key(stem).public_key() == pki.certificate(stem).public_key()


def test_not_before_is_backdated(pki):
    now = dt.datetime.now(dt.UTC)
    for stem in (*CA_STEMS, "pub", "sub"):
        cert = pki.certificate(stem)
        # backdated for clock skew: clearly before the time the PKI was made
        assert cert.not_valid_before_utc < now - dt.timedelta(minutes=30)
        assert cert.not_valid_after_utc > now + dt.timedelta(days=300)


@pytest.mark.parametrize("days", [1, 10])
def test_days_honoured(tmp_path, days):
    now = dt.datetime(2030, 6, 1, 12, 0, 0, tzinfo=dt.UTC)
    pki, _ = init_pki(tmp_path, participants=["p"], days=days, now=now)
    for stem in (*CA_STEMS, "p"):
        cert = pki.certificate(stem)
        assert cert.not_valid_after_utc == now + dt.timedelta(days=days)
        assert cert.not_valid_before_utc < now


def test_days_below_one_refused(tmp_path):
    with pytest.raises(GovkitError, match="days"):
        init_pki(tmp_path / "p", days=0)
    assert not (tmp_path / "p").exists()


def test_subject_names_have_no_cyclone_separators(pki):
    for stem in (*CA_STEMS, *pki.participants()):
        cert = pki.certificate(stem)
        for name in (cert.subject, cert.issuer):
            for attr in name:
                assert not set(attr.value) & set(FORBIDDEN_IN_VALUES), (stem, attr)
                assert attr.value == attr.value.strip()


# ------------------------------------------------------------------ key types


def test_default_key_type_is_ec_p256(pki):
    for stem in (*CA_STEMS, "pub", "sub"):
        key = pki.certificate(stem).public_key()
        assert isinstance(key, ec.EllipticCurvePublicKey)
        assert key.curve.name == "secp256r1"


def test_rsa_2048(tmp_path):
    pki, _ = init_pki(tmp_path, participants=["p"], key_type="rsa-2048")
    for stem in (*CA_STEMS, "p"):
        key = pki.certificate(stem).public_key()
        assert isinstance(key, rsa.RSAPublicKey)
        assert key.key_size == 2048
    ku = pki.certificate("p").extensions.get_extension_for_class(x509.KeyUsage).value
    assert ku.digital_signature
    result = _openssl_verify(pki.identity_ca, pki.path("p"))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("key_type", ["dsa", "ec-p384", "rsa-4096", ""])
def test_unknown_key_type_refused(tmp_path, key_type):
    with pytest.raises(GovkitError) as info:
        init_pki(tmp_path / "p", key_type=key_type)
    assert "ec-p256" in str(info.value) and "rsa-2048" in str(info.value)
    assert not (tmp_path / "p").exists()


# ------------------------------------------------------------------ files on disk


def test_file_modes(pki):
    for stem in (*CA_STEMS, "pub", "sub"):
        assert stat.S_IMODE(pki.path(stem, ".key").stat().st_mode) == 0o600, stem
        cert_mode = stat.S_IMODE(pki.path(stem).stat().st_mode)
        assert cert_mode & 0o444 == 0o444, (stem, oct(cert_mode))  # readable by everyone
        assert cert_mode & 0o022 == 0, (stem, oct(cert_mode))


def test_file_layout_and_participants(pki):
    assert sorted(p.name for p in pki.directory.iterdir()) == sorted(
        [".gitignore", LOCK_NAME, "manifest", "manifest-key",
         *(f"{s}{x}" for s in (*CA_STEMS, "pub", "sub") for x in (".pem", ".key"))])
    assert pki.participants() == ["pub", "sub"]


def test_participants_lists_only_complete_identities(tmp_path):
    pki, _ = init_pki(tmp_path, participants=["zed", "alpha"])
    assert pki.participants() == ["alpha", "zed"]
    shutil.copy(tmp_path / "zed.pem", tmp_path / "stray.pem")
    assert pki.participants() == ["alpha", "zed"]  # no key: not an identity
    init_pki(tmp_path, participants=["beta"])
    assert pki.participants() == ["alpha", "beta", "zed"]


def test_an_empty_directory_is_not_a_pki(tmp_path):
    assert not TestPKI(tmp_path).exists()
    init_pki(tmp_path, participants=[])
    assert TestPKI(tmp_path).exists()


def test_no_temp_files_left(tmp_path):
    init_pki(tmp_path, participants=["a", "b"])
    init_pki(tmp_path, participants=["a", "c"])
    init_pki(tmp_path, participants=["a"], force=True)
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".")
                 and p.name not in (".gitignore", LOCK_NAME) or p.name.endswith(".tmp")]
    assert leftovers == []


def test_write_atomic_without_overwrite_keeps_old_file_and_no_temp(tmp_path):
    target = tmp_path / "x.key"
    write_atomic(target, b"old", mode=0o600, overwrite=False)
    with pytest.raises(FileExistsError):
        write_atomic(target, b"new", mode=0o600, overwrite=False)
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.key"]
    write_atomic(target, "newer", overwrite=True)
    assert target.read_bytes() == b"newer"
    assert [p.name for p in tmp_path.iterdir()] == ["x.key"]


# ------------------------------------------------------------------ never clobber keys


def test_second_init_changes_nothing(tmp_path):
    _, created = init_pki(tmp_path)
    assert sorted(Path(f).name for f in created) == sorted(
        f"{s}{x}" for s in (*CA_STEMS, "pub", "sub") for x in (".pem", ".key"))
    before = _files(tmp_path)
    _, created = init_pki(tmp_path)
    assert created == []
    assert _files(tmp_path) == before


def test_extending_keeps_existing_identities(tmp_path):
    init_pki(tmp_path)
    before = _files(tmp_path)
    pki, created = init_pki(tmp_path, participants=["pub", "third"])
    assert sorted(Path(f).name for f in created) == ["third.key", "third.pem"]
    after = _files(tmp_path)
    assert {k: after[k] for k in before if k != "manifest"} == {
        k: v for k, v in before.items() if k != "manifest"}
    pki.certificate("third").verify_directly_issued_by(pki.certificate("identity_ca"))
    assert b'"third": {"sha256": ' in after["manifest"]


def test_force_replaces_keys(tmp_path):
    init_pki(tmp_path)
    before = _files(tmp_path)
    pki, created = init_pki(tmp_path, force=True)
    after = _files(tmp_path)
    assert len(created) == 8
    for name in before:
        if name not in (".gitignore", "manifest-key"):   # what init never rewrites
            assert after[name] != before[name], name
    for name in ("pub", "sub"):
        pki.certificate(name).verify_directly_issued_by(pki.certificate("identity_ca"))
    for stem in (*CA_STEMS, "pub", "sub"):
        assert stat.S_IMODE(pki.path(stem, ".key").stat().st_mode) == 0o600


@pytest.mark.parametrize("stem", CA_STEMS)
def test_incomplete_pki_with_a_ca_key_refuses(tmp_path, pki_dir, stem):
    shutil.copy(pki_dir / f"{stem}.key", tmp_path / f"{stem}.key")
    before = _files(tmp_path)
    with pytest.raises(GovkitError, match="incomplete"):
        init_pki(tmp_path)
    assert _files(tmp_path) == before


def test_incomplete_pki_with_only_participant_keys_is_not_silently_mixed(tmp_path, pki_dir):
    # A directory holding pub.pem/pub.key from some earlier PKI but no CAs.
    for suffix in (".pem", ".key"):
        shutil.copy(pki_dir / f"pub{suffix}", tmp_path / f"pub{suffix}")
    try:
        pki, _ = init_pki(tmp_path, participants=["pub"])
    except GovkitError:
        return  # refusing (like for a stray CA key) is fine
    # Otherwise every participant must chain to the identity CA that is now on disk.
    assert _issued_by(pki.certificate("pub"), pki.certificate("identity_ca"))


# ------------------------------------------------------------------ names


@pytest.mark.parametrize("name", [
    "a,b", "a/b", "a|b", "a+b", "a b", " pub", "pub ", "", "-pub", ".pub", "_pub",
    "identity_ca", "permissions_ca", "x" * 64, "pub=1", "pub\\", "pübl",
])
def test_invalid_participant_names_refused(tmp_path, name):
    with pytest.raises(GovkitError, match="invalid participant name"):
        init_pki(tmp_path / "p", participants=["ok", name])
    assert not (tmp_path / "p").exists()


def test_participant_name_with_trailing_newline_refused(tmp_path):
    with pytest.raises(GovkitError, match="invalid participant name"):
        init_pki(tmp_path / "p", participants=["pub\n"])


def test_valid_participant_names(tmp_path):
    names = ["a", "A9", "node-1.pub_2", "x" * 63]
    pki, _ = init_pki(tmp_path, participants=names)
    assert pki.participants() == sorted(names)


# ------------------------------------------------------------------ single CA


def test_single_ca(tmp_path):
    pki, created = init_pki(tmp_path, participants=["p"], single_ca=True)
    assert pki.identity_ca.read_bytes() == pki.permissions_ca.read_bytes()
    assert pki.path("identity_ca", ".key").read_bytes() == pki.permissions_ca_key.read_bytes()
    assert pki.single_ca
    pki.certificate("p").verify_directly_issued_by(pki.certificate("permissions_ca"))
    assert len(created) == 6
    # reusing it is fine; asking a separate-CA directory for single-CA is not
    assert init_pki(tmp_path, participants=["p"], single_ca=True)[1] == []


def test_single_ca_refused_on_separate_ca_pki(tmp_path):
    init_pki(tmp_path)
    before = _files(tmp_path)
    with pytest.raises(GovkitError, match="separate"):
        init_pki(tmp_path, single_ca=True)
    assert _files(tmp_path) == before


# ------------------------------------------------------------------ CLI


def test_cli_pki_init(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    result = runner.invoke(app, ["pki", "init", "mypki", "--participant", "a",
                                 "--participant", "b"])
    assert result.exit_code == 0, result.output
    expected = [f"wrote {os.path.join('mypki', s + x)}"
                for s in (*CA_STEMS, "a", "b") for x in (".pem", ".key")]
    assert result.stdout.splitlines() == expected
    pki = TestPKI(tmp_path / "mypki")
    assert pki.participants() == ["a", "b"]
    assert not pki.single_ca
    before = _files(tmp_path / "mypki")

    again = runner.invoke(app, ["pki", "init", "mypki", "--participant", "a",
                                "--participant", "b"])
    assert again.exit_code == 0, again.output
    assert "already complete" in again.stdout and "nothing written" in again.stdout
    assert "wrote" not in again.stdout
    assert _files(tmp_path / "mypki") == before
    assert "Traceback" not in result.output + again.output


def test_cli_pki_init_days_key_type_and_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    result = runner.invoke(app, ["pki", "init", "r", "--key-type", "rsa-2048", "--days", "3",
                                 "--participant", "p"])
    assert result.exit_code == 0, result.output
    cert = TestPKI(tmp_path / "r").certificate("p")
    assert isinstance(cert.public_key(), rsa.RSAPublicKey)
    validity = cert.not_valid_after_utc - cert.not_valid_before_utc
    assert dt.timedelta(days=3) <= validity <= dt.timedelta(days=3) + CLOCK_SKEW

    for args in (["--key-type", "dsa"], ["--participant", "a/b"], ["--days", "0"]):
        bad = runner.invoke(app, ["pki", "init", "bad", *args])
        assert bad.exit_code == EXIT_USAGE, (args, bad.output)
        assert bad.stderr.startswith("govkit: ") and len(bad.stderr.splitlines()) == 1, args
        assert "Traceback" not in bad.output
        assert not (tmp_path / "bad").exists()

    single = runner.invoke(app, ["pki", "init", "s", "--single-ca"])
    assert single.exit_code == 0, single.output
    assert TestPKI(tmp_path / "s").single_ca


# ------------------------------------------------------------------ one consistent PKI


def test_force_reissues_every_participant_not_only_the_named_ones(tmp_path):
    init_pki(tmp_path, participants=["pub", "sub", "extra"])
    before = _files(tmp_path)
    pki, created = init_pki(tmp_path, participants=["pub"], force=True)
    names = {Path(f).name for f in created}
    assert {"extra.pem", "extra.key", "sub.pem", "sub.key", "pub.pem", "pub.key"} <= names
    ca = pki.certificate("identity_ca")
    for name in ("pub", "sub", "extra"):
        pki.certificate(name).verify_directly_issued_by(ca)
        assert _files(tmp_path)[f"{name}.key"] != before[f"{name}.key"]
    assert pki.stale_participants() == []
    assert pki.participants() == ["extra", "pub", "sub"]


def test_participants_from_an_earlier_pki_are_stale(tmp_path, pki_dir):
    pki, _ = init_pki(tmp_path, participants=["pub"])
    for suffix in (".pem", ".key"):  # an identity issued by another Identity CA
        shutil.copy(pki_dir / f"sub{suffix}", tmp_path / f"old{suffix}")
    assert pki.identities() == ["old", "pub"]
    assert pki.stale_participants() == ["old"]
    assert pki.participants() == ["pub"]


def test_garbage_in_a_pki_file_is_a_clean_error(tmp_path):
    init_pki(tmp_path, participants=["pub"])
    (tmp_path / "identity_ca.key").write_text("not a key\n")
    with pytest.raises(GovkitError, match="identity_ca.key: not an unencrypted PEM private key"):
        init_pki(tmp_path, participants=["pub", "new"])
    (tmp_path / "identity_ca.pem").write_bytes(b"\x00" * 10)
    with pytest.raises(GovkitError, match="identity_ca.pem: not a PEM certificate") as info:
        TestPKI(tmp_path).certificate("identity_ca")
    assert info.value.exit_code == EXIT_USAGE


def test_mismatched_ca_key_is_refused_before_issuing(tmp_path, pki_dir):
    init_pki(tmp_path, participants=["pub"])
    shutil.copy(pki_dir / "identity_ca.key", tmp_path / "identity_ca.key")
    with pytest.raises(GovkitError, match="does not belong"):
        init_pki(tmp_path, participants=["pub", "new"])
    assert not (tmp_path / "new.key").exists()


@pytest.mark.parametrize("days", [0, -5, 10**9, 10**30])
def test_days_out_of_range_refused(tmp_path, days):
    with pytest.raises(GovkitError, match="--days must be between 1 and"):
        init_pki(tmp_path / "p", days=days)
    assert not (tmp_path / "p").exists()


def test_days_up_to_the_last_valid_time(tmp_path):
    now = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    days = max_days(now)
    pki, _ = init_pki(tmp_path, participants=[], days=days, now=now)
    assert pki.certificate("identity_ca").not_valid_after_utc.year == 9999


# ------------------------------------------------------------------ ROS 2 enclave paths


def test_an_enclave_path_is_the_cn_and_its_files_are_named_by_its_stem(tmp_path):
    pki, created = init_pki(tmp_path, participants=["/talker_listener/talker", "pub"])
    assert pki.participants() == ["+talker_listener+talker", "pub"]
    assert str(tmp_path / "+talker_listener+talker.key") in created
    cert = pki.certificate("+talker_listener+talker")
    assert cert.subject.rfc4514_string() == "O=govkit test PKI,CN=/talker_listener/talker"
    assert _openssl_verify(pki.identity_ca, pki.path("+talker_listener+talker")).returncode == 0
    # --force reissues it under the same CN (the stem says which participant it is)
    init_pki(tmp_path, participants=[], force=True)
    again = pki.certificate("+talker_listener+talker")
    assert again.subject == cert.subject and again != cert


def test_names_compare_an_enclave_cn_as_each_vendor_does(tmp_path):
    from govkit.pki.names import cyclone_accepts, fastdds_accepts
    pki, _ = init_pki(tmp_path, participants=["/talker_listener/talker"])
    cert = pki.certificate("+talker_listener+talker")
    subject = "O=govkit test PKI,CN=/talker_listener/talker"
    assert cyclone_accepts(subject, cert) and fastdds_accepts(subject, cert)
    # Cyclone 0.10 looks the pieces between '/' up by name, in no order: a grant for the
    # enclave /talker/talker_listener matches this certificate too; Fast DDS does not.
    swapped = "O=govkit test PKI,CN=/talker/talker_listener"
    assert cyclone_accepts(swapped, cert) and not fastdds_accepts(swapped, cert)
    assert not cyclone_accepts("O=govkit test PKI,CN=/talker_listener", cert)


def test_cli_pki_init_with_enclave_paths(tmp_path):
    runner = CliRunner()
    ok = runner.invoke(app, ["pki", "init", str(tmp_path / "p"), "--participant", "/ns/node"])
    assert ok.exit_code == 0, ok.output
    assert f"wrote {tmp_path / 'p' / '+ns+node.key'}" in ok.stdout
    bad = runner.invoke(app, ["pki", "init", str(tmp_path / "q"), "--participant", "/ns/2node"])
    assert bad.exit_code == EXIT_USAGE
    assert bad.output.startswith("govkit: invalid enclave path '/ns/2node': a ROS 2 enclave")
    assert not (tmp_path / "q").exists()
    twice = runner.invoke(app, ["pki", "init", str(tmp_path / "r"), "--participant", "/ns/node",
                                "--participant", "+ns+node"])
    assert twice.exit_code == EXIT_USAGE
    assert "participant /ns/node is named twice" in twice.output


def test_a_rerun_over_participants_of_an_earlier_ca_says_the_pki_is_not_complete(tmp_path):
    """`pki init --force` killed after the new CAs were written and before the participants
    were leaves them certified by the old Identity CA. The rerun said 'PKI already
    complete; nothing written' above one warning line per participant (thousands): now it
    says the PKI is not complete, names the first few and counts the rest, and --force
    (which the warnings advise) repairs it."""
    from govkit.pki.participants import numbered_participants
    pki, _ = init_pki(tmp_path / "pki", numbered_participants(12, "p"))
    other, _ = init_pki(tmp_path / "other", ["x"])
    for suffix in (".pem", ".key"):         # the state a kill between the two steps leaves
        shutil.copy(other.path("identity_ca", suffix), pki.path("identity_ca", suffix))
    r = CliRunner().invoke(app, ["pki", "init", str(pki.directory), "--count", "12"])
    assert r.exit_code == 0, r.output
    assert "already complete" not in r.output
    assert "not complete: 12 participant(s) hold certificates of an earlier Identity CA" \
        in r.output
    warnings = [x for x in r.output.splitlines() if x.startswith("govkit: warning:")]
    assert len(warnings) == 4 and "… and 9 more participant(s)" in warnings[-1]
    assert all("--force" in w for w in warnings)
    r = CliRunner().invoke(app, ["pki", "init", str(pki.directory), "--force"])
    assert r.exit_code == 0 and pki.stale_participants() == []
    assert {f"p{i:02d}" for i in range(12)} <= set(pki.identities())


def test_the_grant_prefilter_never_differs_from_the_three_readings(tmp_path):
    """names.certificate_grants passes over a subject without parsing it only where every
    reading (DN equality, Cyclone's, Fast DDS's) would say it names another certificate:
    on a few thousand variants of the certificate's own subject and of others."""
    import itertools
    import random

    from govkit.pki.names import certificate_grants, grants_certificate, openssl_rfc2253
    from govkit.pki.participants import Participant
    pki, _ = init_pki(tmp_path, participants=[
        Participant("Robot-7", "Acme Corp", "Unit  A", "DE"), Participant("/ns/node"), "p1"])
    rng = random.Random(37)
    for name in ("Robot-7", "+ns+node", "p1"):
        cert = pki.certificate(name)
        base = [openssl_rfc2253(cert), cert.subject.rfc4514_string(),
                "/" + "/".join(reversed(openssl_rfc2253(cert).split(","))), "CN=p1",
                "CN=Robot-7", "CN=/ns/node", "CN=robot-7,O=acme corp,OU=unit a,C=de"]
        variants = set(base)
        for s in base:
            for _ in range(300):
                t = list(s)
                for _ in range(rng.randint(1, 3)):
                    at = rng.randrange(len(t) + 1)
                    t.insert(at, rng.choice([" ", "  ", "\\", '"', "\\52", ",", "+", "/",
                                             "=", "O", "x", "\u00a0", "\u212a"]))
                variants.add("".join(t))
            variants.update({s.upper(), s.lower(), s.replace(",", " , "),
                             s.replace("=", " = ")})
        variants.update(",".join(p) for p in itertools.permutations(base[0].split(",")))
        grants = certificate_grants(cert)
        for subject in variants:
            assert grants(subject) == grants_certificate(subject, cert), (name, subject)
