"""Generated governance and permissions documents: exact content, layout, validity, writing."""

from __future__ import annotations

import datetime as dt

import pytest
from helpers.documents import render_all
from lxml import etree

from govkit.catalog.profiles import PROFILES, SECURED_PROFILES, get_profile
from govkit.catalog.runners import RUNNERS, runner_info
from govkit.check import validate
from govkit.common.errors import GovkitError
from govkit.common.limits import MAX_DOMAIN_ID
from govkit.documents.render import DomainSet, GovernanceDocument, PermissionsDocument
from govkit.generate import fleet, grants
from govkit.generate.fleet import write_document
from govkit.pki.issuance import init_pki
from govkit.pki.testpki import TestPKI

XSI = "http://www.w3.org/2001/XMLSchema-instance"
GOV_XSD = "http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_governance.xsd"
PERM_XSD = "http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_permissions.xsd"

# The table: allow_unauthenticated_participants, rtps, metadata, data.
PROFILE_VALUES = {
    "no_protection": ("true", "NONE", "NONE", "NONE"),
    "rtps_sign": ("false", "SIGN", "NONE", "NONE"),
    "rtps_encrypt": ("false", "ENCRYPT", "NONE", "NONE"),
    "sign_origin_data_encrypt": ("false", "SIGN_WITH_ORIGIN_AUTHENTICATION", "NONE", "ENCRYPT"),
    "sign_submsg_encrypt_origin_data_encrypt": ("false", "SIGN",
                                                "ENCRYPT_WITH_ORIGIN_AUTHENTICATION", "ENCRYPT"),
    "sign_submsg_encrypt": ("false", "SIGN", "ENCRYPT", "NONE"),
}
BOOLEAN_ELEMENTS = {"allow_unauthenticated_participants", "enable_join_access_control",
                    "enable_discovery_protection", "enable_liveliness_protection",
                    "enable_read_access_control", "enable_write_access_control"}
DDSPERF_TOPICS = ["DDSPerfRDataKS", "DDSPerfRPingKS", "DDSPerfRPongKS", "DDSPerfCPUStats"]
PERFTEST_TOPICS = ["Throughput", "Latency", "Announcement"]


def _parse(data: bytes):
    return etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True))


def _elements(root) -> list[tuple[int, str, str | None]]:
    """(depth, tag, text of leaves) of every element in document order."""
    out = []

    def walk(el, depth):
        text = el.text if len(el) == 0 else None
        out.append((depth, el.tag, text))
        for child in el:
            if isinstance(child.tag, str):
                walk(child, depth + 1)

    walk(root, 0)
    return out


def _expected_governance(name: str) -> list[tuple[int, str, str | None]]:
    allow, rtps, metadata, data = PROFILE_VALUES[name]
    return [
        (0, "dds", None),
        (1, "domain_access_rules", None),
        (2, "domain_rule", None),
        (3, "domains", None),
        (4, "id_range", None),
        (5, "min", "0"),
        (5, "max", "230"),
        (3, "allow_unauthenticated_participants", allow),
        (3, "enable_join_access_control", "false"),
        (3, "discovery_protection_kind", "NONE"),
        (3, "liveliness_protection_kind", "NONE"),
        (3, "rtps_protection_kind", rtps),
        (3, "topic_access_rules", None),
        (4, "topic_rule", None),
        (5, "topic_expression", "*"),
        (5, "enable_discovery_protection", "false"),
        (5, "enable_liveliness_protection", "false"),
        (5, "enable_read_access_control", "false"),
        (5, "enable_write_access_control", "false"),
        (5, "metadata_protection_kind", metadata),
        (5, "data_protection_kind", data),
    ]


