"""The signer's certificate checked the way PKCS7_verify checks it, with the Permissions CA
(or every certificate of a CA file, as `openssl smime -verify -CAfile` and Fast DDS 2.9 read
it; see govkit.smime.verify) as the only trusted certificates.

Cyclone DDS 0.10 verifies governance and permissions with ``PKCS7_verify(p7, NULL, store,
content, out, PKCS7_TEXT)`` where the store holds just the Permissions CA. So OpenSSL
builds a chain from the signer (found among the certificates inside the signature) to the
Permissions CA, and checks it for the ``smime_sign`` purpose. What that means, and so
what this module checks (x509_vfy.c, v3_purp.c):

* The signer may be the Permissions CA itself (then it must be byte-identical to the
  trusted certificate: a look-alike with the same name is refused), or a certificate
  issued by it, directly or through intermediates carried in the signature. With several
  trusted certificates, issuers are looked up among them first, and the chain must end at
  a self-signed trusted one (no partial chains: a trusted intermediate alone is refused).
  Cyclone DDS 0.10 does *not* restrict the signer to the CA itself (no PKCS7_NOINTERN): a
  leaf the CA issued is accepted, and tests/integration/test_verify_cyclone.py shows it on
  the real library. (Cyclone DDS 11 does: PKCS7_NOINTERN | PKCS7_NOVERIFY, the signer must
  be the Permissions CA certificate itself and no chain or validity is checked; govkit
  gives 0.10's verdict.)
* The signer (at the bottom of the chain) must allow S/MIME signing: keyUsage, if present,
  has digitalSignature or nonRepudiation; extendedKeyUsage, if present, has
  emailProtection; Netscape cert type, if present, allows S/MIME.
* Every certificate above it must be a CA (basicConstraints CA:TRUE, or for the trusted
  one also a v1 self-signed or keyCertSign certificate), allow certificate signing
  (keyUsage keyCertSign, if present), allow S/MIME (extendedKeyUsage, if present), and
  respect path-length limits.
* Every certificate, the trusted one included, must be within its validity period, and
  none may carry a critical extension OpenSSL does not know.
* No key-size or hash strength is required (PKCS7_verify sets no security level): RSA-1024
  or SHA-1 certificates are accepted, as Cyclone accepts them. govkit says so as a warning.
"""

from __future__ import annotations

import datetime as dt
import warnings

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, ed25519, padding, rsa
from cryptography.utils import CryptographyDeprecationWarning
from cryptography.x509.oid import ExtendedKeyUsageOID, ExtensionOID, ObjectIdentifier

MAX_DEPTH = 100   # X509_VERIFY_PARAM's default depth limit
# What cryptography raises for a certificate it cannot read (or read an extension of).
CERTIFICATE_ERRORS = (ValueError, TypeError, UnsupportedAlgorithm, x509.InvalidVersion,
                      x509.DuplicateExtension, x509.UnsupportedGeneralNameType)
_NS_CERT_TYPE = ObjectIdentifier("2.16.840.1.113730.1.1")
_NS_SMIME, _NS_SSL_CLIENT, _NS_ANY_CA = 0x20, 0x80, 0x07
# Extensions OpenSSL 3.0 handles; any other one marked critical fails verification.
_SUPPORTED = {_NS_CERT_TYPE, ExtensionOID.KEY_USAGE, ExtensionOID.SUBJECT_ALTERNATIVE_NAME,
              ExtensionOID.BASIC_CONSTRAINTS, ExtensionOID.CERTIFICATE_POLICIES,
              ExtensionOID.CRL_DISTRIBUTION_POINTS, ExtensionOID.EXTENDED_KEY_USAGE,
              ObjectIdentifier("1.3.6.1.5.5.7.1.7"), ObjectIdentifier("1.3.6.1.5.5.7.1.8"),
              ExtensionOID.OCSP_NO_CHECK, ExtensionOID.POLICY_CONSTRAINTS,
              ObjectIdentifier("1.3.6.1.5.5.7.1.14"), ExtensionOID.NAME_CONSTRAINTS,
              ExtensionOID.POLICY_MAPPINGS, ExtensionOID.INHIBIT_ANY_POLICY}


