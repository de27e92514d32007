"""`govkit explain`: what a governance or permissions document protects and what it does not,
in plain English, per domain_rule and topic_rule (governance) or per grant (permissions).

Meanings follow DDS Security 1.1 (9.4.1.2 governance, 9.4.1.3 permissions, 8.4.2.9 the
protection kinds); where implementations read something differently (an open id_range),
the sentence says so.
"""

from __future__ import annotations

import datetime as dt

from govkit.catalog.profiles import PROTECTION_KINDS
from govkit.catalog.targets import open_range_readers
from govkit.check.loaded import LoadedDocument
from govkit.check.rules.permissions import criteria_cover
from govkit.common.findings import one_line, quote_value
from govkit.documents import domainsets
from govkit.documents.globs import covers, matches, matches_everything
from govkit.documents.model import (
    AccessRule,
    Criteria,
    DomainRule,
    Governance,
    Grant,
    Instant,
    TopicRule,
    Value,
)


def _kind(v: Value) -> str:
    if v.missing:
        return "not stated (element missing)"
    known = PROTECTION_KINDS.get(v.value)
    return known.meaning if known else f"{quote_value(v.text or '')} (not a valid protection kind)"


def _flag(v: Value) -> bool | None:
    return v.value if isinstance(v.value, bool) else None


# An open <id_range> (min only) is read two ways: min and up (the specification, 9.4.1.2.2.1,
# and Connext) and the single domain min (Cyclone DDS 0.10 and Fast DDS 2.9: the catalog's
# targets say who, and why).
_READINGS = ("up", "single")


def _readers(reading: str) -> str:
    """Who reads an open id_range this way, as the subject of "read(s) it"."""
    if reading == "up":
        others = open_range_readers("up")
        return "the specification" + (f" (and {others})" if others else "") + " reads"
    single = open_range_readers("single")
    return f"{single} {'read' if ' and ' in single else 'reads'}"


def _per_reading(said: list[str | None], nothing: str) -> str | None:
    """One sentence if both readings say the same, else each reading's, named."""
    if said[0] == said[1]:
        return said[0]
    return "; ".join(f"as {_readers(r)} the open id_range: {text or nothing}"
                     for r, text in zip(_READINGS, said, strict=True))


def _domains(spans, elem=None) -> str:
    up = domainsets.domains_text(domainsets.of_spans(spans, "up"))
    single = domainsets.domains_text(domainsets.of_spans(spans, "single"))
    text = up if up == single else f"{up} ({_readers('single')} {single})"
    beta = [] if elem is None or spans else \
        [quote_value(c.text.strip()) for c in elem if c.tag == "domain_id" and c.text]
    if beta:   # DDS Security 1.0-beta's <domain_id>: 1.1 readers see no <domains> at all
        text += (f" as DDS Security 1.1 reads it (it holds the 1.0-beta <domain_id> "
                 f"{', '.join(beta)}, which 1.1 implementations do not read)")
    return text


def _held(ids: dict, taken: dict, earlier_lines: dict) -> str | None:
    """What earlier domain_rules hold of this rule's domains (per reading), or None."""
    said = []
    for reading in _READINGS:
        shared = domainsets.intersect(ids[reading], taken[reading])
        if not shared:
            said.append(None)
            continue
        lines = ", ".join(str(n) for n in earlier_lines[reading](ids[reading]))
        rest = domainsets.subtract(ids[reading], taken[reading])
        said.append(
            f"the domain_rule(s) on line {lines} hold all of its domains: this rule NEVER "
            f"APPLIES" if not rest else
            f"domains {domainsets.domains_text(shared)} are held by the domain_rule(s) on "
            f"line {lines}, so for them these settings never apply; this rule applies to "
            f"{domainsets.domains_text(rest)} only")
    return _per_reading(said, "no earlier rule holds any of its domains")


# Pattern comparisons explain may spend finding topic rules that never apply (as
# registry.WORK_BUDGET for lint); a document needing more is explained without them.
WORK_BUDGET = 200_000


