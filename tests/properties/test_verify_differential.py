"""Differential test: govkit's verify verdict is OpenSSL's, on hundreds of S/MIME variants.

Every variant (tests/_variants.py: boundaries, headers, line ends, extra or missing parts,
nesting, encodings, crafted signatures, random line edits; tests/_signers.py: signer
certificates) is judged twice:

* OpenSSL, exactly as Cyclone DDS calls it: ``openssl smime -verify -text`` (SMIME_read_PKCS7
  + PKCS7_verify with PKCS7_TEXT) with the Permissions CA as the only trusted certificate
  (-no-CApath -no-CAstore), and then the document OpenSSL extracts must be a valid
  governance/permissions document (Cyclone would not load it otherwise; govkit's
  validator judges that part, on OpenSSL's output, cut at a NUL as Cyclone reads it);
* ``govkit verify`` (smime.verify.verify_bytes).

The verdicts must be equal for every variant, and when both accept, the document govkit
validated must be byte for byte the one OpenSSL extracted.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from helpers.signers import DAY, NOW, SignerVariant, key_usage, make_cert, signer_variants
from helpers.variants import Wrapper, craft_pkcs7, mutants, with_signature, wrapper_variants

from govkit.catalog.profiles import get_profile
from govkit.catalog.runners import runner_info
from govkit.check import validate
from govkit.documents import mime
from govkit.documents.render import GovernanceDocument, PermissionsDocument
from govkit.pki.testpki import TestPKI
from govkit.smime.sign import sign_document
from govkit.smime.verify import load_trusted, verify_bytes


@pytest.fixture(scope="module")
def pki(pki_dir) -> TestPKI:
    return TestPKI(pki_dir)


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("differential")


@pytest.fixture(scope="module")
def governance(work) -> Path:
    path = work / "governance.xml"
    path.write_bytes(GovernanceDocument(get_profile("sign_origin_data_encrypt")).render())
    return path


def openssl_sign(xml: Path, pki: TestPKI, out: Path, *extra: str) -> bytes:
    subprocess.run(["openssl", "smime", "-sign", "-md", "sha256", *extra, "-signer",
                    str(pki.permissions_ca), "-inkey", str(pki.permissions_ca_key), "-in",
                    str(xml), "-out", str(out)], check=True, capture_output=True, timeout=30)
    return out.read_bytes()


class Judge:
    """Both verdicts for one trusted CA; collects disagreements."""

    def __init__(self, ca_path: Path, work: Path):
        self.ca_path = ca_path
        self.ca = load_trusted(ca_path)   # every certificate, as -CAfile reads them
        self.work = work
        self.disagreements: list[str] = []
        self.verdicts: list[bool] = []

    def openssl(self, data: bytes) -> tuple[bool, bytes]:
        f, out = self.work / "variant.p7s", self.work / "variant.out"
        f.write_bytes(data)
        out.unlink(missing_ok=True)
        r = subprocess.run(["openssl", "smime", "-verify", "-text", "-CAfile", str(self.ca_path),
                            "-no-CApath", "-no-CAstore", "-in", str(f), "-out", str(out)],
                           capture_output=True, timeout=30)
        if r.returncode != 0:
            return False, b""
        document = out.read_bytes().split(b"\0", 1)[0]  # Cyclone reads a C string
        return validate.check_bytes(document, "out.xml", allow_smime=False).valid, document

    def check(self, name: str, data: bytes) -> bool:
        assert b"\0" not in data, f"{name}: NUL bytes are a Cyclone-only rule, not tested here"
        openssl_ok, document = self.openssl(data)
        ours = verify_bytes(data, name, self.ca)
        if openssl_ok != ours.ok:
            self.disagreements.append(f"{name}: OpenSSL {'accepts' if openssl_ok else 'refuses'}"
                                      f", govkit {'accepts' if ours.ok else 'refuses'} "
                                      f"{ours.problems[:2]}")
        elif ours.ok:
            extracted = validate.signed_document(data, name).data
            if extracted != document:
                self.disagreements.append(f"{name}: both accept, different documents")
        self.verdicts.append(ours.ok)
        return ours.ok

    def assert_agreement(self, min_accepted: int, min_refused: int) -> None:
        assert not self.disagreements, "\n".join(self.disagreements)
        accepted = sum(self.verdicts)
        refused = len(self.verdicts) - accepted
        # Both outcomes are exercised: a generator whose variants all fail proves nothing.
        assert accepted >= min_accepted and refused >= min_refused, (accepted, refused)


def test_wrapper_variants_get_openssl_s_verdict(pki, work, governance):
    judge = Judge(pki.permissions_ca, work)
    ours = sign_document(governance, pki.permissions_ca, pki.permissions_ca_key)
    theirs = openssl_sign(governance, pki, work / "openssl.p7s", "-text")
    variants = wrapper_variants(ours.read_bytes()) + [
        (f"openssl-{name}", data) for name, data in wrapper_variants(theirs)]
    for name, data in variants:
        judge.check(name, data)
    judge.assert_agreement(min_accepted=60, min_refused=60)
    assert len(variants) >= 170


def test_random_line_edits_get_openssl_s_verdict(pki, work, governance):
    judge = Judge(pki.permissions_ca, work)
    signed = sign_document(governance, pki.permissions_ca, pki.permissions_ca_key)
    for name, data in mutants(signed.read_bytes(), count=150, seed=8):
        judge.check(name, data)
    judge.assert_agreement(min_accepted=10, min_refused=40)


def test_nesting_and_encodings_get_openssl_s_verdict(pki, work, governance):
    judge = Judge(pki.permissions_ca, work)
    signed = sign_document(governance, pki.permissions_ca, pki.permissions_ca_key)
    xml = governance.read_bytes()

    def sign(name: str, content: bytes, *extra: str) -> bytes:
        src = work / f"{name}.in"
        src.write_bytes(content)
        return openssl_sign(src, pki, work / f"{name}.p7s", *extra)

    cases = {
        # a signed file signed again: OpenSSL verifies the outer one and hands over the
        # inner S/MIME message, which is not a document
        "nested-text": sign("nested", signed.read_bytes(), "-text"),
        "nested-binary": sign("nested-b", signed.read_bytes(), "-binary"),
        "opaque": sign("opaque", xml, "-text", "-nodetach"),
        "opaque-binary": sign("opaque-b", xml, "-binary", "-nodetach"),
        "detached-binary": sign("binary", xml, "-binary"),
        "utf16-document": sign("utf16", xml.decode().replace("UTF-8", "UTF-16")
                               .encode("utf-16"), "-text"),
        "latin1-document": sign("latin1", xml.replace(b"UTF-8", b"ISO-8859-1")
                                .replace(b"RTPS sign", b"RTPS sign \xe9"), "-text"),
        "bom-document": sign("bom", b"\xef\xbb\xbf" + xml, "-text"),
        "crlf-document": sign("crlf", xml.replace(b"\n", b"\r\n"), "-text"),
        "cr-in-comment": sign("cr", xml.replace(b"<dds", b"<!-- a\rb -->\n<dds", 1), "-text"),
        # a signed text/plain entity whose body is base64: OpenSSL does not decode it
        "text-entity-base64": sign("b64", b"Content-Type: text/plain\r\n"
                                   b"Content-Transfer-Encoding: base64\r\n\r\n" +
                                   __import__("base64").encodebytes(xml), "-binary"),
        "text-entity-charset": sign("charset", b"Content-Type: text/plain; charset=utf-8\r\n"
                                    b"\r\n" + xml.replace(b"\n", b"\r\n"), "-binary"),
        "text-entity-html": sign("html", b"Content-Type: text/html\r\n\r\n" +
                                 xml.replace(b"\n", b"\r\n"), "-binary"),
        "nocerts": sign("nocerts", xml, "-text", "-nocerts"),
        "noattr": sign("noattr", xml, "-text", "-noattr"),
        "nosmimecap": sign("nosmimecap", xml, "-text", "-nosmimecap"),
        "sha1": sign("sha1", xml, "-text", "-md", "sha1"),
        "sha512": sign("sha512", xml, "-text", "-md", "sha512"),
    }
    # multipart/mixed around a valid signed message
    inner = signed.read_bytes()
    cases["multipart-mixed-wrapper"] = (
        b'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="outer"\n\n--outer\n' +
        inner + b"\n--outer--\n")
    # the permissions side too
    perm = work / "pub.xml"
    perm.write_bytes(PermissionsDocument.for_participant(pki, "pub", runner_info("ddsperf"))
                     .render())
    cases["permissions"] = sign_document(perm, pki.permissions_ca,
                                         pki.permissions_ca_key).read_bytes()
    for name, data in cases.items():
        judge.check(name, data)
    judge.assert_agreement(min_accepted=8, min_refused=8)


def test_crafted_signatures_get_openssl_s_verdict(pki, work, governance):
    judge = Judge(pki.permissions_ca, work)
    base = Wrapper.parse(sign_document(governance, pki.permissions_ca,
                                       pki.permissions_ca_key).read_bytes())
    # the part as OpenSSL digests it (its last line break belongs to the delimiter)
    signed_part = mime.canonical(b"\n".join(base.content) + b"\n")
    cert, key = pki.certificate("permissions_ca"), pki.private_key("permissions_ca")
    cases = {
        "crafted-sorted": {},
        "crafted-attributes-reversed": {"order": lambda a: list(reversed(a))},
        "crafted-content-type-signed-data": {"content_type": "signed_data"},
        "crafted-no-message-digest": {"message_digest": False},
        "crafted-sha384": {"digest": "sha384"},
    }
    for name, kwargs in cases.items():
        der = craft_pkcs7(signed_part, cert, key, **kwargs)
        judge.check(name, with_signature(base, der).render())
    # signed with a subject key identifier: CMS, not PKCS#7
    cms_ski = work / "ski.p7s"
    subprocess.run(["openssl", "cms", "-sign", "-text", "-keyid", "-md", "sha256", "-signer",
                    str(pki.permissions_ca), "-inkey", str(pki.permissions_ca_key), "-in",
                    str(governance), "-out", str(cms_ski)], check=True, capture_output=True)
    judge.check("cms-subject-key-identifier", cms_ski.read_bytes())
    judge.assert_agreement(min_accepted=3, min_refused=2)


def test_signer_certificate_variants_get_openssl_s_verdict(pki, work, governance):
    """Who signs, and which CA is trusted (the same variants test_verify_cyclone.py loads
    in Cyclone). Also the CA itself, alongside a leaf, as a second signer."""
    verdicts = {}
    for variant in signer_variants(pki):
        files = variant.files(work / "signers")
        judge = Judge(files["anchor"], work)
        signed = variant.sign(governance, work / f"{variant.name}.p7s")
        verdicts[variant.name] = judge.check(variant.name, signed.read_bytes())
        assert not judge.disagreements, judge.disagreements
    assert verdicts["permissions-ca"] and verdicts["leaf"]
    assert not verdicts["ca-without-digital-signature"] and not verdicts["leaf-eku-client-auth"]
    assert 8 <= sum(verdicts.values()) <= len(verdicts) - 8, verdicts


def test_two_signers(pki, work, governance):
    ca = pki.certificate("permissions_ca")
    variants = {v.name: v for v in signer_variants(pki)}
    judge = Judge(pki.permissions_ca, work)
    for second in ("leaf", "leaf-eku-client-auth", "other-ca-same-name"):
        v: SignerVariant = variants[second]
        f = v.files(work / "signers")
        out = work / f"two-{second}.p7s"
        subprocess.run(["openssl", "smime", "-sign", "-text", "-md", "sha256",
                        "-signer", str(pki.permissions_ca), "-inkey", str(pki.permissions_ca_key),
                        "-signer", str(f["signer"]), "-inkey", str(f["key"]),
                        "-in", str(governance), "-out", str(out)], check=True,
                       capture_output=True)
        judge.check(f"two-signers-{second}", out.read_bytes())
    assert ca.public_bytes(serialization.Encoding.PEM) == pki.permissions_ca.read_bytes()
    judge.assert_agreement(min_accepted=1, min_refused=1)


def test_ca_files_with_several_certificates_get_openssl_s_verdict(pki, work, governance):
    """A CA file of several certificates (Fast DDS's test data: an intermediate, then its
    root): govkit's verdict is `openssl -CAfile FILE`'s (all trusted, as Fast DDS 2.9
    reads the file), and what it says of the first certificate alone (Cyclone DDS 0.10)
    is `openssl -CAfile FIRST`'s."""
    root, root_key = make_cert("govkit bundle root")
    inter, inter_key = make_cert("govkit bundle intermediate", (root, root_key))
    other, _ = make_cert("govkit bundle other root")
    old_root, old_root_key = make_cert("govkit bundle expired root",
                                       not_before=NOW - 10 * DAY, not_after=NOW - DAY)
    old_inter, old_inter_key = make_cert("govkit bundle intermediate of expired",
                                         (old_root, old_root_key))
    leaf, leaf_key = make_cert("govkit bundle leaf", (inter, inter_key), ca=False,
                               usage=key_usage(ds=True))
    cases = {   # name: (CA file, signer, its key, certificates embedded beside it)
        "intermediate-then-root-signed-by-intermediate": ([inter, root], inter, inter_key, []),
        "root-then-intermediate-signed-by-intermediate": ([root, inter], inter, inter_key, []),
        "intermediate-then-root-signed-by-leaf": ([inter, root], leaf, leaf_key, []),
        "intermediate-alone-signed-by-leaf": ([inter], leaf, leaf_key, []),
        "intermediate-and-another-root": ([inter, other], leaf, leaf_key, []),
        "another-root-then-root-leaf-chain-embedded": ([other, root], leaf, leaf_key, [inter]),
        "root-then-another-root-leaf-chain-embedded": ([root, other], leaf, leaf_key, [inter]),
        "root-twice-signed-by-root": ([root, root], root, root_key, []),
        "intermediate-then-expired-root": ([old_inter, old_root], old_inter, old_inter_key, []),
    }
    verdicts, firsts = {}, {}
    for name, (bundle, signer, key, chain) in cases.items():
        ca_file, first_file = work / f"{name}-ca.pem", work / f"{name}-first.pem"
        ca_file.write_bytes(b"".join(c.public_bytes(serialization.Encoding.PEM)
                                     for c in bundle))
        first_file.write_bytes(bundle[0].public_bytes(serialization.Encoding.PEM))
        signed = SignerVariant(name, bundle[0], signer, key, chain).sign(
            governance, work / f"{name}.p7s").read_bytes()
        judge = Judge(ca_file, work)
        verdicts[name] = judge.check(name, signed)
        assert not judge.disagreements, judge.disagreements
        ours = verify_bytes(signed, name, judge.ca)
        firsts[name] = Judge(first_file, work).openssl(signed)[0]
        first_ok = ours.ok if ours.first_only is None else not ours.first_only
        assert first_ok == firsts[name], (name, ours.first_only)
        assert (ours.first_only is None) == (len(bundle) == 1)
        assert ours.targets() == {"openssl": verdicts[name], "fastdds": verdicts[name],
                                  "cyclone": firsts[name]}
        assert bool(ours.target_lines()) == (verdicts[name] != firsts[name])
    assert verdicts["intermediate-then-root-signed-by-intermediate"]
    assert not firsts["intermediate-then-root-signed-by-intermediate"]
    assert firsts["root-then-intermediate-signed-by-intermediate"]
    assert not verdicts["intermediate-alone-signed-by-leaf"]
    assert not verdicts["intermediate-then-expired-root"]