class _Cert:
    """The facts about one certificate that OpenSSL's checks use."""

    def __init__(self, cert: x509.Certificate):
        self.cert = cert
        self.der = cert.public_bytes(serialization.Encoding.DER)
        exts = cert.extensions  # ValueError for duplicate or malformed extensions
        self.critical_unknown = [e.oid.dotted_string for e in exts
                                 if e.critical and e.oid not in _SUPPORTED]
        self.ku = self._value(exts, x509.KeyUsage)
        self.eku = self._value(exts, x509.ExtendedKeyUsage)
        self.bc = self._value(exts, x509.BasicConstraints)
        self.skid = self._value(exts, x509.SubjectKeyIdentifier)
        self.akid = self._value(exts, x509.AuthorityKeyIdentifier)
        ns = next((e.value for e in exts if e.oid == _NS_CERT_TYPE), None)
        # A BIT STRING: tag, length, unused bits, then the flags OpenSSL reads (first byte).
        self.ns_type = None if ns is None else \
            ns.value[3] if isinstance(ns, x509.UnrecognizedExtension) and len(ns.value) > 3 \
            else 0
        self.self_issued = cert.subject == cert.issuer
        self.self_signed = self.self_issued and self._akid_matches(self) and \
            _sig_alg_matches(self, self)

    @staticmethod
    def _value(exts, cls):
        try:
            return exts.get_extension_for_class(cls).value
        except x509.ExtensionNotFound:
            return None

    def _akid_matches(self, issuer: _Cert) -> bool:
        """X509_check_akid(): this certificate's authority key id fits `issuer`."""
        akid = self.akid
        if akid is None:
            return True
        if akid.key_identifier is not None and issuer.skid is not None and \
                akid.key_identifier != issuer.skid.digest:
            return False
        if akid.authority_cert_serial_number is not None and \
                akid.authority_cert_serial_number != issuer.cert.serial_number:
            return False
        if akid.authority_cert_issuer:
            names = [g.value for g in akid.authority_cert_issuer
                     if isinstance(g, x509.DirectoryName)]
            if names and issuer.cert.issuer not in names:
                return False
        return True

    def key_usage_allows(self, what: str) -> bool:
        return self.ku is None or getattr(self.ku, what)

    def is_ca(self) -> int:
        """X509_check_ca(): 0 not a CA; 1 basicConstraints CA; 3, 4, 5 weaker forms."""
        if not self.key_usage_allows("key_cert_sign"):
            return 0
        if self.bc is not None:
            return 1 if self.bc.ca else 0
        if self.self_signed and self.cert.version == x509.Version.v1:
            return 3
        if self.ku is not None:
            return 4
        if self.ns_type and self.ns_type & _NS_ANY_CA:
            return 5
        return 0


