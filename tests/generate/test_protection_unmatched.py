"""A misspelt protection rule must not ship its name in clear (issue 46, item 2): a rule
naming a topic or service no enclave is granted (lint's GK402) stops `generate --policy
--protection` and `export sros2 --policy` before anything is written, one FILE:LINE:COLUMN
line naming it (exit 2), unless --allow-unmatched; and with it the real topic gets the
default, as the governance then says."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest
from helpers.cli import govkit
from lxml import etree

DATA = Path(__file__).resolve().parents[1] / "data" / "ros2"
POLICY, PROTECTION = DATA / "acceptance.policy.xml", DATA / "acceptance.protection.xml"


@pytest.fixture
def misspelt(tmp_path) -> Path:
    path = tmp_path / "protection.xml"
    text = PROTECTION.read_text()
    assert text.count("<service>/robot/driver/set_mode</service>") == 1
    path.write_text(text.replace("<service>/robot/driver/set_mode</service>",
                                 "<service>/robot/driver/set_mdoe</service>"))
    return path


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize("command", ["generate", "export"])
def test_a_rule_naming_nothing_granted_stops_and_writes_nothing(tmp_path, misspelt, command):
    common = ["--policy", str(POLICY), "--protection", str(misspelt), "--ca",
              str(tmp_path / "pki")]
    if command == "generate":
        args = ["generate", *common, "--out", str(tmp_path / "build"), "--sign"]
    else:
        args = ["export", "sros2", str(tmp_path / "ks"), *common, "--build",
                str(tmp_path / "build")]
    r = govkit(*args)
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.strip().splitlines()
    where = f"{misspelt}:{_line_of(misspelt, 'set_mdoe')}:"
    assert line.startswith(where), line
    assert "'/robot/driver/set_mdoe'" in line and "[GK402]" in line and "--allow-unmatched" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["protection.xml"]   # not even pki/


def test_allow_unmatched_writes_it_and_the_real_topic_gets_the_default(tmp_path, misspelt):
    r = govkit("generate", "--policy", str(POLICY), "--protection", str(misspelt), "--ca",
               str(tmp_path / "pki"), "--out", str(tmp_path / "build"), "--allow-unmatched")
    assert r.exit_code == 0, r.output
    (governance,) = (tmp_path / "build" / "governance").glob("*.xml")
    rules = etree.parse(str(governance)).getroot().findall(".//topic_rule")
    # the first rule that matches the real service's request topic: the default, in clear
    first = next(rule for rule in rules if fnmatch.fnmatchcase(
        "rq/robot/driver/set_modeRequest", rule.findtext("topic_expression")))
    assert first.findtext("topic_expression") == "*"
    assert first.findtext("data_protection_kind") == "NONE"


def test_allow_unmatched_is_for_policy_only(tmp_path):
    r = govkit("generate", "-p", "rtps_sign", "--ca", str(tmp_path / "pki"),
               "--allow-unmatched")
    assert r.exit_code == 2 and "--allow-unmatched is for --policy" in r.stderr
    assert not (tmp_path / "pki").exists()
