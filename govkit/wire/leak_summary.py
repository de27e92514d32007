"""What an eavesdropper reads, per profile: the captured points' leak entries summed up as
one table row (a cell per kind) and one sentence a manager can read.

One function (`profile_leaks`) writes both from the points' stored `leaks` records, so
`wire-check --leaks`, results.json's `wire.profiles`, the terminal, report.html and
summary.md say the same thing; the report calls it again on the stored points, so nothing
stored is repeated on trust.
"""

from __future__ import annotations

from collections import Counter

from govkit.wire.leak_entries import KINDS

# What each kind means to a reader of the sentence, in the order the sentence names them.
PHRASES = {"payload": "the data", "topic": "the topic names",
           "certificate": "who the participants are",
           "permissions": "what they may publish and subscribe to",
           "participant": "their host and process details"}
# Kinds an entry of which never says much alone (every capture has them)
ALWAYS = ("addressing", "unprotected", "traffic")
ABOUT_PLURAL = {"property": "properties", "user data": "user data",
                "identity token": "identity tokens", "permissions token": "permissions tokens",
                "topic security": "topic settings", "participant security":
                "participant settings", "heartbeats": "control messages"}
CATEGORY_SHORT = {"spdp": "SPDP", "sedp": "SEDP", "handshake": "handshake",
                  "user": "user data", "control": "control", "liveliness": "liveliness",
                  "volatile": "KEY MATERIAL", "vendor submessage": "vendor submessage"}


def _plural(about: str, n: int) -> str:
    if n == 1:
        return about
    return ABOUT_PLURAL.get(about, about if about.endswith("s") else about + "s")


def _join(items: list[str], last: str = "and") -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {last} " + items[-1]


def cell(kind: str, entries: list[dict], leaks: dict) -> str:
    """A table cell: what of `kind` one point's capture shows, in a few words."""
    if not entries:
        return ""
    first = min(e["first_frame"] for e in entries)
    if kind == "payload":
        return f"{sum(e['frames'] for e in entries):,} messages (frame {first})"
    if kind == "unprotected":
        parts = []
        for e in entries:
            name = CATEGORY_SHORT.get(e["about"], e["about"])
            parts.append(f"{name} \u00d7{e['frames']:,}")
        return ", ".join(parts)
    if kind == "traffic":
        counts = [f"{leaks[k]:,} {k}" for k in ("participants", "endpoints")
                  if isinstance(leaks.get(k), int)]
        return "sizes, timing" + (f"; {', '.join(counts)}" if counts else "")
    counts = Counter(e["about"] for e in entries)
    said = ", ".join(f"{n:,} {_plural(about, n)}" for about, n in counts.items())
    return f"{said} (frame {first})"


def point_row(leaks: dict) -> dict[str, str]:
    """Per kind, the cell of one point's leaks record."""
    by_kind: dict[str, list[dict]] = {}
    for e in leaks.get("entries", []):
        by_kind.setdefault(e["kind"], []).append(e)
    return {k: cell(k, by_kind.get(k, []), leaks) for k in KINDS}


def sentence(profile: str, leaks: dict, security: bool = True) -> str:
    """One plain sentence: what the profile hides and what it does not, and why."""
    entries = leaks.get("entries", [])
    present = {e["kind"] for e in entries}
    phrases = PHRASES if security else {k: v for k, v in PHRASES.items()
                                        if k not in ("certificate", "permissions")}
    shown = [phrases[k] for k in phrases if k in present]
    hidden = [phrases[k] for k in phrases if k not in present]
    why = _reasons(entries, leaks)
    unread = int(leaks.get("malformed") or 0) + int(leaks.get("not_reassembled") or 0)
    tail = (": " + "; ".join(why) if why else "") + "." + (
        f" (govkit could not read {unread:,} message(s) or sample(s) of this capture: what "
        "they carry is not in this reading.)" if unread else "")
    if not security:
        return (f"{profile} uses no DDS Security: "
                + (f"{_join(shown)} {'is' if len(shown) == 1 else 'are'} readable"
                   if shown else "only addresses, sizes and timing show")
                + "; there are no certificates or permissions on the wire" + tail)
    if not shown:
        return (f"{profile} hides {_join(hidden)}; what still shows is who talks to whom, "
                "when and how much (addresses, message sizes and timing)" + tail)
    if not hidden:
        return f"{profile} hides nothing: {_join(shown)} are all readable" + tail
    return f"{profile} hides {_join(hidden)}; it does not hide {_join(shown, 'or')}" + tail


