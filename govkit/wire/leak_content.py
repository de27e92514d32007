"""What the contents of discovery and handshake samples say, as leak entries: participant
announcements (SPDP) and the handshake's participant data (c.pdata), endpoint
announcements (SEDP), the authentication handshake's messages (DDS Security 1.1 7.4.3,
ParticipantStatelessMessage: tokens of 9.3.2.5.1-9.3.2.5.3 carrying c.id, c.perm, c.pdata,
the algorithms), identity certificates and permissions documents.

Each reader takes a `Sample` (so every entry's evidence is bytes one frame carries) and adds
to a `Leaks`; a structure that stops making sense raises CdrError, which the caller counts
and names (the entries found before it stay).
"""

from __future__ import annotations

import re
import struct

from cryptography import x509

from govkit.common.findings import DocumentError, DocumentKind
from govkit.documents.model import build_model
from govkit.documents.parse import parse_xml
from govkit.wire.cdr import (
    Cdr,
    CdrError,
    Span,
    data_holder,
    data_holders,
    encapsulation,
    parameters,
)
from govkit.wire.leak_entries import Leaks, Sample

# RTPS 2.x 9.6.2.2 (Table 9.12) and DDS Security 1.1 7.4.1 parameter ids
PID_TOPIC_NAME, PID_TYPE_NAME, PID_DOMAIN_ID, PID_VENDORID = 0x0005, 0x0007, 0x000F, 0x0016
PID_PARTITION, PID_USER_DATA, PID_GROUP_DATA, PID_TOPIC_DATA = 0x0029, 0x002C, 0x002D, 0x002E
PID_PARTICIPANT_GUID, PID_PROPERTY_LIST, PID_ENDPOINT_GUID, PID_ENTITY_NAME = \
    0x0050, 0x0059, 0x005A, 0x0062
PID_IDENTITY_TOKEN, PID_PERMISSIONS_TOKEN, PID_ENDPOINT_SECURITY_INFO = 0x1001, 0x1002, 0x1004
PID_PARTICIPANT_SECURITY_INFO, PID_IDENTITY_STATUS_TOKEN = 0x1005, 0x1006
LOCATOR_PIDS = {0x002F: "unicast", 0x0030: "multicast", 0x0031: "default unicast (user data)",
                0x0032: "metatraffic unicast (discovery)",
                0x0033: "metatraffic multicast (discovery)",
                0x0048: "default multicast (user data)"}
LOCATOR_KINDS = {1: "udp", 2: "udp6", 4: "tcp", 8: "tcp6"}
VENDORS = {b"\x01\x01": "RTI Connext DDS", b"\x01\x02": "OpenSplice DDS",
           b"\x01\x03": "OpenDDS", b"\x01\x0f": "eProsima Fast DDS",
           b"\x01\x10": "Eclipse Cyclone DDS", b"\x01\x12": "RustDDS"}
# DDS Security 1.1: ParticipantSecurityAttributesMask and its builtin plugin's mask
PARTICIPANT_BITS = (("RTPS messages", 0, 0, 3), ("discovery", 1, 1, 4),
                    ("liveliness", 2, 2, 5))
# EndpointSecurityAttributesMask; PluginEndpointSecurityAttributesMask (9.4.2.6, Table 62)
ENDPOINT_BITS = (("read access control", 0), ("write access control", 1),
                 ("discovery protection", 2), ("liveliness protection", 3))
TEXT_RUN = re.compile(rb"[\x20-\x7e]{4,}")
MAX_LIST = 12                 # names listed in one entry's text


def vendor_name(vendor: bytes) -> str:
    return VENDORS.get(vendor, f"vendor {vendor[:1].hex()}.{vendor[1:2].hex()}")


