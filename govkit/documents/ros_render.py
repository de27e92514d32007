"""Render the documents of an sros2 policy: one permissions document per enclave (its
grants exactly as sros2 writes them, govkit.documents.ros_policy) and one governance for the
whole keystore (the protection sidecar's classes, govkit.documents.protection).

Rendering checks nothing: govkit.generate.policy validates every document before it is
written or signed.
"""

from __future__ import annotations

import datetime as dt

from govkit import __version__
from govkit.common.findings import printable, without_surrogates
from govkit.common.templating import get_template
from govkit.common.xmltime import xml_datetime
from govkit.documents import ros_names
from govkit.documents.protection import ProtectedTopic, Protection
from govkit.documents.render import DomainSet
from govkit.documents.ros_policy import Enclave
from govkit.pki.testpki import subject_rfc2253


def comment_safe(text: str) -> str:
    """`text` as it may stand in an XML comment (no '--' inside, no '-' at its end), and in
    XML at all: a file name's undecodable bytes and control characters as escapes (\\xff),
    as the terminal shows them, never a character UTF-8 or XML cannot hold."""
    text = printable(without_surrogates(text))
    while "--" in text:
        text = text.replace("--", "- -")
    return text + " " if text.endswith("-") else text


def _topic_comment(t: ProtectedTopic) -> str:
    said = t.rule.label + (f": {t.name.category} {t.name.fqn}" if t.name else "")
    return comment_safe(said)


def render_governance(protection: Protection, domains: DomainSet, source: str,
                      protection_source: str) -> bytes:
    return get_template("ros_governance.xml.j2").render(
        domain=protection.domain, topic_rules=protection.topic_rules(), domains=domains,
        comment=_topic_comment, source=comment_safe(source),
        protection_source=comment_safe(protection_source), version=__version__).encode()


def render_permissions(enclave: Enclave, cert, domains: DomainSet, source: str,
                       validity: tuple[dt.datetime, dt.datetime] | None = None) -> bytes:
    """The enclave's grant, for the subject of `cert` (exactly as RFC 2253 writes it) and
    no wider than its validity (or `validity`)."""
    not_before, not_after = validity or (cert.not_valid_before_utc, cert.not_valid_after_utc)
    return render_grant(enclave, subject_rfc2253(cert), not_before, not_after, domains,
                        source)


def render_grant(enclave: Enclave, subject: str, not_before: dt.datetime,
                 not_after: dt.datetime, domains: DomainSet, source: str) -> bytes:
    """The enclave's permissions document for `subject` (`explain --policy` renders them
    with the subject sros2 writes, CN=<path>, where no certificate is at hand)."""
    return get_template("ros_permissions.xml.j2").render(
        enclave=enclave, enclave_comment=comment_safe(enclave.path), subject_name=subject,
        not_before=xml_datetime(not_before), not_after=xml_datetime(not_after),
        domains=domains, source=comment_safe(source),
        discovery_topic=ros_names.ROS_DISCOVERY_TOPIC, version=__version__).encode()
