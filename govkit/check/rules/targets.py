"""Rules about reading a document as a --target does (GK301, GK302), and the rewrite itself;
what an implementation does with a document beyond the specification (GK303, GK304: the
facts are data of govkit.catalog.targets, their fixed releases rows of the advisory table
that `govkit doctor` reads, govkit.catalog.advisories).

A target that reads some non-standard spellings leniently (Cyclone's booleans, Connext's
extension elements) gets the document rewritten as it would read it before the schema is
checked again; each rewrite is a finding of its own, so nothing lenient passes unreported.
"""

from __future__ import annotations

from collections.abc import Iterator

from govkit.catalog.targets import Target
from govkit.check.rules.registry import BOTH, GOV, Context, Hit, declare, rule, vendor_names
from govkit.check.xsd import schema_facts
from govkit.common.findings import quote_value
from govkit.documents.parse import ParsedDocument, local_name, text_value

declare("GK301", "lenient-boolean", "warning", [GOV],
        "The target reads this boolean, but the OMG XSD's xs:boolean allows only true, "
        "false, 1 and 0, so validating tools (xmllint, sros2, govkit validate) and other "
        "implementations refuse the document", "<enable_join_access_control>TRUE</...>",
        note="replaces the schema error under a --target that accepts the spelling")
declare("GK302", "vendor-extension", "info", BOTH,
        "The target reads this extension element, but it is not DDS Security 1.1: other "
        "implementations refuse the document", "<enable_key_revision>true</...> (Connext)",
        note="replaces the schema error under a --target that reads the element")





@rule("GK303", "parser-crash", "error", BOTH,
      "Fast DDS before its 2026 fixes (2.9.1 included) crashes, rather than refuses, reading "
      "an empty topic_expression, dds or not_after (CVE-2026-45094/5/6), and Cyclone DDS "
      "(0.10 and 11) an empty topic_expression or topic once a topic reaches it: every "
      "participant given the document dies", "<not_after></not_after>", validate=True,
      note="an error under a target that crashes, a warning under --target omg; Fast DDS's "
           "fixed releases are rows of govkit/catalog/data/advisories.csv, as govkit doctor "
           "reads them")
def parser_crash(ctx: Context) -> Iterator[Hit]:
    for elem in ctx.doc.root.iter():
        if not isinstance(elem.tag, str):
            continue
        name = local_name(elem)
        crashing = ctx.refusing(lambda t, name=name: name in t.crashes_on_empty)
        if not crashing:
            continue
        empty = not any(isinstance(c.tag, str) for c in elem) if name == "dds" \
            else not text_value(elem).strip()
        if empty:
            sources = "; ".join(dict.fromkeys(t.crash_source for t in crashing))
            yield Hit(elem, f"<{name}> is empty: {vendor_names(crashing)} "
                            f"{'crashes' if len(crashing) == 1 else 'crash'} reading it "
                            f"({sources})", "warning" if ctx.portable else None)


@rule("GK304", "unpadded-payload-sign", "warning", [GOV],
      "Fast DDS signed a payload without its padding (payload-only SIGN) until its 2026-08 "
      "fix, so it and a reader that includes the padding disagree on the signature of a "
      "padded payload and drop its samples", "<data_protection_kind>SIGN</...>",
      note="under a target that does it and under --target omg; the fixed release is a "
           "row of govkit/catalog/data/advisories.csv, as govkit doctor reads it")
def unpadded_payload_sign(ctx: Context) -> Iterator[Hit]:
    signing = ctx.refusing(lambda t: bool(t.unpadded_payload_sign))
    if not signing:
        return
    sources = "; ".join(dict.fromkeys(t.unpadded_payload_sign for t in signing))
    for elem in ctx.doc.root.iter("data_protection_kind"):
        if text_value(elem).strip() == "SIGN":
            yield Hit(elem, f"data_protection_kind SIGN: {vendor_names(signing)} signs the "
                            "payload without its padding, so it and a reader that includes "
                            f"the padding drop each other's padded samples ({sources})")


def read_as_target(doc: ParsedDocument, target: Target) -> list[tuple[str, object, str]]:
    """Rewrite, in the parsed tree, what `target` reads leniently: booleans in another
    spelling become true/false, extension elements it reads are removed. Returns (rule,
    element, message) for each. The tree's position index is kept, so the schema findings
    that remain still point at the right lines."""
    changes: list[tuple[str, object, str]] = []
    for elem in list(doc.root.iter()):
        if not isinstance(elem.tag, str):
            continue
        name, parent = local_name(elem), elem.getparent()
        if name in schema_facts().booleans and len(elem) == 0:
            text = text_value(elem)
            meaning = target.accepts_boolean(text)
            if text.strip() not in ("true", "false", "1", "0") and meaning is not None:
                elem.text = "true" if meaning else "false"
                changes.append(("GK301", elem, (
                    f"{name} {quote_value(text.strip())}: {target.short} reads it as "
                    f"{elem.text}; write {elem.text}")))
        elif parent is not None and (local_name(parent), name) in target.extensions:
            changes.append(("GK302", elem, f"<{name}> is a {target.short} extension"))
    for rule_id, elem, _ in changes:
        if rule_id == "GK302":
            _remove(elem)
    return changes


def _remove(elem) -> None:
    parent, tail = elem.getparent(), elem.tail
    previous = elem.getprevious()
    parent.remove(elem)   # keep the text after it, or the parent's text would change
    if tail:
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
