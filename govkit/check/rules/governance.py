"""Lint rules for governance documents.

How an implementation reads governance (DDS Security 1.1, 9.4.1.2): for a participant's
domain id, the first domain_rule whose <domains> holds it applies; within it, for a topic,
the first topic_rule whose topic_expression matches the topic name applies. Whatever an
earlier rule takes, a later one never sees.
"""

from __future__ import annotations

from collections.abc import Iterator

from govkit.check.rules.registry import GOV, Context, Hit, rule
from govkit.common.findings import quote_value
from govkit.documents import domainsets
from govkit.documents.globs import covers
from govkit.documents.model import DomainRule, TopicRule, Value
from govkit.documents.parse import text_value


def protected(kind: Value) -> bool:
    return kind.value is not None and kind.value != "NONE"


def encrypted(kind: Value) -> bool:
    return kind.value is not None and "ENCRYPT" in kind.value


def is_open(t: TopicRule) -> bool:
    """Nothing guards the topic: no access control, no protection of any kind."""
    return (t.read_ac.value is False and t.write_ac.value is False
            and t.discovery.value is False and not protected(t.metadata)
            and not protected(t.data))


def expressions(topic_rules: list[TopicRule], limit: int = 4) -> str:
    shown = [quote_value(t.expression.shown()) for t in topic_rules[:limit]]
    more = len(topic_rules) - limit
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def where(t: TopicRule | DomainRule) -> object:
    """The element a finding about a rule points at."""
    if isinstance(t, TopicRule) and not t.expression.missing:
        return t.expression.elem
    return t.elem


@rule("GK100", "empty-topic-expression", "error", [GOV],
      "An empty topic_expression matches no topic name, so its topic_rule never applies",
      "<topic_expression></topic_expression>", validate=True)
def empty_topic_expression(ctx: Context) -> Iterator[Hit]:
    for expr in ctx.doc.root.iter("topic_expression"):
        if not text_value(expr).strip():
            yield Hit(expr, "topic_expression is empty, so this topic_rule matches no topic")


@rule("GK101", "unreachable-topic-rule", "warning", [GOV],
      "Topic rules are evaluated in order and the first match wins, so a rule whose topics "
      "an earlier rule already matches never applies",
      "<topic_expression>*</topic_expression> before <topic_expression>Square</...>",
      structural=True)
def unreachable_topic_rule(ctx: Context) -> Iterator[Hit]:
    for d in ctx.model.rules:
        earlier: dict[str, TopicRule] = {}
        for t in d.topic_rules:
            expr = t.expression.value
            if not expr or not expr.strip():
                continue
            if not ctx.spend(len(earlier)):
                return
            first = next((e for p, e in earlier.items() if covers(p, expr)), None)
            if first is not None:
                yield Hit(where(t), (
                    f"topic_rule {quote_value(expr)} never applies: the topic_rule "
                    f"{quote_value(first.expression.value)} on line {ctx.line(first.elem)} "
                    "matches every topic it matches"))
            else:
                earlier.setdefault(expr, t)


def _domain_sets(ctx: Context) -> list[tuple[DomainRule, domainsets.Intervals]]:
    return [(d, domainsets.of_spans(d.domains, ctx.target.open_range))
            for d in ctx.model.rules]


@rule("GK102", "unreachable-domain-rule", "warning", [GOV],
      "The first domain_rule holding a domain id applies to it, so a rule whose domains "
      "earlier rules already hold never applies",
      "two domain_rules both for <id>0</id>", structural=True)
def unreachable_domain_rule(ctx: Context) -> Iterator[Hit]:
    taken: domainsets.Intervals = ()
    firsts: list[tuple[DomainRule, domainsets.Intervals]] = []
    for d, ids in _domain_sets(ctx):
        if not ctx.spend(len(taken) + len(ids)):
            return
        if ids and not domainsets.subtract(ids, taken):
            lines = [str(ctx.line(e.elem)) for e, s in firsts if domainsets.intersect(s, ids)]
            yield Hit(d.elem, f"domain_rule for domains {domainsets.domains_text(ids)} never "
                              f"applies: the domain_rule(s) on line {', '.join(lines)} "
                              "already hold all of them")
        taken = domainsets.union(taken, ids)
        firsts.append((d, ids))


@rule("GK103", "overlapping-domain-rules", "warning", [GOV],
      "For domain ids two domain_rules share, only the earlier rule's settings apply, "
      "which is rarely what the later rule's author meant",
      "<id_range><min>0</min><max>10</max></id_range> then <id>5</id> in a later rule",
      structural=True)
def overlapping_domain_rules(ctx: Context) -> Iterator[Hit]:
    taken: domainsets.Intervals = ()
    firsts: list[tuple[DomainRule, domainsets.Intervals]] = []
    for d, ids in _domain_sets(ctx):
        if not ctx.spend(len(taken) * len(ids)):
            return
        shared = domainsets.intersect(ids, taken)
        if shared and domainsets.subtract(ids, taken):   # wholly shadowed: GK102
            lines = [str(ctx.line(e.elem)) for e, s in firsts if domainsets.intersect(s, ids)]
            yield Hit(d.elem, f"domains {domainsets.domains_text(shared)} of this domain_rule "
                              f"are already held by the domain_rule(s) on line "
                              f"{', '.join(lines)}: for them this rule's settings never apply")
        taken = domainsets.union(taken, ids)
        firsts.append((d, ids))


@rule("GK104", "unauthenticated-with-protection", "warning", [GOV],
      "With allow_unauthenticated_participants true, a peer with no certificate at all is "
      "still matched and may use every topic nothing protects",
      "<allow_unauthenticated_participants>true</...> with <rtps_protection_kind>SIGN</...>")
