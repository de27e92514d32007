"""govkit lint: every rule against a hand-made document that breaks it and one that does not
(tests/data/lint/GKnnn.bad.xml and GKnnn.ok.xml), targets, signed files, the CLI.

A bad fixture marks each line a finding must point at with `<!-- expect GKnnn -->`; the
first comment may carry `lint: ...` options (ca, target=NAME, budget=N). Every
fixture is linted as of NOW, with the certificates of `identities` when it says `ca`.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from typer.testing import CliRunner

from govkit.catalog.targets import TARGETS, VENDOR_TARGETS
from govkit.check.lint import LintOptions, lint_bytes
from govkit.check.rules import registry
from govkit.check.rules.engine import lint_findings, selected_rules
from govkit.check.rules.registry import RULES
from govkit.check.validate import check_bytes
from govkit.cli.main import app
from govkit.pki.names import load_identities
from govkit.pki.testpki import TestPKI
from govkit.smime.sign import sign_bytes

DATA = Path(__file__).resolve().parent.parent / "data" / "lint"
NOW = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
ORG = "govkit test PKI"


def _cert(directory: Path, stem: str, names: list[tuple], ca: bool = False, key=None,
          issuer=None) -> x509.Certificate:
    key = key or ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(oid, value) for oid, value in names])
    issuer_name, signer = issuer or (name, key)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(issuer_name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(dt.datetime(2025, 1, 1, tzinfo=dt.UTC))
            .not_valid_after(dt.datetime(2035, 1, 1, tzinfo=dt.UTC))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
            .sign(signer, hashes.SHA256()))
    (directory / f"{stem}.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return cert


@pytest.fixture(scope="module")
def identities(tmp_path_factory) -> Path:
    """pub and sub (subjects CN=...,O=govkit test PKI in RFC 2253, valid 2025-2035), a CA
    certificate (never a grant's subject) and a key file lint must skip."""
    d = tmp_path_factory.mktemp("ids")
    for cn in ("pub", "sub"):
        _cert(d, cn, [(NameOID.ORGANIZATION_NAME, ORG), (NameOID.COMMON_NAME, cn)])
    # The Identity CA issued "gone" and revoked it on its CRL (GK216).
    ca_key = ec.generate_private_key(ec.SECP256R1())
    _cert(d, "identity_ca", [(NameOID.COMMON_NAME, "CA")], ca=True, key=ca_key)
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "CA")])
    gone = _cert(d, "gone", [(NameOID.ORGANIZATION_NAME, ORG), (NameOID.COMMON_NAME, "gone")],
                 issuer=(ca_name, ca_key))
    crl = (x509.CertificateRevocationListBuilder().issuer_name(ca_name)
           .last_update(dt.datetime(2025, 1, 1, tzinfo=dt.UTC))
           .next_update(dt.datetime(2035, 1, 1, tzinfo=dt.UTC))
           .add_revoked_certificate(x509.RevokedCertificateBuilder()
                                    .serial_number(gone.serial_number)
                                    .revocation_date(dt.datetime(2025, 6, 1, tzinfo=dt.UTC))
                                    .build())
           .sign(ca_key, hashes.SHA256()))
    (d / "identity_ca.crl.pem").write_bytes(crl.public_bytes(serialization.Encoding.PEM))
    # govkit's own PKI writes CN first: its RFC 2253 string is "O=...,CN=..."
    _cert(d, "reversed", [(NameOID.COMMON_NAME, "rev"), (NameOID.ORGANIZATION_NAME, ORG)])
    (d / "pub.key").write_text("not a certificate")
    return d


def fixture_options(text: str) -> dict[str, str]:
    m = re.search(r"lint:([^>]*)-->", text.split("\n", 2)[1])
    words = m.group(1).split() if m else []
    return dict(w.split("=", 1) if "=" in w else (w, "yes") for w in words)


def lint_text(text: str, name: str, ca: Path | None = None, target: str = "omg",
              rules: list[str] | None = None):
    identities = load_identities(ca) if ca else None
    return lint_bytes(text.encode(), name, LintOptions(target=target, now=NOW),
                      selected_rules(rules or [], []), identities, str(ca or ""))


def lint_fixture(path: Path, identities: Path, monkeypatch):
    text = path.read_text()
    opts = fixture_options(text)
    if "budget" in opts:
        monkeypatch.setattr(registry, "WORK_BUDGET", int(opts["budget"]))
    return text, lint_text(text, path.name, identities if "ca" in opts else None,
                           opts.get("target", "omg"))


