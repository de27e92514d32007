"""Whether a CA issued a certificate: the one "issued by this CA" check of govkit.

A certificate is the CA's when its issuer name is the CA's subject and the CA's public key
verifies its signature: cryptography's `verify_directly_issued_by`, the check OpenSSL makes
of each link of a chain. The test PKI (a participant left from an earlier Identity CA, a
TLS key of another CA), revocation (what its CRL may revoke), the manifest (a certificate
proven when written), generate (whose permissions to write) and the Fast DDS refusal check
ask it here, so they never disagree on one certificate.
"""

from __future__ import annotations

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm

# What a certificate that is not the CA's (or not a certificate) raises when read or checked:
# a name mismatch or unreadable bytes (ValueError), a key type that cannot have signed it
# (TypeError), a signature that does not verify, an algorithm cryptography does not know.
NOT_ISSUED = (ValueError, TypeError, InvalidSignature, UnsupportedAlgorithm)


def issued_by(cert: x509.Certificate, ca: x509.Certificate) -> bool:
    """Whether `ca` issued `cert`: its issuer name is `ca`'s subject and `ca`'s key
    verifies its signature."""
    try:
        cert.verify_directly_issued_by(ca)
    except NOT_ISSUED:
        return False
    return True


def issued_certificate(pem: bytes, ca: x509.Certificate) -> x509.Certificate | None:
    """The certificate in `pem` if `ca` issued it; None if it did not, or `pem` holds no
    certificate."""
    try:
        cert = x509.load_pem_x509_certificate(pem)
    except ValueError:
        return None
    return cert if issued_by(cert, ca) else None