def _xml_time(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def pki(pki_dir) -> TestPKI:
    return TestPKI(pki_dir)


# ------------------------------------------------------------------ governance


def test_every_secured_profile_is_covered():
    assert {p.name for p in SECURED_PROFILES} == set(PROFILE_VALUES)


@pytest.mark.parametrize("name", list(PROFILE_VALUES))
def test_governance_content_and_order_exactly(name):
    data = GovernanceDocument(get_profile(name)).render()
    root = _parse(data)
    assert _elements(root) == _expected_governance(name)


@pytest.mark.parametrize("name", list(PROFILE_VALUES))
def test_governance_form(name):
    data = GovernanceDocument(get_profile(name)).render()
    assert data.startswith(b'<?xml version="1.0" encoding="UTF-8"?>')
    root = _parse(data)
    assert root.tag == "dds"  # no namespace on the root
    assert None not in root.nsmap  # no default namespace anywhere it could be inherited
    assert all(not el.tag.startswith("{") for el in root.iter(etree.Element))
    assert root.get(f"{{{XSI}}}noNamespaceSchemaLocation") == GOV_XSD
    for el in root.iter(*BOOLEAN_ELEMENTS):
        assert el.text in ("true", "false"), (el.tag, el.text)
    assert b"TRUE" not in data and b"FALSE" not in data
    assert len(root.findall("domain_access_rules/domain_rule")) == 1
    assert len(root.findall(".//topic_rule")) == 1
    assert validate.validate_bytes(data, f"{name}.xml") == []


def test_baseline_has_no_governance():
    with pytest.raises(GovkitError, match="no governance"):
        GovernanceDocument(get_profile("none")).render()


@pytest.mark.parametrize(("text", "ranges", "xml"), [
    ("0", ((0, 0),), [("id", "0")]),
    ("0-10", ((0, 10),), [("id_range", ("0", "10"))]),
    ("0,3-7", ((0, 0), (3, 7)), [("id", "0"), ("id_range", ("3", "7"))]),
    (" 5 - 9 , 230", ((5, 9), (230, 230)), [("id_range", ("5", "9")), ("id", "230")]),
    ("0-230", ((0, 230),), [("id_range", ("0", "230"))]),
    ("7-7", ((7, 7),), [("id", "7")]),
])
def test_domain_set_parse_and_render(text, ranges, xml):
    domains = DomainSet.parse(text)
    assert domains.ranges == ranges
    data = GovernanceDocument(get_profile("rtps_sign"), domains).render()
    root = _parse(data)
    items = []
    for item in root.find("domain_access_rules/domain_rule/domains"):
        if item.tag == "id":
            items.append(("id", item.text))
        else:
            assert [c.tag for c in item] == ["min", "max"]  # always an explicit max
            items.append(("id_range", (item.findtext("min"), item.findtext("max"))))
    assert items == xml
    assert validate.validate_bytes(data, "governance.xml") == []


def test_domain_set_membership_and_default():
    d = DomainSet.parse("0,3-7")
    assert 0 in d and 3 in d and 7 in d
    assert 1 not in d and 8 not in d
    assert DomainSet().ranges == ((0, MAX_DOMAIN_ID),)
    assert MAX_DOMAIN_ID == 230


@pytest.mark.parametrize("text", ["231", "0-231", "5-2", "x", "", "1,", "-1", "1-", "0..3",
                                  "1 2", "0x10", "3-7-9"])
def test_domain_set_parse_errors(text):
    with pytest.raises(GovkitError, match="invalid --domain"):
        DomainSet.parse(text)


def test_every_id_range_has_an_explicit_max(pki):
    docs = [data for _, data in render_all()]
    docs.append(PermissionsDocument.for_participant(pki, "pub", RUNNERS["ddsperf"],
                                                    DomainSet.parse("0,3-7")).render())
    ranges = 0
    for data in docs:
        for id_range in _parse(data).iter("id_range"):
            ranges += 1
            assert [c.tag for c in id_range] == ["min", "max"]
            assert int(id_range.findtext("min")) <= int(id_range.findtext("max")) <= 230
    assert ranges >= len(docs)


# ------------------------------------------------------------------ permissions


@pytest.mark.parametrize(("runner", "topics"), [("ddsperf", DDSPERF_TOPICS),
                                                ("perftest", PERFTEST_TOPICS)])
@pytest.mark.parametrize("participant", ["pub", "sub"])
def test_permissions_document(pki, runner, topics, participant):
    doc = PermissionsDocument.for_participant(pki, participant, runner_info(runner))
    data = doc.render()
    root = _parse(data)
    cert = pki.certificate(participant)
    assert root.tag == "dds" and None not in root.nsmap
    assert root.get(f"{{{XSI}}}noNamespaceSchemaLocation") == PERM_XSD
    grants = root.findall("permissions/grant")
    assert len(grants) == 1
    grant = grants[0]
    assert grant.get("name") == participant
    assert [c.tag for c in grant] == ["subject_name", "validity", "allow_rule", "default"]
    assert grant.findtext("subject_name") == cert.subject.rfc4514_string()
    assert grant.findtext("subject_name") == f"O=govkit test PKI,CN={participant}"
    nb = _xml_time(grant.findtext("validity/not_before"))
    na = _xml_time(grant.findtext("validity/not_after"))
    assert cert.not_valid_before_utc <= nb < na <= cert.not_valid_after_utc
    rule = grant.find("allow_rule")
    assert [c.tag for c in rule] == ["domains", "publish", "subscribe"]  # publish first
    id_range = rule.find("domains/id_range")
    assert (id_range.findtext("min"), id_range.findtext("max")) == ("0", "230")
    for action in ("publish", "subscribe"):
        el = rule.find(action)
        assert [c.tag for c in el] == ["topics", "partitions"]
        assert [t.text for t in el.findall("topics/topic")] == topics
        assert [p.text for p in el.findall("partitions/partition")] == ["*"]
    assert grant.findtext("default") == "DENY"
    assert root.find(".//deny_rule") is None
    assert validate.validate_bytes(data, f"{participant}.xml") == []
    assert validate.check_bytes(data, "p.xml").kind is validate.DocumentKind.PERMISSIONS


def test_permissions_explicit_validity_and_domains(pki):
    a = dt.datetime(2030, 1, 2, 3, 4, 5, 999, tzinfo=dt.UTC)
    b = dt.datetime(2030, 2, 1, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    doc = PermissionsDocument.for_participant(pki, "pub", runner_info("perftest"),
                                              DomainSet.parse("4"), validity=(a, b))
    root = _parse(doc.render())
    assert root.findtext(".//not_before") == "2030-01-02T03:04:05Z"
    assert root.findtext(".//not_after") == "2030-01-31T22:00:00Z"  # converted to UTC
    assert [(e.tag, e.text) for e in root.find(".//allow_rule/domains")] == [("id", "4")]


def test_unknown_runner():
    with pytest.raises(GovkitError, match="ddsperf"):
        runner_info("connext")


def test_every_rendered_document_validates():
    docs = render_all()
    assert len(docs) >= len(SECURED_PROFILES) + 2
    for name, data in docs:
        assert validate.validate_bytes(data, name) == [], name
        expected = "governance" if name.startswith("governance/") else "permissions"
        assert validate.check_bytes(data, name).kind.value == expected


# ------------------------------------------------------------------ generate / write


def generate(profiles, pki, out_dir, domains=None, runner="ddsperf"):
    """`govkit generate`'s engine, in this process (so a patched render is what it renders);
    its first error raised, as the command reports it."""
    result = fleet.generate(profiles, pki, out_dir, domains or DomainSet(), runner,
                            processes=1)
    if result.errors:
        raise result.errors[0]
    return result.written


def test_generate_writes_one_file_per_profile_and_participant(pki, tmp_path):
    written = generate(list(PROFILES), pki, tmp_path / "build")
    expected = ([tmp_path / "build" / "governance" / f"{p.name}.xml" for p in SECURED_PROFILES]
                + [tmp_path / "build" / "permissions" / f"{n}.xml" for n in ("pub", "sub")])
    assert written == expected
    # beside them, generate's record of who wrote each grant (govkit.generate.grants)
    assert sorted(p for p in (tmp_path / "build").rglob("*") if p.is_file()) == sorted(
        [*expected, tmp_path / "build" / "permissions" / grants.RECORD])
    assert not (tmp_path / "build" / "governance" / "none.xml").exists()
    for path in written:
        assert validate.check_file(path).findings == [], path
    for p in SECURED_PROFILES:
        path = tmp_path / "build" / "governance" / f"{p.name}.xml"
        assert path.read_bytes() == GovernanceDocument(p).render()


def test_generate_none_writes_no_governance(pki, tmp_path):
    written = generate([get_profile("none")], pki, tmp_path / "build", runner="perftest")
    assert not (tmp_path / "build" / "governance").exists()
    assert [p.name for p in written] == ["pub.xml", "sub.xml"]
    topics = [t.text for t in _parse(written[0].read_bytes()).iter("topic")]
    assert topics == PERFTEST_TOPICS * 2


def test_generate_needs_participants(tmp_path):
    pki, _ = init_pki(tmp_path / "pki", participants=[])
    with pytest.raises(GovkitError, match="no participant identities"):
        generate([get_profile("rtps_sign")], pki, tmp_path / "build")


def test_generate_unknown_runner_writes_nothing(pki, tmp_path):
    with pytest.raises(GovkitError):
        generate([get_profile("rtps_sign")], pki, tmp_path / "build", runner="nope")
    assert not (tmp_path / "build").exists()


def test_invalid_governance_is_never_written(monkeypatch, tmp_path, pki):
    good = GovernanceDocument.render

    def broken(self):
        return good(self).replace(
            b"<enable_join_access_control>false<", b"<enable_join_access_control>TRUE<")

    monkeypatch.setattr(GovernanceDocument, "render", broken)
    target = tmp_path / "governance" / "rtps_sign.xml"
    with pytest.raises(GovkitError) as info:
        write_document(GovernanceDocument(get_profile("rtps_sign")), target)
    assert info.value.exit_code == 1
    assert "TRUE" in str(info.value)
    assert not target.exists()
    assert not target.parent.exists() or list(target.parent.iterdir()) == []

    # An existing (valid) file is not replaced either; `govkit generate` reports the error
    # and still writes the documents that are valid (the per-file path it replaced stopped
    # at the first error, leaving no permissions: keeping completed work is the rule).
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"previous")
    with pytest.raises(GovkitError):
        generate([get_profile("rtps_sign")], pki, tmp_path)
    assert target.read_bytes() == b"previous"
    assert sorted(p.name for p in target.parent.iterdir()) == ["rtps_sign.xml"]
    written = sorted(p for p in (tmp_path / "permissions").iterdir()
                     if p.name != grants.RECORD)
    assert [p.name for p in written] == ["pub.xml", "sub.xml"]
    assert all(validate.check_file(p).findings == [] for p in written)


def test_invalid_permissions_is_never_written(monkeypatch, tmp_path, pki):
    good = PermissionsDocument.render
    monkeypatch.setattr(PermissionsDocument, "render",
                        lambda self: good(self).replace(b">DENY<", b">deny<"))
    doc = PermissionsDocument.for_participant(pki, "pub", runner_info("ddsperf"))
    target = tmp_path / "permissions" / "pub.xml"
    with pytest.raises(GovkitError, match="deny"):
        write_document(doc, target)
    assert not target.exists()


def test_lint_problem_is_never_written(tmp_path):
    # DomainSet.parse refuses ids above 230; a hand-made DomainSet reaches the lint rule,
    # whose warning (Cyclone DDS 0.10 refuses 231) refuses a document govkit writes.
    doc = GovernanceDocument(get_profile("rtps_sign"), DomainSet(((0, 231),)))
    target = tmp_path / "g.xml"
    with pytest.raises(GovkitError, match="GK010 warning: .*Cyclone DDS 0.10"):
        write_document(doc, target)
    assert not target.exists()


def test_a_file_name_that_is_not_utf8_does_not_make_a_document_malformed(pki, tmp_path):
    # A name's undecodable bytes reach Python as surrogate escapes, which lxml's base_url
    # refused: validate, lint, explain and verify called a valid document "not well-formed
    # XML: 'utf-8' codec can't encode character '\udcff'" (a false verdict). The real CLI,
    # as the name is printed too (typer's test runner cannot print it).
    import os
    import subprocess
    import sys
    from pathlib import Path

    from govkit.smime.sign import sign_document
    govkit = os.fsencode(Path(sys.executable).with_name("govkit"))
    name = tmp_path / os.fsdecode(b"g\xff.xml")
    name.write_bytes(GovernanceDocument(get_profile("rtps_sign")).render())
    sign_document(name, pki.path("permissions_ca"), pki.path("permissions_ca", ".key"))
    p7s, ca = os.fsencode(name.with_suffix(".p7s")), os.fsencode(pki.directory)
    for args in ([b"validate", os.fsencode(name)], [b"lint", os.fsencode(name)],
                 [b"explain", os.fsencode(name)], [b"identify", os.fsencode(name)],
                 [b"verify", b"--ca", ca, p7s]):
        r = subprocess.run([govkit, *args], capture_output=True, timeout=60)
        assert r.returncode == 0 and b"well-formed" not in r.stdout + r.stderr, (args, r)
    broken = tmp_path / os.fsdecode(b"b\xfe.xml")
    broken.write_bytes(b"<dds>")
    r = subprocess.run([govkit, b"validate", os.fsencode(broken)], capture_output=True,
                       timeout=60)
    assert r.returncode == 1 and b"not well-formed XML" in r.stdout
    assert b"codec" not in r.stdout + r.stderr
