"""S/MIME signing and verification, cross-checked against the real `openssl smime`."""

from __future__ import annotations

import base64
import csv
import datetime as dt
import re
import subprocess
from pathlib import Path

import pytest
from asn1crypto import cms

from govkit.catalog.profiles import get_profile
from govkit.catalog.runners import runner_info
from govkit.common.errors import EXIT_INVALID, EXIT_USAGE, GovkitError
from govkit.documents import mime
from govkit.documents.render import GovernanceDocument, PermissionsDocument
from govkit.pki.issuance import init_pki
from govkit.pki.testpki import CLOCK_SKEW, TestPKI
from govkit.smime.sign import sign_bytes, sign_document, sign_paths
from govkit.smime.verify import load_trusted, verify_bytes, verify_file

# The bad governance of seed 000 ("Submessage Encrypt with Original Auth"): not a valid enum.
INVALID_GOVERNANCE = GovernanceDocument(
    get_profile("sign_submsg_encrypt_origin_data_encrypt")).render().replace(
        b"ENCRYPT_WITH_ORIGIN_AUTHENTICATION", b"ENCRYPT_WITH_ORIGINAL_AUTHENTICATION")


@pytest.fixture(scope="module")
def pki(pki_dir) -> TestPKI:
    return TestPKI(pki_dir)


@pytest.fixture(scope="module")
def other_pki(tmp_path_factory) -> TestPKI:
    """Another PKI whose CAs have the very same subject names as `pki`'s, other keys."""
    return init_pki(tmp_path_factory.mktemp("other_pki"), participants=["pub"])[0]


@pytest.fixture
def governance_xml(tmp_path) -> Path:
    path = tmp_path / "governance" / "sign_origin_data_encrypt.xml"
    path.parent.mkdir()
    path.write_bytes(GovernanceDocument(get_profile("sign_origin_data_encrypt")).render())
    return path


@pytest.fixture
def signed(governance_xml, pki) -> Path:
    return sign_document(governance_xml, pki.permissions_ca, pki.permissions_ca_key)


def openssl_verify(p7s: Path, ca: Path, out: Path | None = None) -> subprocess.CompletedProcess:
    """What Cyclone DDS does: PKCS7_verify(PKCS7_TEXT) with only `ca` trusted."""
    return subprocess.run(
        ["openssl", "smime", "-verify", "-CAfile", str(ca), "-no-CApath", "-no-CAstore",
         "-text", "-in", str(p7s), "-out", str(out) if out else "/dev/null"],
        capture_output=True, timeout=30)


def openssl_sign(xml: Path, cert: Path, key: Path, out: Path, *extra: str) -> Path:
    subprocess.run(["openssl", "smime", "-sign", "-text", "-md", "sha256", *extra,
                    "-signer", str(cert), "-inkey", str(key), "-in", str(xml), "-out", str(out)],
                   check=True, capture_output=True, timeout=30)
    return out


def _sign_raw(data: bytes, pki: TestPKI, stem: str = "permissions_ca") -> bytes:
    return sign_bytes(data, pki.certificate(stem), pki.private_key(stem))


def _structure(data: bytes) -> list[bytes]:
    """Lines (CR kept) with the boundary and the base64 block replaced by placeholders."""
    boundary = re.search(rb'boundary="([^"]+)"', data).group(1)
    lines = data.replace(boundary, b"BOUNDARY").split(b"\n")
    out: list[bytes] = []
    for line in lines:
        if re.fullmatch(rb"[A-Za-z0-9+/]+=*", line) and len(line) <= 64 and out \
                and out[-1] in (b"", b"<base64>"):
            if out[-1] != b"<base64>":
                out.append(b"<base64>")
            continue
        out.append(line)
    return out


def _signed_part(data: bytes) -> bytes:
    boundary = re.search(rb'boundary="([^"]+)"', data).group(1)
    return data.split(b"--" + boundary)[1]


def _der(data: bytes) -> bytes:
    return mime.read_smime(data).signature()


