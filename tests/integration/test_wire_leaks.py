"""What an eavesdropper reads, live (issue 34's acceptance): `govkit wire-check
--all-profiles --leaks --json --pcap DIR` on Cyclone DDS 0.10 (ddsperf) and on Fast DDS 2.9
(`--runner fastdds`), each point's reading checked against the pcap it wrote: every
evidence in its frame byte for byte, permissions and certificates listed exactly where the
pcap holds them, `none`'s topic and payload listed, `rtps_encrypt`'s payload never and its
topic names only where tshark finds them in clear in that very frame; the two runtimes
differing where they really do; and `bench --governance FILE --wire --leaks` for a user's
own file, in results.json and the report.

Raw capture needs root (or CAP_NET_RAW): these tests skip without it, and fail instead
when GOVKIT_REQUIRE contains `root`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from helpers.dds import needs_cyclone
from helpers.fastdds import require_fastdds
from helpers.json_schemas import assert_valid
from test_wire import can_capture, require

from govkit.catalog.profiles import PROFILES
from govkit.wire.leak_entries import unescape
from govkit.wire.leaks import domain_of, find_leaks
from govkit.wire.pcapfile import datagrams, read_pcap

pytestmark = [needs_cyclone, pytest.mark.cyclone]
GOVKIT = str(Path(sys.executable).with_name("govkit"))
RUNTIMES = ["ddsperf", "fastdds"]


def _govkit(*args, cwd, timeout=900):
    return subprocess.run([GOVKIT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    """Per runtime: (the wire-check JSON, its directory), run once each."""
    require("root", can_capture(), "raw capture on lo needs root or CAP_NET_RAW")
    runs: dict[str, tuple[dict, Path]] = {}

    def get(runner: str) -> tuple[dict, Path]:
        if runner == "fastdds":
            require_fastdds()
        if runner not in runs:
            cwd = tmp_path_factory.mktemp(f"leaks-{runner}")
            r = _govkit("wire-check", "--runner", runner, "--all-profiles", "--leaks",
                        "--json", "--pcap", "caps", "--duration", "1", cwd=cwd)
            assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
            assert "Traceback" not in r.stderr
            runs[runner] = (json.loads(r.stdout), cwd)
        return runs[runner]
    return get


def point(doc: dict, profile: str) -> dict:
    return next(p for p in doc["points"] if p["profile"] == profile)


@cache
def tshark_topics(pcap: str) -> dict[int, set[str]]:
    """Frame number: the topic names tshark's RTPS dissector decodes there."""
    out = subprocess.run(["tshark", "-n", "-r", pcap, "-o", "udp.try_heuristic_first:TRUE",
                          "-Y", "rtps.param.topicName", "-T", "fields", "-E", "occurrence=a",
                          "-E", "aggregator=\t", "-e", "frame.number", "-e",
                          "rtps.param.topicName"], capture_output=True, text=True,
                         timeout=300, check=True).stdout
    found: dict[int, set[str]] = {}
    for line in out.splitlines():
        number, *names = line.split("\t")
        found[int(number)] = set(names)
    return found


@pytest.mark.parametrize("runner", RUNTIMES)
def test_the_json_is_the_documented_shape(captured, runner):
    doc, _ = captured(runner)
    assert_valid(doc, "wire-check")
    assert sorted(p["profile"] for p in doc["points"]) == sorted(p.name for p in PROFILES)
    for p in doc["points"]:
        assert p["verdict"] == "match", p.get("reasons")
        assert p["leaks"]["malformed"] == 0, p["leaks"]["problems"]
        assert doc["profiles"][p["profile"]]["leaks"]["sentence"].startswith(p["profile"])


@pytest.mark.parametrize("runner", RUNTIMES)
@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_every_evidence_is_in_the_points_pcap(captured, runner, profile):
    doc, cwd = captured(runner)
    p = point(doc, profile.name)
    pcap = cwd / p["pcap"]
    raw = pcap.read_bytes()
    frames = {f.number: f.data for f in read_pcap(pcap)}
    entries = p["leaks"]["entries"]
    assert entries
    for e in entries:
        ev = unescape(e["evidence"])
        assert ev and ev in raw, e
        assert ev in frames[e["evidence_frame"]], e
    kinds = {e["kind"] for e in entries}
    assert {"addressing", "traffic", "unprotected"} <= kinds
    # the same capture, two readers: the wire check's classifier finds a readable payload
    # exactly where the eavesdropper's reading lists one
    readable = sum(t["readable"] for t in p["observed"].values() if isinstance(t, dict))
    assert (readable > 0) == ("payload" in kinds), (readable, kinds)
    grants = [e for e in entries if e["about"] == "grant"]
    certs = [e for e in entries if e["about"] == "certificate"]
    assert (b"<grant" in raw) == bool(grants) == profile.security
    assert (b"-----BEGIN CERTIFICATE-----" in raw) == bool(certs) == profile.security
    if profile.security:
        assert len(grants) == 2 and len(certs) == 2
        assert {g["value"].split()[1] for g in grants} == {"pub", "sub"}


