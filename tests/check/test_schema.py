"""govkit.check.validate: safe parsing, friendly schema findings with real positions,
S/MIME, lint."""

from __future__ import annotations

import datetime as dt
import json
import random
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs7
from cryptography.x509.oid import NameOID
from lxml import etree

from govkit.check import xsd
from govkit.check.validate import check_file, document_kind, signed_document, validate_bytes
from govkit.common.errors import GovkitError
from govkit.common.findings import DocumentError, DocumentKind, Finding
from govkit.common.limits import MAX_DOCUMENT_BYTES
from govkit.documents import parse


def parse_document(data: bytes, filename: str):
    """The root of a plain XML document, parsed the safe way (DocumentError otherwise)."""
    return parse.parse_xml(data, filename).root


def unwrap_smime(data: bytes) -> tuple[bytes, int] | None:
    """(document, line offset) of an S/MIME file as OpenSSL reads it; None if it is not
    one OpenSSL would read."""
    try:
        inner = signed_document(data, "x.p7s")
    except DocumentError:
        return None
    return inner.data, inner.line_offset

DATA = Path(__file__).resolve().parent.parent / "data" / "schema"
PROTECTION_KINDS = ("ENCRYPT_WITH_ORIGIN_AUTHENTICATION, SIGN_WITH_ORIGIN_AUTHENTICATION, "
                    "ENCRYPT, SIGN, NONE")
BOOLEAN_RULE = "is not an xs:boolean; allowed: true, false, 1, 0"


def read(name: str) -> bytes:
    return (DATA / name).read_bytes()


def line_of(data: bytes, line: int) -> str:
    return data.decode("utf-8").split("\n")[line - 1]


def assert_points_at(data: bytes, finding: Finding, element: str) -> None:
    """The finding's line:column is the '<' of an `element` start tag in `data`."""
    text = line_of(data, finding.line)
    assert text[finding.column - 1:].startswith(f"<{element}"), (str(finding), text)


def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


# --------------------------------------------------------------------------- S/MIME helpers

_SIGNER: tuple | None = None


def _signer():
    global _SIGNER
    if _SIGNER is None:
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "govkit schema test")])
        now = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                .public_key(key.public_key()).serial_number(1).not_valid_before(now)
                .not_valid_after(now + dt.timedelta(days=3650)).sign(key, hashes.SHA256()))
        _SIGNER = (cert, key)
    return _SIGNER


def smime_sign(xml: bytes) -> bytes:
    """Real detached S/MIME signature, as `openssl smime -sign -text` produces it."""
    cert, key = _signer()
    return (pkcs7.PKCS7SignatureBuilder().set_data(xml)
            .add_signer(cert, key, hashes.SHA256())
            .sign(serialization.Encoding.SMIME,
                  [pkcs7.PKCS7Options.DetachedSignature, pkcs7.PKCS7Options.Text]))


def body_offset(wrapper: bytes) -> int:
    """Lines before the signed XML in a wrapper (found independently of govkit)."""
    lines = wrapper.split(b"\n")
    for i, line in enumerate(lines):
        if line.lstrip().startswith((b"<?xml", b"<dds")):
            return i
    raise AssertionError("no XML in wrapper")


# --------------------------------------------------------------------------- Finding


def test_finding_format_and_json():
    f = Finding("a/b.xml", 3, 7, "x: broken")
    assert str(f) == "a/b.xml:3:7: x: broken"
    assert f.to_json() == {"file": "a/b.xml", "line": 3, "column": 7, "message": "x: broken"}
    json.dumps(f.to_json())
    with pytest.raises(AttributeError):
        f.line = 4  # frozen


# --------------------------------------------------------------------------- seed listings


