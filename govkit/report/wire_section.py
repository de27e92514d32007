"""What the report shows of `govkit bench --wire`: per captured point and per profile, what
the traffic carried against what the governance promises (issue 9, item 4), and with
`--leaks` what an eavesdropper reads, per profile (issue 34).

Every point's verdict is judged again from its stored counts (govkit.wire.verdict.
judge_again, against the catalog's profile where results.json names one), so a report never
repeats a stored verdict its own counts contradict; a stored verdict that differs is said so.
The eavesdropper's table and sentences are written again from the points' stored entries
(govkit.wire.leak_summary), not taken from the stored per-profile summary.

Linear in the points, and light per point (issue 37: 20,000 points took over 10 s): each is
judged once, writing only its failing checks' texts (the report shows no other), and the
summary reuses these verdicts; the per-point table shows every point that does not match
and at most MAX_WIRE_ROWS others per profile, saying how many it leaves out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from govkit.wire.leak_entries import KINDS, unescape
from govkit.wire.verdict import headline, judge_again, level, profile_verdicts, readable

MAX_WIRE_ROWS = 20           # matching points per profile in the per-point table
MAX_LEAK_ROWS = 400          # entries listed per profile (results.json keeps them all)


class WireMalformed(ValueError):
    """results.json's `wire` part cannot be read (the message names where)."""


@dataclass(frozen=True)
class WirePoint:
    profile: str
    judged_as: str               # the profile whose governance the traffic was held to
    mode: str
    size: int
    ok: bool                     # the captured repeat ran
    error: str
    user_messages: int
    rtps: str                    # e.g. "GCM 100%"; "(want X)" appended when it differs
    submessages: str
    payload: str
    readable: int
    readable_expected: bool      # True: nothing encrypts the payload, readable is right
    discovery_messages: int
    verdict: str                 # match | mismatch | failed
    reasons: list[str]
    stored_verdict_differs: bool

    @property
    def readable_ok(self) -> bool:
        return (self.readable > 0) == self.readable_expected


@dataclass(frozen=True)
class WireProfile:
    name: str
    verdict: str                 # match | mismatch
    points: int
    line: str                    # what its user traffic carried, over its captured points
    short: str                   # the same in a few words, for a table cell
    reasons: list[str]


@dataclass(frozen=True)
class LeakEntry:
    kind: str                    # the kind's title (govkit.wire.leak_entries.KINDS)
    text: str
    frames: int
    first_frame: int
    evidence: str                # as results.json keeps it (escaped), cut for the page
    evidence_frame: int


@dataclass(frozen=True)
class LeakRow:
    """One profile's row of "What an eavesdropper reads"."""
    name: str
    cells: dict[str, str]        # per kind name: what it shows ("" where nothing)
    sentence: str
    point: str                   # whose entries are listed: "latency 1024 B"
    pcap: str | None             # the capture those frame numbers are of, if written
    entries: list[LeakEntry]
    left_out: int                # entries not listed (MAX_LEAK_ROWS)


@dataclass(frozen=True)
class LeakSection:
    kinds: list[tuple[str, str]]            # (name, title) in table order
    rows: list[LeakRow]


@dataclass(frozen=True)
class WireSection:
    method: str
    points: list[WirePoint]
    profiles: dict[str, WireProfile]
    verdicts: dict = field(default_factory=dict)   # profile_verdicts of the judged points
    leaks: LeakSection | None = None

    @property
    def mismatched(self) -> list[str]:
        return [p.name for p in self.profiles.values() if p.verdict != "match"]

    @property
    def shown_points(self) -> list[WirePoint]:
        """Every point that is not a match, and up to MAX_WIRE_ROWS others per profile."""
        kept: dict[str, int] = {}
        out = []
        for p in self.points:
            if p.verdict != "match" or p.stored_verdict_differs:
                out.append(p)
            elif kept.get(p.profile, 0) < MAX_WIRE_ROWS:
                kept[p.profile] = kept.get(p.profile, 0) + 1
                out.append(p)
        return out

    @property
    def hidden_points(self) -> int:
        return len(self.points) - len(self.shown_points)