def _topic_rule(t: TopicRule, earlier: list[TopicRule], d: DomainRule, line) -> dict:
    expr = t.expression.value if isinstance(t.expression.value, str) else None
    protects, not_protected = [], []
    for flag, action in ((t.read_ac, "read (subscribe)"), (t.write_ac, "write (publish)")):
        if _flag(flag):
            protects.append(f"who may {action}: only participants whose permissions allow it")
        else:
            not_protected.append(f"who may {action}: any participant in the domain")
    rtps = d.rtps_kind.value
    audience = ("every authenticated participant" if rtps is not None and "ENCRYPT" in rtps
                else "anyone on the network")
    for flag, what, leak, kind, setting in (
            (t.discovery, "discovery", "topic and type names, partitions, QoS and who "
                                       "publishes and subscribes are", d.discovery_kind,
             "discovery_protection_kind"),
            (t.liveliness, "liveliness", "which writers are alive, and when, is",
             d.liveliness_kind, "liveliness_protection_kind")):
        if not _flag(flag):
            not_protected.append(f"{what}: {leak} visible to {audience}")
        elif kind.value in (None, "NONE"):
            # The secure builtin endpoints carry it (only to authenticated participants),
            # but what protects their messages is the domain_rule's discovery_ or
            # liveliness_protection_kind (DDS Security 1.1, 9.4.1.2, the domain rule):
            # with NONE a passive listener reads them as plain discovery.
            shown = quote_value(kind.text.strip()) if kind.text else "missing"
            not_protected.append(f"{what}: sent through the secure builtin endpoints, which "
                                 f"the domain_rule does not protect ({setting} {shown}), "
                                 f"so {leak} visible to {audience}")
        else:
            protects.append(f"{what}: sent through the secure builtin endpoints, "
                            f"{_kind(kind)}")
    for v, what in ((t.metadata, "submessages (metadata)"), (t.data, "data (payload)")):
        if v.value not in (None, "NONE"):
            protects.append(f"{what}: {_kind(v)}")
        else:
            not_protected.append(f"{what}: {_kind(v)}")
    shadow = next((e for e in earlier if expr and isinstance(e.expression.value, str)
                   and covers(e.expression.value, expr)), None)
    scope = ("every topic" if expr and matches_everything(expr)
             else f"topics matching {quote_value(expr or '')}")
    return {"line": line(t.elem), "expression": expr, "scope": scope,
            "never_applies": (f"the topic_rule {quote_value(shadow.expression.value)} on line "
                              f"{line(shadow.elem)} matches every topic it matches")
            if shadow else None,
            "protects": protects, "does_not_protect": not_protected}


def _domain_rule(d: DomainRule, line, check_order: bool, held: str | None = None) -> dict:
    unauth, join = _flag(d.allow_unauthenticated), _flag(d.join_ac)
    if unauth:
        who = ("anyone, even a participant without a certificate "
               "(allow_unauthenticated_participants)")
    else:
        who = "only participants authenticated by the Identity CA"
    if join:
        who += ("; an authenticated participant also needs permissions for the domain "
                "(join access control)")
    elif not unauth:
        who += "; any of them joins (no join access control: permissions are not checked)"
    topics, out = [], []
    for t in d.topic_rules:
        topics.append(_topic_rule(t, out if check_order else [], d, line))
        out.append(t)
    return {"line": line(d.elem), "domains": _domains(d.domains, d.elem),
            "held_by_earlier": held, "who_joins": who,
            "rtps_messages": _kind(d.rtps_kind),
            "secure_discovery": _kind(d.discovery_kind),
            "secure_liveliness": _kind(d.liveliness_kind), "topic_rules": topics,
            "unmatched_topics": "a topic no topic_rule matches cannot be used (implementations "
                                "refuse to create it)"}


def _when(v: Value) -> str:
    return v.shown() + ("" if v.value is None or v.value.has_timezone else " (UTC)")


def _status(g: Grant, now: dt.datetime) -> str:
    nb, na, now_i = g.not_before.value, g.not_after.value, Instant.from_datetime(now)
    if nb is None or na is None:
        return "validity not readable"
    if now_i.since_epoch < nb.since_epoch:
        return "not valid yet"
    if now_i.since_epoch >= na.since_epoch:
        return f"expired {(now_i.since_epoch - na.since_epoch).days} days ago"
    return f"valid for {(na.since_epoch - now_i.since_epoch).days} more days"


def _partitions(c: Criteria) -> str:
    if c.partitions is None:
        return "in the default partition only"
    names = [p.shown() for p in c.partitions]
    if any(matches_everything(n) for n in names):
        return "in any partition"
    default = any(matches(n, "") for n in names)
    shown = ", ".join(quote_value(n) for n in names)
    return f"in partitions {shown}" + (" (and the default one)" if default else "")


def _criteria(c: Criteria) -> dict:
    topics = [t.shown() for t in c.topics]
    what = ("every topic" if any(matches_everything(t) for t in topics)
            else "topics " + ", ".join(quote_value(t) for t in topics))
    tags = ("" if c.data_tags is None else " with data tags " + ", ".join(
        f"{n}={v}" for n, v in c.data_tags))
    return {"action": c.action, "topics": topics,
            "partitions": None if c.partitions is None else [p.shown() for p in c.partitions],
            "text": f"{c.action} {what} {_partitions(c)}{tags}"}


