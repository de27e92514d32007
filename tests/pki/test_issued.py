"""The one "issued by this CA" check (govkit.pki.issued, issue 45): a certificate of the
CA passes; one signed by another key under the CA's very name, or by another CA, does not;
and every place that asks it (the test PKI, revocation, the manifest, generate, TLS keys)
decides the same way."""

import shutil

import pytest

from govkit.pki.issuance import init_pki
from govkit.pki.issued import issued_by, issued_certificate
from govkit.pki.manifest import check_certificate
from govkit.pki.testpki import init_tls, tls_paths


@pytest.mark.parametrize("key_type", ["ec-p256", "rsa-2048"])
def test_the_ca_s_certificate_passes_a_forgery_under_its_name_does_not(tmp_path, key_type):
    pki, _ = init_pki(tmp_path / "mine", participants=("a",), key_type=key_type)
    other, _ = init_pki(tmp_path / "other", participants=("a",), key_type=key_type)
    ca = pki.certificate("identity_ca")
    forged = other.certificate("a")                 # same CA names, other keys
    assert forged.issuer == ca.subject
    assert issued_by(pki.certificate("a"), ca)
    assert not issued_by(forged, ca)
    assert not issued_by(pki.certificate("permissions_ca"), ca)    # another CA's subject
    assert issued_certificate(pki.path("a").read_bytes(), ca) == pki.certificate("a")
    assert issued_certificate(other.path("a").read_bytes(), ca) is None
    assert issued_certificate(b"not a certificate", ca) is None
    # the manifest and the test PKI decide as the check does
    assert check_certificate(pki.path("a").read_bytes(), ca).issued
    assert not check_certificate(other.path("a").read_bytes(), ca).issued
    shutil.copy(other.path("a"), pki.path("b"))
    shutil.copy(other.path("a", ".key"), pki.path("b", ".key"))
    assert pki.stale_participants() == ["b"]


def test_a_tls_key_of_another_ca_under_the_same_name_is_issued_again(tmp_path):
    """init_tls kept a TLS certificate whose issuer NAME was the Identity CA's: one of an
    earlier PKI (same names, other keys) was kept, and the DDSI TLS handshake refused it."""
    pki, _ = init_pki(tmp_path / "mine", participants=("a",))
    other, _ = init_pki(tmp_path / "other", participants=("a",))
    init_tls(other, ["a"])
    mine_pem, mine_key = tls_paths(pki, "a")
    mine_pem.parent.mkdir()
    for theirs, ours in zip(tls_paths(other, "a"), (mine_pem, mine_key), strict=True):
        shutil.copy(theirs, ours)
    assert issued_certificate(mine_pem.read_bytes(), pki.certificate("identity_ca")) is None
    written = init_tls(pki, ["a"])
    assert str(mine_pem) in written
    assert issued_certificate(mine_pem.read_bytes(), pki.certificate("identity_ca"))
    assert init_tls(pki, ["a"]) == []             # its own: kept
