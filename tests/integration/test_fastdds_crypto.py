"""`govkit bench --cipher` and `--rekey` on Fast DDS 2.9, with real processes and the real
crypto plugin (builtin.AES-GCM-GMAC).

What fastdds_perf says it set proves nothing about what Fast DDS did with it, so the
properties are read back off the wire: every RTPS-protected message carries a CryptoHeader
whose transformation kind names the AES key size (DDS Security 1.1, 9.5.2.1.1: 1/2 are
AES128 GMAC/GCM, 3/4 AES256) and whose session id changes each time the sender renews its
session key. If Fast DDS ignored -k or -r, the kinds would stay AES-256 and a session
would last 32 messages, and these tests fail.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from helpers.dds import next_domain, pair_bundle
from helpers.fastdds import require_fastdds, runner
from helpers.require import missing

from govkit.results.perftest_csv import csv_name
from govkit.runners.crypto import CryptoVariant
from govkit.runners.pair import Pair
from govkit.wire import rtps
from govkit.wire.capture import Capture, udp_datagrams

GOVKIT = str(Path(sys.executable).with_name("govkit"))
real = pytest.mark.fastdds
# A captured pair's traffic: at least this many round trips (each puts a protected ping
# and pong on the wire, so sessions of 32 messages fill up), in at most MAX_SLOTS slots of
# 100 ms. A quiet machine needs 2 slots.
ROUND_TRIPS = 300
MAX_SLOTS = 600


def _capture_ok() -> None:
    try:
        socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0).close()
    except (PermissionError, AttributeError, OSError):
        pytest.skip(missing("root", "raw capture on lo needs root or CAP_NET_RAW"))


def _crypto_headers(tmp_path: Path, profile: str, variant: CryptoVariant | None
                    ) -> dict[str, list[tuple[int, int, bytes, bytes]]]:
    """One real fastdds_perf -S pair of `profile` with `variant` (through the rotation's
    own Pair, govkit.runners.pair), 32-byte slots until ROUND_TRIPS round trips, captured on
    lo: per kind of CryptoHeader ('rtps': an SRTPS_PREFIX's, 'payload': a DATA's serialized
    payload), (destination port, transformation kind, key id, session id) of every one sent
    to a user-traffic port."""
    r = runner()
    bundle, work = pair_bundle(r, tmp_path, profile)
    domain = next_domain()
    name = profile if variant is None else f"{profile}@{variant.name}"
    pair = Pair(name, name, 0, domain,
                r.pair_specs(bundle, domain, None, False, work,
                             **({"variant": variant} if variant else {})), r.explain_refusal)
    with Capture("lo", rtps.PORTS.ports(domain)) as cap:
        try:
            pair.start(timeout=60)
            # Slots until ROUND_TRIPS round trips were seen, not a number of slots: how many
            # fit in a 100 ms slot is the machine's (at load 4-5 on 2 CPUs, fewer than the
            # 50 per slot this once asserted; issue 37, item 16). The pair's own slot
            # timeout bounds each slot; MAX_SLOTS bounds the whole.
            seen = 0
            for _ in range(MAX_SLOTS):
                row = pair.slot(32, 0, 100_000)
                assert row["peers"] == 1, row
                seen += row["n"]
                if seen >= ROUND_TRIPS:
                    break
            assert seen >= ROUND_TRIPS, f"{seen} round trips in {MAX_SLOTS} slots"
        finally:
            pair.close()
    found: dict[str, list] = {"rtps": [], "payload": []}
    for _, port, msg, _ in udp_datagrams(cap.frames):
        if rtps.PORTS.traffic(domain, port) != "user":
            continue
        subs, _ = rtps.submessages(msg)
        for s in subs:
            if s.id == rtps.SRTPS_PREFIX:
                head = msg[s.offset:s.offset + 12]
                found["rtps"].append((port, head[3], head[4:8], head[8:12]))
            elif s.id in (rtps.DATA, rtps.DATA_FRAG) and \
                    rtps.payload_kind(msg, s) in ("gcm", "gmac"):
                q = rtps.payload_offset(msg, s)
                found["payload"].append((port, msg[q + 3], msg[q + 4:q + 8],
                                         msg[q + 8:q + 12]))
    return found


def _longest_session(headers) -> int:
    """The most messages any one session key protected (per destination, key id, session)."""
    return max(Counter((port, key, session) for port, _, key, session in headers).values())


@real
def test_the_key_size_and_the_rekey_interval_reach_the_crypto_plugin(tmp_path):
    """sign_origin_data_encrypt: RTPS-level AES-GMAC (the participant's key) and an
    AES-GCM payload (the writer's key). -k 128 turns both into AES-128; -r 4 makes every
    session key protect at most 4 messages. The same pair without them: AES-256, sessions
    of up to 32."""
    _capture_ok()
    tuned = _crypto_headers(tmp_path / "tuned", "sign_origin_data_encrypt",
                            CryptoVariant("aes128", 4))
    default = _crypto_headers(tmp_path / "default", "sign_origin_data_encrypt", None)
    for headers in (tuned, default):
        assert len(headers["rtps"]) > 200 and len(headers["payload"]) > 100
    assert {kind for _, kind, _, _ in tuned["rtps"]} == {1}             # AES128_GMAC
    assert {kind for _, kind, _, _ in default["rtps"]} == {3}           # AES256_GMAC
    assert {kind for _, kind, _, _ in tuned["payload"]} == {2}          # AES128_GCM
    assert {kind for _, kind, _, _ in default["payload"]} == {4}        # AES256_GCM
    assert _longest_session(tuned["rtps"]) <= 4
    assert _longest_session(tuned["payload"]) <= 4
    assert len({s for *_, s in tuned["rtps"]}) > len(tuned["rtps"]) / 5
    assert 4 < _longest_session(default["rtps"]) <= 32


@real
def test_rtps_level_encryption_follows_the_key_size(tmp_path):
    """rtps_encrypt hides everything in an RTPS-level AES-GCM body: its kind is the
    participant's key size (2: AES128_GCM with -k 128, 4: AES256_GCM without)."""
    _capture_ok()
    tuned = _crypto_headers(tmp_path / "tuned", "rtps_encrypt", CryptoVariant("aes128"))
    default = _crypto_headers(tmp_path / "default", "rtps_encrypt", CryptoVariant("aes256"))
    assert {kind for _, kind, _, _ in tuned["rtps"]} == {2}
    assert {kind for _, kind, _, _ in default["rtps"]} == {4}


@real
def test_bench_with_both_ciphers_holds_each_and_their_paired_difference(tmp_path):
    """A short real run (3 rounds, one size): both variants of the secured profile are
    points of their own, each paired with `none`, and AES-128 against AES-256 has a
    difference with an interval, in results.json, the report and summary.md."""
    runner()                                     # skips (or fails in CI) without Fast DDS
    out = subprocess.run(
        [GOVKIT, "bench", "--runner", "fastdds", "--profile", "none", "--profile",
         "rtps_encrypt", "--cipher", "aes128,aes256", "--sizes", "32", "--rounds", "3",
         "--budget", "1", "--out", "res"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stdout + out.stderr
    doc = json.loads((tmp_path / "res" / "results.json").read_text())
    crypto = doc["settings"]["crypto"]
    assert crypto["ciphers"] == ["aes128", "aes256"] and crypto["rekeys"] == []
    assert "session key renewed every 32" in crypto["defaults"]
    assert [v["applied"]["properties"] for v in crypto["variants"]] == [
        {"dds.sec.crypto.keysize": "128"}, {"dds.sec.crypto.keysize": "256"}]
    rot = doc["rotation"]
    arms = {p["arm"] for p in rot["pairs"]}
    assert arms == {"none", "none:aa", "rtps_encrypt@aes128", "rtps_encrypt@aes256"}
    for p in rot["pairs"]:
        bits = (p.get("variant") or {}).get("key_bits")
        assert p["status"] == "ok"
        assert all(("-k" in c) == (bits is not None) for c in p["commands"])
        if bits:
            assert all(c.split("-k ")[1].split()[0] == str(bits) for c in p["commands"])
    rows = {x["profile"]: x for x in doc["summary"]}
    assert rows["rtps_encrypt@aes128"]["variant"]["cipher"] == "aes128"
    assert rows["rtps_encrypt@aes128"]["vs_none"]["ratio"] > 1      # each paired with none
    (diff,) = rows["rtps_encrypt@aes128"]["vs_variant"]
    assert diff["dimension"] == "cipher" and diff["reference"] == "rtps_encrypt@aes256"
    assert diff["rounds"] == 3 and diff["difference_ci95"] and diff["difference_pct_ci95"]
    lo, hi = diff["difference_ci95"]
    assert lo <= diff["difference"] <= hi
    assert diff["rti"]["aes256_us"] == 25 and diff["rti"]["aes128_us"] == 24
    assert rows["rtps_encrypt@aes256"]["vs_variant"] == []           # the reference
    assert (tmp_path / "res" / csv_name("rtps_encrypt@aes128", "latency")).exists()
    md = (tmp_path / "res" / "summary.md").read_text()
    assert "AES-128 − AES-256 (µs)" in md and "| `rtps_encrypt` | 32 |" in md
    assert 'id="cipher-table"' in (tmp_path / "res" / "report.html").read_text()
    assert "Crypto variants" in out.stdout
    again = subprocess.run([GOVKIT, "report", "res"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "res" / "summary.md").read_text() == md     # recomputed alike


@real
def test_the_program_takes_only_key_sizes_and_rekey_intervals_fast_dds_reads(tmp_path):
    """-k 128|256 and -r N >= 1 (Fast DDS ignores other values and keeps its default: a
    typo would silently measure AES-256), and only with security properties (-s)."""
    exe = require_fastdds()
    props = tmp_path / "p.properties"
    props.write_text("dds.sec.crypto.plugin=builtin.AES-GCM-GMAC\n")
    for args in (["-k", "192"], ["-k", "128"], ["-r", "0"], ["-r", "4.5"],
                 ["-s", str(props), "-k", "192"], ["-s", str(props), "-r", "-3"]):
        bad = subprocess.run([exe, "-S", *args, "pong"], capture_output=True, text=True,
                             timeout=30, stdin=subprocess.DEVNULL)
        assert bad.returncode == 2 and "usage: fastdds_perf" in bad.stderr, args
