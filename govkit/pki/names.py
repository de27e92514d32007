"""Distinguished names: a permissions grant's <subject_name> against identity certificates.

A grant names its participant by the subject of its identity certificate. The
specification means a distinguished name (the same attributes in the same order, values
compared ignoring case and extra spaces), but the string can be written two ways:
RFC 4514 / 2253 (`CN=pub,O=Org`, most specific first) or OpenSSL's one-line form
(`/O=Org/CN=pub`, most specific last). :func:`parse_subject` reads both into the
certificate's own order, so they compare as names, not strings.

Implementations compare differently (govkit.catalog.targets.SubjectMatch): Cyclone DDS splits
both strings into NAME=VALUE tokens and compares them byte for byte (:func:`cyclone_accepts`),
Fast DDS 2.9 compares the strings part by part in the certificate's RFC 2253 order
(:func:`fastdds_accepts`). Every scan here is one pass over the string.

cryptography is imported where a certificate is handled: `validate` loads the lint rules
that use this module and never needs it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.inputs import read_input
from govkit.common.limits import MAX_PEM_BYTES

if TYPE_CHECKING:
    from cryptography import x509

# Attribute type names (case-insensitive) as OpenSSL and RFC 4514 spell them.
_TYPES = {
    "cn": "2.5.4.3", "sn": "2.5.4.4", "surname": "2.5.4.4", "serialnumber": "2.5.4.5",
    "c": "2.5.4.6", "l": "2.5.4.7", "st": "2.5.4.8", "s": "2.5.4.8", "street": "2.5.4.9",
    "o": "2.5.4.10", "ou": "2.5.4.11", "title": "2.5.4.12", "postalcode": "2.5.4.17",
    "name": "2.5.4.41", "gn": "2.5.4.42", "givenname": "2.5.4.42", "initials": "2.5.4.43",
    "dnqualifier": "2.5.4.46", "pseudonym": "2.5.4.65",
    "dc": "0.9.2342.19200300.100.1.25", "uid": "0.9.2342.19200300.100.1.1",
    "emailaddress": "1.2.840.113549.1.9.1", "email": "1.2.840.113549.1.9.1",
    "e": "1.2.840.113549.1.9.1",
}


@cache
def _openssl_names() -> dict:
    """The names OpenSSL's RFC 2253 printing (XN_FLAG_RFC2253, what Cyclone compares
    against) uses where cryptography's rfc4514_string() would print a dotted OID."""
    from cryptography.x509.oid import NameOID
    return {NameOID.EMAIL_ADDRESS: "emailAddress", NameOID.SERIAL_NUMBER: "serialNumber",
            NameOID.SURNAME: "SN", NameOID.GIVEN_NAME: "GN", NameOID.TITLE: "title",
            NameOID.STREET_ADDRESS: "street", NameOID.POSTAL_CODE: "postalCode"}

Attribute = tuple[str, str]          # (dotted OID, normalised value)
Rdn = frozenset[Attribute]


class SubjectSyntaxError(ValueError):
    pass


def normalise(value: str) -> str:
    """A value as DN matching compares it: case folded, runs of spaces as one, trimmed."""
    return " ".join(value.split()).casefold()


def _oid(name: str) -> str:
    key = name.strip().lower()
    if key in _TYPES:
        return _TYPES[key]
    parts = key.split(".")
    if len(parts) > 1 and all(p.isdigit() for p in parts):
        return key
    raise SubjectSyntaxError(f"unknown attribute type {name.strip()!r}")


def _rfc4514_pieces(text: str) -> list[list[tuple[str, str]]]:
    """RDNs as written (most specific first): [[(type, raw value), ...], ...]. Handles
    backslash escapes (\\, and \\2C), quoted values and '+' multi-valued RDNs."""
    rdns: list[list[tuple[str, str]]] = [[]]
    name, value, in_value, quoted, i = [], [], False, False, 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            pair = text[i + 1:i + 3]
            if len(pair) == 2 and all(h in "0123456789abcdefABCDEF" for h in pair):
                value.append(chr(int(pair, 16)))   # one byte; UTF-8 sequences stay bytes
                i += 3
            else:
                value.append(text[i + 1])
                i += 2
            continue
        if c == '"' and in_value:
            quoted = not quoted
        elif quoted:
            value.append(c)
        elif c == "=" and not in_value:
            in_value = True
        elif c in ",;+" and in_value:
            rdns[-1].append(("".join(name), "".join(value)))
            if c != "+":
                rdns.append([])
            name, value, in_value = [], [], False
        elif in_value:
            value.append(c)
        else:
            name.append(c)
        i += 1
    if quoted:
        raise SubjectSyntaxError("unterminated quoted value")
    if not in_value:
        raise SubjectSyntaxError("an attribute has no '=': expected TYPE=value")
    rdns[-1].append(("".join(name), "".join(value)))
    return rdns


