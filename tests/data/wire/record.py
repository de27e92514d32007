"""Record real RTPS datagrams for tests/wire/test_wire_parse.py (root; Cyclone DDS installed).

    .venv/bin/python tests/data/wire/record.py

Runs real ddsperf pairs with govkit's signed bundles, captures them with govkit.wire.capture,
and keeps one datagram (the UDP payload) per entry of WANTED: the first captured message
of that profile and traffic class whose submessage names are exactly the listed ones.
Writes NAME.bin and index.json (profile, mode, size, traffic, submessages), then the
hand-made malformed copies of CUTS into malformed/. Run again after a Cyclone upgrade;
the tests only assume what index.json says.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))          # tests/ (for _dds)

from _dds import make_bundle, next_domain, run_pair  # noqa: E402

from govkit.wire import rtps  # noqa: E402
from govkit.wire.capture import Capture, udp_datagrams  # noqa: E402

# name: (profile, mode, size, traffic, submessage names in order (a final "..." allows
# more)[, what the first DATA/DATA_FRAG must be: writer entity id, inline QoS, first
# fragment; or min_bytes: at least that long])
WANTED = {
    "none-user-data": ("none", "latency", 1024, "user", ["INFO_TS", "DATA"]),
    "none-user-data-heartbeat": ("none", "latency", 1024, "user",
                                 ["INFO_TS", "DATA", "HEARTBEAT"]),
    "none-user-acknack": ("none", "latency", 1024, "user", ["INFO_DST", "ACKNACK"]),
    "none-spdp": ("none", "latency", 1024, "discovery", ["INFO_TS", "DATA"],
                  {"writer": "000100c2", "inline_qos": False}),
    "none-sedp-inline-qos": ("none", "latency", 1024, "discovery", ["INFO_TS", "DATA"],
                             {"writer": "000003c2", "inline_qos": True}),
    "none-user-frag-first": ("none", "latency", 63000, "user",
                             ["INFO_TS", "DATA_FRAG", "HEARTBEAT_FRAG"], {"first_fragment": True}),
    "none-user-frag-later": ("none", "latency", 63000, "user",
                             ["DATA_FRAG", "HEARTBEAT_FRAG"], {"first_fragment": False}),
    "no_protection-handshake": ("no_protection", "latency", 1024, "discovery",
                                ["INFO_DST", "..."],
                                {"writer": "000201c3", "first_fragment": True}),
    "no_protection-volatile-secure": ("no_protection", "latency", 1024, "discovery",
                                      ["INFO_DST", "SEC_PREFIX", "SEC_BODY", "SEC_POSTFIX"]),
    "rtps_sign-user-data": ("rtps_sign", "latency", 1024, "user",
                            ["SRTPS_PREFIX", "INFO_SRC", "INFO_TS", "DATA", "HEARTBEAT",
                             "SRTPS_POSTFIX"]),
    "rtps_encrypt-user-data": ("rtps_encrypt", "latency", 1024, "user",
                               ["SRTPS_PREFIX", "SEC_BODY", "SRTPS_POSTFIX"],
                               {"min_bytes": 1024}),
    "sign_origin_data_encrypt-user-data": (
        "sign_origin_data_encrypt", "latency", 1024, "user",
        ["SRTPS_PREFIX", "INFO_SRC", "INFO_TS", "DATA", "HEARTBEAT", "SRTPS_POSTFIX"]),
    "sign_origin_data_encrypt-user-frag-first": (
        "sign_origin_data_encrypt", "latency", 63000, "user",
        ["SRTPS_PREFIX", "INFO_SRC", "INFO_TS", "DATA_FRAG", "HEARTBEAT_FRAG",
         "SRTPS_POSTFIX"], {"first_fragment": True}),
    "sign_submsg_encrypt_origin_data_encrypt-user": (
        "sign_submsg_encrypt_origin_data_encrypt", "latency", 1024, "user",
        ["SRTPS_PREFIX", "INFO_SRC", "INFO_TS", "SEC_PREFIX", "SEC_BODY", "SEC_POSTFIX",
         "SEC_PREFIX", "SEC_BODY", "SEC_POSTFIX", "SRTPS_POSTFIX"]),
    "sign_submsg_encrypt-user": (
        "sign_submsg_encrypt", "latency", 1024, "user",
        ["SRTPS_PREFIX", "INFO_SRC", "INFO_TS", "SEC_PREFIX", "SEC_BODY", "SEC_POSTFIX",
         "SEC_PREFIX", "SEC_BODY", "SEC_POSTFIX", "SRTPS_POSTFIX"]),
}
# malformed/NAME.bin: SOURCE cut to LENGTH bytes (negative: that many bytes off the end),
# each cut ending inside one structure the parser has to bound-check. TO_END: the cut
# submessage's octetsToNextHeader is then set to 0 ("up to the end of the message"), so
# the submessage itself is consistent and the structure inside it is what is short.
CUTS = {
    "short-header": ("none-user-data", 12, False, "inside the 20-byte RTPS header"),
    "cut-submessage-header": ("none-user-data", 22, False,
                              "inside the first submessage header"),
    "cut-data": ("none-user-data", 200, False,
                 "inside DATA, whose octetsToNextHeader claims more"),
    "cut-crypto-header": ("rtps_encrypt-user-data", 30, True,
                          "inside SRTPS_PREFIX's CryptoHeader"),
    "cut-sec-body": ("rtps_encrypt-user-data", 100, False, "inside the RTPS-level SEC_BODY"),
    "cut-srtps-postfix": ("sign_origin_data_encrypt-user-data", -10, True,
                          "inside SRTPS_POSTFIX's receiver-specific MAC"),
    "cut-inline-qos": ("sign_origin_data_encrypt-user-data", 110, True,
                       "inside DATA's inline QoS (the key hash parameter)"),
    "cut-sec-postfix": ("sign_submsg_encrypt-user", -40, True,
                        "inside the last SEC_POSTFIX's CryptoFooter"),
    "cut-frag": ("none-user-frag-first", 60, True, "inside DATA_FRAG's fragment header"),
}


def cut(payload: bytes, length: int, to_end: bool) -> bytes:
    data = bytearray(payload[:length])
    if to_end:
        for s in rtps.submessages(payload)[0]:
            if s.offset <= len(data) < s.offset + s.length:
                data[s.offset - 2:s.offset] = b"\0\0"
    return bytes(data)


def _data(payload: bytes) -> dict:
    """The first DATA/DATA_FRAG: writer entity id (hex), inline QoS, first fragment?"""
    for s in rtps.submessages(payload)[0]:
        if s.id in (rtps.DATA, rtps.DATA_FRAG) and s.length >= 24:
            return {"writer": payload[s.offset + 8:s.offset + 12].hex(),
                    "inline_qos": bool(s.flags & 0x02),
                    "first_fragment": int.from_bytes(payload[s.offset + 20:s.offset + 24],
                                                     "little" if s.flags & 1 else "big") == 1
                    if s.id == rtps.DATA_FRAG else None}
    return {}


def _matches(names: list[str], want: list[str]) -> bool:
    if want[-1] == "...":
        return names[:len(want) - 1] == want[:-1]
    return names == want


def record(root: Path) -> dict:
    runs = sorted({w[:3] for w in WANTED.values()})
    found: dict[str, bytes] = {}
    for profile, mode, size in runs:
        bundle = make_bundle(root, profile)
        domain = next_domain()
        with Capture("lo", rtps.PORTS.ports(domain)) as cap:
            runner, point, outputs = run_pair(bundle, root / "cfg", mode=mode, size=size,
                                              domain=domain, duration=1)
        runner.parse(point, outputs)
        for _, port, payload, _ in udp_datagrams(cap.frames):
            if payload[:4] != b"RTPS":
                continue
            traffic = rtps.PORTS.traffic(domain, port)
            names = [s.name for s in rtps.submessages(payload)[0]]
            for name, (p, m, s, want_traffic, want_names, *data) in WANTED.items():
                if name in found or (p, m, s) != (profile, mode, size) or \
                        not _matches(names, want_names) or traffic != want_traffic:
                    continue
                seen = {**_data(payload), "min_bytes": len(payload)}
                if data and any(seen.get(k) != v if k != "min_bytes" else seen[k] < v
                                for k, v in data[0].items()):
                    continue
                found[name] = payload
    return found


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        found = record(Path(tmp))
    missing = sorted(set(WANTED) - set(found))
    if missing:
        sys.exit(f"not seen in these runs (run again): {', '.join(missing)}")
    index = {}
    for name, payload in sorted(found.items()):
        profile, mode, size, traffic, names, *_ = WANTED[name]
        (HERE / f"{name}.bin").write_bytes(payload)
        index[name] = {"profile": profile, "mode": mode, "size": size, "traffic": traffic,
                       "submessages": [s.name for s in rtps.submessages(payload)[0]],
                       "bytes": len(payload)}
    (HERE / "malformed").mkdir(exist_ok=True)
    for name, (source, length, to_end, where) in CUTS.items():
        data = cut(found[source], length, to_end)
        (HERE / "malformed" / f"{name}.bin").write_bytes(data)
        index[f"malformed/{name}"] = {"source": source, "bytes": len(data), "cut": where,
                                      "last_submessage_to_end": to_end}
    (HERE / "index.json").write_text(json.dumps(index, indent=1) + "\n")
    print(f"wrote {len(found)} recorded and {len(CUTS)} malformed datagrams to {HERE}")


if __name__ == "__main__":
    main()
