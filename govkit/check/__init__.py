"""Judge a document: the XSD (`xsd`), validation's entry points (`validate`), the lint
rules and their engine (`rules`), the lint command (`lint`), and the analysis commands
(`identify`, `explain`, `diff`) over what `loaded` reads.

May import: govkit.common, govkit.catalog, govkit.pki, govkit.documents.
"""

from govkit.common.faces import lazy_face

_EXPORTS = {
    "LintOptions": "lint",
    "SEVERITY_RANK": "rules.registry",
    "check_file": "validate",
    "diff_documents": "diff",
    "explain_document": "explain",
    "explanation_text": "explain",
    "format_lint": "output_formats",
    "identification_text": "identify",
    "identify_paths": "identify",
    "lint_paths": "lint",
    "lint_settings": "config",
    "lint_target": "config",
    "load_document": "loaded",
    "portable_findings": "validate",
    "rules_table": "rules.engine",
    "validate_bytes": "validate",
    "validate_file": "validate",
    "worst": "lint",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_face(__name__, _EXPORTS)
