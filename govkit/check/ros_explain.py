"""`govkit explain --policy POLICY [--protection FILE]`: what the documents `generate
--policy` writes decide, per ROS name: its DDS names, the governance topic_rule that applies
to each (the sidecar rule it comes from, its kinds), and which enclaves may publish and
subscribe it.

Read from the documents themselves: the governance and every enclave's permissions are
rendered as `generate --policy` renders them (the subject written CN=<path>, as sros2
writes it, since no certificate is needed to decide) and read back as DDS Security 1.1
reads them (govkit.documents.access): the first matching topic_rule, the first matching
rule of the grant, default DENY. A name written as a glob (`/robot/*`) stands for many
topics: it is listed with its rule, but who may use it is said per topic name.
"""

from __future__ import annotations

import datetime as dt

from govkit.check.ros_policy import RosInput
from govkit.common.findings import DocumentKind, one_line, without_surrogates
from govkit.documents.access import allowed, topic_rule_for
from govkit.documents.globs import has_wildcards
from govkit.documents.model import build_model
from govkit.documents.parse import parse_xml
from govkit.documents.protection import SROS2_DEFAULT
from govkit.documents.render import DomainSet
from govkit.documents.ros_render import render_governance, render_grant

_EPOCH = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)


def _names(ros: RosInput, protection) -> list:
    """Every distinct (kind, name) of the policy, then those only the sidecar writes."""
    found: dict = {}
    for name in ros.policy.names:
        found.setdefault((name.category, name.fqn), name)
    for r in protection.rules:
        for name in r.names:
            found.setdefault((name.category, name.fqn), name)
    return list(found.values())


def explain_policy(ros: RosInput, domain: int = 0) -> dict:
    protection = ros.protection or SROS2_DEFAULT
    domains = DomainSet(((domain, domain),))
    governance = build_model(parse_xml(render_governance(
        protection, domains, ros.source, ros.protection_source), "governance").root,
        DocumentKind.GOVERNANCE)
    grants = {}
    for e in ros.policy.enclaves:
        data = render_grant(e, f"CN={e.path}", _EPOCH, _EPOCH, domains, ros.source)
        (grants[e.path],) = build_model(parse_xml(data, e.path).root,
                                        DocumentKind.PERMISSIONS).grants
    by_expression = {}   # the governance's topic_rules in order: the sidecar rule of each
    for t in protection.topic_rules():
        by_expression.setdefault(t.expression, t)
    (domain_rule,) = governance.rules
    names = []
    for name in _names(ros, protection):
        topics = []
        for dds in name.dds:
            _, topic_rule = topic_rule_for(governance, dds, domain)
            origin = by_expression[topic_rule.expression.value]
            where = None
            if origin.name is not None or origin.rule.elem is not None:
                elem = origin.name.elem if origin.name is not None else origin.rule.elem
                doc = ros.protection_doc
                if doc is not None:
                    file, line, _ = doc.position(elem)
                    where = f"{file}:{line}"
            pattern = has_wildcards(dds)
            topics.append({
                "name": dds, "pattern": pattern,
                "topic_expression": topic_rule.expression.value,
                "rule": origin.rule.label, "class": origin.rule.kind, "where": where,
                "metadata_protection_kind": topic_rule.metadata.value,
                "data_protection_kind": topic_rule.data.value,
                "publish": None if pattern else sorted(
                    p for p, g in grants.items() if allowed(g, "publish", dds, domain)),
                "subscribe": None if pattern else sorted(
                    p for p, g in grants.items() if allowed(g, "subscribe", dds, domain)),
            })
        names.append({"ros_name": name.fqn, "kind": name.category,
                      "in_policy": any(n is name for n in ros.policy.names),
                      "topics": topics})
    return {"file": ros.source, "kind": "policy", "schema_valid": True,
            "schema_problems": [], "protection": ros.protection_source, "domain": domain,
            "governance": {"rtps_protection_kind": domain_rule.rtps_kind.value,
                           "discovery_protection_kind": domain_rule.discovery_kind.value,
                           "liveliness_protection_kind": domain_rule.liveliness_kind.value,
                           "access_control": "enforced (join, read and write)"},
            "enclaves": [e.path for e in ros.policy.enclaves], "names": names}


def _who(paths: list[str] | None) -> str:
    if paths is None:
        return "(a pattern: see the topic names it matches)"
    return ", ".join(paths) if paths else "no enclave"


def policy_explanation_text(e: dict) -> str:
    g = e["governance"]
    # (the file names as every message shows them: a byte that is not UTF-8 as \\xff)
    file, protection = (one_line(without_surrogates(e[k])) for k in ("file", "protection"))
    lines = [f"{file}: {len(e['enclaves'])} enclave(s), protection: {protection}, "
             f"domain {e['domain']}",
             f"governance: rtps {g['rtps_protection_kind']}, discovery "
             f"{g['discovery_protection_kind']}, liveliness {g['liveliness_protection_kind']};"
             f" access control {g['access_control']}", ""]
    for n in e["names"]:
        note = "" if n["in_policy"] else "  (named by the protection only)"
        lines.append(f"{n['kind']} {n['ros_name']}{note}")
        for t in n["topics"]:
            where = f" ({t['where']})" if t["where"] else ""
            lines.append(f"  {t['name']}: {t['rule']}{where}, {t['class']}: metadata "
                         f"{t['metadata_protection_kind']}, data {t['data_protection_kind']}")
            lines.append(f"      publish: {_who(t['publish'])}; subscribe: "
                         f"{_who(t['subscribe'])}")
    return "\n".join(lines)