def written_attributes(subject: str) -> list[Attribute]:
    """The attributes in the order the string lists them; SubjectSyntaxError if it is not
    a distinguished name."""
    text = subject.strip()
    if not text:
        raise SubjectSyntaxError("the subject is empty")
    if text.startswith("/"):
        out = []
        for piece in text[1:].split("/"):
            if "=" not in piece:
                raise SubjectSyntaxError(f"{piece!r} has no '=': expected /TYPE=value/...")
            name, value = piece.split("=", 1)
            out.append((_oid(name), normalise(value)))
        return out
    return [(_oid(n), normalise(v)) for rdn in _rfc4514_pieces(text) for n, v in rdn]


def parse_subject(subject: str) -> tuple[Rdn, ...]:
    """The RDNs in certificate order (most significant first), whichever form is written."""
    text = subject.strip()
    if text.startswith("/"):
        return tuple(frozenset({a}) for a in written_attributes(text))
    if not text:
        raise SubjectSyntaxError("the subject is empty")
    rdns = [frozenset((_oid(n), normalise(v)) for n, v in rdn)
            for rdn in _rfc4514_pieces(text)]
    return tuple(reversed(rdns))


def certificate_rdns(cert: x509.Certificate) -> tuple[Rdn, ...]:
    return tuple(frozenset((a.oid.dotted_string, normalise(str(a.value))) for a in rdn)
                 for rdn in cert.subject.rdns)


def openssl_rfc2253(cert: x509.Certificate) -> str:
    """The subject as OpenSSL prints it with XN_FLAG_RFC2253 (close enough: OpenSSL also
    escapes non-ASCII bytes as \\XX)."""
    return cert.subject.rfc4514_string(_openssl_names())


def _cyclone_tokens(text: str) -> list[str]:
    out, start = [], 0
    for i, c in enumerate(text + ","):
        if c in ",/|":
            out.append(text[start:i])
            start = i + 1
    return out


def _cyclone_pair(token: str) -> tuple[str, str]:
    """NAME=VALUE as Cyclone's ddsrt_strsep splits it: a token without '=' is a NAME with
    an empty value (ddsrt_strsep, unlike strsep, never returns a NULL rest). So the
    subject CN=/ns/node (sros2's enclave CN) reads as CN='', ns='', node='' on both sides,
    and matches; it would equally match CN=/node/ns (the pieces are looked up by name,
    not in order)."""
    name, _, value = token.partition("=")
    return name, value


def cyclone_accepts(grant_subject: str, cert: x509.Certificate, trims: bool = False) -> bool:
    """Cyclone DDS 0.10's ac_check_subjects_are_equal: every NAME=VALUE token (split at
    ',' '/' '|') of the certificate's RFC 2253 subject must appear in the grant (first
    token of that NAME, byte-identical value; at most 20 tokens; nothing trimmed; an
    empty token is skipped in the grant, refused in the certificate's subject). `trims`:
    Cyclone DDS 11's, which strips spaces (' ' only, ddsrt_str_trim_ord_space) from each
    token's name and value on both sides first."""
    def pair(token: str) -> tuple[str, str]:
        name, value = _cyclone_pair(token)
        return (name.strip(" "), value.strip(" ")) if trims else (name, value)
    props: dict[str, str] = {}
    count = 0
    for token in _cyclone_tokens(grant_subject):
        if not token:
            continue
        if count >= 20:
            return False
        name, value = pair(token)
        props.setdefault(name, value)
        count += 1
    for token in _cyclone_tokens(openssl_rfc2253(cert)):
        if not token:
            return False
        name, value = pair(token)
        if props.get(name) != value:
            return False
    return True


def fastdds_subjects_equal(a: str, b: str) -> bool:
    """Fast DDS 2.9's subject comparison (Permissions.cpp, rfc2253_string_compare): both
    strings split at every ',', each part trimmed of spaces, the parts compared byte for
    byte in order. Attribute order, case and spelling all count, and '/O=…/CN=…'
    (OpenSSL's one-line form) never matches. Fast DDS 2.10 compares parsed names instead."""
    pa, pb = a.split(","), b.split(",")
    return len(pa) == len(pb) and all(x.strip(" ") == y.strip(" ")
                                      for x, y in zip(pa, pb, strict=True))


def fastdds_accepts(grant_subject: str, cert: x509.Certificate) -> bool:
    """Fast DDS 2.9 finds this certificate's grant (check_subject_name): the grant's
    subject equals the certificate's subject as OpenSSL prints it with XN_FLAG_RFC2253."""
    return fastdds_subjects_equal(grant_subject, openssl_rfc2253(cert))


