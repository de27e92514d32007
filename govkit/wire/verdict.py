"""What a profile's governance promises on the wire, and whether an observation keeps it.

The expectation is derived from the profile catalog's three protection kinds through the
DDS Security 1.1 meaning of each kind (a table, not per-profile code): SIGN is an AES-GMAC
transform, ENCRYPT an AES-GCM one, `*_WITH_ORIGIN_AUTHENTICATION` adds receiver-specific
MACs to the footer; a profile without security plugins sends no security submessage at all.
`checks` compares that with `govkit.wire.rtps.tally`'s counts; each check is `ok`, `mismatch`,
`unobservable` (hidden by an outer encryption: not a failure, and said so) or `info`.
How many receiver-specific MACs each footer carried (`receiver_mac_summary`) is judged
too: at least one in every footer whose kind asks for origin authentication, none in any
other; with N readers a footer may carry N (docs/background/vendors.md says what each
runtime puts there). Records stored before that count was kept are judged without it.

Coverage (every user-traffic message protected as promised) is judged while the point runs;
the messages sent after govkit stopped its processes are counted apart as `shutdown` and
reported, not judged (Cyclone 0.10 now and then sends one last unprotected ACKNACK to a
peer that is already leaving), except that no readable payload is allowed there either.
"""

from __future__ import annotations

from dataclasses import dataclass

from govkit.catalog.profiles import PROFILES, Profile
from govkit.wire.leak_summary import profile_leaks

# governance ProtectionKind -> (transform class, origin authentication)
PROTECTION = {"NONE": ("none", False), "SIGN": ("gmac", False),
              "SIGN_WITH_ORIGIN_AUTHENTICATION": ("gmac", True),
              "ENCRYPT": ("gcm", False), "ENCRYPT_WITH_ORIGIN_AUTHENTICATION": ("gcm", True)}
# governance BasicProtectionKind (data_protection_kind) -> what the serialized payload is
DATA_PROTECTION = {"NONE": "plain", "SIGN": "gmac", "ENCRYPT": "gcm"}
LABELS = {"none": "none", "gmac": "GMAC", "gcm": "GCM", "null": "NONE-transform",
          "plain": "plaintext", "unknown": "unrecognized", "mixed": "mixed",
          "hidden": "hidden", "absent": "absent"}
NOT_VISIBLE = ("hidden", "absent")


@dataclass(frozen=True)
class Expectation:
    profile: str
    security: bool           # security plugins loaded at all
    rtps: str                # none | gmac | gcm, on every user-traffic message
    rtps_origin: bool
    submessage: str          # on every entity submessage of user traffic
    submessage_origin: bool
    payload: str             # plain | gmac | gcm: every user payload
    governance: dict

    @classmethod
    def of(cls, profile: Profile) -> Expectation:
        rtps, rtps_origin = PROTECTION[profile.rtps_protection_kind or "NONE"]
        sub, sub_origin = PROTECTION[profile.metadata_protection_kind or "NONE"]
        return cls(profile.name, profile.security, rtps, rtps_origin, sub, sub_origin,
                   DATA_PROTECTION[profile.data_protection_kind or "NONE"],
                   {k: getattr(profile, k) for k in ("rtps_protection_kind",
                                                     "metadata_protection_kind",
                                                     "data_protection_kind")})

    @property
    def encrypted(self) -> bool:
        """Something encrypts the user payload: nobody on the wire may read it."""
        return "gcm" in (self.rtps, self.submessage, self.payload)

    def to_json(self) -> dict:
        # by hand, not dataclasses.asdict: that deep-copies recursively, and a report
        # judges every one of 20,000 stored points again (issue 37)
        return {"profile": self.profile, "security": self.security, "rtps": self.rtps,
                "rtps_origin": self.rtps_origin, "submessage": self.submessage,
                "submessage_origin": self.submessage_origin, "payload": self.payload,
                "governance": dict(self.governance), "readable_payload": not self.encrypted}


def _pct(k: int, n: int) -> str:
    if n == 0 or k in (0, n):
        return "0" if k == 0 else "100"
    return f"{min(99.9, max(0.1, 100 * k / n)):.1f}"


