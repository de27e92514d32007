"""govkit's protection sidecar (schemas/protection.xsd): which protection each ROS 2 topic,
service and action of a policy gets, and the one governance that says so.

Classes, as (metadata_protection_kind, data_protection_kind):
  none    = (NONE, NONE)
  sign    = (SIGN, NONE): the whole submessage signed, not the payload alone, because Fast
            DDS 2.9's payload-only signing (data SIGN) sends an unpadded GMAC that other
            implementations refuse (fixed in Fast DDS 2026-08);
  encrypt = (ENCRYPT, ENCRYPT);
`origin="true"` turns the metadata kind into its _WITH_ORIGIN_AUTHENTICATION form;
`metadata=` / `data=` set a kind outright.

The governance (DDS Security 1.1, 9.4.1.2): one domain_rule for the policy's domains, then,
in file order, one complete topic_rule per DDS name of every rule's names (ROS names
expanded by govkit.documents.ros_names, exactly as the permissions expand them), and a
last topic_rule `*` with the default's kinds. The first topic_rule whose expression
matches a topic applies, so a name takes the first sidecar rule that names it. Never an
empty topic_expression (Fast DDS 2.9's parser crashes on one, CVE-2026-45094): the schema
refuses empty and blank names, and every DDS name has its prefix.

Access control is enforced on every topic (enable_join/read/write_access_control true, as
sros2's default governance): the policy's grants are what its permissions say they are.
Discovery and liveliness of a topic's endpoints are protected unless its class is none.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from govkit.common.limits import MAX_CHILDREN, MAX_DOCUMENT_BYTES
from govkit.documents import ros_names
from govkit.documents.parse import local_name
from govkit.documents.ros_policy import RosName, text_of

KINDS = {"none": ("NONE", "NONE"), "sign": ("SIGN", "NONE"), "encrypt": ("ENCRYPT", "ENCRYPT")}
# sros2's default governance (templates/governance.xml): what a keystore gets without <domain>
DOMAIN_DEFAULTS = {"rtps": "SIGN", "discovery": "ENCRYPT", "liveliness": "ENCRYPT"}
ORIGIN = "_WITH_ORIGIN_AUTHENTICATION"
# What a protection may name so that govkit reads its governance back: a topic_rule and the
# comment before it per DDS name, and the default's, as children of topic_access_rules
# (MAX_CHILDREN); and the names' bytes (each is written twice, in the comment perhaps
# escaped) so that the document stays far below MAX_DOCUMENT_BYTES beside the ~700 bytes
# of each topic_rule (tests/documents/test_protection.py renders the largest one).
MAX_PROTECTED_NAMES = MAX_CHILDREN // 2 - 1
MAX_PROTECTED_NAME_BYTES = 100_000


@dataclass(frozen=True)
class Kinds:
    metadata: str
    data: str

    @property
    def protected(self) -> bool:
        return self.metadata != "NONE" or self.data != "NONE"

    def __str__(self) -> str:
        return f"metadata {self.metadata}, data {self.data}"


@dataclass(eq=False)
class ProtectionRule:
    elem: object
    index: int             # 1-based position among the rules; 0 for the default
    kind: str
    kinds: Kinds
    names: list[RosName] = field(default_factory=list)

    @property
    def label(self) -> str:
        return "default" if self.index == 0 else f"rule {self.index}"


@dataclass(frozen=True)
class ProtectedTopic:
    """One topic_rule of the governance, and the sidecar rule and name it comes from
    (None for the default's `*`)."""
    expression: str
    rule: ProtectionRule
    name: RosName | None


@dataclass(eq=False)
class Protection:
    elem: object
    domain: dict[str, str]          # rtps, discovery, liveliness
    rules: list[ProtectionRule]
    default: ProtectionRule

    def topic_rules(self) -> list[ProtectedTopic]:
        found = [ProtectedTopic(dds, r, n) for r in self.rules for n in r.names for dds in n.dds]
        return found + [ProtectedTopic("*", self.default, None)]

    def same_as(self, other: Protection) -> bool:
        """The same classes for the same names in the same order (where and how each is
        written aside)."""
        def key(p: Protection):
            return (p.domain, [(r.kinds, [(n.category, n.fqn) for n in r.names])
                               for r in p.rules], p.default.kinds)
        return key(self) == key(other)


class ProtectionProblem(ValueError):
    """A sidecar the schema accepts but that means nothing (origin on an unprotected kind,
    a private name without a node): the element and the sentence."""

    def __init__(self, elem, message: str):
        super().__init__(message)
        self.elem = elem


def _kinds(elem) -> Kinds:
    kind = elem.get("kind")
    metadata, data = KINDS[kind]
    if elem.get("origin") in ("true", "1"):
        if metadata == "NONE":
            raise ProtectionProblem(elem, f"origin=\"true\" with kind=\"{kind}\": origin "
                                          f"authentication needs a signed or encrypted "
                                          f"metadata kind (use kind sign or encrypt)")
        metadata += ORIGIN
    return Kinds(elem.get("metadata") or metadata, elem.get("data") or data)


def _too_many(count: int, chars: int) -> str | None:
    """Why govkit would not read back the governance of a protection naming `count` DDS
    topics of `chars` bytes (None: it would). Each DDS name is one topic_rule after its
    comment, two children of topic_access_rules, which holds at most MAX_CHILDREN; the
    names' length bounds the document's bytes (MAX_DOCUMENT_BYTES)."""
    if count > MAX_PROTECTED_NAMES:
        return (f"the protection names more than {MAX_PROTECTED_NAMES} DDS topics (a topic is "
                f"one, a service 2, an action 8): its governance would hold more topic_rules "
                f"than a document govkit reads ({MAX_CHILDREN} children per element); "
                f"protect them with fewer rules (a pattern such as /camera/*)")
    if chars > MAX_PROTECTED_NAME_BYTES:
        return (f"the DDS topic names of the protection are more than "
                f"{MAX_PROTECTED_NAME_BYTES:,} bytes together: its governance would be larger "
                f"than a document govkit reads ({MAX_DOCUMENT_BYTES:,} bytes)")
    return None


def read_protection(elem) -> Protection:
    """The model of a schema-valid <protection> element. ProtectionProblem for what the
    schema cannot say, and for a protection whose governance govkit could not read back
    (MAX_PROTECTED_NAMES, MAX_PROTECTED_NAME_BYTES): refused when it is read, before any
    command writes anything (before 2026-12-07, `generate` created the PKI and then
    called its own governance invalid)."""
    domain = dict(DOMAIN_DEFAULTS)
    rules: list[ProtectionRule] = []
    default = None
    count = chars = 0
    for child in (c for c in elem if isinstance(c.tag, str)):
        name = local_name(child)
        if name == "domain":
            domain.update({k: child.get(k) for k in DOMAIN_DEFAULTS if child.get(k)})
        elif name == "default":
            default = ProtectionRule(child, 0, child.get("kind"), _kinds(child))
        elif name == "rule":
            rule = ProtectionRule(child, len(rules) + 1, child.get("kind"), _kinds(child))
            ns, node = child.get("ns") or "/", child.get("node")
            for lst in (c for c in child if isinstance(c.tag, str)):
                category = ros_names.CATEGORIES[local_name(lst)]
                for item in (c for c in lst if isinstance(c.tag, str)):
                    written = text_of(item)
                    try:
                        fqn = ros_names.qualified(written, ns, node)
                    except ValueError:
                        raise ProtectionProblem(item, f"{category} {written!r}: a private "
                                                      f"name (~) needs node= on its rule") from None
                    name = RosName(item, written, category, fqn)
                    count += len(name.dds)
                    chars += sum(len(d.encode("utf-8", "surrogatepass")) for d in name.dds)
                    too_many = _too_many(count, chars)
                    if too_many:
                        raise ProtectionProblem(item, too_many)
                    rule.names.append(name)
            rules.append(rule)
    return Protection(elem, domain, rules, default)


# No protection given: sros2's default governance (templates/governance.xml): every topic
# encrypted, access control enforced.
SROS2_DEFAULT = Protection(None, dict(DOMAIN_DEFAULTS), [],
                           ProtectionRule(None, 0, "encrypt", Kinds("ENCRYPT", "ENCRYPT")))
