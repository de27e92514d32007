"""govkit.wire.rtps / wire_verdict / capture on recorded RTPS datagrams (tests/data/wire/, real
Cyclone DDS 0.10 traffic; see its README) and hand-built ones: every submessage kind the
parser knows, truncated and malformed datagrams (never a crash), the expectation per
catalog profile, the checks, and the capture's frame and pcap handling. No root needed."""

from __future__ import annotations

import json
import random
import struct
from pathlib import Path

import pytest

from govkit.catalog.profiles import PROFILES, get_profile
from govkit.report.terminal import wire_table
from govkit.results.summary import summarize
from govkit.runners.ddsperf import DdsperfRunner
from govkit.wire import rtps
from govkit.wire.capture import bpf_program, pcap_bytes, udp_datagrams
from govkit.wire.verdict import Expectation, profile_verdicts

DATA = Path(__file__).parent.parent / "data" / "wire"
INDEX = json.loads((DATA / "index.json").read_text())
RECORDED = sorted(k for k in INDEX if not k.startswith("malformed/"))
MALFORMED = sorted(k for k in INDEX if k.startswith("malformed/"))
EE = b"\xee"


def load(name: str) -> bytes:
    return (DATA / f"{name}.bin").read_bytes()


# ------------------------------------------------------------------ recorded messages

# name: (rtps, rtps origin MACs, submessage, submessage origin MACs, payload, readable,
#        handshake)
WHAT = {
    "none-user-data": ("none", None, "none", "absent", "plain", True, False),
    "none-user-data-heartbeat": ("none", None, "none", "absent", "plain", True, False),
    "none-user-acknack": ("none", None, "none", "absent", "absent", False, False),
    "none-spdp": ("none", None, "none", "absent", "absent", False, False),
    "none-sedp-inline-qos": ("none", None, "none", "absent", "absent", False, False),
    "none-user-frag-first": ("none", None, "none", "absent", "plain", True, False),
    # a later fragment: no encapsulation header to classify, but the filler is readable
    "none-user-frag-later": ("none", None, "none", "absent", "absent", True, False),
    "no_protection-handshake": ("none", None, "none", "absent", "absent", False, True),
    "no_protection-volatile-secure": ("none", None, "gcm", "no", "hidden", False, False),
    "rtps_sign-user-data": ("gmac", False, "none", "absent", "plain", True, False),
    "rtps_encrypt-user-data": ("gcm", False, "hidden", "absent", "hidden", False, False),
    "sign_origin_data_encrypt-user-data": ("gmac", True, "none", "absent", "gcm", False,
                                           False),
    "sign_origin_data_encrypt-user-frag-first": ("gmac", True, "none", "absent", "gcm",
                                                 False, False),
    "sign_submsg_encrypt-user": ("gmac", False, "gcm", "no", "hidden", False, False),
    "sign_submsg_encrypt_origin_data_encrypt-user": ("gmac", False, "gcm", "yes", "hidden",
                                                     False, False),
}


def test_every_recorded_message_is_described():
    assert sorted(WHAT) == RECORDED
    kinds = {n for k in RECORDED for n in INDEX[k]["submessages"]}
    # every DDS Security and data submessage kind, from real traffic
    assert {"SRTPS_PREFIX", "SRTPS_POSTFIX", "SEC_PREFIX", "SEC_BODY", "SEC_POSTFIX", "DATA",
            "DATA_FRAG", "HEARTBEAT", "HEARTBEAT_FRAG", "ACKNACK", "INFO_TS", "INFO_DST",
            "INFO_SRC"} <= kinds


@pytest.mark.parametrize("name", RECORDED)
def test_recorded_message(name):
    msg = load(name)
    subs, error = rtps.submessages(msg)
    assert error is None
    assert [s.name for s in subs] == INDEX[name]["submessages"]
    assert subs[-1].offset + subs[-1].length == len(msg)       # the walk covers it all
    m = rtps.classify(msg, EE)
    assert m.error is None
    assert (m.rtps, m.rtps_origin, m.submessage, m.submessage_origin, m.payload, m.readable,
            m.handshake) == WHAT[name]
    assert m.secured == any(n.startswith(("SEC_", "SRTPS_")) for n in m.kinds)