def distribution(counts: dict, n: int | None = None, drop=(), prep: str = "on") -> str:
    """'GCM on 100 % of 1,234' / 'GMAC on 98.0 %, none on 2.0 % of 50' / 'none of 0'."""
    items = [(k, v) for k, v in sorted(counts.items(), key=lambda kv: -kv[1])
             if k not in drop and v]
    n = sum(v for _, v in items) if n is None else n
    if not items:
        return f"none of {n:,}"
    return ", ".join(f"{LABELS.get(k, k)} {prep} {_pct(v, n)} %" for k, v in items) \
        + f" of {n:,}"


def level(counts: dict, want: str | None = None) -> str:
    """'GCM 100%' / 'none 97% GCM 3%' / 'hidden' / '–', with '(want X)' when it differs."""
    visible = _visible(counts)
    n = sum(visible.values())
    if not visible:
        return "hidden" if counts.get("hidden") else "–"
    text = " ".join(f"{LABELS.get(k, k)} {100 * v / n:.0f}%" if v != n else
                    f"{LABELS.get(k, k)} 100%"
                    for k, v in sorted(visible.items(), key=lambda kv: -kv[1]))
    return text if want is None or set(visible) == {want} else f"{text} (want {LABELS[want]})"


def _visible(counts: dict) -> dict:
    return {k: v for k, v in counts.items() if k not in NOT_VISIBLE and v}


def readable(observed: dict) -> int:
    """Messages with a readable payload, in every traffic class (user, discovery, shutdown)."""
    return sum(t["readable"] for t in observed.values() if isinstance(t, dict))