def test_seed_original_authentication_typo():
    data = read("seed_perftest_metadata_original_auth.xml")
    findings = validate_bytes(data, "gov.xml")
    assert len(findings) == 1
    (f,) = findings
    assert (f.file, f.line, f.column) == ("gov.xml", 23, 13)
    assert f.message.startswith(
        "metadata_protection_kind: 'ENCRYPT_WITH_ORIGINAL_AUTHENTICATION' is not a valid "
        f"ProtectionKind; allowed: {PROTECTION_KINDS}")
    assert "did you mean ENCRYPT_WITH_ORIGIN_AUTHENTICATION" in f.message
    assert_points_at(data, f, "metadata_protection_kind")


def test_seed_uppercase_booleans_and_missing_liveliness():
    data = read("seed_perftest_no_protection.xml")
    findings = validate_bytes(data, "gov.xml")
    got = [(f.line, f.column, f.message.split(":")[0]) for f in findings]
    assert got == [
        (9, 9, "allow_unauthenticated_participants"),
        (10, 9, "enable_join_access_control"),
        (17, 13, "enable_discovery_protection"),
        (18, 13, "enable_read_access_control"),
    ]
    assert findings[0].message.startswith(
        f"allow_unauthenticated_participants: 'TRUE' {BOOLEAN_RULE}")
    assert f"'FALSE' {BOOLEAN_RULE}" in findings[1].message
    assert f"'FALSE' {BOOLEAN_RULE}" in findings[2].message
    missing = findings[3].message
    assert "expected enable_liveliness_protection" in missing
    assert "enable_liveliness_protection is missing" in missing
    for f, (_, _, name) in zip(findings, got, strict=True):
        assert_points_at(data, f, name)


@pytest.mark.parametrize("name", [
    "seed_perftest_rtps_sign.xml",
    "seed_perftest_rtps_sign_origin_auth_data_encrypt.xml",
    "seed_perftest_metadata_encrypt_origin_auth.xml",
    "valid_governance.xml",
    "valid_permissions.xml",
])
def test_valid_documents(name):
    assert validate_bytes(read(name), name) == []
    assert check_file(DATA / name).findings == []


# --------------------------------------------------------------------------- schema rules

def _edit(name: str, old: str, new: str, count: int = 1) -> bytes:
    text = read(name).decode()
    assert old in text
    return text.replace(old, new, count).encode()


def _only(data: bytes) -> Finding:
    findings = validate_bytes(data, "doc.xml")
    assert len(findings) == 1, findings
    return findings[0]


def test_out_of_order_domain_rule_children():
    data = _edit("valid_governance.xml",
                 "      <discovery_protection_kind>ENCRYPT_WITH_ORIGIN_AUTHENTICATION"
                 "</discovery_protection_kind>\n"
                 "      <liveliness_protection_kind>SIGN_WITH_ORIGIN_AUTHENTICATION"
                 "</liveliness_protection_kind>\n",
                 "      <liveliness_protection_kind>SIGN_WITH_ORIGIN_AUTHENTICATION"
                 "</liveliness_protection_kind>\n"
                 "      <discovery_protection_kind>ENCRYPT_WITH_ORIGIN_AUTHENTICATION"
                 "</discovery_protection_kind>\n")
    f = _only(data)
    assert f.message.startswith("liveliness_protection_kind: out of order; "
                                "expected discovery_protection_kind")
    assert_points_at(data, f, "liveliness_protection_kind")


def test_basic_protection_kind_rejects_origin_authentication():
    data = _edit("valid_governance.xml", "<data_protection_kind>ENCRYPT</data_protection_kind>",
                 "<data_protection_kind>ENCRYPT_WITH_ORIGIN_AUTHENTICATION</data_protection_kind>")
    f = _only(data)
    assert f.message.startswith(
        "data_protection_kind: 'ENCRYPT_WITH_ORIGIN_AUTHENTICATION' is not a valid "
        "BasicProtectionKind; allowed: ENCRYPT, SIGN, NONE")


