"""Where a point's two processes run: both on loopback (`lo`), in two network namespaces
joined by a veth pair (`netns`), or on two machines reached over OpenSSH (`hosts`).

`NetPaths` is the one stage object `govkit bench` opens for a run: it sets up what the
run's paths need, hands each point its two `Endpoint`s (govkit.runners.network; the runner builds
its configuration from them and the launcher prefixes `ip netns exec` or wraps the command
in ssh), ships each remote side only its own files, and tears everything down again on
every way out: normal end, a failed point, an exception, Ctrl-C or SIGTERM (govkit.bench.schedule
turns SIGTERM into KeyboardInterrupt). Teardown ignores further Ctrl-C until it is done.

Only SIGKILL of govkit itself can leave something behind: namespaces are named
`govkit-<pid>-<n>-pub|sub`, and the next run removes those whose govkit is gone; a remote
process stops by itself when its ssh connection closes (runners.processes.remote_script).
"""

from __future__ import annotations

import ipaddress
import json
import os
import random
import re
import shlex
import signal
import socket
import stat
import subprocess
from contextlib import contextmanager
from dataclasses import replace
from itertools import count
from pathlib import Path, PurePosixPath

from govkit.common.archive import Member, tar_bytes
from govkit.common.errors import GovkitError
from govkit.common.fsutil import write_atomic
from govkit.runners.base import Bundle
from govkit.runners.network import BENCH_NET, ROLES, Endpoint, check_ssh_target, shown_path

_CAP_NET_ADMIN, _CAP_SYS_ADMIN = 12, 21
_STALE_RE = re.compile(r"govkit-(\d+)-\d+-(pub|sub)")
_serial = count()
_rand = random.SystemRandom()


def _run(argv: list[str], what: str, timeout: float = 30, **kw) -> subprocess.CompletedProcess:
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
    except FileNotFoundError:
        raise GovkitError(f"{what}: `{argv[0]}` not found (Debian package "
                          f"{'iproute2' if argv[0] == 'ip' else 'openssh-client'})") from None
    except subprocess.TimeoutExpired:
        raise GovkitError(f"{what}: `{shlex.join(argv[:6])} …` did not answer within "
                          f"{timeout:.0f} s") from None
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or [f"exit code {r.returncode}"])[-1]
        raise GovkitError(f"{what}: {last}")
    return r


@contextmanager
def _no_interrupts():
    """Cleanup runs to its end: a second Ctrl-C (or SIGTERM) waits until it is done."""
    try:
        saved = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:          # not the main thread: signals are not ours to change
        saved = {}
    try:
        yield
    finally:
        for s, h in saved.items():
            signal.signal(s, h)


# ------------------------------------------------------------------ network namespaces

def _capabilities() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    except (OSError, ValueError):
        pass
    return 0


def check_netns_allowed() -> None:
    caps = _capabilities()
    if not (caps >> _CAP_NET_ADMIN & 1 and caps >> _CAP_SYS_ADMIN & 1):
        raise GovkitError("--net netns needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN: it "
                          "creates two network namespaces and a veth pair and runs the "
                          "processes in them); run it as root, or use --net lo")


