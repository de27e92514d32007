"""`govkit diff`: the semantic difference of two governance (or two permissions) documents,
signed or not; not a text diff.

Governance: the domain id axis is cut where any domain_rule of either document starts or
ends; for each stretch, the domain_rule that applies in A (the first holding it) is
compared with the one that applies in B: domain settings, then topic_rules matched by
topic_expression (settings, rules only in one document, and their order, since the first
match wins). Stretches with the same pair of rules are reported once. Open id_ranges are
read as the specification reads them (min and up).

Permissions: grants are matched by subject (as distinguished names), then compared:
validity, default, and the allow/deny rules in order.
"""

from __future__ import annotations

import difflib
import heapq
from dataclasses import dataclass

from govkit.check.loaded import LoadedDocument
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.findings import one_line, quote_value
from govkit.documents import domainsets
from govkit.documents.model import (
    DOMAIN_SETTINGS,
    TOPIC_SETTINGS,
    AccessRule,
    DomainRule,
    Governance,
    Grant,
    Value,
    setting_text,
)
from govkit.pki import names


@dataclass
class Change:
    scope: str                  # "domains 0-230", "domains 0-230, topic_rule '*'", "grant ..."
    setting: str
    a: str | None               # None: absent from that document
    b: str | None
    a_line: int | None = None
    b_line: int | None = None

    def __str__(self) -> str:
        def side(v, line):
            return ("(none)" if v is None else v) + (f" (line {line})" if line else "")
        return f"{self.scope}: {self.setting}: {side(self.a, self.a_line)} -> " \
               f"{side(self.b, self.b_line)}"

    def to_json(self) -> dict:
        return {"scope": self.scope, "setting": self.setting, "a": self.a, "b": self.b,
                "a_line": self.a_line, "b_line": self.b_line}


class _Side:
    def __init__(self, loaded: LoadedDocument):
        self.loaded = loaded

    def line(self, elem) -> int | None:
        return self.loaded.where(elem)[0] if elem is not None else None

    def value(self, v: Value) -> tuple[str | None, int | None]:
        return setting_text(v), self.line(v.elem)


# --------------------------------------------------------------------------- governance


def _first_rules(sets: list[domainsets.Intervals], cuts: list[int]) -> list[int | None]:
    """For each cut point, the index of the first rule whose set holds it: one sweep over
    the cuts with a heap of the rules whose intervals are open there (n log n)."""
    starts = sorted((lo, hi, k) for k, s in enumerate(sets) for lo, hi in s)
    active: list[tuple[int, float]] = []   # (rule index, end of its interval)
    out, i = [], 0
    for x in cuts:
        while i < len(starts) and starts[i][0] <= x:
            heapq.heappush(active, (starts[i][2], starts[i][1]))
            i += 1
        # the heap's top has the smallest rule index; drop it while its interval ended
        # before x (cuts only grow, so it never covers a later cut either)
        while active and active[0][1] < x:
            heapq.heappop(active)
        first = active[0][0] if active else None
        out.append(first)
    return out


def _stretches(a: Governance, b: Governance):
    """(domain set, A's rule or None, B's rule or None) for every stretch of domain ids
    where the applying pair of rules is the same."""
    sets = [[domainsets.of_spans(d.domains) for d in doc.rules] for doc in (a, b)]
    cuts = sorted({x for side in sets for s in side for lo, hi in s
                   for x in (lo, hi + 1) if x != float("inf")})
    firsts = [_first_rules(side, cuts) for side in sets]
    groups: dict[tuple, list] = {}
    for i, lo in enumerate(cuts):
        hi = cuts[i + 1] - 1 if i + 1 < len(cuts) else float("inf")
        pair = (firsts[0][i], firsts[1][i])
        if pair != (None, None):
            groups.setdefault(pair, []).append((lo, hi))
    for (ia, ib), intervals in groups.items():
        yield (domainsets.normalise(intervals), a.rules[ia] if ia is not None else None,
               b.rules[ib] if ib is not None else None)


def _topic_changes(scope: str, da: DomainRule, db: DomainRule, sa: _Side, sb: _Side):
    def by_expr(d: DomainRule):
        out = {}
        for t in d.topic_rules:
            out.setdefault(setting_text(t.expression) or "", t)   # later duplicates never apply
        return out
    ta, tb = by_expr(da), by_expr(db)
    for expr in [*ta, *(e for e in tb if e not in ta)]:
        where = f"{scope}, topic_rule {quote_value(expr)}"
        if expr not in tb or expr not in ta:
            t = ta.get(expr) or tb.get(expr)
            side = sa if expr in ta else sb
            present = ("present", side.line(t.elem))
            a, b = (present, (None, None)) if expr in ta else ((None, None), present)
            yield Change(where, "topic_rule", a[0], b[0], a[1], b[1])
            continue
        for setting, attr in TOPIC_SETTINGS.items():
            if setting == "topic_expression":
                continue
            (va, la), (vb, lb) = sa.value(getattr(ta[expr], attr)), sb.value(getattr(tb[expr],
                                                                                  attr))
            if va != vb:
                yield Change(where, setting, va, vb, la, lb)
    common_a = [e for e in ta if e in tb]
    common_b = [e for e in tb if e in ta]
    if common_a != common_b:
        yield Change(scope, "topic_rule order (first match wins)",
                     ", ".join(map(quote_value, common_a)), ", ".join(map(quote_value, common_b)),
                     sa.line(da.elem), sb.line(db.elem))


