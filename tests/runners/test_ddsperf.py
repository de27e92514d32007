"""The ddsperf runner: parsing real captured output, configuration, and real runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.dds import make_bundle, needs_cyclone, run_pair
from lxml import etree

from govkit.catalog.profiles import get_profile
from govkit.runners.base import (
    BenchPoint,
    Bundle,
    ProcessOutput,
    RunnerError,
)
from govkit.runners.ddsperf import DdsperfRunner
from govkit.runners.processes import command_line, launch_argv

DATA = Path(__file__).parent.parent / "data" / "ddsperf"


def _out(role, name, pid=None):
    text = (DATA / name).read_text()
    return ProcessOutput(role, ["ddsperf", "-i", "88"], None, text, "", pid=pid)


def test_latency_lines_become_raw_rows():
    """Captured from ddsperf 0.10.2 ping (sign_origin_data_encrypt, 1024 B): every per-second
    line for the peer, warm-up included; statistics are govkit.results.stats' business."""
    res = DdsperfRunner.parse_latency(
        (DATA / "sign_origin_data_encrypt-latency-1024-pub.out").read_text(), peer_pid=10599)
    assert res.row_format == "latency-per-second"
    assert len(res.rows) == 5
    assert res.rows[1] == {"t": 3.0, "count": 8515, "mean": 58.637, "min": 21.942,
                           "p50": 23.371, "p90": 50.851, "p99": 930.413, "max": 23848.305}


def test_latency_lines_from_another_peer_are_ignored():
    text = (DATA / "sign_origin_data_encrypt-latency-1024-pub.out").read_text()
    with pytest.raises(RunnerError, match="no latency lines"):
        DdsperfRunner.parse_latency(text, peer_pid=4242)


def test_throughput_lines_become_raw_rows():
    res = DdsperfRunner.parse_throughput((DATA / "none-throughput-1024-sub.out").read_text())
    assert res.row_format == "throughput-per-second"
    assert [round(r["rate_sps"]) for r in res.rows[1:4]] == [596820, 615190, 583360]
    assert [r["count"] for r in res.rows[1:4]] == [596862, 615565, 583086]


def test_a_foreign_participant_invalidates_the_point():
    r = DdsperfRunner()
    point = BenchPoint(get_profile("none"), "latency", 1024, 3)
    pub = _out("pub", "sign_origin_data_encrypt-latency-1024-pub.out", pid=10607)
    sub = _out("sub", "sign_origin_data_encrypt-latency-1024-sub.out", pid=10599)
    assert len(r.parse(point, {"pub": pub, "sub": sub}).rows) == 5
    stray = ProcessOutput("pub", pub.argv, None,
                          pub.stdout.replace("participant vm:10599: new",
                                             "participant vm:10599: new\n[10607] participant "
                                             "otherhost:777: new"), "", pid=10607)
    with pytest.raises(RunnerError, match="foreign participant otherhost:777"):
        r.parse(point, {"pub": stray, "sub": sub})


def test_a_crashed_peer_or_timeout_fails_the_point():
    r = DdsperfRunner()
    point = BenchPoint(get_profile("none"), "latency", 1024, 3)
    pub = _out("pub", "sign_origin_data_encrypt-latency-1024-pub.out", pid=10607)
    crashed = ProcessOutput("sub", ["ddsperf", "pong"], -9, "", "", pid=10599)
    with pytest.raises(RunnerError, match="exited with status -9"):
        r.parse(point, {"pub": pub, "sub": crashed})
    hung = ProcessOutput("pub", pub.argv, None, "", "", pid=1, timed_out=True)
    sub = _out("sub", "sign_origin_data_encrypt-latency-1024-sub.out", pid=10599)
    with pytest.raises(RunnerError, match="did not finish within"):
        r.parse(point, {"pub": hung, "sub": sub})
    # a process that exited (refused) is the reason, not the peer left waiting for it
    with pytest.raises(RunnerError, match="exited with status -9"):
        r.parse(point, {"pub": hung, "sub": crashed})
    short = BenchPoint(get_profile("none"), "latency", 1024, 9)
    with pytest.raises(RunnerError, match=r"only 5 of 10 seconds \(1 warm-up \+ 9 measured\)"):
        r.parse(short, {"pub": pub, "sub": sub})


def _config(tmp_path, bundle, participant):
    r = DdsperfRunner()
    r.plugins = Path("/plugins")
    return etree.fromstring(r.config_text(bundle, participant).encode())


