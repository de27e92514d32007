"""Why Cyclone DDS 0.10 refused a participant: its own log line, mapped to a file, a rule
and a fix, with govkit's own checks of the files the process was given.

Unlike Fast DDS 2.9, Cyclone's security plugins say what they refused (ddsperf and
cyclone_perf print it on stderr when the participant cannot be created), but not always
which file: "PKCS7_signatureVerify:digest failure" may be the governance or the
permissions, and "certificate verify error" while validating local permissions may be
either document's signer. So govkit reads the configuration the process was given
(CYCLONEDDS_URI, written from templates/cyclonedds.xml.j2), runs the checks it shares with
Fast DDS (govkit.runners.fastdds_refusal.check_files, with Cyclone's readings of subjects
and dates) on those files, and names the file the log line is about. The log lines are
those of Cyclone DDS 0.10.2 (src/security/builtin_plugins/authentication/src/auth_utils.c,
authentication.c, access_control/src/access_control.c, access_control_utils.c,
access_control_objects.c) and OpenSSL's verify errors they quote.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from govkit.runners.fastdds_refusal import check_files, file_of
from govkit.runners.security_events import cyclone_logged

# Where each file is set in govkit's Cyclone configuration (Domain/Security/...).
CONFIG_FILES = {
    "identity_ca": "Authentication/IdentityCA",
    "certificate": "Authentication/IdentityCertificate",
    "private_key": "Authentication/PrivateKey",
    "permissions_ca": "AccessControl/PermissionsCA",
    "governance": "AccessControl/Governance",
    "permissions": "AccessControl/Permissions",
}
CRL_ELEMENT = "Authentication/CRL"
MAX_CONFIG_BYTES = 1 << 20


@dataclass(frozen=True)
class Refusal:
    pattern: re.Pattern
    file: str                 # a CONFIG_FILES key: the file the line is about
    rule: str
    fix: str
    # which of govkit's own findings are about this refusal (they name the file exactly)
    finding: re.Pattern | None = None


_RESIGN = "re-sign it with `govkit sign` against the Permissions CA this participant trusts"
_NEW_CERT = ("issue the participant a new certificate (`govkit pki renew`; a new key too if "
             "it was compromised) and rebuild the bundle")
# The most specific first: the first line that matches one of them explains the refusal.
REFUSALS = (
    Refusal(re.compile(r"certificate revoked"), "certificate",
            "its serial number is on the Identity CA's CRL (Authentication/CRL)", _NEW_CERT,
            re.compile(r"revoked")),
    Refusal(re.compile(r"Certificate expired|certificate has expired"), "certificate",
            "the identity certificate's validity has ended", _NEW_CERT,
            re.compile(r"expired on")),
    Refusal(re.compile(r"certificate is not yet valid"), "certificate",
            "the identity certificate is not valid yet", "wait, or fix the clock",
            re.compile(r"not valid before")),
    Refusal(re.compile(r"unable to get certificate CRL|CRL has expired|CRL is not yet valid"),
            "identity_ca", "the CRL given is not a current one signed by the Identity CA",
            "give a current CRL issued by the Identity CA (`govkit pki revoke` writes one)",
            re.compile(r"^CRL ")),
    Refusal(re.compile(r"Certificate authentication algorithm unknown"), "certificate",
            "Cyclone DDS 0.10 accepts RSA-2048 and EC P-256 identity keys only",
            "use `govkit pki init --key-type ec-p256` (or rsa-2048)"),
    Refusal(re.compile(r"Failed to parse private key"), "private_key",
            "not an unencrypted PEM key", "give the certificate's own key, unencrypted PEM"),
    Refusal(re.compile(r"Certificate not valid: error: .*"
                       r"(unable to get local issuer|certificate signature failure)"),
            "certificate", "not issued by the Identity CA this participant trusts",
            "give a certificate issued by the CA in Authentication/IdentityCA, or that CA",
            re.compile(r"not issued by")),
    Refusal(re.compile(r"Subject name is invalid"), "permissions",
            "no grant's subject_name equals the identity certificate's subject",
            "regenerate the permissions for this certificate (`govkit generate`), then "
            "`govkit sign`", re.compile(r"subject")),
    Refusal(re.compile(r"Permissions validity period expired"), "permissions",
            "the grant's validity (not_after) has passed",
            "regenerate the permissions with a validity that covers now, then `govkit sign`",
            re.compile(r"not_after")),
    Refusal(re.compile(r"Permissions validity period has not started"), "permissions",
            "the grant's validity (not_before) is in the future",
            "regenerate the permissions with a validity that covers now, then `govkit sign`",
            re.compile(r"not_before")),
    Refusal(re.compile(r"Could not find domain \d+ in governance"), "governance",
            "no domain_rule covers the participant's domain (an id_range without <max> is "
            "its <min> alone in Cyclone DDS 0.10)",
            "add the domain to a domain_rule (with an explicit <max>), then `govkit sign`",
            re.compile(r"no domain_rule")),
    Refusal(re.compile(r"Could not find valid grant"), "permissions",
            "no allow_rule of the certificate's grant covers the participant's domain",
            "add the domain to the grant's allow_rule, then `govkit sign`",
            re.compile(r"no allow_rule")),
    # Both documents are verified against the Permissions CA while validating the local
    # permissions: govkit's own check says which one failed.
    Refusal(re.compile(r"digest failure|signature failure|certificate verify error|"
                       r"Governance document is invalid|Permissions document is invalid|"
                       r"Can not parse (governance|permissions)"),
            "permissions", "its S/MIME signature does not verify against the Permissions CA "
            "(altered after signing, or signed by another CA)", _RESIGN,
            # a finding on the document itself (its signature), not on its rules
            re.compile(r"^(governance|permissions) [^,:]+: (?!no domain_rule|no grant's)")),
)
# Cyclone's log prefix (time, thread id, thread name): not part of the reason.
_PREFIX = re.compile(r"^\d+\.\d+ \[\d+\]\s+[^:]*: ")
# Lines about a remote participant (authentication handshake, remote permissions).
_PEER = re.compile(r"handshake|remote", re.I)
_SUBJECT = re.compile(r"subject: ([^(;]+)")
_KIND = re.compile(r"^(governance|permissions) ([^:]+):")


def read_config(path: Path) -> tuple[dict[str, str | None], str | None]:
    """The security files a Cyclone configuration names (as written: file: URIs), and its
    CRL (None: none). Size-capped, regular files only, no entities or network."""
    path = Path(path)
    if not path.is_file() or path.stat().st_size > MAX_CONFIG_BYTES:
        raise OSError(f"{path} is not a regular file of at most {MAX_CONFIG_BYTES} bytes")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    root = etree.fromstring(path.read_bytes(), parser)
    for el in root.iter():
        if isinstance(el.tag, str):
            el.tag = etree.QName(el).localname
    security = root.find("Domain/Security")
    if security is None:
        return {}, None

    def text(where: str) -> str | None:
        value = security.findtext(where)
        return value.strip() if value is not None else None

    return {key: text(where) for key, where in CONFIG_FILES.items()}, text(CRL_ELEMENT)


def config_of(env: dict[str, str]) -> Path | None:
    uri = env.get("CYCLONEDDS_URI", "")
    return file_of(uri) if uri.startswith(("file:", "/")) else None


def cyclone_line(text: str) -> tuple[str, Refusal] | None:
    """Cyclone's own line that says why (the first known one), and what it means."""
    for refusal in REFUSALS:
        for line in text.splitlines():
            if refusal.pattern.search(line):
                return _PREFIX.sub("", line.strip())[:300], refusal
    return None