def _decided_first(rules: list[AccessRule], k: int, c: Criteria, budget: list[int]
                   ) -> dict[str, tuple[domainsets.Intervals, list[AccessRule]]] | None:
    """Per reading of an open id_range: the domains of rules[k] where an earlier rule of
    the other verdict is the first to match everything its criteria `c` match, and those
    rules (the first matching rule decides, so there rules[k] decides nothing: a deny
    after an allow is lint's GK214); None when the budget ran out. An earlier rule of the
    same verdict decides the same, so its domains are left out, not held."""
    own = {r: domainsets.of_spans(rules[k].domains, r) for r in _READINGS}
    decided = {r: () for r in _READINGS}
    held: dict[str, tuple[domainsets.Intervals, list[AccessRule]]] = \
        {r: ((), []) for r in _READINGS}
    for e in rules[:k]:
        budget[0] -= 1 + len(c.topics) * sum(len(a.topics) for a in e.criteria) + \
            len(rules[k].domains) * len(e.domains)
        if budget[0] < 0:
            return None
        shared = {r: domainsets.subtract(domainsets.intersect(
            own[r], domainsets.of_spans(e.domains, r)), decided[r]) for r in _READINGS}
        if not any(shared.values()) or not any(criteria_cover(a, c) for a in e.criteria):
            continue
        for r in _READINGS:
            decided[r] = domainsets.union(decided[r], shared[r])
            if shared[r] and e.verdict != rules[k].verdict:
                ids, earlier = held[r]
                held[r] = (domainsets.union(ids, shared[r]), earlier + [e])
    return held


def _reach(rules: list[AccessRule], k: int, c: Criteria, line, budget: list[int]
           ) -> tuple[str | None, str | None]:
    """(never_applies, held_by_earlier) of criteria `c` of rules[k]: the first when
    earlier rules of the other verdict decide all of its domains under every reading of
    an open id_range, the second when they decide some (or all under one reading only)."""
    held = _decided_first(rules, k, c, budget)
    if held is None:
        return None, None
    verdict = rules[k].verdict
    other, does, own_does = (("deny", "denies", "allows") if verdict == "allow" else
                             ("allow", "allows", "denies"))
    said, never = [], []
    for r in _READINGS:
        ids, earlier = held[r]
        own = domainsets.of_spans(rules[k].domains, r)
        if not ids:
            said.append(f"no earlier {other}_rule {does} all of it: it {own_does} in "
                        f"domains {domainsets.domains_text(own)}")
            continue
        lines = ", ".join(str(line(e.elem)) for e in earlier)
        who = (f"the {other}_rule on line {lines} already {does}" if len(earlier) == 1 else
               f"the {other}_rules on lines {lines} already {does[:-1]}")
        rest = domainsets.subtract(own, ids)
        never.append(not rest)
        said.append(f"{who} all of it, and the first matching rule decides" if not rest else
                    f"in domains {domainsets.domains_text(ids)} {who} all of it, and the "
                    f"first matching rule decides: this {verdict} applies in "
                    f"{domainsets.domains_text(rest)} only")
    if len(never) == len(_READINGS) and all(never):
        return _per_reading(said, ""), None
    if not never:
        return None, None
    for i in range(len(said)):   # decided whole under one reading: say it never applies
        if said[i].startswith(f"the {other}_rule"):
            said[i] = f"it NEVER APPLIES: {said[i]}"
    return None, _per_reading(said, "")


def _rule(rules: list[AccessRule], k: int, line, budget: list[int]) -> dict:
    r = rules[k]
    actions = []
    for c in r.criteria:
        a = _criteria(c)
        a["never_applies"], a["held_by_earlier"] = _reach(rules, k, c, line, budget)
        actions.append(a)
    return {"line": line(r.elem), "verdict": r.verdict.upper(),
            "domains": _domains(r.domains, r.elem), "actions": actions}


def _grant(g: Grant, now: dt.datetime, line, budget: list[int]) -> dict:
    return {"line": line(g.elem), "name": g.name, "subject": g.subject.shown(),
            "not_before": _when(g.not_before), "not_after": _when(g.not_after),
            "status": _status(g, now),
            "rules": [_rule(g.rules, k, line, budget) for k in range(len(g.rules))],
            "default": g.default.shown()}