def _both(n: int, what: str) -> str:
    return f"both {what}s" if n == 2 else f"a {what}" if n == 1 else f"{n:,} {what}s"


def _reasons(entries: list[dict], leaks: dict) -> list[str]:
    why, handshake = [], []
    start = (leaks.get("protection_started") or {}).get("frame")
    vendors = " and ".join(leaks.get("vendors") or []) or "the runtime"
    certs = [e for e in entries if e["about"] == "certificate"]
    if certs:
        handshake.append(_both(len(certs), "identity certificate"))
    grants = {e["value"] for e in entries if e["about"] == "grant"}
    docs = [e for e in entries if e["about"] == "permissions document"]
    if grants or docs:
        handshake.append(_both(len(grants) or len(docs), "permissions " + (
            "grant" if len(grants) > 2 else "document")))
    if handshake:
        verb = "travels" if len(handshake) == 1 and handshake[0].startswith("a ") else "travel"
        why.append(f"{_join(handshake)} {verb} in clear in the authentication handshake")
    tokens = [a for a in ("identity token", "permissions token")
              if any(e["about"] == a for e in entries)]
    if tokens:
        why.append(f"every participant announcement (SPDP) carries its {_join(tokens)} with "
                   "the certificate and CA names")
    topics = [e for e in entries if e["kind"] == "topic"]
    if topics:
        early = min(e["first_frame"] for e in topics)
        if start and early < start:
            why.append(f"{vendors} sends endpoint discovery (SEDP) in clear before protection "
                       f"starts (frame {early}; protection from frame {start})")
        elif start:
            why.append(f"nothing encrypts endpoint discovery (SEDP; frame {early})")
    return why


def _secured(point: dict, leaks: dict) -> bool:
    """Whether the point's participants used DDS Security: its governance says, or (a
    capture file's) the capture shows protection or a handshake."""
    expected = point.get("expected") or {}
    if "security" in expected:
        return bool(expected["security"])
    return bool(leaks.get("protection_started")) or any(
        e["about"] in ("handshake", "certificate", "identity token")
        for e in leaks.get("entries", []))


def profile_leaks(points: list[dict]) -> dict:
    """Per profile, from its points' `leaks` records (points without one are left out):
    `points`, the kinds any point shows, per kind the first point's cell and its number of
    entries, and the sentence of the first point (a profile's points differ only in mode
    and size)."""
    out: dict = {}
    for p in points:
        leaks = p.get("leaks")
        if p.get("status") != "ok" or not isinstance(leaks, dict):
            continue
        v = out.setdefault(p["profile"], {"points": 0, "kinds": [], "cells": {},
                                         "entries": {}, "sentence": "", "errors": []})
        v["points"] += 1
        row = point_row(leaks)
        counts = Counter(e["kind"] for e in leaks.get("entries", []))
        for k in KINDS:
            if row[k] and k not in v["kinds"]:
                v["kinds"].append(k)
                v["cells"][k] = row[k]
                v["entries"][k] = counts[k]
        if not v["sentence"]:
            v["sentence"] = sentence(p["profile"], leaks, _secured(p, leaks))
        if leaks.get("error"):
            v["errors"].append(f"{p.get('mode')} {p.get('size')} B: {leaks['error']}")
    for v in out.values():
        v["kinds"] = [k for k in KINDS if k in v["kinds"]]
    return out


__all__ = ["ALWAYS", "PHRASES", "cell", "point_row", "profile_leaks", "sentence"]