def test_filler_alone_makes_a_payload_readable():
    """No structure needed: ddsperf's filler anywhere in the clear is a readable sample."""
    later = load("none-user-frag-later")
    assert rtps.classify(later, EE).readable
    assert not rtps.classify(later, None).readable      # a runner without a known filler
    assert not rtps.classify(load("rtps_encrypt-user-data"), EE).filler


def test_crypto_header_and_footer_fields():
    msg = load("sign_origin_data_encrypt-user-data")
    subs, _ = rtps.submessages(msg)
    assert rtps.transform(msg, subs[0]) == "gmac"
    assert msg[subs[0].offset:subs[0].offset + 4] == b"\0\0\0\x03"    # AES256_GMAC
    assert rtps.receiver_macs(msg, subs[-1]) == 1                      # origin auth
    data = next(s for s in subs if s.id == rtps.DATA)
    assert data.flags & 0x02                            # inline QoS (key hash) then payload
    assert rtps.payload_kind(msg, data) == "gcm"
    enc = load("rtps_encrypt-user-data")
    subs, _ = rtps.submessages(enc)
    assert enc[subs[0].offset:subs[0].offset + 4] == b"\0\0\0\x04"    # AES256_GCM
    assert rtps.receiver_macs(enc, subs[-1]) == 0


# ------------------------------------------------------------------- malformed input

WHERE = {
    "malformed/short-header": "shorter than an RTPS header",
    "malformed/cut-submessage-header": "stray byte",
    "malformed/cut-data": "DATA at byte 32 claims",
    "malformed/cut-crypto-header": "CryptoHeader needs 20",
    "malformed/cut-sec-body": "SEC_BODY at byte 44 claims",
    "malformed/cut-srtps-postfix": "receiver-specific MAC count does not fit",
    "malformed/cut-inline-qos": "inline QoS runs past",
    "malformed/cut-sec-postfix": "CryptoFooter needs 20",
    "malformed/cut-frag": "DATA_FRAG of 24 bytes",
}


@pytest.mark.parametrize("name", MALFORMED)
def test_hand_truncated_message_is_malformed_not_a_crash(name):
    msg = load(name)
    assert len(msg) == INDEX[name]["bytes"]
    m = rtps.classify(msg, EE)
    assert m.error and WHERE[name] in m.error, m.error
    assert m.rtps != "none" or not msg[20:21] == b"\x33"     # a broken SRTPS is not "none"


def test_cut_plaintext_is_still_readable():
    assert rtps.classify(load("malformed/cut-data"), EE).readable