# Certificate signature algorithms by OID: (issuer key type, hash). cryptography verifies
# certificates signed with these itself, except SHA-1 and MD5 ones, which OpenSSL still
# accepts; so certificate signatures are checked here, from this table.
def _dsa_public_key_type() -> type:
    """cryptography's DSA public-key class, read without its deprecation warning.
    cryptography 51 deprecates DSA and warns on every access to `dsa.DSAPublicKey`, which
    printed two warning lines before every govkit command; but OpenSSL 3 (and so Cyclone
    and Fast DDS) still verifies DSA-signed certificates and PKCS#7 signer infos, so govkit
    must recognise them to give OpenSSL's verdict. Read once here, with that one warning
    silenced, and nowhere else (tests/smime/test_warnings.py)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CryptographyDeprecationWarning)
        return dsa.DSAPublicKey


_RSA, _EC, _DSA = rsa.RSAPublicKey, ec.EllipticCurvePublicKey, _dsa_public_key_type()
_SIGNATURE_ALGORITHMS = {
    "1.2.840.113549.1.1.4": (_RSA, hashes.MD5), "1.2.840.113549.1.1.5": (_RSA, hashes.SHA1),
    "1.2.840.113549.1.1.14": (_RSA, hashes.SHA224),
    "1.2.840.113549.1.1.11": (_RSA, hashes.SHA256),
    "1.2.840.113549.1.1.12": (_RSA, hashes.SHA384),
    "1.2.840.113549.1.1.13": (_RSA, hashes.SHA512),
    "1.2.840.10045.4.1": (_EC, hashes.SHA1), "1.2.840.10045.4.3.1": (_EC, hashes.SHA224),
    "1.2.840.10045.4.3.2": (_EC, hashes.SHA256), "1.2.840.10045.4.3.3": (_EC, hashes.SHA384),
    "1.2.840.10045.4.3.4": (_EC, hashes.SHA512),
    "1.2.840.10040.4.3": (_DSA, hashes.SHA1), "2.16.840.1.101.3.4.3.1": (_DSA, hashes.SHA224),
    "2.16.840.1.101.3.4.3.2": (_DSA, hashes.SHA256),
    "1.2.840.113549.1.1.10": (_RSA, None),   # RSASSA-PSS: parameters in the certificate
    "1.3.101.112": (ed25519.Ed25519PublicKey, None), "1.3.101.113": (ed448.Ed448PublicKey, None),
}


def _sig_alg_matches(cert: _Cert, issuer: _Cert) -> bool:
    """The certificate's signature algorithm is one the issuer's key type can make."""
    entry = _SIGNATURE_ALGORITHMS.get(cert.cert.signature_algorithm_oid.dotted_string)
    try:
        return entry is not None and isinstance(issuer.cert.public_key(), entry[0])
    except (ValueError, UnsupportedAlgorithm):
        return False


def _likely_issued(cert: _Cert, issuer: _Cert) -> bool:
    """ossl_x509_likely_issued(): names, authority key id and key type fit."""
    return cert.cert.issuer == issuer.cert.subject and cert._akid_matches(issuer) and \
        _sig_alg_matches(cert, issuer)


def _build(signer: _Cert, untrusted: list[_Cert], trusted: list[_Cert]
           ) -> tuple[list[_Cert], str]:
    """The chain from the signer up to a self-signed trusted certificate, built as OpenSSL's
    build_chain() builds it with X509_V_FLAG_TRUSTED_FIRST (the default since 1.1.0) and
    without X509_V_FLAG_PARTIAL_CHAIN (neither Cyclone DDS nor Fast DDS sets it): each
    issuer is looked up among the trusted certificates first, then among the signature's;
    above a trusted certificate only trusted ones are used. Trusted certificates appear in
    the chain as their `trusted` objects. '' or why there is no chain."""
    def as_trusted(c: _Cert) -> _Cert | None:
        return next((t for t in trusted if t.der == c.der), None)

    one = len(trusted) == 1
    chain = [as_trusted(signer) or signer]
    while len(chain) <= MAX_DEPTH:
        top = chain[-1]
        top_trusted = any(c in trusted for c in chain)
        if top.self_signed:
            if top in trusted:
                return chain, ""
            if len(chain) == 1:
                return [], ("self-signed certificate that is not the Permissions CA" if one
                            else "self-signed certificate that is none of the trusted ones")
            return [], f"self-signed certificate {_name(top)} in the chain is not trusted"
        issuer = next((t for t in trusted if t not in chain and _likely_issued(top, t)), None)
        if issuer is None and not top_trusted:
            issuer = next((c for c in untrusted if c not in chain and _likely_issued(top, c)),
                          None)
            issuer = issuer and (as_trusted(issuer) or issuer)
        if issuer is None and top_trusted:
            what = "it is itself trusted" if len(chain) == 1 else \
                f"the trusted certificate {_name(top)} above it"
            return [], (f"unable to get local issuer certificate: {what}, but is not "
                        f"self-signed, and its issuer "
                        f"{top.cert.issuer.rfc4514_string()} is not trusted (OpenSSL, "
                        f"without -partial_chain, needs a self-signed trusted certificate "
                        f"at the top)")
        if issuer is None:
            return [], ("unable to get local issuer certificate: the signer is not the "
                        "Permissions CA and is not issued by it" if one else
                        f"unable to get local issuer certificate: the signer is none of the "
                        f"{len(trusted)} trusted certificates and is not issued by one")
        chain.append(issuer)
    return [], "certificate chain too long"


def _signer_purpose_problem(c: _Cert) -> str | None:
    if c.eku is not None and ExtendedKeyUsageOID.EMAIL_PROTECTION not in c.eku:
        return "its extendedKeyUsage lacks emailProtection"
    if c.ns_type is not None and not c.ns_type & (_NS_SMIME | _NS_SSL_CLIENT):
        return "its Netscape cert type does not allow S/MIME"
    if c.ku is not None and not (c.ku.digital_signature or c.ku.content_commitment):
        return "its keyUsage has neither digitalSignature nor nonRepudiation"
    return None


def _ca_problem(c: _Cert, is_anchor: bool) -> str | None:
    ca = c.is_ca()
    if ca == 0 or (not is_anchor and ca != 1):
        return "is not a CA (basicConstraints CA:TRUE with keyCertSign)"
    if c.eku is not None and ExtendedKeyUsageOID.EMAIL_PROTECTION not in c.eku:
        return "its extendedKeyUsage lacks emailProtection"
    if ca == 5 and not c.ns_type & 0x02:
        return "its Netscape cert type does not allow S/MIME CAs"
    return None


def _name(c: _Cert) -> str:
    return c.cert.subject.rfc4514_string()


def _time_problem(c: _Cert, who: str, now: dt.datetime) -> str | None:
    if now < c.cert.not_valid_before_utc:
        return f"{who} certificate is not valid before {c.cert.not_valid_before_utc.isoformat()}"
    if now > c.cert.not_valid_after_utc:
        return f"{who} certificate expired on {c.cert.not_valid_after_utc.isoformat()}"
    return None


def signature_ok(key, signature: bytes, data: bytes, hash_cls) -> bool:
    """`signature` over `data` verifies with public `key` as OpenSSL checks PKCS#7 signer
    infos and X.509 signatures: PKCS#1 v1.5 for RSA, ECDSA for EC, DSA; any other key
    type, or a key that does not match the algorithm, is a failed check. The one
    signature check govkit has (verify, verify_batch's fast path, the certificate chain)."""
    try:
        if isinstance(key, rsa.RSAPublicKey):
            key.verify(signature, data, padding.PKCS1v15(), hash_cls())
        elif isinstance(key, ec.EllipticCurvePublicKey):
            key.verify(signature, data, ec.ECDSA(hash_cls()))
        elif isinstance(key, _DSA):
            key.verify(signature, data, hash_cls())
        else:  # PKCS#7 signer infos and these X.509 algorithms exist for RSA, EC, DSA only
            return False
        return True
    except (InvalidSignature, ValueError, TypeError, UnsupportedAlgorithm):
        return False


def signed_with(cert: x509.Certificate, key) -> bool | None:
    """Whether `cert`'s own signature verifies with the issuer's public `key`, by
    `signature_ok` and the algorithm table above; None for an algorithm the table leaves
    to cryptography (RSASSA-PSS, EdDSA: `verify_directly_issued_by`) or does not know.
    The certificate-signature check of `_signed_by` (whether a CA of the test PKI issued a
    certificate is govkit.pki.issued's)."""
    entry = _SIGNATURE_ALGORITHMS.get(cert.signature_algorithm_oid.dotted_string)
    if entry is None or entry[1] is None:
        return None
    return signature_ok(key, cert.signature, cert.tbs_certificate_bytes, entry[1])


def _signed_by(c: _Cert, issuer: _Cert) -> bool:
    """The certificate's signature verifies with the issuer's key."""
    try:
        verdict = signed_with(c.cert, issuer.cert.public_key())
        if verdict is None:   # PSS, EdDSA: cryptography knows them
            c.cert.verify_directly_issued_by(issuer.cert)
            return True
    except (ValueError, TypeError, InvalidSignature, UnsupportedAlgorithm):
        return False
    return verdict


def check_signer(signer: x509.Certificate, untrusted: list[x509.Certificate],
                 trusted: x509.Certificate | list[x509.Certificate], now: dt.datetime
                 ) -> list[str]:
    """Why OpenSSL would refuse `signer` for S/MIME with `trusted` (the Permissions CA, or
    every certificate of a CA file, as `-CAfile` reads it) as the only trusted
    certificates ([] if it would not)."""
    anchors = [trusted] if isinstance(trusted, x509.Certificate) else list(trusted)
    try:
        s = _Cert(signer)
        pool = [_Cert(c) for c in untrusted]
        ts = [_Cert(c) for c in anchors]
    except CERTIFICATE_ERRORS as e:
        return [f"a certificate cannot be read: {e}"]
    chain, why = _build(s, pool, ts)
    if not chain:
        return [f"signer {_name(s)}: {why}"]
    problems = []
    path_len = 0
    for depth, c in enumerate(chain):
        who = "signer" if depth == 0 else \
            ("Permissions CA" if len(ts) == 1 else f"trusted CA {_name(c)}") if c in ts else \
            f"intermediate CA {_name(c)}"
        if c.critical_unknown:
            problems.append(f"{who} certificate has an unsupported critical extension "
                            f"{', '.join(c.critical_unknown)}")
        if depth == 0:
            why = _signer_purpose_problem(c)
            if why:
                problems.append(f"{who} certificate {_name(c)} is not usable for S/MIME "
                                f"signing: {why}")
        else:
            # check_chain_extensions(): only the top of the chain may be a CA in a weaker
            # form than basicConstraints CA:TRUE
            why = _ca_problem(c, depth == len(chain) - 1)
            if why:
                problems.append(f"{who} certificate {why}")
            if depth > 1 and c.bc is not None and c.bc.path_length is not None and \
                    path_len > c.bc.path_length:
                problems.append(f"{who} certificate's path length limit is exceeded")
            if not c.self_issued:
                path_len += 1
            below = chain[depth - 1]
            if not _signed_by(below, c):
                problems.append(f"certificate {_name(below)} has an invalid signature")
        why = _time_problem(c, who, now)
        if why:
            problems.append(why)
    return problems


def weak_key_warning(cert: x509.Certificate) -> str | None:
    """A note for what OpenSSL accepts here but no new PKI should use."""
    name = cert.subject.rfc4514_string()
    try:
        key = cert.public_key()
    except (ValueError, UnsupportedAlgorithm):
        return None
    if isinstance(key, rsa.RSAPublicKey) and key.key_size < 2048:
        return f"{name} has an RSA-{key.key_size} key (weak, but OpenSSL accepts it)"
    entry = _SIGNATURE_ALGORITHMS.get(cert.signature_algorithm_oid.dotted_string)
    algo = entry[1] if entry else None
    if algo is not None and algo.name in ("sha1", "md5"):
        return f"{name} is signed with {algo.name.upper()} (weak, but OpenSSL accepts it)"
    return None
