"""Governance and permissions documents: rendered from templates (`render`), parsed safely
with source positions (`parse`), S/MIME read exactly as OpenSSL reads it (`mime`), and the
model the analysis commands share (`model`, `domainsets`, `globs`). Nothing here judges a
document: that is govkit.check.

May import: govkit.common, govkit.catalog, govkit.pki.
"""

from govkit.common.faces import lazy_face

_EXPORTS = {
    "AccessRule": "model",
    "CATEGORIES": "ros_names",
    "Criteria": "model",
    "DOMAIN_DEFAULTS": "protection",
    "DOMAIN_SETTINGS": "model",
    "DomainRule": "model",
    "DomainSet": "render",
    "Governance": "model",
    "GovernanceDocument": "render",
    "Grant": "model",
    "Instant": "model",
    "Kinds": "protection",
    "MergedDocument": "xinclude",
    "Model": "model",
    "ParsedDocument": "parse",
    "PermissionsDocument": "render",
    "Policy": "ros_policy",
    "Protection": "protection",
    "ProtectionProblem": "protection",
    "ProtectionRule": "protection",
    "ROS_DISCOVERY_TOPIC": "ros_names",
    "SROS2_DEFAULT": "protection",
    "TOPIC_SETTINGS": "model",
    "TopicRule": "model",
    "Value": "model",
    "allowed": "access",
    "build_model": "model",
    "covers": "globs",
    "datetime_key": "model",
    "deciding_rule": "access",
    "declared_encoding": "parse",
    "has_wildcards": "globs",
    "is_xml_datetime": "model",
    "load_merged": "xinclude",
    "local_name": "parse",
    "matches": "globs",
    "matches_everything": "globs",
    "overlaps": "globs",
    "parse_xml": "parse",
    "read_policy": "ros_policy",
    "read_protection": "protection",
    "render_governance": "ros_render",
    "render_grant": "ros_render",
    "render_permissions": "ros_render",
    "rule_settings": "model",
    "safe_parser": "parse",
    "setting_text": "model",
    "text_value": "parse",
    "topic_rule_for": "access",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_face(__name__, _EXPORTS)
