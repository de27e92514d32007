"""Lint rules for permissions documents.

How an implementation reads permissions (DDS Security 1.1, 9.4.1.3): the grant whose
subject_name equals the participant's certificate subject applies (Cyclone DDS takes the
first such grant) while now is within its validity; its allow/deny rules are evaluated in
order and the first one matching the domain, topic and partition decides; if none does,
<default> decides.

GK200 and GK201 are the rules `govkit validate` has always run; they read the tree
directly (see rules_common).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from govkit.check.rules.common import children
from govkit.check.rules.registry import PERM, Context, Hit, rule, vendor_names
from govkit.check.rules.subjects import accepts, match, subject_of
from govkit.common.findings import quote_value
from govkit.documents import domainsets
from govkit.documents.globs import covers, has_wildcards, matches, matches_everything
from govkit.documents.model import AccessRule, Criteria, Grant, Instant, datetime_key
from govkit.documents.parse import text_value
from govkit.pki import names

# --------------------------------------------------------------------------- tree reading

@rule("GK200", "validity-order", "error", [PERM],
      "A grant whose not_before is not earlier than its not_after is never valid",
      "<not_before>2030-01-01T00:00:00</...><not_after>2029-01-01T00:00:00</...>",
      validate=True)
def validity_order(ctx: Context) -> Iterator[Hit]:
    for validity in ctx.doc.root.iter("validity"):
        nb, na = children(validity, "not_before"), children(validity, "not_after")
        if not (nb and na):
            continue
        before, after = text_value(nb[0]).strip(), text_value(na[0]).strip()
        a, b = datetime_key(before), datetime_key(after)
        if a is not None and b is not None and a >= b:
            yield Hit(na[0], f"not_before {before} is not earlier than not_after {after}; "
                             "the grant is never valid")


@rule("GK201", "duplicate-grant-name", "error", [PERM],
      "Grant names identify grants in tools and logs; two grants with one name are "
      "usually a copy-paste mistake", '<grant name="pub"> twice', validate=True)
def duplicate_grant_name(ctx: Context) -> Iterator[Hit]:
    first_use: dict[str, object] = {}
    for grant in ctx.doc.root.iter("grant"):
        name = grant.get("name")
        if name is None:
            continue
        if name in first_use:
            yield Hit(grant, f"grant name {quote_value(name)} is already used by the grant "
                             f"on line {ctx.line(first_use[name])}")
        else:
            first_use[name] = grant


# --------------------------------------------------------------------------- validity


def _now(ctx: Context) -> Instant:
    return Instant.from_datetime(ctx.now)


def _days(delta: dt.timedelta) -> str:
    """Whole days, as explain and pki status count them (3 days and 20 hours: "3 days",
    never rounded up to a day that has not passed); under two days, hours."""
    if abs(delta) >= dt.timedelta(days=2):
        return f"{delta // dt.timedelta(days=1)} days"
    hours = round(delta.total_seconds() / 3600)
    return f"{hours} hour{'' if hours == 1 else 's'}"


@rule("GK206", "validity-expired", "error", [PERM],
      "Implementations refuse a grant after its not_after, so the participant can no "
      "longer join", "<not_after>2020-01-01T00:00:00</not_after>")
def validity_expired(ctx: Context) -> Iterator[Hit]:
    now = _now(ctx)
    for g in ctx.model.grants:
        na = g.not_after.value
        if na is not None and na.since_epoch <= now.since_epoch:
            yield Hit(g.not_after.elem, f"grant {quote_value(g.name or '')} expired: "
                                        f"not_after {g.not_after.shown()} is "
                                        f"{_days(now.since_epoch - na.since_epoch)} ago")


@rule("GK207", "validity-not-yet", "warning", [PERM],
      "Implementations refuse a grant before its not_before, so the participant cannot "
      "join yet", "<not_before>2099-01-01T00:00:00</not_before>")
def validity_not_yet(ctx: Context) -> Iterator[Hit]:
    now = _now(ctx)
    for g in ctx.model.grants:
        nb = g.not_before.value
        if nb is not None and nb.since_epoch > now.since_epoch:
            yield Hit(g.not_before.elem, f"grant {quote_value(g.name or '')} is not valid "
                                         f"yet: not_before {g.not_before.shown()} is in "
                                         f"{_days(nb.since_epoch - now.since_epoch)}")


@rule("GK208", "validity-expiring", "warning", [PERM],
      "A grant that expires soon stops its participant from joining unless the permissions "
      "are reissued and re-signed in time", "<not_after> within --warn-days of now")
def validity_expiring(ctx: Context) -> Iterator[Hit]:
    now = _now(ctx)
    horizon = dt.timedelta(days=ctx.warn_days)
    for g in ctx.model.grants:
        na = g.not_after.value
        if na is not None and now.since_epoch < na.since_epoch <= now.since_epoch + horizon:
            yield Hit(g.not_after.elem, (
                f"grant {quote_value(g.name or '')} expires in "
                f"{_days(na.since_epoch - now.since_epoch)} (not_after {g.not_after.shown()}, "
                f"within --warn-days {ctx.warn_days})"))


@rule("GK209", "validity-outside-certificate", "warning", [PERM],
      "The identity certificate bounds when the participant can authenticate: the part of "
      "the grant's validity outside the certificate's cannot be used with this certificate",
      "<not_after>2099-01-01T00:00:00</not_after> for a certificate valid until 2026",
      needs_ca=True)
def validity_outside_certificate(ctx: Context) -> Iterator[Hit]:
    for g in ctx.model.grants:
        identity = match(ctx, g) or next(
            (i for i in ctx.identities if not ctx.portable and subject_of(g) is not None
             and accepts(ctx.target, subject_of(g), i)), None)
        if identity is None:
            continue
        nb, na = g.not_before.value, g.not_after.value
        cert_nb = Instant.from_datetime(identity.not_before)
        cert_na = Instant.from_datetime(identity.not_after)
        if nb is not None and nb.since_epoch < cert_nb.since_epoch:
            yield Hit(g.not_before.elem, (
                f"not_before {g.not_before.shown()} is before {identity.path.name}'s "
                f"notBefore {identity.not_before:%Y-%m-%dT%H:%M:%SZ}"))
        if na is not None and na.since_epoch > cert_na.since_epoch:
            keeping = ctx.refusing(lambda t: bool(t.keeps_expired_peers))
            kept = "; ".join(f"{t.title} keeps a participant matched past its "
                             f"certificate's notAfter, checking it at the handshake only "
                             f"({t.keeps_expired_peers}: a fixed one unmatches it)"
                             for t in keeping)
            yield Hit(g.not_after.elem, (
                f"not_after {g.not_after.shown()} is after {identity.path.name}'s "
                f"notAfter {identity.not_after:%Y-%m-%dT%H:%M:%SZ}"
                + (f"; {kept}" if kept else "")))


@rule("GK210", "validity-local-time", "warning", [PERM],
      "Fast DDS reads validity dates as local time, so west of UTC a not_before less than "
      "24 hours ago is still in the future and the grant is refused",
      "<not_before> an hour ago", note="Fast DDS only (and under --target omg)")
def validity_local_time(ctx: Context) -> Iterator[Hit]:
    refusers = ctx.refusing(lambda t: t.local_time_validity)
    if not refusers:
        return
    now = _now(ctx)
    for g in ctx.model.grants:
        nb = g.not_before.value
        if nb is None:
            continue
        ago = now.since_epoch - nb.since_epoch
        if dt.timedelta(0) <= ago < dt.timedelta(hours=24):
            yield Hit(g.not_before.elem, (
                f"not_before {g.not_before.shown()} is only {_days(ago)} ago: "
                f"{vendor_names(refusers)} reads it as local time and refuses the grant "
                f"for up to {24 - int(ago.total_seconds() // 3600)} more hours west of UTC"))


# --------------------------------------------------------------------------- rules


@rule("GK211", "default-allow", "warning", [PERM],
      "With <default>ALLOW</default>, everything no rule mentions is allowed, including "
      "domains and topics nobody thought of", "<default>ALLOW</default>")
def default_allow(ctx: Context) -> Iterator[Hit]:
    for g in ctx.model.grants:
        if g.default.value == "ALLOW":
            yield Hit(g.default.elem, f"grant {quote_value(g.name or '')} allows by default: "
                                      "whatever its rules do not deny is allowed")


def _allowed(ctx: Context, what: str) -> Iterator[tuple[AccessRule, Criteria, object]]:
    for g in ctx.model.grants:
        for r in g.rules:
            if r.verdict != "allow":
                continue
            for c in r.criteria:
                items = c.topics if what == "topic" else (c.partitions or [])
                for v in items:
                    if isinstance(v.value, str) and matches_everything(v.value):
                        yield r, c, v.elem


@rule("GK212", "broad-topic", "warning", [PERM],
      "An allow rule for every topic ('*') grants topics that do not exist yet, so a "
      "compromised participant reaches far more than it needs", "<topic>*</topic>")
def broad_topic(ctx: Context) -> Iterator[Hit]:
    for r, c, elem in _allowed(ctx, "topic"):
        spans = domainsets.domains_text(domainsets.of_spans(r.domains, ctx.target.open_range))
        yield Hit(elem, f"allow_rule lets it {c.action} every topic (topic '*') in domains "
                        f"{spans}")


@rule("GK213", "broad-partition", "warning", [PERM],
      "An allow rule for every partition ('*') lets the participant into partitions meant "
      "to separate data from it", "<partition>*</partition>")
def broad_partition(ctx: Context) -> Iterator[Hit]:
    for _, c, elem in _allowed(ctx, "partition"):
        topics = ", ".join(quote_value(t.shown()) for t in c.topics[:3])
        yield Hit(elem, f"allow_rule lets it {c.action} topics {topics} in every partition "
                        "(partition '*')")


def _patterns_cover(wide: list, narrow: list) -> bool:
    wide_p = [v.value for v in wide if isinstance(v.value, str)]
    return bool(narrow) and all(isinstance(v.value, str) and any(
        covers(p, v.value) for p in wide_p) for v in narrow)


def criteria_cover(a: Criteria, d: Criteria) -> bool:
    """Every (topic, partition) the deny criteria `d` matches, the allow `a` matches."""
    if a.action != d.action or a.data_tags is not None or d.data_tags is not None:
        return False
    if not _patterns_cover(a.topics, d.topics):
        return False
    if d.partitions is None:   # the default partition only: its name is ""
        return a.partitions is None or any(isinstance(p.value, str) and matches(p.value, "")
                                           for p in a.partitions)
    return a.partitions is not None and _patterns_cover(a.partitions, d.partitions)


def _shadowed(ctx: Context, verdict: str) -> Iterator[Hit]:
    """Criteria of a `verdict` rule that an earlier rule of the other verdict already
    decides in all of its domains (the first matching rule decides: DDS Security 1.1
    9.4.1.3, Cyclone's rule iterator)."""
    other, does = ("allow", "allows") if verdict == "deny" else ("deny", "denies")
    for g in ctx.model.grants:
        # each rule's domains, once per grant (not once per pair of criteria and rule)
        spans = [domainsets.of_spans(r.domains, ctx.target.open_range) for r in g.rules]
        for k, rule_ in enumerate(g.rules):
            if rule_.verdict != verdict:
                continue
            ids = spans[k]
            for c in rule_.criteria:
                for j, earlier in enumerate(g.rules[:k]):
                    cost = len(c.topics) * sum(len(a.topics) for a in earlier.criteria)
                    if not ctx.spend(cost + len(ids)):
                        return
                    if earlier.verdict != other or domainsets.subtract(ids, spans[j]):
                        continue
                    if any(criteria_cover(a, c) for a in earlier.criteria):
                        yield Hit(c.elem, (
                            f"this {verdict} of {c.action} topics "
                            f"{', '.join(quote_value(t.shown()) for t in c.topics[:3])} never "
                            f"applies: the {other}_rule on line {ctx.line(earlier.elem)} "
                            f"already {does} all of it"))
                        break


@rule("GK214", "shadowed-deny", "warning", [PERM],
      "Rules are evaluated in order and the first match decides, so a deny rule after an "
      "allow rule covering the same domains, topics and partitions never denies anything",
      "<allow_rule> publish '*' then <deny_rule> publish 'Secret'", structural=True)
def shadowed_deny(ctx: Context) -> Iterator[Hit]:
    yield from _shadowed(ctx, "deny")


@rule("GK217", "shadowed-allow", "warning", [PERM],
      "Rules are evaluated in order and the first match decides, so an allow rule after a "
      "deny rule covering the same domains, topics and partitions never allows anything: "
      "what it was written to grant stays denied",
      "<deny_rule> publish 'S*' then <allow_rule> publish 'Secret'", structural=True)
def shadowed_allow(ctx: Context) -> Iterator[Hit]:
    yield from _shadowed(ctx, "allow")


@rule("GK215", "duplicate-subject", "warning", [PERM],
      "Implementations use the first grant whose subject matches (Cyclone DDS does), so a "
      "second grant for the same subject never applies",
      "two grants with <subject_name>CN=pub</subject_name>", structural=True)
def duplicate_subject(ctx: Context) -> Iterator[Hit]:
    seen: dict[object, Grant] = {}
    for g in ctx.model.grants:
        subject = subject_of(g)
        if subject is None:
            continue
        try:
            key: object = names.parse_subject(subject)
        except names.SubjectSyntaxError:
            key = subject.strip()
        if key in seen:
            first = seen[key]
            yield Hit(g.subject.elem, (
                f"grant {quote_value(g.name or '')} has the subject of grant "
                f"{quote_value(first.name or '')} on line {ctx.line(first.elem)}: it never "
                "applies"))
        else:
            seen[key] = g


def _first_naming(ctx: Context, g: Grant, spans: list, k: int, topic: str):
    """The first rule before g.rules[k] naming `topic` in domains it shares with that
    rule: (rule, criteria, shared domains), or None."""
    for j, earlier in enumerate(g.rules[:k]):
        shared = domainsets.intersect(spans[j], spans[k])
        if not shared:
            continue
        for c in earlier.criteria:
            if not ctx.spend(len(c.topics)):
                return None
            if any(isinstance(p.value, str) and matches(p.value, topic) for p in c.topics):
                return earlier, c, shared
    return None


@rule("GK218", "topic-denied-first", "warning", [PERM],
      "Cyclone DDS 0.10 lets the first rule naming a topic decide whether the participant "
      "may create it at all, whatever that rule's action: a deny of subscribe listed before "
      "an allow of publish refuses the topic, and with it the writer, where the governance "
      "enables read and write access control for it (Cyclone DDS 11 decides per action)",
      "<deny_rule> subscribe 'T' then <allow_rule> publish 'T'", structural=True,
      note="under --target cyclone and --target omg; Cyclone DDS 11 (--target cyclone11) "
           "and the specification decide per action")
def topic_denied_first(ctx: Context) -> Iterator[Hit]:
    refusers = ctx.refusing(lambda t: t.topic_creation == "first")
    if not refusers:
        return
    later = [t.later for t in refusers if t.later and t.later.topic_creation == "either"]
    for g in ctx.model.grants:
        spans = [domainsets.of_spans(r.domains, ctx.target.open_range) for r in g.rules]
        for k, rule_ in enumerate(g.rules):
            if rule_.verdict != "allow":
                continue
            for c in rule_.criteria:
                for t in c.topics:
                    if not isinstance(t.value, str) or has_wildcards(t.value):
                        continue
                    first = _first_naming(ctx, g, spans, k, t.value)
                    if first is None:
                        continue
                    earlier, ec, shared = first
                    if earlier.verdict != "deny" or ec.action == c.action:
                        continue
                    yield Hit(t.elem, (
                        f"this allow of {c.action} {quote_value(t.value)} never applies on "
                        f"{vendor_names(refusers)}: the deny_rule on line "
                        f"{ctx.line(earlier.elem)} ({ec.action}) is the first rule naming "
                        f"the topic in domains {domainsets.domains_text(shared)}, so "
                        "creating the topic is refused where the governance enables read "
                        "and write access control for it" + "".join(
                            f" ({v.version} decides per action and creates it)"
                            for v in later)))