RULE_IDS = sorted(RULES)


def test_every_rule_has_both_fixtures_and_nothing_else_is_there():
    names = {p.name for p in DATA.glob("*.xml")}
    assert names == {f"{r}.{k}.xml" for r in RULE_IDS for k in ("bad", "ok")}


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_bad_fixture_fires_where_marked(rule_id, identities, monkeypatch):
    text, report = lint_fixture(DATA / f"{rule_id}.bad.xml", identities, monkeypatch)
    lines = text.split("\n")
    expected = [n for n, line in enumerate(lines, 1) if f"expect {rule_id}" in line]
    got = [f for f in report.findings if f.rule == rule_id]
    assert expected and sorted(f.line for f in got) == expected, report.findings
    for f in got:
        assert f.severity == RULES[rule_id].severity or RULES[rule_id].note, f
        assert f.why == RULES[rule_id].why and not f.message.endswith(".")
        at = lines[f.line - 1][f.column - 1:]
        if rule_id == "GK004":   # a suppression: the comment itself
            assert at.startswith("<!-- govkit: ignore"), (str(f), at)
        elif rule_id != "GK001":   # a syntax error's column is where the parser stopped
            assert at.startswith("<") and not at.startswith("<!--"), (str(f), at)


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_ok_fixture_is_clean(rule_id, identities, monkeypatch):
    _, report = lint_fixture(DATA / f"{rule_id}.ok.xml", identities, monkeypatch)
    assert report.findings == [], [str(f) for f in report.findings]


def test_rules_are_data_with_a_why_and_an_example():
    assert len(RULES) >= 25
    for r in RULES.values():
        assert re.fullmatch(r"GK\d{3}", r.id) and r.name and r.why and r.example
        assert not r.why.endswith(".")
        assert r.check is not None or r.id in {"GK001", "GK002", "GK003", "GK004", "GK301",
                                               "GK302"}
    assert len({r.name for r in RULES.values()}) == len(RULES)


def test_validate_runs_its_six_rules_from_the_registry():
    assert {r.id for r in RULES.values() if r.validate} == {
        "GK010", "GK011", "GK100", "GK200", "GK201", "GK303"}
    data = (DATA / "GK010.bad.xml").read_bytes()
    check = check_bytes(data, "p.xml", target="cyclone")
    why = ("its access-control parser refuses any domain id above 230 in a governance or "
           "permissions document, so the document does not load")
    assert [f.message for f in check.findings] == [
        f"GK010 error: domain id 231 in <id> is above 230, the highest domain id Cyclone DDS "
        f"0.10 accepts ({why})",
        f"GK010 error: domain id 233 in <max> is above 230, the highest domain id Cyclone DDS "
        f"0.10 accepts ({why})"]
    assert check.warnings == []
    assert lint_findings(check.document, check.kind, "cyclone") == (check.findings, [])
    # the default target, omg: 231 is a warning naming Cyclone DDS 0.10, 233 an error
    omg = check_bytes(data, "p.xml")
    assert [f.message.split(":")[0] for f in omg.findings + omg.warnings] == [
        "GK010 error", "GK010 warning"]
    assert "Cyclone DDS 0.10" in omg.warnings[0].message and "232" in omg.findings[0].message


# --------------------------------------------------------------------------- targets


def _only(report, rule_id):
    return [f for f in report.findings if f.rule == rule_id]


def test_domain_limits_per_target():
    text = (DATA / "GK010.bad.xml").read_text()
    omg = _only(lint_text(text, "p.xml"), "GK010")
    assert [(f.severity, "Cyclone DDS" in f.message) for f in omg] == [
        ("warning", True), ("error", False)]
    assert [f.severity for f in _only(lint_text(text, "p.xml", target="cyclone"), "GK010")] \
        == ["error", "error"]
    for target in ("fastdds", "connext"):
        assert [f.line for f in _only(lint_text(text, "p.xml", target=target), "GK010")] \
            == [omg[1].line]


def _with_subject(subject: str) -> str:
    return (DATA / "GK202.ok.xml").read_text().replace(
        "CN=pub,O=govkit test PKI</subject_name>", f"{subject}</subject_name>")


