"""`govkit bench` over real network paths: two network namespaces joined by a veth pair,
and a second "host" reached over OpenSSH (an sshd in a namespace of its own); the
samples cross the link, and nothing (namespace, veth, remote directory, process) is left
behind, also when a run is interrupted. Needs root: skipped without it, failed when
GOVKIT_REQUIRE contains root. Only addresses on this machine (198.18.0.0/15, inside
namespaces the tests make) are contacted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.dds import needs_cyclone
from helpers.sshd import require_root_or_skip, require_sshd_or_skip, sshd_in_netns

pytestmark = [needs_cyclone, pytest.mark.cyclone]
GOVKIT = str(Path(sys.executable).with_name("govkit"))


@pytest.fixture(autouse=True)
def _root():
    require_root_or_skip("govkit bench --net netns / --hosts")


def _govkit(*args, cwd, timeout=300):
    return subprocess.run([GOVKIT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def _namespaces(pid: int) -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines()
            if line.startswith(f"govkit-{pid}-")]


def _links() -> str:
    return subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout


def _runners_with(text: str) -> list[int]:
    """Live (not zombie) ddsperf processes whose command line or environment names
    `text` (the run's out dir, or a remote work directory)."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes()
            env = (d / "environ").read_bytes()
            state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if b"ddsperf" in cmd.split(b"\0")[0] and state != "Z" and \
                (text.encode() in env or text.encode() in cmd):
            found.append(int(d.name))
    return found


def test_netns_run_crosses_the_veth_and_leaves_nothing(tmp_path):
    args = ["bench", "--profile", "none", "--profile", "rtps_sign", "--net", "netns",
            "--transport", "udp,tls", "--sizes", "32", "--duration", "1", "--repeat", "1",
            "--max-repeat", "1", "--seed", "4", "--out", "res"]
    proc = subprocess.Popen([GOVKIT, *args], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        seen = set()
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            seen.update(_namespaces(proc.pid))
            time.sleep(0.2)
        stdout, stderr = proc.communicate(timeout=240)
    finally:
        proc.kill()
    assert proc.returncode == 0, stdout + stderr
    assert seen == {f"govkit-{proc.pid}-0-pub", f"govkit-{proc.pid}-0-sub"}
    assert _namespaces(proc.pid) == [] and "govkit-pub" not in _links()
    doc = json.loads((tmp_path / "res/results.json").read_text())
    net = doc["settings"]["network"]["netns"]
    assert net["link"] == "veth pair" and net["addresses"]["pub"].startswith("198.1")
    for r in doc["results"]:
        assert r["status"] == "ok" and r["path"] == "netns", r.get("error")
        assert r["endpoints"]["pub"]["where"] == f"netns govkit-{proc.pid}-0-pub"
        assert f"ip netns exec govkit-{proc.pid}-0-pub chrt -f 1 taskset -c" in r["commands"][1]
        # Every round trip is a ping out and a pong back over the veth: its counters saw
        # at least that many packets and payload bytes, in each direction.
        trips = sum(row["count"] for row in r["raw"]["rows"])
        link = r["link_counters"]
        assert link["pub"]["tx_packets"] >= trips and link["sub"]["tx_packets"] >= trips
        assert link["pub"]["tx_bytes"] >= trips * 32 and link["sub"]["rx_bytes"] \
            == link["pub"]["tx_bytes"]
        if r["transport"] == "udp":
            assert r["cpus"] == {"sub": str(doc["settings"]["cpus"]["sub"]),
                                 "pub": str(doc["settings"]["cpus"]["pub"])} \
                or doc["settings"]["cpus"] is None
    assert "udp netns" in stdout and "tls netns" in stdout


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupting_a_netns_run_leaves_no_namespace_or_process(tmp_path, sig):
    out = tmp_path / "res"
    proc = subprocess.Popen([GOVKIT, "bench", "--profile", "none", "--net", "netns",
                             "--sizes", "32,64", "--duration", "4", "--repeat", "1",
                             "--max-repeat", "1", "--out", str(out), "--no-report"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not _runners_with(str(out)):
            time.sleep(0.1)
        assert _namespaces(proc.pid), "the run never made its namespaces"
        time.sleep(1.5)                  # mid-point
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert _namespaces(proc.pid) == [] and "govkit-pub" not in _links()
    time.sleep(0.5)
    assert _runners_with(str(out)) == []


@pytest.fixture
def sshd(tmp_path):
    require_sshd_or_skip()
    with sshd_in_netns(tmp_path / "sshd") as server:
        yield server


def test_hosts_run_a_secured_profile_over_ssh(tmp_path, sshd):
    r = _govkit("bench", "--profile", "rtps_sign", "--hosts", f"pub=local,sub={sshd.alias}",
                "--ssh-config", str(sshd.config), "--transport", "udp,tls", "--sizes", "32",
                "--duration", "1", "--repeat", "1", "--max-repeat", "1", "--out", "res",
                "--no-report", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((tmp_path / "res/results.json").read_text())
    hosts = doc["settings"]["network"]["hosts"]
    assert hosts["sub"]["address"] == sshd.address and hosts["sub"]["target"] == sshd.alias
    workdir = hosts["sub"]["workdir"]
    assert workdir.startswith("/tmp/govkit-") and not Path(workdir).exists()
    shipped = hosts["sub"]["shipped"]
    # its own key and keystore, the CA certificates, its signed documents: nothing else
    assert "files/pki/sub.key" in shipped and "files/tls/sub-keystore.pem" in shipped
    assert not [f for f in shipped if f.endswith(".key") and f != "files/pki/sub.key"]
    assert not [f for f in shipped if "pub" in Path(f).name]
    for res in doc["results"]:
        assert res["status"] == "ok", res.get("error")
        assert res["commands"][0].startswith(f"ssh -F {sshd.config} -o BatchMode=yes")
        assert res["cpus"]["sub"] == "remote (not pinned)"
        assert res["endpoints"]["sub"]["address"] == sshd.address
    assert _runners_with(workdir) == []


def test_hosts_ship_the_crl_the_remote_configuration_names(tmp_path, sshd):
    """Once the PKI has a CRL every configuration names it: the remote side gets it too
    (and, checking it, still matches the unrevoked local side)."""
    from govkit.pki.issuance import init_pki
    from govkit.pki.revocation import revoke
    pki, _ = init_pki(tmp_path / "pki", participants=("pub", "sub", "other"))
    revoke(pki, "other")
    r = _govkit("bench", "--profile", "rtps_sign", "--hosts", f"pub=local,sub={sshd.alias}",
                "--ssh-config", str(sshd.config), "--sizes", "32", "--duration", "1",
                "--repeat", "1", "--max-repeat", "1", "--out", "res", "--no-report",
                cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((tmp_path / "res/results.json").read_text())
    assert "files/pki/identity_ca.crl.pem" in doc["settings"]["network"]["hosts"]["sub"][
        "shipped"]
    assert all(res["status"] == "ok" for res in doc["results"]), doc["results"]



def test_a_side_gets_its_files_as_govkits_one_archive(tmp_path, sshd):
    """What ship sends is govkit.common.archive's tar: the remote copies are the files'
    bytes, a private key arrives 0600 whatever its mode here, and nothing is writable by
    others (the remote side is this machine, so its directory is read directly)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    from govkit.runners.netpath import SshHost
    (tmp_path / "pki").mkdir()
    key, cert = tmp_path / "pki" / "sub.key", tmp_path / "pki" / "sub.pem"
    key.write_bytes(ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    cert.write_bytes(b"not really a certificate\n")
    os.chmod(key, 0o644)          # carelessly readable here: never so there
    os.chmod(cert, 0o666)
    host = SshHost("sub", sshd.alias, sshd.config)
    host.open()
    try:
        host.ship([key, cert])
        for local, mode in ((key, 0o600), (cert, 0o644)):
            there = Path(host.shipped[local])
            assert there.read_bytes() == local.read_bytes()
            assert there.stat().st_mode & 0o7777 == mode, there
        assert str(host.shipped[key]).endswith("/files/pki/sub.key")
    finally:
        workdir = host.workdir
        host.close()
    assert not Path(workdir).exists()


def test_interrupting_a_hosts_run_removes_the_remote_directory(tmp_path, sshd):
    out = tmp_path / "res"
    proc = subprocess.Popen([GOVKIT, "bench", "--profile", "none", "--hosts",
                             f"pub=local,sub={sshd.alias}", "--ssh-config", str(sshd.config),
                             "--sizes", "32,64", "--duration", "4", "--repeat", "1",
                             "--max-repeat", "1", "--out", str(out), "--no-report"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        workdir = None
        while time.monotonic() < deadline and workdir is None:
            if (out / "results.json").exists():
                net = json.loads((out / "results.json").read_text())["settings"].get("network")
                workdir = (net or {}).get("hosts", {}).get("sub", {}).get("workdir")
            time.sleep(0.1)
        assert workdir, "the run never recorded its remote work directory"
        while time.monotonic() < deadline and not _runners_with(workdir):
            time.sleep(0.1)
        assert _runners_with(workdir), "the remote runner never started"
        time.sleep(1.5)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert not Path(workdir).exists()
    time.sleep(0.5)
    assert _runners_with(workdir) == [] and _runners_with(str(out)) == []


def test_a_killed_govkit_leaves_no_remote_runner(tmp_path, sshd):
    """Even SIGKILL (no cleanup at all): the remote runner sees its ssh stdin close and
    stops; only the remote directory stays (README says so)."""
    out = tmp_path / "res"
    proc = subprocess.Popen([GOVKIT, "bench", "--profile", "none", "--hosts",
                             f"pub=local,sub={sshd.alias}", "--ssh-config", str(sshd.config),
                             "--sizes", "32", "--duration", "6", "--repeat", "1",
                             "--max-repeat", "1", "--out", str(out), "--no-report"],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        workdir = None
        while time.monotonic() < deadline and not (workdir and _runners_with(workdir)):
            if (out / "results.json").exists():
                net = json.loads((out / "results.json").read_text())["settings"].get("network")
                workdir = (net or {}).get("hosts", {}).get("sub", {}).get("workdir")
            time.sleep(0.1)
        assert workdir and _runners_with(workdir)
        os.killpg(proc.pid, signal.SIGKILL)      # govkit and its local children
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _runners_with(workdir):
            time.sleep(0.2)
        assert _runners_with(workdir) == []
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        subprocess.run(["rm", "-rf", workdir or "/nonexistent"], check=False)