def test_every_truncation_and_random_damage_never_crashes():
    rng = random.Random(9)
    for name in RECORDED:
        msg = load(name)
        for cut in range(0, len(msg) + 1, max(1, len(msg) // 300)):
            rtps.classify(msg[:cut], EE)
        for _ in range(150):
            damaged = bytearray(msg)
            for _ in range(rng.randint(1, 6)):
                damaged[rng.randrange(len(damaged))] = rng.randrange(256)
            m = rtps.classify(bytes(damaged), EE)
            assert isinstance(m.error, str | None)
    for _ in range(3000):
        rtps.classify(b"RTPS\x02\x01" + rng.randbytes(rng.randint(0, 120)), EE)


def test_many_tiny_submessages_are_one_linear_walk():
    msg = b"RTPS\x02\x01\x01\x10" + bytes(12) + b"\x01\x01\x00\x00" * 16000   # 64 KB of PAD
    subs, error = rtps.submessages(msg)
    assert len(subs) == 16000 and error is None
    assert rtps.classify(msg).submessage == "absent"


# --------------------------------------------------- hand-built: kinds Cyclone did not send

HEADER = b"RTPS\x02\x05\x01\x10" + bytes(12)
USER_WRITER, USER_READER, BUILTIN_WRITER = b"\0\0\x0a\x02", b"\0\0\x09\x07", b"\0\x01\x00\xc2"


def sub(sid: int, body: bytes, flags: int = 1, length: int | None = None) -> bytes:
    n = len(body) if length is None else length
    return bytes([sid, flags]) + struct.pack("<H" if flags & 1 else ">H", n) + body


def data(writer=USER_WRITER, payload=b"\x00\x01\x00\x00" + EE * 20, flags=0x05,
         inline_qos=b"") -> bytes:
    body = b"\0\0" + struct.pack("<H", 16) + USER_READER + writer + struct.pack("<iI", 0, 1)
    return sub(rtps.DATA, body + inline_qos + payload, flags | (0x02 if inline_qos else 0))


@pytest.mark.parametrize("sid,body", [
    (rtps.PAD, b""),
    (rtps.PAD, bytes(8)),
    (rtps.GAP, USER_READER + USER_WRITER + struct.pack("<iIiII", 0, 5, 0, 6, 0)),
    (rtps.NACK_FRAG, USER_READER + USER_WRITER + struct.pack("<iIII", 0, 1, 1, 0) +
     struct.pack("<I", 1)),
    (rtps.INFO_REPLY, struct.pack("<I", 0)),
    (rtps.INFO_REPLY_IP4, struct.pack("<II", 0x7F000001, 7411)),
    (0x80, b"vendor"),                           # vendor-specific: skipped by length
], ids=["pad-empty", "pad", "gap", "nack-frag", "info-reply", "info-reply-ip4", "vendor"])
def test_hand_built_submessages_parse(sid, body):
    msg = HEADER + sub(sid, body) + data()
    subs, error = rtps.submessages(msg)
    assert error is None and [s.id for s in subs] == [sid, rtps.DATA]
    m = rtps.classify(msg, EE)
    assert m.error is None and m.payload == "plain" and m.readable
    if sid in (rtps.GAP, rtps.NACK_FRAG):
        assert m.submessage == "none"


def test_big_endian_submessages_and_info_ts_invalidate():
    msg = HEADER + sub(rtps.INFO_TS, b"", flags=0x02, length=0) + \
        sub(rtps.HEARTBEAT, USER_READER + USER_WRITER + bytes(20), flags=0x00)
    subs, error = rtps.submessages(msg)
    assert error is None and [s.id for s in subs] == [rtps.INFO_TS, rtps.HEARTBEAT]
    assert subs[1].length == 28 and not subs[1].little


def test_zero_length_last_submessage_runs_to_the_end():
    msg = HEADER + data()[:2] + b"\0\0" + data()[4:]
    subs, error = rtps.submessages(msg)
    assert error is None and subs[0].offset + subs[0].length == len(msg)
    assert rtps.classify(msg, EE).payload == "plain"


@pytest.mark.parametrize("msg,reason", [
    (HEADER + sub(rtps.SEC_BODY, bytes(24)), "SEC_BODY without SEC_PREFIX"),
    (HEADER + sub(rtps.SEC_PREFIX, b"\0\0\0\x02" + bytes(16)) + data(),
     "SEC_PREFIX without SEC_POSTFIX"),
    (HEADER + sub(rtps.SEC_POSTFIX, bytes(20)), "SEC_POSTFIX without SEC_PREFIX"),
    (HEADER + data() + sub(rtps.SRTPS_PREFIX, bytes(20)), "SRTPS_PREFIX inside"),
    (HEADER + sub(rtps.SRTPS_PREFIX, b"\0\0\0\x01" + bytes(16)) + data(),
     "SRTPS_PREFIX without SRTPS_POSTFIX"),
    (b"RTPX" + HEADER[4:] + data(), "no RTPS magic"),
    (b"RTPS\x01\x00" + HEADER[6:] + data(), "protocol version 1.0"),
    (HEADER + sub(rtps.DATA, bytes(8)), "DATA of 8 bytes"),
    (HEADER + data(inline_qos=struct.pack("<HH", 0x70, 200)), "inline QoS runs past"),
    (HEADER + sub(rtps.HEARTBEAT, bytes(4)), "no writerId"),
])
def test_malformed_hand_built_messages(msg, reason):
    m = rtps.classify(msg, EE)
    assert m.error and reason in m.error, m.error


def test_payload_kinds():
    assert rtps.classify(HEADER + data(payload=b"\0\0\0\x04" + bytes(60))).payload == "gcm"
    assert rtps.classify(HEADER + data(payload=b"\0\0\0\x03" + bytes(60))).payload == "gmac"
    assert rtps.classify(HEADER + data(payload=b"\x12\x34" + bytes(60))).payload == "unknown"
    assert rtps.classify(HEADER + data(flags=0x01)).payload == "absent"      # no D/K flag
    builtin = rtps.classify(HEADER + data(writer=BUILTIN_WRITER), EE)
    assert builtin.payload == "absent" and builtin.readable          # builtin: not user data
    signed = rtps.classify(HEADER + data(payload=b"\0\0\0\x03" + bytes(60)))
    assert signed.readable                                           # GMAC: signed, readable


# -------------------------------------------------------------- expectation and checks

@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_expectation_follows_the_catalog(profile):
    e = Expectation.of(profile)
    kinds = {None: "none", "NONE": "none", "SIGN": "gmac", "ENCRYPT": "gcm"}
    assert e.rtps == kinds[(profile.rtps_protection_kind or "NONE").split("_WITH")[0]]
    assert e.submessage == kinds[(profile.metadata_protection_kind or "NONE").split("_WITH")[0]]
    assert e.rtps_origin == ("ORIGIN" in (profile.rtps_protection_kind or ""))
    assert e.submessage_origin == ("ORIGIN" in (profile.metadata_protection_kind or ""))
    assert e.payload == {None: "plain", "NONE": "plain", "ENCRYPT": "gcm"}[
        profile.data_protection_kind]
    assert e.security == profile.security
    assert e.encrypted == any("ENCRYPT" in (k or "") for k in (
        profile.rtps_protection_kind, profile.metadata_protection_kind,
        profile.data_protection_kind))


DOMAIN = 3


def stream(*names, traffic="user", repeat=5, t=0):
    base = rtps.PORTS.ports(DOMAIN).start
    port = base + (11 if traffic == "user" else 10)
    return [(t, port, load(n), False) for n in names for _ in range(repeat)]


def own_traffic(profile: str) -> list:
    user = [n for n in RECORDED if n.startswith(profile + "-") and INDEX[n]["traffic"] == "user"
            and INDEX[n]["size"] == 1024]
    return stream(*user) + stream("no_protection-handshake", traffic="discovery")


@pytest.mark.parametrize("name", ["rtps_sign", "rtps_encrypt", "sign_origin_data_encrypt",
                                  "sign_submsg_encrypt",
                                  "sign_submsg_encrypt_origin_data_encrypt"])
def test_recorded_traffic_matches_its_own_governance_only(name):
    for other in PROFILES:
        result = rtps.analyse(own_traffic(name), DOMAIN, Expectation.of(other), EE)
        assert (result["verdict"] == "match") == (other.name == name), \
            (other.name, result["reasons"])


def test_plain_traffic_against_an_encrypting_governance_names_the_readable_payload():
    traffic = stream("none-user-data", "none-user-acknack")
    result = rtps.analyse(traffic, DOMAIN, Expectation.of(get_profile("rtps_encrypt")), EE)
    assert result["verdict"] == "mismatch"
    text = "\n".join(result["reasons"])
    assert "readable payload in 5 of 10 messages" in text
    assert "expected GCM on every user-traffic message" in text
    ok = rtps.analyse(traffic, DOMAIN, Expectation.of(get_profile("none")), EE)
    assert ok["verdict"] == "match", ok["reasons"]
    assert ok["headline"].startswith("rtps: none on 100 % of 10 user-traffic messages")


def test_shutdown_traffic_is_reported_but_only_readability_is_judged():
    run = stream("rtps_encrypt-user-data", t=1)
    late_ack = stream("none-user-acknack", repeat=1, t=9)       # after govkit's stop
    e = Expectation.of(get_profile("rtps_encrypt"))
    judged = rtps.analyse(run + late_ack + stream("no_protection-handshake", traffic="discovery"),
                          DOMAIN, e, EE, stop_ns=5)
    assert judged["verdict"] == "match", judged["reasons"]
    assert judged["observed"]["shutdown"]["rtps"] == {"none": 1}
    assert any(c["check"] == "shutdown" and c["status"] == "info" for c in judged["checks"])
    leak = rtps.analyse(run + stream("none-user-data", repeat=1, t=9), DOMAIN, e, EE,
                        stop_ns=5)
    assert leak["verdict"] == "mismatch"
    assert "readable payload in 1 of" in "\n".join(leak["reasons"])
    unstopped = rtps.analyse(run + late_ack, DOMAIN, e, EE)         # no stop time known
    assert unstopped["verdict"] == "mismatch"


def test_malformed_and_fragmented_datagrams_fail_the_parsing_check():
    e = Expectation.of(get_profile("none"))
    good = stream("none-user-data")
    bad = rtps.analyse(good + stream("malformed/cut-data", repeat=1), DOMAIN, e, EE)
    assert bad["verdict"] == "mismatch"
    assert "1 malformed (first: DATA at byte 32 claims" in "\n".join(bad["reasons"])
    frag = rtps.analyse(good + [(0, rtps.PORTS.ports(DOMAIN).start + 11, b"RTPS", True)],
                        DOMAIN, e, EE)
    assert frag["observed"]["ip_fragmented"] == 1 and frag["verdict"] == "mismatch"
    other = rtps.analyse(good + [(0, 1, b"\x00", False)], DOMAIN, e, EE)
    assert other["observed"]["non_rtps"] == 1 and other["verdict"] == "match"


def test_no_traffic_is_no_proof():
    result = rtps.analyse([], DOMAIN, Expectation.of(get_profile("rtps_encrypt")), EE)
    assert result["verdict"] == "mismatch"
    assert result["reasons"][0].startswith("user traffic: expected RTPS user-traffic")


def test_lost_frames_are_said():
    result = rtps.analyse(stream("none-user-data"), DOMAIN, Expectation.of(get_profile("none")),
                          EE, lost=7)
    capture = next(c for c in result["checks"] if c["check"] == "capture")
    assert capture["status"] == "info" and capture["observed"].startswith("7 frames")


def test_port_mapping():
    ports = rtps.PORTS.ports(DOMAIN)
    assert (ports.start, ports.stop) == (7400 + 750, 7400 + 1000)
    kinds = {off: rtps.PORTS.traffic(DOMAIN, ports.start + off) for off in range(0, 16)}
    assert [o for o, k in kinds.items() if k == "discovery"] == [0, 10, 12, 14]
    assert [o for o, k in kinds.items() if k == "user"] == [1, 11, 13, 15]
    assert kinds[5] == "other"


# ---------------------------------------------------- records, table, summary flag

def record(profile="rtps_encrypt", expect="rtps_encrypt", traffic=None):
    e = Expectation.of(get_profile(expect))
    rec = {"profile": profile, "mode": "latency", "size": 1024, "status": "ok",
           "error": None, **rtps.analyse(traffic or own_traffic(profile), DOMAIN, e, EE)}
    return rec


def test_profile_verdicts_and_the_table():
    good, bad = record(), record("none", "rtps_encrypt", stream("none-user-data"))
    failed = {"profile": "rtps_sign", "mode": "latency", "size": 1024, "status": "failed",
              "error": "peer never matched"}
    verdicts = profile_verdicts([good, bad, failed])
    assert verdicts["rtps_encrypt"]["verdict"] == "match"
    assert verdicts["rtps_encrypt"]["observed"]["user"]["rtps"] == {"gcm": 5}
    assert verdicts["none"]["verdict"] == "mismatch" and verdicts["none"]["mismatched"] == 1
    assert verdicts["rtps_sign"]["verdict"] == "mismatch"
    assert "captured run failed: peer never matched" in verdicts["rtps_sign"]["reasons"][0]
    from rich.console import Console
    console = Console(width=220, record=True)
    console.print(wire_table([good, bad, failed]))
    text = console.export_text()
    assert "GCM 100%" in text and "none 100% (want GCM)" in text and "(want 0)" in text
    assert "none (as rtps_encrypt)" in text and "MISMATCH" in text and "FAILED" in text


def test_summary_rows_of_a_mismatched_profile_are_flagged():
    rows = DdsperfRunner.parse_latency(
        (Path(__file__).parent.parent / "data" / "ddsperf" /
         "sign_origin_data_encrypt-latency-1024-pub.out").read_text()).rows
    doc = {"settings": {"target_ci_pct": 5.0},
           "profiles": [{"name": "none", "security": False},
                        {"name": "rtps_sign", "security": True}],
           "results": [{"profile": p, "mode": "latency", "size": 1024, "repeat": 0,
                        "status": "ok", "raw": {"format": "latency-per-second", "rows": rows},
                        "warmup_rows": 1, "measured_rows": len(rows) - 1}
                       for p in ("none", "rtps_sign")],
           "wire": {"points": [], "profiles": {}}}
    # a real captured point (tests/data/report/wire): rtps_encrypt's traffic, stored as
    # rtps_sign's with the verdict "match" that its counts contradict (GCM, not GMAC)
    recorded = json.loads((Path(__file__).parent.parent / "data" / "report" / "wire" /
                           "results.json").read_text())["wire"]["points"]
    point = next(p for p in recorded if p["profile"] == "rtps_encrypt")
    point = {**point, "profile": "rtps_sign",
             "expected": {**point["expected"], "profile": "rtps_sign"}}
    assert point["verdict"] == "match"
    doc["wire"]["points"].append(point)
    doc["wire"]["profiles"] = {"rtps_sign": {"verdict": "match", "reasons": []}}
    flags = {r["profile"]: {f["code"]: f["reason"] for f in r["flags"]}
             for r in summarize(doc)}
    assert "wire_mismatch" in flags["rtps_sign"] and "wire_mismatch" not in flags["none"]
    assert "rtps protection: expected GMAC" in flags["rtps_sign"]["wire_mismatch"]


# ----------------------------------------------------------------- capture helpers

def frame(payload: bytes, dport: int, more_fragments=False, ihl=5, proto=17,
          udp_len=None) -> bytes:
    udp = struct.pack("!HHHH", 40000, dport, udp_len or 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, 20 + len(udp), 1,
                     0x2000 if more_fragments else 0, 64, proto, 0, b"\x7f\0\0\1",
                     b"\x7f\0\0\1") + bytes(4 * (ihl - 5))
    return bytes(12) + b"\x08\x00" + ip + udp


def test_udp_datagrams_skips_what_is_not_ipv4_udp_and_never_raises():
    msg = load("none-user-data")
    frames = [(1, frame(msg, 7411)), (2, frame(msg, 7411, ihl=6)),
              (3, frame(msg, 7411, proto=6)), (4, b"\0" * 20), (5, bytes(12) + b"\x86\xdd"),
              (6, frame(msg, 7411, udp_len=60000)), (7, frame(msg, 7411, more_fragments=True)),
              (8, frame(msg, 7411)[:40])]
    got = list(udp_datagrams(frames))
    assert [(t, p, len(d), f) for t, p, d, f in got] == [
        (1, 7411, len(msg), False), (2, 7411, len(msg), False), (6, 7411, len(msg), False),
        (7, 7411, len(msg), True)]
    rng = random.Random(3)
    for _ in range(500):
        list(udp_datagrams([(0, rng.randbytes(rng.randint(0, 80)))]))


def test_pcap_is_classic_libpcap_ethernet():
    frames = [(1_700_000_000_123_456_789, frame(load("none-user-data"), 7411))]
    pcap = pcap_bytes(frames)
    magic, major, minor, _, _, snaplen, linktype = struct.unpack_from("<IHHiIII", pcap)
    assert (magic, major, minor, linktype) == (0xA1B2C3D4, 2, 4, 1) and snaplen >= 65535
    sec, usec, incl, orig = struct.unpack_from("<IIII", pcap, 24)
    assert (sec, usec, incl, orig) == (1_700_000_000, 123_456, len(frames[0][1]),
                                       len(frames[0][1]))
    assert pcap[40:] == frames[0][1]


@pytest.mark.parametrize("loopback", [True, False])
def test_bpf_program_jumps_stay_inside_it(loopback):
    program = bpf_program(7400, 7649, loopback)
    insns = [struct.unpack_from("HBBI", program, i) for i in range(0, len(program), 8)]
    assert insns[-1] == (0x06, 0, 0, 0) and insns[-2][0] == 0x06    # drop, accept
    for i, (code, jt, jf, _) in enumerate(insns):
        if code & 0x07 == 0x05:                                      # BPF_JMP
            assert i + 1 + max(jt, jf) < len(insns)
    drop = len(insns) - 1
    jge = next(i for i, (code, _, _, k) in enumerate(insns) if code == 0x35 and k == 7400)
    jgt = next(i for i, (code, _, _, k) in enumerate(insns) if code == 0x25 and k == 7649)
    assert jge + 1 + insns[jge][2] == drop and jgt + 1 + insns[jgt][1] == drop   # out: drop
    assert (insns[0] == (0x20, 0, 0, 0xFFFFF004)) == loopback    # skb pkttype, lo only


# ------------------------------------------------------------- Fast DDS 2.9 datagrams

FASTDDS = DATA / "fastdds"
FASTDDS_INDEX = json.loads((FASTDDS / "index.json").read_text())
# name: (rtps, rtps origin MACs, submessage, submessage origin MACs, payload, readable)
FASTDDS_WHAT = {
    "rtps_encrypt-user-data": ("gcm", False, "hidden", "absent", "hidden", False),
    "sign_submsg_encrypt_origin_data_encrypt-user": ("gmac", False, "gcm", "yes", "hidden",
                                                     False),
}


@pytest.mark.parametrize("name", sorted(FASTDDS_INDEX))
def test_fastdds_statistics_submessage_stays_outside_the_protection(name):
    """Fast DDS 2.9 appends a vendor-specific statistics submessage (0x80) after the
    SRTPS_POSTFIX of every message: the protected part ends at the SRTPS_POSTFIX, so the
    message is classified by it (it was 'SEC_BODY without SEC_PREFIX', malformed)."""
    msg = (FASTDDS / f"{name}.bin").read_bytes()
    assert len(msg) == FASTDDS_INDEX[name]["bytes"]
    subs, error = rtps.submessages(msg)
    assert error is None and [s.name for s in subs] == FASTDDS_INDEX[name]["submessages"]
    assert subs[-1].id == rtps.VENDOR and msg[6:8] == b"\x01\x0f"     # eProsima
    assert rtps.protected_end(subs) == len(subs) - 1
    m = rtps.classify(msg, EE)
    assert m.error is None, m.error
    assert (m.rtps, m.rtps_origin, m.submessage, m.submessage_origin, m.payload,
            m.readable) == FASTDDS_WHAT[name]
    # without the vendor submessage: the same classification (it adds nothing protected)
    cut = msg[:subs[-1].offset - 4]
    assert (rtps.classify(cut, EE).rtps, rtps.classify(cut, EE).error) == (m.rtps, None)


def test_vendor_submessages_only_trail_the_protection():
    """Only vendor submessages after the SRTPS_POSTFIX are left outside: anything else
    after it leaves the protected part unclosed, a malformed message."""
    msg = (FASTDDS / "rtps_encrypt-user-data.bin").read_bytes()
    tail = sub(rtps.HEARTBEAT, USER_READER + USER_WRITER + bytes(20))
    m = rtps.classify(msg + tail, EE)
    assert m.error and m.rtps_origin is None
