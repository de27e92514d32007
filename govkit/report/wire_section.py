"""What the report shows of `govkit bench --wire`: per captured point and per profile, what
the traffic carried against what the governance promises (issue 9, item 4).

Every point's verdict is judged again from its stored counts (govkit.wire.verdict.
judge_again, against the catalog's profile where results.json names one), so a report never
repeats a stored verdict its own counts contradict; a stored verdict that differs is said so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from govkit.wire.verdict import headline, judge_again, level, profile_verdicts, readable


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
class WireSection:
    method: str
    points: list[WirePoint]
    profiles: dict[str, WireProfile]

    @property
    def mismatched(self) -> list[str]:
        return [p.name for p in self.profiles.values() if p.verdict != "match"]


def _point(stored: dict) -> tuple[WirePoint, dict]:
    p = judge_again(stored)
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
        return WireSection(str(wire.get("method") or ""), points, _profiles(judged))
    except (AttributeError, KeyError, TypeError, ValueError) as e:
        raise WireMalformed(f"wire.points: cannot be summed per profile "
                            f"({type(e).__name__}: {e})") from None


def _profiles(judged: list[dict]) -> dict[str, WireProfile]:
    profiles = {}
    for name, v in profile_verdicts(judged).items():
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
