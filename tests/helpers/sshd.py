"""A throwaway OpenSSH server inside a network namespace, for `govkit bench --hosts` tests.

`sshd_in_netns` creates a namespace `govkit-sshd-<pid>-<n>` joined to this machine's own
namespace by a veth pair addressed from a random /30 of RFC 2544's 198.18.0.0/15 (so no
address outside this machine is ever contacted), starts Debian's /usr/sbin/sshd there with
a generated host key and one authorized (generated) client key, and writes an ssh_config
whose host alias reaches it with strict host-key checking against a known_hosts file of
its own: ~/.ssh is never read or written. Everything is removed on exit.
"""

from __future__ import annotations

import ipaddress
import os
import random
import shutil
import signal
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import count
from pathlib import Path

SSHD = "/usr/sbin/sshd"
_serial = count()


def require_root_or_skip(what: str) -> None:
    """Skip without root, but fail when GOVKIT_REQUIRE names root (CI must run these)."""
    import pytest

    from helpers.require import missing
    if os.geteuid() == 0 and shutil.which("ip"):
        return
    pytest.skip(missing("root", f"{what} needs root and iproute2 (network namespaces)"))


def require_sshd_or_skip() -> None:
    import pytest

    from helpers.require import missing
    if os.path.exists(SSHD) and shutil.which("ssh") and shutil.which("ssh-keygen"):
        return
    pytest.skip(missing("sshd", "OpenSSH server/client not installed (bash .ci/setup "
                                "installs them)"))


@dataclass
class SshServer:
    alias: str               # Host alias in `config`
    config: Path             # ssh_config to pass with --ssh-config
    address: str             # the server's address (in its namespace)
    netns: str
    veth: str                # this machine's end of the veth pair
    pid: int                 # sshd's pid


def _run(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, timeout=30)


@contextmanager
def sshd_in_netns(tmp: Path):
    n = next(_serial)
    ns = f"govkit-sshd-{os.getpid()}-{n}"
    veth = f"gks{os.getpid() % 100000}{n}"[:15]
    net = ipaddress.ip_network((int(ipaddress.ip_address("198.18.0.0"))
                                + 4 * random.SystemRandom().randrange(2 ** 17 // 4), 30))
    here, there = (str(a) for a in list(net.hosts())[:2])
    tmp.mkdir(parents=True, exist_ok=True)
    os.chmod(tmp, 0o700)
    host_key, client_key = tmp / "host_key", tmp / "client_key"
    for key in (host_key, client_key):
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key))
    (tmp / "authorized_keys").write_text((tmp / "client_key.pub").read_text())
    pub = (tmp / "host_key.pub").read_text().split()
    (tmp / "known_hosts").write_text(f"{there} {pub[0]} {pub[1]}\n")
    (tmp / "sshd_config").write_text(
        f"ListenAddress {there}\nPort 22\nHostKey {host_key}\n"
        f"AuthorizedKeysFile {tmp / 'authorized_keys'}\nPidFile {tmp / 'sshd.pid'}\n"
        "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
        "X11Forwarding no\nAllowTcpForwarding no\nPrintMotd no\n")
    alias = f"govkit-test-{n}"
    (tmp / "ssh_config").write_text(
        f"Host {alias}\n  HostName {there}\n  User {os.environ.get('USER', 'root')}\n"
        f"  IdentityFile {client_key}\n  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {tmp / 'known_hosts'}\n  StrictHostKeyChecking yes\n"
        "  LogLevel ERROR\n")
    proc = None
    try:
        _run("ip", "netns", "add", ns)
        _run("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
        _run("ip", "addr", "add", f"{here}/30", "dev", veth)
        _run("ip", "link", "set", veth, "up")
        _run("ip", "-n", ns, "addr", "add", f"{there}/30", "dev", "eth0")
        _run("ip", "-n", ns, "link", "set", "eth0", "up")
        _run("ip", "-n", ns, "link", "set", "lo", "up")
        Path("/run/sshd").mkdir(exist_ok=True)       # sshd's privilege separation dir
        proc = subprocess.Popen(["ip", "netns", "exec", ns, SSHD, "-D", "-e", "-f",
                                 str(tmp / "sshd_config")], stdout=subprocess.DEVNULL,
                                stderr=open(tmp / "sshd.log", "wb"), start_new_session=True)
        deadline = time.monotonic() + 20
        while subprocess.run(["ssh", "-F", str(tmp / "ssh_config"), "-o", "BatchMode=yes",
                              alias, "true"], capture_output=True, timeout=20).returncode:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("sshd did not come up: "
                                   + (tmp / "sshd.log").read_text()[-2000:])
            time.sleep(0.2)
        yield SshServer(alias, tmp / "ssh_config", there, ns, veth, proc.pid)
    finally:
        if proc is not None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        subprocess.run(["ip", "link", "del", veth], capture_output=True, timeout=30)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
