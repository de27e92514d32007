"""govkit's verify verdict is Cyclone DDS's: each signer variant (and a few wrapper
variants) is loaded by a real ddsperf, which accepts or refuses the participant.

Cyclone 0.10.2 verifies governance and permissions with SMIME_read_PKCS7 and
PKCS7_verify(p7, NULL, store, content, out, PKCS7_TEXT), the store holding only the
Permissions CA (access_control_utils.c). Facts these runs show, and govkit follows:
- a signer the Permissions CA issued is accepted, not only the CA itself (no
  PKCS7_NOINTERN): govkit verify accepts it too;
- the signer needs keyUsage digitalSignature (or nonRepudiation) and, with an
  extendedKeyUsage, emailProtection (OpenSSL's smime_sign purpose); every certificate
  must be within its validity; -nocerts signatures are refused (the signer is looked
  up only inside the signature);
- SHA-1 and RSA-1024 are accepted (no security level applies): govkit says OK and warns.
"""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest
from cryptography.hazmat.primitives import serialization
from helpers.dds import cyclone_loads, make_bundle, needs_cyclone, with_file
from helpers.signers import SignerVariant, make_cert, signer_variants
from helpers.variants import Wrapper, wrapper_variants

from govkit.pki.testpki import TestPKI
from govkit.smime.sign import sign_bytes
from govkit.smime.verify import verify_file

pytestmark = [needs_cyclone, pytest.mark.cyclone]

WRAPPER_VARIANTS = ("third-part", "boundary-injected-in-quoted-param",
                    "boundary-duplicate-real-second", "ctype-duplicate-text-first",
                    "boundary-one-char-quoted", "eol-crcrlf", "sig-base64-one-line",
                    "delimiter-trailing-text")


def _judge(cases, tmp_path):
    """(name, bundle, [signed files], trusted CA) -> disagreements between govkit and a real
    Cyclone participant; also the verdict counts."""
    def run(case):
        name, bundle, signed, anchor = case
        ours = all(verify_file(p, anchor).ok for p in signed)
        loaded, text = cyclone_loads(bundle, "pub", tmp_path / "cfg" / name)
        if not loaded:  # refused for the documents, not for something else
            assert "validating local permissions" in text, (name, text[-500:])
        return name, ours, loaded

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run, cases))
    wrong = [f"{n}: Cyclone {'loads' if c else 'refuses'}, govkit {'accepts' if g else 'refuses'}"
             for n, g, c in results if g != c]
    return wrong, sum(c for _, _, c in results), sum(not c for _, _, c in results)


def test_signer_certificate_variants_get_cyclone_s_verdict(tmp_path):
    bundle = make_bundle(tmp_path, "rtps_sign")
    pki = TestPKI(tmp_path / "pki")
    files = bundle.participants["pub"]
    cases = []
    for variant in signer_variants(pki):
        paths = variant.files(tmp_path / "signers")
        gov = variant.sign(files.governance.with_suffix(".xml"),
                           tmp_path / f"{variant.name}-governance.p7s")
        perm = variant.sign(files.permissions.with_suffix(".xml"),
                            tmp_path / f"{variant.name}-permissions.p7s")
        cases.append((variant.name, with_file(bundle, "pub", governance=gov, permissions=perm,
                                              permissions_ca=paths["anchor"]),
                      [gov, perm], paths["anchor"]))
    wrong, loaded, refused = _judge(cases, tmp_path)
    assert not wrong, "\n".join(wrong)
    assert loaded >= 8 and refused >= 8, (loaded, refused)


def test_wrapper_and_signing_variants_get_cyclone_s_verdict(tmp_path):
    bundle = make_bundle(tmp_path, "rtps_sign")
    pki = TestPKI(tmp_path / "pki")
    files = bundle.participants["pub"]
    signed_gov = files.governance.read_bytes()
    cases = []
    for name, data in wrapper_variants(signed_gov):
        if name in WRAPPER_VARIANTS:
            path = tmp_path / f"{name}.p7s"
            path.write_bytes(data)
            cases.append((name, with_file(bundle, "pub", governance=path), [path],
                          pki.permissions_ca))
    assert len(cases) == len(WRAPPER_VARIANTS)
    for name, extra in (("opaque", ["-nodetach"]), ("nocerts", ["-nocerts"]),
                        ("noattr", ["-noattr"]), ("sha1", ["-md", "sha1"])):
        path = tmp_path / f"{name}.p7s"
        subprocess.run(["openssl", "smime", "-sign", "-text", "-md", "sha256", *extra,
                        "-signer", str(pki.permissions_ca), "-inkey",
                        str(pki.permissions_ca_key), "-in",
                        str(files.governance.with_suffix(".xml")), "-out", str(path)],
                       check=True, capture_output=True)
        cases.append((name, with_file(bundle, "pub", governance=path), [path],
                      pki.permissions_ca))
    # The governance signed again, text-wrapped: OpenSSL's signature check passes, but
    # the document Cyclone gets is an S/MIME message.
    nested = tmp_path / "nested.p7s"
    nested.write_bytes(sign_bytes(signed_gov, pki.certificate("permissions_ca"),
                                  pki.private_key("permissions_ca")))
    cases.append(("nested", with_file(bundle, "pub", governance=nested), [nested],
                  pki.permissions_ca))
    assert Wrapper.parse(signed_gov).render() == signed_gov
    wrong, loaded, refused = _judge(cases, tmp_path)
    assert not wrong, "\n".join(wrong)
    assert loaded >= 3 and refused >= 3, (loaded, refused)


def test_of_a_ca_file_of_several_certificates_cyclone_trusts_the_first(tmp_path):
    """Cyclone 0.10.2 reads one certificate of the Permissions CA file
    (access_control_utils.c: ac_X509_certificate_read -> PEM_read_bio_X509) and puts only
    it in the store (PKCS7_document_verify): an intermediate first, not self-signed, fails
    although its root follows; the root first works. govkit's `cyclone` target says so,
    while its verdict stays OpenSSL's (-CAfile trusts both, so both pass)."""
    bundle = make_bundle(tmp_path, "rtps_sign")
    files = bundle.participants["pub"]
    root, root_key = make_cert("govkit bundle root")
    inter, inter_key = make_cert("govkit bundle intermediate", (root, root_key))
    loads = {}
    for name, certs in (("intermediate-then-root", [inter, root]),
                        ("root-then-intermediate", [root, inter])):
        ca_file = tmp_path / f"{name}.pem"
        ca_file.write_bytes(b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs))
        signer = SignerVariant(name, inter, inter, inter_key)
        signed = [signer.sign(f.with_suffix(".xml"), tmp_path / f"{name}-{f.stem}.p7s")
                  for f in (files.governance, files.permissions)]
        ours = [verify_file(p, ca_file) for p in signed]
        assert all(v.ok for v in ours)   # OpenSSL's verdict, and Fast DDS 2.9's
        loads[name], text = cyclone_loads(
            with_file(bundle, "pub", governance=signed[0], permissions=signed[1],
                      permissions_ca=ca_file), "pub", tmp_path / "cfg" / name)
        assert loads[name] == all(v.targets()["cyclone"] for v in ours), (name, text[-500:])
        assert loads[name] or "validating local permissions" in text, text[-500:]
    assert loads == {"intermediate-then-root": False, "root-then-intermediate": True}
