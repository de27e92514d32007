"""What a bench point really put on the wire, compared with what its governance promises.

`classify` reads one RTPS message (RTPS 2.x header and submessages; DDS Security 1.1
SRTPS_PREFIX/POSTFIX, SEC_PREFIX/BODY/POSTFIX and CryptoHeader/CryptoFooter; DATA and
DATA_FRAG with their inline QoS and serialized payload) and says, for that message:
- RTPS-level protection: the SRTPS_PREFIX's transformation kind (none, GMAC, GCM), and
  whether its SRTPS_POSTFIX carries receiver-specific MACs (origin authentication), and
  how many (each footer's count, SRTPS_POSTFIX and SEC_POSTFIX alike, is tallied per
  traffic class as `receiver_macs`: footers per count, per footer kind);
- submessage-level protection of its entity submessages (DATA, HEARTBEAT, ACKNACK, ...):
  SEC_PREFIX transformation kind, or "hidden" inside an RTPS-level GCM body;
- the user payload: plaintext CDR, a CryptoHeader (GMAC/GCM), or hidden; and whether it is
  *readable*: plaintext (or only signed) payload, or the runner's filler bytes anywhere.

Traffic is split by destination port with the RTPS well-known port mapping: metatraffic
ports carry discovery and the authentication handshake, user ports carry user data. Every
count is per RTPS message (one UDP datagram). Parsing is linear in the datagram's length,
bounds-checked everywhere, and never raises on malformed input: a malformed message is
counted as such, with the first reason.
"""

from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

from govkit.catalog.profiles import Profile
from govkit.wire.verdict import Expectation, judgement, profile_verdicts

__all__ = ["Expectation", "analyse", "classify", "submessages", "PORTS", "profile_verdicts"]

METHOD = (
    "One extra repeat of every point (same commands, its own domain), run before the "
    "measured rounds and never fed to the statistics, with its traffic captured on the "
    "point's interface: an AF_PACKET socket whose kernel BPF filter passes only IPv4/UDP "
    "datagrams to the domain's RTPS ports (on lo only the incoming copy of each frame), "
    "open only while that repeat's processes run. After they stop, every datagram is "
    "parsed as one RTPS message (RTPS 2.x header and submessages; DDS Security 1.1 "
    "SRTPS_PREFIX/POSTFIX, SEC_PREFIX/BODY/POSTFIX, CryptoHeader transformation kind, "
    "CryptoFooter receiver-specific MACs; DATA/DATA_FRAG inline QoS and serialized "
    "payload) and classified: RTPS-level protection (SRTPS_PREFIX transform: none, GMAC, "
    "GCM), submessage-level protection of its entity submessages (SEC_PREFIX transform, or "
    "hidden inside an RTPS-level GCM body), and the user payload (plaintext CDR, "
    "CryptoHeader GMAC/GCM, or hidden); readable = a plaintext or only-signed user payload, "
    "or 16 of the runner's filler bytes in a row anywhere in the datagram. Discovery and "
    "handshake traffic (metatraffic ports) is counted apart from user traffic (user ports), "
    "by the RTPS well-known port mapping. The expectation comes from the profile's three "
    "protection kinds (SIGN = AES-GMAC, ENCRYPT = AES-GCM, *_WITH_ORIGIN_AUTHENTICATION = "
    "receiver-specific MACs); a point matches when no check is a mismatch; a check hidden "
    "by an outer encryption is 'unobservable', not failed.")
HEADER = 20
PAD, ACKNACK, HEARTBEAT, GAP, INFO_TS = 0x01, 0x06, 0x07, 0x08, 0x09
INFO_SRC, INFO_REPLY_IP4, INFO_DST, INFO_REPLY = 0x0C, 0x0D, 0x0E, 0x0F
NACK_FRAG, HEARTBEAT_FRAG, DATA, DATA_FRAG = 0x12, 0x13, 0x15, 0x16
SEC_BODY, SEC_PREFIX, SEC_POSTFIX, SRTPS_PREFIX, SRTPS_POSTFIX = 0x30, 0x31, 0x32, 0x33, 0x34
VENDOR = 0x80         # and above: vendor-specific submessages (RTPS 2.x 9.4.5.1.1)
NAMES = {PAD: "PAD", ACKNACK: "ACKNACK", HEARTBEAT: "HEARTBEAT", GAP: "GAP",
         INFO_TS: "INFO_TS", INFO_SRC: "INFO_SRC", INFO_REPLY_IP4: "INFO_REPLY_IP4",
         INFO_DST: "INFO_DST", INFO_REPLY: "INFO_REPLY", NACK_FRAG: "NACK_FRAG",
         HEARTBEAT_FRAG: "HEARTBEAT_FRAG", DATA: "DATA", DATA_FRAG: "DATA_FRAG",
         SEC_BODY: "SEC_BODY", SEC_PREFIX: "SEC_PREFIX", SEC_POSTFIX: "SEC_POSTFIX",
         SRTPS_PREFIX: "SRTPS_PREFIX", SRTPS_POSTFIX: "SRTPS_POSTFIX"}