def _replace_der(data: bytes, der: bytes) -> bytes:
    head, _, _ = data.partition(b'filename="smime.p7s"\n\n')
    boundary = re.search(rb'boundary="([^"]+)"', data).group(1)
    b64 = base64.b64encode(der)
    lines = b"\n".join(b64[i:i + 64] for i in range(0, len(b64), 64))
    return head + b'filename="smime.p7s"\n\n' + lines + b"\n\n--" + boundary + b"--\n\n"


# ------------------------------------------------------------------ sign, cross-checked


def test_signed_by_govkit_verifies_with_openssl(signed, governance_xml, pki, tmp_path):
    assert signed == governance_xml.with_suffix(".p7s")
    out = tmp_path / "extracted.xml"
    result = openssl_verify(signed, pki.permissions_ca, out)
    assert result.returncode == 0, result.stderr
    assert b"Verification successful" in result.stderr
    # what openssl extracts is the document (OpenSSL writes the canonical CRLF line ends)
    assert out.read_bytes().replace(b"\r\n", b"\n") == governance_xml.read_bytes()

    v = verify_file(signed, pki.permissions_ca)
    assert v.ok, v.problems
    assert v.problems == []
    assert v.kind == "governance"
    assert v.signer == pki.certificate("permissions_ca").subject.rfc4514_string()
    assert v.to_json() == {"file": str(signed), "ok": True, "problems": [],
                           "signer": v.signer, "kind": "governance", "warnings": [],
                           "signature_ok": True, "trusted": [v.signer],
                           "targets": {"openssl": True, "cyclone": True, "fastdds": True},
                           "first_only_problems": None}


def test_signed_permissions_verify(pki, tmp_path):
    xml = tmp_path / "pub.xml"
    xml.write_bytes(PermissionsDocument.for_participant(pki, "pub", runner_info("ddsperf"))
                    .render())
    p7s = sign_document(xml, pki.permissions_ca, pki.permissions_ca_key)
    assert openssl_verify(p7s, pki.permissions_ca).returncode == 0
    v = verify_file(p7s, pki.permissions_ca)
    assert v.ok, v.problems
    assert v.kind == "permissions"


def test_layout_matches_openssl(signed, governance_xml, pki, tmp_path):
    ours = signed.read_bytes()
    theirs = openssl_sign(governance_xml, pki.permissions_ca, pki.permissions_ca_key,
                          tmp_path / "openssl.p7s").read_bytes()
    assert _structure(ours) == _structure(theirs)
    assert _structure(ours).count(b"<base64>") == 1
    assert _structure(ours).count(b"--BOUNDARY") == 2  # the two opening delimiters
    assert _structure(ours).count(b"--BOUNDARY--") == 1
    # The signed part (text/plain header + CRLF document) is byte for byte OpenSSL's.
    assert _signed_part(ours) == _signed_part(theirs)
    assert _signed_part(ours).startswith(b"\nContent-Type: text/plain\r\n\r\n<?xml ")
    assert ours.startswith(b"MIME-Version: 1.0\nContent-Type: multipart/signed; "
                           b'protocol="application/x-pkcs7-signature"; micalg="sha-256"; '
                           b'boundary="----')
    boundary = re.search(rb'boundary="([^"]+)"', ours).group(1)
    assert re.fullmatch(rb"----[0-9A-F]{32}", boundary)
    # the CMS is a detached SignedData, SHA-256, one signer, with the signer's certificate
    sd = cms.ContentInfo.load(_der(ours))["content"]
    assert sd["encap_content_info"]["content"].native is None
    assert [a["algorithm"].native for a in sd["digest_algorithms"]] == ["sha256"]
    assert len(sd["signer_infos"]) == 1 and len(sd["certificates"]) == 1


def test_signed_by_openssl_verifies_with_govkit(governance_xml, pki, tmp_path):
    p7s = openssl_sign(governance_xml, pki.permissions_ca, pki.permissions_ca_key,
                       tmp_path / "openssl.p7s")
    v = verify_file(p7s, pki.permissions_ca)
    assert v.ok, v.problems
    assert v.kind == "governance"


@pytest.mark.parametrize("extra", [["-md", "sha512"], ["-md", "sha384"], ["-nodetach"],
                                   ["-noattr"], ["-nocerts"]])