@pytest.mark.parametrize(("subject", "target", "expect"), [
    # a space after the comma: the same DN, Cyclone compares tokens verbatim
    ("CN=pub, O=govkit test PKI", "omg", [("GK203", "warning")]),
    ("CN=pub, O=govkit test PKI", "cyclone", [("GK203", "error")]),
    ("CN=pub, O=govkit test PKI", "connext", []),
    # the /-form lists the most significant first: the same DN in the other order of
    # writing, fine for Cyclone's tokens, refused by Fast DDS's ordered comparison
    ("/O=govkit test PKI/CN=pub", "omg", [("GK203", "warning")]),
    ("/O=govkit test PKI/CN=pub", "fastdds", [("GK203", "error")]),
    ("/O=govkit test PKI/CN=pub", "cyclone", []),
    ("cn=PUB,o=govkit  test pki", "connext", []),       # DN matching ignores case, spaces
    # the reversed RFC 2253 order is another DN; Cyclone's tokens still accept it
    ("O=govkit test PKI,CN=pub", "omg", [("GK202", "error")]),
    ("O=govkit test PKI,CN=pub", "cyclone", []),
    ("O=govkit test PKI,CN=pub", "fastdds", [("GK202", "error")]),
])
def test_subject_comparison_per_target(identities, subject, target, expect):
    report = lint_text(_with_subject(subject), "p.xml", identities, target)
    got = [(f.rule, f.severity) for f in report.findings if f.rule in ("GK202", "GK203")]
    assert got == expect, [str(f) for f in report.findings]


def test_subject_unknown_says_what_is_known(identities):
    (f,) = _only(lint_text(_with_subject("O=govkit test PKI,CN=pub"), "p.xml", identities),
                 "GK202")
    assert "pub.pem has the same attributes in the reverse order" in f.message
    assert "Cyclone DDS would still match it to pub.pem" in f.message
    assert "identity_ca" not in f.message   # CA certificates are not identities


def test_govkit_pki_subjects_match(pki_dir):
    """govkit's own permissions subject (RFC 2253 of a CN-first certificate) is clean."""
    subject = TestPKI(pki_dir).certificate("pub").subject.rfc4514_string()
    report = lint_text(_with_subject(subject), "p.xml", pki_dir, "cyclone")
    assert _only(report, "GK202") == [] and _only(report, "GK203") == []


def test_subject_whitespace_is_an_error_for_cyclone_only():
    text = (DATA / "GK205.bad.xml").read_text()
    assert [f.severity for f in _only(lint_text(text, "p.xml", target="cyclone"), "GK205")] \
        == ["error"]
    assert _only(lint_text(text, "p.xml", target="fastdds"), "GK205") == []


def test_lenient_booleans_and_extensions_are_schema_errors_for_omg():
    for rule_id, target in (("GK301", "cyclone"), ("GK302", "connext")):
        text = (DATA / f"{rule_id}.bad.xml").read_text()
        own = lint_text(text, "g.xml", target=target)
        assert _only(own, "GK002") == [], own.findings      # the target reads it all
        omg = lint_text(text, "g.xml")
        assert _only(omg, rule_id) == [] and len(_only(omg, "GK002")) == 1
    # Fast DDS's tinyxml2 takes True but not tRuE
    text = (DATA / "GK301.bad.xml").read_text()
    assert _only(lint_text(text.replace(">TRUE<", ">True<"), "g.xml", target="fastdds"),
                 "GK301")
    assert _only(lint_text(text.replace(">TRUE<", ">tRuE<"), "g.xml", target="fastdds"),
                 "GK002")
    # ... and integers, in ASCII digits only: "²".isdigit() holds, int("²") raised (exit 3,
    # issue 37 item 15)
    assert _only(lint_text(text.replace(">TRUE<", ">2<"), "g.xml", target="fastdds"), "GK301")
    for odd in ("\u00b2", "+\u00b2", "\u0663"):
        assert _only(lint_text(text.replace(">TRUE<", f">{odd}<"), "g.xml", target="fastdds"),
                     "GK002")


def test_errors_after_an_extension_are_still_found():
    # libxml2 stops at the first error in a parent; read as Connext reads it, the
    # misspelt kind after the extension is reported too
    text = (DATA / "GK302.bad.xml").read_text().replace(
        "<rtps_protection_kind>SIGN<", "<rtps_protection_kind>SIGNED<")
    report = lint_text(text, "g.xml", target="connext")
    assert [f.rule for f in report.findings] == ["GK302", "GK002"]
    assert "SIGNED" in report.findings[1].message