class NetnsPair:
    """Two namespaces, `govkit-<pid>-<n>-pub` and `-sub`, joined by one veth pair created
    directly inside them (it never exists in this machine's own namespace, and goes when
    they go), addressed from a random /30 of RFC 2544's benchmarking range 198.18.0.0/15."""

    def __init__(self) -> None:
        n = next(_serial)
        self.names = {role: f"govkit-{os.getpid()}-{n}-{role}" for role in ROLES}
        self.interfaces = {role: f"govkit-{role}" for role in ROLES}
        net = ipaddress.ip_network((int(BENCH_NET.network_address)
                                    + 4 * _rand.randrange(BENCH_NET.num_addresses // 4), 30))
        hosts = list(net.hosts())
        self.subnet = str(net)
        self.addresses = {"pub": str(hosts[0]), "sub": str(hosts[1])}
        self.created: list[str] = []

    def setup_commands(self) -> list[list[str]]:
        ns, dev, addr = self.names, self.interfaces, self.addresses
        cmds = [["ip", "netns", "add", ns[r]] for r in ROLES]
        cmds.append(["ip", "link", "add", dev["pub"], "netns", ns["pub"], "type", "veth",
                     "peer", "name", dev["sub"], "netns", ns["sub"]])
        for r in ROLES:
            cmds += [["ip", "-n", ns[r], "addr", "add", f"{addr[r]}/30", "dev", dev[r]],
                     ["ip", "-n", ns[r], "link", "set", dev[r], "up"],
                     ["ip", "-n", ns[r], "link", "set", "lo", "up"]]
        return cmds

    def teardown_commands(self) -> list[list[str]]:
        return [["ip", "netns", "del", self.names[r]] for r in ROLES]

    def create(self) -> None:
        check_netns_allowed()
        remove_stale_namespaces()
        try:
            for cmd in self.setup_commands():
                _run(cmd, "--net netns")
                if cmd[:3] == ["ip", "netns", "add"]:
                    self.created.append(cmd[3])
        except BaseException:
            self.delete()
            raise

    def delete(self) -> None:
        with _no_interrupts():
            for name in self.created:
                subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=30)
            self.created = []

    def endpoints(self) -> tuple[Endpoint, Endpoint]:
        return tuple(Endpoint(r, self.addresses[r], self.interfaces[r], netns=self.names[r])
                     for r in ROLES)

    def counters(self) -> dict[str, dict]:
        """Bytes and packets each side's veth end has sent and received so far."""
        out = {}
        for r in ROLES:
            res = _run(["ip", "-n", self.names[r], "-s", "-j", "link", "show", "dev",
                        self.interfaces[r]], "--net netns counters")
            s = json.loads(res.stdout)[0]["stats64"]
            out[r] = {"tx_bytes": s["tx"]["bytes"], "tx_packets": s["tx"]["packets"],
                      "rx_bytes": s["rx"]["bytes"], "rx_packets": s["rx"]["packets"]}
        return out

    def to_json(self) -> dict:
        return {"link": "veth pair", "subnet": self.subnet, "namespaces": self.names,
                "interfaces": self.interfaces, "addresses": self.addresses}


def remove_stale_namespaces() -> list[str]:
    """Namespaces an earlier govkit made and could not remove (it was SIGKILLed): those
    whose process no longer exists."""
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=30)
    removed = []
    for line in r.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        m = _STALE_RE.fullmatch(name)
        if m and not Path(f"/proc/{m[1]}").exists():
            subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=30)
            removed.append(name)
    return removed


# ------------------------------------------------------------------------- ssh hosts

# Where a remote side's files go, inside its work directory; nothing else is shipped.
_FILE_FIELDS = ("identity_ca", "certificate", "private_key", "permissions_ca", "governance",
                "permissions")
_PROBE = ("d=$(mktemp -d /tmp/govkit-XXXXXXXX) && echo \"dir=$d\" && "
          "echo \"ddsperf=$(command -v ddsperf)\" && "
          "for p in /usr/lib/*/libddsc0debian /usr/lib /usr/lib64 /usr/local/lib "
          "/usr/local/lib64; do if [ -e \"$p/libdds_security_auth.so\" ]; then "
          "echo \"plugins=$p\"; break; fi; done")


