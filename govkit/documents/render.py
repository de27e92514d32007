"""Render governance (per profile) and permissions (per participant) documents.

Documents come from the Jinja2 templates in templates/. Rendering checks nothing: whoever
writes a rendered document validates it first (govkit.generate.fleet.write_document), so
an invalid document is never written.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from govkit import __version__
from govkit.catalog.profiles import Profile
from govkit.catalog.runners import RunnerInfo
from govkit.common.errors import GovkitError
from govkit.common.findings import quote_value
from govkit.common.limits import MAX_DOMAIN_ID
from govkit.common.templating import get_template
from govkit.common.xmltime import xml_datetime
from govkit.pki.participants import Grants
from govkit.pki.testpki import TestPKI, subject_rfc2253


@dataclass(frozen=True)
class DomainSet:
    """Domain ids as closed ranges; always rendered with an explicit max."""
    ranges: tuple[tuple[int, int], ...] = ((0, MAX_DOMAIN_ID),)

    @classmethod
    def parse(cls, text: str) -> DomainSet:
        """'0', '0-10' or a comma list of those."""
        shown = quote_value(text)
        ranges = []
        for item in text.split(","):
            bounds = [b.strip() for b in item.split("-")]
            if not 1 <= len(bounds) <= 2 or not all(b.isascii() and b.isdigit() for b in bounds):
                raise GovkitError(f"invalid --domain {shown}: use N, N-M or a comma list")
            # int() of a huge digit string is slow or refused: anything long is too high
            lo, hi = (int(b) if len(b) <= 9 else MAX_DOMAIN_ID + 1 for b in (bounds[0],
                                                                            bounds[-1]))
            if lo > hi or hi > MAX_DOMAIN_ID:
                raise GovkitError(f"invalid --domain {shown}: need min <= max <= "
                                  f"{MAX_DOMAIN_ID} (Cyclone DDS 0.10 rejects higher domain ids)")
            ranges.append((lo, hi))
        return cls(tuple(ranges))

    def __contains__(self, domain_id: int) -> bool:
        return any(lo <= domain_id <= hi for lo, hi in self.ranges)


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
        return get_template("governance.xml.j2").render(
            profile=self.profile, s=self.profile.governance_settings(), domains=self.domains,
            version=__version__).encode()


@dataclass(frozen=True)
class PermissionsDocument:
    participant: str
    subject_name: str
    not_before: str
    not_after: str
    scope: RunnerInfo
    domains: DomainSet = DomainSet()
    grants: Grants | None = None   # None: the runner's topics, to publish and subscribe

    @property
    def filename(self) -> str:
        return f"{self.participant}.xml"

    @property
    def purpose(self) -> str:
        if self.grants is None:
            return f"for the {self.scope.name} benchmark runner: only its topics"
        return "from the participants file: only the topics granted there"

    @property
    def actions(self) -> list[tuple[str, tuple[str, ...]]]:
        """(publish|subscribe, topics) for every action with topics, in document order."""
        if self.grants is None:
            return [("publish", self.scope.topics), ("subscribe", self.scope.topics)]
        return [(a, t) for a, t in (("publish", self.grants.publish),
                                    ("subscribe", self.grants.subscribe)) if t]

    @property
    def partitions(self) -> tuple[str, ...]:
        return self.scope.partitions if self.grants is None else self.grants.partitions

    @classmethod
    def for_participant(cls, pki: TestPKI, participant: str, scope: RunnerInfo,
                        domains: DomainSet = DomainSet(),
                        validity: tuple[dt.datetime, dt.datetime] | None = None,
                        grants: Grants | None = None):
        """Subject and validity from the participant's certificate: the subject exactly as
        RFC 2253 (Cyclone does not trim spaces), validity no wider than the certificate's."""
        return cls.for_certificate(pki.certificate(participant), participant, scope, domains,
                                   validity, grants)

    @classmethod
    def for_certificate(cls, cert, participant: str, scope: RunnerInfo,
                        domains: DomainSet = DomainSet(),
                        validity: tuple[dt.datetime, dt.datetime] | None = None,
                        grants: Grants | None = None):
        return cls.for_subject(participant, subject_rfc2253(cert),
                               xml_datetime(cert.not_valid_before_utc),
                               xml_datetime(cert.not_valid_after_utc), scope, domains,
                               validity, grants)

    @classmethod
    def for_subject(cls, participant: str, subject: str, not_before: str, not_after: str,
                    scope: RunnerInfo, domains: DomainSet = DomainSet(),
                    validity: tuple[dt.datetime, dt.datetime] | None = None,
                    grants: Grants | None = None):
        """`for_certificate` from what the PKI manifest states of the certificate (its
        subject and its validity as xs:dateTimes: govkit.pki.manifest)."""
        if validity is not None:
            not_before, not_after = map(xml_datetime, validity)
        return cls(participant, subject, not_before, not_after, scope, domains, grants)

    def render(self) -> bytes:
        return get_template("permissions.xml.j2").render(
            doc=self, domains=self.domains, version=__version__).encode()
