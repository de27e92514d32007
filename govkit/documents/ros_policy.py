"""An sros2 policy (format 0.2.0) as govkit reads it, and the DDS permissions it grants.

The policy names, per enclave, the topics, services and actions each of its nodes may use
(`<topics publish="ALLOW">`, `<services reply="DENY">`, …). What it grants is exactly what
sros2's own transform (templates/permissions.xsl, release 0.13.0) writes, read as DDS
Security 1.1 reads permissions:
- every name of a list gets the DDS topics of `ros_names.grants` for each qualifier
  attribute of the list, into the DENY or the ALLOW set of its action (publish or
  subscribe);
- one grant per enclave: a deny_rule with every DENY (if any), then an allow_rule with
  every ALLOW (if any), then an allow_rule for rmw's ros_discovery_info (sros2's
  allow_ros_discovery_topic, which it sets for rmw_cyclonedds_cpp and rmw_fastrtps_cpp),
  then default DENY. Rules are read in order and the first that matches decides (9.4.1.3),
  so a DENY always wins over an ALLOW, and a name no rule matches is denied;
- an enclave's rules are the union of all its profiles. (sros2 writes one grant per
  <profiles> element; an enclave with several would get several grants for one subject,
  of which DDS Security 1.1 does not say which applies: govkit merges them into one.)
Nothing here validates: govkit.check.ros_policy reads a file, validates it against
schemas/sros2_policy.xsd and only then builds this model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from govkit.documents import ros_names
from govkit.documents.parse import local_name


@dataclass(frozen=True, eq=False)
class RosName:
    """One name as written in a policy or a protection file, and its expansion."""
    elem: object
    written: str
    category: str          # topic | service | action
    fqn: str               # fully qualified (ros_names.qualified)

    @property
    def dds(self) -> tuple[str, ...]:
        return ros_names.dds_names(self.category, self.fqn)


@dataclass(frozen=True, eq=False)
class PolicyGrant:
    """One DDS topic a policy grants or denies one enclave, and why."""
    dds: str
    action: str            # publish | subscribe
    verdict: str           # ALLOW | DENY
    name: RosName
    qualifier: str         # the list's attribute: publish, subscribe, request, reply, …
    list_elem: object


@dataclass(eq=False)
class Enclave:
    elem: object
    path: str
    grants: list[PolicyGrant] = field(default_factory=list)

    def rule(self, verdict: str, action: str) -> list[str]:
        """The DDS topics of one rule (ALLOW or DENY) for one action, in policy order,
        each once (sros2 sorts them; the order inside one rule decides nothing)."""
        return list(dict.fromkeys(g.dds for g in self.grants
                                  if g.verdict == verdict and g.action == action))

    @property
    def has_deny(self) -> bool:
        return any(g.verdict == "DENY" for g in self.grants)

    @property
    def has_allow(self) -> bool:
        return any(g.verdict == "ALLOW" for g in self.grants)


@dataclass(eq=False)
class Policy:
    root: object
    enclaves: list[Enclave]
    embedded: list = field(default_factory=list)   # <protection> elements in <metadata>

    @property
    def names(self) -> list[RosName]:
        """Every name the policy writes, in document order."""
        seen: dict[int, RosName] = {}
        for e in self.enclaves:
            for g in e.grants:
                seen.setdefault(id(g.name), g.name)
        return list(seen.values())


def _children(elem, name: str | None = None) -> list:
    return [c for c in elem if isinstance(c.tag, str)
            and (name is None or local_name(c) == name)]


def text_of(elem) -> str:
    """An element's string value as XPath (and so sros2's transform) reads it: its text
    nodes, comments left out, whitespace kept."""
    return elem.xpath("string(.)")


def read_policy(root) -> Policy:
    """The model of a schema-valid policy (after XInclude)."""
    enclaves: list[Enclave] = []
    embedded: list = []
    for box in _children(root, "enclaves"):
        for e in _children(box, "enclave"):
            enclave = Enclave(e, e.get("path"))
            for profiles in _children(e, "profiles"):
                for meta in _children(profiles, "metadata"):
                    embedded += [p for p in meta.iter("protection")]
                for profile in _children(profiles, "profile"):
                    _read_profile(profile, enclave)
            enclaves.append(enclave)
    return Policy(root, enclaves, embedded)


def _read_profile(profile, enclave: Enclave) -> None:
    ns, node = profile.get("ns"), profile.get("node")
    for lst in _children(profile):
        kind = local_name(lst)
        category = ros_names.CATEGORIES.get(kind)
        if category is None:
            continue
        names = [RosName(item, text_of(item), category,
                         ros_names.qualified(text_of(item), ns, node))
                 for item in _children(lst, category)]
        for qualifier in ros_names.QUALIFIERS[kind]:
            verdict = lst.get(qualifier)
            if verdict not in ("ALLOW", "DENY"):
                continue
            for name in names:
                publish, subscribe = ros_names.grants(category, qualifier, name.fqn)
                enclave.grants += [PolicyGrant(t, "publish", verdict, name, qualifier, lst)
                                   for t in publish]
                enclave.grants += [PolicyGrant(t, "subscribe", verdict, name, qualifier, lst)
                                   for t in subscribe]