def explain_cyclone_refusal(env: dict[str, str], output: str, domain_id: int,
            now: dt.datetime | None = None) -> str:
    """One line: which file, which rule, the fix ("" when the process was no Cyclone one,
    or Cyclone said nothing govkit knows and govkit's own checks find nothing)."""
    now = now or dt.datetime.now(dt.UTC)
    config = config_of(env)
    if config is None:
        return ""
    findings: list[str] = []
    given: dict[str, str | None] = {}
    try:
        given, crl = read_config(config)
    except (OSError, etree.XMLSyntaxError) as e:
        return f"cannot read its Cyclone configuration {config}: {e}"
    if given:
        findings = check_files(given, CONFIG_FILES, crl, domain_id, now, "cyclone")
    # its stderr, else its warning log on this domain (govkit.runners.security_events)
    said = cyclone_line(output) or cyclone_line(cyclone_logged(config, domain_id))
    if said is None:
        if not findings:
            return ""
        return (f"Cyclone DDS gave no reason govkit knows; govkit's own checks of the files "
                f"in {config}: " + "; ".join(findings))
    line, refusal = said
    if _PEER.search(line):
        # Refused during a handshake: the remote participant's credentials, not this
        # process's files (e.g. a peer whose certificate is on this side's CRL).
        subject = _SUBJECT.search(line)
        who = f" (subject {subject[1]})" if subject else ""
        return (f"Cyclone DDS says {line!r}: the peer's {refusal.file.replace('_', ' ')}"
                f"{who}: {refusal.rule}; fix (on the peer's side): {refusal.fix}")
    mine = [f for f in findings if refusal.finding and refusal.finding.search(f)]
    path = _named(mine, given) or (file_of(given[refusal.file]) if given.get(refusal.file)
                                   else None)
    where = f"{path}" if path else CONFIG_FILES[refusal.file]
    detail = f" (govkit finds: {'; '.join(mine)})" if mine else ""
    return (f"Cyclone DDS says {line!r}: {where}: {refusal.rule}{detail}; fix: "
            f"{refusal.fix}")


def _named(findings: list[str], given: dict[str, str | None]) -> Path | None:
    """The file govkit's own finding is about (governance/permissions: by kind)."""
    for f in findings:
        m = _KIND.match(f)
        if m and given.get(m[1]):
            return file_of(given[m[1]])
    return None

