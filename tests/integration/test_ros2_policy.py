"""An sros2 policy's keystore (`govkit export sros2 --policy`) used as rmw uses it: real
Cyclone DDS 0.10 and Fast DDS 2.9 processes, each started from one enclave's six files
alone, with one writer or one reader on a ROS 2 topic's DDS name in the default partition
(as rmw's endpoints are). For every sros2 test policy and for the acceptance policy's
three protection classes, a writer and a reader that the policy allows match and deliver;
a topic the policy denies is refused by both, and govkit says why in one line.

Where the two differ (see helpers/topic_refusal.py): Cyclone 0.10 refuses the topic
itself when the enclave may neither publish nor subscribe it (dds_create_topic: "Not
Allowed By Security"); Fast DDS 2.9 creates the topic and refuses the reader or writer
("topic denied by deny rule")."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cli import govkit
from helpers.dds import cyclone_topic_alone, cyclone_topic_pair, needs_cyclone, next_domain
from helpers.fastdds import fastdds_topic_alone, fastdds_topic_pair
from helpers.require import shared_dir
from helpers.topic_refusal import explain_topic_refusal

from govkit.runners.base import ParticipantFiles

DATA = Path(__file__).resolve().parents[1] / "data" / "ros2"
SROS2 = shared_dir() / "reference" / "sros2" / "policies"
# per sros2 test policy: a writer's enclave, a reader's enclave, a DDS topic both may use
SROS2_PAIRS = {
    "talker_listener": ("/talker_listener/talker", "/talker_listener/listener", "rt/chatter"),
    "add_two_ints": ("/add_two_ints/add_two_ints_client", "/add_two_ints/add_two_ints_server",
                     "rq/add_two_intsRequest"),
    "minimal_action": ("/minimal_action/minimal_action_server",
                       "/minimal_action/minimal_action_client",
                       "rt/fibonacci/_action/feedback"),
    "sample": ("/sample_policy/admin", "/talker_listener/listener", "rt/chatter"),
    "single_context": ("/single_enclave", "/single_enclave", "rt/chatter"),
}
# the acceptance policy's three classes (tests/data/ros2/acceptance.protection.xml)
CLASSES = {
    "sign with origin": ("/robot/navigator", "/robot/driver", "rt/robot/cmd_vel"),
    "encrypt": ("/robot/camera", "/robot/navigator", "rt/robot/camera/image"),
    "none": ("/robot/driver", "/operator/console", "rt/robot/odom"),
}
VENDORS = [pytest.param("cyclone", marks=[needs_cyclone, pytest.mark.cyclone]),
           pytest.param("fastdds", marks=pytest.mark.fastdds)]
DOMAINS = (next_domain(), next_domain())   # one per vendor: the two runs never meet


def _export(root: Path, policy: Path, *extra: str) -> Path:
    ks = root / "ks"
    result = govkit("export", "sros2", str(ks), "--policy", str(policy), "--ca",
                    str(root / "pki"), "--build", str(root / "build"), "--domain",
                    ",".join(map(str, DOMAINS)), *extra)
    assert result.exit_code == 0, result.output
    return ks


def _files(ks: Path, enclave: str) -> ParticipantFiles:
    """What rmw hands the DDS plugins: the enclave's six files, nothing else."""
    d = (ks / "enclaves" / enclave.lstrip("/")).resolve()
    return ParticipantFiles(enclave, d / "identity_ca.cert.pem", d / "cert.pem",
                            d / "key.pem", d / "permissions_ca.cert.pem",
                            d / "governance.p7s", d / "permissions.p7s")


def _pair(vendor: str, ks: Path, writer: str, reader: str, topic: str, work: Path):
    domain = DOMAINS[vendor == "fastdds"]
    run = cyclone_topic_pair if vendor == "cyclone" else fastdds_topic_pair
    result = run(_files(ks, writer), _files(ks, reader), topic, work, domain)
    assert result["received"], (result["pub"][1][-2000:], result["sub"][1][-2000:])
    for role in ("pub", "sub"):
        code, text = result[role]
        assert code == 0, text[-2000:]
        assert explain_topic_refusal(text, Path(), "publish", topic, domain) is None


@pytest.fixture(scope="module")
def sros2_keystores(tmp_path_factory, shared) -> dict[str, Path]:
    return {name: _export(tmp_path_factory.mktemp(name), SROS2 / f"{name}.policy.xml")
            for name in SROS2_PAIRS}


@pytest.fixture(scope="module")
def acceptance(tmp_path_factory) -> Path:
    return _export(tmp_path_factory.mktemp("acceptance"), DATA / "acceptance.policy.xml",
                   "--protection", str(DATA / "acceptance.protection.xml"))


@pytest.mark.parametrize("vendor", VENDORS)
@pytest.mark.parametrize("name", sorted(SROS2_PAIRS))
def test_every_sros2_test_policy_starts_and_matches(sros2_keystores, vendor, name, tmp_path):
    _pair(vendor, sros2_keystores[name], *SROS2_PAIRS[name], tmp_path)


@pytest.mark.parametrize("vendor", VENDORS)
@pytest.mark.parametrize("protection", sorted(CLASSES))
def test_each_protection_class_starts_and_matches(acceptance, vendor, protection, tmp_path):
    _pair(vendor, acceptance, *CLASSES[protection], tmp_path)


@pytest.mark.parametrize("vendor", VENDORS)
@pytest.mark.parametrize(("enclave", "role", "topic", "why"), [
    # the console may subscribe /robot/* but its DENY of /robot/camera/image comes first
    ("/operator/console", "sub", "rt/robot/camera/image",
     "grant '/operator/console''s deny_rule names it (rt/robot/camera/image), and DENY "
     "rules are read before ALLOW rules"),
    # the navigator may subscribe /robot/odom, never publish it: no rule, default DENY
    ("/robot/navigator", "pub", "rt/robot/odom",
     "no allow_rule of grant '/robot/navigator' names it, so its default (DENY) decides"),
])
def test_a_denied_topic_is_refused_by_both(acceptance, vendor, enclave, role, topic, why,
                                           tmp_path):
    domain = DOMAINS[vendor == "fastdds"]
    alone = cyclone_topic_alone if vendor == "cyclone" else fastdds_topic_alone
    files = _files(acceptance, enclave)
    code, text = alone(files, role, topic, tmp_path, domain)
    assert code == 5, text            # the endpoint (or, in Cyclone, its topic) refused
    if vendor == "cyclone" and role == "sub":
        assert f"topic {topic}: Not Allowed By Security" in text
    elif vendor == "cyclone":
        # it may subscribe the topic, so Cyclone creates it and refuses the writer
        assert f"writer on {topic}: Not Allowed By Security" in text
    else:
        assert f"[SECURITY] {topic} topic" in text
    action = "subscribe" if role == "sub" else "publish"
    said = explain_topic_refusal(text, files.permissions, action, topic, domain)
    vendor_name = "Cyclone DDS" if vendor == "cyclone" else "Fast DDS"
    assert said.startswith(f"{vendor_name} refused to {action} {topic}: "
                           f"{files.permissions}:") and said.endswith(why), said
    assert "\n" not in said