def test_structural_rules_wait_for_a_valid_document():
    text = (DATA / "GK101.bad.xml").read_text().replace(">NONE<", ">none<", 1)
    text = text.replace("<rtps_protection_kind>SIGN<", "<rtps_protection_kind>sign<")
    report = lint_text(text, "g.xml")
    assert _only(report, "GK002") and not _only(report, "GK101")


# --------------------------------------------------------------------------- selection


def test_select_and_ignore():
    ids = [r.id for r in selected_rules(["GK2"], ["GK21", "validity-expired"])]
    assert ids and all(i.startswith("GK2") and not i.startswith("GK21") for i in ids)
    assert "GK206" not in ids
    assert [r.id for r in selected_rules(["GK101,GK100"], [])] == ["GK100", "GK101"]
    assert len(selected_rules(["ALL"], [])) == len(RULES)
    with pytest.raises(Exception, match="unknown rule 'GK999'"):
        selected_rules(["GK999"], [])


# --------------------------------------------------------------------------- signed files


def test_signed_file_positions_point_into_the_p7s(tmp_path, pki_dir):
    xml = (DATA / "GK101.bad.xml").read_bytes()
    cert, key = TestPKI(pki_dir).key_pair("permissions_ca")
    signed = sign_bytes(xml, cert, key)
    path = tmp_path / "g.p7s"
    path.write_bytes(signed)
    report = lint_text(signed.decode(), str(path))
    (f,) = _only(report, "GK101")
    line = signed.decode().replace("\r", "").split("\n")[f.line - 1]
    assert "expect GK101" in line and line[f.column - 1:].startswith("<topic_expression")
    assert f.line > xml.decode().split("\n").index(line) + 1


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args: str):
        result = runner.invoke(app, list(args))
        assert "Traceback" not in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit), \
            repr(result.exception)
        return result
    return invoke


def test_cli_exit_codes_and_fail_on(run, tmp_path):
    assert run("lint", str(DATA / "GK101.ok.xml")).exit_code == 0
    bad = str(DATA / "GK101.bad.xml")            # a warning only
    assert run("lint", bad).exit_code == 0
    assert run("lint", "--fail-on", "warning", bad).exit_code == 1
    assert run("lint", str(DATA / "GK002.bad.xml")).exit_code == 1
    result = run("lint", str(DATA / "GK101.ok.xml"), str(tmp_path / "missing.xml"))
    assert result.exit_code == 2 and "missing.xml" in result.stderr
    assert run("lint", "--select", "GK999", bad).exit_code == 2
    assert run("lint").exit_code == 2
    assert run("lint", "--ca", str(tmp_path / "nowhere"), bad).exit_code == 2
    assert run("lint", "--target", "opendds", bad).exit_code == 2


def test_cli_text_and_json(run):
    bad = str(DATA / "GK101.bad.xml")
    result = run("lint", bad)
    line = next(x for x in result.stdout.splitlines() if "GK101" in x)
    assert re.match(rf"{re.escape(bad)}:\d+:\d+: GK101 warning: topic_rule 'Square' never "
                    r"applies: .*\. Topic rules are evaluated in order", line)
    assert result.stdout.splitlines()[-1] == "1 file(s), target omg: 1 warning"
    data = json.loads(run("lint", "--json", "--ignore", "GK10", bad).stdout)
    assert data["schema"] == "govkit.lint/1" and data["target"] == "omg"
    assert data["summary"] == {"error": 0, "warning": 0, "info": 0, "files": 1,
                               "unreadable": 0, "suppressed": 0}
    (f,) = json.loads(run("lint", "--json", bad).stdout)["files"][0]["findings"]
    assert set(f) == {"file", "line", "column", "rule", "name", "severity", "message", "why"}


def test_cli_rules_listing(run):
    text = run("lint", "--rules").stdout
    for r in RULES.values():
        assert f"{r.id} {r.severity:<7} {r.name}" in text
    data = json.loads(run("lint", "--rules", "--json").stdout)
    assert [r["id"] for r in data["rules"]] == RULE_IDS


@pytest.mark.parametrize(("option", "choices"), [
    ("--target", "[omg|cyclone|cyclone11|connext|fastdds]"), ("--fail-on", "[error|warning|info]")])
def test_cli_choices_are_shown(option, choices):
    # on a wide terminal (on 80 columns rich folds the longer one over two lines)
    result = CliRunner().invoke(app, ["lint", "--help"], env={"COLUMNS": "160"})
    line = next(x for x in result.stdout.splitlines() if option in x)
    assert choices in line


