"""The test PKI: CAs and participant identities (`testpki`), fleets of participants read
from files (`participants`), ROS 2 enclave paths and the DDS names of ROS topics (`ros`),
and how subject names compare as each vendor compares them (`names`); the key lifecycle:
revocation and the Identity CA's CRL (`revocation`), new certificates for existing keys
(`renewal`), what expires when (`status`), and keys moved into a SoftHSM2 token for Fast
DDS (`hsm`); one writer at a time (`lock`), and the manifest that records each certificate
proven once (`manifest`).

May import: govkit.common, govkit.catalog.
"""

from govkit.common.faces import lazy_face

_EXPORTS = {
    "CLOCK_SKEW": "testpki",
    "Crl": "revocation",
    "DEFAULT_CRL_DAYS": "revocation",
    "DEFAULT_PARTICIPANTS": "testpki",
    "DEFAULT_WARN_DAYS": "status",
    "GrantDates": "status",
    "Grants": "participants",
    "HSM_KINDS": "hsm",
    "LAST_VALID_TIME": "testpki",
    "Participant": "participants",
    "REASONS": "revocation",
    "SignedDates": "status",
    "Status": "status",
    "TestPKI": "testpki",
    "certificate_grants": "names",
    "certificate_rdns": "names",
    "check_softhsm": "hsm",
    "crl_path": "revocation",
    "cyclone_accepts": "names",
    "enclave_of": "ros",
    "explain_revocation": "revocation",
    "fastdds_subjects_equal": "names",
    "init_pki": "testpki",
    "init_tls": "testpki",
    "key_uri": "hsm",
    "load_certificate": "testpki",
    "load_crl": "revocation",
    "load_identities": "names",
    "load_private_key": "testpki",
    "merge_participants": "participants",
    "move_keys_to_softhsm": "hsm",
    "openssl_rfc2253": "names",
    "parse_subject": "names",
    "permissions_ca_paths": "testpki",
    "pki_status": "status",
    "read_manifest": "manifest",
    "rekey": "renewal",
    "renew": "renewal",
    "revoke": "revocation",
    "revoke_all": "revocation",
    "revoked_certificates": "revocation",
    "revoked_participants": "revocation",
    "softhsm_conf": "hsm",
    "status_lines": "status",
    "subject_rfc2253": "testpki",
    "tls_paths": "testpki",
    "xml_datetime": "manifest",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_face(__name__, _EXPORTS)
