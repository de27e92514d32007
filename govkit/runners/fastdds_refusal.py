"""Why Fast DDS 2.9 refused a participant, found by govkit's own checks.

Fast DDS 2.9 prints only "Cannot create participant due to initialization error" when its
security plugins refuse a file. So when govkit's Fast DDS program cannot create its
participant, the runner runs these independent checks on exactly the files that process
was given (its security properties file) and names the ones that fail. Each check mirrors
a rule of Fast DDS 2.9.1 (src/cpp/security: PKIDH.cpp, Permissions.cpp, PermissionsParser.cpp,
CommonParser.cpp) and is decided in Python, not by asking Fast DDS.

The file checks (`check_files`) are shared with govkit.runners.cyclone_refusal, which runs
them with Cyclone DDS 0.10's reading of subjects and dates (`vendor="cyclone"`).
"""

from __future__ import annotations

import datetime as dt
import re
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from lxml import etree

from govkit.catalog.targets import TARGETS
from govkit.pki.issued import issued_by
from govkit.pki.names import cyclone_accepts, fastdds_subjects_equal, openssl_rfc2253
from govkit.pki.revocation import Crl, explain_revocation
from govkit.smime.verify import verify_file

# Fast DDS computes a participant's UDP ports as 7400 + 250 × domain + offsets (up to 11 +
# 2 × participant index): above domain 232 they pass 65535 and creation fails. The limit
# has one home, the targets catalog.
FASTDDS_MAX_DOMAIN_ID = TARGETS["fastdds"].max_domain_id

PROPERTY_FILES = {
    "identity_ca": "dds.sec.auth.builtin.PKI-DH.identity_ca",
    "certificate": "dds.sec.auth.builtin.PKI-DH.identity_certificate",
    "private_key": "dds.sec.auth.builtin.PKI-DH.private_key",
    "permissions_ca": "dds.sec.access.builtin.Access-Permissions.permissions_ca",
    "governance": "dds.sec.access.builtin.Access-Permissions.governance",
    "permissions": "dds.sec.access.builtin.Access-Permissions.permissions",
}
# Optional: the Identity CA's CRL (PKIDH.cpp load_crl: a file:// URI only). With it Fast
# DDS verifies its own certificate and every peer's with X509_V_FLAG_CRL_CHECK.
CRL_PROPERTY = "dds.sec.auth.builtin.PKI-DH.identity_crl"
_XML_BODY = re.compile(rb"<dds[\s>].*</dds>", re.S)
_FASTDDS_TIME = re.compile(r"\s*(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})")


def read_properties(path: Path) -> dict[str, str]:
    """name=value lines of a Fast DDS security properties file ('#' starts a comment)."""
    props = {}
    for line in Path(path).read_text().splitlines():
        if line and not line.startswith("#") and "=" in line:
            name, value = line.split("=", 1)
            props[name] = value
    return props


def file_of(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path)) if uri.startswith("file:") else Path(uri)


@dataclass
class _Files:
    paths: dict[str, Path]
    certs: dict[str, x509.Certificate]


def explain(properties: Path | None, domain_id: int, now: dt.datetime | None = None
            ) -> list[str]:
    """Every reason govkit finds why Fast DDS 2.9 would refuse these files on this domain
    (empty: none found)."""
    now = now or dt.datetime.now(dt.UTC)
    reasons = []
    if domain_id > FASTDDS_MAX_DOMAIN_ID:
        reasons.append(f"domain id {domain_id} is above {FASTDDS_MAX_DOMAIN_ID}: Fast DDS's "
                       f"UDP ports (7400 + 250 × domain + …) would pass 65535")
    if properties is None:
        return reasons
    try:
        props = read_properties(properties)
    except OSError as e:
        return [*reasons, f"cannot read {properties}: {e.strerror}"]
    given = {key: props.get(name) for key, name in PROPERTY_FILES.items()}
    crl = props.get(CRL_PROPERTY)
    if crl is not None and not crl.startswith("file://"):
        return [*reasons, f"{CRL_PROPERTY}: {crl!r} is not a file:// URI, the only kind "
                          f"Fast DDS 2.9 reads"]
    return reasons + check_files(given, PROPERTY_FILES, crl, domain_id, now, "fastdds")


