"""The test PKI: CAs and participant identities (`testpki`), fleets of participants read
from files (`participants`), and how subject names compare as each vendor compares them
(`names`).

May import: govkit.common, govkit.catalog.
"""

from govkit.common.faces import lazy_face

_EXPORTS = {
    "DEFAULT_PARTICIPANTS": "testpki",
    "Grants": "participants",
    "Participant": "participants",
    "TestPKI": "testpki",
    "fastdds_subjects_equal": "names",
    "init_pki": "testpki",
    "init_tls": "testpki",
    "load_certificate": "testpki",
    "load_identities": "names",
    "load_private_key": "testpki",
    "merge_participants": "participants",
    "openssl_rfc2253": "names",
    "permissions_ca_paths": "testpki",
    "subject_rfc2253": "testpki",
    "tls_paths": "testpki",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_face(__name__, _EXPORTS)
