"""The test PKI: CAs and participant identities (`testpki`), fleets of participants read
from files (`participants`), ROS 2 enclave paths and the DDS names of ROS topics (`ros`),
and how subject names compare as each vendor compares them (`names`).

May import: govkit.common, govkit.catalog.
"""

from govkit.common.faces import lazy_face

_EXPORTS = {
    "DEFAULT_PARTICIPANTS": "testpki",
    "Grants": "participants",
    "Participant": "participants",
    "TestPKI": "testpki",
    "certificate_rdns": "names",
    "enclave_of": "ros",
    "fastdds_subjects_equal": "names",
    "init_pki": "testpki",
    "init_tls": "testpki",
    "load_certificate": "testpki",
    "load_identities": "names",
    "load_private_key": "testpki",
    "merge_participants": "participants",
    "openssl_rfc2253": "names",
    "parse_subject": "names",
    "permissions_ca_paths": "testpki",
    "subject_rfc2253": "testpki",
    "tls_paths": "testpki",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_face(__name__, _EXPORTS)