# Submessages sent by or to one endpoint: what submessage protection applies to.
ENTITY = {ACKNACK, HEARTBEAT, GAP, NACK_FRAG, HEARTBEAT_FRAG, DATA, DATA_FRAG}
SECURITY = {SEC_BODY, SEC_PREFIX, SEC_POSTFIX, SRTPS_PREFIX, SRTPS_POSTFIX}
# DDS Security 1.1, 9.5.2.1.1: the last octet of CryptoTransformKind.
TRANSFORMS = {0: "null", 1: "gmac", 2: "gcm", 3: "gmac", 4: "gcm"}
# RTPS 2.x 10.2: CDR, PL_CDR (BE/LE), XML, XCDR2 variants: a plaintext serialized payload.
ENCAPSULATIONS = {0x0000, 0x0001, 0x0002, 0x0003, 0x0004, 0x0006, 0x0007, 0x0008, 0x0009,
                  0x000A, 0x000B}
STATELESS_WRITER = b"\x00\x02\x01\xc3"     # the authentication handshake's writer
FILLER_RUN = 16       # this many filler bytes in a row: the runner's plaintext sample
CRYPTO_HEADER = 20    # transformation kind 4 + key id 4 + session id 4 + IV suffix 8
MAC = 16


@dataclass(frozen=True)
class PortMapping:
    """RTPS 2.x 9.6.1.1 well-known ports (Cyclone's and Connext's defaults)."""
    base: int = 7400
    domain_gain: int = 250
    participant_gain: int = 2
    d0: int = 0      # discovery multicast
    d1: int = 10     # discovery unicast (+ participant_gain * index)
    d2: int = 1      # user multicast
    d3: int = 11     # user unicast

    def ports(self, domain: int) -> range:
        start = self.base + self.domain_gain * domain
        return range(start, start + self.domain_gain)

    def traffic(self, domain: int, port: int) -> str:
        """discovery (metatraffic: discovery and handshake), user, or other."""
        off = port - self.base - self.domain_gain * domain
        for kind, mc, uc in (("discovery", self.d0, self.d1), ("user", self.d2, self.d3)):
            if off == mc or (off >= uc and (off - uc) % self.participant_gain == 0):
                return kind
        return "other"


PORTS = PortMapping()


# ----------------------------------------------------------------------------- parse

class Submessage(NamedTuple):
    id: int
    flags: int
    offset: int      # of the body, in the message
    length: int      # of the body

    @property
    def name(self) -> str:
        return NAMES.get(self.id, f"0x{self.id:02x}")

    @property
    def little(self) -> bool:
        return bool(self.flags & 1)


class Malformed(ValueError):
    """A message that stops making sense; the text says where."""


def submessages(msg: bytes) -> tuple[list[Submessage], str | None]:
    """The submessages of one RTPS message, and why parsing stopped early (or None).
    Each step advances at least 4 bytes: linear in the message's length."""
    if len(msg) < HEADER:
        raise Malformed(f"{len(msg)} bytes: shorter than an RTPS header")
    if msg[:4] != b"RTPS":
        raise Malformed("no RTPS magic")
    if msg[4] != 2:
        raise Malformed(f"RTPS protocol version {msg[4]}.{msg[5]}, not 2.x")
    subs, o, n = [], HEADER, len(msg)
    while o < n:
        if n - o < 4:
            return subs, f"{n - o} stray byte(s) after the last submessage at byte {o}"
        sid, flags = msg[o], msg[o + 1]
        length = int.from_bytes(msg[o + 2:o + 4], "little" if flags & 1 else "big")
        body = o + 4
        if length == 0 and sid not in (PAD, INFO_TS):
            length = n - body             # 9.4.5.1.3: the last one, up to the message's end
        if body + length > n:
            return subs, (f"{NAMES.get(sid, hex(sid))} at byte {o} claims {length} bytes, "
                          f"only {n - body} left (truncated)")
        subs.append(Submessage(sid, flags, body, length))
        o = body + length
    return subs, None


