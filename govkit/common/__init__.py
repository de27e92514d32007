"""What every stage uses: errors and exit codes, size limits, reading untrusted
input, findings, atomic writes and staging, worker pools, templates and resource paths.

May import: nothing in govkit.
"""

from govkit.common.faces import lazy_face

_EXPORTS = {
    "DATA_DIR": "paths",
    "DocumentError": "findings",
    "DocumentKind": "findings",
    "EXIT_INTERNAL": "errors",
    "EXIT_INTERRUPTED": "errors",
    "EXIT_INVALID": "errors",
    "EXIT_OK": "errors",
    "EXIT_USAGE": "errors",
    "Finding": "findings",
    "GovkitError": "errors",
    "KEY_TYPES": "limits",
    "MAX_CHILDREN": "limits",
    "MAX_CRL_BYTES": "limits",
    "MAX_DOCUMENT_BYTES": "limits",
    "MAX_DOMAIN_ID": "limits",
    "MAX_ELEMENTS": "limits",
    "MAX_FLEET": "limits",
    "MAX_HEADER_BYTES": "limits",
    "MAX_JOBS": "limits",
    "MAX_MANIFEST_BYTES": "limits",
    "MAX_MANIFEST_PARTICIPANTS": "limits",
    "MAX_PARTICIPANTS_BYTES": "limits",
    "MAX_PEM_BYTES": "limits",
    "MAX_RESULTS_BYTES": "limits",
    "MAX_REVOCATIONS": "limits",
    "MAX_SIGNATURE_PART_BYTES": "limits",
    "MAX_SMIME_BYTES": "limits",
    "MAX_TOPICS_PER_ACTION": "limits",
    "SCHEMAS_DIR": "paths",
    "SCHEMA_FILES": "paths",
    "collect_files": "fsutil",
    "dies_with_parent": "workers",
    "get_template": "templating",
    "lazy_face": "faces",
    "one_line": "findings",
    "printable": "findings",
    "quote_input": "findings",
    "quote_value": "findings",
    "read_input": "inputs",
    "read_text_input": "inputs",
    "shown_as_escapes": "findings",
    "template_environment": "templating",
    "too_large_message": "inputs",
    "user_cache_dir": "paths",
    "write_atomic": "fsutil",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_face(__name__, _EXPORTS)
