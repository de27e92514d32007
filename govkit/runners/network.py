"""The network a point is measured over: transport, path and injected loss.

One more dimension of the point model (govkit.bench.options.Cell,
govkit.results.summary.point_key): a
point is (profile, mode, size) *over a network*, and everything that compares points
(overhead over `none`, the transport comparison) compares points over the same network.
A record written before this dimension existed is UDP over loopback without loss.

- transport: `udp` (Cyclone's default), `tcp` (DDSI over TCP), `tls` (DDSI over TCP with
  Cyclone's <SSL>: TLS 1.3, both ends present a certificate issued by the test PKI's
  Identity CA; see govkit.pki.testpki.init_tls);
- path: `lo` (both processes on this machine's loopback), `netns` (two network namespaces
  joined by a veth pair: a real IP stack and link between them, govkit.runners.netpath), `hosts`
  (the two sides on the machines named by --hosts, over OpenSSH);
- loss_pct: packets the *publisher* drops before sending them (Cyclone's
  Internal/Test/XmitLossiness, per mille), like seed 002's `--loss-rate` with netem on the
  publisher's NIC; not a network impairment: the link itself loses nothing.

Pure data and parsing: nothing here touches the system.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from govkit.catalog.measures import PATHS, TRANSPORTS
from govkit.common.errors import GovkitError
from govkit.common.findings import quote_value

ROLES = ("pub", "sub")
# The seeds' CSV names carry the transport (lat_udpv4_pub_…); seed 003 adds TCP and TLS.
CSV_TRANSPORT = {"udp": "udpv4", "tcp": "tcpv4", "tls": "tlsv4"}
MAX_LOSS_PCT = 50          # beyond that discovery itself rarely completes within a repeat
# RFC 2544's benchmarking range: never routed, so a test address cannot reach anyone else.
BENCH_NET = ipaddress.ip_network("198.18.0.0/15")
LOSS_MEANING = (
    "loss is injected by the sender: Cyclone DDS drops that share of the publisher's "
    "outgoing RTPS packets (Internal/Test/XmitLossiness) before they reach the network; "
    "the link itself loses nothing. The writer is reliable, so every dropped sample is "
    "retransmitted after the reader's negative acknowledgement or the next heartbeat: "
    "throughput runs count the retransmitted bytes (ddsperf -X, publisher side); latency "
    "runs show it as round trips delayed by the retransmission (the tail), ddsperf counts "
    "no retransmissions for ping/pong.")


@dataclass(frozen=True)
class Network:
    transport: str = "udp"
    path: str = "lo"
    loss_pct: float = 0

    @property
    def key(self) -> tuple:
        return (self.transport, self.path, self.loss_pct)

    @property
    def loss_per_mille(self) -> int:
        return round(self.loss_pct * 10)

    @property
    def label(self) -> str:
        """Short and unique: `udp lo`, `tls netns loss 1%`."""
        loss = f" loss {self.loss_pct:g}%" if self.loss_pct else ""
        return f"{self.transport} {self.path}{loss}"

    @property
    def slug(self) -> str:
        """For file names: `udp-lo`, `tls-netns-loss1pct`."""
        loss = f"-loss{self.loss_pct:g}pct".replace(".", "_") if self.loss_pct else ""
        return f"{self.transport}-{self.path}{loss}"

    def to_json(self) -> dict:
        return {"transport": self.transport, "path": self.path, "loss_pct": self.loss_pct}

    @classmethod
    def of(cls, record: dict) -> Network:
        """The network of a result or summary row; defaults for records made before it.
        One object per distinct network (a report asks this of every one of tens of
        thousands of records, several times)."""
        fields = (record.get("transport", "udp"), record.get("path", "lo"),
                  record.get("loss_pct", 0))
        key = (*fields, *map(type, fields))        # 0 and 0.0 are equal, not the same
        try:
            return _KNOWN[key]
        except KeyError:
            return _KNOWN.setdefault(key, cls(*fields)) if len(_KNOWN) < 1000 else cls(*fields)
        except TypeError:       # unhashable: results.check refuses it, with its place
            return cls(*fields)


_KNOWN: dict[tuple, Network] = {}


DEFAULT = Network()


def sort_key(net: Network) -> tuple:
    return (TRANSPORTS.index(net.transport) if net.transport in TRANSPORTS else 99,
            PATHS.index(net.path) if net.path in PATHS else 99, net.loss_pct)


def _items(values: list[str] | str | None) -> list[str]:
    """Repeatable options that also take comma lists: `--transport udp,tcp --transport tls`."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    return [x.strip() for v in values for x in v.split(",") if x.strip()]