def test_enumeration_case_and_whitespace_hints():
    f = _only(_edit("valid_governance.xml", "<rtps_protection_kind>NONE<",
                    "<rtps_protection_kind>none<"))
    assert "'none' is not a valid ProtectionKind" in f.message
    assert "case-sensitive" in f.message and "NONE" in f.message
    f = _only(_edit("valid_governance.xml", "<rtps_protection_kind>NONE<",
                    "<rtps_protection_kind> NONE <"))
    assert "' NONE ' is not a valid ProtectionKind" in f.message
    assert "whitespace" in f.message


def test_default_action_and_missing_grant_name():
    f = _only(_edit("valid_permissions.xml", "<default>DENY</default>", "<default>deny</default>"))
    assert f.message.startswith(
        "default: 'deny' is not a valid DefaultAction; allowed: ALLOW, DENY")
    data = _edit("valid_permissions.xml", '<grant name="JoinOnly">', "<grant>")
    f = _only(data)
    assert f.message == "grant: missing required attribute 'name'"
    assert_points_at(data, f, "grant")


def test_datetime_and_domain_id_values():
    f = _only(_edit("valid_permissions.xml", "2034-01-01T00:00:00<", "2034-01-01<"))
    assert f.message.startswith("not_after: '2034-01-01' is not an xs:dateTime")
    f = _only(_edit("valid_permissions.xml", "<id>1</id>", "<id>-1</id>"))
    assert f.message.startswith("id: '-1' is not a valid domain id")


def test_publish_subscribe_interleaving_and_missing_topics():
    data = _edit("valid_permissions.xml", "<subscribe><topics><topic>Secret</topic></topics>"
                 "</subscribe>",
                 "<subscribe><topics><topic>Secret</topic></topics></subscribe>"
                 "<publish><topics><topic>X</topic></topics></publish>")
    f = _only(data)
    assert f.message.startswith("publish: ")
    assert "relay" in f.message
    data = _edit("valid_permissions.xml", "<relay>\n          <topics><topic>Relayed*</topic>"
                 "</topics>\n        </relay>", "<relay><partitions><partition>p</partition>"
                 "</partitions></relay>")
    f = _only(data)
    assert f.message == "relay: missing child element; expected topics (required)"


def test_unknown_and_extension_elements():
    data = _edit("valid_governance.xml", "      <discovery_protection_kind>",
                 "      <enable_key_revision>true</enable_key_revision>\n"
                 "      <discovery_protection_kind>")
    f = _only(data)
    assert f.message.startswith("enable_key_revision: unexpected element; "
                                "expected discovery_protection_kind")
    assert "not part of DDS Security 1.1" in f.message
    assert_points_at(data, f, "enable_key_revision")
    f = _only(_edit("valid_permissions.xml", "<domains><id>1</id></domains>",
                    '<domains must_interpret="false"><id>1</id></domains>'))
    assert f.message == "domains: attribute 'must_interpret' is not allowed"
    f = _only(_edit("valid_permissions.xml", "<domains><id>1</id></domains>",
                    "<domains>1<id>1</id></domains>"))
    assert f.message.startswith("domains: text is not allowed here")
    f = _only(_edit("valid_permissions.xml", "<domains><id>1</id></domains>",
                    "<domains><id><x/></id></domains>"))
    assert f.message.startswith("id: child elements are not allowed")


def test_two_errors_on_one_line_get_distinct_columns():
    data = _edit("valid_permissions.xml", "<domains><id>1</id></domains>",
                 "<domains><id>x</id><id>y</id></domains>")
    findings = validate_bytes(data, "doc.xml")
    assert [f.message.split(";")[0] for f in findings] == ["id: 'x' is not a valid domain id",
                                                           "id: 'y' is not a valid domain id"]
    assert findings[0].line == findings[1].line
    assert findings[0].column < findings[1].column
    for f in findings:
        assert_points_at(data, f, "id")