def test_openssl_variants_get_openssl_s_verdict(governance_xml, pki, tmp_path, extra):
    p7s = openssl_sign(governance_xml, pki.permissions_ca, pki.permissions_ca_key,
                       tmp_path / "v.p7s", *extra)
    v = verify_file(p7s, pki.permissions_ca)
    openssl_ok = openssl_verify(p7s, pki.permissions_ca).returncode == 0
    assert v.ok == openssl_ok, v.problems
    if extra == ["-nocerts"]:  # PKCS7_verify finds the signer only inside the signature
        assert not v.ok and "not in the signature" in v.problems[0]
    else:  # opaque (-nodetach) and attribute-less signatures are read by Cyclone too
        assert v.ok and v.kind == "governance", v.problems


def test_document_without_final_newline(pki, tmp_path, governance_xml):
    xml = tmp_path / "nonl.xml"
    xml.write_bytes(governance_xml.read_bytes().rstrip(b"\n"))
    ours = sign_document(xml, pki.permissions_ca, pki.permissions_ca_key)
    theirs = openssl_sign(xml, pki.permissions_ca, pki.permissions_ca_key, tmp_path / "o.p7s")
    assert _signed_part(ours.read_bytes()) == _signed_part(theirs.read_bytes())
    assert openssl_verify(ours, pki.permissions_ca).returncode == 0
    assert verify_file(ours, pki.permissions_ca).ok
    assert verify_file(theirs, pki.permissions_ca).ok


def test_signed_part_without_text_header_refused(governance_xml, pki, tmp_path):
    p7s = tmp_path / "notext.p7s"
    subprocess.run(["openssl", "smime", "-sign", "-md", "sha256", "-signer",
                    str(pki.permissions_ca), "-inkey", str(pki.permissions_ca_key), "-in",
                    str(governance_xml), "-out", str(p7s)], check=True, capture_output=True)
    assert b"Content-Type: text/plain" not in p7s.read_bytes()
    # `-text` makes OpenSSL verify the way Cyclone does (PKCS7_TEXT): it refuses
    refused = openssl_verify(p7s, pki.permissions_ca)
    assert refused.returncode != 0 and b"SMIME_text" in refused.stderr
    v = verify_file(p7s, pki.permissions_ca)
    assert not v.ok


def test_sha1_is_accepted_like_openssl_with_a_warning(governance_xml, pki, tmp_path):
    # OpenSSL (so Cyclone DDS, see test_verify_cyclone.py) accepts a SHA-1 signature:
    # verify says OK, and warns.
    p7s = tmp_path / "sha1.p7s"
    subprocess.run(["openssl", "smime", "-sign", "-text", "-md", "sha1", "-signer",
                    str(pki.permissions_ca), "-inkey", str(pki.permissions_ca_key), "-in",
                    str(governance_xml), "-out", str(p7s)], check=True, capture_output=True)
    assert openssl_verify(p7s, pki.permissions_ca).returncode == 0
    v = verify_file(p7s, pki.permissions_ca)
    assert v.ok, v.problems
    assert any("SHA1" in w for w in v.warnings), v.warnings


def test_rsa_pki_round_trip(tmp_path, governance_xml):
    pki, _ = init_pki(tmp_path / "rsa", participants=[], key_type="rsa-2048")
    ours = sign_document(governance_xml, pki.permissions_ca, pki.permissions_ca_key)
    assert openssl_verify(ours, pki.permissions_ca).returncode == 0
    assert verify_file(ours, pki.permissions_ca).ok
    theirs = openssl_sign(governance_xml, pki.permissions_ca, pki.permissions_ca_key,
                          tmp_path / "theirs.p7s")
    v = verify_file(theirs, pki.permissions_ca)
    assert v.ok, v.problems


# ------------------------------------------------------------------ refusals


def test_tampered_content_refused_by_both(signed, pki, tmp_path):
    data = signed.read_bytes()
    assert data.count(b"<min>0</min>") == 1
    tampered = tmp_path / "tampered.p7s"
    tampered.write_bytes(data.replace(b"<min>0</min>", b"<min>1</min>"))  # still a valid doc
    v = verify_file(tampered, pki.permissions_ca)
    assert not v.ok
    assert any("content digest mismatch" in p for p in v.problems)
    assert not any("invalid" in p for p in v.problems)
    assert openssl_verify(tampered, pki.permissions_ca).returncode != 0