# --------------------------------------------------------------------------- corpus


def test_reference_corpus_lints_without_crashing(shared):
    corpus = shared / "reference" / "corpus"
    files = sorted(p for p in corpus.rglob("*") if p.is_file()
                   and p.name not in ("INDEX.tsv", "README.md"))
    assert len(files) == 80
    for target in ("omg", "cyclone", "connext", "fastdds"):
        result = CliRunner().invoke(app, ["lint", "--json", "--target", target,
                                          *map(str, files)])
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert result.exit_code in (0, 1), result.output[-2000:]
        data = json.loads(result.stdout)
        assert len(data["files"]) == 80 and data["summary"]["unreadable"] == 0
    # known real problems, found: the OMG interop governance's TRUE/FALSE, Cyclone's
    # domain 430, RTI's medtech log-topic rule behind '*'
    by_file = {Path(f["file"]).name: {x["rule"] for x in f["findings"]}
               for f in json.loads(CliRunner().invoke(
                   app, ["lint", "--json", *map(str, files)]).stdout)["files"]}
    assert "GK002" in by_file["TESTONLY_governance.xml"]
    assert "GK010" in by_file["Test_Permissions_invalid_data.xml"]
    assert "GK101" in by_file["OperationalDomain.xml"]
    assert "GK001" in by_file["example_governance.xml"]


def test_lint_counts_days_as_explain_and_pki_status_do(tmp_path):
    """Whole days that have passed, never rounded up: a grant that expired 3 days and 20
    hours before NOW expired '3 days ago' in lint as in explain (which said 3 while lint
    said 4: the corpus's Test_Permissions_expired.xml was '3730' and '3731 days ago')."""
    from govkit.check.explain import explain_document
    from govkit.check.loaded import load_document

    text = (DATA.parent / "schema" / "valid_permissions.xml").read_text()
    na = NOW - dt.timedelta(days=3, hours=20)
    nb = NOW + dt.timedelta(days=5, hours=20)
    expired = re.sub(r"<not_after>[^<]*<", f"<not_after>{na:%Y-%m-%dT%H:%M:%SZ}<", text)
    early = re.sub(r"<not_before>[^<]*<", f"<not_before>{nb:%Y-%m-%dT%H:%M:%SZ}<", text)
    for doc, rule, says in ((expired, "GK206", " is 3 days ago"),
                            (early, "GK207", " is in 5 days")):
        messages = [f.message for f in lint_text(doc, "p.xml").findings if f.rule == rule]
        assert messages and all(says in m for m in messages), messages
    path = tmp_path / "p.xml"
    path.write_text(expired)
    statuses = {g["status"] for g in explain_document(load_document(path), now=NOW)["grants"]}
    assert statuses == {"expired 3 days ago"}


def test_vendor_facts_of_2026_are_the_target_tables():
    """issue 37: Fast DDS before its 2026 fixes (2.9.1 included) crashes on an empty
    topic_expression, <dds> or not_after (CVE-2026-45094/5/6); signed payloads unpadded
    until 2026-08 (eProsima/Fast-DDS#6498); keeps a peer past its certificate's expiry
    (CVE-2025-67108); Cyclone DDS 11 trims subject tokens and takes the Permissions CA
    alone as signer. Each is a row's data (govkit.catalog.targets), read by the rules."""
    fast, cyclone = TARGETS["fastdds"], TARGETS["cyclone"]
    assert fast.crashes_on_empty == {"topic_expression", "dds", "not_after"}
    assert "CVE-2026-45094" in fast.crash_source and "6498" in fast.unpadded_payload_sign
    assert "CVE-2025-67108" in fast.keeps_expired_peers
    assert cyclone.permissions_signer == "chain" and cyclone.later.permissions_signer == "ca"
    assert cyclone.later.subject_trims and "1552" in cyclone.later.source
    assert not any(t.unpadded_payload_sign or t.keeps_expired_peers
                   for t in TARGETS.values() if t.name != "fastdds")
    # Cyclone's crashes (both versions, tests/runners/test_cyclone11.py) cite the run
    assert {t.name for t in TARGETS.values() if t.crashes_on_empty} == \
        {"fastdds", "cyclone", "cyclone11"}
    perm = (DATA / "GK210.ok.xml").read_text().replace(
        "<not_after>2034-01-01T00:00:00Z</not_after>", "<not_after> </not_after>")
    for target, severity in (("fastdds", "error"), ("omg", "warning"), ("cyclone", None)):
        got = _only(lint_text(perm, "p.xml", target=target), "GK303")
        assert [f.severity for f in got] == ([severity] if severity else []), target
        if severity:
            assert "<not_after> is empty: Fast DDS crashes reading it (CVE-2026-45094" \
                in got[0].message
    # validate and sign say it under --target fastdds, as lint does (of a schema-valid
    # document: an empty not_after is no xs:dateTime, refused before)
    check = check_bytes((DATA / "GK303.bad.xml").read_bytes(), "g.xml", target="fastdds")
    assert any("GK303 error: <topic_expression> is empty" in f.message
               for f in check.findings)
    empty = lint_text('<?xml version="1.0"?>\n<dds/>\n', "e.xml", target="cyclone")
    assert "empty, it crashes eProsima Fast DDS 2.9 (CVE-2026-45094" in \
        empty.findings[0].message and empty.findings[0].rule == "GK001"
    spaced = (DATA / "GK205.bad.xml").read_text()
    (hit,) = _only(lint_text(spaced, "p.xml", target="cyclone"), "GK205")
    assert hit.message.endswith("(Cyclone DDS 11 trims the spaces and accepts it)")


