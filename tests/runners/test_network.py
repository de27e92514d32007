"""The network dimension (govkit.runners.network): parsing, point identity, configurations, CSV
names, like-with-like comparisons, dry-run, the report; and on real ddsperf over
loopback: TCP, TLS (a peer with a foreign CA is refused) and injected loss."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from xml.etree import ElementTree

import lxml.html
import pytest
from helpers.dds import needs_cyclone, next_domain

from govkit.catalog.profiles import get_profile
from govkit.common.errors import GovkitError
from govkit.generate.bundle import BundleLog, ensure_pki, ensure_tls
from govkit.report.run import write_report
from govkit.results.perftest_csv import csv_name
from govkit.results.store import check_resumable
from govkit.results.summary import point_key, repeat_key, summarize
from govkit.runners.base import (
    BenchPoint,
    Bundle,
    PointResult,
    RunnerError,
    prepare,
)
from govkit.runners.ddsperf import DdsperfRunner, add_retransmissions
from govkit.runners.netpath import NetPaths, SshHost, refuse_foreign_keys, resolve_host
from govkit.runners.network import (
    Endpoint,
    Network,
    parse_hosts,
    parse_loss_rates,
    parse_paths,
    parse_peer_addresses,
    parse_transports,
)
from govkit.runners.processes import command_line, launch_argv, remote_script, run_processes

GOVKIT = str(Path(sys.executable).with_name("govkit"))
NS = "{https://cdds.io/config}"
DATA = Path(__file__).parent.parent / "data" / "report"


def _govkit(*args, cwd, timeout=240, env=None):
    return subprocess.run([GOVKIT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, env=env)


# ------------------------------------------------------------------------- parsing

def test_options_parse_and_bad_ones_are_one_clear_error():
    assert parse_transports(None) == ["udp"]
    assert parse_transports(["udp,tcp", "tls", "tcp"]) == ["udp", "tcp", "tls"]
    assert parse_loss_rates(["0,1", "0.5%"]) == [0, 1, 0.5]
    assert parse_paths(None, hosts=False) == ["lo"] and parse_paths(None, True) == ["hosts"]
    assert parse_hosts("pub=local,sub=me@b") == {"pub": "local", "sub": "me@b"}
    assert parse_peer_addresses("sub=198.18.0.2,pub=198.18.0.1")["sub"] == "198.18.0.2"
    for fn, arg, msg in ((parse_transports, ["quic"], "invalid --transport 'quic'"),
                         (parse_loss_rates, ["0.05"], "steps of 0.1 %"),
                         (parse_loss_rates, ["80"], "out of range"),
                         (parse_loss_rates, ["much"], "invalid --loss-rate"),
                         (lambda v: parse_paths(v, False), ["hosts"], "needs --hosts"),
                         (lambda v: parse_paths(v, True), ["lo"], "does not include hosts"),
                         (parse_hosts, "pub=a", "name both"),
                         (parse_hosts, "pub=local,sub=local", "both sides are local"),
                         (parse_hosts, "pub=-oProxyCommand=x,sub=b", "invalid --hosts"),
                         (parse_peer_addresses, "pub=h,sub=198.18.0.1", "an IPv4 address")):
        with pytest.raises(GovkitError, match=msg.replace("(", r"\(").replace(".", r"\.")):
            fn(arg)


# A host or peer spec that could reach ssh as something else than one destination, one
# case per class (issue 23; tests/properties/test_hosts_fuzz.py fuzzes them): refused in
# one line by the shared check (network.check_ssh_target, parse_roles), also where the
# ssh argv is made (netpath.SshHost, resolve_host), so no caller can skip it.
HOSTILE_HOSTS = {
    "option": "-oProxyCommand=touch x",
    "option after the user": "me@-oProxyCommand=x",
    "option as the user": "-l@host",
    "space": "me@a b",
    "newline": "me@a\nb",
    "tab": "me@a\tb",
    "NUL": "me@a\x00b",
    "escape sequence": "me@\x1b[31mb",
    "DEL": "me@a\x7f",
    "unicode line separator": "me@a\u2028b",
    "non-breaking space": "me@a\u00a0b",
    "command substitution": "me@$(id)",
    "backticks": "me@`id`",
    "semicolon": "me@a;b",
    "quote": "me@a'b",
    "percent expansion in the user": "%h@a",
    "URI": "ssh://me@a",
    "empty user": "@host",
    "rich markup": "me@[/red]",
    "too long": "a" * 300,
}


@pytest.mark.parametrize("what", sorted(HOSTILE_HOSTS))
def test_hostile_host_specs_are_one_line_refusals(what):
    target = HOSTILE_HOSTS[what]
    with pytest.raises(GovkitError) as e:
        parse_hosts(f"pub=local,sub={target}")
    message = str(e.value)
    assert message.startswith("invalid --hosts") and e.value.exit_code == 2
    assert "\n" not in message and "\x00" not in message and len(message) < 300, message
    # the argv builders refuse it too, whoever calls them
    with pytest.raises(GovkitError, match="invalid --hosts"):
        SshHost("sub", target)
    with pytest.raises(GovkitError, match="invalid --hosts"):
        resolve_host(target, None)


@pytest.mark.parametrize("target", ["me@bench-b", "bench-b", "198.18.0.2", "me@198.18.0.2",
                                    "fe80::1%lo", "::1", "first.last@host.example",
                                    "u_1@h_2"])
def test_ordinary_host_specs_are_taken(target):
    assert parse_hosts(f"pub=local, sub={target}") == {"pub": "local", "sub": target}


@pytest.mark.parametrize("spec", ["pub=198.18.0.1,sub=198.18.0.2\n", "pub=198.18.0.1\t,"
                                  "sub=198.18.0.2", "pub=198.18.0.1,sub=198.18.0.2\x00"])
def test_control_characters_anywhere_in_a_role_list_are_refused(spec):
    with pytest.raises(GovkitError, match="holds the control or whitespace character"):
        parse_peer_addresses(spec)


def test_ssh_config_reaches_ssh_as_an_absolute_path(tmp_path, monkeypatch):
    """A configuration file named like an option stays the value of -F."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-oProxyCommand=x").write_text("Host *\n")
    host = SshHost("sub", "me@b", Path("-oProxyCommand=x"))
    assert host.argv[:3] == ("ssh", "-F", str(tmp_path / "-oProxyCommand=x"))
    assert host.argv[-1] == "me@b"


