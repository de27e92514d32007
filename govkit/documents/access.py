"""What a permissions grant and a governance decide for one topic name, as DDS Security 1.1
reads them.

Permissions (9.4.1.3): the grant's rules are read in order; the first rule whose domains
hold the domain id and one of whose criteria of the action (publish, subscribe) matches
the topic (fnmatch, govkit.documents.globs) and the partition (a criteria without
<partitions> matches the default, empty-named partition only) decides ALLOW or DENY; no
rule: the grant's default. Data tags are not read here (no document govkit writes has any).
Governance (9.4.1.2): the first domain_rule holding the domain id, then its first
topic_rule whose topic_expression matches.

govkit's own reading, used by `explain --policy` and by the tests that compare govkit's
permissions with sros2's: the same for Cyclone DDS 0.10 and Fast DDS 2.9 on the documents
govkit writes (closed domain ranges, no partitions, no data tags).
"""

from __future__ import annotations

from govkit.documents.globs import matches
from govkit.documents.model import AccessRule, DomainRule, Governance, Grant, TopicRule


def _holds(spans, domain: int) -> bool:
    for span in spans:
        bounds = span.bounds("single")
        if bounds is not None and bounds[0] <= domain <= bounds[1]:
            return True
    return False


def deciding_rule(grant: Grant, action: str, topic: str, domain: int = 0,
                  partition: str = "") -> AccessRule | None:
    """The first rule of `grant` that applies to `action` on `topic` (None: the default)."""
    for rule in grant.rules:
        if not _holds(rule.domains, domain):
            continue
        for c in rule.criteria:
            if c.action != action:
                continue
            if not any(t.value is not None and matches(t.value, topic) for t in c.topics):
                continue
            if c.partitions is None:
                in_partition = partition == ""
            else:
                in_partition = any(p.value is not None and matches(p.value, partition)
                                   for p in c.partitions)
            if in_partition:
                return rule
    return None


def allowed(grant: Grant, action: str, topic: str, domain: int = 0,
            partition: str = "") -> bool:
    """Whether `grant` lets its participant `action` (publish, subscribe) `topic`."""
    rule = deciding_rule(grant, action, topic, domain, partition)
    if rule is not None:
        return rule.verdict == "allow"
    return (grant.default.value or "").strip().upper() == "ALLOW"


def topic_rule_for(governance: Governance, topic: str, domain: int = 0
                   ) -> tuple[DomainRule, TopicRule | None] | None:
    """The (domain_rule, topic_rule) that applies to `topic` on `domain` (topic_rule None:
    no rule of that domain_rule matches), or None when no domain_rule holds `domain`."""
    for d in governance.rules:
        if not _holds(d.domains, domain):
            continue
        for t in d.topic_rules:
            if t.expression.value is not None and matches(t.expression.value.strip(), topic):
                return d, t
        return d, None
    return None