class SshHost:
    """One remote side: `ssh [-F CONFIG] -o BatchMode=yes TARGET`, never a password
    prompt; host keys are checked as the user's ssh configuration says."""

    def __init__(self, role: str, target: str, ssh_config: Path | None = None) -> None:
        self.role, self.target = role, check_ssh_target(target, role)
        self.argv = (*ssh_command(ssh_config), "-o", "BatchMode=yes", "-o",
                     "ConnectTimeout=10", target)
        self.workdir: str | None = None
        self.ddsperf = self.plugins = None
        self.shipped: dict[Path, PurePosixPath] = {}

    def run(self, script: str, what: str, data: bytes | None = None, timeout: float = 60):
        return _run([*self.argv, script], f"--hosts {self.role}={self.target}: {what}",
                    timeout=timeout, **({"input": data.decode("latin-1")} if data else {}))

    def open(self) -> None:
        found = dict(line.split("=", 1) for line in
                     self.run(_PROBE, "cannot start").stdout.splitlines() if "=" in line)
        self.workdir = found.get("dir")
        if not self.workdir:
            raise GovkitError(f"--hosts {self.role}={self.target}: no work directory made")
        self.ddsperf, self.plugins = found.get("ddsperf") or None, found.get("plugins")
        if not self.ddsperf or not self.plugins:
            raise GovkitError(f"--hosts {self.role}={self.target}: Cyclone DDS ddsperf "
                              "and its security plugins are not installed there (Debian: "
                              "apt-get install cyclonedds-tools libddsc0debian)")

    def remote_path(self, local: Path) -> PurePosixPath:
        return PurePosixPath(self.workdir) / "files" / local.parent.name / local.name

    def ship(self, files: list[Path]) -> None:
        """Copy `files` into the work directory as one tar stream over ssh: govkit's one
        archive (govkit.common.archive: relative names, no owner, keys 0600, nothing
        writable by others), with each file's own bytes and mode."""
        new = [f for f in dict.fromkeys(files) if f not in self.shipped]
        if not new:
            return
        members = [Member(str(self.remote_path(f).relative_to(self.workdir)),
                          Path(f).read_bytes(), stat.S_IMODE(os.stat(f).st_mode))
                   for f in new]
        self.run(f"tar -C {shlex.quote(self.workdir)} -xf -", "copying files",
                 data=tar_bytes(members))
        self.shipped.update({f: self.remote_path(f) for f in new})

    def write(self, path: PurePosixPath, text: str) -> None:
        q = shlex.quote(str(path))
        self.run(f"cat > {q}.tmp && mv {q}.tmp {q}", "writing a configuration",
                 data=text.encode())

    def cleanup_script(self) -> str:
        d = shlex.quote(self.workdir or "/nonexistent")
        # A runner whose watcher missed the end (it should not) is stopped here, and only
        # if that pid is still a ddsperf: a pid can be reused by another program.
        return (f"for f in {d}/*.pid; do [ -e \"$f\" ] || continue; p=$(cat \"$f\"); "
                f"grep -q ddsperf /proc/$p/cmdline 2>/dev/null && kill -KILL $p; done; "
                f"rm -rf {d}")

    def close(self) -> None:
        if self.workdir is None:
            return
        with _no_interrupts():
            try:
                self.run(self.cleanup_script(), "cleaning up", timeout=30)
                self.workdir = None
            except GovkitError:
                pass           # reported by the caller through `leftovers`

    def endpoint(self, address: str) -> Endpoint:
        return Endpoint(self.role, address, None, ssh=self.argv, workdir=self.workdir,
                        ddsperf=self.ddsperf, plugins=self.plugins)


def ssh_command(ssh_config: Path | None) -> tuple[str, ...]:
    """`ssh [-F CONFIG]`: the start of every ssh command line govkit runs. The configuration
    as an absolute path, so that no file name can look like an option."""
    return ("ssh", *(("-F", os.path.abspath(ssh_config)) if ssh_config else ()))


def resolve_host(target: str, ssh_config: Path | None) -> str:
    """The IPv4 address ssh would connect to for `target` (its config's HostName)."""
    host = check_ssh_target(target).rsplit("@", 1)[-1]
    try:
        r = subprocess.run([*ssh_command(ssh_config), "-G", target], capture_output=True,
                           text=True, timeout=10)
        host = next((line.split(None, 1)[1] for line in r.stdout.splitlines()
                     if line.startswith("hostname ")), host)
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        return socket.getaddrinfo(host, None, socket.AF_INET)[0][4][0]
    except (OSError, IndexError):
        raise GovkitError(f"--hosts: cannot resolve {host!r} to an IPv4 address; pass "
                          "--peer-address pub=ADDR,sub=ADDR") from None


def local_address(towards: str) -> str:
    """This machine's source address on the route to `towards`."""
    r = _run(["ip", "-j", "route", "get", towards], f"--hosts: no route to {towards}")
    try:
        return json.loads(r.stdout)[0]["prefsrc"]
    except (ValueError, LookupError):
        raise GovkitError(f"--hosts: no local source address towards {towards}; pass "
                          "--peer-address pub=ADDR,sub=ADDR") from None