def test_unsecured_config_has_no_security_and_stays_on_loopback(tmp_path):
    cfg = _config(tmp_path, Bundle(get_profile("none")), "pub")
    ns = {"c": "https://cdds.io/config"}
    assert cfg.find(".//c:Security", ns) is None
    assert cfg.find(".//c:NetworkInterface", ns).get("name") == "lo"
    assert cfg.findtext(".//c:AllowMulticast", namespaces=ns) == "false"
    assert cfg.find(".//c:Peer", ns).get("address") == "127.0.0.1"


def test_secured_config_points_at_the_signed_bundle(tmp_path):
    bundle = make_bundle(tmp_path, "rtps_encrypt")
    cfg = _config(tmp_path, bundle, "sub")
    ns = {"c": "https://cdds.io/config"}
    files = bundle.participants["sub"]
    expect = {"IdentityCertificate": files.certificate, "IdentityCA": files.identity_ca,
              "PrivateKey": files.private_key, "PermissionsCA": files.permissions_ca,
              "Governance": files.governance, "Permissions": files.permissions}
    for tag, path in expect.items():
        assert cfg.findtext(f".//c:{tag}", namespaces=ns) == path.as_uri()
    assert files.governance.suffix == files.permissions.suffix == ".p7s"
    libs = [e.get("path") for e in cfg.iterfind(".//c:Library", ns)]
    assert libs == ["/plugins/libdds_security_auth.so", "/plugins/libdds_security_ac.so",
                    "/plugins/libdds_security_crypto.so"]


def test_command_lines(tmp_path):
    r = DdsperfRunner()
    r.plugins = Path("/plugins")
    point = BenchPoint(get_profile("none"), "latency", 1024, 5, domain_id=42, cpus=(0, 1),
                       warmup=2)
    sub, pub = r.commands(point, Bundle(get_profile("none")), tmp_path)
    # -D backstop: 1 idle + 2 warm-up + 5 measured + 10 s
    assert sub.argv[1:] == ["-i", "42", "-Qminmatch:1", "-Qinitwait:10", "-D", "20", "pong"]
    assert pub.argv[-3:] == ["ping", "size", "1024"] and pub.primary and pub.stop_when
    assert (pub.cpu, sub.cpu) == (0, 1)
    assert not list(tmp_path.iterdir())            # commands() writes nothing
    thr = BenchPoint(get_profile("none"), "throughput", 64, 5, domain_id=42)
    sub, pub = r.commands(thr, Bundle(get_profile("none")), tmp_path)
    assert sub.argv[-2:] == ["-1", "sub"] and sub.primary and pub.argv[-3:] == ["pub", "size", "64"]
    assert (pub.cpu, sub.cpu) == (None, None)


def test_realtime_and_pinning_are_in_the_command_line_a_user_can_copy(tmp_path):
    r = DdsperfRunner()
    r.plugins = Path("/plugins")
    point = BenchPoint(get_profile("none"), "latency", 32, 2, domain_id=9, cpus=(0, 1),
                       realtime=True)
    sub, pub = r.commands(point, Bundle(get_profile("none")), tmp_path)
    assert command_line(sub).startswith("CYCLONEDDS_URI=file://")
    assert " chrt -f 1 taskset -c 1 " in command_line(sub) and command_line(sub).endswith(" pong")
    assert launch_argv(pub)[:6] == ["chrt", "-f", "1", "taskset", "-c", "0"]


def test_stop_condition_counts_warmup_and_measured_seconds():
    r = DdsperfRunner()
    r.plugins = Path("/plugins")
    text = (DATA / "sign_origin_data_encrypt-latency-1024-pub.out").read_text()
    for warmup, duration, enough in ((1, 4, True), (1, 5, False), (0, 5, True)):
        point = BenchPoint(get_profile("none"), "latency", 1024, duration, warmup=warmup)
        pub = r.commands(point, Bundle(get_profile("none")), Path("/nowhere"))[1]
        assert pub.stop_when(text) is enough


@needs_cyclone
@pytest.mark.cyclone
def test_real_throughput_point(tmp_path):
    bundle = make_bundle(tmp_path, "rtps_sign")
    runner, point, outputs = run_pair(bundle, tmp_path / "cfg", mode="throughput", size=256)
    res = runner.parse(point, outputs)
    assert len(res.rows) >= point.warmup + point.duration
    assert all(r["rate_sps"] > 1000 and r["mbps"] > 0 for r in res.rows[:2])
