"""Lint rules for an sros2 policy and its protection sidecar (govkit.check.ros_policy reads
them; `govkit lint POLICY.xml [--protection FILE]` or `govkit lint SIDECAR.xml`).

What they compare is what the documents govkit writes from the two will decide: the
governance's topic_rules are the sidecar's DDS names in file order (the first matching one
applies, DDS Security 1.1 9.4.1.2), and each enclave's grant is its DENY rule, then its
ALLOW rule, then default DENY (9.4.1.3). Names are compared as DDS names (fnmatch,
govkit.documents.globs), never as they are written.
"""

from __future__ import annotations

from collections.abc import Iterator

from govkit.check.rules.registry import POLICY, PROTECTION, Context, Hit, rule
from govkit.common.findings import quote_value
from govkit.documents.globs import covers, matches, overlaps
from govkit.documents.ros_names import ROS_DISCOVERY_TOPIC


def _line(ctx: Context, elem) -> str:
    file, line, _ = ctx.doc.position(elem)
    return f"line {line}" + ("" if file == ctx.doc.file_of(ctx.doc.root) else f" of {file}")


def _protection(ctx: Context):
    return ctx.ros.protection if ctx.ros is not None else None


@rule("GK400", "protection-rule-shadowed", "warning", [PROTECTION, POLICY],
      "A name takes the first protection rule that names it, so a name whose every topic "
      "an earlier rule's names already match never gets this rule's protection",
      "<rule kind=\"sign\"><topics><topic>/*</topic>… before <rule kind=\"encrypt\">"
      "<topics><topic>/camera/*</topic>")
def protection_rule_shadowed(ctx: Context) -> Iterator[Hit]:
    protection = _protection(ctx)
    if protection is None:
        return
    earlier: list = []   # (DDS expression, rule, name) of every earlier rule
    for r in protection.rules:
        for name in r.names:
            taken = []
            for dds in name.dds:
                if not ctx.spend(len(earlier)):
                    return
                first = next(((e, er, en) for e, er, en in earlier if covers(e, dds)), None)
                if first is None:
                    break
                taken.append(first)
            else:
                _, er, en = taken[0]
                yield Hit(name.elem, (
                    f"{name.category} {quote_value(name.written)} never gets {r.label}'s "
                    f"protection: {er.label}'s {en.category} {quote_value(en.written)} "
                    f"({_line(ctx, en.elem)}) comes first and matches all its topics"))
        earlier += [(dds, r, name) for name in r.names for dds in name.dds]


@rule("GK401", "protection-name-missed", "warning", [POLICY],
      "A policy name that a protection rule names but whose topics the governance gives "
      "another class (the default, or an earlier rule) is not protected as the sidecar "
      "says: the rule names it as another kind of name (a topic for an action), or an "
      "earlier rule's glob takes it first",
      "<actions><action>/navigate</action> in the policy, <rule kind=\"encrypt\"><topics>"
      "<topic>/navigate</topic> in the sidecar")
def protection_name_missed(ctx: Context) -> Iterator[Hit]:
    protection = _protection(ctx)
    if protection is None:
        return
    topic_rules = protection.topic_rules()
    seen: set = set()
    for name in ctx.ros.policy.names:
        key = (name.category, name.fqn)
        if key in seen:
            continue
        seen.add(key)
        # a rule names it: a name (or glob) of its own kind that matches it, or exactly
        # its name as another kind (a glob of topics does not name a service)
        namer = next(((r, n) for r in protection.rules for n in r.names
                      if matches(n.fqn, name.fqn) and n.category == name.category
                      or n.fqn == name.fqn), None)
        if namer is None:
            continue
        r, n = namer
        for dds in name.dds:
            if not ctx.spend(len(topic_rules)):
                return
            got = next(t for t in topic_rules if matches(t.expression, dds))
            if got.rule is r:
                continue
            how = (f"as a {n.category}, whose topics are not this {name.category}'s"
                   if n.category != name.category else "")
            took = ("falls to the default" if got.name is None else
                    f"takes {got.rule.label}'s {got.rule.kind} ({got.name.category} "
                    f"{quote_value(got.name.written)}, {_line(ctx, got.name.elem)})")
            yield Hit(name.elem, (
                f"{name.category} {quote_value(name.fqn)}: its topic {quote_value(dds)} "
                f"{took} ({got.rule.kinds}), although {r.label} ({_line(ctx, n.elem)}) "
                f"names it{' ' + how if how else ''}"))
            break


@rule("GK402", "protected-name-not-granted", "warning", [POLICY],
      "A protection rule for a name no enclave may publish or subscribe protects nothing: "
      "most often the name is misspelt, or written relative where the policy's is not",
      "<rule kind=\"encrypt\"><topics><topic>/camra/*</topic> for a policy granting "
      "/camera/image")
def protected_name_not_granted(ctx: Context) -> Iterator[Hit]:
    protection = _protection(ctx)
    if protection is None:
        return
    granted = {g.dds for e in ctx.ros.policy.enclaves for g in e.grants
               if g.verdict == "ALLOW"} | {ROS_DISCOVERY_TOPIC}
    for r in protection.rules:
        if not r.kinds.protected:
            continue
        for name in r.names:
            if not ctx.spend(len(granted) * len(name.dds)):
                return
            if not any(overlaps(dds, g) for dds in name.dds for g in granted):
                yield Hit(name.elem, (
                    f"{name.category} {quote_value(name.written)} ({r.label}, {r.kind}) is "
                    f"granted to no enclave: nothing the policy allows uses it"))


@rule("GK403", "deny-never-applies", "warning", [POLICY],
      "A DENY takes effect only over an ALLOW of the same enclave and action; one that no "
      "ALLOW of its enclave could match changes nothing (the default is DENY already): "
      "most often it was meant for another enclave, or its name is misspelt",
      "<topics publish=\"DENY\"><topic>/camera/*</topic> in an enclave allowed to publish "
      "only /odom")
def deny_never_applies(ctx: Context) -> Iterator[Hit]:
    if ctx.ros is None:
        return
    for enclave in ctx.ros.policy.enclaves:
        allows = {a: {g.dds for g in enclave.grants if g.verdict == "ALLOW" and g.action == a}
                  | {ROS_DISCOVERY_TOPIC} for a in ("publish", "subscribe")}
        reported: set = set()
        by_name: dict = {}
        for g in enclave.grants:
            if g.verdict == "DENY":
                by_name.setdefault((id(g.name), g.qualifier), []).append(g)
        for grants in by_name.values():
            if not ctx.spend(sum(len(allows[g.action]) for g in grants)):
                return
            if any(overlaps(g.dds, a) for g in grants for a in allows[g.action]):
                continue
            g = grants[0]
            if id(g.name) in reported:
                continue
            reported.add(id(g.name))
            yield Hit(g.name.elem, (
                f"{g.qualifier}=\"DENY\" of {g.name.category} {quote_value(g.name.fqn)} "
                f"never applies: enclave {quote_value(enclave.path)} is allowed nothing it "
                f"matches (its default is DENY already)"))