@pytest.mark.parametrize("runner", RUNTIMES)
def test_none_lists_the_data_topic_and_the_payload(captured, runner):
    doc, _ = captured(runner)
    entries = point(doc, "none")["leaks"]["entries"]
    topics = {e["value"] for e in entries if e["kind"] == "topic"}
    assert {"DDSPerfRPingKS", "DDSPerfRPongKS"} <= topics
    payload = [e for e in entries if e["kind"] == "payload"]
    assert payload and all(e["frames"] > 100 for e in payload)
    assert any("DDSPerfRPingKS" in e["text"] for e in payload)
    assert "\\xee\\xee\\xee\\xee" in "".join(e["evidence"] for e in payload)   # the filler


@pytest.mark.parametrize("runner", RUNTIMES)
def test_a_writers_topic_learned_after_its_data_still_names_the_payload(captured, runner):
    """A capture that began after a writer's SEDP announcement (seen again only on a
    re-send, later than its data, as CI's Fast DDS run had it) still says whose data it is."""
    doc, cwd = captured(runner)
    grams = list(datagrams(read_pcap(cwd / point(doc, "none")["pcap"])))
    sedp = [d for d in grams if b"DDSPerfRPingKS" in d.payload]
    late = [d for d in grams if d not in sedp] + sedp
    payload = [e for e in find_leaks(late, domain_of(late))["entries"]
               if e["kind"] == "payload"]
    assert any("DDSPerfRPingKS" in e["text"] for e in payload), payload


@pytest.mark.parametrize("runner", RUNTIMES)
def test_rtps_encrypt_lists_no_payload_and_topics_only_where_they_are_in_clear(captured,
                                                                                runner):
    require("tshark", shutil.which("tshark") is not None,
            "tshark not installed (bash .ci/setup installs it)")
    doc, cwd = captured(runner)
    p = point(doc, "rtps_encrypt")
    entries = p["leaks"]["entries"]
    assert not [e for e in entries if e["kind"] == "payload"]
    decoded = tshark_topics(str(cwd / p["pcap"]))
    for e in (e for e in entries if e["kind"] == "topic"):
        # the frame govkit names: tshark reads the same topic name there, in clear
        assert e["value"] in decoded.get(e["evidence_frame"], set()), (e, decoded)
    assert {n for names in decoded.values() for n in names} == \
        {e["value"] for e in entries if e["kind"] == "topic"}


def test_cyclone_sends_discovery_in_clear_before_protection_fastdds_does_not(captured):
    cyclone, _ = captured("ddsperf")
    fastdds, _ = captured("fastdds")
    c = point(cyclone, "rtps_encrypt")["leaks"]
    topics = [e for e in c["entries"] if e["kind"] == "topic"]
    assert topics and min(e["first_frame"] for e in topics) < c["protection_started"]["frame"]
    assert "in clear before protection starts" in \
        cyclone["profiles"]["rtps_encrypt"]["leaks"]["sentence"]
    f = point(fastdds, "rtps_encrypt")["leaks"]
    assert not [e for e in f["entries"] if e["kind"] == "topic"]
    assert fastdds["profiles"]["rtps_encrypt"]["leaks"]["sentence"].startswith(
        "rtps_encrypt hides the data and the topic names")
    # Fast DDS: subject names in its SPDP tokens, and its statistics submessage in clear
    tokens = [e for e in f["entries"] if e["about"] == "identity token"]
    assert len(tokens) == 2 and all("dds.cert.sn" in e["text"] for e in tokens)
    assert [e for e in f["entries"] if e["about"] == "vendor submessage"]
    assert not [e for e in c["entries"] if e["about"] in ("identity token",
                                                            "vendor submessage")]


def test_a_users_governance_with_protected_discovery(tmp_path):
    """bench --governance FILE --wire --leaks: the user's own file (rtps_encrypt's, with
    discovery protected and the payload encrypted instead) measured and read like a
    profile: its topic names are hidden, its permissions are not; in results.json and in
    the report."""
    require("root", can_capture(), "raw capture on lo needs root or CAP_NET_RAW")
    from govkit.catalog.profiles import get_profile
    from govkit.documents.render import GovernanceDocument
    xml = GovernanceDocument(get_profile("rtps_encrypt")).render().decode()
    xml = (xml.replace("<discovery_protection_kind>NONE", "<discovery_protection_kind>ENCRYPT")
           .replace("<enable_discovery_protection>false",
                    "<enable_discovery_protection>true")
           .replace("<rtps_protection_kind>ENCRYPT", "<rtps_protection_kind>NONE")
           .replace("<data_protection_kind>NONE", "<data_protection_kind>ENCRYPT"))
    (tmp_path / "ours.xml").write_text(xml)
    r = _govkit("bench", "--runner", "ddsperf", "--governance", "ours.xml", "--profile",
                "none", "--sizes", "1024", "--wire", "--leaks", "--repeat", "1",
                "--max-repeat", "1", "--duration", "1", "--out", "res", cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    doc = json.loads((tmp_path / "res" / "results.json").read_text())
    assert_valid(doc, "bench")
    ours = doc["wire"]["profiles"]["ours"]
    assert ours["verdict"] == "match", ours["reasons"]
    assert "topic" not in ours["leaks"]["kinds"] and "permissions" in ours["leaks"]["kinds"]
    assert ours["leaks"]["sentence"].startswith("ours hides the data and the topic names")
    assert "ours hides the data and the topic names" in r.stdout
    html = (tmp_path / "res" / "report.html").read_text()
    md = (tmp_path / "res" / "summary.md").read_text()
    assert 'id="leak-table"' in html and "ours hides the data and the topic names" in html
    assert "**What an eavesdropper reads**" in md
