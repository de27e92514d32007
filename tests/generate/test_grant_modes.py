"""`pki renew`'s advice fits how the project was made, and `generate` never overwrites a
grant the other mode wrote (issue 46, item 3): the advice `generate --ca pki
--all-profiles --sign`, run in a project made by `generate --policy`, replaced every
enclave's permissions with benchmark grants."""

from __future__ import annotations

import shlex
from pathlib import Path

from helpers.cli import enclave_project, govkit

DATA = Path(__file__).resolve().parents[1] / "data" / "ros2"
POLICY, PROTECTION = DATA / "acceptance.policy.xml", DATA / "acceptance.protection.xml"
TALKER_POLICY = """<?xml version="1.0" encoding="UTF-8"?>
<policy version="0.2.0">
  <enclaves>
    <enclave path="/talker_listener/talker">
      <profiles>
        <profile ns="/" node="talker">
          <topics publish="ALLOW"><topic>chatter</topic></topics>
        </profile>
      </profiles>
    </enclave>
  </enclaves>
</policy>
"""


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def _policy_project(root: Path) -> None:
    r = govkit("generate", "--policy", str(POLICY), "--protection", str(PROTECTION), "--ca",
               str(root / "pki"), "--out", str(root / "build"), "--sign")
    assert r.exit_code == 0, r.output


def test_renew_in_a_policy_project_advises_its_own_generate_policy(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _policy_project(tmp_path)
    driver = tmp_path / "build" / "permissions" / "+robot+driver.xml"
    r = govkit("pki", "renew", "/robot/driver", "--ca", "pki")
    assert r.exit_code == 0, r.output
    advice = r.stdout.strip().splitlines()[-1]
    command = advice.split("`")[1]
    assert command.startswith(f"govkit generate --policy {POLICY} --protection "
                              f"{PROTECTION} --ca pki --out {tmp_path / 'build'} --sign")
    again = govkit(*shlex.split(command)[1:])
    assert again.exit_code == 0, again.output
    after = driver.read_bytes()
    assert b"rt/robot/cmd_vel" in after and b"ddsperf" not in after.lower()
    r = govkit("verify", "--ca", "pki", str(driver.with_suffix(".p7s")))
    assert r.exit_code == 0, r.output


def test_generate_refuses_to_replace_a_policys_grants(tmp_path):
    _policy_project(tmp_path)
    before = _snapshot(tmp_path)
    r = govkit("generate", "--ca", str(tmp_path / "pki"), "--all-profiles", "--sign", "--out",
               str(tmp_path / "build"))
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith(f"govkit: {tmp_path / 'build' / 'permissions'}/+"), line
    assert "written by `generate --policy`" in line and f"--policy {POLICY}" in line
    assert _snapshot(tmp_path) == before   # nothing written, not even pub and sub in pki/
    # elsewhere it is free to write
    r = govkit("generate", "--ca", str(tmp_path / "pki"), "-p", "rtps_sign", "--out",
               str(tmp_path / "bench-build"))
    assert r.exit_code == 0, r.output


def test_generate_policy_refuses_to_replace_generates_grants(tmp_path):
    root = enclave_project(tmp_path)
    policy = tmp_path / "talker.policy.xml"
    policy.write_text(TALKER_POLICY)
    before = _snapshot(root / "build")
    r = govkit("generate", "--policy", str(policy), "--ca", str(root / "pki"), "--out",
               str(root / "build"), "--sign")
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.strip().splitlines()
    assert "+talker_listener+talker.xml: written by `generate`; `generate --policy` would " \
        "replace its grants, nothing written" in line, line
    assert _snapshot(root / "build") == before