def test_multiline_start_tag_is_located_at_its_first_line():
    data = (b'<?xml version="1.0"?>\n<dds\n  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
            b'\n  xsi:noNamespaceSchemaLocation="x.xsd"\n  >\n</dds>\n')
    f = _only(data)  # no kind detectable from <dds/>, but the file name says nothing either
    assert (f.line, f.column) == (2, 1)
    findings = validate_bytes(data, "my_permissions.xml")
    assert [(x.line, x.column, x.message) for x in findings] == [
        (2, 1, "dds: missing child element; expected permissions")]


def test_crlf_and_tabs_positions():
    data = read("seed_perftest_metadata_original_auth.xml").replace(b"\n", b"\r\n")
    data = data.replace(b"            <metadata", b"\t\t\t<metadata")
    f = _only(data)
    assert (f.line, f.column) == (23, 4)


def test_namespaced_root():
    data = read("valid_permissions.xml").replace(b"<dds ", b'<dds xmlns="urn:x" ', 1)
    f = _only(data)
    assert "namespace" in f.message
    assert_points_at(data, f, "dds")


# --------------------------------------------------------------------------- kinds


def test_document_kind_detection_and_override():
    assert document_kind(parse_document(read("valid_governance.xml"), "g")) \
        is DocumentKind.GOVERNANCE
    root = parse_document(read("valid_permissions.xml"), "p")
    assert document_kind(root) is DocumentKind.PERMISSIONS
    assert document_kind(root.getroottree()) is DocumentKind.PERMISSIONS
    assert DocumentKind("governance") is DocumentKind.GOVERNANCE
    assert DocumentKind.PERMISSIONS == "permissions"
    with pytest.raises(DocumentError) as e:
        document_kind(parse_document(b"<dds><foo/></dds>", "x.xml"))
    assert "cannot tell the document kind" in e.value.findings[0].message
    f = _only(b"<dds><foo/></dds>")
    assert "cannot tell the document kind" in f.message
    f = validate_bytes(read("valid_governance.xml"), "g.xml", DocumentKind.PERMISSIONS)[0]
    assert f.message.startswith("domain_access_rules: unexpected element; expected permissions")
    assert validate_bytes(read("valid_governance.xml"), "g.xml", "governance") == []


# --------------------------------------------------------------------------- hostile input


@pytest.mark.parametrize("name", ["xxe_file.xml", "xxe_http.xml", "xxe_parameter_entity.xml",
                                  "billion_laughs.xml"])
def test_dtds_are_refused_quickly_and_offline(name, monkeypatch):
    no_network(monkeypatch)
    data = read(name)
    start = time.monotonic()
    findings = validate_bytes(data, name)
    assert time.monotonic() - start < 1.0
    assert [(f.line, f.column, f.message) for f in findings] == [
        (2, 1, "DTD/DOCTYPE is not allowed in a DDS Security document")]
    with pytest.raises(DocumentError):
        parse_document(data, name)
    assert "root:" not in str(findings)


@pytest.mark.parametrize("name", ["xxe_file.xml", "xxe_http.xml", "xxe_parameter_entity.xml",
                                  "billion_laughs.xml"])
def test_dtds_are_refused_even_if_the_text_scan_misses_them(name, monkeypatch):
    """Defence in depth: the parser itself is configured safely and the tree is checked."""
    no_network(monkeypatch)
    monkeypatch.setattr(parse, "decode_source", lambda data: "")
    start = time.monotonic()
    findings = validate_bytes(read(name), name)
    assert time.monotonic() - start < 1.0
    assert len(findings) == 1
    assert "DTD/DOCTYPE is not allowed" in findings[0].message or \
        "not well-formed" in findings[0].message
    assert "root:" not in findings[0].message


def test_dtd_in_utf16_is_refused():
    data = read("xxe_file.xml").decode().replace("UTF-8", "UTF-16").encode("utf-16")
    assert "DTD/DOCTYPE" in _only(data).message