def checks(e: Expectation, observed: dict, full: bool = True) -> list[dict]:
    """Every check of `observed` against `e`. Each check's `observed` text is written by a
    function, called for every check when `full`, else only for a mismatch (whose reason
    needs it): a report judging 20,000 stored points again needs only those (issue 37)."""
    u, d = observed["user"], observed["discovery"]
    every = [t for t in observed.values() if isinstance(t, dict)]
    n = u["messages"]
    out = []

    def add(check, ok, expected, seen, unobservable=False, info=False):
        status = "info" if info else "unobservable" if unobservable else \
            "ok" if ok else "mismatch"
        out.append({"check": check, "status": status, "expected": expected,
                    "observed": seen() if full or status == "mismatch" else None})

    add("user traffic", n > 0, "RTPS user-traffic messages captured",
        lambda: f"{n:,} user-traffic messages, {u['bytes']:,} bytes")
    add("rtps protection", n > 0 and u["rtps"].get(e.rtps, 0) == n,
        f"{LABELS[e.rtps]} on every user-traffic message",
        lambda: f"{distribution(u['rtps'], n)} user-traffic messages")
    if e.rtps != "none":
        signed = sum(u["rtps_origin_auth"].values())
        yes = u["rtps_origin_auth"].get("yes", 0)
        add("rtps origin authentication", yes == (signed if e.rtps_origin else 0),
            ("receiver-specific MACs in every" if e.rtps_origin else "no receiver-specific "
             "MACs in any") + " SRTPS_POSTFIX",
            lambda: f"receiver-specific MACs in {yes:,} of {signed:,} SRTPS_POSTFIX",
            unobservable=signed == 0)
    vis = _visible(u["submessage"])
    hidden = u["submessage"].get("hidden", 0)
    add("submessage protection", set(vis) == {e.submessage},
        f"{LABELS[e.submessage]} on the entity submessages of every user-traffic message",
        lambda: f"{distribution(vis)} messages with visible entity submessages"
        + (f"; hidden in {hidden:,}" if hidden else ""), unobservable=not vis and hidden > 0)
    if e.submessage != "none" and vis:
        origin = _visible(u["submessage_origin_auth"])
        add("submessage origin authentication",
            set(origin) == {"yes" if e.submessage_origin else "no"},
            ("receiver-specific MACs in every" if e.submessage_origin else
             "no receiver-specific MACs in any") + " SEC_POSTFIX",
            lambda: f"receiver-specific MACs: {distribution(origin)} messages")
    macs = receiver_mac_summary(observed)
    if macs:        # footers seen (records stored before the count was kept have none)
        origin = {"SRTPS_POSTFIX": e.rtps_origin, "SEC_POSTFIX": e.submessage_origin}
        add("receiver-specific MAC count",
            all(v["min"] >= 1 if origin[k] else v["max"] == 0 for k, v in macs.items()),
            "; ".join(f"{k}: {'at least 1' if origin[k] else 'none'} in every footer"
                      for k in macs),
            lambda: "; ".join(f"{k}: {mac_distribution(v)}" for k, v in macs.items()))
    vis = _visible(u["payload"])
    hidden = u["payload"].get("hidden", 0)
    add("payload protection", set(vis) == {e.payload},
        f"every user payload {LABELS[e.payload]}",
        lambda: f"{distribution(vis, prep='in')} messages with a visible user payload"
        + (f"; hidden in {hidden:,}" if hidden else ""), unobservable=not vis and hidden > 0)
    anywhere = readable(observed)
    total = sum(t["messages"] for t in every)
    if e.encrypted:
        add("readable payload", anywhere == 0,
            "no readable user payload anywhere (something encrypts it)",
            lambda: f"readable payload in {anywhere:,} of {total:,} messages")
    else:
        add("readable payload", u["readable"] > 0,
            "user payload readable (nothing encrypts it)",
            lambda: f"readable payload in {u['readable']:,} of {n:,} user-traffic messages")
    protected = {k: v for k, v in d["rtps"].items() if k != "none" and v}
    add("discovery rtps protection",
        not protected if e.rtps == "none" else set(protected) <= {e.rtps},
        "no RTPS-level protection on discovery" if e.rtps == "none" else
        f"discovery protected at the RTPS level with {LABELS[e.rtps]} only (the handshake "
        "and participant announcements are sent before keys exist)",
        lambda: f"{distribution(d['rtps'], d['messages'])} discovery messages")
    if e.security:
        shakes = sum(t["handshake"] for t in every)
        add("authentication handshake", shakes > 0, "the authentication handshake on the wire",
            lambda: f"{shakes:,} handshake messages")
    else:
        secured = sum(t["secured"] for t in every)
        add("no security plugins", secured == 0, "no DDS Security submessage in any message",
            lambda: f"security submessages in {secured:,} of {total:,} messages")
    down = observed["shutdown"]
    if down["messages"]:
        add("shutdown", True, "not judged, except that no payload may be readable (above)",
            lambda: f"{down['messages']:,} messages after govkit stopped the processes: rtps "
            f"{distribution(down['rtps'], down['messages'])}", info=True)
    lost = observed.get("not_captured", 0)
    if lost:
        kept = sum(t["messages"] for t in every)
        add("capture", True, "every frame of the point classified",
            lambda: f"{lost:,} frames went by unclassified (the capture fell behind or hit "
            f"its memory cap); the checks cover the {kept:,} captured messages", info=True)
    if observed.get("other_senders"):
        add("other senders", True, "only the point's own two processes on its domain",
            lambda: f"{observed['other_senders']:,} datagrams to the domain's ports came from "
            "other "
            "processes (another run on the same domain id) and were left out", info=True)
    if not observed.get("attributed", True):
        add("other senders", True, "the point's own sockets known",
            lambda: "the point's sockets could not be read from /proc: every datagram on the "
            "domain's ports was taken as the point's own", info=True)
    bad = sum(t["malformed"] for t in every)
    reasons = sorted({r for t in every for r in t["errors"]})
    add("parsing", bad == 0 and not observed["ip_fragmented"],
        "every RTPS message parsed (none malformed, none IP-fragmented)",
        lambda: f"{bad:,} malformed" + (f" (first: {reasons[0]})" if reasons else "")
        + f", {observed['ip_fragmented']:,} IP-fragmented")
    return out


def receiver_mac_summary(observed: dict, traffic: str = "user") -> dict:
    """Per protected footer kind (SRTPS_POSTFIX, SEC_POSTFIX) seen in `traffic`: how many
    footers, the fewest and the most receiver-specific MACs one carried, and how many
    footers carried each count (DDS Security 1.1, 9.5.2: a CryptoFooter's
    receiver_specific_macs, one per receiver when the protection kind asks for origin
    authentication). Empty when no footer was seen, or the record predates the count."""
    out = {}
    for kind, per in sorted(observed.get(traffic, {}).get("receiver_macs", {}).items()):
        counts = {int(c): n for c, n in per.items() if n}
        if counts:
            out[kind] = {"footers": sum(counts.values()), "min": min(counts),
                         "max": max(counts), "distribution": dict(sorted(counts.items()))}
    return out


