"""Governance and permissions documents: rendered from templates (`render`), parsed safely
with source positions (`parse`), S/MIME read exactly as OpenSSL reads it (`mime`), and the
model the analysis commands share (`model`, `domainsets`, `globs`). Nothing here judges a
document: that is govkit.check.

May import: govkit.common, govkit.catalog, govkit.pki.
"""

from govkit.common.faces import lazy_face

_EXPORTS = {
    "AccessRule": "model",
    "Criteria": "model",
    "DOMAIN_SETTINGS": "model",
    "DomainRule": "model",
    "DomainSet": "render",
    "Governance": "model",
    "GovernanceDocument": "render",
    "Grant": "model",
    "Instant": "model",
    "Model": "model",
    "PARTICIPANT": "compiled",
    "ParsedDocument": "parse",
    "PermissionsDocument": "render",
    "SUBJECT": "compiled",
    "TOPIC_SETTINGS": "model",
    "TopicRule": "model",
    "Value": "model",
    "build_model": "model",
    "covers": "globs",
    "datetime_key": "model",
    "declared_encoding": "parse",
    "is_xml_datetime": "model",
    "local_name": "parse",
    "matches": "globs",
    "matches_everything": "globs",
    "parse_xml": "parse",
    "rule_settings": "model",
    "safe_parser": "parse",
    "setting_text": "model",
    "text_value": "parse",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_face(__name__, _EXPORTS)
