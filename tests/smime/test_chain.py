"""govkit.smime.chain.signature_ok, the one signature check, against `openssl dgst -verify`.

It replaced three copies that disagreed: verify_batch's knew RSA and EC with SHA-256 only
(a valid DSA signature was False there), verify's and the chain's knew RSA, EC and DSA.
OpenSSL decides: every key type it accepts for PKCS#7 signer infos verifies here too.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed25519, padding, rsa
from cryptography.utils import CryptographyDeprecationWarning

from govkit.smime import chain
from govkit.smime.chain import signature_ok

DATA = b"<dds>the signed attributes</dds>\r\n"


def _sign(key, data: bytes, hash_cls) -> bytes:
    if isinstance(key, rsa.RSAPrivateKey):
        return key.sign(data, padding.PKCS1v15(), hash_cls())
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return key.sign(data, ec.ECDSA(hash_cls()))
    return key.sign(data, hash_cls())


def _openssl_verifies(tmp_path, key, signature: bytes, data: bytes, digest: str) -> bool:
    pub = tmp_path / "pub.pem"
    pub.write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    (tmp_path / "sig").write_bytes(signature)
    (tmp_path / "data").write_bytes(data)
    done = subprocess.run(["openssl", "dgst", f"-{digest}", "-verify", pub, "-signature",
                           tmp_path / "sig", tmp_path / "data"], capture_output=True)
    return done.returncode == 0


def _dsa_key():
    """A DSA key: signers still meet them, so signature_ok is checked on one. cryptography
    51 deprecates making them; the warning is this test's, not govkit's, and the README's
    test command prints no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CryptographyDeprecationWarning)
        return dsa.generate_private_key(2048)


KEYS = {
    "rsa": lambda: rsa.generate_private_key(65537, 2048),
    "ec-p256": lambda: ec.generate_private_key(ec.SECP256R1()),
    "dsa": _dsa_key,
}


@pytest.mark.parametrize("hash_cls", [hashes.SHA256, hashes.SHA384], ids=["sha256", "sha384"])
@pytest.mark.parametrize("kind", KEYS)
def test_signature_ok_gives_openssls_verdict(tmp_path, kind, hash_cls):
    key = KEYS[kind]()
    signature = _sign(key, DATA, hash_cls)
    digest = hash_cls.name
    for data, sig in ((DATA, signature), (DATA + b" ", signature),
                      (DATA, signature[:-1] + bytes([signature[-1] ^ 1]))):
        expected = _openssl_verifies(tmp_path, key, sig, data, digest)
        assert signature_ok(key.public_key(), sig, data, hash_cls) is expected
    assert signature_ok(key.public_key(), signature, DATA, hash_cls)


def test_a_key_of_another_kind_is_a_failed_check():
    rsa_key, ed_key = KEYS["rsa"](), ed25519.Ed25519PrivateKey.generate()
    signature = _sign(rsa_key, DATA, hashes.SHA256)
    assert not signature_ok(KEYS["ec-p256"]().public_key(), signature, DATA, hashes.SHA256)
    assert not signature_ok(ed_key.public_key(), ed_key.sign(DATA), DATA, hashes.SHA256)


def test_the_chain_s_signature_check_decides_as_the_pki_s(tmp_path):
    """chain.signed_with (OpenSSL's view of a certificate's signature) and
    govkit.pki.issued.issued_by agree: a certificate of the CA, one signed by another key
    under the CA's very name."""
    from govkit.pki.issuance import init_pki
    from govkit.pki.issued import issued_by
    for key_type in ("ec-p256", "rsa-2048"):
        pki, _ = init_pki(tmp_path / key_type, participants=("a",), key_type=key_type)
        other, _ = init_pki(tmp_path / f"{key_type}-other", participants=("a",),
                            key_type=key_type)   # same CA names, other keys
        ca = pki.certificate("identity_ca")
        for cert, mine in ((pki.certificate("a"), True), (other.certificate("a"), False)):
            assert chain.signed_with(cert, ca.public_key()) is mine is issued_by(cert, ca)


def test_dsa_is_verified_without_a_warning():
    """cryptography 51 deprecates DSA and warns on any use of `dsa.DSAPublicKey`; govkit
    read it at import, so every command began with two warning lines (2026-12-07). OpenSSL
    still verifies DSA, so govkit still must: in a fresh interpreter where every warning is
    an error, the chain module imports and a DSA signature verifies."""
    code = """if True:
        import warnings
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import dsa
        from govkit.smime.chain import signature_ok
        with warnings.catch_warnings():   # the test's own key, not govkit's code
            warnings.simplefilter("ignore")
            key = dsa.generate_private_key(2048)
            sig = key.sign(b"data", hashes.SHA256())
            pub = key.public_key()
        assert signature_ok(pub, sig, b"data", hashes.SHA256)
        assert not signature_ok(pub, sig, b"datA", hashes.SHA256)
    """
    done = subprocess.run([sys.executable, "-W", "error", "-c", code],
                          capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == "", done.stderr