def _u16(msg: bytes, at: int, little: bool) -> int:
    return int.from_bytes(msg[at:at + 2], "little" if little else "big")


def _u32(msg: bytes, at: int, little: bool) -> int:
    return int.from_bytes(msg[at:at + 4], "little" if little else "big")


def transform(msg: bytes, s: Submessage) -> str:
    """A SEC_PREFIX/SRTPS_PREFIX's CryptoHeader: null, gmac, gcm (or unknown)."""
    if s.length < CRYPTO_HEADER:
        raise Malformed(f"{s.name} holds {s.length} bytes, a CryptoHeader needs {CRYPTO_HEADER}")
    kind = msg[s.offset:s.offset + 4]
    return TRANSFORMS.get(kind[3], "unknown") if kind[:3] == b"\0\0\0" else "unknown"


def receiver_macs(msg: bytes, s: Submessage) -> int:
    """How many receiver-specific MACs a CryptoFooter carries (origin authentication)."""
    if s.length < MAC + 4:
        raise Malformed(f"{s.name} holds {s.length} bytes, a CryptoFooter needs {MAC + 4}")
    for little in (False, True):      # Cyclone writes it big-endian; accept either
        count = _u32(msg, s.offset + MAC, little)
        if MAC + 4 + count * (4 + MAC) == s.length:
            return count
    raise Malformed(f"{s.name}: receiver-specific MAC count does not fit its {s.length} bytes")


def protected_end(subs: list[Submessage]) -> int:
    """Where an RTPS-protected message's protected part ends: after its SRTPS_POSTFIX,
    before any vendor-specific submessages (ids 0x80-0xff, RTPS 2.x 9.4.5.1.1) appended
    after it. Fast DDS 2.9 (Debian's build, with statistics) appends its statistics
    submessage (0x80) to every message it sends, after the SRTPS_POSTFIX and so outside
    the protection; Cyclone DDS 0.10 appends nothing."""
    end = len(subs)
    while end > 1 and subs[end - 1].id >= VENDOR:
        end -= 1
    return end


def _writer_id(msg: bytes, s: Submessage) -> bytes:
    """The writer's EntityId (DATA*: after extraFlags/octetsToInlineQos and readerId;
    the others: after readerId)."""
    at = 8 if s.id in (DATA, DATA_FRAG) else 4
    if s.length < at + 4:
        raise Malformed(f"{s.name} of {s.length} bytes has no writerId")
    return msg[s.offset + at:s.offset + at + 4]


def payload_kind(msg: bytes, s: Submessage) -> str:
    """The serialized payload of a DATA/DATA_FRAG: plain, gmac, gcm, null, unknown, or
    absent (no payload, or a later fragment whose first bytes are elsewhere)."""
    q = payload_offset(msg, s)
    if q is None:
        return "absent"
    if isinstance(q, str):
        return q
    if s.offset + s.length - q < 4:
        return "unknown"
    if msg[q:q + 3] == b"\0\0\0" and msg[q + 3] in TRANSFORMS:   # a CryptoHeader
        return TRANSFORMS[msg[q + 3]]
    return "plain" if int.from_bytes(msg[q:q + 2], "big") in ENCAPSULATIONS else "unknown"


def payload_offset(msg: bytes, s: Submessage) -> int | str | None:
    """Where a DATA/DATA_FRAG's serialized payload starts in the message (after its inline
    QoS), None when it carries none (or a later fragment), "unknown" for a non-standard
    payload; a CryptoHeader's transformation kind is then the 4 bytes there."""
    frag = s.id == DATA_FRAG
    fixed = 32 if frag else 20
    if s.length < fixed:
        raise Malformed(f"{s.name} of {s.length} bytes (at least {fixed})")
    end = s.offset + s.length
    if frag:
        present, first = True, _u32(msg, s.offset + 20, s.little) == 1
        inline_qos = s.flags & 0x02
    else:
        present, first = bool(s.flags & 0x0C), True            # D or K
        inline_qos = s.flags & 0x02
        if s.flags & 0x10:                                     # N: non-standard payload
            return "unknown"
    q = s.offset + 4 + _u16(msg, s.offset + 2, s.little)       # octetsToInlineQos
    if q > end:
        raise Malformed(f"{s.name}: octetsToInlineQos points past the submessage")
    if inline_qos:
        while True:                                            # ParameterList to SENTINEL
            if q + 4 > end:
                raise Malformed(f"{s.name}: inline QoS runs past the submessage")
            pid, plen = _u16(msg, q, s.little), _u16(msg, q + 2, s.little)
            q += 4
            if pid == 0x0001:
                break
            q += plen
    if not present or not first:
        return None
    return q