def unauthenticated_with_protection(ctx: Context) -> Iterator[Hit]:
    for d in ctx.model.rules:
        if d.allow_unauthenticated.value is not True:
            continue
        open_rules = [t for t in d.topic_rules if is_open(t)]
        guarded = [t for t in d.topic_rules if not is_open(t)]
        if not guarded and not protected(d.rtps_kind):
            continue   # nothing is protected: letting anyone in is the point
        what = []
        if protected(d.rtps_kind):
            what.append(f"rtps_protection_kind is {d.rtps_kind.value}")
        if guarded:
            what.append(f"topics {expressions(guarded)} are protected")
        if open_rules:
            can = (f"it can publish and subscribe, unauthenticated, on topics "
                   f"{expressions(open_rules)}")
        else:
            can = ("it can use no topic here (all are protected), yet it is matched and "
                   "sees this participant's announcements")
        if protected(d.rtps_kind):
            can += (f", and holding no keys it gets nothing of the "
                    f"{d.rtps_kind.value} protection")
        yield Hit(d.allow_unauthenticated.elem,
                  f"allow_unauthenticated_participants is true while {' and '.join(what)}: "
                  f"{can}")


@rule("GK105", "join-access-control-off", "warning", [GOV],
      "Without join access control, any participant the Identity CA authenticated joins "
      "the domain even if no grant allows it, so per-topic access control is the only fence",
      "<enable_join_access_control>false</...> with <enable_read_access_control>true</...>")
def join_access_control_off(ctx: Context) -> Iterator[Hit]:
    for d in ctx.model.rules:
        if d.join_ac.value is not False:
            continue
        controlled = [t for t in d.topic_rules
                      if t.read_ac.value is True or t.write_ac.value is True]
        if not controlled:
            continue
        loose = [t for t in d.topic_rules if t.read_ac.value is False
                 or t.write_ac.value is False]
        still = (f"; it can also read or write topics {expressions(loose)}, which lack "
                 "read or write access control" if loose else "")
        hidden = [t for t in d.topic_rules if t.discovery.value is False]
        seen = (f"; it sees the discovery of topics {expressions(hidden)} (topic and type "
                "names, who publishes)" if hidden else "")
        yield Hit(d.join_ac.elem,
                  f"enable_join_access_control is false while topics {expressions(controlled)} "
                  f"have read/write access control: a participant without a grant for this "
                  f"domain still joins it{seen}{still}")


def _leaks(ctx: Context, flag: str, leaked: str) -> Iterator[Hit]:
    for d in ctx.model.rules:
        for t in d.topic_rules:
            value: Value = getattr(t, flag)
            if value.value is not False or not (encrypted(t.metadata) or encrypted(t.data)):
                continue
            kinds = [f"{name} {k.value}" for name, k in (("metadata", t.metadata),
                                                          ("data", t.data)) if encrypted(k)]
            expr = quote_value(t.expression.shown())
            if encrypted(d.rtps_kind):
                yield Hit(value.elem, (
                    f"topic_rule {expr} has {' and '.join(kinds)} but {value.elem.tag} is "
                    f"false: rtps_protection_kind {d.rtps_kind.value} hides it from outsiders, "
                    f"but every authenticated participant receives {leaked}, whatever its "
                    "permissions"), "info")
            else:
                yield Hit(value.elem, (
                    f"topic_rule {expr} has {' and '.join(kinds)} but {value.elem.tag} is "
                    f"false: anyone on the network reads {leaked}"))


@rule("GK106", "discovery-unprotected", "warning", [GOV],
      "Encrypting a topic's data does not hide its discovery: unless discovery is protected, "
      "its name, type and publishers travel in the clear",
      "<enable_discovery_protection>false</...> with <data_protection_kind>ENCRYPT</...>",
      note="info when rtps_protection_kind encrypts whole messages")
def discovery_unprotected(ctx: Context) -> Iterator[Hit]:
    yield from _leaks(ctx, "discovery", "its discovery data (topic name, type name, "
                                        "partitions, QoS, which participants publish and "
                                        "subscribe it)")


@rule("GK107", "liveliness-unprotected", "warning", [GOV],
      "Encrypting a topic's data does not hide its writers' liveliness: unless liveliness is "
      "protected, who writes and when they are alive travels in the clear",
      "<enable_liveliness_protection>false</...> with <data_protection_kind>ENCRYPT</...>",
      note="info when rtps_protection_kind encrypts whole messages")
def liveliness_unprotected(ctx: Context) -> Iterator[Hit]:
    yield from _leaks(ctx, "liveliness", "its writers' liveliness messages (writer GUIDs, "
                                         "when they are alive)")


@rule("GK108", "protection-kind-none", "warning", [GOV],
      "enable_discovery_protection or enable_liveliness_protection sends through the secure "
      "builtin endpoints, but with the domain's protection kind NONE nothing protects them "
      "on the wire", "<discovery_protection_kind>NONE</...> with "
                     "<enable_discovery_protection>true</...>")
def protection_kind_none(ctx: Context) -> Iterator[Hit]:
    for d in ctx.model.rules:
        if protected(d.rtps_kind):
            continue   # whole messages are protected anyway
        for flag, kind, what in (("discovery", d.discovery_kind, "discovery"),
                                 ("liveliness", d.liveliness_kind, "liveliness")):
            if kind.value != "NONE":
                continue
            users = [t for t in d.topic_rules if getattr(t, flag).value is True]
            if users:
                yield Hit(kind.elem, (
                    f"{what}_protection_kind is NONE while topics {expressions(users)} enable "
                    f"{what} protection: their {what} messages go only to authenticated "
                    "participants but unsigned and unencrypted"))