def _shown(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def _listed(names: list[str]) -> str:
    if not names:
        return "nothing"
    more = len(names) - MAX_LIST
    return ", ".join(names[:MAX_LIST]) + (f" and {more} more" if more > 0 else "")


def _plist(s: Sample, start: int, end: int, little: bool):
    """The parameters of a ParameterList, with a reader for each value."""
    for p in parameters(s.data, start, end, little):
        yield p.pid, Span(p.offset, p.length), Cdr(s.data, p.offset, p.offset + p.length,
                                                    little)


# ------------------------------------------------------------------ participant data

def participant(s: Sample, leaks: Leaks, start: int, end: int, little: bool, message: str,
                prefix: bytes, vendor: bytes) -> None:
    """A participant's announcement (SPDP, or the handshake's c.pdata)."""
    who = prefix.hex()
    for pid, span, r in _plist(s, start, end, little):
        ev, frames = s.evidence(span), s.frames(span)
        if pid == PID_PARTICIPANT_GUID and span.length >= 12:
            guid = s.data[span.offset:span.offset + 12]
            leaks.add("addressing", "participant", f"participant {guid.hex()}",
                      f"participant {guid.hex()} ({vendor_name(vendor)}) exists: its GUID "
                      f"prefix is announced in {message}", message, s.evidence(Span(
                          span.offset, 12)), frames, "rtps.param.participant_guid")
        elif pid in LOCATOR_PIDS:
            _locator(s, leaks, span, r, LOCATOR_PIDS[pid], who, message)
        elif pid == PID_USER_DATA:
            data = r.sequence_octets("user data")
            text = s.data[data.offset:data.end].decode("utf-8", "backslashreplace")
            leaks.add("participant", "user data", f"{who} user data {text}",
                      f"participant {who}'s user data: {_shown(text)!r}", message,
                      s.evidence(data), frames, "rtps.param.userData")
        elif pid == PID_ENTITY_NAME:
            name, nspan = r.string("the entity name")
            leaks.add("participant", "entity name", f"{who} entity name {name}",
                      f"participant {who} is named {_shown(name)!r}", message,
                      s.evidence(nspan), frames, "rtps.param.entityName")
        elif pid == PID_PROPERTY_LIST:
            _properties(s, leaks, r, who, message, frames)
        elif pid == PID_IDENTITY_TOKEN:
            _token(s, leaks, r, "certificate", who, message, frames)
        elif pid == PID_PERMISSIONS_TOKEN:
            _token(s, leaks, r, "permissions", who, message, frames)
        elif pid == PID_PARTICIPANT_SECURITY_INFO and span.length >= 8:
            attrs, plugin = r.u32(), r.u32()
            said = _participant_security(attrs, plugin)
            leaks.add("governance", "participant security", f"{who} security {said}",
                      f"participant {who} announces its governance: {said}", message, ev,
                      frames)
        elif pid == PID_DOMAIN_ID and span.length >= 4:
            domain = r.u32()
            leaks.add("governance", "domain", f"domain {domain}",
                      f"the participants are on DDS domain {domain} (announced in "
                      f"{message})", message, ev, frames)
        elif pid >= 0x8000:
            _vendor_text(s, leaks, span, pid, vendor, "participant", who, message)


def _locator(s: Sample, leaks: Leaks, span: Span, r: Cdr, what: str, who: str,
             message: str) -> None:
    if span.length < 24:
        raise CdrError(f"a locator of {span.length} bytes at byte {span.offset}")
    kind, port = struct.unpack_from(r.order + "iI", s.data, span.offset)
    raw = s.data[span.offset + 8:span.offset + 24]
    if kind in (1, 4):
        address = ".".join(map(str, raw[12:]))
    elif kind in (2, 8):
        address = "[" + ":".join(raw[i:i + 2].hex() for i in range(0, 16, 2)) + "]"
    else:
        address = raw.hex()
    place = f"{LOCATOR_KINDS.get(kind, f'kind {kind}')} {address}:{port}"
    leaks.add("addressing", "locator", f"locator {place}",
              f"participant {who} is reached at {place} ({what})", message,
              s.evidence(span), s.frames(span), "rtps.locator.port")


def _properties(s: Sample, leaks: Leaks, r: Cdr, who: str, message: str, frames) -> None:
    for _ in range(r.count(8, "a property list")):
        name, _ = r.string("a property's name")
        value, vspan = r.string(f"property {name!r}")
        leaks.add("participant", "property", f"{who} property {name}={value}",
                  f"participant {who}'s property {name} = {_shown(value)!r}", message,
                  s.evidence(vspan), frames, "rtps.property_value")


def _token(s: Sample, leaks: Leaks, r: Cdr, kind: str, who: str, message: str,
           frames) -> None:
    """An IdentityToken (9.3.2.1: dds.cert.sn, dds.ca.sn, ...) or a PermissionsToken
    (9.4.2.2: dds.perm_ca.sn, ...): any property it carries is read by anyone."""
    h = data_holder(r)
    props = [p for p in h.properties if p.value is not None]
    if not props:
        return           # Cyclone DDS 0.10 announces its tokens' class id only
    said = ", ".join(f"{p.name} = {p.value}" for p in props)
    what = "identity" if kind == "certificate" else "permissions"
    leaks.add(kind, f"{what} token", f"{who} {what} token {said}",
              f"participant {who}'s {what} token ({h.class_id}) in clear: {_shown(said, 300)}",
              message, s.evidence(props[0].span), frames)    # (Wireshark 4.0: not decoded)


def _participant_security(attrs: int, plugin: int) -> str:
    if not attrs & 0x80000000:
        return "no valid security attributes"
    said = []
    for name, bit, enc, auth in PARTICIPANT_BITS:
        if not attrs & (1 << bit):
            said.append(f"{name} not protected")
            continue
        how = "encrypted" if plugin & (1 << enc) else "signed"
        said.append(f"{name} {how}" + (" with origin authentication"
                                        if plugin & (1 << auth) else ""))
    return "; ".join(said)


def _vendor_text(s: Sample, leaks: Leaks, span: Span, pid: int, vendor: bytes, kind: str,
                 who: str, message: str) -> None:
    """Printable text in a vendor-specific parameter (Cyclone's 0x8007 says host, version
    and operating system)."""
    for m in TEXT_RUN.finditer(s.data, span.offset, span.end):
        text = m.group().decode("ascii")
        leaks.add(kind, "vendor parameter", f"{who} vendor parameter 0x{pid:04x} {text}",
                  f"{vendor_name(vendor)}'s parameter 0x{pid:04x} of {who} says "
                  f"{_shown(text)!r}", message, s.evidence(Span(m.start(), m.end() - m.start())),
                  s.frames(span))


# -------------------------------------------------------------------- endpoint data

def endpoint(s: Sample, leaks: Leaks, start: int, end: int, little: bool, message: str,
             prefix: bytes, vendor: bytes, role: str) -> tuple[str | None, bytes | None]:
    """An endpoint's announcement (SEDP publication or subscription); its topic's name
    and the endpoint's GUID (to name the topic of the data it sends)."""
    topic = type_name = guid = None
    topic_span = Span(start, 0)
    partitions: list[str] = []
    security: tuple[int, int] | None = None
    security_span = Span(start, 0)
    for pid, span, r in _plist(s, start, end, little):
        if pid == PID_TOPIC_NAME:
            topic, topic_span = r.string("the topic name")
        elif pid == PID_TYPE_NAME:
            type_name, _ = r.string("the type name")
        elif pid == PID_PARTITION:
            for _ in range(r.count(5, "the partitions")):
                partitions.append(r.string("a partition")[0])
        elif pid == PID_ENDPOINT_GUID and span.length >= 16:
            guid = s.data[span.offset:span.offset + 16]
        elif pid == PID_ENDPOINT_SECURITY_INFO and span.length >= 8:
            security, security_span = (r.u32(), r.u32()), span
        elif pid in (PID_USER_DATA, PID_TOPIC_DATA, PID_GROUP_DATA):
            data = r.sequence_octets("endpoint data")
            if data.length:
                text = s.data[data.offset:data.end].decode("utf-8", "backslashreplace")
                what = {PID_USER_DATA: "user", PID_TOPIC_DATA: "topic"}.get(pid, "group")
                leaks.add("participant", f"{what} data", f"{prefix.hex()} endpoint data {text}",
                          f"a {role} of participant {prefix.hex()} carries {what} data "
                          f"{_shown(text)!r}", message, s.evidence(data), s.frames(span))
        elif pid >= 0x8000:
            _vendor_text(s, leaks, span, pid, vendor, "participant", prefix.hex(), message)
    if topic is None:
        return None, guid
    where = f" in partition{'s' if len(partitions) > 1 else ''} {_listed(partitions)}" \
        if partitions else ""
    leaks.add("topic", "topic name", topic,
              f"topic {topic!r} (type {type_name!r}): participant {prefix.hex()} has a "
              f"{role} on it{where}", message, s.evidence(topic_span), s.frames(topic_span),
              "rtps.param.topicName")
    if security is not None:
        said = _endpoint_security(*security)
        leaks.add("governance", "topic security", f"topic {topic}: {said}",
                  f"the governance of topic {topic!r}, as its {role} announces it: {said}",
                  message, s.evidence(security_span), s.frames(security_span))
    return topic, guid


def _endpoint_security(attrs: int, plugin: int) -> str:
    if not attrs & 0x80000000:
        return "no valid security attributes"
    said = [f"{name} {'on' if attrs & (1 << bit) else 'off'}" for name, bit in ENDPOINT_BITS]
    for name, bit, enc in (("submessages", 4, 0), ("payload", 5, 1)):
        said.append(f"{name} " + (("encrypted" if plugin & (1 << enc) else "signed")
                                  if attrs & (1 << bit) else "not protected"))
    if attrs & (1 << 4) and plugin & (1 << 2):
        said.append("submessage origin authentication")
    return "; ".join(said)


# --------------------------------------------------------------------- the handshake

HANDSHAKE = {"+Req": "handshake request", "+Reply": "handshake reply",
             "+Final": "handshake final message", "+AuthReq": "authentication request"}


def stateless(s: Sample, leaks: Leaks, start: int, end: int, little: bool, prefix: bytes,
              vendor: bytes) -> None:
    """A ParticipantStatelessMessage (DDS Security 1.1 7.4.3): a ParticipantGenericMessage
    whose DataHolders are the handshake's tokens (9.3.2.5.1-9.3.2.5.3)."""
    r = Cdr(s.data, start, end, little)
    r.octets(96, "the message's identities and GUIDs")
    r.string("the message class id")
    for h in data_holders(r):
        kind = next((v for k, v in HANDSHAKE.items() if h.class_id.endswith(k)),
                    f"message {h.class_id}")
        message = f"{kind} ({h.class_id})"
        for p in h.properties:
            if p.value is not None:
                continue
            if p.name == "c.id":
                certificate(s, leaks, p.span, f"{message}, c.id", prefix)
            elif p.name == "c.perm":
                permissions(s, leaks, p.span, f"{message}, c.perm", prefix)
            elif p.name == "c.pdata":
                _pdata(s, leaks, p.span, f"{message}, c.pdata", prefix, vendor)
            elif p.name in ("c.dsign_algo", "c.kagree_algo"):
                text = s.data[p.span.offset:p.span.end].rstrip(b"\0").decode(
                    "utf-8", "backslashreplace")
                what = "signs with" if p.name == "c.dsign_algo" else "agrees keys with"
                leaks.add("certificate", "algorithm", f"{prefix.hex()} {p.name} {text}",
                          f"participant {prefix.hex()} {what} {text} ({p.name} in its "
                          f"{kind})", message, s.evidence(p.span), s.frames(p.span))


def _pdata(s: Sample, leaks: Leaks, span: Span, message: str, prefix: bytes,
           vendor: bytes) -> None:
    """c.pdata: the participant's ParticipantBuiltinTopicData, a ParameterList (big-endian
    by 9.3.2.5.1; read with its encapsulation where one is there)."""
    start, end, little = span.offset, span.end, False
    if span.length >= 4 and s.data[start:start + 2] in (b"\0\x02", b"\0\x03"):
        _, little, start = encapsulation(s.data, start, end)
    participant(s, leaks, start, end, little, message, prefix, vendor)


def certificate(s: Sample, leaks: Leaks, span: Span, message: str, prefix: bytes) -> None:
    raw = s.data[span.offset:span.end].rstrip(b"\0")
    try:
        cert = (x509.load_pem_x509_certificate(raw) if raw.lstrip().startswith(b"-----BEGIN")
                else x509.load_der_x509_certificate(raw))
        subject, issuer = cert.subject.rfc4514_string(), cert.issuer.rfc4514_string()
        text = (f"identity certificate of participant {prefix.hex()}: subject {subject}, "
                f"issuer {issuer}, serial {cert.serial_number:x}, valid "
                f"{cert.not_valid_before_utc:%Y-%m-%d %H:%M:%S} to "
                f"{cert.not_valid_after_utc:%Y-%m-%d %H:%M:%S} UTC")
        value = f"certificate {issuer} {cert.serial_number:x}"
    except ValueError as e:
        text = (f"an identity certificate of participant {prefix.hex()} ({len(raw):,} bytes) "
                f"that does not parse: {e}")
        value = f"certificate bytes {raw[:64].hex()}"
    leaks.add("certificate", "certificate", value, text + f", in clear in its {message}", message,
              s.evidence(span), s.frames(span))


GRANT = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?grant[\s>]")
XML_START = re.compile(rb"<\?xml|<(?:[A-Za-z_][\w.-]*:)?dds[\s>]")
XML_END = re.compile(rb"</(?:[A-Za-z_][\w.-]*:)?dds\s*>")


def permissions(s: Sample, leaks: Leaks, span: Span, message: str, prefix: bytes) -> None:
    """c.perm: the permissions document as signed (S/MIME, its XML in clear)."""
    data, a, b = s.data, span.offset, span.end
    grants = [m.start() for m in GRANT.finditer(data, a, b)]
    start = XML_START.search(data, a, b)
    stop = XML_END.search(data, start.start() if start else a, b)
    model = None
    problem = "no XML document in it"
    if start and stop:
        try:
            doc = parse_xml(data[start.start():stop.end()], "c.perm")
            model = build_model(doc.root, DocumentKind.PERMISSIONS)
        except DocumentError as e:
            problem = e.findings[0].message if e.findings else "not readable as XML"
    if model is None or not model.grants:
        at = Span(grants[0], min(b - grants[0], 64)) if grants else span
        leaks.add("permissions", "permissions document",
                  f"permissions document bytes {data[a:a + 64].hex()}",
                  f"participant {prefix.hex()}'s permissions document ({span.length:,} "
                  f"bytes) is in clear in its {message}; govkit could not read its grants: "
                  f"{problem}", message, s.evidence(at), s.frames(span))
        return
    for i, g in enumerate(model.grants):
        at = grants[i] if i < len(grants) else a
        ev = Span(at, min(b - at, 200))
        leaks.add("permissions", "grant", f"grant {g.name} {g.subject.shown()}",
                  f"participant {prefix.hex()}'s permissions, in clear in its {message}: "
                  + _grant_text(g), message, s.evidence(ev), s.frames(ev))


def _grant_text(g) -> str:
    parts = [f"grant {g.name!r} for subject {g.subject.shown()}"]
    if not g.not_before.missing or not g.not_after.missing:
        parts.append(f"valid {g.not_before.shown()} to {g.not_after.shown()}")
    for rule in g.rules:
        for c in rule.criteria:
            topics = [t.shown() for t in c.topics]
            parts.append(f"{rule.verdict} {c.action} {_listed(topics)}"
                         + (f" (partitions {_listed([p.shown() for p in c.partitions])})"
                            if c.partitions else ""))
    parts.append(f"default {g.default.shown()}")
    return "; ".join(parts)
