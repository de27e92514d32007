"""The advisory table (govkit/catalog/data/advisories.csv): every row sourced and dated, the
affected-version rule, and that lint's target facts (GK209, GK303, GK304) cite its rows, so
`lint` and `doctor` read one set of fixed versions."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re

import pytest

from govkit.catalog import advisories as table
from govkit.catalog.advisories import PRODUCT_TITLES, advisories, advisory, version_tuple
from govkit.catalog.targets import TARGETS
from govkit.check.lint import LintOptions, lint_bytes
from govkit.check.rules.engine import selected_rules
from govkit.runners.doctor import Runtime, match

BLANK_TOPIC = b"""<dds><domain_access_rules><domain_rule><domains><id>0</id></domains>
<allow_unauthenticated_participants>false</allow_unauthenticated_participants>
<enable_join_access_control>true</enable_join_access_control>
<discovery_protection_kind>NONE</discovery_protection_kind>
<liveliness_protection_kind>NONE</liveliness_protection_kind>
<rtps_protection_kind>NONE</rtps_protection_kind>
<topic_access_rules><topic_rule><topic_expression></topic_expression>
<enable_discovery_protection>false</enable_discovery_protection>
<enable_liveliness_protection>false</enable_liveliness_protection>
<enable_read_access_control>true</enable_read_access_control>
<enable_write_access_control>true</enable_write_access_control>
<metadata_protection_kind>NONE</metadata_protection_kind>
<data_protection_kind>SIGN</data_protection_kind>
</topic_rule></topic_access_rules></domain_rule></domain_access_rules></dds>"""


def test_every_row_is_sourced_dated_and_well_formed():
    rows = advisories()
    assert rows and len({a.id for a in rows}) == len(rows)
    for a in rows:
        assert a.product in PRODUCT_TITLES and a.kind in ("advisory", "defect"), a
        assert a.sources and all(s.startswith("https://") for s in a.sources), a
        assert dt.date.fromisoformat(a.checked) <= dt.date.today(), a
        assert a.fixed and all(version_tuple(v) for v in a.fixed), a
        assert re.fullmatch(r"CVE-\d{4}-\d+|GHSA(-[a-z0-9]{4}){3}|[\w.-]+/[\w.-]+#\d+", a.id), a
        assert a.summary and "\n" not in a.summary
        # each fixed release is itself not affected
        assert not any(a.affects(v) for v in a.fixed), a


@pytest.mark.parametrize("version,affected", [
    ("2.9.1", True),                 # Debian 12's: branch 2.9 never got the fix
    ("2.9.1+ds-1+deb12u2", True),    # Debian's package version reads as its upstream
    ("2.6.11", True), ("2.6.12", False), ("2.14.6", True), ("2.14.7", False),
    ("3.2.4", True), ("3.2.5", False), ("3.4.3", True), ("3.6.3", False), ("3.7.0", False),
    ("unknown", None)])
def test_affected_rule_by_release_branch(version, affected):
    assert advisory("CVE-2025-67108").affects(version) is affected


def test_lint_target_facts_cite_rows_of_the_table():
    fast = TARGETS["fastdds"]
    ids = [*fast.crash_advisories, fast.unpadded_sign_advisory, fast.expired_peers_advisory]
    for advisory_id in ids:
        row = advisory(advisory_id)           # KeyError: a fact citing no row
        assert row.product == "fastdds"
        assert ", ".join(row.fixed[:-1]) in fast.crash_source + fast.unpadded_payload_sign \
            + fast.keeps_expired_peers
    assert all(not (t.crash_advisories or t.unpadded_sign_advisory or t.expired_peers_advisory)
               for t in TARGETS.values() if t.name != "fastdds")


def test_lint_and_doctor_read_the_same_rows(monkeypatch):
    """Change a row's fixed releases: GK303's and GK304's messages and doctor's verdict on
    Fast DDS 2.9.1 change with it (neither keeps a copy of a version)."""
    def findings():
        result = lint_bytes(BLANK_TOPIC, "g.xml", LintOptions(target="fastdds"),
                            selected_rules([], []))
        return {f.rule: f.message for f in result.findings}

    before = findings()
    assert "GK303" in before and "GK100" in before     # a blank topic_expression still flagged
    assert "3.4.3" in before["GK303"] and "3.6.3" in before["GK304"]
    fast = Runtime("fastdds", "2.9.1", "test", "/usr", "system")
    assert {m.advisory.id for m in match([fast])} >= {"CVE-2026-45094", "eProsima/Fast-DDS#6498"}

    moved = tuple(dataclasses.replace(a, fixed=("2.9.1",)) if a.product == "fastdds" else a
                  for a in advisories())
    monkeypatch.setattr(table, "advisories", lambda: moved)
    after = findings()
    assert "fixed in Fast DDS 2.9.1" in after["GK303"] and "3.4.3" not in after["GK303"]
    assert "fixed in Fast DDS 2.9.1" in after["GK304"]
    assert not [m for m in match([fast]) if m.status == "affected"]
