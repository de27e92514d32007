"""What a passive reader learns from a captured point (`govkit wire-check --leaks`, `bench
--wire --leaks`): every RTPS message the point's processes sent, read as an eavesdropper
reads it, turned into leak entries (govkit.wire.leak_entries) per kind.

`Eavesdropper` reads one message at a time, in capture order: the RTPS header (vendor and
GUID prefix, in clear whatever the protection), RTPS-level protection (an SRTPS_PREFIX
whose CryptoHeader says GCM hides everything up to the SRTPS_POSTFIX; GMAC hides nothing),
submessage protection (SEC_PREFIX ... SEC_POSTFIX), and every DATA / DATA_FRAG it can
still see: the builtin writers' samples (reassembled from their fragments) are read by
govkit.wire.leak_content (SPDP, SEDP, the handshake); a user writer's payload in clear is
itself a leak. Messages that carry no protection at all are counted by what they are
(`unprotected`), before and after the first protected message; sizes, timing and the
numbers of participants and endpoints are what shows whatever the profile (`traffic`).

Untrusted input, linear time: each message is walked once (govkit.wire.rtps.submessages
advances at least 4 bytes a step, govkit.wire.cdr bounds every read); reassembly keeps only the
fragments that came (never a buffer of the size a sample claims), at most MAX_SAMPLE bytes
per sample, MAX_PARTIAL samples and MAX_PENDING bytes in all (the oldest sample is dropped,
and counted, beyond); a malformed message or sample is counted with its first
reason and never stops the walk.
"""

from __future__ import annotations

import struct
from collections import Counter, OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from govkit.catalog.measures import MODES
from govkit.catalog.profiles import PROFILES
from govkit.wire.cdr import CdrError, Span, encapsulation, parameter_list_end, parameters
from govkit.wire.leak_content import (
    PID_TOPIC_NAME,
    endpoint,
    participant,
    stateless,
    vendor_name,
)
from govkit.wire.leak_entries import KINDS, Leaks, Sample
from govkit.wire.pcapfile import Datagram, datagrams, read_pcap
from govkit.wire.rtps import (
    DATA,
    DATA_FRAG,
    ENTITY,
    INFO_SRC,
    PORTS,
    SEC_BODY,
    SEC_POSTFIX,
    SEC_PREFIX,
    SRTPS_POSTFIX,
    SRTPS_PREFIX,
    TRANSFORMS,
    VENDOR,
    Malformed,
    PortMapping,
    protected_end,
    submessages,
    transform,
)

LEAK_METHOD = (
    "Every RTPS message the point's processes sent (the capture's own frames) is read as a "
    "passive eavesdropper reads it: the RTPS header; RTPS-level protection (an "
    "SRTPS_PREFIX with an AES-GCM transform hides everything up to its SRTPS_POSTFIX, "
    "AES-GMAC hides nothing); submessage protection (SEC_PREFIX/SEC_BODY/SEC_POSTFIX); and "
    "every DATA/DATA_FRAG still visible: builtin writers' samples (reassembled from their "
    "fragments) as parameter lists (SPDP, SEDP) or CDR (the authentication handshake's "
    "ParticipantStatelessMessage and its DataHolders: c.id, c.perm, c.pdata, the "
    "algorithms; certificates read as X.509, permissions as XML), user writers' payloads "
    "in clear. Each entry's evidence is bytes exactly as one frame carries them; frame "
    "numbers are the pcap's, 1-based, as tshark numbers them.")
MAX_SAMPLE = 1 << 20          # a handshake message is ~10 KB; a discovery sample less
MAX_PENDING = 16 << 20        # bytes of all samples being reassembled at once
MAX_PARTIAL = 4096            # samples being reassembled at once
SAMPLE_COST, PIECE_COST = 512, 64   # bytes charged per sample, per fragment (besides its own)
MAX_SEEN = 1 << 17            # participants and endpoints counted exactly up to this
EVIDENCE_HEADER = 24          # bytes shown of a message or submessage as evidence