def check_files(given: dict[str, str | None], settings: dict[str, str], crl: str | None,
                domain_id: int, now: dt.datetime, vendor: str) -> list[str]:
    """The checks on the six files (and CRL) a participant was given, as `vendor`
    ("fastdds" or "cyclone") reads them: `given` maps each PROPERTY_FILES key to the
    path or URI as written (None: not set), `settings` names where it was set."""
    reasons: list[str] = []
    files = _load(given, settings, reasons)
    if files is None:
        return reasons
    reasons += _certificate_checks(files, now)
    if crl is not None:
        reasons += _crl_checks(crl, files, now)
    for kind in ("governance", "permissions"):
        check = verify_file(files.paths[kind], files.paths["permissions_ca"], now)
        reasons += [f"{kind} {files.paths[kind].name}: {p}" for p in check.problems]
    gov, perm = _document(files.paths["governance"]), _document(files.paths["permissions"])
    if gov is not None and not any(_domain_in(r.find("domains"), domain_id)
                                   for r in gov.iter("domain_rule")):
        reasons.append(f"governance {files.paths['governance'].name}: no domain_rule covers "
                       f"domain {domain_id}")
    if perm is not None:
        reasons += _grant_checks(perm, files, domain_id, now, vendor)
    return reasons


def _load(given: dict[str, str | None], settings: dict[str, str], reasons: list[str]
          ) -> _Files | None:
    paths = {}
    token = (given.get("private_key") or "").startswith("pkcs11:")
    for key, name in settings.items():
        if given.get(key) is None:
            reasons.append(f"{name} is not set")
            continue
        if key == "private_key" and token:
            continue           # a key in a token: OpenSSL's pkcs11 engine, not a file
        paths[key] = file_of(given[key])
        if not paths[key].is_file():
            reasons.append(f"{name}: {paths[key]} does not exist")
    if len(paths) < len(settings) - token or any(not p.is_file() for p in paths.values()):
        return None
    certs = {}
    for key in ("identity_ca", "certificate", "permissions_ca"):
        try:
            certs[key] = x509.load_pem_x509_certificate(paths[key].read_bytes())
        except ValueError:
            reasons.append(f"{paths[key]} is not a PEM certificate")
    return _Files(paths, certs) if len(certs) == 3 else None


def _certificate_checks(files: _Files, now: dt.datetime) -> list[str]:
    reasons = []
    for key, cert in files.certs.items():
        name = files.paths[key].name
        if now < cert.not_valid_before_utc:
            reasons.append(f"{name} is not valid before {_utc(cert.not_valid_before_utc)}")
        if now > cert.not_valid_after_utc:
            reasons.append(f"{name} expired on {_utc(cert.not_valid_after_utc)}")
    cert, ca = files.certs["certificate"], files.certs["identity_ca"]
    if not issued_by(cert, ca):
        reasons.append(f"{files.paths['certificate'].name} is not issued by the identity CA "
                       f"{files.paths['identity_ca'].name} "
                       f"({ca.subject.rfc4514_string()})")
    if "private_key" not in files.paths:
        return reasons      # in a token: Fast DDS itself checks it matches (X509_check_private_key)
    try:
        key = serialization.load_pem_private_key(files.paths["private_key"].read_bytes(), None)
        if key.public_key() != cert.public_key():
            reasons.append(f"{files.paths['private_key'].name} is not the key of "
                           f"{files.paths['certificate'].name}")
    except (ValueError, TypeError):
        reasons.append(f"{files.paths['private_key'].name} is not an unencrypted PEM key")
    return reasons


def _crl_checks(uri: str, files: _Files, now: dt.datetime) -> list[str]:
    """What OpenSSL's CRL check (X509_V_FLAG_CRL_CHECK, the leaf only) refuses (both
    Fast DDS 2.9 and Cyclone DDS 0.10 set it when given a CRL)."""
    path = file_of(uri)
    try:
        crl = x509.load_pem_x509_crl(path.read_bytes())
    except (OSError, ValueError):
        return [f"CRL {path} is not a readable PEM CRL"]
    ca = files.certs["identity_ca"]
    if crl.issuer != ca.subject or not crl.is_signature_valid(ca.public_key()):
        return [f"CRL {path} is not signed by the identity CA {files.paths['identity_ca'].name}"
                f": OpenSSL finds no CRL for it and refuses every certificate"]
    if crl.next_update_utc is not None and now > crl.next_update_utc:
        return [f"CRL {path} expired on {_utc(crl.next_update_utc)} (its next update): "
                f"OpenSSL refuses every certificate with an expired CRL"]
    cert = files.certs["certificate"]
    entry = crl.get_revoked_certificate_by_serial_number(cert.serial_number)
    if entry is None:
        return []
    found = Crl(path, crl)
    return [explain_revocation(files.paths["certificate"], cert, found,
                               found.revocation(cert))]


