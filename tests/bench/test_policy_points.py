"""`govkit bench --policy POLICY --protection FILE`: one point per protection class, on DDS
names its first rule covers, under the governance `generate --policy` writes, measured
against `none` and proven on the wire by real Cyclone DDS and Fast DDS pairs (issue 33)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import lxml.html
import pytest
from helpers.cli import govkit
from helpers.dds import needs_cyclone
from helpers.fastdds import require_fastdds
from helpers.json_schemas import assert_valid
from helpers.require import missing

from govkit.bench.policy_points import policy_points
from govkit.catalog.profiles import Profile
from govkit.check.ros_policy import load_policy
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.runners.base import TOPICS_ENV, topics_env

GOVKIT = str(Path(sys.executable).with_name("govkit"))
DATA = Path(__file__).resolve().parents[1] / "data" / "ros2"
POLICY = DATA / "acceptance.policy.xml"
PROTECTION = DATA / "acceptance.protection.xml"
# The acceptance file's three classes: (point, its rule's first topic_expression, kinds)
CLASSES = {
    "ros2_acceptance.sign_origin": ("rt/robot/cmd_vel", "SIGN_WITH_ORIGIN_AUTHENTICATION",
                                    "NONE"),
    "ros2_acceptance.encrypt": ("rt/robot/camera/*", "ENCRYPT", "ENCRYPT"),
    "ros2_acceptance.none": ("*", "NONE", "NONE"),
}
# One exact topic for a class (ping and pong share it), and a class whose only rule an
# earlier glob takes whole: said and skipped.
ONE_NAME = """\
<protection version="0.1">
  <domain rtps="NONE" discovery="SIGN" liveliness="SIGN"/>
  <rule kind="encrypt"><topics><topic>/robot/cmd_vel</topic></topics></rule>
  <rule kind="sign"><topics><topic>/robot/*</topic></topics></rule>
  <rule kind="none"><topics><topic>/robot/odom</topic></topics></rule>
  <default kind="sign" origin="true"/>
</protection>
"""


def _points(tmp_path: Path, protection: Path = PROTECTION, runner: str = "cyclone"):
    return policy_points(load_policy(POLICY, protection), runner, tmp_path / "build")


def test_each_class_is_one_point_on_names_its_first_rule_covers(tmp_path):
    found = _points(tmp_path)
    by_name = {p.name: p for p in found.profiles}
    assert list(by_name) == list(CLASSES)
    for name, (expression, metadata, data) in CLASSES.items():
        settings = by_name[name].governance_settings()
        assert settings["topic_expression"] == expression
        assert (settings["metadata_protection_kind"], settings["data_protection_kind"]) == \
            (metadata, data)
        assert settings["rtps_protection_kind"] == "NONE"      # the sidecar's <domain>
        assert settings["enable_join_access_control"] == "true"
    assert by_name["ros2_acceptance.sign_origin"].topics == (
        "rt/robot/cmd_vel", "rq/robot/driver/set_modeRequest", "rr/robot/driver/set_modeReply")
    assert by_name["ros2_acceptance.encrypt"].topics == (
        "rt/robot/camera/govkit_ping", "rt/robot/camera/govkit_pong",
        "rt/robot/camera/govkit_data")
    assert by_name["ros2_acceptance.none"].topics == ("govkit_ping", "govkit_pong",
                                                      "govkit_data")
    said = "\n".join(found.said)
    assert "class sign_origin: rule 1 (" in said and "acceptance.protection.xml:6)" in said
    assert "ping rt/robot/cmd_vel, pong rq/robot/driver/set_modeRequest" in said
    assert not found.skipped


def test_a_domain_that_protects_every_message_is_said(tmp_path):
    """Without <domain>, sros2's default governance signs every RTPS message: every class,
    the unprotected one too, pays it, and the class named `none` read 1.56x over `none`
    with nothing to say why (issue 46 item 6). The run says it before it starts and in each
    class's title (the report's cost matrix shows it); a <domain rtps="NONE"> says nothing."""
    bare = tmp_path / "bare.protection.xml"
    bare.write_text(ONE_NAME.replace(
        '  <domain rtps="NONE" discovery="SIGN" liveliness="SIGN"/>\n', ""))
    found = policy_points(load_policy(POLICY, bare), "cyclone", tmp_path / "build")
    said = "\n".join(found.said)
    assert "rtps_protection_kind is SIGN for the whole domain (sros2's default " \
           "governance, which a protection file without <domain> keeps)" in said
    assert "its ratio over the policy's unprotected class" in said
    assert all("rtps_protection_kind SIGN for the whole domain" in p.title
               for p in found.profiles)
    quiet = _points(tmp_path)
    assert not any("for the whole domain" in line for line in quiet.said)
    assert not any("for the whole domain" in p.title for p in quiet.profiles)


def test_a_class_runs_under_the_governance_generate_policy_writes(tmp_path):
    """The very document: `generate --policy --protection --domain 0-230` writes the same
    bytes the class points are signed from."""
    found = _points(tmp_path)
    (governance,) = {p.governance_file for p in found.profiles}
    r = govkit("generate", "--policy", str(POLICY), "--protection", str(PROTECTION),
               "--domain", "0-230", "--ca", str(tmp_path / "pki"), "--out",
               str(tmp_path / "gen"))
    assert r.exit_code == 0, r.output
    written = tmp_path / "gen" / "governance" / "ros2_acceptance.xml"
    assert Path(governance).read_bytes() == written.read_bytes()


def test_one_exact_name_is_shared_and_a_class_with_no_name_is_skipped(tmp_path):
    f = tmp_path / "one.protection.xml"
    f.write_text(ONE_NAME)
    found = _points(tmp_path, f)
    by_name = {p.name: p for p in found.profiles}
    assert list(by_name) == ["ros2_acceptance.encrypt", "ros2_acceptance.sign",
                             "ros2_acceptance.sign_origin"]
    assert by_name["ros2_acceptance.encrypt"].topics == ("rt/robot/cmd_vel",) * 3
    assert "ping and pong share it" in "\n".join(found.said)
    (skipped,) = found.skipped
    assert skipped.startswith("class none (rule 3, ")
    assert "every name it has falls under an earlier rule (rt/robot/odom by rule 2)" in skipped


def test_a_name_with_a_comma_never_reaches_the_runners_comma_separated_names(tmp_path):
    """GOVKIT_PERF_TOPICS=rt/a,b,... made three names six (held-out battery, issue 46): such
    a name is left out; a class left with no other is said and skipped."""
    f = tmp_path / "comma.protection.xml"
    f.write_text('<protection version="0.1">'
                 '<rule kind="encrypt"><topics><topic>/a,b</topic><topic>/c</topic></topics>'
                 '</rule><rule kind="sign"><topics><topic>/x,y</topic></topics></rule>'
                 '<default kind="none"/></protection>')
    found = _points(tmp_path, f)
    by_name = {p.name: p for p in found.profiles}
    assert list(by_name) == ["ros2_acceptance.encrypt", "ros2_acceptance.none"]
    assert by_name["ros2_acceptance.encrypt"].topics == ("rt/c",) * 3
    assert all("," not in t for p in found.profiles for t in p.topics)
    assert topics_env(by_name["ros2_acceptance.encrypt"]) == {TOPICS_ENV: "rt/c,rt/c,rt/c"}
    (skipped,) = found.skipped
    assert skipped.startswith("class sign (rule 2, ") and "hold a comma (rt/x,y)" in skipped
    with pytest.raises(ValueError, match="holds a comma"):
        topics_env(Profile("x", "x", "false", "NONE", "NONE", "NONE", None, "x",
                           topics=("rt/a,b", "rt/c", "rt/c")))


def test_the_programs_get_the_names_and_keep_ddsperfs_without_them():
    plain = Profile("x", "x", "false", "NONE", "NONE", "NONE", None, "x")
    assert topics_env(plain) == {}
    named = Profile("x", "x", "false", "NONE", "NONE", "NONE", None, "x",
                    topics=("rt/a", "rt/a", "rt/b"))
    assert topics_env(named) == {TOPICS_ENV: "rt/a,rt/a,rt/b"}
    assert named.to_json()["topics"] == ["rt/a", "rt/a", "rt/b"]
    assert "topics" not in plain.to_json()


@pytest.mark.parametrize("args, said", [
    (("--runner", "ddsperf"), "--policy: --runner ddsperf cannot name its topics"),
    (("--runner", "perftest"), "--policy: --runner perftest cannot name its topics"),
    (("--transport", "tcp"), "--policy measures on the rotating pairs only"),
    (("--mode", "discovery"), "--policy: --mode discovery runs on the runner's own topics"),
])
def test_what_cannot_run_on_a_class_name_is_refused_in_one_line(tmp_path, args, said):
    r = govkit("bench", "--policy", str(POLICY), "--protection", str(PROTECTION), *args,
               "--build", str(tmp_path / "build"), "--out", str(tmp_path / "res"))
    assert r.exit_code == EXIT_USAGE
    assert said in r.output and len(r.output.strip().splitlines()) == 1, r.output
    assert not (tmp_path / "build").exists() and not (tmp_path / "res").exists()


def test_protection_without_policy_is_refused(tmp_path):
    r = govkit("bench", "--protection", str(PROTECTION), "--out", str(tmp_path / "res"))
    assert r.exit_code == EXIT_USAGE and "--protection needs --policy" in r.output
    with pytest.raises(GovkitError, match="ddsperf cannot name its topics"):
        _points(tmp_path, runner="ddsperf")


def _capture_ok() -> None:
    try:
        socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0).close()
    except (PermissionError, AttributeError, OSError):
        pytest.skip(missing("root", "raw capture on lo needs root or CAP_NET_RAW"))


def _bench(tmp_path: Path, protection: Path, *args: str) -> tuple[str, dict]:
    r = subprocess.run([GOVKIT, "bench", "--policy", str(POLICY), "--protection",
                        str(protection), "--sizes", "32", "--rounds", "2", "--budget", "1",
                        "--instances", "1", "--wire", "--no-report", "--out", "res", *args],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((tmp_path / "res" / "results.json").read_text())
    assert_valid(doc, "bench")
    return r.stderr, doc


def _assert_classes(doc: dict, classes: dict) -> None:
    """Each class: one measured point against `none`, under its own rule, wire-proven."""
    profiles = {p["name"]: p for p in doc["profiles"]}
    rows = {x["profile"]: x for x in doc["summary"] if x["mode"] == "latency"}
    wire = {w["profile"]: w for w in doc["wire"]["points"]}
    for name, (expression, metadata, data) in classes.items():
        settings = profiles[name]["settings"]
        assert settings["topic_expression"] == expression
        assert len(profiles[name]["topics"]) == 3
        assert rows[name]["vs_none"]["ratio"] > 0
        assert wire[name]["verdict"] == "match", wire[name].get("reasons")
        assert wire[name]["expected"]["governance"] == {
            "rtps_protection_kind": "NONE", "metadata_protection_kind": metadata,
            "data_protection_kind": data}
        assert wire[name]["observed"]["user"]["messages"] > 0


@needs_cyclone
@pytest.mark.cyclone
@pytest.mark.parametrize("runner", ["cyclone", pytest.param("fastdds",
                                                             marks=pytest.mark.fastdds)])
def test_bench_policy_wire_measures_and_proves_every_class(tmp_path, runner):
    _capture_ok()
    if runner == "fastdds":
        require_fastdds()
    stderr, doc = _bench(tmp_path, PROTECTION, "--runner", runner)
    assert "3 protection class(es)" in stderr
    _assert_classes(doc, CLASSES)
    # the report's cost matrix names each class's ROS topics, not its label alone (issue
    # 46 item 7)
    done = subprocess.run([GOVKIT, "report", str(tmp_path / "res")], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    page = lxml.html.parse(str(tmp_path / "res" / "report.html"))
    titles = {r.get("data-profile"): "".join(r.xpath('.//*[@data-kind="class-title"]//text()'))
              for r in page.xpath('//table[@id="cost-matrix"]/tbody/tr')}
    assert "class sign_origin: rule 1 (" in titles["ros2_acceptance.sign_origin"]
    assert "rt/robot/camera/govkit_ping" in titles["ros2_acceptance.encrypt"]
    # every table lists the classes in their file's order (the summary once sorted them by
    # name, so the cost matrix and the terminal read encrypt, none, sign_origin)
    assert [x["profile"] for x in doc["summary"] if x["mode"] == "latency"] == [
        "none", *CLASSES]
    # rtps_protection_kind NONE: the classes' ratios over `none` are their own costs
    assert not any("vs_policy_baseline" in x for x in doc["summary"])
    assert doc["settings"]["runner"] == runner
    # the bench permissions: exactly the class's names, for each side
    for p in (p for p in doc["profiles"] if p["name"] in CLASSES):
        for side in ("pub", "sub"):
            xml = (tmp_path / "build" / runner / "permissions" / p["name"] /
                   f"{side}.xml").read_text()
            assert set(re.findall(r"<topic>([^<]*)</topic>", xml)) == set(p["topics"])


@needs_cyclone
@pytest.mark.cyclone
def test_bench_policy_shares_one_name_and_skips_a_class_without_one(tmp_path):
    _capture_ok()
    f = tmp_path / "one.protection.xml"
    f.write_text(ONE_NAME)
    stderr, doc = _bench(tmp_path, f)
    assert "govkit: WARNING: class none (rule 3, " in stderr
    _assert_classes(doc, {"ros2_acceptance.encrypt": ("rt/robot/cmd_vel", "ENCRYPT",
                                                      "ENCRYPT")})
    assert "ros2_acceptance.none" not in {p["name"] for p in doc["profiles"]}


# No <domain>: sros2's default governance signs every RTPS message, so every class pays it
# over `none`, the class protecting nothing included (issue 46 item 6).
NO_DOMAIN = """\
<protection version="0.1">
  <rule kind="encrypt"><topics><topic>/robot/camera/*</topic></topics></rule>
  <default kind="none"/>
</protection>
"""


@needs_cyclone
@pytest.mark.cyclone
def test_a_domain_wide_rtps_kind_gives_each_class_its_ratio_over_the_unprotected_class(
        tmp_path):
    f = tmp_path / "no-domain.protection.xml"
    f.write_text(NO_DOMAIN)
    r = subprocess.run([GOVKIT, "bench", "--policy", str(POLICY), "--protection", str(f),
                        "--sizes", "32", "--rounds", "4", "--budget", "1", "--instances", "1",
                        "--out", "res"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=600, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((tmp_path / "res" / "results.json").read_text())
    assert_valid(doc, "bench")
    rows = {x["profile"]: x for x in doc["summary"] if x["mode"] == "latency"}
    reference, encrypt = "ros2_acceptance.none", "ros2_acceptance.encrypt"
    assert {p["settings"]["rtps_protection_kind"] for p in doc["profiles"]
            if p.get("topics")} == {"SIGN"}
    own = rows[encrypt]["vs_policy_baseline"]
    assert own["reference"] == reference
    assert "vs_policy_baseline" not in rows[reference] and "vs_policy_baseline" not in \
        rows["none"]
    # paired by round over the unprotected class: near the quotient of the two ratios over
    # `none` (equal but for the trimmed mean's choice of rounds)
    quotient = rows[encrypt]["vs_none"]["ratio"] / rows[reference]["vs_none"]["ratio"]
    assert own["ratio"] == pytest.approx(quotient, rel=0.1)
    assert own["ratio_ci95"] is None or own["ratio_ci95"][0] <= own["ratio"] <= \
        own["ratio_ci95"][1]
    # the terminal, report.html and summary.md give it, under one name
    assert "× class" in r.stdout and reference in r.stdout
    page = lxml.html.parse(str(tmp_path / "res" / "report.html"))
    cells = page.xpath(f'//table[@id="cost-matrix"]/tbody/tr[@data-profile="{encrypt}"]'
                       f'//*[@data-kind="policy-baseline-ratio"]//text()')
    assert f"× {reference} {own['ratio']:.2f}" in "".join(cells)
    assert page.xpath('//*[@id="policy-baseline-note"]')
    md = (tmp_path / "res" / "summary.md").read_text()
    assert f"× `{reference}` {own['ratio']:.2f}" in md