def grants_certificate(grant_subject: str | None, cert: x509.Certificate) -> bool:
    """A grant with this subject is `cert`'s under some reading: the same distinguished
    name, or the grant Cyclone DDS 0.10 or Fast DDS 2.9 would find for it."""
    if not grant_subject:
        return False
    try:
        rdns = parse_subject(grant_subject)
    except SubjectSyntaxError:
        rdns = None
    return rdns == certificate_rdns(cert) or cyclone_accepts(grant_subject, cert) \
        or fastdds_accepts(grant_subject, cert)


def certificate_grants(cert: x509.Certificate):
    """`grants_certificate` for one certificate and many subjects: a function of a grant
    subject. A subject that cannot name the certificate under any reading is passed over
    without parsing it: every reading needs each piece of the CN's value in the subject
    (DN equality compares normalised values; Cyclone compares the tokens between ',' '/'
    '|' byte for byte, so CN=/ns/node is the tokens ns and node; Fast DDS compares bytes),
    so a subject without escapes or quotes whose normalised text lacks the CN's longest
    piece, normalised, names it under none (a test compares the two on thousands of
    subjects)."""
    import re

    from cryptography.x509.oid import NameOID
    cns = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    pieces = re.split(r"[,/|+=;<>#\s\"\\]+", str(cns[0].value)) if len(cns) == 1 else []
    needle = normalise(max(pieces, key=len)) if pieces else None

    def grants(subject: str | None) -> bool:
        if not subject:
            return False
        if needle and "\\" not in subject and '"' not in subject and \
                needle not in normalise(subject):
            return False
        return grants_certificate(subject, cert)
    return grants


# --------------------------------------------------------------------------- identities


@dataclass(frozen=True)
class Identity:
    """An identity certificate from --ca: where it came from, its subject and validity."""
    path: Path
    cert: x509.Certificate
    # Why its certificate is revoked (one line), when --ca is a test PKI directory whose
    # CRL (govkit.pki.revocation) lists it; None otherwise.
    revoked: str | None = None

    @property
    def rdns(self) -> tuple[Rdn, ...]:
        return certificate_rdns(self.cert)

    @property
    def subject(self) -> str:
        return openssl_rfc2253(self.cert)

    @property
    def not_before(self) -> dt.datetime:
        return self.cert.not_valid_before_utc

    @property
    def not_after(self) -> dt.datetime:
        return self.cert.not_valid_after_utc


def _is_ca(cert: x509.Certificate) -> bool:
    from cryptography import x509
    try:
        return cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    except x509.ExtensionNotFound:
        return False


def load_identities(where: Path) -> list[Identity]:
    """The identity certificates in a directory (its *.pem and *.crt files) or in one PEM
    file; CA certificates are left out (no grant names a CA). GovkitError (exit 2) for an
    unreadable path or a file that holds no certificate."""
    from cryptography import x509

    from govkit.pki.participants import CRL_STEM  # not on lint's path without --ca
    where = Path(where)
    if where.is_dir():
        # not the CRL (identity_ca.crl.pem): no certificate, and far larger than one
        files = sorted(p for p in where.iterdir() if p.suffix in (".pem", ".crt")
                       and p.name != f"{CRL_STEM}.pem")
    elif where.exists():
        files = [where]
    else:
        raise GovkitError(f"{where}: no such file or directory (--ca: identity "
                          "certificates)", EXIT_USAGE)
    identities = []
    for path in files:
        data = read_input(path, MAX_PEM_BYTES, "certificate")
        if b"-----BEGIN CERTIFICATE-----" not in data:
            continue   # a key or something else kept beside the certificates
        try:
            certs = x509.load_pem_x509_certificates(data)
        except ValueError:
            raise GovkitError(f"{path}: not a PEM certificate", EXIT_USAGE) from None
        identities.extend(Identity(path, c) for c in certs if not _is_ca(c))
    return _with_revocations(where, identities) if where.is_dir() else identities


def _with_revocations(where: Path, identities: list[Identity]) -> list[Identity]:
    """The identities, those the directory's CRL revokes marked (a test PKI directory)."""
    from govkit.pki.revocation import current_crl, explain_revocation
    from govkit.pki.testpki import TestPKI
    pki = TestPKI(where)
    if not pki.identity_ca.exists():
        return identities
    crl = current_crl(pki)   # missing or older than the PKI manifest records: refused
    if crl is None:
        return identities
    out = []
    for i in identities:
        r = crl.revocation(i.cert)
        out.append(Identity(i.path, i.cert, explain_revocation(i.path, i.cert, crl, r)) if r else i)
    return out