@pytest.mark.parametrize("name", ["a b\nc", "x\ry", "e\x1b[31m", "tab\there"])
def test_paths_with_control_characters_stay_one_line(tmp_path, monkeypatch, name):
    """--ssh-config, --out, --ca and --build in an error line: a newline in the path is
    shown escaped, not as a second line (found by tests/properties/test_hosts_fuzz.py)."""
    from govkit.bench.options import BenchOptions
    from govkit.catalog.profiles import PROFILES
    monkeypatch.chdir(tmp_path)
    (tmp_path / f"{name}-file").write_text("")
    for kwargs in ({"ssh_config": Path(name)}, {"out": Path(f"{name}-file")},
                   {"ca": Path(f"{name}-file")}, {"build": Path(f"{name}-file")}):
        with pytest.raises(GovkitError) as e:
            BenchOptions(profiles=[PROFILES[0]], **kwargs).check_paths()
        assert "\n" not in str(e.value) and "\r" not in str(e.value), kwargs
        assert str(e.value).isprintable(), kwargs
    with pytest.raises(GovkitError) as e:
        NetPaths(["hosts"], {"pub": "local", "sub": "b"}, None, Path(name)).check()
    assert str(e.value).isprintable() and "no such file" in str(e.value)


def test_cli_refuses_bad_network_options_with_exit_2(tmp_path):
    for args, msg in ((["--transport", "quic"], "invalid --transport"),
                      (["--loss-rate", "0.05"], "steps of 0.1"),
                      (["--peer-address", "pub=198.18.0.1,sub=198.18.0.2"],
                       "--peer-address applies to --hosts only"),
                      (["--runner", "perftest", "--transport", "tcp"], "need --runner ddsperf")):
        r = _govkit("bench", "--profile", "none", "--dry-run", *args, cwd=tmp_path, timeout=60)
        assert r.returncode == 2 and msg in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_netns_without_privileges_is_one_line():
    """Checked in a process without capabilities: a user's, or root's with an empty bounding
    set (setpriv, util-linux), whose effective capabilities are then none."""
    code = ("from govkit.common.errors import GovkitError\n"
            "from govkit.runners.netpath import NetPaths\n"
            "try:\n    NetPaths(['netns']).check()\n"
            "except GovkitError as e:\n    print(e.exit_code, e)\n")
    argv = [sys.executable, "-c", code]
    if os.geteuid() == 0:
        argv = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", *argv]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    code, _, message = done.stdout.partition(" ")
    assert "--net netns needs root" in message
    assert int(code) == 2