def test_fast_dds_2_9_keeps_a_peer_past_its_certificate(identities):
    text = (DATA / "GK209.bad.xml").read_text()
    for target, said in (("fastdds", True), ("omg", True), ("cyclone", False)):
        got = [f for f in _only(lint_text(text, "p.xml", identities, target=target),
                                "GK209") if "not_after" in f.message]
        assert got and all(("keeps a participant matched past its certificate's notAfter"
                            in f.message) == said for f in got), target


def test_cyclone11_is_cyclone_with_its_later_release_applied():
    """--target cyclone11 (Cyclone DDS 11.0.1, run from ../shared/vendor): the cyclone row with
    what its `later` says differs (subject trimming, the Permissions CA alone as signer,
    topic creation per action), every other fact the base's, checked in 11's source and run
    (tests/runners/test_cyclone11.py); not among the implementations --target omg lists,
    which says 11's differences beside 0.10's verdicts."""
    base, c11 = TARGETS["cyclone"], TARGETS["cyclone11"]
    assert (c11.subject_trims, c11.permissions_signer, c11.topic_creation) == (True, "ca",
                                                                             "either")
    assert (base.subject_trims, base.permissions_signer, base.topic_creation) == (False,
                                                                                "chain",
                                                                                "first")
    for fact in base.later.keeps:
        assert getattr(c11, fact) == getattr(base, fact), fact
    assert c11.release_of == "cyclone" and c11.later is None
    assert "cyclone11" not in {t.name for t in VENDOR_TARGETS}
    assert list(TARGETS) == ["omg", "cyclone", "cyclone11", "connext", "fastdds"]


def test_lint_target_cyclone11_verdicts():
    """Each fact of 11 read by the rules under --target cyclone11, beside 0.10's."""
    spaced = (DATA / "GK205.bad.xml").read_text()
    assert _only(lint_text(spaced, "p.xml", target="cyclone"), "GK205")
    assert not _only(lint_text(spaced, "p.xml", target="cyclone11"), "GK205")
    first = (DATA / "GK218.bad.xml").read_text()
    for target, hits in (("omg", 1), ("cyclone", 1), ("cyclone11", 0), ("fastdds", 0)):
        got = _only(lint_text(first, "p.xml", target=target), "GK218")
        assert len(got) == hits, target
    (hit,) = _only(lint_text(first, "p.xml", target="omg"), "GK218")
    assert "deny_rule on line 11 (subscribe)" in hit.message
    assert hit.message.endswith("(Cyclone DDS 11 decides per action and creates it)")
    # an empty <topic> crashes both Cyclone releases once a topic reaches it
    perm = (DATA / "GK218.ok.xml").read_text().replace("<topic>Status</topic>",
                                                        "<topic></topic>")
    for target, severity in (("cyclone", "error"), ("cyclone11", "error"), ("omg", "warning"),
                             ("fastdds", None)):
        got = _only(lint_text(perm, "p.xml", target=target), "GK303")
        assert [f.severity for f in got] == ([severity] if severity else []), target
        if severity:
            assert "<topic> is empty: Cyclone DDS" in got[0].message
            assert "SIGSEGV" in got[0].message