def _point(stored: dict) -> tuple[WirePoint, dict]:
    p = judge_again(stored, full=False)
    if p["status"] != "ok":
        return WirePoint(p["profile"], p["profile"], p["mode"], int(p["size"]), False,
                         str(p.get("error") or "failed"), 0, "\u2013", "\u2013", "\u2013", 0,
                         True, 0, "failed", [f"the captured run failed: {p.get('error')}"],
                         False), p
    e, o, u = p["expected"], p["observed"], p["observed"]["user"]
    point = WirePoint(p["profile"], e["profile"], p["mode"], int(p["size"]), True, "",
                      int(u["messages"]), level(u["rtps"], e["rtps"]),
                      level(u["submessage"], e["submessage"]), level(u["payload"], e["payload"]),
                      int(readable(o)), e["readable_payload"], int(o["discovery"]["messages"]),
                      p["verdict"], p["reasons"], p["verdict"] != p["stored_verdict"])
    return point, p


def build_wire_section(doc: dict) -> WireSection | None:
    """The report's wire part, or None when the run captured nothing.
    Raises WireMalformed naming the first record it cannot read."""
    wire: Any = doc.get("wire")
    if wire is None:
        return None
    if not isinstance(wire, dict) or not isinstance(wire.get("points", []), list) \
            or not all(isinstance(p, dict) for p in wire.get("points", [])):
        raise WireMalformed("wire: not an object with a list of points")
    points, judged = [], []
    for i, p in enumerate(wire.get("points", [])):
        try:
            point, record = _point(p)
        except (AttributeError, KeyError, TypeError, ValueError) as e:
            raise WireMalformed(f"wire.points[{i}]: cannot be read "
                                f"({type(e).__name__}: {e})") from None
        points.append(point)
        judged.append(record)
    if not points:
        return None
    try:
        verdicts = profile_verdicts(judged)
        return WireSection(str(wire.get("method") or ""), points, _profiles(verdicts),
                           verdicts, _leaks(judged, verdicts))
    except (AttributeError, KeyError, TypeError, ValueError) as e:
        raise WireMalformed(f"wire.points: cannot be summed per profile "
                            f"({type(e).__name__}: {e})") from None


def _leaks(judged: list[dict], verdicts: dict) -> LeakSection | None:
    """The eavesdropper's table (`--leaks`): a row per profile whose points read it, its
    first such point's entries listed."""
    firsts: dict[str, dict] = {}
    for p in judged:
        if p.get("status") == "ok" and isinstance(p.get("leaks"), dict):
            firsts.setdefault(p["profile"], p)
    if not firsts:
        return None
    rows = []
    for name, p in firsts.items():
        summary = verdicts[name]["leaks"]
        stored = p["leaks"].get("entries") or []
        entries = [LeakEntry(KINDS[e["kind"]].title, str(e["text"]), int(e["frames"]),
                             int(e["first_frame"]), _cut(str(e["evidence"])),
                             int(e["evidence_frame"])) for e in stored[:MAX_LEAK_ROWS]]
        rows.append(LeakRow(name, dict(summary["cells"]), str(summary["sentence"]),
                            f"{p['mode']} {p['size']} B", p.get("pcap"), entries,
                            max(0, len(stored) - MAX_LEAK_ROWS)))
    return LeakSection([(k.name, k.title) for k in KINDS.values()], rows)


def _cut(evidence: str, limit: int = 120) -> str:
    """Stored evidence for the page: at most `limit` characters, never mid-escape
    (ValueError for one that is not govkit's escaping)."""
    unescape(evidence)
    if len(evidence) <= limit:
        return evidence
    i = 0
    while True:
        step = 1 if evidence[i] != "\\" else 2 if evidence[i + 1] == "\\" else 4
        if i + step > limit:
            return evidence[:i] + "\u2026"
        i += step


def _profiles(verdicts: dict) -> dict[str, WireProfile]:
    profiles = {}
    for name, v in verdicts.items():
        o = v["observed"]
        if not o:
            profiles[name] = WireProfile(name, v["verdict"], v["points"], "the captured run "
                                         "failed", "the captured run failed", v["reasons"])
            continue
        u = o["user"]
        elsewhere = readable(o) - int(u["readable"])
        short = (f"RTPS {level(u['rtps'])}; submessages {level(u['submessage'])}; payload "
                 f"{level(u['payload'])}; readable payload in {int(u['readable']):,} of "
                 f"{int(u['messages']):,} user-traffic messages"
                 + (f" (and in {elsewhere:,} other messages)" if elsewhere else ""))
        profiles[name] = WireProfile(name, v["verdict"], v["points"], headline(o), short,
                                     v["reasons"])
    return profiles