def parse_transports(values) -> list[str]:
    found = _items(values) or ["udp"]
    for t in found:
        if t not in TRANSPORTS:
            raise GovkitError(f"invalid --transport {t!r}: use {', '.join(TRANSPORTS)} "
                              "(repeatable, or a comma list)")
    return list(dict.fromkeys(found))


def parse_paths(values, hosts: bool) -> list[str]:
    found = _items(values) or (["hosts"] if hosts else ["lo"])
    for p in found:
        if p not in PATHS:
            raise GovkitError(f"invalid --net {p!r}: use lo, netns or hosts (with --hosts)")
    if "hosts" in found and not hosts:
        raise GovkitError("--net hosts needs --hosts pub=USER@HOST,sub=USER@HOST")
    if hosts and "hosts" not in found:
        raise GovkitError("--hosts is given but --net does not include hosts")
    return list(dict.fromkeys(found))


def parse_loss_rates(values) -> list[float]:
    """`--loss-rate P` in percent (0.1 steps: Cyclone counts per mille)."""
    out = []
    for text in _items(values) or ["0"]:
        try:
            pct = float(text.removesuffix("%"))
        except ValueError:
            raise GovkitError(f"invalid --loss-rate {text!r}: a percentage, e.g. 1 or 0.5") \
                from None
        if not 0 <= pct <= MAX_LOSS_PCT:
            raise GovkitError(f"--loss-rate {text} is out of range (0 .. {MAX_LOSS_PCT} %)")
        if abs(pct * 10 - round(pct * 10)) > 1e-9:
            raise GovkitError(f"--loss-rate {text}: Cyclone drops per mille, so use steps "
                              "of 0.1 %")
        out.append(int(pct) if pct == int(pct) else round(pct, 1))
    return list(dict.fromkeys(out))


def networks(transports: list[str], paths: list[str], losses: list[float]) -> list[Network]:
    return [Network(t, p, loss) for p in paths for t in transports for loss in losses]


def shown(text: str) -> str:
    """A user's value in an error line: quoted, control characters escaped, at most 40
    characters of it (a value can be any length): one line, whatever it holds."""
    return quote_value(text, 40)


def shown_path(path) -> str:
    """A path in an error line: as it is, or, if it holds a newline or another control
    character, quoted with them escaped (the message stays one line)."""
    text = str(path)
    return text if text.isprintable() else quote_value(text, 200)


def parse_roles(text: str | None, option: str) -> dict[str, str]:
    """`pub=A,sub=B` (both roles, once each) for --hosts and --peer-address. Spaces around
    the commas are allowed; no other whitespace and no control character anywhere (a
    newline or tab would split an ssh argument or a configuration line)."""
    if text is None:
        return {}
    bad = next((c for c in text if not c.isprintable() or (c.isspace() and c != " ")), None)
    if bad is not None:
        raise GovkitError(f"invalid {option} {shown(text)}: holds the control or whitespace "
                          f"character {bad!r}")
    out: dict[str, str] = {}
    for part in text.split(","):
        role, sep, value = part.strip().partition("=")
        if not sep or role not in ROLES or not value.strip() or role in out:
            raise GovkitError(f"invalid {option} {shown(text)}: use pub=…,sub=… (each once)")
        out[role] = value.strip()
    if set(out) != set(ROLES):
        raise GovkitError(f"invalid {option} {shown(text)}: name both pub= and sub=")
    return out


