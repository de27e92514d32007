"""sros2 itself as the test oracle (../shared/reference/sros2, release 0.13.0): its policy
schema, and its policy -> permissions transform run with lxml, offline, as
`ros2 security create_permission` runs it. Nothing here is govkit's code.
"""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from govkit.common.findings import DocumentKind
from govkit.documents.access import allowed
from govkit.documents.model import build_model

XML_NS_SCHEMA = "http://www.w3.org/2001/03/xml.xsd"


def sros2_dir(shared: Path) -> Path:
    return shared / "reference" / "sros2"


def _parser() -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)


def policy_schema(shared: Path) -> etree.XMLSchema:
    """sros2's policy.xsd, its import of the XML namespace's schema pointed at the cached
    copy beside it (what sros2's XML_CATALOG_FILES does), so libxml2 fetches nothing."""
    root = sros2_dir(shared)
    xsd = etree.parse(str(root / "schemas" / "policy.xsd"), _parser())
    for imp in xsd.getroot().iter("{http://www.w3.org/2001/XMLSchema}import"):
        if imp.get("schemaLocation") == XML_NS_SCHEMA:
            imp.set("schemaLocation", (root / "xml_cache" / "xml.xsd").as_uri())
    return etree.XMLSchema(xsd)


def expanded(policy: Path) -> etree._ElementTree:
    """The policy with its XIncludes expanded by libxml2 (as sros2's load_policy does)."""
    tree = etree.parse(str(policy), _parser())
    tree.xinclude()
    return tree


def sros2_permissions(shared: Path, policy: Path, discovery: bool = True,
                      domain: int = 0) -> etree._Element:
    """The permissions sros2 writes for every enclave of `policy`; `discovery`: the
    allow_ros_discovery_topic it sets for rmw_cyclonedds_cpp and rmw_fastrtps_cpp."""
    xsl = etree.XSLT(etree.parse(str(sros2_dir(shared) / "templates" / "permissions.xsl"),
                                 _parser()))
    params = {"allow_ros_discovery_topic": etree.XSLT.strparam("1")} if discovery else {}
    result = xsl(expanded(policy), **params)
    root = result.getroot()
    for d in root.iter("id"):
        d.text = str(domain)
    return root


def grants_by_subject(root) -> dict[str, list]:
    """CN/path -> the grants (model) of a permissions tree whose subject names it."""
    model = build_model(root, DocumentKind.PERMISSIONS)
    found: dict[str, list] = {}
    for g in model.grants:
        cn = g.subject.value.rsplit("CN=", 1)[-1]
        found.setdefault(cn, []).append(g)
    return found


def topics_of(root) -> set[str]:
    return {t.text for t in root.iter("topic")}


def decisions(grant, names, domain: int = 0) -> dict[tuple[str, str], bool]:
    return {(action, name): allowed(grant, action, name, domain)
            for action in ("publish", "subscribe") for name in names}


def rule_sets(grant) -> dict[tuple[str, str], set[str]]:
    """(verdict, action) -> the topic patterns of every rule of that verdict (how sros2
    and govkit may split them into rules aside)."""
    sets: dict[tuple[str, str], set[str]] = {}
    for rule in grant.rules:
        for c in rule.criteria:
            sets.setdefault((rule.verdict, c.action), set()).update(
                t.value for t in c.topics)
    return sets