# ---------------------------------------------------------------- point identity

def test_a_record_from_before_is_udp_over_lo_without_loss():
    old = {"profile": "none", "mode": "latency", "size": 32, "repeat": 1}
    assert point_key(old) == ("none", "latency", 32, "udp", "lo", 0)
    assert repeat_key(old) == ("none", "latency", 32, "udp", "lo", 0, 1)
    new = {**old, "transport": "tls", "path": "netns", "loss_pct": 1}
    assert point_key(new) == ("none", "latency", 32, "tls", "netns", 1)


def test_csv_names_follow_the_seeds():
    name = csv_name
    assert name("none", "latency") == "lat_udpv4_pub_unkeyed_rel_security_none.csv"
    assert name("rtps_sign", "latency", Network("tcp")) == \
        "lat_tcpv4_pub_unkeyed_rel_security_rtps_sign.csv"
    assert name("none", "throughput", Network("tls", "netns", 0.5)) == \
        "thr_tlsv4_sub_unkeyed_rel_security_none_netns_loss0_5pct.csv"


def test_resume_of_a_run_from_before_the_network_dimension():
    stored = {"runner": "ddsperf", "modes": ["latency"]}          # no network settings
    check_resumable(stored, {**stored, "transports": ["udp"], "paths": ["lo"],
                             "loss_rates_pct": [0]}, Path("r.json"))
    with pytest.raises(GovkitError, match="--transport is udp,tcp but the run in r.json "
                                          "used udp"):
        check_resumable(stored, {**stored, "transports": ["udp", "tcp"]}, Path("r.json"))


def _as_network(doc: dict, net: Network, scale: float) -> list[dict]:
    """The doc's results again, as if measured over `net`, every latency × scale."""
    out = []
    for r in copy.deepcopy(doc["results"]):
        r.update(net.to_json())
        if r["status"] == "ok":
            for row in r["raw"]["rows"]:
                for k in ("mean", "min", "p50", "p90", "p99", "max"):
                    row[k] *= scale
        out.append(r)
    return out


@pytest.fixture(scope="module")
def two_networks() -> dict:
    doc = json.loads((DATA / "full" / "results.json").read_text())
    doc["results"] += _as_network(doc, Network("tls"), 2.0)
    doc["settings"]["transports"] = ["udp", "tls"]
    doc["summary"] = summarize(doc)
    return doc


def test_overheads_compare_like_with_like_and_networks_side_by_side(two_networks):
    rows = {(r["profile"], r["size"], r["transport"]): r for r in two_networks["summary"]}
    udp, tls = rows[("rtps_sign", 32, "udp")], rows[("rtps_sign", 32, "tls")]
    # × none over tls is against none over tls: both doubled, so the same ratio as udp's
    assert tls["vs_none"]["ratio"] == pytest.approx(udp["vs_none"]["ratio"], rel=1e-3)
    assert tls["vs_network"]["network"] == "udp lo"
    assert tls["vs_network"]["ratio"] == pytest.approx(2.0, rel=1e-3)
    lo, hi = tls["vs_network"]["ratio_ci95"]
    assert lo <= 2.0 <= hi
    assert udp["vs_network"] is None and udp["rti"] is not None and tls["rti"] is None


def test_report_shows_the_networks_side_by_side(two_networks, tmp_path):
    (tmp_path / "results.json").write_text(json.dumps(two_networks))
    html, md = write_report(tmp_path)
    page = lxml.html.fromstring(html.read_bytes())
    table = page.xpath('//table[@id="networks-latency"]')[0]
    heads = [" ".join(h.itertext()).split()[0:2] for h in table.xpath(".//thead/tr/th")]
    assert ["udp", "lo"] in heads and ["tls", "lo"] in heads
    row = table.xpath('.//tr[@data-profile="rtps_sign"][@data-size="32"]')[0]
    ratio = row.xpath('.//*[@data-kind="vs-network"]')[0].text_content()
    summary = {(r["profile"], r["size"], r["transport"]): r for r in two_networks["summary"]}
    assert ratio == f"{summary[('rtps_sign', 32, 'tls')]['vs_network']['ratio']:.2f}\u00d7"
    # every latency row says which network it is over
    rows = page.xpath('//table[@id="headline-table"]/tbody/tr')
    assert {r.get("data-network") for r in rows} == {"udp lo", "tls lo"}
    text = md.read_text()
    assert "**Latency per network, side by side**" in text and "| tls lo |" in text


