"""`govkit generate --policy`: permissions that decide exactly as sros2's own transform, one
governance from the protection sidecar, and a policy or sidecar that does not check refused
with one FILE:LINE:COLUMN line per problem, nothing written.

The oracle is sros2 itself (release 0.13.0, ../shared/reference/sros2): its policy.xsd, and
its permissions.xsl run with lxml, offline, on the policy as libxml2 expands it. govkit's
documents are compared with sros2's by what they decide (every topic either mentions, for
publish and subscribe) and by their rules' topic sets."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers.cli import govkit
from helpers.sros2 import (
    decisions,
    expanded,
    grants_by_subject,
    policy_schema,
    rule_sets,
    sros2_dir,
    sros2_permissions,
    topics_of,
)
from lxml import etree

from govkit.common.findings import DocumentKind
from govkit.documents.access import topic_rule_for
from govkit.documents.model import build_model

DATA = Path(__file__).resolve().parents[1] / "data" / "ros2"
SROS2_POLICIES = ("add_two_ints", "minimal_action", "sample", "single_context",
                  "talker_listener")
# names no policy mentions, so that a grant too wide shows
PROBES = ("rt/secret", "rt/robot/camera/raw", "rq/other/get_parametersRequest", "rt/")


def _generate(policy: Path, root: Path, *extra: str):
    return govkit("generate", "--policy", str(policy), "--ca", str(root / "pki"), "--out",
                str(root / "build"), "--domain", "0", "--sign", *extra)


def _ours(root: Path, enclave: str):
    path = root / "build" / "permissions" / f"{enclave.replace('/', '+')}.xml"
    tree = etree.parse(str(path))
    (grant,) = build_model(tree.getroot(), DocumentKind.PERMISSIONS).grants
    return tree.getroot(), grant


def _assert_same_as_sros2(shared: Path, policy: Path, root: Path) -> int:
    """Every enclave's govkit grant decides as sros2's for every name either mentions;
    returns how many (enclave, action, name) decisions were compared."""
    theirs_root = sros2_permissions(shared, policy)
    theirs = grants_by_subject(theirs_root)
    compared = 0
    for enclave, (grant,) in theirs.items():
        ours_root, ours = _ours(root, enclave)
        names = topics_of(theirs_root) | topics_of(ours_root) | set(PROBES)
        assert decisions(ours, names) == decisions(grant, names), enclave
        assert rule_sets(ours) == rule_sets(grant), enclave
        assert ours.name == enclave and ours.default.value == "DENY"
        compared += 2 * len(names)
    written = {p.stem for p in (root / "build" / "permissions").glob("*.xml")}
    assert written == {e.replace("/", "+") for e in theirs}
    return compared


def _omg_valid(shared: Path, path: Path, kind: str) -> None:
    xsd = etree.XMLSchema(etree.parse(str(shared / "reference" / "xsd" / "omg-1.1" /
                                          f"omg_shared_ca_{kind}.xsd")))
    assert xsd.validate(etree.parse(str(path))), (path, xsd.error_log)


def _openssl_verifies(p7s: Path, ca: Path) -> None:
    done = subprocess.run(["openssl", "smime", "-verify", "-in", str(p7s), "-CAfile",
                           str(ca), "-no-CApath", "-no-CAstore", "-text", "-out", "/dev/null"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, (p7s, done.stderr)


def _check_outputs(shared: Path, root: Path) -> None:
    for xml in (root / "build").rglob("*.xml"):
        _omg_valid(shared, xml, xml.parent.name)
        _openssl_verifies(xml.with_suffix(".p7s"), root / "pki" / "permissions_ca.pem")


# --------------------------------------------------------------------------- the oracle


@pytest.mark.parametrize("name", SROS2_POLICIES)
def test_the_oracle_is_sros2s_own_expected_output(shared, name):
    """Run as here (without rmw's discovery topic), the transform gives the permissions
    sros2's own tests expect: the oracle is run right."""
    policies = sros2_dir(shared) / "policies"
    ours = grants_by_subject(sros2_permissions(shared, policies / f"{name}.policy.xml",
                                               discovery=False))
    expected = grants_by_subject(etree.parse(str(
        policies / "permissions" / name / "permissions.xml")).getroot())
    assert ours.keys() == expected.keys()
    for cn, (grant,) in ours.items():
        assert rule_sets(grant) == rule_sets(expected[cn][0])


@pytest.mark.parametrize("name", SROS2_POLICIES)
def test_grants_decide_exactly_as_sros2s_transform(shared, tmp_path, name):
    policy = sros2_dir(shared) / "policies" / f"{name}.policy.xml"
    result = _generate(policy, tmp_path)
    assert result.exit_code == 0, result.output
    assert _assert_same_as_sros2(shared, policy, tmp_path) > 100
    _check_outputs(shared, tmp_path)


TWO_PROFILES = """\
<policy version="0.2.0">
  <enclaves>
    <enclave path="/two">
      <profiles>
        <profile ns="/" node="a">
          <topics publish="ALLOW"><topic>x</topic></topics>
          <topics subscribe="DENY"><topic>y</topic></topics>
        </profile>
      </profiles>
      <profiles>
        <profile ns="/" node="b">
          <topics subscribe="ALLOW"><topic>y</topic><topic>z</topic></topics>
          <services reply="ALLOW"><service>s</service></services>
        </profile>
      </profiles>
    </enclave>
  </enclaves>
</policy>
"""


def test_two_profiles_elements_are_one_grant_where_sros2_writes_two(shared, tmp_path):
    """The divergence ros_policy.py documents, against sros2's own output: for an enclave
    with two <profiles>, sros2's transform writes two grants for one subject (DDS Security
    1.1 does not say which applies); govkit writes one, whose rules are the union of the
    two, DENY first: it allows a name when one of sros2's grants allows it and none
    denies it (so rt/y, which one denies and the other allows, is denied)."""
    policy = tmp_path / "two.policy.xml"
    policy.write_text(TWO_PROFILES)
    assert policy_schema(shared).validate(expanded(policy))
    (theirs_a, theirs_b), = grants_by_subject(sros2_permissions(shared, policy)).values()
    result = _generate(policy, tmp_path)
    assert result.exit_code == 0, result.output
    _, ours = _ours(tmp_path, "/two")
    union: dict = {}
    for grant in (theirs_a, theirs_b):
        for key, names in rule_sets(grant).items():
            union.setdefault(key, set()).update(names)
    assert rule_sets(ours) == union
    names = sorted(topics_of(sros2_permissions(shared, policy)) | set(PROBES))
    a, b, merged = (decisions(g, names) for g in (theirs_a, theirs_b, ours))
    for key in merged:
        some_allow = a[key] or b[key]
        some_deny = any(key[1] in rule_sets(g).get(("deny", key[0]), ()) for g in
                        (theirs_a, theirs_b))
        assert merged[key] == (some_allow and not some_deny), key
    assert merged[("subscribe", "rt/y")] is False and b[("subscribe", "rt/y")] is True
    assert merged[("subscribe", "rt/z")] is True and a[("subscribe", "rt/z")] is False


def test_govkits_policy_schema_accepts_what_sros2s_accepts(shared, tmp_path):
    """The same verdict as sros2's policy.xsd on its test policies and on altered copies
    (each alteration one way a policy can be wrong)."""
    theirs = policy_schema(shared)
    ours = etree.XMLSchema(etree.parse(str(Path(__file__).resolve().parents[2] / "schemas" /
                                           "sros2_policy.xsd")))
    copied = tmp_path / "policies"
    shutil.copytree(sros2_dir(shared) / "policies", copied)
    policies = sorted(copied.glob("*.policy.xml"))
    changes = [("", ""), ('version="0.2.0"', 'version="0.3.0"'),
               ('publish="ALLOW"', 'publish="allow"'), ('ns="/"', 'nss="/"'),
               ('<topics publish="ALLOW" >', '<topics publish="ALLOW" subscribe="MAYBE">'),
               ("<topic>chatter</topic>", "<topic>chatter</topic><bad/>"),
               ('<enclave path=', '<enclave pth='),
               ('reply="ALLOW"', 'reply="ALLOW" extra="1"'),
               ('<profiles>', '<profiles type="x">'), ("</profile>", "<metadata/></profile>"),
               ("</profile>\n      </profiles>",
                "</profile>\n<metadata><protection/></metadata>\n      </profiles>"),
               ("<topic>chatter</topic>", ""), ('<xi:include', '<bad/><xi:include')]
    checked = 0
    for policy in policies:
        text = policy.read_text()
        for old, new in changes:
            if old not in text:
                continue
            copy = policy.parent / "altered.xml"
            copy.write_text(text.replace(old, new, 1))
            tree = expanded(copy)
            assert ours.validate(tree) == theirs.validate(tree), (policy.name, old, new)
            checked += 1
    assert checked > 30


# --------------------------------------------------------------------------- acceptance

ACCEPTANCE = DATA / "acceptance.policy.xml"
SIDECAR = DATA / "acceptance.protection.xml"
SIGN_ORIGIN = ("SIGN_WITH_ORIGIN_AUTHENTICATION", "NONE")
ENCRYPT = ("ENCRYPT", "ENCRYPT")
NONE = ("NONE", "NONE")
# Every ROS name of the acceptance policy, its DDS names written out by hand, and the
# class the sidecar gives it (its first rule naming it, else the default).
EXPECTED_KINDS = {
    "rt/robot/cmd_vel": SIGN_ORIGIN,
    "rq/robot/driver/set_modeRequest": SIGN_ORIGIN,
    "rr/robot/driver/set_modeReply": SIGN_ORIGIN,
    "rt/robot/camera/image": ENCRYPT,
    "rt/robot/camera/info": ENCRYPT,
    **{f"rq/navigate_to_pose/_action/{s}Request": ENCRYPT
       for s in ("send_goal", "cancel_goal", "get_result")},
    **{f"rr/navigate_to_pose/_action/{s}Reply": ENCRYPT
       for s in ("send_goal", "cancel_goal", "get_result")},
    "rt/navigate_to_pose/_action/feedback": ENCRYPT,
    "rt/navigate_to_pose/_action/status": ENCRYPT,
    "rt/robot/odom": NONE,
    "rt/robot/driver/status": NONE,
    "rt/rosout": NONE,
    "rt/parameter_events": NONE,
    **{f"{p}/{node}/{s}{suffix}": NONE
       for node in ("robot/driver", "robot/camera", "navigator", "operator/console")
       for s in ("get_parameters", "set_parameters")
       for p, suffix in (("rq", "Request"), ("rr", "Reply"))},
    "ros_discovery_info": NONE,
}


@pytest.fixture(scope="module")
def acceptance(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("acceptance")
    result = _generate(ACCEPTANCE, root, "--protection", str(SIDECAR))
    assert result.exit_code == 0, result.output
    return root


def test_acceptance_grants_decide_as_sros2(shared, acceptance):
    assert _assert_same_as_sros2(shared, ACCEPTANCE, acceptance) > 200
    _check_outputs(shared, acceptance)
    # what the DENYs do, read from govkit's documents: DENY wins over an ALLOW glob
    _, console = _ours(acceptance, "/operator/console")
    grants = decisions(console, ["rt/robot/odom", "rt/robot/camera/image",
                                 "rt/robot/cmd_vel", "rq/robot/driver/set_modeRequest"])
    assert grants == {("publish", "rt/robot/odom"): False,
                      ("subscribe", "rt/robot/odom"): True,
                      ("publish", "rt/robot/camera/image"): False,
                      ("subscribe", "rt/robot/camera/image"): False,
                      ("publish", "rt/robot/cmd_vel"): True,
                      ("subscribe", "rt/robot/cmd_vel"): False,
                      ("publish", "rq/robot/driver/set_modeRequest"): False,
                      ("subscribe", "rq/robot/driver/set_modeRequest"): False}


def test_acceptance_governance_gives_every_ros_name_its_kinds(acceptance):
    path = acceptance / "build" / "governance" / "ros2_acceptance.xml"
    text = path.read_text()
    governance = build_model(etree.parse(str(path)).getroot(), DocumentKind.GOVERNANCE)
    for dds, kinds in EXPECTED_KINDS.items():
        _, rule = topic_rule_for(governance, dds, 0)
        assert (rule.metadata.value, rule.data.value) == kinds, dds
        assert rule.read_ac.value and rule.write_ac.value   # access control enforced
    # the rules in the sidecar's order, then '*'; never an empty expression
    expressions = re.findall(r"<topic_expression>([^<]*)</topic_expression>", text)
    assert expressions[:3] == ["rt/robot/cmd_vel", "rq/robot/driver/set_modeRequest",
                               "rr/robot/driver/set_modeReply"]
    assert expressions[-1] == "*" and all(e.strip() for e in expressions)
    (domain_rule,) = governance.rules
    assert (domain_rule.rtps_kind.value, domain_rule.discovery_kind.value,
            domain_rule.liveliness_kind.value) == ("NONE", "SIGN", "SIGN")
    assert domain_rule.join_ac.value is True


def test_every_name_the_policy_mentions_has_its_kinds_in_the_table(shared, acceptance):
    """The table above covers every DDS name the permissions mention (so the test above
    cannot miss one)."""
    mentioned = topics_of(sros2_permissions(shared, ACCEPTANCE)) - {"rt/robot/camera/*",
                                                                    "rt/robot/*"}
    assert mentioned == set(EXPECTED_KINDS)


def test_the_protection_may_sit_in_the_policys_metadata(shared, tmp_path):
    """The sidecar embedded in two <metadata> (sros2 ignores it): the same governance; and
    sros2's own schema still accepts the policy."""
    sidecar = SIDECAR.read_text().split("?>", 1)[1]
    text = ACCEPTANCE.read_text()
    for enclave in ("/robot/driver", "/operator/console"):
        at = text.index(f'<enclave path="{enclave}">')
        end = text.index("</profiles>", at)
        text = text[:end] + f"<metadata>{sidecar}</metadata>\n" + text[end:]
    shutil.copytree(DATA, tmp_path / "data")
    policy = tmp_path / "data" / "embedded.policy.xml"
    policy.write_text(text)
    if True:
        assert policy_schema(shared).validate(expanded(policy))
        result = govkit("generate", "--policy", str(policy), "--ca", str(tmp_path / "pki"),
                      "--out", str(tmp_path / "build"), "--domain", "0")
        assert result.exit_code == 0, result.output
        made = (tmp_path / "build/governance/ros2_embedded.xml").read_text()
        # one copy changed: refused, at that copy, and nothing else said
        changed = text[::-1].replace('"tpyrcne"=dnik', '"ngis"=dnik', 1)[::-1]
        policy.write_text(changed)
        again = govkit("generate", "--policy", str(policy), "--ca", str(tmp_path / "pki"),
                     "--out", str(tmp_path / "other"), "--domain", "0")
    assert "<topic_expression>rt/robot/camera/*</topic_expression>" in made
    assert again.exit_code == 2
    (line,) = again.stderr.splitlines()
    assert re.fullmatch(rf"{re.escape(str(policy))}:\d+:\d+: protection: differs from the "
                        rf"one on line \d+ of .*; every copy must say the same", line), line
    assert not (tmp_path / "other").exists()


def test_the_guides_example_files_are_the_ones_the_tests_run():
    """docs/guide/ros2-protection.md shows and links its example (issue 46: it was elided and
    unlinked); the files it offers are these, byte for byte."""
    docs = Path(__file__).resolve().parents[2] / "docs" / "guide" / "ros2-example"
    assert (docs / "robot.policy.xml").read_bytes() == ACCEPTANCE.read_bytes()
    assert (docs / "robot.protection.xml").read_bytes() == SIDECAR.read_bytes()
    assert (docs / "common" / "node.xml").read_bytes() == \
        (DATA / "common" / "node.xml").read_bytes()


def test_an_unknown_kind_is_one_line_exit_2_and_nothing_written(tmp_path):
    sidecar = tmp_path / "bad.protection.xml"
    sidecar.write_text(SIDECAR.read_text().replace('kind="encrypt"', 'kind="secret"'))
    result = _generate(ACCEPTANCE, tmp_path, "--protection", str(sidecar))
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line == (f"{sidecar}:10:3: rule: kind='secret' is unknown; one of: none, sign, "
                    f"encrypt")
    assert result.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.protection.xml"]


@pytest.mark.parametrize(("old", "new", "where", "message"), [
    ('<topic>/robot/odom</topic>', '<topic>/robot/odom</topic><bad/>', "acceptance.policy",
     "bad: element not allowed here; expected topic"),
    ('<service>~/set_parameters</service>', '<service deny="1">~/set_parameters</service>',
     "node", "service: attribute 'deny' is not allowed here"),
    ('<default kind="none"/>', '', "protection", "protection: missing child element; "
                                                 "expected rule, default"),   # at <protection>
    ('<topic>/robot/cmd_vel</topic>', '<topic> </topic>', "protection",
     "topic: an empty or blank name"),
    ('<rule kind="encrypt">', '<rule kind="none" origin="true">', "protection",
     "rule: origin=\"true\" with kind=\"none\""),
    # a governance of 1000 topic_rules and their comments is more than govkit reads back:
    # refused before the PKI is made (it was made, then the governance called a govkit bug)
    ('<topic>/robot/cmd_vel</topic>', "".join(f"<topic>/t{i}</topic>" for i in range(999)),
     "protection", "topic: the protection names more than 499 DDS topics"),
])
def test_each_problem_is_one_line_at_its_own_file(tmp_path, old, new, where, message):
    """A problem in an included file is reported at that file's line, not the policy's."""
    copy = tmp_path / "policy"
    copy.mkdir()
    (copy / "common").mkdir()
    files = {"acceptance.policy": ACCEPTANCE, "node": DATA / "common" / "node.xml",
             "protection": SIDECAR}
    targets = {"acceptance.policy": copy / "acceptance.policy.xml",
               "node": copy / "common" / "node.xml", "protection": copy / "protection.xml"}
    for key, source in files.items():
        text = source.read_text()
        if key == where:
            assert old in text
            at = "<protection " if "missing child" in message else old
            line = text[:text.index(at)].count("\n") + 1
            text = text.replace(old, new, 1)
        targets[key].write_text(text)
    result = _generate(targets["acceptance.policy"], tmp_path, "--protection",
                       str(targets["protection"]))
    assert result.exit_code == 2, result.output
    (said,) = result.stderr.splitlines()
    assert said.startswith(f"{targets[where]}:{line}:") and message in said, said
    assert not (tmp_path / "build").exists() and not (tmp_path / "pki").exists()


def test_export_writes_the_policys_enclaves_with_its_governance(tmp_path):
    """`export sros2 --policy`: generate and sign into --build, then exactly the policy's
    enclaves, each with the per-topic governance (already enforcing: not signed again)."""
    (tmp_path / "pki").mkdir()
    other = govkit("pki", "init", str(tmp_path / "pki"), "--participant", "bystander")
    assert other.exit_code == 0, other.output
    ks = tmp_path / "ks"
    result = govkit("export", "sros2", str(ks), "--policy", str(ACCEPTANCE), "--protection",
                  str(SIDECAR), "--ca", str(tmp_path / "pki"), "--build",
                  str(tmp_path / "build"), "--domain", "0")
    assert result.exit_code == 0, result.output
    assert "access control: enforced (the governance turns" in result.stdout
    enclaves = sorted(str(p.parent.relative_to(ks / "enclaves"))
                      for p in ks.rglob("cert.pem"))
    assert enclaves == ["operator/console", "robot/camera", "robot/driver", "robot/navigator"]
    governance = (tmp_path / "build/governance/ros2_acceptance.p7s").read_bytes()
    assert (ks / "enclaves/governance.p7s").read_bytes() == governance
    assert (ks / "enclaves/robot/camera/governance.p7s").read_bytes() == governance
    assert (ks / "enclaves/robot/camera/permissions.p7s").read_bytes() == \
        (tmp_path / "build/permissions/+robot+camera.p7s").read_bytes()
    assert not (tmp_path / "build/governance/enforced").exists()
    # with the profile option: refused before anything is written
    both = govkit("export", "sros2", str(tmp_path / "ks2"), "--policy", str(ACCEPTANCE),
                "--profile", "rtps_sign", "--ca", str(tmp_path / "pki"))
    assert both.exit_code == 2 and not (tmp_path / "ks2").exists()


def test_a_revoked_enclave_gets_no_permissions_and_is_said(tmp_path):
    first = _generate(ACCEPTANCE, tmp_path, "--protection", str(SIDECAR))
    assert first.exit_code == 0, first.output
    revoke = govkit("pki", "revoke", "/robot/camera", "--ca", str(tmp_path / "pki"))
    assert revoke.exit_code == 0, revoke.output
    shutil.rmtree(tmp_path / "build")
    again = _generate(ACCEPTANCE, tmp_path, "--protection", str(SIDECAR))
    assert again.exit_code == 0, again.output
    (warning,) = again.stderr.splitlines()
    assert warning.startswith("govkit: warning: enclave /robot/camera left out, no "
                              "permissions written: certificate ") and "revoked on" in warning
    written = sorted(p.name for p in (tmp_path / "build/permissions").iterdir())
    assert "+robot+camera.xml" not in written and "+robot+driver.p7s" in written
    ks = tmp_path / "ks"
    export = govkit("export", "sros2", str(ks), "--policy", str(ACCEPTANCE), "--ca",
                    str(tmp_path / "pki"), "--build", str(tmp_path / "build"))
    assert export.exit_code == 0, export.output
    assert "govkit: note: /robot/camera left out: certificate " in export.stderr
    assert not (ks / "enclaves/robot/camera").exists()
    assert (ks / "enclaves/robot/driver/crl.pem").read_bytes() == \
        (tmp_path / "pki/identity_ca.crl.pem").read_bytes()


def test_export_policy_archive_is_byte_identical_from_run_to_run(tmp_path):
    """`export sros2 --policy --archive` twice gives the same archive and checksum, as
    docs/guide/ros2.md promises (issue 46 item 9): each run signed every document again,
    and a signature holds its signing time and a fresh ECDSA nonce. An unchanged document
    keeps its signature; a changed one is signed again."""
    (tmp_path / "pki").mkdir()
    args = ["--policy", str(ACCEPTANCE), "--protection", str(SIDECAR), "--ca",
            str(tmp_path / "pki"), "--build", str(tmp_path / "build"), "--domain", "0"]
    sums, arc = [], tmp_path / "ks.tgz"
    for force in ([], ["--force"]):
        result = govkit("export", "sros2", str(tmp_path / "ks"), *args, "--archive",
                        str(arc), *force)
        assert result.exit_code == 0, result.output
        sums.append((arc.read_bytes(), (tmp_path / "ks.tgz.sha256").read_text()))
    assert sums[0] == sums[1]
    grant = tmp_path / "build/permissions/+robot+camera.p7s"
    before = grant.read_bytes()
    other = govkit("export", "sros2", str(tmp_path / "ks2"), *args[:-1], "1")   # domain 1
    assert other.exit_code == 0, other.output
    assert grant.read_bytes() != before       # new content: signed again
    done = subprocess.run(["openssl", "smime", "-verify", "-in", str(grant), "-CAfile",
                           str(tmp_path / "pki/permissions_ca.pem"), "-out", "/dev/null"],
                          capture_output=True)
    assert done.returncode == 0, done.stderr