def test_tampered_signature_refused(signed, pki):
    data = signed.read_bytes()
    sd = cms.ContentInfo.load(_der(data))
    si = sd["content"]["signer_infos"][0]
    sig = bytearray(si["signature"].native)
    sig[-1] ^= 1
    si["signature"] = bytes(sig)
    v = verify_bytes(_replace_der(data, sd.dump(force=True)), "x.p7s",
                     pki.certificate("permissions_ca"))
    assert not v.ok
    assert any("signature does not verify" in p for p in v.problems)


def test_other_pkis_permissions_ca_refused_by_both(governance_xml, pki, other_pki, tmp_path):
    # same subject names, different keys: only the key decides
    assert other_pki.certificate("permissions_ca").subject == \
        pki.certificate("permissions_ca").subject
    p7s = tmp_path / "foreign.p7s"
    p7s.write_bytes(_sign_raw(governance_xml.read_bytes(), other_pki))
    assert verify_file(p7s, other_pki.permissions_ca).ok  # fine for its own CA
    v = verify_file(p7s, pki.permissions_ca)
    assert not v.ok
    assert any("is not the Permissions CA" in p for p in v.problems)
    assert not any("digest" in p for p in v.problems)
    assert openssl_verify(p7s, pki.permissions_ca).returncode != 0


def test_other_pki_without_embedded_certificate_refused(governance_xml, pki, other_pki,
                                                        tmp_path):
    p7s = openssl_sign(governance_xml, other_pki.permissions_ca, other_pki.permissions_ca_key,
                       tmp_path / "nocerts.p7s", "-nocerts")
    v = verify_file(p7s, pki.permissions_ca)
    assert not v.ok
    assert v.problems


@pytest.mark.parametrize("stem", ["identity_ca", "pub"])
def test_signed_by_identity_side_refused(governance_xml, pki, tmp_path, stem):
    p7s = tmp_path / f"by_{stem}.p7s"
    p7s.write_bytes(_sign_raw(governance_xml.read_bytes(), pki, stem))
    v = verify_file(p7s, pki.permissions_ca)
    assert not v.ok
    assert any("is not the Permissions CA" in p for p in v.problems)
    assert openssl_verify(p7s, pki.permissions_ca).returncode != 0
    # Against the identity CA, the CA itself is a fine S/MIME signer, but a participant is
    # not: its extendedKeyUsage (clientAuth, serverAuth) lacks emailProtection, and
    # OpenSSL's smime_sign purpose check refuses it. govkit agrees with OpenSSL both ways.
    by_id = verify_file(p7s, pki.identity_ca)
    assert by_id.ok == (stem == "identity_ca"), by_id.problems
    assert by_id.ok == (openssl_verify(p7s, pki.identity_ca).returncode == 0)
    if stem == "pub":
        assert any("emailProtection" in p for p in by_id.problems), by_id.problems


def test_expired_signer_refused(governance_xml, tmp_path):
    past = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
    old, _ = init_pki(tmp_path / "old", participants=[], days=1, now=past)
    p7s = tmp_path / "old.p7s"
    p7s.write_bytes(_sign_raw(governance_xml.read_bytes(), old))
    v = verify_file(p7s, old.permissions_ca)
    assert not v.ok
    assert any("expired" in p for p in v.problems), v.problems
    assert not any("digest" in p or "not the Permissions CA" in p for p in v.problems)
    # within its validity it was fine: expiry is the only problem
    assert verify_file(p7s, old.permissions_ca, now=past).ok
    early = verify_file(p7s, old.permissions_ca,
                        now=past - CLOCK_SKEW - dt.timedelta(hours=1))
    assert not early.ok and any("not valid before" in p for p in early.problems)
    assert openssl_verify(p7s, old.permissions_ca).returncode != 0