# --------------------------------------------------------------------------- the stage

class NetPaths:
    """Every path a run uses, set up once for the run and torn down at its end."""

    def __init__(self, paths: list[str], hosts: dict[str, str] | None = None,
                 peer_addresses: dict[str, str] | None = None,
                 ssh_config: Path | None = None) -> None:
        self.paths = list(paths)
        self.hosts = hosts or {}
        self.peer_addresses = peer_addresses or {}
        self.ssh_config = ssh_config
        self.netns = NetnsPair() if "netns" in self.paths else None
        self.remotes = {r: SshHost(r, h, ssh_config) for r, h in self.hosts.items()
                        if h != "local"} if "hosts" in self.paths else {}
        self._hosts_endpoints: tuple[Endpoint, Endpoint] | None = None

    # ---- checks, plan
    def check(self) -> None:
        if self.netns:
            check_netns_allowed()
        if self.ssh_config is not None and not Path(self.ssh_config).is_file():
            raise GovkitError(f"--ssh-config {shown_path(self.ssh_config)}: no such file")

    def plan(self) -> list[str]:
        """What setup and teardown run, as commands a user could copy (for --dry-run)."""
        lines = []
        if self.netns:
            lines += [shlex.join(c) for c in self.netns.setup_commands()]
        for host in self.remotes.values():
            lines.append(shlex.join([*host.argv, _PROBE]))
            lines.append(f"tar -cf - <this side's files> | "
                         f"{shlex.join([*host.argv, 'tar -C <remote dir> -xf -'])}")
        lines += [f"# afterwards: {shlex.join(c)}" for c in
                  (self.netns.teardown_commands() if self.netns else [])]
        lines += [f"# afterwards: {shlex.join([*h.argv, 'rm -rf <remote dir>'])}"
                  for h in self.remotes.values()]
        return lines

    # ---- open / close
    def open(self) -> None:
        try:
            if self.netns:
                self.netns.create()
            for host in self.remotes.values():
                host.open()
        except BaseException:
            self.close()
            raise

    def close(self) -> list[str]:
        """Tear everything down; returns what could not be removed."""
        left = []
        if self.netns:
            self.netns.delete()
        for host in self.remotes.values():
            where = host.workdir
            host.close()
            if host.workdir is not None:
                left.append(f"{host.target}:{where}")
        return left

    def __enter__(self) -> NetPaths:
        self.open()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- what a point gets
    def endpoints(self, path: str, planned: bool = False) -> tuple[Endpoint, Endpoint] | None:
        if path == "lo":
            return None
        if path == "netns":
            return self.netns.endpoints()
        if self._hosts_endpoints is None or planned:
            eps = self._host_endpoints(planned)
            if planned:
                return eps
            self._hosts_endpoints = eps
        return self._hosts_endpoints

    def _host_endpoints(self, planned: bool) -> tuple[Endpoint, Endpoint]:
        address = dict(self.peer_addresses)
        for role, target in self.hosts.items():
            if target != "local" and role not in address:
                address[role] = "<address of " + target + ">" if planned \
                    else resolve_host(target, self.ssh_config)
        for role, target in self.hosts.items():
            if target == "local" and role not in address:
                other = address["sub" if role == "pub" else "pub"]
                address[role] = "<local address>" if planned else local_address(other)
        out = []
        for role in ROLES:
            host = self.remotes.get(role)
            if host is None:
                out.append(Endpoint(role, address[role], None))
            else:
                ep = host.endpoint(address[role])
                out.append(replace(ep, workdir=ep.workdir or "/tmp/govkit-XXXXXXXX"))
        return tuple(out)

    def bundle(self, bundle: Bundle, path: str) -> Bundle:
        """The bundle as a point over `path` sees it: a remote side's files at their
        remote paths, shipped there first (its own files only: never the other side's
        key, never a CA key)."""
        if path != "hosts" or not self.remotes:
            return bundle
        parts, tls = dict(bundle.participants), dict(bundle.tls)
        for role, host in self.remotes.items():
            files = [bundle.tls[role]] if role in bundle.tls else []
            mine = bundle.participants.get(role)
            # the CRL too, once there is one (govkit.pki.revocation); a key in a local
            # token cannot travel
            fields = _FILE_FIELDS + (("crl",) if mine is not None and mine.crl else ())
            if mine is not None:
                if isinstance(mine.private_key, str):
                    raise GovkitError(f"{role}'s private key is in a local PKCS#11 token; "
                                      f"it cannot be used on another host (--hosts)")
                files += [getattr(mine, f) for f in fields]
            refuse_foreign_keys(files, role, [
                c for r, p in bundle.participants.items() for c in
                (p.identity_ca, p.permissions_ca) + ((p.certificate,) if r != role else ())])
            host.ship(files)
            if mine is not None:
                parts[role] = replace(mine, **{f: host.shipped[getattr(mine, f)]
                                               for f in fields})
            if role in tls:
                tls[role] = host.shipped[tls[role]]
        return replace(bundle, participants=parts, tls=tls)

    def write(self, path, text: str) -> None:
        """Write a configuration file where its process will read it."""
        for host in self.remotes.values():
            if host.workdir and str(path).startswith(host.workdir + "/"):
                host.write(PurePosixPath(path), text)
                return
        write_atomic(Path(path), text)

    def counters(self, path: str) -> dict | None:
        return self.netns.counters() if path == "netns" and self.netns else None

    def to_json(self) -> dict:
        out: dict = {"paths": self.paths}
        if self.netns:
            out["netns"] = self.netns.to_json()
        if "hosts" in self.paths:
            eps = self._hosts_endpoints
            out["hosts"] = {r: {"target": self.hosts[r],
                                **({"address": e.address} if e is not None else {})}
                            for r, e in zip(ROLES, eps or (None, None), strict=True)}
            for role, host in self.remotes.items():
                # what went there: its own files only (checked in refuse_foreign_keys)
                out["hosts"][role].update(workdir=host.workdir, shipped=sorted(
                    str(p.relative_to(host.workdir)) for p in host.shipped.values()))
            out["ssh"] = "OpenSSH, BatchMode=yes" + (f", -F {self.ssh_config}"
                                                     if self.ssh_config else "")
        return out


