"""`govkit lint` and `govkit explain --policy` on an sros2 policy and its protection sidecar
(the acceptance policy of tests/data/ros2): findings at the file and line of the element,
and per ROS name what the generated documents decide."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers.cli import govkit
from helpers.json_schemas import assert_valid

DATA = Path(__file__).resolve().parents[1] / "data"
POLICY = DATA / "ros2" / "acceptance.policy.xml"
SIDECAR = DATA / "ros2" / "acceptance.protection.xml"


def test_lint_reads_a_policy_with_its_sidecar():
    result = govkit("lint", str(POLICY), "--protection", str(SIDECAR), "--output-format",
                  "concise")
    assert result.exit_code == 0, result.output    # warnings only
    lines = result.stdout.splitlines()
    assert lines[:3] == [
        f"{POLICY}:13:34: GK403 warning: publish=\"DENY\" of topic '/robot/camera/*' never "
        f"applies: enclave '/robot/driver' is allowed nothing it matches (its default is "
        f"DENY already)",
        f"{POLICY}:22:36: GK403 warning: subscribe=\"DENY\" of topic '/robot/cmd_vel' never "
        f"applies: enclave '/robot/camera' is allowed nothing it matches (its default is "
        f"DENY already)",
        f"{POLICY}:45:36: GK403 warning: request=\"DENY\" of service '/robot/driver/set_mode' "
        f"never applies: enclave '/operator/console' is allowed nothing it matches (its "
        f"default is DENY already)"]
    doc = json.loads(govkit("lint", "--json", str(POLICY), "--protection", str(SIDECAR),
                          str(SIDECAR)).stdout)
    assert_valid(doc, "lint")
    assert [f["kind"] for f in doc["files"]] == ["policy", "protection"]


def test_a_finding_in_the_sidecar_points_into_the_sidecar(tmp_path):
    sidecar = tmp_path / "s.xml"
    text = SIDECAR.read_text().replace("<topic>/robot/camera/*</topic>",
                                       "<topic>/robot/*</topic><topic>/robot/cmd_vel</topic>")
    sidecar.write_text(text.replace('<rule kind="sign" origin="true">',
                                    '<rule kind="none"><topics><topic>/robot/c*</topic>'
                                    '</topics></rule><rule kind="sign" origin="true">'))
    result = govkit("lint", str(POLICY), "--protection", str(sidecar), "--select", "GK400",
                  "--output-format", "concise")
    finding, later, summary = result.stdout.splitlines()
    assert later.startswith(f"{sidecar}:") and summary.endswith("2 warnings")
    assert finding.startswith(f"{sidecar}:")
    assert "GK400 warning: topic '/robot/cmd_vel' never gets rule 2's protection: rule 1's " \
           "topic '/robot/c*'" in finding


def test_a_policy_that_does_not_check_is_a_finding_not_a_crash(tmp_path):
    shutil.copytree(DATA / "ros2", tmp_path / "ros2")
    bad = tmp_path / "ros2" / "p.xml"
    bad.write_text(POLICY.read_text().replace('node="camera"', ''))
    result = govkit("lint", str(bad), "--output-format", "concise")
    assert result.exit_code == 1
    assert f"{bad}:19:9: GK002 error: profile: missing required attribute 'node'" in \
        result.stdout


def test_explain_says_per_ros_name_what_the_documents_decide():
    result = govkit("explain", "--policy", str(POLICY), "--protection", str(SIDECAR))
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert ("  rt/robot/cmd_vel: rule 1 (" + str(SIDECAR) + ":7), sign: metadata "
            "SIGN_WITH_ORIGIN_AUTHENTICATION, data NONE\n      publish: /operator/console, "
            "/robot/navigator; subscribe: /robot/driver") in text
    # the console's DENY wins over its /robot/* ALLOW
    assert ("  rt/robot/camera/image: rule 2 (" + str(SIDECAR) + ":11), encrypt: metadata "
            "ENCRYPT, data ENCRYPT\n      publish: /robot/camera; subscribe: "
            "/robot/navigator") in text
    doc = json.loads(govkit("explain", "--json", "--policy", str(POLICY), "--protection",
                          str(SIDECAR)).stdout)
    assert_valid(doc, "explain")
    (goal,) = [t for n in doc["names"] if n["ros_name"] == "/navigate_to_pose"
               for t in n["topics"] if t["name"].endswith("send_goalRequest")]
    assert goal["publish"] == ["/operator/console"] and goal["subscribe"] == ["/robot/navigator"]
    assert (goal["metadata_protection_kind"], goal["data_protection_kind"]) == \
        ("ENCRYPT", "ENCRYPT")


def test_explain_without_protection_is_sros2s_default():
    result = govkit("explain", "--policy", str(POLICY))
    assert result.exit_code == 0, result.output
    assert "protection: none" in result.stdout
    assert "rt/robot/odom: default, encrypt: metadata ENCRYPT, data ENCRYPT" in result.stdout