def _governance(a: LoadedDocument, b: LoadedDocument) -> list[Change]:
    sa, sb = _Side(a), _Side(b)
    changes = []
    for ids, da, db in _stretches(a.model, b.model):
        scope = f"domains {domainsets.domains_text(ids)}"
        if da is None or db is None:
            d, side = (da, sa) if da is not None else (db, sb)
            present = ("a domain_rule", side.line(d.elem))
            pa, pb = (present, (None, None)) if da is not None else ((None, None), present)
            changes.append(Change(scope, "domain_rule", pa[0], pb[0], pa[1], pb[1]))
            continue
        for setting, attr in DOMAIN_SETTINGS.items():
            (va, la), (vb, lb) = sa.value(getattr(da, attr)), sb.value(getattr(db, attr))
            if va != vb:
                changes.append(Change(scope, setting, va, vb, la, lb))
        changes += _topic_changes(scope, da, db, sa, sb)
    return changes


# --------------------------------------------------------------------------- permissions


def _subject_key(g: Grant) -> object:
    text = g.subject.value if isinstance(g.subject.value, str) else (g.subject.text or "")
    try:
        return names.parse_subject(text)
    except names.SubjectSyntaxError:
        return text.strip()


def _rule_text(r: AccessRule) -> str:
    ids = domainsets.domains_text(domainsets.of_spans(r.domains))
    parts = []
    for c in r.criteria:
        topics = ",".join(t.shown() for t in c.topics)
        parts_ = "" if c.partitions is None else " partitions " + ",".join(
            p.shown() for p in c.partitions)
        tags = "" if c.data_tags is None else " tags " + ",".join(
            f"{n}={v}" for n, v in c.data_tags)
        parts.append(f"{c.action} {topics}{parts_}{tags}")
    return f"{r.verdict.upper()} domains {ids}" + (": " + "; ".join(parts) if parts else "")


def _grant_changes(ga: Grant, gb: Grant, sa: _Side, sb: _Side) -> list[Change]:
    scope = f"grant {quote_value(ga.subject.shown())}"
    changes = []
    for setting, va, vb in (("name", ga.name, gb.name),):
        if va != vb:
            changes.append(Change(scope, setting, va, vb, sa.line(ga.elem), sb.line(gb.elem)))
    for setting in ("not_before", "not_after", "default"):
        x, y = getattr(ga, setting), getattr(gb, setting)
        same = x.value == y.value if x.value is not None and y.value is not None else \
            x.shown() == y.shown()
        if not same:
            changes.append(Change(scope, setting, x.shown(), y.shown(), sa.line(x.elem),
                                  sb.line(y.elem)))
    ra, rb = [_rule_text(r) for r in ga.rules], [_rule_text(r) for r in gb.rules]
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ra, rb, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        if op == "replace" and i2 - i1 == j2 - j1:   # rules changed in place
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                changes.append(Change(scope, f"rule {i + 1}", ra[i], rb[j],
                                      sa.line(ga.rules[i].elem), sb.line(gb.rules[j].elem)))
            continue
        for i in range(i1, i2):
            changes.append(Change(scope, f"rule {i + 1}", ra[i], None,
                                  sa.line(ga.rules[i].elem), None))
        for j in range(j1, j2):
            changes.append(Change(scope, f"rule {j + 1}", None, rb[j], None,
                                  sb.line(gb.rules[j].elem)))
    return changes


def _permissions(a: LoadedDocument, b: LoadedDocument) -> list[Change]:
    sa, sb = _Side(a), _Side(b)
    grants_a = {}
    for g in a.model.grants:
        grants_a.setdefault(_subject_key(g), g)    # the first grant for a subject applies
    grants_b = {}
    for g in b.model.grants:
        grants_b.setdefault(_subject_key(g), g)
    changes = []
    for key in [*grants_a, *(k for k in grants_b if k not in grants_a)]:
        ga, gb = grants_a.get(key), grants_b.get(key)
        if ga is None or gb is None:
            g, side = (ga, sa) if ga is not None else (gb, sb)
            scope = f"grant {quote_value(g.subject.shown())}"
            present = (f"grant {quote_value(g.name or '')}", side.line(g.elem))
            pa, pb = (present, (None, None)) if ga is not None else ((None, None), present)
            changes.append(Change(scope, "grant", pa[0], pb[0], pa[1], pb[1]))
        else:
            changes += _grant_changes(ga, gb, sa, sb)
    return changes


def diff_documents(a: LoadedDocument, b: LoadedDocument) -> list[Change]:
    if a.kind != b.kind:
        raise GovkitError(f"cannot compare a {a.kind.value} document ({one_line(a.file)}) "
                          f"with a {b.kind.value} document ({one_line(b.file)})", EXIT_USAGE)
    return _governance(a, b) if isinstance(a.model, Governance) else _permissions(a, b)