def test_doctype_inside_a_comment_is_harmless():
    data = read("valid_permissions.xml").replace(b"<dds ", b"<!-- <!DOCTYPE x> -->\n<dds ", 1)
    assert validate_bytes(data, "p.xml") == []


def test_oversize_input(tmp_path):
    big = b"<dds>" + b" " * MAX_DOCUMENT_BYTES + b"</dds>"
    f = _only(big)
    assert "too large" in f.message and str(MAX_DOCUMENT_BYTES) in f.message
    with pytest.raises(DocumentError):
        parse_document(big, "big.xml")
    path = tmp_path / "big.xml"
    path.write_bytes(big)
    with pytest.raises(GovkitError) as e:
        check_file(path)
    assert e.value.exit_code == 2


@pytest.mark.parametrize("data", [
    b"",
    b"   \n",
    b"hello world",
    b"\x00\xff\xfe\x01garbage",
    b"<dds><permissions>",
    b"<dds></permissions></dds>",
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    bytes(random.Random(7).randrange(256) for _ in range(4096)),
    b"<?xml version='1.0' encoding='no-such-codec'?><dds/>",
])
def test_garbage_gives_one_not_well_formed_finding(data):
    findings = validate_bytes(data, "junk.xml")
    assert len(findings) == 1
    assert findings[0].line >= 1 and findings[0].column >= 1
    assert findings[0].message.startswith("not well-formed XML")
    with pytest.raises(DocumentError):
        parse_document(data, "junk.xml")


def test_syntax_error_position():
    data = b"<dds>\n  <permissions>\n  </dds>\n"
    f = _only(data)
    assert f.line == 3 and f.message.startswith("not well-formed XML: ")


def test_check_file_errors(tmp_path):
    with pytest.raises(GovkitError) as e:
        check_file(tmp_path / "missing.xml")
    assert e.value.exit_code == 2 and "missing.xml" in str(e.value)
    with pytest.raises(GovkitError) as e:
        check_file(tmp_path)
    assert e.value.exit_code == 2


# --------------------------------------------------------------------------- S/MIME


def test_smime_valid_document(tmp_path):
    xml = read("valid_permissions.xml")
    wrapped = smime_sign(xml)
    body, offset = unwrap_smime(wrapped)
    assert body.replace(b"\r\n", b"\n") == xml
    assert offset == body_offset(wrapped)
    assert not body.startswith(b"Content-Type")
    assert validate_bytes(wrapped, "p.p7s") == []
    path = tmp_path / "p.p7s"
    path.write_bytes(wrapped)
    assert check_file(path).findings == []


@pytest.mark.parametrize("newline", [b"\r\n", b"\n", b"\r\r\n"])
def test_smime_invalid_document_lines_point_into_the_p7s(tmp_path, newline):
    xml = read("seed_perftest_no_protection.xml")
    wrapped = smime_sign(xml).replace(b"\r\n", b"\n").replace(b"\n", newline)
    path = tmp_path / "gov.p7s"
    path.write_bytes(wrapped)
    findings = check_file(path).findings
    offset = body_offset(wrapped)
    assert offset > 0
    assert [(f.line, f.column) for f in findings] == [
        (9 + offset, 9), (10 + offset, 9), (17 + offset, 13), (18 + offset, 13)]
    assert findings[0].file == str(path)
    for f, name in zip(findings, ["allow_unauthenticated_participants",
                                  "enable_join_access_control", "enable_discovery_protection",
                                  "enable_read_access_control"], strict=True):
        assert_points_at(wrapped.replace(b"\r", b""), f, name)


def test_smime_syntax_error_line_is_shifted():
    wrapped = smime_sign(b"<dds>\n<permissions>\n</dds>\n")
    offset = body_offset(wrapped)
    f = _only(wrapped)
    assert f.line == 3 + offset
    assert f.message.startswith("not well-formed XML")


