"""Writes to a test PKI that must not lose anything: revocations at the same moment (real
processes, issue 37 item 1), and a CRL that stays readable by the govkit that wrote it,
however many participants are revoked (item 2)."""

from __future__ import annotations

import multiprocessing
import re
import shutil

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from helpers.cli import govkit

from govkit.common import limits
from govkit.common.errors import GovkitError
from govkit.pki import revocation
from govkit.pki.issuance import init_pki
from govkit.pki.revocation import crl_path, load_crl, revoke, revoke_all
from govkit.pki.testpki import TestPKI


def _revoke_when_both_are_ready(barrier, directory, name, results) -> None:
    barrier.wait(timeout=60)
    try:
        line, new = revoke(TestPKI(directory), name)
        results.put((name, line, new))
    except BaseException as e:  # reported, so the test says what went wrong
        results.put((name, repr(e), None))


def test_two_revocations_at_once_both_land_in_crls_numbered_one_after_the_other(tmp_path):
    """Two processes revoke two participants at the same moment, 50 times: both serials
    are on the final CRL every time, and the two CRLs written are numbered 1 and 2."""
    base, _ = init_pki(tmp_path / "base", participants=("a", "b", "c"))
    serials = {n: base.certificate(n).serial_number for n in ("a", "b")}
    ctx = multiprocessing.get_context("fork")
    for attempt in range(50):
        directory = tmp_path / f"try{attempt}"
        shutil.copytree(base.directory, directory)
        barrier, results = ctx.Barrier(2), ctx.Queue()
        procs = [ctx.Process(target=_revoke_when_both_are_ready,
                             args=(barrier, directory, name, results)) for name in ("a", "b")]
        for p in procs:
            p.start()
        said = [results.get(timeout=120) for _ in procs]
        for p in procs:
            p.join(timeout=60)
            assert p.exitcode == 0
        assert all(new is True for _, _, new in said), said
        numbers = sorted(int(re.search(r"\(number (\d+),", line)[1]) for _, line, _ in said)
        assert numbers == [1, 2], (attempt, said)
        crl = load_crl(TestPKI(directory))
        assert {e.serial for e in crl.entries()} == set(serials.values()), attempt
        assert crl.number == 2


# ------------------------------------------------------------------ a CRL govkit reads back


def test_the_largest_crl_entry_govkit_writes_fits_the_derived_limit():
    """CRL_ENTRY_DER_BYTES is the largest entry `revoke` writes: a 20-octet serial (the
    most RFC 5280 allows and cryptography issues), a GeneralizedTime, a reason."""
    import datetime as dt
    entry = (x509.RevokedCertificateBuilder().serial_number(2 ** 159 - 1)
             .revocation_date(dt.datetime(2999, 12, 31, tzinfo=dt.UTC))
             .add_extension(x509.CRLReason(x509.ReasonFlags.privilege_withdrawn),
                            critical=False).build())
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "x")])
    empty, one = (x509.CertificateRevocationListBuilder(
        issuer_name=name, last_update=dt.datetime(2000, 1, 1), next_update=dt.datetime(
            2999, 1, 1), revoked_certificates=entries).sign(key, hashes.SHA256())
        for entries in ([], [entry]))
    der = [c.public_bytes(serialization.Encoding.DER) for c in (empty, one)]
    # Compare the signed parts: an ECDSA signature's DER is 70 to 72 bytes at random, so
    # whole CRLs differ by the entry +-2 (CI failed on it once). One entry adds itself and
    # the list's own header (2 bytes, counted in the frame).
    tbs = [c.tbs_certlist_bytes for c in (empty, one)]
    assert len(tbs[1]) - len(tbs[0]) <= limits.CRL_ENTRY_DER_BYTES + 2
    assert limits.MAX_CRL_BYTES >= limits.pem_bytes(
        len(der[0]) + limits.MAX_REVOCATIONS * limits.CRL_ENTRY_DER_BYTES)


