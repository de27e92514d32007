"""The protection-profile catalog against the issue's table, by API and by `govkit profiles`."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from govkit.catalog.profiles import (
    COMMON_SETTINGS,
    PROFILES,
    SECURED_PROFILES,
    get_profile,
    select_profiles,
)
from govkit.cli.main import app
from govkit.common.errors import EXIT_USAGE, GovkitError

# The table, typed in independently of govkit/profiles.py:
# name, alias, allow_unauthenticated_participants, rtps, metadata, data, perftest file.
EXPECTED = [
    ("none", "none", None, None, None, None, None),
    ("no_protection", "no_protection", "true", "NONE", "NONE", "NONE",
     "signed_PerftestGovernance_.xml"),
    ("rtps_sign", "rtps_sign", "false", "SIGN", "NONE", "NONE",
     "signed_PerftestGovernance_RTPSSign.xml"),
    ("rtps_encrypt", "rtps_encrypt", "false", "ENCRYPT", "NONE", "NONE",
     "signed_PerftestGovernance_RTPSEncrypt.xml"),
    ("sign_origin_data_encrypt", "rtps_sign_orig_data_encrypt", "false",
     "SIGN_WITH_ORIGIN_AUTHENTICATION", "NONE", "ENCRYPT",
     "signed_PerftestGovernance_RTPSSignWithOrigAuthEncryptData.xml"),
    ("sign_submsg_encrypt_origin_data_encrypt", "rtps_sign_submessage_encrypt_orig_data_encrypt",
     "false", "SIGN", "ENCRYPT_WITH_ORIGIN_AUTHENTICATION", "ENCRYPT",
     "signed_PerftestGovernance_RTPSSignEncryptSubmessageWithOrigAuthEncryptData.xml"),
    ("sign_submsg_encrypt", "rtps_sign_submessage_encrypt", "false", "SIGN", "ENCRYPT", "NONE",
     "signed_PerftestGovernance_SignEncryptSubmessage.xml"),
]
EXPECTED_BY_NAME = {row[0]: row for row in EXPECTED}

# Every secured profile: one domain_rule, one topic_rule "*", these fixed values.
EXPECTED_COMMON = {
    "enable_join_access_control": "false",
    "discovery_protection_kind": "NONE",
    "liveliness_protection_kind": "NONE",
    "topic_expression": "*",
    "enable_discovery_protection": "false",
    "enable_liveliness_protection": "false",
    "enable_read_access_control": "false",
    "enable_write_access_control": "false",
}

JSON_KEYS = {"name", "aliases", "security", "allow_unauthenticated_participants",
             "enable_join_access_control", "discovery_protection_kind",
             "liveliness_protection_kind", "rtps_protection_kind", "metadata_protection_kind",
             "data_protection_kind", "perftest_governance_file"}


def test_catalog_has_exactly_the_seven_profiles_in_order():
    assert [p.name for p in PROFILES] == [row[0] for row in EXPECTED]
    assert [p.name for p in SECURED_PROFILES] == [row[0] for row in EXPECTED[1:]]


@pytest.mark.parametrize("row", EXPECTED, ids=[row[0] for row in EXPECTED])
def test_catalog_row(row):
    name, alias, allow, rtps, metadata, data, perftest_file = row
    p = get_profile(name)
    assert p.name == name
    assert p.alias == alias
    assert p.aliases == ([] if alias == name else [alias])
    assert p.allow_unauthenticated_participants == allow
    assert p.rtps_protection_kind == rtps
    assert p.metadata_protection_kind == metadata
    assert p.data_protection_kind == data
    assert p.perftest_governance_file == perftest_file
    assert p.security is (name != "none")


@pytest.mark.parametrize("row", EXPECTED[1:], ids=[row[0] for row in EXPECTED[1:]])
def test_governance_settings_of_secured_profiles(row):
    name, _, allow, rtps, metadata, data, _ = row
    assert get_profile(name).governance_settings() == {
        **EXPECTED_COMMON,
        "allow_unauthenticated_participants": allow,
        "rtps_protection_kind": rtps,
        "metadata_protection_kind": metadata,
        "data_protection_kind": data,
    }


def test_common_settings_and_baseline():
    assert COMMON_SETTINGS == EXPECTED_COMMON
    assert get_profile("none").governance_settings() == {}


@pytest.mark.parametrize("row", EXPECTED, ids=[row[0] for row in EXPECTED])
def test_get_profile_by_alias(row):
    assert get_profile(row[1]) is get_profile(row[0])


def test_unknown_profile_lists_every_valid_name_on_one_line():
    with pytest.raises(GovkitError) as info:
        get_profile("rtps_sign_encrypt")
    message = str(info.value)
    assert info.value.exit_code == EXIT_USAGE
    assert "\n" not in message
    assert "'rtps_sign_encrypt'" in message
    for name, alias, *_ in EXPECTED:
        assert name in message
        assert alias in message


def test_select_profiles():
    assert [p.name for p in select_profiles(None, True)] == [row[0] for row in EXPECTED]
    assert [p.name for p in SECURED_PROFILES] == [row[0] for row in EXPECTED[1:]]
    # aliases resolve, duplicates collapse, catalog order wins
    chosen = select_profiles(["sign_submsg_encrypt", "rtps_sign_orig_data_encrypt",
                              "sign_origin_data_encrypt", "none"], False)
    assert [p.name for p in chosen] == ["none", "sign_origin_data_encrypt", "sign_submsg_encrypt"]
    assert [p.name for p in select_profiles(["none", "rtps_sign"], False) if p.security] == \
        ["rtps_sign"]
    with pytest.raises(GovkitError):
        select_profiles(None, False)
    with pytest.raises(GovkitError):
        select_profiles(["nope"], False)


def test_cli_profiles_json():
    result = CliRunner().invoke(app, ["profiles", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["schema"] == "govkit.profiles/1"
    data = doc["profiles"]
    assert [d["name"] for d in data] == [row[0] for row in EXPECTED]
    for d in data:
        assert JSON_KEYS <= d.keys()
        name, alias, allow, rtps, metadata, data_kind, perftest_file = EXPECTED_BY_NAME[d["name"]]
        secured = name != "none"
        assert d["aliases"] == ([] if alias == name else [alias])
        assert d["security"] is secured
        # XML's "true"/"false" as JSON booleans (issue 23)
        assert d["allow_unauthenticated_participants"] == \
            {"true": True, "false": False}.get(allow, allow)
        assert d["rtps_protection_kind"] == rtps
        assert d["metadata_protection_kind"] == metadata
        assert d["data_protection_kind"] == data_kind
        assert d["perftest_governance_file"] == perftest_file
        for key in ("enable_join_access_control", "discovery_protection_kind",
                    "liveliness_protection_kind"):
            want = EXPECTED_COMMON[key] if secured else None
            assert d[key] == {"true": True, "false": False}.get(want, want)
        assert all(v not in ("true", "false") for v in d["settings"].values())


def test_cli_profiles_table_lists_every_profile():
    result = CliRunner().invoke(app, ["profiles"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    for name, alias, *_ in EXPECTED:
        assert name in result.stdout
        assert alias in result.stdout


def test_profile_option_takes_commas_as_well_as_repetition():
    """Issue 23: `--profile none,rtps_sign` was refused while --sizes took commas."""
    assert [p.name for p in select_profiles(["rtps_sign,none", " rtps_encrypt"], False)] == \
        ["none", "rtps_sign", "rtps_encrypt"]
    with pytest.raises(GovkitError, match="give --profile"):
        select_profiles([" , "], False)