def test_smime_without_a_text_header_is_refused_like_openssl():
    # Signed without -text: the first part has no "Content-Type: text/plain" header, which
    # PKCS7_TEXT (OpenSSL, Cyclone DDS) refuses; validate says why instead of guessing.
    xml = read("valid_governance.xml")
    wrapped = (b'MIME-Version: 1.0\nContent-Type: multipart/signed; protocol="application/'
               b'x-pkcs7-signature"; micalg="sha-256"; boundary="XyZ"\n\n'
               b"This is an S/MIME signed message\n\n--XyZ\n" + xml + b"\n--XyZ\n"
               b"Content-Type: application/x-pkcs7-signature\n\nAAAA\n\n--XyZ--\n")
    assert unwrap_smime(wrapped) is None
    f = _only(wrapped)
    assert (f.line, f.column) == (1, 1)
    assert f.message.startswith("S/MIME: ") and "text/plain" in f.message


def test_smime_part_headers_and_parameters():
    xml = read("valid_governance.xml")
    wrapped = (b'Content-Type: multipart/signed; boundary="XyZ"\n\n--XyZ\n'
               b"Content-Type: text/plain; charset=utf-8\nX-Note: kept out\n\n" + xml +
               b"\n--XyZ\nContent-Type: application/pkcs7-signature\n\nAAAA\n--XyZ--\n")
    body, offset = unwrap_smime(wrapped)
    assert body.replace(b"\r\n", b"\n") == xml and offset == 6
    assert validate_bytes(wrapped, "g.p7s") == []


def test_not_smime():
    assert unwrap_smime(read("valid_governance.xml")) is None
    assert unwrap_smime(b"") is None
    assert unwrap_smime(b"Subject: hi\n\nbody") is None
    f = _only(b"Subject: hi\nContent-Type: text/plain\n\nbody")
    assert "multipart/signed" in f.message
    truncated = (b"MIME-Version: 1.0\nContent-Type: application/pkcs7-mime; "
                 b"smime-type=signed-data; name=\"smime.p7m\"\nContent-Transfer-Encoding: "
                 b"base64\n\nMIAGCSqGSIb3DQEHAqCAMIACAQEx\n")
    assert unwrap_smime(truncated) is None
    assert "ASN.1" in _only(truncated).message
    broken = smime_sign(read("valid_governance.xml"))
    broken = broken[:broken.index(b"\r\n--", 200)]  # cut before the closing boundary
    assert unwrap_smime(broken) is None
    assert "boundary" in _only(broken).message
    plain_only = validate_bytes(smime_sign(read("valid_governance.xml")), "g.p7s",
                                allow_smime=False)
    assert len(plain_only) == 1 and "not a plain XML document" in plain_only[0].message


def test_opaque_smime_is_validated_inside(tmp_path):
    # `openssl smime -sign -nodetach`: the document is base64 inside the signature.
    # OpenSSL and Cyclone read it; validate reports lines of the signed content.
    cert, key = _signer()
    (tmp_path / "c.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "k.pem").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    opaque = subprocess.run(
        ["openssl", "smime", "-sign", "-nodetach", "-text", "-md", "sha256", "-signer",
         str(tmp_path / "c.pem"), "-inkey", str(tmp_path / "k.pem"), "-in",
         str(DATA / "seed_perftest_no_protection.xml")],
        check=True, capture_output=True, timeout=30).stdout
    assert b"application/x-pkcs7-mime" in opaque
    findings = validate_bytes(opaque, "g.p7m")
    assert [(f.file, f.line, f.column) for f in findings] == [
        ("g.p7m (signed content)", 9, 9), ("g.p7m (signed content)", 10, 9),
        ("g.p7m (signed content)", 17, 13), ("g.p7m (signed content)", 18, 13)]


# --------------------------------------------------------------------------- lint