# ------------------------------------------------------------------ configurations

def _config(runner, bundle, role, point) -> ElementTree.Element:
    return ElementTree.fromstring(runner.config_text(bundle, role, point).encode())


def test_configurations_follow_the_point(tmp_path):
    runner = DdsperfRunner()
    bundle = Bundle(get_profile("none"), tls={"pub": Path("/k/pub-keystore.pem"),
                                              "sub": Path("/k/sub-keystore.pem")})
    eps = (Endpoint("pub", "198.18.0.1", "govkit-pub", netns="ns-pub"),
           Endpoint("sub", "198.18.0.2", "govkit-sub", netns="ns-sub"))
    point = BenchPoint(get_profile("none"), "latency", 32, 1, network=Network("tls", "netns", 1),
                       endpoints=eps, tcp_port=23456)
    pub, sub = (_config(runner, bundle, r, point) for r in ("pub", "sub"))

    def find(x, path):
        return x.find("/".join(p if p in (".", "") else NS + p for p in path.split("/")))

    assert find(pub, ".//NetworkInterface").get("name") == "govkit-pub"
    assert find(pub, ".//Transport").text == "tcp"
    assert find(pub, ".//Peer").get("address") == "198.18.0.2:23456"   # pub connects
    assert find(sub, ".//Peers") is None and find(sub, ".//TCP/Port").text == "23456"
    assert find(pub, ".//TCP/Port").text == "-1"
    assert find(pub, ".//SSL/KeystoreFile").text == "/k/pub-keystore.pem"
    assert find(sub, ".//SSL/KeystoreFile").text == "/k/sub-keystore.pem"
    assert find(pub, ".//SSL/VerifyClient").text == "true"
    # loss on the publisher's side only, per mille
    assert find(pub, ".//Internal/Test/XmitLossiness").text == "10"
    assert find(sub, ".//Internal") is None
    # the processes run inside their namespaces, pinned and real-time as before
    specs = runner.commands(replace(point, cpus=(0, 1), realtime=True), bundle, tmp_path)
    sub_argv = launch_argv(specs[0])
    assert sub_argv[:4] == ["ip", "netns", "exec", "ns-sub"]
    assert sub_argv[4:9] == ["chrt", "-f", "1", "taskset", "-c"]


def test_a_remote_side_is_wrapped_in_ssh_and_never_pinned(tmp_path):
    runner = DdsperfRunner()
    eps = (Endpoint("pub", "198.18.0.1"),
           Endpoint("sub", "198.18.0.2", ssh=("ssh", "-o", "BatchMode=yes", "me@b"),
                    workdir="/tmp/govkit-x", ddsperf="/usr/bin/ddsperf", plugins="/p"))
    point = BenchPoint(get_profile("none"), "latency", 32, 1, network=Network("udp", "hosts"),
                       endpoints=eps, cpus=(0, 1), realtime=True)
    configs = runner.configs(point, Bundle(get_profile("none")), tmp_path)
    assert {str(p) for p in configs} == {
        "/tmp/govkit-x/cyclonedds-none-udp-hosts-sub.xml",
        str(tmp_path.resolve() / "cyclonedds-none-udp-hosts-pub.xml")}
    sub, pub = runner.commands(point, Bundle(get_profile("none")), tmp_path)
    line = command_line(sub)
    assert line.startswith("ssh -o BatchMode=yes me@b 'cd /tmp/govkit-x && ")
    assert "CYCLONEDDS_URI=file:///tmp/govkit-x/cyclonedds-none-udp-hosts-sub.xml" in line
    assert "taskset" not in line and "chrt" not in line      # the remote host's CPUs are unknown
    assert "taskset -c 0" in command_line(pub) and "chrt -f 1" in command_line(pub)