SPDP, SPDP_SECURE = 0x000100C2, 0xFF0101C2
SEDP_PUBLICATIONS, SEDP_SUBSCRIPTIONS = 0x000003C2, 0x000004C2
SEDP_PUBLICATIONS_SECURE, SEDP_SUBSCRIPTIONS_SECURE = 0xFF0003C2, 0xFF0004C2
STATELESS, VOLATILE = 0x000201C3, 0xFF0202C3
LIVELINESS, LIVELINESS_SECURE = 0x000200C2, 0xFF0200C2
WRITERS = {SPDP: "spdp", SPDP_SECURE: "spdp", SEDP_PUBLICATIONS: "sedp",
           SEDP_SUBSCRIPTIONS: "sedp", SEDP_PUBLICATIONS_SECURE: "sedp",
           SEDP_SUBSCRIPTIONS_SECURE: "sedp", STATELESS: "handshake", VOLATILE: "volatile",
           LIVELINESS: "liveliness", LIVELINESS_SECURE: "liveliness"}
# What a message in clear is, by the most telling writer it carries (first wins)
CATEGORIES = {
    "volatile": "crypto key exchange messages (ParticipantVolatileMessageSecure: key "
                "material)",
    "handshake": "authentication handshake messages (ParticipantStatelessMessage, DDS "
                 "Security 1.1 7.4.3: never protected)",
    "sedp": "endpoint discovery messages (SEDP: topic and type names, QoS)",
    "spdp": "participant announcements (SPDP: never protected by DDS Security 1.1)",
    "user": "user data messages",
    "liveliness": "liveliness messages",
    "control": "heartbeats, acknowledgements and other control messages",
}


@dataclass
class _Pending:
    """A sample being reassembled: only the fragments that came (sparse), never a buffer of
    the size it claims."""
    size: int
    fragment: int
    total: int                                  # fragments it is made of
    got: dict[int, tuple[bytes, int]] = field(default_factory=dict)   # number: bytes, frame
    held: int = SAMPLE_COST