def mac_distribution(summary: dict) -> str:
    """`max M in F footers (C MACs: N, ...)`, for one footer kind of receiver_mac_summary."""
    parts = ", ".join(f"{c} MAC{'s' if c != 1 else ''}: {n:,}"
                      for c, n in summary["distribution"].items())
    return f"max {summary['max']} in {summary['footers']:,} footers ({parts})"


def headline(observed: dict) -> str:
    """One line: what the user traffic carried, and how much was readable."""
    u, d = observed["user"], observed["discovery"]
    n = u["messages"]
    parts = [f"rtps: {distribution(u['rtps'], n)} user-traffic messages"]
    for what, key in (("submessages", "submessage"), ("payload", "payload")):
        vis = _visible(u[key])
        if vis:
            parts.append(f"{what}: {distribution(vis, prep='in' if key == 'payload' else 'on')}")
        elif u[key].get("hidden"):
            parts.append(f"{what}: hidden (encrypted around them)")
    parts.append(f"payload readable in {readable(observed):,}")
    parts.append(f"discovery/handshake: {d['messages']:,} messages")
    return "; ".join(parts)


def profile_verdicts(points: list[dict]) -> dict:
    """Per profile, over its captured points: match only if every point matched; the
    expectation, each point's headline, the counts summed per traffic class, the reasons."""
    out: dict = {}
    for p in points:
        name = f"{p['mode']} {p['size']} B"
        v = out.setdefault(p["profile"], {"verdict": "match", "points": 0, "mismatched": 0,
                                          "failed": 0, "expected": p.get("expected"),
                                          "headlines": {}, "observed": {}, "reasons": []})
        v["points"] += 1
        if p["status"] != "ok":
            v["failed"] += 1
            v["verdict"] = "mismatch"
            v["reasons"].append(f"{name}: the captured run failed: {p['error']}")
            continue
        v["headlines"][name] = p["headline"]
        _add_counts(v["observed"], p["observed"])
        if p["verdict"] != "match":
            v["mismatched"] += 1
            v["verdict"] = "mismatch"
            v["reasons"] += [f"{name}: {r}" for r in p["reasons"]]
    if any("leaks" in p for p in points):     # --leaks: what an eavesdropper reads
        for name, leaks in profile_leaks(points).items():
            out[name]["leaks"] = leaks
    return out


def _add_counts(total: dict, more: dict) -> None:
    """Sum `more`'s counts into `total` (nested dicts of counts; booleans and anything
    else are not counts). One pass over each dict, no recursion per leaf."""
    stack = [(total, more)]
    while stack:
        into, add = stack.pop()
        get = into.get
        for k, v in add.items():
            kind = type(v)
            if kind is int:
                into[k] = get(k, 0) + v
            elif kind is dict:
                stack.append((into.setdefault(k, {}), v))


def judgement(expect: Expectation, observed: dict, full: bool = True) -> dict:
    """Every check of `observed` against `expect`, the verdict, the reasons and a headline
    (without `full`: the checks' texts only where they fail, and no headline)."""
    judged = checks(expect, observed, full)
    failing = [c for c in judged if c["status"] == "mismatch"]
    return {"expected": expect.to_json(), "checks": judged,
            "verdict": "mismatch" if failing else "match",
            "reasons": [f"{c['check']}: expected {c['expected']}; observed {c['observed']}"
                        for c in failing],
            "headline": headline(observed) if full else None}


_CATALOG = {p.name: p for p in PROFILES}


def judge_again(record: dict, full: bool = True) -> dict:
    """A stored wire point (results.json's `wire.points[i]`) with its verdict, reasons and
    headline judged again from its own counts, against the catalog's profile where the
    record names one: a reader (summary, report) never repeats a stored verdict that the
    stored counts contradict (without `full`: no headline, and only the failing checks'
    texts: what a report reads). Raises KeyError/TypeError/ValueError on a malformed
    record."""
    if record["status"] != "ok":
        return record
    stored = record["expected"]
    expect = Expectation.of(_CATALOG[stored["profile"]]) if stored["profile"] in _CATALOG \
        else Expectation(**{k: stored[k] for k in Expectation.__dataclass_fields__})
    return {**record, **judgement(expect, record["observed"], full),
            "stored_verdict": record.get("verdict")}
