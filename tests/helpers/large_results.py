"""Large but valid results.json documents, the shapes a long or odd run can give (issue 23,
item 9): tens of thousands of per-second rows or of repeats, hundreds of profiles or sizes,
a profile name of 200,000 characters, a rotating run of thousands of rounds. Both designs:
the per-repeat one (`results` with raw per-second rows, schema govkit.bench/2 and /3) and
the rotating one (`rotation.slots`, "latency-slots", /3).

Every value is what a runner could have written (govkit.results.check accepts each
document), drawn from a seeded generator, so a document is the same on every call. Used by
tests/report/test_large_results.py and benchmarks/bench_report.py.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

from govkit.catalog.profiles import PROFILES

LATENCY_METHOD = "synthetic: tests/helpers/large_results.py"


def _latency_row(rand: random.Random, t: float, level: float) -> dict:
    p50 = round(level * rand.uniform(0.9, 1.1), 3)
    return {"t": t, "count": rand.randint(3000, 20000), "mean": round(p50 * 1.1, 3),
            "min": round(p50 * 0.6, 3), "p50": p50, "p90": round(p50 * 1.4, 3),
            "p99": round(p50 * 3, 3), "max": round(p50 * 9, 3)}


def _throughput_row(rand: random.Random, t: float, level: float) -> dict:
    rate = round(level * rand.uniform(0.9, 1.1), 1)
    return {"t": t, "count": int(rate), "lost": 0, "rate_sps": rate,
            "mbps": round(rate * 1024 * 8 / 1e6, 2)}


def _profile_entry(name: str) -> dict:
    known = {p.name: p for p in PROFILES}.get(name)
    security = known.security if known else True
    return {"name": name, "title": known.title if known else "synthetic", "security": security,
            "aliases": [], "settings": known.governance_settings() if known else {}}


def per_repeat(profiles: list[str], sizes: list[int], repeats: int, seconds: int,
               modes: tuple[str, ...] = ("latency",), warmup: int = 1,
               schema: str = "govkit.bench/3", seed: int = 1) -> dict:
    """The per-repeat design: every profile × mode × size × repeat, `warmup` + `seconds`
    per-second rows each (ddsperf's latency-per-second / throughput-per-second)."""
    rand = random.Random(seed)
    results = []
    order = 0
    for mode in modes:
        for pi, profile in enumerate(profiles):
            for size in sizes:
                level = (20 + 3 * pi) * (1 + math.log10(max(size, 10)) / 4)
                for rep in range(repeats):
                    make = _latency_row if mode == "latency" else _throughput_row
                    rows = [make(rand, float(t + 1), level if mode == "latency"
                                 else 1e5 / (1 + pi))
                            for t in range(warmup + seconds)]
                    results.append({
                        "profile": profile, "mode": mode, "size": size, "repeat": rep,
                        "order": order, "domain_id": 1, "commands": ["synthetic"],
                        "status": "ok", "error": None,
                        "raw": {"format": f"{mode}-per-second", "rows": rows},
                        "warmup_rows": warmup, "measured_rows": seconds,
                        "cpus": {"pub": "0", "sub": "1"}})
                    order += 1
    return {"schema": schema, "created": "2026-12-02T00:00:00+00:00",
            "command": "govkit bench (synthetic)", "runner": "ddsperf",
            "environment": {"cpu": "synthetic"},
            "settings": {"runner": "ddsperf", "modes": list(modes), "sizes": sorted(sizes),
                         "profiles": list(profiles), "duration_s": seconds,
                         "warmup_s": warmup, "min_repeats": repeats, "max_repeats": repeats,
                         "target_ci_pct": 5.0, "seed": seed, "method": LATENCY_METHOD},
            "profiles": [_profile_entry(p) for p in profiles], "signed_files": [],
            "results": results, "summary": []}


def _hist(rand: random.Random, p50: float, n: int) -> str:
    centre = round(math.log(p50 * 1e3) / math.log(1.01))
    bins: dict[int, int] = {}
    for _ in range(min(n, 40)):
        b = centre + round(rand.gauss(0, 3))
        bins[b] = bins.get(b, 0) + max(1, n // 40)
    return ",".join(f"{b}:{c}" for b, c in sorted(bins.items()))


def rotating(profiles: list[str], sizes: list[int], rounds: int, instances: int = 3,
             seed: int = 2) -> dict:
    """The rotating design (govkit.bench.rotation): per round and size, every arm (each
    secured profile and the A/A arm `none:aa`) gets one slot between two `none` slots."""
    rand = random.Random(seed)
    arms = [p for p in profiles if p != "none"] + ["none:aa"]
    slots = []
    for rnd in range(rounds):
        for size in sizes:
            position = 0
            order = arms[:]
            rand.shuffle(order)
            sequence = ["none"]
            for arm in order:
                sequence += [arm, "none"]
            for arm in sequence:
                index = arms.index(arm) + 1 if arm in arms else 0
                p50 = round(15 * (1 + 0.1 * (index if arm != "none:aa" else 0))
                            * rand.uniform(0.95, 1.05) * (1 + size / 1e5), 3)
                n = rand.randint(1000, 3000)
                slots.append({
                    "round": rnd, "position": position, "arm": arm,
                    "profile": "none" if arm == "none:aa" else arm,
                    "instance": rand.randrange(instances), "size": size, "n": n,
                    "mean": round(p50 * 1.05, 3), "min": round(p50 * 0.8, 3), "p50": p50,
                    "p90": round(p50 * 1.1, 3), "p99": round(p50 * 1.5, 3),
                    "max": round(p50 * 8, 3), "cpu_us": 50000, "wall_us": 110000,
                    "pong_cpu_us": 40000, "hist": _hist(rand, p50, n), "count": n,
                    "status": "ok"})
                position += 1
    pairs = [{"arm": arm, "profile": "none" if arm == "none:aa" else arm, "instance": i,
              "domain_id": 1, "commands": ["synthetic"], "status": "ok",
              "time_to_match_s": 0.01}
             for arm in ["none", *arms] for i in range(instances)]
    doc = per_repeat(profiles, sizes, 0, 1, seed=seed)
    doc["settings"].update(runner="cyclone", min_repeats=3, max_repeats=8)
    doc["runner"] = "cyclone"
    doc["rotation"] = {"pairs": pairs, "slots": slots,
                       "rounds": [{"round": r, "seconds": 0.5} for r in range(rounds)],
                       "settings": {"instances": instances, "slot_ms": 100, "settle_ms": 10,
                                    "min_rounds": 10, "target_ci_pct": 3.0},
                       "method": LATENCY_METHOD}
    doc["load"] = [{"loadavg_before": [0.1, 0.1, 0.1], "steal_pct": 0.0,
                    "under_load": False, "busy_processes": []}]
    return doc


def with_wire_points(doc: dict, n: int) -> dict:
    """`doc` with n captured points under `wire` (what `--wire --leaks` stores), one per
    catalog profile and size in turn: the counts a profile's traffic gives, and the
    verdict, reasons and headline govkit.wire.verdict writes from them; every 997th point a
    mismatch (readable payload where the governance encrypts it). The first point of `none`
    and of `rtps_encrypt` carry what the eavesdropper read in the real captures of
    tests/data/wire/leaks/. (The per-check texts are left out, as a file of 20,000 points
    with them would pass results.json's size limit.)"""
    from govkit.wire.leaks import capture_file_point
    from govkit.wire.verdict import Expectation, judgement, profile_verdicts
    data = Path(__file__).resolve().parent.parent / "data" / "wire" / "leaks"
    readings = {name: capture_file_point(data / f"cyclone-{name}.pcap")["leaks"]
                for name in ("none", "rtps_encrypt")}

    def point(profile, readable: int | None = None) -> dict:
        e = Expectation.of(profile)
        messages = 20_000
        readable = (0 if e.encrypted else messages) if readable is None else readable
        hidden = "gcm" in (e.rtps, e.submessage)
        user = {"messages": messages, "bytes": messages * 1100, "rtps": {e.rtps: messages},
                "rtps_origin_auth": {} if e.rtps == "none" else
                {"yes" if e.rtps_origin else "no": messages},
                "submessage": {"hidden" if e.rtps == "gcm" else e.submessage: messages},
                "submessage_origin_auth": {"yes" if e.submessage_origin else "no": messages}
                if e.submessage != "none" and e.rtps != "gcm" else {"absent": messages},
                "payload": {"hidden" if hidden else e.payload: messages},
                "readable": readable, "filler": readable,
                "secured": messages if e.security and e.rtps != "none" or hidden else 0,
                "handshake": 0, "malformed": 0, "submessages": {"DATA": messages},
                "errors": {}}
        discovery = {**user, "messages": 120, "bytes": 50_000, "rtps": {"none": 120},
                     "rtps_origin_auth": {}, "submessage": {"none": 120},
                     "submessage_origin_auth": {"absent": 120}, "payload": {"absent": 120},
                     "readable": 0, "filler": 0, "secured": 8 if e.security else 0,
                     "handshake": 6 if e.security else 0, "submessages": {"DATA": 120}}
        shutdown = {**discovery, "messages": 0, "bytes": 0, "rtps": {}, "submessage": {},
                    "submessage_origin_auth": {}, "payload": {}, "secured": 0,
                    "handshake": 0, "submessages": {}}
        observed = {"non_rtps": 2, "ip_fragmented": 0, "user": user,
                    "discovery": discovery, "shutdown": shutdown, "not_captured": 0,
                    "other_senders": 0, "attributed": True}
        judged = judgement(e, observed)
        del judged["checks"]
        return {"profile": profile.name, "mode": "latency", "status": "ok", "error": None,
                "commands": ["synthetic"], "pcap": None, "observed": observed, **judged}

    templates = {p.name: point(p) for p in PROFILES}
    points = []
    for i in range(n):
        profile = PROFILES[i % len(PROFILES)]
        base = point(profile, 3) if i % 997 == 996 and Expectation.of(profile).encrypted \
            else templates[profile.name]
        one = {**base, "size": 16 + i // len(PROFILES), "domain_id": 1 + i % 230}
        if i < len(PROFILES) and profile.name in readings:
            one["leaks"] = readings[profile.name]
        points.append(one)
    doc["wire"] = {"method": "synthetic: tests/helpers/large_results.py", "points": points,
                   "profiles": profile_verdicts(points)}
    return doc


def catalog(n: int) -> list[str]:
    """`none` first, then the catalog's secured profiles, then made-up ones up to n."""
    names = [p.name for p in PROFILES]
    return names[:n] + [f"extra_{i:04d}" for i in range(max(0, n - len(names)))]


# The shapes the hostile battery's item 9 names, each at the size it tried (scale 1); the
# benchmark also makes them at a quarter of that, to show the work grows linearly.
def shapes(scale: float = 1.0) -> dict[str, dict]:
    def n(x: int) -> int:
        return max(1, round(x * scale))

    long_name = "p" * n(200_000)
    return {
        # tens of thousands of per-second rows: 3 profiles × 2 sizes × 4 repeats × 1500 s
        "many_seconds": per_repeat(catalog(3), [32, 1024], 4, n(1500)),
        # tens of thousands of repeats, a few seconds each
        "many_repeats": per_repeat(catalog(2), [32], n(10_000), 2),
        # hundreds of profiles
        "many_profiles": per_repeat(catalog(n(300)), [32], 2, 5),
        # hundreds of sizes
        "many_sizes": per_repeat(catalog(2), list(range(16, 16 + n(300) * 64, 64)), 2, 5),
        # a profile name of 200,000 characters, latency and throughput
        "long_name": per_repeat(["none", long_name], [32, 1024], 3, 10,
                                modes=("latency", "throughput")),
        # the rotating design: thousands of rounds, and hundreds of arms
        "many_rounds": rotating(catalog(3), [32, 1024], n(3000)),
        "many_arms": rotating(catalog(n(150)), [32], 20),
        # the older per-repeat design (schema /2), throughput, many seconds
        "throughput_v2": per_repeat(catalog(3), [1024], 3, n(3000), modes=("throughput",),
                                    schema="govkit.bench/2"),
        # 20,000 captured points of `--wire --leaks` (issue 37: over 10 s)
        "many_wire_points": with_wire_points(per_repeat(catalog(7), [1024], 2, 5),
                                             n(20_000)),
    }