def _utc(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _document(p7s: Path):
    """The XML root signed inside a .p7s (for reading rules only: `verify` judged the
    signature already), or None if there is none to read."""
    m = _XML_BODY.search(p7s.read_bytes())
    if not m:
        return None
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        root = etree.fromstring(m[0].replace(b"\r\n", b"\n"), parser)
    except etree.XMLSyntaxError:
        return None
    for el in root.iter():          # rules are looked up by local name
        if isinstance(el.tag, str):
            el.tag = etree.QName(el).localname
    return root


def _domain_in(domains, domain_id: int) -> bool:
    """Fast DDS's reading (CommonParser.cpp): an id_range without <max>, or with max 0,
    is its <min> alone."""
    if domains is None:
        return False
    for el in domains:
        if el.tag == "id" and (el.text or "").strip() == str(domain_id):
            return True
        if el.tag == "id_range":
            lo, hi = _number(el.findtext("min")), _number(el.findtext("max"))
            if (hi == 0 and domain_id == lo) or lo <= domain_id <= hi:
                return True
    return False


def _number(text: str | None) -> int:
    text = (text or "").strip()
    return int(text) if text.isdigit() else 0


def fastdds_local_time(text: str) -> dt.datetime | None:
    """The instant Fast DDS 2.9 makes of a permissions date (PermissionsParser.cpp): the
    digits up to the seconds through std::mktime, i.e. in this process's local time zone
    (daylight saving time off), whatever zone the text itself states."""
    m = _FASTDDS_TIME.match(text or "")
    if not m:
        return None
    fields = tuple(int(x) for x in m.groups())
    return dt.datetime.fromtimestamp(time.mktime((*fields, 0, 0, 0)), dt.UTC)


def cyclone_time(text: str) -> dt.datetime | None:
    """The instant Cyclone DDS 0.10 makes of a permissions date (DDS_Security_parse_xml_date,
    src/security/core/src/dds_security_utils.c): the offset the text states, UTC when it
    states none (unlike Fast DDS 2.9); years outside 1970..2262 are invalid there."""
    text = (text or "").strip()
    if len(text) < 19 or text[10] != "T":       # a date and a time, both needed
        return None
    try:
        t = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if not 1970 <= t.year <= 2262:
        return None
    return t if t.tzinfo else t.replace(tzinfo=dt.UTC)


def _grant_checks(root, files: _Files, domain_id: int, now: dt.datetime, vendor: str
                  ) -> list[str]:
    name = files.paths["permissions"].name
    cert = files.certs["certificate"]
    subject = openssl_rfc2253(cert)
    grants = list(root.iter("grant"))
    if vendor == "cyclone":
        mine = [g for g in grants if cyclone_accepts(g.findtext("subject_name") or "", cert)]
        how = ("as Cyclone DDS 0.10 compares them (every NAME=VALUE of the certificate's "
               "subject, byte for byte, nothing trimmed)")
        read, product = cyclone_time, "Cyclone DDS 0.10"
    else:
        mine = [g for g in grants if fastdds_subjects_equal(g.findtext("subject_name") or "",
                                                             subject)]
        how = ("as Fast DDS compares them (RFC 2253 attributes in the certificate's order, "
               "split at ',')")
        read, product = fastdds_local_time, "Fast DDS 2.9"
    if not mine:
        listed = ", ".join(repr(g.findtext("subject_name")) for g in grants) or "none"
        return [f"permissions {name}: no grant's subject_name equals the certificate's "
                f"subject {subject!r} {how}; the grants name {listed}"]
    reasons = []
    for g in mine:
        where = f"permissions {name}, grant {g.get('name')!r}"
        nb = g.findtext("validity/not_before") or ""
        na = g.findtext("validity/not_after") or ""
        start, end = read(nb), read(na)
        if start is None or end is None:
            reasons.append(f"{where}: validity {nb!r} .. {na!r} is not in the form "
                           f"YYYY-MM-DDThh:mm:ss {product} reads")
            continue
        zone = (f"as local time ({time.strftime('%Z') or 'local time'})"
                if vendor == "fastdds" else "in its stated zone (else UTC)")
        if now < start:
            reasons.append(f"{where}: not_before {nb} is read by {product} {zone}, i.e. "
                           f"{_utc(start)}, which is still in the future")
        if now > end:
            reasons.append(f"{where}: not_after {na} is read by {product} {zone}, i.e. "
                           f"{_utc(end)}, which has passed")
        if not any(_domain_in(r.find("domains"), domain_id) for r in g.iter("allow_rule")):
            reasons.append(f"{where}: no allow_rule covers domain {domain_id}")
    return reasons