def test_lint_permissions_rules():
    data = read("lint_permissions.xml")
    findings = validate_bytes(data, "perm.xml", target="cyclone")
    got = [(f.line, f.message.split(":")[0]) for f in findings]
    assert got == [
        (9, "GK200 error"),        # validity-order
        (13, "GK010 error"),       # domain-range
        (14, "GK011 error"),       # id-range-order
        (15, "GK010 error"),
        (20, "GK201 error"),       # duplicate-grant-name
    ]
    assert "231" in findings[1].message and "230" in findings[1].message
    assert "Cyclone DDS" in findings[1].message
    assert "line 5" in findings[4].message
    for f, name in zip(findings, ["not_after", "id", "id_range", "max", "grant"], strict=True):
        assert_points_at(data, f, name)


def test_lint_governance_empty_topic_expression():
    data = read("lint_governance_empty_topic.xml")
    f = _only(data)
    assert f.message.startswith("GK100 error: ")   # empty-topic-expression
    assert_points_at(data, f, "topic_expression")


def test_lint_runs_only_on_schema_valid_documents():
    data = read("lint_permissions.xml").replace(b"<default>DENY</default>",
                                                b"<default>NOPE</default>", 1)
    findings = validate_bytes(data, "perm.xml")
    assert findings and not any(re.match(r"GK\d{3} ", f.message) for f in findings)


def test_lint_open_ended_ranges_and_boundaries_are_fine():
    data = _edit("valid_permissions.xml", "<id>1</id>",
                 "<id>230</id><id_range><min>230</min></id_range>"
                 "<id_range><min>5</min><max>5</max></id_range>")
    assert validate_bytes(data, "p.xml") == []


def test_lint_validity_with_large_years_and_fractions():
    data = _edit("valid_permissions.xml", "<not_after>2034-01-01T00:00:00</not_after>",
                 "<not_after>12024-01-01T00:00:00.5</not_after>")
    assert validate_bytes(data, "p.xml") == []
    data = _edit("valid_permissions.xml", "<not_after>2034-01-01T00:00:00</not_after>",
                 "<not_after>2024-01-01T00:00:00.000</not_after>")
    assert _only(data).message.startswith("GK200 error: ")   # validity-order


def test_many_errors_are_capped():
    rules = "".join(
        f"<domain_rule><domains><id>{i}</id></domains></domain_rule>" for i in range(300))
    data = f"<dds><domain_access_rules>{rules}</domain_access_rules></dds>".encode()
    findings = validate_bytes(data, "g.xml")
    assert len(findings) == xsd.MAX_FINDINGS + 1
    assert "more not shown" in findings[-1].message


def test_parse_document_returns_a_plain_tree():
    root = parse_document(read("valid_permissions.xml"), "p.xml")
    assert isinstance(root, etree._Element) and root.tag == "dds"


def test_duplicate_and_wrong_case_elements():
    f = _only(_edit("valid_governance.xml",
                    "<enable_join_access_control>1</enable_join_access_control>",
                    "<enable_join_access_control>1</enable_join_access_control>"
                    "<enable_join_access_control>1</enable_join_access_control>"))
    assert f.message == ("enable_join_access_control: duplicate element; "
                         "expected discovery_protection_kind here")
    f = _only(_edit("valid_governance.xml",
                    "<enable_liveliness_protection>0</enable_liveliness_protection>",
                    "<Enable_liveliness_protection>0</Enable_liveliness_protection>"))
    assert "expected enable_liveliness_protection" in f.message
    assert "case-sensitive" in f.message


def test_datetime_with_surrounding_whitespace_is_explained():
    # XSD collapses whitespace in xs:dateTime, libxml2 (and so govkit and xmllint) does not.
    f = _only(_edit("valid_permissions.xml", "<not_after>2034-01-01T00:00:00<",
                    "<not_after> 2034-01-01T00:00:00 <"))
    assert "surrounding whitespace" in f.message
