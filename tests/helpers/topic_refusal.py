"""Why an implementation refused a writer or reader on one topic (an sros2 policy's DENY, or
a topic no ALLOW names), in one line: the file, the line and the rule, read from the signed
permissions the process was given, as DDS Security 1.1 reads them
(govkit.documents.access). tests/integration/test_ros2_policy.py holds it against what
real Cyclone DDS and Fast DDS processes refuse (it was govkit.runners.topic_refusal, which
no govkit command called: issue 45).

Where each refuses (both real processes, tests/integration/test_ros2_policy.py):
- Cyclone DDS 0.10 refuses the topic itself: dds_create_topic fails with "Not Allowed By
  Security" for a topic the participant may neither publish nor subscribe (its
  access_control check_create_topic), before any writer or reader exists; a topic it may
  subscribe but not publish is refused at dds_create_writer.
- Fast DDS 2.9 creates the topic and refuses the endpoint: create_datawriter /
  create_datareader fail after "[SECURITY] T topic denied by deny rule." (or "… not found
  in allow rule") from its Permissions.cpp.
"""

from __future__ import annotations

import re
from pathlib import Path

from govkit.check.validate import signed_document
from govkit.common.errors import GovkitError
from govkit.common.findings import DocumentError, DocumentKind
from govkit.common.inputs import read_input
from govkit.common.limits import MAX_SMIME_BYTES
from govkit.documents.access import deciding_rule
from govkit.documents.globs import matches
from govkit.documents.model import build_model
from govkit.documents.parse import parse_xml

_REFUSED = {
    "Cyclone DDS": re.compile(r"Not Allowed By Security", re.I),
    "Fast DDS": re.compile(r"\[SECURITY\].*(topic denied by deny rule|not found in allow rule|"
                           r"Error checking creation of local (reader|writer))"),
}


def refused_by(output: str) -> str | None:
    """The implementation whose access control refused an endpoint in `output`, or None."""
    return next((vendor for vendor, pattern in _REFUSED.items() if pattern.search(output)),
                None)


def explain_topic_refusal(output: str, permissions: Path, action: str, topic: str,
                          domain: int) -> str | None:
    """One line saying why `action` (publish, subscribe) on `topic` was refused, when
    `output` shows access control refused it (None otherwise)."""
    vendor = refused_by(output)
    if vendor is None:
        return None
    try:
        signed = signed_document(read_input(permissions, MAX_SMIME_BYTES, "permissions"),
                                 str(permissions))
        doc = parse_xml(signed.data, str(permissions), signed.line_offset)
    except (GovkitError, DocumentError) as e:
        return f"{vendor} refused to {action} {topic}; its permissions {permissions} cannot " \
               f"be read: {e}"
    grants = build_model(doc.root, DocumentKind.PERMISSIONS).grants
    if not grants:
        return f"{vendor} refused to {action} {topic}: {permissions} holds no grant"
    grant = grants[0]
    rule = deciding_rule(grant, action, topic, domain)
    head = f"{vendor} refused to {action} {topic}: {permissions}"
    if rule is None:
        line = doc.locate(grant.elem)[0]
        return (f"{head}:{line}: no allow_rule of grant {grant.name!r} names it, so its "
                f"default ({grant.default.value}) decides")
    names = [t.value for c in rule.criteria if c.action == action for t in c.topics
             if t.value is not None and matches(t.value, topic)]
    line = doc.locate(rule.elem)[0]
    if rule.verdict == "deny":
        return (f"{head}:{line}: grant {grant.name!r}'s deny_rule names it ({names[0]}), "
                f"and DENY rules are read before ALLOW rules")
    return (f"{head}:{line}: grant {grant.name!r}'s allow_rule allows it ({names[0]}): the "
            f"refusal is not this grant's (the governance's domains, or domain {domain}?)")