class Reassembly:
    """DATA_FRAG fragments of builtin writers' samples, by (writer GUID, sequence number).

    Work and memory follow the bytes received, never the sizes claimed: a sample keeps the
    fragments that came, and is joined once, when the last one comes. Each sample is charged
    SAMPLE_COST and each fragment its bytes plus PIECE_COST; past MAX_PENDING charged bytes or
    MAX_PARTIAL samples the oldest is dropped (and counted). Before 2026-12-07 each new
    sample allocated and zeroed the size it claimed (and a set of its fragment numbers):
    100,000 DATA_FRAGs each opening a 1 MiB sample took ~93 s."""

    def __init__(self):
        self.pending: OrderedDict[tuple, _Pending] = OrderedDict()   # oldest first
        self.held = 0
        self.dropped = 0

    def _drop(self, key: tuple) -> None:
        self.held -= self.pending.pop(key).held
        self.dropped += 1

    def add(self, key: tuple, size: int, fragment: int, first: int, count: int,
            data: bytes, frame: int) -> Sample | None:
        if not 0 < size <= MAX_SAMPLE or fragment == 0 or first == 0:
            raise Malformed(f"DATA_FRAG of a {size:,}-byte sample in {fragment}-byte "
                            f"fragments from fragment {first}: not reassembled")
        total = -(-size // fragment)
        p = self.pending.get(key)
        if p is not None and (p.size != size or p.fragment != fragment):
            self._drop(key)                      # the same key, another shape: start over
            p = None
        if p is None:
            while len(self.pending) >= MAX_PARTIAL:
                self._drop(next(iter(self.pending)))
            p = self.pending[key] = _Pending(size, fragment, total)
            self.held += p.held
        at = 0
        # at most one step per byte of `data` (a fragment is at least one byte)
        for n in range(first, min(first + count, total + 1)):
            length = min(fragment, size - (n - 1) * fragment)
            if at + length > len(data):
                break                      # the submessage holds less than it says
            if n not in p.got:
                p.got[n] = (data[at:at + length], frame)
                p.held += length + PIECE_COST
                self.held += length + PIECE_COST
            at += length
        while self.held > MAX_PENDING:
            oldest = next(iter(self.pending))
            self._drop(oldest)
            if oldest == key:
                return None                # this sample alone is past the cap
        if len(p.got) < total:
            return None
        del self.pending[key]
        self.held -= p.held
        ordered = sorted(p.got.items())
        return Sample(b"".join(piece for _, (piece, _) in ordered),
                      [((n - 1) * fragment, len(piece), at_frame)
                       for n, (piece, at_frame) in ordered])


@dataclass
class _Class:
    """Sizes and times of one traffic class."""
    messages: int = 0
    sizes: Counter = field(default_factory=Counter)
    first_ns: int | None = None
    last_ns: int | None = None
    first_frame: int = 0
    header: bytes = b""

    def add(self, d: Datagram) -> None:
        self.messages += 1
        self.sizes[len(d.payload)] += 1
        if self.first_ns is None:
            self.first_ns, self.first_frame, self.header = d.time_ns, d.frame, d.payload[:20]
        self.last_ns = d.time_ns


class Eavesdropper:
    """Reads datagrams in capture order; `result()` says what was learned."""

    def __init__(self, domain: int | None = None, filler: bytes | None = None,
                 mapping: PortMapping = PORTS):
        self.domain, self.mapping = domain, mapping
        self.filler = filler * 16 if filler else None
        self.leaks = Leaks()
        self.reassembly = Reassembly()
        self.classes: dict[str, _Class] = {}
        self.rtps = self.non_rtps = self.ip_fragmented = self.malformed = 0
        self.problems: Counter = Counter()
        self.protection: tuple[int, int] | None = None      # first protected (frame, ns)
        self.first_ns: int | None = None
        self.clear: dict[str, list[int]] = {}      # category: [before, after, first frame]
        self.clear_evidence: dict[str, tuple[bytes, int]] = {}
        self.participants: set[bytes] = set()
        self.endpoints: set[bytes] = set()
        self.topics: dict[bytes, str] = {}             # endpoint GUID: topic name
        self.payload_facts: dict[bytes, tuple[str, int]] = {}   # readable writer: how, size
        self.vendor_tail: list = []                      # [count, protected, first]
        self.first_dport: tuple[int, int] | None = None
        self.vendors: dict[bytes, str] = {}

    # ------------------------------------------------------------------ messages
    def feed(self, d: Datagram) -> None:
        msg = d.payload
        if self.first_ns is None:
            self.first_ns = d.time_ns
        if d.fragmented:
            self.ip_fragmented += 1
            return
        if msg[:4] != b"RTPS":
            self.non_rtps += 1
            return
        self.rtps += 1
        if self.first_dport is None:
            self.first_dport = (d.dport, d.frame)
        self.classes.setdefault(self._class(d.dport), _Class()).add(d)
        if len(msg) < 20:
            self._problem(f"{len(msg)} bytes: shorter than an RTPS header")
            return
        prefix, vendor = msg[8:20], msg[6:8]
        if vendor not in self.vendors and len(self.vendors) < 16:
            self.vendors[vendor] = vendor_name(vendor)
        self._seen(self.participants, prefix)
        self.leaks.add("addressing", "participant", f"participant {prefix.hex()}",
                       f"participant {prefix.hex()} ({vendor_name(vendor)}) is on the wire: "
                       "its GUID prefix heads every RTPS message it sends, encrypted or not",
                       "RTPS header", (msg[8:20], d.frame), [d.frame], "rtps.guidPrefix.src")
        try:
            subs, why = submessages(msg)
            if why:
                self._problem(why)
            self._message(d, msg, subs, prefix, vendor)
        except Malformed as e:
            self._problem(str(e))
        except (CdrError, IndexError, ValueError, struct.error) as e:   # still no crash
            self._problem(f"{type(e).__name__}: {e}")

    def _class(self, port: int) -> str:
        return "other" if self.domain is None else self.mapping.traffic(self.domain, port)

    def _problem(self, why: str) -> None:
        self.malformed += 1
        if len(self.problems) < 200 or why in self.problems:
            self.problems[why] += 1

    @staticmethod
    def _seen(where: set, item: bytes) -> None:
        if len(where) < MAX_SEEN:
            where.add(item)

    def _message(self, d: Datagram, msg: bytes, subs, prefix: bytes, vendor: bytes) -> None:
        protected = False
        visible = subs
        if subs and subs[0].id == SRTPS_PREFIX:
            protected = True
            end = protected_end(subs)
            for s in subs[end:]:
                self._vendor_submessage(d, msg, s, vendor, True)
            inner = subs[1:end - 1] if subs[end - 1].id == SRTPS_POSTFIX else subs[1:end]
            visible = [] if transform(msg, subs[0]) == "gcm" else inner
        category = self._walk(d, msg, visible, prefix, vendor, protected)
        protected = protected or category[1]
        category = category[0]
        if protected:
            if self.protection is None:
                self.protection = (d.frame, d.time_ns)
            return
        category = category or "control"
        counts = self.clear.setdefault(category, [0, 0, d.frame])
        counts[0 if self.protection is None else 1] += 1
        if category not in self.clear_evidence:
            first = next((s for s in subs if s.id in (DATA, DATA_FRAG)), subs[0] if subs
                         else None)
            at = first.offset - 4 if first else 0
            self.clear_evidence[category] = (msg[at:at + EVIDENCE_HEADER], d.frame)

    def _walk(self, d: Datagram, msg: bytes, subs, src: bytes, vendor: bytes,
              protected: bool) -> tuple[str | None, bool]:
        """The visible submessages of one message: (what it carries, whether anything in it
        is protected). Only an AES-GCM transform hides: what a SEC_PREFIX with a GMAC
        transform (SIGN) encloses is read as if it were not there, and a signed SEC_BODY's
        content is read (Cyclone DDS 0.10 encloses a signed submessage as it is)."""
        category, sealed = None, False
        for s in subs:
            if s.id == INFO_SRC and s.length >= 20:
                src = msg[s.offset + 8:s.offset + 20]
            elif s.id == SEC_PREFIX:
                protected, sealed = True, transform(msg, s) == "gcm"
            elif s.id == SEC_POSTFIX:
                sealed = False
            elif s.id == SEC_BODY:
                protected = True
                if not sealed:
                    what = self._signed_body(d, msg, s, src, vendor)
                    category = category or what
            elif sealed:
                continue
            elif s.id in (DATA, DATA_FRAG):
                what, encrypted = self._data(d, msg, s, src, vendor)
                protected = protected or encrypted
                category = category or what
            elif s.id in ENTITY and s.length >= 8:
                self._seen(self.endpoints, src + msg[s.offset + 4:s.offset + 8])
                category = category or "control"
            elif s.id >= VENDOR and not protected:
                self._vendor_submessage(d, msg, s, vendor, False)
        return category, protected

    def _signed_body(self, d: Datagram, msg: bytes, s, src: bytes, vendor: bytes
                     ) -> str | None:
        """A SEC_BODY under a GMAC (or null) transform: its CryptoContent (an octet
        sequence) is the submessage as it was, read as such."""
        if s.length < 4:
            raise Malformed(f"SEC_BODY of {s.length} bytes has no content length")
        for order in (("little" if s.little else "big"), ("big" if s.little else "little")):
            n = int.from_bytes(msg[s.offset:s.offset + 4], order)
            if n <= s.length - 4:
                break
        else:
            raise Malformed(f"SEC_BODY's content claims {n:,} bytes, it holds {s.length - 4:,}")
        content = msg[:20] + msg[s.offset + 4:s.offset + 4 + n]    # its bytes as sent
        subs, why = submessages(content)
        if why:
            self._problem(f"signed SEC_BODY: {why}")
        return self._walk(d, content, subs, src, vendor, True)[0]

    # --------------------------------------------------------------------- data
    def _data(self, d: Datagram, msg: bytes, s, src: bytes, vendor: bytes
              ) -> tuple[str, bool]:
        """A visible DATA/DATA_FRAG: (its category, whether its payload is encrypted)."""
        frag = s.id == DATA_FRAG
        fixed = 32 if frag else 20
        if s.length < fixed:
            raise Malformed(f"{s.name} of {s.length} bytes (at least {fixed})")
        body, end, little = s.offset, s.offset + s.length, s.little
        order = "<" if little else ">"
        writer = msg[body + 8:body + 12]
        wid = int.from_bytes(writer, "big")
        high, low = struct.unpack_from(order + "iI", msg, body + 12)
        q = body + 4 + struct.unpack_from(order + "H", msg, body + 2)[0]
        if q > end:
            raise Malformed(f"{s.name}: octetsToInlineQos points past the submessage")
        self._seen(self.endpoints, src + writer)
        builtin = writer[3] & 0xC0 == 0xC0
        category = WRITERS.get(wid, "control" if builtin else "user")
        if s.flags & 0x02:
            stop = parameter_list_end(msg, q, end, little)
            self._inline_qos(d, msg, q, stop, little, src)
            q = stop
        if frag:
            first, count, size, total = struct.unpack_from(order + "IHHI", msg, body + 20)
            if not builtin:
                return category, self._user(d, msg, q, end, src + writer, first == 1, total)
            sample = self.reassembly.add((src, writer, high, low), total, size, first, count,
                                         msg[q:end], d.frame)
        else:
            if not s.flags & 0x0C:                # no data, no key: nothing to read
                return category, False
            if not builtin:
                return category, self._user(d, msg, q, end, src + writer, True, end - q)
            sample = Sample.of(msg[q:end], d.frame)
        if sample is not None:
            return category, self._builtin(sample, wid, src, vendor)
        return category, False

    def _inline_qos(self, d: Datagram, msg: bytes, start: int, end: int, little: bool,
                    src: bytes) -> None:
        for p in parameters(msg, start, end, little):
            if p.pid == PID_TOPIC_NAME and p.length >= 5:
                n = int.from_bytes(msg[p.offset:p.offset + 4], "little" if little else "big")
                name = msg[p.offset + 4:p.offset + 4 + min(n, p.length - 4)].rstrip(b"\0")
                if name:
                    text = name.decode("utf-8", "backslashreplace")
                    self.leaks.add("topic", "topic name", text,
                                   f"topic {text!r}: named in the inline QoS of data from "
                                   f"participant {src.hex()}", "inline QoS",
                                   (name[:96], d.frame), [d.frame], "rtps.param.topicName")

    def _user(self, d: Datagram, msg: bytes, q: int, end: int, guid: bytes, first: bool,
              size: int) -> bool:
        """A user writer's payload: a leak when readable; True when encrypted."""
        head = msg[q:q + 4]
        crypto = len(head) == 4 and head[:3] == b"\0\0\0" and head[3] in TRANSFORMS
        kind = TRANSFORMS[head[3]] if crypto else None
        readable_at: int | None = None
        if first and not crypto and len(head) == 4 and int.from_bytes(head[:2], "big") in \
                (0, 1, 2, 3, 6, 7, 8, 9, 10, 11):
            readable_at = q                                 # plaintext CDR
        elif crypto and kind in ("gmac", "null"):
            readable_at = q + 20                            # signed only: the data follows
        elif self.filler and kind != "gcm":
            at = msg.find(self.filler, q, end)
            readable_at = at if at >= 0 else None
        if readable_at is None:
            return kind == "gcm"
        how = "signed, not encrypted" if crypto else "in clear"
        self.leaks.add("payload", "writer", f"writer {guid.hex()}",
                       payload_text(guid, self.topics.get(guid), how, size), "user DATA",
                       (msg[readable_at:min(end, readable_at + 32)], d.frame), [d.frame])
        if len(self.payload_facts) < MAX_SEEN:
            self.payload_facts.setdefault(guid, (how, size))
        return False

    def _name_payload_topics(self) -> None:
        """A writer's topic learned after its first readable sample (its SEDP announcement
        re-sent after the capture began, as Fast DDS does under load) still names it."""
        for guid, (how, size) in self.payload_facts.items():
            entry = self.leaks.entries.get(("payload", f"writer {guid.hex()}"))
            if entry is not None and guid in self.topics:
                entry.text = payload_text(guid, self.topics[guid], how, size)

    def _builtin(self, sample: Sample, wid: int, src: bytes, vendor: bytes) -> bool:
        """A builtin writer's sample: read what it says; True when its payload is encrypted."""
        data = sample.data
        if len(data) >= 4 and data[:3] == b"\0\0\0" and data[3] in TRANSFORMS:
            return TRANSFORMS[data[3]] == "gcm"
        if wid not in WRITERS:
            return False
        try:
            _, little, start = encapsulation(data, 0, len(data))
            if wid in (SPDP, SPDP_SECURE):
                participant(sample, self.leaks, start, len(data), little,
                            "participant announcement (SPDP)", src, vendor)
            elif wid in (SEDP_PUBLICATIONS, SEDP_PUBLICATIONS_SECURE, SEDP_SUBSCRIPTIONS,
                         SEDP_SUBSCRIPTIONS_SECURE):
                role = "writer" if wid & 0xFFFF00 == 0x000300 else "reader"
                topic, guid = endpoint(sample, self.leaks, start, len(data), little,
                                       f"endpoint announcement (SEDP {role})", src, vendor,
                                       role)
                if topic and guid and len(self.topics) < MAX_SEEN:
                    self.topics[guid] = topic
            elif wid == STATELESS:
                stateless(sample, self.leaks, start, len(data), little, src, vendor)
            elif wid == VOLATILE:
                span = Span(0, min(len(data), 64))
                self.leaks.add("unprotected", "key material", "key material",
                               f"participant {src.hex()} sent crypto tokens (key material) "
                               "without protection: whoever reads them decrypts everything",
                               "ParticipantVolatileMessageSecure", sample.evidence(span),
                               sample.frames(span))
        except CdrError as e:
            self._problem(f"{WRITERS[wid]} sample: {e}")
        return False

    def _vendor_submessage(self, d: Datagram, msg: bytes, s, vendor: bytes,
                           after_protection: bool) -> None:
        """A vendor-specific submessage (0x80-0xff) in clear; after an SRTPS_POSTFIX it is
        outside the protection (Fast DDS 2.9's statistics submessage)."""
        body = msg[s.offset:s.offset + s.length]
        value = f"vendor submessage 0x{s.id:02x} {vendor.hex()}"
        said = ""
        if vendor == b"\x01\x0f" and s.id == 0x80 and len(body) >= 56:
            order = "<" if s.little else ">"
            kind, port = struct.unpack_from(order + "iI", body, 0)
            address = ".".join(map(str, body[20:24])) if kind == 1 else body[8:24].hex()
            said = (f": the destination {address}:{port}, a send time stamp, a running "
                    "message count and byte count")
        if not self.leaks.has("unprotected", value):
            self.vendor_tail = [0, 0, d.frame]
        self.vendor_tail[0] += 1
        self.vendor_tail[1] += after_protection
        self.leaks.add("unprotected", "vendor submessage", value,
                       f"{vendor_name(vendor)} appends a vendor-specific submessage "
                       f"(0x{s.id:02x}) in clear{said}", "vendor submessage",
                       (msg[s.offset - 4:s.offset - 4 + EVIDENCE_HEADER + 32], d.frame),
                       [d.frame])

    # ------------------------------------------------------------------- result
    def result(self) -> dict:
        self._totals()
        self._name_payload_topics()
        return {"method": LEAK_METHOD, "entries": self.leaks.to_json(),
                "kinds": {k: n for k, n in self.leaks.per_kind.items() if n},
                "vendors": sorted(self.vendors.values()),
                "participants": len(self.participants), "endpoints": len(self.endpoints),
                "messages": self.rtps, "non_rtps": self.non_rtps,
                "ip_fragmented": self.ip_fragmented,
                "protection_started": None if self.protection is None else {
                    "frame": self.protection[0],
                    "after_s": round((self.protection[1] - (self.first_ns or 0)) / 1e9, 6)},
                "malformed": self.malformed,
                "problems": [f"{why} ({n:,}\u00d7)" for why, n in self.problems.most_common(20)],
                "not_reassembled": self.reassembly.dropped + len(self.reassembly.pending),
                "entries_left_out": {k: n for k, n in self.leaks.dropped.items() if n}}

    def _totals(self) -> None:
        """The entries only the whole capture can say: what went in clear, the vendor
        submessage's counts, sizes and timing, the participants and endpoints."""
        start = self.protection[0] if self.protection else None
        for category, (before, after, first) in self.clear.items():
            n = before + after
            when = (f"; {before:,} before protection started (frame {start}), {after:,} "
                    "after" if start else "; nothing in this capture is protected")
            self._put("unprotected", category, category, f"{CATEGORIES[category]} sent in "
                      f"clear: {n:,}{when}", "RTPS message", self.clear_evidence[category],
                      first, n)
        if self.vendor_tail:
            for e in self.leaks.entries.values():
                if e.kind == "unprotected" and e.value.startswith("vendor submessage"):
                    e.text += (f": in {self.vendor_tail[0]:,} messages, "
                               f"{self.vendor_tail[1]:,} of them after the protected part "
                               "(outside what the SRTPS_POSTFIX covers)")
        for name, c in self.classes.items():
            sizes = sorted(c.sizes.elements()) if c.messages < 1 << 20 else []
            median = sizes[len(sizes) // 2] if sizes else 0
            span_s = ((c.last_ns or 0) - (c.first_ns or 0)) / 1e9
            every = f", one every {span_s / (c.messages - 1) * 1e3:.3g} ms" \
                if c.messages > 1 and span_s > 0 else ""
            what = {"user": "user traffic", "discovery": "discovery and handshake traffic"
                    }.get(name, "traffic")
            self._put("traffic", what, what,
                      f"{what}: {c.messages:,} RTPS messages of {min(c.sizes):,}\u2013"
                      f"{max(c.sizes):,} bytes (median {median:,}) over {span_s:.3g} s"
                      f"{every}; sizes and timing show through any encryption, and each "
                      "message's RTPS header names its sender (vendor, GUID prefix) in clear",
                      "RTPS header", (c.header, c.first_frame), c.first_frame, c.messages)
        if self.participants:
            more = "at least " if len(self.participants) >= MAX_SEEN else ""
            first = min((e.first_frame for e in self.leaks.entries.values()
                         if e.kind == "addressing"), default=0)
            header = next((e.evidence for e in self.leaks.entries.values()
                           if e.kind == "addressing" and e.message == "RTPS header"), b"")
            self._put("traffic", "count", "participants and endpoints",
                      f"{more}{len(self.participants):,} participants (GUID prefixes) and "
                      f"{more if len(self.endpoints) >= MAX_SEEN else ''}"
                      f"{len(self.endpoints):,} endpoints (entity ids in submessages that are "
                      "not encrypted) are visible", "RTPS header", (header, first), first,
                      self.rtps)
        if self.domain is not None and self.first_dport and not any(
                e.value.startswith("domain ") for e in self.leaks.entries.values()):
            port, frame = self.first_dport
            self._put("governance", "domain", f"domain {self.domain}",
                      f"the participants are on DDS domain {self.domain}: the UDP ports "
                      f"(e.g. {port}) are that domain's RTPS ports", "UDP header",
                      (struct.pack(">H", port), frame), frame, self.rtps)

    def _put(self, kind: str, about: str, value: str, text: str, message: str,
             evidence: tuple[bytes, int], first: int, count: int):
        self.leaks.add(kind, about, value, text, message, evidence, [first])
        entry = self.leaks.entries.get((kind, value))
        if entry is not None:
            entry.text, entry.count, entry.first_frame = text, count, first
        return entry


def payload_text(guid: bytes, topic: str | None, how: str, size: int) -> str:
    on = f" of topic {topic!r}" if topic else ""
    return (f"the data{on} from writer {guid.hex()} is readable ({how}): e.g. {size:,}-byte "
            "serialized samples")


def find_leaks(datagrams: Iterable[Datagram], domain: int | None = None,
               filler: bytes | None = None, mapping: PortMapping = PORTS) -> dict:
    """What a passive reader learns from `datagrams` (in capture order): a point's `leaks`
    record (module docstring; docs/reference/results-json.md)."""
    reader = Eavesdropper(domain, filler, mapping)
    for d in datagrams:
        reader.feed(d)
    return reader.result()


def domain_of(datagrams: list[Datagram], mapping: PortMapping = PORTS) -> int | None:
    """The RTPS domain most of the datagrams went to, by the well-known port mapping (a
    capture file does not say)."""
    votes = Counter((d.dport - mapping.base) // mapping.domain_gain for d in datagrams
                    if d.dport >= mapping.base and d.payload[:4] == b"RTPS")
    return votes.most_common(1)[0][0] if votes else None


def capture_file_point(path: Path) -> dict:
    """`wire-check --read FILE`: what an eavesdropper reads in a capture file (any pcap or
    pcapng of RTPS over UDP/IPv4), as a point record with `leaks` and no verdict (there is
    no governance to hold it to). A file named as `--pcap` names its captures
    (PROFILE-MODE-SIZE.pcap of a catalog profile) says its profile, mode and size.
    GovkitError (exit 2) for a file that is no capture (govkit.wire.pcapfile)."""
    frames = read_pcap(path)
    grams = list(datagrams(frames))
    record: dict = {"profile": path.stem, "status": "ok", "error": None, "pcap": str(path),
                    "capture": {"source": "file", "frames": len(frames),
                                "datagrams": len(grams)}}
    name, _, rest = path.stem.partition("-")
    mode, _, size = rest.partition("-")
    known = {p.name: p for p in PROFILES}
    # ASCII digits only: str.isdigit() holds for '²', which int() refuses
    if name in known and mode in MODES and size.isascii() and size.isdigit():
        record.update(profile=name, mode=mode, size=int(size),
                      expected={"profile": name, "security": known[name].security})
    record["leaks"] = find_leaks(grams, domain_of(grams))
    return record


__all__ = ["KINDS", "LEAK_METHOD", "Eavesdropper", "capture_file_point", "domain_of",
           "find_leaks"]
