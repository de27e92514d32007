"""A fleet end to end on the real Cyclone DDS: participants from a participants file (their
own subject fields and grants), permissions generated and signed in one pass."""

from __future__ import annotations

import re

import pytest
from helpers.dds import cyclone_loads, needs_cyclone, run_pair, with_file

from govkit.catalog.profiles import get_profile
from govkit.documents.render import DomainSet
from govkit.generate import fleet
from govkit.generate.bundle import participant_files
from govkit.pki.issuance import init_pki
from govkit.pki.participants import parse_participants
from govkit.runners.base import Bundle
from govkit.smime.sign import sign_document

pytestmark = [needs_cyclone, pytest.mark.cyclone]

FLEET = """\
name,organization,unit,country,publish,subscribe,partitions
pub,Acme Corp,Test Bench,DE,DDSPerf*,DDSPerf*,*
sub,Acme Corp,Test Bench,DE,DDSPerf*,DDSPerf*,*
narrow,,,,Temperature,Temperature,*
"""


def test_fleet_participants_are_accepted_and_least_privilege_is_enforced(tmp_path):
    participants = parse_participants(FLEET, "fleet.csv")
    pki, _ = init_pki(tmp_path / "pki", participants)
    profile = get_profile("rtps_sign")
    result = fleet.generate([profile], pki, tmp_path / "build", DomainSet(), "ddsperf",
                            participants, sign=True)
    assert not result.errors
    # The catalog's profiles turn topic access control off (grants are then not enforced):
    # here it is on, so Cyclone checks every participant's topics against its grants.
    governance = tmp_path / "build/governance/rtps_sign.xml"
    xml = governance.read_bytes()
    enforced = re.sub(rb"<enable_(read|write)_access_control>false<",
                      rb"<enable_\1_access_control>true<", xml)
    assert enforced.count(b"_access_control>true<") == 2
    governance = governance.with_name("enforced.xml")
    governance.write_bytes(enforced)
    governance = sign_document(governance, pki.permissions_ca, pki.permissions_ca_key)
    files = {p.name: participant_files(pki, p.name, governance,
                                        tmp_path / f"build/permissions/{p.name}.p7s")
             for p in participants}
    subject = pki.certificate("pub").subject.rfc4514_string()
    assert subject == "C=DE,O=Acme Corp,OU=Test Bench,CN=pub"
    assert f"<subject_name>{subject}</subject_name>" in \
        (tmp_path / "build/permissions/pub.xml").read_text()

    bundle = Bundle(profile, {"pub": files["pub"], "sub": files["sub"]})
    runner, point, outputs = run_pair(bundle, tmp_path / "cfg", duration=1)
    pub = outputs["pub"]
    assert pub.returncode in (0, None) and not pub.timed_out, pub.tail()
    assert sum(r["count"] for r in runner.parse(point, outputs).rows) > 100

    # a participant granted other topics only may not use ddsperf's
    narrow = with_file(bundle, "pub", certificate=files["narrow"].certificate,
                       private_key=files["narrow"].private_key,
                       permissions=files["narrow"].permissions)
    loaded, text = cyclone_loads(narrow, "pub", tmp_path / "cfg-narrow")
    assert not loaded, text[-2000:]
    assert "topic permission denied" in text and "denied by default rule" in text, text[-2000:]