# -------------------------------------------------------------------------- classify

@dataclass
class Message:
    """One RTPS message's protection, as seen by an observer on the wire."""
    rtps: str = "none"             # none | gmac | gcm | null | unknown
    rtps_origin: bool | None = None
    submessage: str = "absent"     # of entity submessages: none | gmac | gcm | ... | hidden
    submessage_origin: str = "absent"     # yes | no | mixed | absent (SEC_POSTFIX MACs)
    payload: str = "absent"        # of user payloads: plain | gmac | gcm | ... | hidden
    readable: bool = False         # user payload readable (plaintext / signed / filler)
    filler: bool = False           # the runner's filler bytes seen in the clear
    secured: bool = False          # any DDS Security submessage at all
    handshake: bool = False        # carries the authentication handshake
    kinds: set[str] = field(default_factory=set)   # submessage names present
    # (SRTPS_POSTFIX or SEC_POSTFIX, its receiver-specific MAC count), one per footer read
    macs: list[tuple[str, int]] = field(default_factory=list)
    error: str | None = None


def _one(values: set[str]) -> str:
    return "absent" if not values else next(iter(values)) if len(values) == 1 else "mixed"


def classify(msg: bytes, filler: bytes | None = None) -> Message:
    """Classify one RTPS message (UDP payload). Never raises."""
    m = Message()
    if filler:
        m.filler = filler * FILLER_RUN in msg
    try:
        subs, m.error = submessages(msg)
        ids = {s.id for s in subs}
        m.kinds = {NAMES.get(i, f"0x{i:02x}") for i in ids}
        m.secured = not ids.isdisjoint(SECURITY)
        inner, unclosed = subs, False
        if subs and subs[0].id == SRTPS_PREFIX:
            m.rtps = "unknown"                  # until its CryptoHeader says otherwise
            m.rtps = transform(msg, subs[0])
            end = protected_end(subs)
            inner = subs[1:end]
            if end > 1 and subs[end - 1].id == SRTPS_POSTFIX:
                count = receiver_macs(msg, subs[end - 1])
                m.macs.append(("SRTPS_POSTFIX", count))
                m.rtps_origin = count > 0
                inner = subs[1:end - 1]
            else:
                unclosed = True
            if len(inner) == 1 and inner[0].id == SEC_BODY:       # the whole message
                m.submessage = m.payload = "hidden"
                inner = []
        _walk(msg, inner, m)
        if unclosed:
            raise Malformed("SRTPS_PREFIX without SRTPS_POSTFIX")
    except Malformed as e:
        m.error = m.error or str(e)
    except (IndexError, ValueError, struct.error) as e:   # a bounds check missed: still no crash
        m.error = m.error or f"unparseable: {type(e).__name__}"
    m.readable = m.readable or m.filler
    return m


