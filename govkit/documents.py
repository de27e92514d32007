"""Render governance (per profile) and permissions (per participant) documents.

Documents come from the Jinja2 templates in templates/ and are validated against the
project's schemas before anything is written: an invalid document is never written.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import jinja2

from . import __version__, schema
from .errors import GovkitError
from .fsutil import write_atomic
from .paths import TEMPLATES_DIR
from .pki import TestPKI, subject_rfc2253
from .profiles import SECURED_PROFILES, Profile

# Cyclone DDS 0.10 accepts domain ids 0..230 only (access_control_parser.c).
MAX_DOMAIN_ID = 230


@dataclass(frozen=True)
class DomainSet:
    """Domain ids as closed ranges; always rendered with an explicit max."""
    ranges: tuple[tuple[int, int], ...] = ((0, MAX_DOMAIN_ID),)

    @classmethod
    def parse(cls, text: str) -> DomainSet:
        """'0', '0-10' or a comma list of those."""
        ranges = []
        for item in text.split(","):
            m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", item)
            if not m:
                raise GovkitError(f"invalid --domain {text!r}: use N, N-M or a comma list")
            lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
            if lo > hi or hi > MAX_DOMAIN_ID:
                raise GovkitError(f"invalid --domain {text!r}: need min <= max <= "
                                  f"{MAX_DOMAIN_ID} (Cyclone DDS rejects higher domain ids)")
            ranges.append((lo, hi))
        return cls(tuple(ranges))

    def __contains__(self, domain_id: int) -> bool:
        return any(lo <= domain_id <= hi for lo, hi in self.ranges)


@dataclass(frozen=True)
class AccessScope:
    """The topics and partitions one benchmark runner's participants use."""
    runner: str
    topics: tuple[str, ...]
    partitions: tuple[str, ...]


# ddsperf's topics for its default KS type; pongs are written to per-ping partitions
# whose names ddsperf makes up at run time, so partitions need "*".
ACCESS_SCOPES = {
    "ddsperf": AccessScope("ddsperf", ("DDSPerfRDataKS", "DDSPerfRPingKS", "DDSPerfRPongKS",
                                       "DDSPerfCPUStats"), ("*",)),
    "perftest": AccessScope("perftest", ("Throughput", "Latency", "Announcement"), ("*",)),
}
# govkit's Fast DDS program speaks ddsperf's topics and partitions (one bundle serves both).
ACCESS_SCOPES["fastdds"] = AccessScope("fastdds", ACCESS_SCOPES["ddsperf"].topics,
                                       ACCESS_SCOPES["ddsperf"].partitions)


def access_scope(runner: str) -> AccessScope:
    try:
        return ACCESS_SCOPES[runner]
    except KeyError:
        raise GovkitError(f"unknown runner {runner!r}; valid: {', '.join(ACCESS_SCOPES)}") \
            from None


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
                              autoescape=jinja2.select_autoescape(["xml.j2"]),
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


def _xml_datetime(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class GovernanceDocument:
    profile: Profile
    domains: DomainSet = DomainSet()

    @property
    def filename(self) -> str:
        return f"{self.profile.name}.xml"

    def render(self) -> bytes:
        if not self.profile.security:
            raise GovkitError(f"profile {self.profile.name!r} loads no security plugins: "
                              f"it has no governance document")
        return _env().get_template("governance.xml.j2").render(
            profile=self.profile, s=self.profile.governance_settings(), domains=self.domains,
            version=__version__).encode()


@dataclass(frozen=True)
class PermissionsDocument:
    participant: str
    subject_name: str
    not_before: str
    not_after: str
    scope: AccessScope
    domains: DomainSet = DomainSet()

    @property
    def filename(self) -> str:
        return f"{self.participant}.xml"

    @classmethod
    def for_participant(cls, pki: TestPKI, participant: str, scope: AccessScope,
                        domains: DomainSet = DomainSet(),
                        validity: tuple[dt.datetime, dt.datetime] | None = None):
        """Subject and validity from the participant's certificate: the subject exactly as
        RFC 2253 (Cyclone does not trim spaces), validity no wider than the certificate's."""
        cert = pki.certificate(participant)
        nb, na = validity or (cert.not_valid_before_utc, cert.not_valid_after_utc)
        return cls(participant, subject_rfc2253(cert), _xml_datetime(nb), _xml_datetime(na),
                   scope, domains)

    def render(self) -> bytes:
        return _env().get_template("permissions.xml.j2").render(
            doc=self, domains=self.domains, version=__version__).encode()


def write_document(doc: GovernanceDocument | PermissionsDocument, path: Path) -> Path:
    """Validate the rendered document, then write it atomically; invalid ones never land."""
    data = doc.render()
    findings = schema.validate_bytes(data, str(path))
    if findings:
        raise GovkitError("generated document is invalid (a govkit bug):\n"
                          + "\n".join(map(str, findings)), exit_code=1)
    write_atomic(path, data)
    return path


def generate(profiles: list[Profile], pki: TestPKI, out_dir: Path,
             domains: DomainSet = DomainSet(), runner: str = "ddsperf") -> list[Path]:
    """governance/<profile>.xml per secured profile, permissions/<participant>.xml per identity."""
    out_dir = Path(out_dir)
    scope = access_scope(runner)
    written = [write_document(GovernanceDocument(p, domains),
                              out_dir / "governance" / f"{p.name}.xml")
               for p in profiles if p.security]
    participants = pki.participants()
    if not participants:
        raise GovkitError(f"{pki.directory}: no participant identities; add some with "
                          f"`govkit pki init {pki.directory} --participant NAME`")
    for name in participants:
        doc = PermissionsDocument.for_participant(pki, name, scope, domains)
        written.append(write_document(doc, out_dir / "permissions" / f"{name}.xml"))
    return written


def render_all_for_tests() -> list[tuple[str, bytes]]:
    """Every governance document and a representative permissions document, in memory."""
    docs = [(f"governance/{p.name}.xml", GovernanceDocument(p).render())
            for p in SECURED_PROFILES]
    docs += [(f"governance/{p.name}-domains.xml",
              GovernanceDocument(p, DomainSet.parse("0,3-7,230")).render())
             for p in SECURED_PROFILES[:1]]
    for runner, scope in ACCESS_SCOPES.items():
        doc = PermissionsDocument("pub", "CN=pub,O=govkit test PKI", "2026-01-01T00:00:00Z",
                                  "2027-01-01T00:00:00Z", scope, DomainSet.parse("0-230"))
        docs.append((f"permissions/{runner}.xml", doc.render()))
    return docs
