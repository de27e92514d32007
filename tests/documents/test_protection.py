"""The protection sidecar's classes as (metadata, data) kinds, and its names expanded as the
policy's are (govkit.documents.protection, ros_names)."""

from __future__ import annotations

import pytest
from lxml import etree

from govkit.common.limits import MAX_DOCUMENT_BYTES
from govkit.documents.protection import (
    MAX_PROTECTED_NAME_BYTES,
    MAX_PROTECTED_NAMES,
    ProtectionProblem,
    read_protection,
)
from govkit.documents.render import DomainSet
from govkit.documents.ros_render import render_governance
from govkit.generate.fleet import check_generated


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


def _many(names: list[str], category: str = "topic") -> str:
    items = "".join(f"<{category}>{n}</{category}>" for n in names)
    return f'<rule kind="encrypt"><{category}s>{items}</{category}s></rule>'


def test_the_largest_protection_allowed_makes_a_governance_govkit_reads_back(tmp_path):
    """MAX_PROTECTED_NAMES names of MAX_PROTECTED_NAME_BYTES together, each made of what
    the comment before its topic_rule writes longest (an unprintable 4-byte character,
    10 bytes escaped): the governance is valid and within every document limit.
    (Before 2026-12-07 a protection of 999 topics made `generate` create the PKI and then
    call its own governance invalid: 2,000 children of topic_access_rules.)"""
    per = MAX_PROTECTED_NAME_BYTES // MAX_PROTECTED_NAMES - len("rt/")     # bytes a name
    names = [f"/{i:03}" + "\U000e0001" * ((per - 4) // 4) for i in range(MAX_PROTECTED_NAMES)]
    p = _rules(_many(names))
    data = render_governance(p, DomainSet(((0, 230),)), "p" * 255, "q" * 255)
    assert len(p.topic_rules()) == MAX_PROTECTED_NAMES + 1
    assert sum(len(t.expression.encode()) for t in p.topic_rules()) > \
        0.95 * MAX_PROTECTED_NAME_BYTES
    check_generated(data, tmp_path / "g.xml")            # raises if govkit cannot read it
    assert len(data) < MAX_DOCUMENT_BYTES


@pytest.mark.parametrize(("body", "said", "at"), [
    (_many([f"/t{i}" for i in range(MAX_PROTECTED_NAMES + 1)]),
     f"names more than {MAX_PROTECTED_NAMES} DDS topics", MAX_PROTECTED_NAMES + 1),
    (_many([f"/a{i}" for i in range(MAX_PROTECTED_NAMES // 8 + 1)], "action"),
     "an action 8", MAX_PROTECTED_NAMES // 8 + 1),
    (_many(["/" + "n" * 999 + str(i) for i in range(120)]),
     f"more than {MAX_PROTECTED_NAME_BYTES:,} bytes together", 100),
])
def test_a_protection_whose_governance_govkit_could_not_read_is_refused_at_its_name(
        body, said, at):
    with pytest.raises(ProtectionProblem) as e:
        _rules(body)
    assert said in str(e.value)
    assert e.value.elem.getparent().index(e.value.elem) == at - 1     # the name crossing it