def test_signed_invalid_document_refused(pki, tmp_path):
    p7s = tmp_path / "bad.p7s"
    p7s.write_bytes(_sign_raw(INVALID_GOVERNANCE, pki))
    # the signature itself is fine (OpenSSL says so) ...
    assert openssl_verify(p7s, pki.permissions_ca).returncode == 0
    # ... but the signed document is not a valid governance document
    v = verify_file(p7s, pki.permissions_ca)
    assert not v.ok
    assert any("invalid" in p and "ENCRYPT_WITH_ORIGINAL_AUTHENTICATION" in p
               for p in v.problems), v.problems
    assert not any("digest" in p for p in v.problems)


def test_sign_document_refuses_invalid_xml_and_writes_nothing(pki, tmp_path):
    for name, data in (("bad.xml", INVALID_GOVERNANCE), ("broken.xml", b"<dds><oops></dds>"),
                       ("empty.xml", b"")):
        xml = tmp_path / name
        xml.write_bytes(data)
        with pytest.raises(GovkitError) as info:
            sign_document(xml, pki.permissions_ca, pki.permissions_ca_key)
        assert info.value.exit_code == EXIT_INVALID
        assert "not signed" in str(info.value)
        assert not xml.with_suffix(".p7s").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.xml", "broken.xml", "empty.xml"]


def test_sign_document_missing_file(pki, tmp_path):
    with pytest.raises(GovkitError) as info:
        sign_document(tmp_path / "nope.xml", pki.permissions_ca, pki.permissions_ca_key)
    assert info.value.exit_code == EXIT_USAGE
    assert list(tmp_path.iterdir()) == []


def test_sign_paths_skips_invalid(pki, tmp_path):
    (tmp_path / "d" / "sub").mkdir(parents=True)
    good = tmp_path / "d" / "sub" / "g.xml"
    good.write_bytes(GovernanceDocument(get_profile("rtps_sign")).render())
    bad = tmp_path / "d" / "bad.xml"
    bad.write_bytes(INVALID_GOVERNANCE)
    (tmp_path / "d" / "notes.txt").write_text("not a document")
    signed, errors = sign_paths([tmp_path / "d"], pki.permissions_ca,
                                pki.permissions_ca_key)
    assert signed == [good.with_suffix(".p7s")]
    assert len(errors) == 1 and "bad.xml" in str(errors[0]) and errors[0].exit_code == 1
    assert not bad.with_suffix(".p7s").exists()
    assert verify_file(signed[0], pki.permissions_ca).ok


# ------------------------------------------------------------------ malformed input


@pytest.mark.parametrize("data", [
    b"", b"garbage\x00\xff" * 20, b"<dds/>",
    b"MIME-Version: 1.0\nContent-Type: text/plain\n\nhello\n",
    b'MIME-Version: 1.0\nContent-Type: multipart/signed; boundary="b"\n\n--b\nx\n--b--\n',
], ids=["empty", "binary", "plain-xml", "not-multipart", "one-part"])
def test_non_smime_input_is_malformed(pki, data):
    v = verify_bytes(data, "x.p7s", pki.certificate("permissions_ca"))
    assert not v.ok
    assert len(v.problems) == 1 and v.problems[0].startswith("malformed S/MIME")