def _walk(msg: bytes, subs: list[Submessage], m: Message) -> None:
    """Submessage protection and payloads of the visible submessages."""
    protection, payloads, origin = set(), set(), set()
    if m.submessage == "hidden":
        protection.add("hidden")
    if m.payload == "hidden":
        payloads.add("hidden")
    open_prefix: str | None = None
    for s in subs:
        if s.id == SEC_PREFIX:
            if open_prefix is not None:
                raise Malformed("SEC_PREFIX before the previous one's SEC_POSTFIX")
            open_prefix = transform(msg, s)
        elif s.id == SEC_POSTFIX:
            if open_prefix is None:
                raise Malformed("SEC_POSTFIX without SEC_PREFIX")
            count = receiver_macs(msg, s)
            m.macs.append(("SEC_POSTFIX", count))
            origin.add("yes" if count else "no")
            open_prefix = None
        elif s.id == SEC_BODY:
            if open_prefix is None:
                raise Malformed("SEC_BODY without SEC_PREFIX")
            protection.add(open_prefix)
            payloads.add("hidden")
        elif s.id in (SRTPS_PREFIX, SRTPS_POSTFIX):
            raise Malformed(f"{s.name} inside the message (only first/last are allowed)")
        elif s.id in ENTITY:
            protection.add(open_prefix or "none")
            writer = _writer_id(msg, s)
            m.handshake = m.handshake or writer == STATELESS_WRITER
            if s.id in (DATA, DATA_FRAG) and writer[3] & 0xC0 != 0xC0:   # a user writer
                kind = payload_kind(msg, s)
                if kind != "absent":
                    payloads.add(kind)
                    m.readable = m.readable or kind in ("plain", "gmac", "null")
    if open_prefix is not None:
        raise Malformed("SEC_PREFIX without SEC_POSTFIX")
    m.submessage, m.payload, m.submessage_origin = _one(protection), _one(payloads), _one(origin)


# ---------------------------------------------------------------------------- tally

def _empty() -> dict:
    return {"messages": 0, "bytes": 0, "rtps": Counter(), "rtps_origin_auth": Counter(),
            "submessage": Counter(), "submessage_origin_auth": Counter(),
            "payload": Counter(), "readable": 0, "filler": 0, "secured": 0, "handshake": 0,
            "malformed": 0, "submessages": Counter(), "errors": Counter(),
            "receiver_macs": {}}


def tally(datagrams, domain: int, filler: bytes | None, stop_ns: int | None = None,
          mapping: PortMapping = PORTS) -> dict:
    """Counts per traffic class over (time_ns, port, payload, fragmented) datagrams: user,
    discovery (and other) while the point ran; shutdown: everything from the moment govkit
    stopped its processes (`stop_ns`) on. Non-RTPS and IP-fragmented datagrams apart."""
    out: dict = {"non_rtps": 0, "ip_fragmented": 0}
    for t, port, payload, fragmented in datagrams:
        if fragmented:
            out["ip_fragmented"] += 1
            continue
        if payload[:4] != b"RTPS":
            out["non_rtps"] += 1        # e.g. Cyclone's 1-byte wake-up datagrams
            continue
        t = out.setdefault("shutdown" if stop_ns is not None and t >= stop_ns
                           else mapping.traffic(domain, port), _empty())
        m = classify(payload, filler)
        t["messages"] += 1
        t["bytes"] += len(payload)
        t["rtps"][m.rtps] += 1
        if m.rtps_origin is not None:
            t["rtps_origin_auth"]["yes" if m.rtps_origin else "no"] += 1
        t["submessage"][m.submessage] += 1
        t["submessage_origin_auth"][m.submessage_origin] += 1
        t["payload"][m.payload] += 1
        t["submessages"].update(m.kinds)
        for kind, count in m.macs:     # footers per receiver-specific MAC count, per kind
            per = t["receiver_macs"].setdefault(kind, {})
            per[str(count)] = per.get(str(count), 0) + 1
        for key in ("readable", "filler", "secured", "handshake"):
            t[key] += getattr(m, key)
        if m.error:
            t["malformed"] += 1
            t["errors"][m.error] += 1
    for t in out.values():
        if isinstance(t, dict):
            for k, v in t.items():
                if isinstance(v, Counter):
                    t[k] = dict(v.most_common(20 if k == "errors" else None))
    for name in ("user", "discovery", "shutdown"):
        out.setdefault(name, _empty())
    return out


def analyse(datagrams, domain: int, expect: Expectation, filler: bytes | None,
            stop_ns: int | None = None, lost: int = 0, others: int = 0,
            attributed: bool = True, mapping: PortMapping = PORTS) -> dict:
    """Observed counts, every check against the expectation, the verdict and a headline.
    `lost`: frames the capture saw go by but could not keep (kernel drops, memory cap);
    `others`: frames on the domain's ports sent by other processes, left out; `attributed`:
    whether the point's own senders were known (else every frame was taken as its own)."""
    observed = tally(datagrams, domain, filler, stop_ns, mapping)
    observed.update(not_captured=lost, other_senders=others, attributed=attributed)
    judged = judgement(expect, observed)
    return {"expected": judged["expected"], "observed": observed, **judged}


def expectation(profile: Profile) -> Expectation:
    return Expectation.of(profile)
