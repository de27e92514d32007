"""Rules about reading a document as a --target does (GK301, GK302), and the rewrite itself.

A target that reads some non-standard spellings leniently (Cyclone's booleans, Connext's
extension elements) gets the document rewritten as it would read it before the schema is
checked again; each rewrite is a finding of its own, so nothing lenient passes unreported.
"""

from __future__ import annotations

from govkit.catalog.targets import Target
from govkit.check.rules.registry import BOTH, GOV, declare
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
