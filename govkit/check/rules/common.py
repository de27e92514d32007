"""Lint rules for <domains>, which governance and permissions documents share.

GK010 and GK011 are the rules `govkit validate` has always run: they read values straight
from the tree (all of an element's text, comments inside it ignored, as the schema
validator reads it), so validate never loads the typed model.
"""

from __future__ import annotations

from collections.abc import Iterator

from govkit.catalog.targets import (
    RTPS_MAX_DOMAIN_ID,
    TARGETS,
    VENDOR_TARGETS,
    open_range_readers,
)
from govkit.check.rules.registry import BOTH, Context, Hit, declare, rule
from govkit.common.findings import quote_value
from govkit.documents.parse import local_name, text_value

# Reported by the parsing and schema steps (govkit.check.lint), not by a check function.
declare("GK001", "unreadable-document", "error", BOTH,
        "No implementation can load a document that is not well-formed XML of a known "
        "kind (or an S/MIME file OpenSSL cannot read)",
        "<dds><permissions></dds>")
declare("GK002", "schema", "error", BOTH,
        "The document breaks the DDS Security 1.1 XSD, so a validating implementation "
        "refuses it and lenient ones may read it differently",
        "<rtps_protection_kind>sign</rtps_protection_kind>")
declare("GK003", "analysis-limit", "info", BOTH,
        "Pairwise rule comparisons stopped at a budget, so some overlaps may be unreported",
        "a governance document with thousands of topic_rules")
declare("GK004", "suppression", "warning", BOTH,
        "A 'govkit: ignore' comment that names no rule or suppresses nothing hides nothing "
        "today, and tomorrow the next real finding on its line",
        "<!-- govkit: ignore GK999 -->")


def children(elem, name: str) -> list:
    return [c for c in elem if isinstance(c.tag, str) and local_name(c) == name]


def int_text(elem) -> int | None:
    """A schema-valid domain id (decimal digits); a huge one is simply "too big"."""
    text = text_value(elem).strip()
    if not (text.isascii() and text.isdigit()):
        return None
    return int(text) if len(text) <= 18 else 10 ** 18


def _domain_values(ctx: Context) -> Iterator[tuple[object, object]]:
    """(id or id_range element, value element) for every domain id written."""
    for domains in ctx.doc.root.iter("domains"):
        for item in domains:
            if not isinstance(item.tag, str):
                continue
            if item.tag == "id":
                yield item, item
            elif item.tag == "id_range":
                for v in children(item, "min") + children(item, "max"):
                    yield item, v


def _domain_range_note() -> str:
    """Each --target's limit, from the target table (for --rules and the rule reference)."""
    limits = ", ".join(f"{t.name} {t.max_domain_id}" for t in TARGETS.values())
    return (f"the highest domain id per --target: {limits} (the target table says why); "
            f"under omg an id within {RTPS_MAX_DOMAIN_ID} that an implementation refuses is "
            f"a warning naming it. validate and sign run this rule under the same --target")


@rule("GK010", "domain-range", "error", BOTH,
      "An implementation refuses the whole document when a domain id is beyond the ids "
      "it accepts", "<id>231</id>", validate=True, note=_domain_range_note())
def domain_range(ctx: Context) -> Iterator[Hit]:
    """One rule, one limit per target (catalog.targets: max_domain_id and why): Cyclone DDS
    0.10's parser stops at 230, the RTPS port mapping (the specification, Fast DDS 2.9,
    Connext) at 232."""
    for _, v in _domain_values(ctx):
        n = int_text(v)
        refusers = ctx.refusing(lambda t, n=n: n is not None and n > t.max_domain_id)
        if not refusers:
            continue
        shown = text_value(v).strip()
        shown = shown if len(shown) <= 20 else shown[:20] + "..."
        if ctx.portable and len(refusers) == len(VENDOR_TARGETS):
            yield Hit(v, f"domain id {shown} in <{v.tag}> is above {ctx.target.max_domain_id}, "
                         f"the highest domain id the specification allows: "
                         f"{ctx.target.domain_limit}")
            continue
        # each limit with the version it holds for (the targets' titles) and why
        why = refusers[0].domain_limit if len(refusers) == 1 else \
            "; ".join(f"{t.title}: {t.domain_limit}" for t in refusers)
        limit = min(t.max_domain_id for t in refusers)
        titles = [t.title for t in refusers]
        who = ", ".join(titles[:-1]) + " and " + titles[-1] if len(titles) > 1 else titles[0]
        message = (f"domain id {shown} in <{v.tag}> is above {limit}, the highest domain id "
                   f"{who} accepts ({why})")
        if ctx.portable:   # within what the specification allows: the others accept it
            message += (f"; the specification allows up to {ctx.target.max_domain_id}, "
                        f"so other implementations accept it")
        yield Hit(v, message, "warning" if ctx.portable else None)


@rule("GK011", "id-range-order", "error", BOTH,
      "A range whose min is above its max selects no domain, so the rule it belongs to "
      "never applies", "<id_range><min>10</min><max>5</max></id_range>", validate=True)
def id_range_order(ctx: Context) -> Iterator[Hit]:
    for item in ctx.doc.root.iter("id_range"):
        lo, hi = children(item, "min"), children(item, "max")
        if not (lo and hi) or item.getparent() is None or item.getparent().tag != "domains":
            continue
        a, b = int_text(lo[0]), int_text(hi[0])
        if a is not None and b is not None and a > b:
            yield Hit(item, f"id_range min {a} is greater than max {b}; the range selects "
                            "no domain")


@rule("GK012", "open-id-range", "warning", BOTH,
      "Implementations read an id_range without max differently: Cyclone DDS and Fast DDS "
      "as the single domain min, Connext (and the specification) as min and every domain "
      "above", "<id_range><min>0</min></id_range>")
def open_id_range(ctx: Context) -> Iterator[Hit]:
    single = open_range_readers("single")
    for item, v in _domain_values(ctx):
        if item.tag != "id_range" or v.tag != "min" or children(item, "max"):
            continue
        lo = text_value(v).strip()
        if ctx.target.open_range == "single":
            reading = (f"{ctx.target.short} reads it as domain {lo} only, so participants on "
                       f"any other domain find no rule here")
        else:
            reading = (f"{ctx.target.short} reads it as domain {lo} and up, but "
                       f"{single} read it as domain {lo} only")
        yield Hit(item, f"id_range has a min ({quote_value(lo)}) and no max: {reading}; "
                        "write <max> to say which")