@pytest.fixture(scope="module")
def crowded(tmp_path_factory):
    """A PKI with 2,100 participants, 2,050 of them revoked by the real `revoke_all` (in
    three calls): a CRL past the 100,000 bytes that locked govkit out at 1,887."""
    tmp = tmp_path_factory.mktemp("crowded")
    pki, _ = init_pki(tmp / "pki", participants=[f"n{i:04d}" for i in range(2100)],
                      processes=2)
    names = [f"n{i:04d}" for i in range(2050)]
    for part in (names[:1000], names[1000:2000], names[2000:]):
        revoke_all(pki, part, reason="cessationOfOperation")
    (tmp / "fleet.txt").write_text("n2099\n")
    r = govkit("generate", "--profile", "rtps_sign", "--participants", str(tmp / "fleet.txt"),
             "--ca", str(pki.directory), "--out", str(tmp / "build"), "--sign")
    assert r.exit_code == 0, r.output
    return pki, tmp


def test_a_crl_of_thousands_of_revocations_is_read_back_by_every_command(crowded):
    pki, tmp = crowded
    assert crl_path(pki).stat().st_size > 100_000
    assert len(load_crl(pki).entries()) == 2050
    ca = str(pki.directory)
    r = govkit("pki", "revoke", "n2051", "--ca", ca)
    assert r.exit_code == 0 and "revoked on" in r.output, r.output
    assert "number 4," in r.output
    r = govkit("pki", "renew", "n2060", "--ca", ca)
    assert r.exit_code == 0, r.output
    r = govkit("pki", "status", ca, "--documents", str(tmp / "build"), "--json")
    assert r.exit_code == 0, r.output
    r = govkit("verify", "--ca", ca, str(tmp / "build" / "permissions" / "n2099.p7s"))
    assert r.exit_code == 0, r.output
    r = govkit("lint", "--ca", ca, str(tmp / "build" / "permissions" / "n2099.xml"))
    assert r.exit_code == 0, r.output


def test_export_sros2_gives_every_enclave_a_crl_of_thousands_of_revocations(crowded, tmp_path):
    """export read the CRL it copies with the certificates' limit, MAX_PEM_BYTES: past
    1,887 revocations every export of the PKI stopped at "too large"."""
    pki, tmp = crowded
    ks = tmp_path / "ks"
    r = govkit("export", "sros2", str(ks), "--ca", str(pki.directory), "--build",
             str(tmp / "build"), "--no-enforce")
    assert r.exit_code == 0, r.output
    copied = (ks / "enclaves" / "n2099" / "crl.pem").read_bytes()
    assert len(copied) > limits.MAX_PEM_BYTES
    assert copied == crl_path(pki).read_bytes()


def test_revoke_refuses_past_the_most_a_crl_holds_and_revokes_nothing(tmp_path, monkeypatch):
    pki, _ = init_pki(tmp_path / "pki", participants=("a", "b", "c", "d"))
    monkeypatch.setattr(revocation, "MAX_REVOCATIONS", 3)
    revoke_all(pki, ["a", "b"])
    before = crl_path(pki).read_bytes()
    with pytest.raises(GovkitError, match=r"holds 2 revocations; 2 more would pass 3"):
        revoke_all(pki, ["c", "d"])
    assert crl_path(pki).read_bytes() == before   # nothing un-revoked, nothing half-done
    revoke(pki, "c")
    assert len(load_crl(pki).entries()) == 3


def test_revoke_refuses_a_crl_it_would_not_read_back(tmp_path, monkeypatch):
    pki, _ = init_pki(tmp_path / "pki", participants=("a", "b"))
    revoke(pki, "a")
    before = crl_path(pki).read_bytes()
    monkeypatch.setattr(revocation, "MAX_CRL_BYTES", len(before) + 10)
    with pytest.raises(GovkitError, match="more than govkit reads"):
        revoke(pki, "b")
    assert crl_path(pki).read_bytes() == before
