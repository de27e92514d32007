"""Make the files: many documents in one pass, signed or not (`fleet`), one profile's
bundle kept current for a runner (`bundle`), a ROS 2 keystore to deploy (`sros2`);
permissions with a validity the user chooses, and re-signing them with a new one
(`validity`).

May import: every stage up to govkit.runners.
"""

from govkit.common.faces import lazy_face

_EXPORTS = {
    "BundleLog": "bundle",
    "Selection": "sros2",
    "bundle_hashes": "bundle",
    "ensure_bundle": "bundle",
    "ensure_identities": "fleet",
    "ensure_pki": "bundle",
    "ensure_tls": "bundle",
    "export_sros2": "sros2",
    "generate": "fleet",
    "generate_policy": "policy",
    "parse_window": "validity",
    "planned_bundle": "bundle",
    "renew_permissions": "validity",
    "sign_files": "fleet",
    "tls_keystore_path": "bundle",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_face(__name__, _EXPORTS)