def explain_document(loaded: LoadedDocument, now: dt.datetime | None = None) -> dict:
    """The explanation as data (what --json prints); :func:`render` makes it prose."""
    now = now or dt.datetime.now(dt.UTC)

    def line(elem) -> int:
        return loaded.where(elem)[0]

    out = {"file": loaded.file, "kind": loaded.kind.value,
           "schema_valid": not loaded.problems,
           "schema_problems": [str(p) for p in loaded.problems[:5]]}
    if isinstance(loaded.model, Governance):
        pairs = sum(len(d.topic_rules) ** 2 for d in loaded.model.rules) // 2
        check_order = pairs <= WORK_BUDGET and len(loaded.model.rules) ** 2 <= WORK_BUDGET
        out["domain_rules"] = []
        taken = {r: () for r in _READINGS}
        earlier: list[tuple[DomainRule, dict]] = []
        work = 0   # interval comparisons, as lint's GK102/GK103 count them
        for d in loaded.model.rules:
            ids = {r: domainsets.of_spans(d.domains, r) for r in _READINGS}
            lines = {r: (lambda s, r=r: [line(e.elem) for e, i in earlier
                                         if domainsets.intersect(i[r], s)])
                     for r in _READINGS}
            work += sum((len(ids[r]) + 1) * (len(taken[r]) + 1 + sum(
                len(i[r]) for _, i in earlier)) for r in _READINGS)
            check_order = check_order and work <= WORK_BUDGET
            held = _held(ids, taken, lines) if check_order else None
            out["domain_rules"].append(_domain_rule(d, line, check_order, held))
            if check_order:
                taken = {r: domainsets.union(taken[r], ids[r]) for r in _READINGS}
                earlier.append((d, ids))
        out["order_checked"] = check_order
        out["unmatched_domains"] = ("a participant on a domain no domain_rule holds cannot be "
                                    "created")
    else:
        budget = [WORK_BUDGET]
        out["grants"] = [_grant(g, now, line, budget) for g in loaded.model.grants]
        out["order_checked"] = budget[0] >= 0
    return out


def explanation_text(e: dict) -> str:
    lines, name = [], one_line(e["file"])
    if e["kind"] == "governance":
        rules = e["domain_rules"]
        lines.append(f"{name}: governance, {len(rules)} domain_rule(s), evaluated in "
                     "order (the first holding a domain id applies to it)")
    else:
        lines.append(f"{name}: permissions, {len(e['grants'])} grant(s) (a grant applies "
                     "to the participant whose certificate subject it names)")
    if not e["schema_valid"]:
        lines.append("  NOT valid against the DDS Security 1.1 XSD (read leniently; "
                     "see govkit validate):")
        lines += [f"    {p}" for p in e["schema_problems"]]
    if not e.get("order_checked", True):
        lines.append("  (too many rules to check which never apply: see govkit lint)")
    for i, d in enumerate(e.get("domain_rules", []), 1):
        lines += ["", f"domain_rule {i} (line {d['line']}): domains {d['domains']}"]
        if d.get("held_by_earlier"):
            lines.append(f"  EARLIER RULES FIRST: {d['held_by_earlier']}")
        lines += [
                  f"  who joins: {d['who_joins']}",
                  f"  whole RTPS messages: {d['rtps_messages']}",
                  f"  secure discovery endpoints: {d['secure_discovery']}",
                  f"  secure liveliness endpoints: {d['secure_liveliness']}"]
        for j, t in enumerate(d["topic_rules"], 1):
            lines.append(f"  topic_rule {j} (line {t['line']}): {t['scope']}")
            if t["never_applies"]:
                lines.append(f"    NEVER APPLIES: {t['never_applies']}")
            lines += [f"    protects: {x}" for x in t["protects"]]
            lines += [f"    does not protect: {x}" for x in t["does_not_protect"]]
        lines.append(f"  other topics: {d['unmatched_topics']}")
    if "domain_rules" in e:
        lines.append(f"other domains: {e['unmatched_domains']}")
    for g in e.get("grants", []):
        lines += ["", f"grant {quote_value(g['name'] or '')} (line {g['line']}): subject "
                      f"{g['subject']}",
                  f"  valid from {g['not_before']} until {g['not_after']}: {g['status']}"]
        for k, r in enumerate(g["rules"], 1):
            lines.append(f"  rule {k} (line {r['line']}): {r['verdict']} in domains "
                         f"{r['domains']}")
            for a in r["actions"]:
                lines.append(f"    {a['text']}")
                if a.get("never_applies"):
                    nothing = "denies" if r["verdict"] == "DENY" else "allows"
                    lines.append(f"      NEVER APPLIES ({nothing} nothing): "
                                 f"{a['never_applies']}")
                if a.get("held_by_earlier"):
                    lines.append(f"      EARLIER RULES FIRST: {a['held_by_earlier']}")
            if not r["actions"]:
                lines.append("    joining the domain only (no publish, subscribe or relay listed)")
        lines.append(f"  anything else: {g['default']} (default)")
    return "\n".join(lines)
