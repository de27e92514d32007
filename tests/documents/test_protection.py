"""The protection sidecar's classes as (metadata, data) kinds, and its names expanded as the
policy's are (govkit.documents.protection, ros_names)."""

from __future__ import annotations

import pytest
from lxml import etree

from govkit.documents.protection import ProtectionProblem, read_protection


def _rules(body: str):
    return read_protection(etree.fromstring(f'<protection version="0.1">{body}'
                                            f'<default kind="none"/></protection>'))


@pytest.mark.parametrize(("attributes", "kinds"), [
    ('kind="none"', ("NONE", "NONE")),
    ('kind="sign"', ("SIGN", "NONE")),
    ('kind="encrypt"', ("ENCRYPT", "ENCRYPT")),
    ('kind="sign" origin="true"', ("SIGN_WITH_ORIGIN_AUTHENTICATION", "NONE")),
    ('kind="encrypt" origin="1"', ("ENCRYPT_WITH_ORIGIN_AUTHENTICATION", "ENCRYPT")),
    ('kind="sign" origin="false"', ("SIGN", "NONE")),
    ('kind="sign" data="ENCRYPT"', ("SIGN", "ENCRYPT")),
    ('kind="encrypt" metadata="NONE"', ("NONE", "ENCRYPT")),
    ('kind="none" metadata="SIGN_WITH_ORIGIN_AUTHENTICATION" data="SIGN"',
     ("SIGN_WITH_ORIGIN_AUTHENTICATION", "SIGN")),
])
def test_each_class_is_its_two_kinds(attributes, kinds):
    p = _rules(f"<rule {attributes}><topics><topic>/t</topic></topics></rule>")
    (rule,) = p.rules
    assert (rule.kinds.metadata, rule.kinds.data) == kinds


def test_names_expand_as_the_policys_and_every_service_and_action_topic_is_a_rule():
    p = _rules('<rule kind="sign" ns="/robot" node="driver">'
               '<topics><topic>cmd_vel</topic></topics>'
               '<services><service>~/set_mode</service></services>'
               '<actions><action>/nav</action></actions></rule>')
    assert [t.expression for t in p.topic_rules()] == [
        "rt/robot/cmd_vel", "rq/robot/driver/set_modeRequest", "rr/robot/driver/set_modeReply",
        "rq/nav/_action/cancel_goalRequest", "rq/nav/_action/get_resultRequest",
        "rq/nav/_action/send_goalRequest", "rr/nav/_action/cancel_goalReply",
        "rr/nav/_action/get_resultReply", "rr/nav/_action/send_goalReply",
        "rt/nav/_action/feedback", "rt/nav/_action/status", "*"]


@pytest.mark.parametrize(("body", "said"), [
    ('<rule kind="none" origin="true"><topics><topic>/t</topic></topics></rule>',
     "origin authentication needs a signed or encrypted metadata kind"),
    ('<rule kind="sign"><topics><topic>~/x</topic></topics></rule>',
     "a private name (~) needs node= on its rule"),
])
def test_what_the_schema_cannot_say_is_refused(body, said):
    with pytest.raises(ProtectionProblem) as e:
        _rules(body)
    assert said in str(e.value)