_PEM_KEY = re.compile(rb"-----BEGIN ([A-Z ]*PRIVATE KEY)-----.+?-----END \1-----", re.S)


def _public_keys(certificates: list[Path]) -> dict[bytes, str]:
    """The public key (SubjectPublicKeyInfo DER) of each certificate file, to its name."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    out = {}
    for path in certificates:
        try:
            cert = x509.load_pem_x509_certificate(Path(path).read_bytes())
        except (OSError, ValueError):
            continue
        out[cert.public_key().public_bytes(
            serialization.Encoding.DER,
            serialization.PublicFormat.SubjectPublicKeyInfo)] = Path(path).name
    return out


def refuse_foreign_keys(files: list[Path], role: str, others: list[Path] = ()) -> None:
    """A remote side gets its own key (DDS identity and TLS keystore) and certificates
    only; this is checked here, where files leave the machine: by name, and by content,
    every private key in a file against `others`, the certificates whose keys must stay
    (the CAs', the other side's): a CA key copied to pki/sub.key went by its name alone."""
    from cryptography.hazmat.primitives import serialization
    forbidden = _public_keys(list(others))
    for f in files:
        name = Path(f).name
        if name.endswith("_ca.key") or (name.endswith(".key") and name != f"{role}.key"):
            raise GovkitError(f"refusing to copy {f} to the {role} host: not its own key")
        try:
            data = Path(f).read_bytes()
        except OSError:
            continue                        # shipping it says what is wrong with it
        for block in _PEM_KEY.finditer(data):
            try:
                key = serialization.load_pem_private_key(block.group(), None)
            except (ValueError, TypeError):
                continue                    # encrypted or unreadable: no key to give away
            public = key.public_key().public_bytes(
                serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
            if public in forbidden:
                raise GovkitError(f"refusing to copy {f} to the {role} host: it holds the "
                                  f"private key of {forbidden[public]}, not its own key")
