"""Your own profiles as data: a TOML profiles file, checked field by field on load (one
line FILE:LINE per bad field, exit 2), then usable wherever a catalog name is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.dds import needs_cyclone
from typer.testing import CliRunner

from govkit.catalog import profiles
from govkit.catalog.profiles_file import parse_profiles, read_profiles
from govkit.check.validate import validate_bytes
from govkit.cli.main import app
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.documents.render import GovernanceDocument

GOOD = """\
# what sros2's default governance protects, in the catalog's fields
[[profile]]
name = "sros2_kinds"
title = "RTPS, metadata and data encrypted"
allow_unauthenticated_participants = false
rtps_protection_kind = "ENCRYPT"
metadata_protection_kind = "ENCRYPT"
data_protection_kind = "ENCRYPT"

[[profile]]
name = "signed_data"
alias = "sd"
allow_unauthenticated_participants = true
rtps_protection_kind = "NONE"
metadata_protection_kind = "SIGN_WITH_ORIGIN_AUTHENTICATION"
data_protection_kind = "SIGN"
"""


@pytest.fixture(autouse=True)
def _forget_user_profiles():
    yield
    profiles.use_profiles([])


def _errors(text: str) -> list[str]:
    with pytest.raises(GovkitError) as info:
        parse_profiles(text, "p.toml")
    assert info.value.exit_code == EXIT_USAGE
    return str(info.value).split("\n")


def test_a_good_file_gives_profiles_that_render_valid_governance():
    mine, signed = parse_profiles(GOOD, "p.toml")
    assert mine == profiles.Profile("sros2_kinds", "sros2_kinds", "false", "ENCRYPT", "ENCRYPT",
                                    "ENCRYPT", None, "RTPS, metadata and data encrypted")
    assert signed.alias == "sd" and signed.title == "signed_data" and signed.security
    assert signed.allow_unauthenticated_participants == "true"
    for p in (mine, signed):
        assert validate_bytes(GovernanceDocument(p).render(), "g.xml") == []


def test_once_used_they_answer_wherever_a_catalog_name_does():
    with pytest.raises(GovkitError, match="unknown profile 'sd'"):
        profiles.get_profile("sd")
    mine, signed = parse_profiles(GOOD, "p.toml")
    profiles.use_profiles([mine, signed])
    assert profiles.get_profile("sd") is signed
    assert [p.name for p in profiles.select_profiles(["sd,none"], False)] == ["none",
                                                                             "signed_data"]
    assert profiles.select_profiles(None, True)[-2:] == [mine, signed]


@pytest.mark.parametrize(("text", "expected"), [
    ('[[profile]]\nname = "x"\n', [
        "p.toml:1: profile 'x': allow_unauthenticated_participants, rtps_protection_kind, "
        "metadata_protection_kind, data_protection_kind are missing"]),
    (GOOD.replace('data_protection_kind = "SIGN"', 'data_protection_kind = "SIGN_WITH_ORIGIN'
                  '_AUTHENTICATION"'),
     ["p.toml:16: profile 'signed_data': data_protection_kind: 'SIGN_WITH_ORIGIN_AUTHENTICATION'"
      " is no data_protection_kind; valid: NONE, SIGN, ENCRYPT"]),
    (GOOD.replace('rtps_protection_kind = "ENCRYPT"', 'rtps_protection_kind = "ENCRYPTED"')
         .replace("allow_unauthenticated_participants = true",
                  'allow_unauthenticated_participants = "yes"')
         .replace('name = "signed_data"', 'name = "rtps_sign"')
         .replace("# what", "colour = 1\n# what"), [
        "p.toml: unknown key 'colour': a profiles file holds [[profile]] tables",
        "p.toml:7: profile 'sros2_kinds': rtps_protection_kind: 'ENCRYPTED' is no "
        "rtps_protection_kind; valid: NONE, SIGN, ENCRYPT, SIGN_WITH_ORIGIN_AUTHENTICATION, "
        "ENCRYPT_WITH_ORIGIN_AUTHENTICATION",
        "p.toml:12: profile 'rtps_sign': name: 'rtps_sign' is already the catalog profile "
        "rtps_sign",
        "p.toml:14: profile 'rtps_sign': allow_unauthenticated_participants: must be true or "
        "false"]),
    (GOOD.replace('alias = "sd"', 'alias = "sros2_kinds"\nnotes = "x"'), [
        "p.toml:13: profile 'signed_data': unknown field 'notes'; known: name, "
        "allow_unauthenticated_participants, rtps_protection_kind, metadata_protection_kind, "
        "data_protection_kind, title, alias, perftest_governance_file",
        "p.toml:12: profile 'signed_data': alias: 'sros2_kinds' is already profile "
        "sros2_kinds (p.toml:2)"]),
    ('[[profile]]\nname = "a/b"\ntitle = ""\n', [
        "p.toml:1: profile #1: allow_unauthenticated_participants, rtps_protection_kind, "
        "metadata_protection_kind, data_protection_kind are missing",
        "p.toml:2: profile #1: name: invalid name (3 characters, '/' at character 2): letters, "
        "digits, '_' '.' '-', at most 63, not starting with '.' or '-' (it names files)",
        "p.toml:3: profile #1: title: a title is one printable line of at most 200 "
        "characters"]),
    # a link to a secret: named by position, its characters not quoted (issue 23, item 7)
    ('[[profile]]\nname = "root:$6$s3cr3tHash/x"\nallow_unauthenticated_participants = false'
     '\nrtps_protection_kind = "hunter2:secret"\nmetadata_protection_kind = "SIGN"\n'
     'data_protection_kind = "NONE"\n', [
        "p.toml:2: profile #1: name: invalid name (20 characters, ':' at character 5): "
        "letters, digits, '_' '.' '-', at most 63, not starting with '.' or '-' (it names "
        "files)",
        "p.toml:4: profile #1: rtps_protection_kind: (14 characters, ':' at character 8) is "
        "no rtps_protection_kind; valid: NONE, SIGN, ENCRYPT, "
        "SIGN_WITH_ORIGIN_AUTHENTICATION, ENCRYPT_WITH_ORIGIN_AUTHENTICATION"]),
    ('[[profile]]\nname = "x\n', ["p.toml:2:10: not TOML: Illegal character '\\n'"]),
    ("# nothing\n", ["p.toml: holds no [[profile]] tables"]),
])
def test_every_bad_field_is_one_line_with_file_and_line(text, expected):
    assert _errors(text) == expected


def test_not_utf8_and_not_a_regular_file(tmp_path):
    bad = tmp_path / "p.toml"
    bad.write_bytes(b'[[profile]]\nname = "caf\xe9"\n')
    with pytest.raises(GovkitError, match=r"p.toml:2: not UTF-8 text"):
        read_profiles(bad)
    with pytest.raises(GovkitError, match="is a directory"):
        read_profiles(tmp_path)


def test_cli_lists_them_and_refuses_a_bad_file_with_exit_2(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.toml").write_text(GOOD)
    listed = CliRunner().invoke(app, ["profiles", "--profiles", "p.toml", "--json"])
    assert listed.exit_code == 0, listed.output
    names = [p["name"] for p in json.loads(listed.stdout)["profiles"]]
    assert names[:7] == [p.name for p in profiles.PROFILES]
    assert names[7:] == ["sros2_kinds", "signed_data"]
    (tmp_path / "bad.toml").write_text(GOOD.replace('"ENCRYPT"\n\n', '"ENCRYPTED"\n\n'))
    bad = CliRunner().invoke(app, ["generate", "--profiles", "bad.toml", "--profile", "sd"])
    assert bad.exit_code == EXIT_USAGE
    assert bad.output.startswith("govkit: bad.toml:8: profile 'sros2_kinds': "
                                 "data_protection_kind: 'ENCRYPTED'")
    assert not (tmp_path / "pki").exists()


def test_govkit_toml_in_the_working_directory_is_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "govkit.toml").write_text("[other]\nsetting = 1\n\n" + GOOD)
    gen = CliRunner().invoke(app, ["generate", "--profile", "sd"])
    assert gen.exit_code == 0, gen.output
    assert validate_bytes((tmp_path / "build/governance/signed_data.xml").read_bytes(),
                          "g.xml") == []


@needs_cyclone
@pytest.mark.cyclone
def test_a_good_profiles_file_benchmarks(tmp_path):
    (tmp_path / "p.toml").write_text(GOOD)
    r = subprocess.run([str(Path(sys.executable).with_name("govkit")), "bench", "--profiles",
                        "p.toml", "--profile", "none,sros2_kinds", "--sizes", "32",
                        "--rounds", "3", "--budget", "1", "--out", "res"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((tmp_path / "res/results.json").read_text())
    rows = {x["profile"]: x for x in doc["summary"]}
    assert rows["sros2_kinds"]["vs_none"]["ratio"] > 1.0
    assert "sros2_kinds" in r.stdout
