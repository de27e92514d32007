"""Sign and verify governance and permissions documents, as OpenSSL, Cyclone DDS 0.10 and
Fast DDS 2.9 decide.

`sign` writes what `openssl smime -sign -text` writes; `verify` gives the verdict OpenSSL's
PKCS7_verify gives with the Permissions CA as the only trusted certificate; `verify_batch`
gives the same verdicts over many files, faster; `chain` checks certificates and every
signature (one `signature_ok`); `pkcs7` is the DER template fast signing fills in.

`status` reads the dates and grants of signed documents for `govkit pki status` and the
revoked-grant check of `verify`.

May import: govkit.common, govkit.catalog, govkit.pki, govkit.documents, govkit.check.
"""

from govkit.smime.sign import (
    TEXT_HEADER,
    Signer,
    check_own_signature,
    check_signable,
    load_signer,
    sign_bytes,
    sign_document,
    sign_paths,
    signable_text,
    signed_path,
    smime_message,
)
from govkit.smime.status import add_revocation_problems, lifecycle_status, revoked_grants
from govkit.smime.verify import (
    Verification,
    check_signed_document,
    load_trusted,
    trust_note,
    verify_bytes,
    verify_file,
)
from govkit.smime.verify_batch import verify_files

__all__ = ["TEXT_HEADER", "Signer", "Verification", "add_revocation_problems",
           "check_own_signature", "check_signable", "check_signed_document", "lifecycle_status",
           "load_signer", "load_trusted", "revoked_grants", "sign_bytes", "sign_document",
           "sign_paths", "signable_text", "signed_path", "smime_message", "trust_note",
           "verify_bytes", "verify_file", "verify_files"]