# An ssh destination as --hosts takes it: [USER@]HOST of plain characters, the first of
# each part a letter, digit or '_' (':' for an IPv6 host). Anything else could reach ssh as
# an option (a leading '-'), as two arguments or lines (whitespace, control characters),
# or through ssh's own %-expansion of the user and host names into a ProxyCommand or Match
# exec shell command (OpenSSH before 9.6 passed shell characters through: CVE-2023-51385).
_SSH_TARGET = re.compile(r"(?:[A-Za-z0-9_][A-Za-z0-9._-]{0,63}@)?"
                         r"[A-Za-z0-9_:][A-Za-z0-9._:%-]{0,252}")


def check_ssh_target(target: str, role: str = "") -> str:
    """`target` if it is a destination ssh can only read as one (see _SSH_TARGET); else one
    GovkitError line. Every ssh command line govkit builds goes through this (parse_hosts,
    and again where the argv is made: govkit.runners.netpath)."""
    if not isinstance(target, str) or not _SSH_TARGET.fullmatch(target):
        where = f"{role}=" if role else ""
        raise GovkitError(f"invalid --hosts {where}{shown(str(target))}: use USER@HOST, HOST "
                          "or local (letters, digits, '.', '_', '-'; a name may not start "
                          "with '-')")
    return target


def parse_hosts(text: str | None) -> dict[str, str]:
    hosts = parse_roles(text, "--hosts")
    for role, host in hosts.items():
        if host != "local":
            check_ssh_target(host, role)
    if hosts and all(h == "local" for h in hosts.values()):
        raise GovkitError("--hosts: both sides are local; use --net lo or --net netns")
    return hosts


def parse_peer_addresses(text: str | None) -> dict[str, str]:
    peers = parse_roles(text, "--peer-address")
    for role, addr in peers.items():
        try:
            if ipaddress.ip_address(addr).version != 4:
                raise ValueError
        except ValueError:
            raise GovkitError(f"invalid --peer-address {role}={shown(addr)}: an IPv4 address "
                              "(Cyclone's udp and tcp transports here are IPv4)") from None
    return peers


def csv_prefix(mode: str, net: Network) -> str:
    """`lat_udpv4_pub` / `thr_tlsv4_sub`, as the seed scripts name their files."""
    t = CSV_TRANSPORT.get(net.transport, net.transport)
    return {"latency": f"lat_{t}_pub", "throughput": f"thr_{t}_sub"}[mode]


def csv_suffix(net: Network) -> str:
    """'' for loopback without loss (the seeds' exact names), else `_netns`, `_loss1pct`."""
    path = "" if net.path == "lo" else f"_{net.path}"
    loss = f"_loss{net.loss_pct:g}pct".replace(".", "_") if net.loss_pct else ""
    return path + loss


@dataclass(frozen=True)
class Endpoint:
    """Where one side of a point runs and how it is reached (govkit.runners.netpath makes them)."""
    role: str
    address: str                       # this side's IPv4 address, as the peer reaches it
    interface: str | None = None       # Cyclone's interface by name; None: by address
    netns: str | None = None           # run inside this network namespace
    ssh: tuple[str, ...] | None = None  # run on a remote host: the ssh argv up to the host
    workdir: str | None = None         # the remote host's work directory (ssh only)
    ddsperf: str | None = None         # the runner on the remote host (ssh only)
    plugins: str | None = None         # its security plugins directory (ssh only)

    @property
    def remote(self) -> bool:
        return self.ssh is not None

    def to_json(self) -> dict:
        where = (f"ssh {self.ssh[-1]}" if self.ssh else
                 f"netns {self.netns}" if self.netns else "this machine")
        return {"where": where, "address": self.address,
                "interface": self.interface or f"by address {self.address}"}


LOOPBACK = {role: Endpoint(role, "127.0.0.1", "lo") for role in ROLES}