def test_a_remote_process_stops_when_its_ssh_stdin_closes(tmp_path):
    """remote_script's watcher, run by a local shell instead of sshd."""
    script = remote_script("sub", str(tmp_path), {"X": "1"}, ["sleep", "60"])
    p = subprocess.Popen(["sh", "-c", script], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not (tmp_path / "sub.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = int((tmp_path / "sub.pid").read_text())
        time.sleep(0.3)
        assert Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep")
        p.stdin.close()
        assert p.wait(timeout=10) != 0            # ended by the watcher's SIGINT
    finally:
        p.kill()


def test_foreign_keys_never_leave_the_machine():
    refuse_foreign_keys([Path("pki/sub.key"), Path("build/tls/sub-keystore.pem")], "sub")
    for bad in ("pki/pub.key", "pki/identity_ca.key", "pki/permissions_ca.key"):
        with pytest.raises(GovkitError, match="not its own key"):
            refuse_foreign_keys([Path(bad)], "sub")


def test_a_ca_key_or_the_other_sides_key_is_refused_by_its_content(tmp_path):
    """By name alone, the Identity CA's key copied to pki/sub.key would have gone to the sub
    host (issue 46, item 12): every private key shipped is checked against the CAs' and
    the other side's certificates."""
    from govkit.pki.issuance import init_pki
    pki = tmp_path / "pki"
    init_pki(pki)
    others = [pki / "identity_ca.pem", pki / "permissions_ca.pem", pki / "pub.pem"]
    refuse_foreign_keys([pki / "sub.key", pki / "sub.pem"], "sub", others)
    keystore = tmp_path / "sub-keystore.pem"          # a TLS keystore: its own key inside
    keystore.write_bytes((pki / "sub.pem").read_bytes() + (pki / "sub.key").read_bytes())
    refuse_foreign_keys([keystore], "sub", others)
    for key, whose in (("identity_ca.key", "identity_ca.pem"),
                       ("permissions_ca.key", "permissions_ca.pem"), ("pub.key", "pub.pem")):
        disguised = tmp_path / whose.replace(".pem", "") / "sub.key"
        disguised.parent.mkdir()
        disguised.write_bytes((pki / key).read_bytes())
        with pytest.raises(GovkitError, match=f"it holds the private key of {whose}"):
            refuse_foreign_keys([disguised], "sub", others)
        keystore.write_bytes((pki / "sub.pem").read_bytes() + (pki / key).read_bytes())
        with pytest.raises(GovkitError, match=f"it holds the private key of {whose}"):
            refuse_foreign_keys([keystore], "sub", others)


def test_retransmissions_join_the_subscriber_seconds():
    res = PointResult("throughput-per-second", [{"t": 2.001, "count": 1}, {"t": 3.0, "count": 1},
                                                 {"t": 9.0, "count": 1}])
    pub = ("[7] 1.001  discarded 0 rexmit 100 Trexmit 5 Tthrottle 0 Nthrottle 0\n"
           "[7] 2.000  discarded 0 rexmit 300 Trexmit 9 Tthrottle 0 Nthrottle 0\n"
           "[7] 3.001  discarded 0 rexmit 300 Trexmit 9 Tthrottle 1 Nthrottle 1\n")
    add_retransmissions(res, pub)
    assert [r["rexmit_bytes"] for r in res.rows] == [200, 0, None]
    assert res.extra["publisher_xmit"][0]["rexmit_bytes"] == 100


def test_dry_run_shows_the_namespace_and_ssh_commands_and_creates_nothing(tmp_path):
    env = {**os.environ, "PATH": f"/nonexistent:{os.environ['PATH']}"}
    r = _govkit("bench", "--profile", "rtps_sign", "--sizes", "32", "--repeat", "1",
                "--net", "netns,hosts", "--hosts", "pub=local,sub=me@bench-b",
                "--transport", "tls", "--loss-rate", "1", "--seed", "3", "--dry-run",
                cwd=tmp_path, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert list(tmp_path.iterdir()) == []
    out = r.stdout
    assert "ip netns add govkit-" in out and " type veth peer name govkit-sub netns " in out
    assert "# afterwards: ip netns del govkit-" in out
    assert "ssh -o BatchMode=yes -o ConnectTimeout=10 me@bench-b" in out
    assert "# rtps_sign latency size 32 over tls netns loss 1% repeat 0" in out
    assert "ip netns exec govkit-" in out and "cd /tmp/govkit-XXXXXXXX && " in out


# ---------------------------------------------------------- real ddsperf on loopback

@needs_cyclone
@pytest.mark.cyclone
def test_tls_refuses_a_peer_whose_certificate_another_ca_issued(tmp_path):
    """Proof that TLS is on and verifies: both sides with keystores from one test PKI
    exchange samples; with the sub's from another test PKI they never match."""
    runner = DdsperfRunner()
    runner.check_installed()
    runner.init_wait_s = 3
    log = BundleLog()
    mine = ensure_tls(ensure_pki(tmp_path / "a", log), tmp_path / "build-a", log)
    other = ensure_tls(ensure_pki(tmp_path / "b", log), tmp_path / "build-b", log)

    def run(tls):
        point = BenchPoint(get_profile("none"), "latency", 32, 1, domain_id=next_domain(),
                           network=Network("tls"), tcp_port=_free_port())
        bundle = Bundle(get_profile("none"), tls=tls)
        outputs = run_processes(prepare(runner, point, bundle, tmp_path / "cfg"),
                                runner.timeout(point))
        return runner, point, outputs

    runner_, point, outputs = run(mine)
    assert len(runner_.parse(point, outputs).rows) >= 2
    _, point, outputs = run({"pub": mine["pub"], "sub": other["sub"]})
    # not one round trip (Cyclone 0.10.2's pong may even abort on the failed handshake)
    with pytest.raises(RunnerError, match="no latency lines"):
        DdsperfRunner.parse_latency(outputs["pub"].stdout)


def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@needs_cyclone
@pytest.mark.cyclone
def test_injected_loss_is_recorded_with_its_retransmissions(tmp_path):
    r = _govkit("bench", "--profile", "none", "--mode", "both", "--sizes", "1024",
                "--loss-rate", "2", "--duration", "2", "--repeat", "1", "--max-repeat", "1",
                "--out", "res", "--no-report", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((tmp_path / "res/results.json").read_text())
    assert "injected by the sender" in doc["settings"]["loss"]
    rows = {s["mode"]: s for s in doc["summary"]}
    thr, lat = rows["throughput"], rows["latency"]
    assert thr["loss_pct"] == 2 and thr["loss"]["retransmitted_bytes"] > 0
    assert thr["loss"]["retransmitted_share_pct"] > 0
    assert lat["loss"]["retransmitted_bytes"] is None and "tail" in lat["loss"]["note"]
    assert "injected_loss" in [f["code"] for f in thr["flags"]]
    record = next(x for x in doc["results"] if x["mode"] == "throughput")
    assert "-X" in record["commands"][1] and record["raw"]["publisher_xmit"]
    assert any(row.get("rexmit_bytes") for row in record["raw"]["rows"])
    assert (tmp_path / "res/thr_udpv4_sub_unkeyed_rel_security_none_loss2pct.csv").exists()
    assert "rexmit B" in r.stdout and "loss injected" in r.stdout


@needs_cyclone
@pytest.mark.cyclone
def test_tcp_and_tls_points_run_beside_udp(tmp_path):
    r = _govkit("bench", "--profile", "none", "--profile", "rtps_sign", "--transport",
                "udp,tcp,tls", "--sizes", "32", "--duration", "1", "--repeat", "1",
                "--max-repeat", "1", "--out", "res", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((tmp_path / "res/results.json").read_text())
    assert {(x["profile"], x["transport"], x["status"]) for x in doc["results"]} == {
        (p, t, "ok") for p in ("none", "rtps_sign") for t in ("udp", "tcp", "tls")}
    assert "Identity CA" in doc["settings"]["tls"]
    for t in ("tcpv4", "tlsv4", "udpv4"):
        assert (tmp_path / f"res/lat_{t}_pub_unkeyed_rel_security_rtps_sign.csv").exists()
    assert "per network, side by side" in r.stdout
    page = lxml.html.fromstring((tmp_path / "res/report.html").read_bytes())
    assert page.xpath('//table[@id="networks-latency"]')
    # TLS keystores hold the key: private to the owner
    assert (tmp_path / "build/tls/pub-keystore.pem").stat().st_mode & 0o077 == 0


def test_network_of_a_record_is_shared_and_keeps_its_values_types():
    """One object per distinct network (a report asks for tens of thousands of records'),
    but an integer loss stays an integer and a float a float (results.json says which)."""
    assert Network.of({}) is Network.of({"transport": "udp", "path": "lo", "loss_pct": 0})
    assert Network.of({"loss_pct": 0}) == Network.of({"loss_pct": 0.0})
    assert type(Network.of({"loss_pct": 0.0}).loss_pct) is float
    assert type(Network.of({"loss_pct": 0}).loss_pct) is int
    assert Network.of({"path": ["lo"]}).path == ["lo"]      # refused later, by its place