def test_broken_signature_part_is_malformed(signed, pki):
    data = signed.read_bytes()
    ca = pki.certificate("permissions_ca")
    der = _der(data)
    for bad in (b"not base64 !!!", None):
        if bad is None:
            broken = _replace_der(data, der[: len(der) // 2])  # truncated CMS
        else:
            head, _, _ = data.partition(b'filename="smime.p7s"\n\n')
            broken = head + b'filename="smime.p7s"\n\n' + bad + b"\n"
        v = verify_bytes(broken, "x.p7s", ca)
        assert not v.ok
        assert any(p.startswith("malformed S/MIME") for p in v.problems), v.problems
    # DER that is CMS, but not SignedData
    data_ci = cms.ContentInfo({"content_type": "data", "content": b"x"}).dump()
    v = verify_bytes(_replace_der(data, data_ci), "x.p7s", ca)
    assert not v.ok and "malformed" in v.problems[0]


def _corrupt(der: bytes, case: str) -> bytes:
    ci = cms.ContentInfo.load(der)
    sd = ci["content"]
    if case == "signer-identifier-tag":
        sid = sd["signer_infos"][0]["sid"].dump()
        at = der.index(sid)
        return der[:at] + b"\x01" + der[at + 1:]  # UNIVERSAL 1: neither SignerIdentifier choice
    cert = sd["certificates"][0].chosen.dump()
    at = der.index(cert)
    if case == "certificate-version":
        version = b"\xa0\x03\x02\x01\x02"
        i = der.index(version, at)
        return der[:i] + b"\xa0\x03\x02\x01\x03" + der[i + len(version):]
    prime256v1 = bytes.fromhex("06082a8648ce3d030107")
    i = der.index(prime256v1, at)
    return der[:i] + prime256v1[:-1] + b"\x06" + der[i + len(prime256v1):]


@pytest.mark.parametrize("case", ["signer-identifier-tag", "certificate-version",
                                  "certificate-curve"])
def test_corrupt_cms_never_raises(signed, pki, case):
    data = signed.read_bytes()
    broken = _replace_der(data, _corrupt(_der(data), case))
    v = verify_bytes(broken, "x.p7s", pki.certificate("permissions_ca"))
    assert not v.ok
    assert v.problems


# ------------------------------------------------------------------ line ends


def test_crlf_outer_lines_still_verify(signed, pki, tmp_path):
    crlf = tmp_path / "crlf.p7s"
    crlf.write_bytes(re.sub(rb"\r?\n", b"\r\n", signed.read_bytes()))
    assert b"\n" not in crlf.read_bytes().replace(b"\r\n", b"")
    v = verify_file(crlf, pki.permissions_ca)
    assert v.ok, v.problems
    assert openssl_verify(crlf, pki.permissions_ca).returncode == 0


def test_lf_only_file_still_verifies(signed, pki, tmp_path):
    # e.g. after a checkout with text conversion: the signature is over the CRLF canonical form
    lf = tmp_path / "lf.p7s"
    lf.write_bytes(signed.read_bytes().replace(b"\r\n", b"\n"))
    assert b"\r" not in lf.read_bytes()
    v = verify_file(lf, pki.permissions_ca)
    assert v.ok, v.problems
    assert openssl_verify(lf, pki.permissions_ca).returncode == 0


@pytest.mark.parametrize("where", ["signed-part", "whole-file"])
def test_cr_cr_lf_verifies_like_openssl(signed, pki, tmp_path, where):
    data = signed.read_bytes()
    if where == "signed-part":
        start = data.index(b"Content-Type: text/plain")
        end = data.index(b"</dds>\r\n") + len(b"</dds>\r\n")
        data = data[:start] + data[start:end].replace(b"\r\n", b"\r\r\n") + data[end:]
    else:
        data = re.sub(rb"\r?\n", b"\r\r\n", data)
    p7s = tmp_path / "crcrlf.p7s"
    p7s.write_bytes(data)
    assert openssl_verify(p7s, pki.permissions_ca).returncode == 0  # OpenSSL accepts it
    v = verify_file(p7s, pki.permissions_ca)
    assert v.ok, v.problems


# ------------------------------------------------------------------ file errors


def test_verify_file_errors(signed, pki, tmp_path):
    with pytest.raises(GovkitError) as info:
        verify_file(tmp_path / "missing.p7s", pki.permissions_ca)
    assert info.value.exit_code == EXIT_USAGE
    with pytest.raises(GovkitError, match="cannot read"):
        verify_file(signed, tmp_path / "missing_ca.pem")
    not_pem = tmp_path / "ca.pem"
    not_pem.write_text("hello")
    with pytest.raises(GovkitError, match="not a PEM certificate"):
        verify_file(signed, not_pem)


# ------------------------------------------------------------------ real-world corpus


def _corpus_signed_files(shared: Path) -> list[tuple[Path, dict]]:
    corpus = shared / "reference" / "corpus"
    index = {row["file"]: row for row in csv.DictReader(
        (corpus / "INDEX.tsv").open(encoding="utf-8"), delimiter="\t")}
    # .p7s/.smime, plus S/MIME stored under another name (rtiperftest's signed_*.xml)
    files = sorted(p for p in corpus.rglob("*") if p.suffix in (".p7s", ".smime")
                   or index.get(p.relative_to(corpus).as_posix(), {}).get("signed") == "y")
    return [(p, index.get(p.relative_to(corpus).as_posix(), {})) for p in files]


# Signed files whose signed part uses CR CR LF line ends (OpenSSL accepts them).
CR_CR_LF = {"fastdds/permissions_access_control_tests_malicious.smime",
            "opendds/Permissions_TopicLevel_OCI.p7s"}


def test_corpus_signed_files_parse_without_exceptions(shared, pki):
    files = _corpus_signed_files(shared)
    assert len(files) >= 10
    for path, row in files:
        v = verify_file(path, pki.permissions_ca)  # must not raise
        assert not v.ok, path  # signed by foreign CAs
        assert v.problems, path
        if row.get("signed") == "n":
            assert v.problems[0].startswith("malformed S/MIME"), path


def test_corpus_good_signatures_have_no_digest_mismatch(shared, pki):
    checked = 0
    for path, row in _corpus_signed_files(shared):
        rel = path.relative_to(shared / "reference" / "corpus").as_posix()
        if not row.get("signature_check", "").startswith("signature ok") or rel in CR_CR_LF:
            continue
        checked += 1
        v = verify_file(path, pki.permissions_ca)
        assert not any("content digest mismatch" in p for p in v.problems), (rel, v.problems)
        assert not any("signature does not verify" in p for p in v.problems), (rel, v.problems)
        assert not any(p.startswith("malformed") for p in v.problems), (rel, v.problems)
        assert any("is not the Permissions CA" in p for p in v.problems), (rel, v.problems)
    assert checked >= 8


@pytest.mark.parametrize("rel", sorted(CR_CR_LF))
def test_corpus_cr_cr_lf_signatures_have_no_digest_mismatch(shared, pki, rel):
    path = shared / "reference" / "corpus" / rel
    v = verify_file(path, pki.permissions_ca)
    assert not any("content digest mismatch" in p for p in v.problems), v.problems
    assert not any("MIME message of type text/plain" in p for p in v.problems), v.problems


def test_corpus_bad_signature_is_a_digest_mismatch(shared, pki):
    # INDEX.tsv: "Test_Permissions_unknown_ca.p7s: the S/MIME signature itself does not verify"
    path = shared / "reference" / "corpus" / "cyclonedds" / "Test_Permissions_unknown_ca.p7s"
    v = verify_file(path, pki.permissions_ca)
    assert not v.ok
    assert any("content digest mismatch" in p or "signature does not verify" in p
               for p in v.problems)


def test_many_files_against_a_ca_file_of_two_certificates_get_the_full_verdicts(pki, tmp_path):
    """verify over many files (verify_batch's fast path learns layouts) gives each file
    the full check's verdict per target when the CA file holds several certificates."""
    from govkit.smime.verify_batch import verify_files
    xml = tmp_path / "pub.xml"
    xml.write_bytes(PermissionsDocument.for_participant(pki, "pub", runner_info("ddsperf"))
                    .render())
    files = []
    for i in range(4):
        files.append(tmp_path / f"p{i}.p7s")
        files[-1].write_bytes(sign_document(xml, pki.permissions_ca,
                                            pki.permissions_ca_key).read_bytes())
    for order in (("identity_ca", "permissions_ca"), ("permissions_ca", "identity_ca")):
        ca_file = tmp_path / f"{order[0]}-first.pem"
        ca_file.write_bytes(b"".join((pki.directory / f"{n}.pem").read_bytes() for n in order))
        got = verify_files(files, load_trusted(ca_file), processes=1)
        want = [verify_file(f, ca_file) for f in files]
        assert [g.to_json() for g in got] == [w.to_json() for w in want]
        assert all(w.ok for w in want)   # openssl -CAfile trusts both
        assert {w.targets()["cyclone"] for w in want} == {order[0] == "permissions_ca"}
