"""What `govkit bench` and `govkit wire-check` are asked and what they answer: the options
(`BenchOptions`, the sizes, modes and budget parsed from the command line, the limits they
are checked against, the rotation's and discovery's settings), a point (`Cell`) and a run's
outcome (`BenchOutcome`).

Why apart: the CLI, the schedule, the wire phase and each repeat read them, and none of
it starts a process or touches the machine, so it sits at the bottom of the stage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from govkit.bench.defaults import (
    DEFAULT_BUDGET_S,
    DEFAULT_CPU_SLOT_MS,
    DEFAULT_DURATION_S,
    DEFAULT_INSTANCES,
    DEFAULT_MAX_REPEATS,
    DEFAULT_MIN_ROUNDS,
    DEFAULT_NETWORK_RUNNER,
    DEFAULT_REPEATS,
    DEFAULT_ROTATION_TARGET_PCT,
    DEFAULT_RUNNER,
    DEFAULT_SETTLE_MS,
    DEFAULT_SIZES,
    DEFAULT_SLOT_MS,
    DEFAULT_TARGET_CI_PCT,
    DEFAULT_WARMUP_S,
    MIN_THROUGHPUT_SLOT_MS,
    RERUN_FLOOR_PCT,
    RERUN_KAPPA_PCT,
)
from govkit.catalog.measures import (
    BOTH,
    CIPHERS,
    DEFAULT_PEERS,
    DISCOVERY,
    MAX_PEERS,
    MIN_PEERS,
    MODE_CHOICES,
    MODES,
    listed,
)
from govkit.catalog.profiles import BASELINE, Profile
from govkit.catalog.runners import runner_info
from govkit.common.errors import GovkitError
from govkit.results.summary import key_of
from govkit.runners.crypto import (
    MAX_REKEY,
    CryptoVariant,
    crypto_refusal,
    variants_of,
)
from govkit.runners.network import DEFAULT, Network, networks, shown_path

SEED_SIZES = (32, 64, 128, 256, 512, 1024, 8192, 63000)
LIMITS = {"repeat": (1, 100), "max_repeat": (1, 1000), "duration": (1, 3600),
          "warmup": (0, 600), "budget": (0, 7 * 24 * 3600)}
MAX_SEED = 2 ** 63 - 1        # a JSON integer every reader takes (int64)
# --rekey values in one run: 16 already make 112 arms of the 7 catalog profiles, a run of
# hours; 10,000 took minutes to plan (the held-out battery of 2026-12-07: no answer in 15 s).
MAX_REKEYS = 16


# The rotating latency design's (govkit.bench.rotation) and discovery's
# (govkit.bench.discovery) own settings, asked like every other option
CPU_LOAD_SHARE = 0.5              # CPU slots offer at most this share of the slowest warm-up rate
MIN_ARM_ROUNDS = 20               # an arm's slots before its width may stop its slots
DISCOVERY_WAIT_S = 60.0           # a discovery group not matched by then has failed


@dataclass(frozen=True)
class RotationSettings:
    slot_ms: int = DEFAULT_SLOT_MS
    settle_ms: int = DEFAULT_SETTLE_MS
    instances: int = DEFAULT_INSTANCES
    min_rounds: int = DEFAULT_MIN_ROUNDS
    max_rounds: int = 400
    target_ci: float = DEFAULT_ROTATION_TARGET_PCT   # % half-width of every ratio's interval
    aa: bool = True
    # per mode, what a rerun moves a ratio by (govkit.results.paired.RunTerm), in %
    rerun_kappa: tuple[tuple[str, float], ...] = tuple(RERUN_KAPPA_PCT.items())
    rerun_floor: tuple[tuple[str, float], ...] = tuple(RERUN_FLOOR_PCT.items())
    # `default` (the constants above, measured on another machine), `given` (the options)
    # or `machine_calibration` (govkit calibrate's, govkit.bench.calibration)
    rerun_term_source: str = "default"
    rerun_term_calibration: dict | None = None   # that calibration: date, identity, runs
    rerun_term_note: str | None = None           # why a stored calibration was refused

    @property
    def throughput_slot_ms(self) -> int:
        """A throughput slot's measured part: --slot-ms, but at least MIN_THROUGHPUT_SLOT_MS."""
        return max(self.slot_ms, MIN_THROUGHPUT_SLOT_MS)

    @property
    def cpu_slot_ms(self) -> int:
        """A CPU slot's measured part (paced writes: CPU time is exact over any length)."""
        return max(self.slot_ms, DEFAULT_CPU_SLOT_MS)

    def to_json(self) -> dict:
        return {"slot_ms": self.slot_ms, "throughput_slot_ms": self.throughput_slot_ms,
                "cpu_slot_ms": self.cpu_slot_ms, "cpu_load_share": CPU_LOAD_SHARE,
                "settle_ms": self.settle_ms,
                "instances": self.instances, "min_rounds": self.min_rounds,
                "min_arm_rounds": MIN_ARM_ROUNDS,
                "max_rounds": self.max_rounds, "target_ci_pct": self.target_ci,
                "aa_arm": self.aa, "rerun_kappa_pct": dict(self.rerun_kappa),
                "rerun_floor_pct": dict(self.rerun_floor),
                "rerun_term_source": self.rerun_term_source,
                **({"rerun_term_calibration": self.rerun_term_calibration}
                   if self.rerun_term_calibration else {}),
                **({"rerun_term_note": self.rerun_term_note} if self.rerun_term_note else {})}


@dataclass(frozen=True)
class DiscoverySettings:
    peers: int = DEFAULT_PEERS
    min_rounds: int = 3

    def check(self) -> None:
        if not MIN_PEERS <= self.peers <= MAX_PEERS:
            raise GovkitError(f"--peers {self.peers} is out of range ({MIN_PEERS} .. "
                              f"{MAX_PEERS})")

    def to_json(self) -> dict:
        return {"peers": self.peers, "min_rounds": self.min_rounds, "wait_s": DISCOVERY_WAIT_S}


def protects(profile: Profile) -> bool:
    """Whether any of the profile's protection kinds uses a key (SIGN or ENCRYPT)."""
    return any(k not in (None, "NONE") for k in (
        profile.rtps_protection_kind, profile.metadata_protection_kind,
        profile.data_protection_kind))


def parse_sizes(text: str, option: str = "--sizes") -> list[int]:
    """The sample sizes of `text` ("32,1024" or "seeds"); GovkitError naming `option`."""
    if text.strip() == "seeds" and option == "--sizes":
        return list(SEED_SIZES)
    usage = "use e.g. 32,1024,63000 or 'seeds'" if option == "--sizes" else "use e.g. 1024"
    try:
        sizes = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise GovkitError(f"invalid {option} {text!r}: {usage}") from None
    if not sizes or any(s < 12 or s > 64 * 1024 * 1024 for s in sizes):
        # ddsperf's KS topic has a 12-byte fixed part; below that it cannot send.
        raise GovkitError(f"invalid {option} {text!r}: sizes must be 12 .. 67108864 bytes")
    return list(dict.fromkeys(sizes))


def _items(values) -> list[str]:
    """A repeatable option's values, each possibly a comma list."""
    if isinstance(values, str):
        values = [values]
    return [x.strip() for v in values or [] for x in v.split(",") if x.strip()]


def parse_ciphers(values) -> list[str]:
    """`--cipher aes128,aes256` (repeatable or a comma list); [] when not given: the
    runtime's default (AES-256 in both)."""
    found = _items(values)
    for c in found:
        if c not in CIPHERS:
            raise GovkitError(f"invalid --cipher {c!r}: use {', '.join(CIPHERS)} (repeatable, "
                              "or a comma list)")
    return list(dict.fromkeys(found))


def parse_rekeys(values) -> list[int]:
    """`--rekey N` (protected messages per session key; repeatable or a comma list); []
    when not given: the runtime's default (Fast DDS 32; Cyclone never renews). At most
    MAX_REKEYS values, refused before anything else is read of them."""
    items = _items(values)
    if len(items) > MAX_REKEYS:
        raise GovkitError(f"--rekey: {len(items)} values; at most {MAX_REKEYS} (each is one "
                          f"more rotation arm of every secured profile, measured in every "
                          f"round)")
    out = []
    for text in items:
        # ASCII digits only: "²".isdigit() holds, and int("²") raises
        if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= MAX_REKEY:
            raise GovkitError(f"invalid --rekey {text!r}: a whole number of messages per "
                              f"session key, 1 .. {MAX_REKEY}")
        out.append(int(text))
    return list(dict.fromkeys(out))


def parse_modes(text: str) -> list[str]:
    if text == BOTH:
        return list(MODES)
    if text not in MODE_CHOICES:
        raise GovkitError(f"invalid --mode {text!r}: use {listed(MODE_CHOICES)}")
    return [text]


def parse_rerun_term(values, option: str = "--rerun-kappa"
                     ) -> tuple[tuple[str, float], ...]:
    """--rerun-kappa / --rerun-floor MODE=PCT (repeatable or a comma list): a part of the
    run-to-run term per mode (govkit.results.paired.RunTerm) over its default
    (RERUN_KAPPA_PCT, RERUN_FLOOR_PCT); 0 leaves it out."""
    known = dict(RERUN_KAPPA_PCT if option == "--rerun-kappa" else RERUN_FLOOR_PCT)
    for item in values or []:
        mode, eq, pct = item.partition("=")
        try:
            value = float(pct) if eq else -1.0
        except ValueError:
            value = -1.0
        if mode not in known or not 0 <= value <= 100:
            raise GovkitError(f"invalid {option} {item!r}: use MODE=PCT with MODE one of "
                              f"{', '.join(known)} and PCT from 0 to 100 (e.g. latency=2.6)")
        known[mode] = value
    return tuple(known.items())


_DURATION_RE = re.compile(r"(\d{1,9})(s|m|h)?", re.ASCII)


def parse_budget(text: str) -> int:
    """`--budget`: seconds, or with a unit: 300, 300s, 5m, 1h."""
    m = _DURATION_RE.fullmatch(text.strip())
    if not m:
        raise GovkitError(f"invalid --budget {text!r}: use seconds or e.g. 5m, 1h")
    return int(m[1]) * {"s": 1, None: 1, "m": 60, "h": 3600}[m[2]]


@dataclass
class BenchOptions:
    profiles: list[Profile]
    # None: the default, DEFAULT_RUNNER on UDP over loopback, ddsperf for the network
    # options only ddsperf's per-repeat design serves (resolved by `check`)
    runner: str | None = "ddsperf"
    modes: list[str] = field(default_factory=lambda: ["latency"])
    sizes: list[int] = field(default_factory=lambda: list(DEFAULT_SIZES))
    duration: int = DEFAULT_DURATION_S
    warmup: int = DEFAULT_WARMUP_S
    repeat: int = DEFAULT_REPEATS
    max_repeat: int = DEFAULT_MAX_REPEATS
    target_ci: float = DEFAULT_TARGET_CI_PCT
    budget: int = DEFAULT_BUDGET_S
    seed: int | None = None
    out: Path | None = None
    ca: Path = Path("pki")
    build: Path = Path("build")
    resume: bool = False
    pin: bool = True
    realtime: bool = True
    keep_awake: bool = True        # govkit.bench.awake: the measured CPUs never halt
    rotate_throughput: bool = True   # throughput points by rotation (with their CPU slots)
    dry_run: bool = False
    runner_options: dict = field(default_factory=dict)
    command: str = "govkit bench"
    # The network dimension (govkit.runners.network): every point runs over each combination.
    transports: list[str] = field(default_factory=lambda: ["udp"])
    paths: list[str] = field(default_factory=lambda: ["lo"])
    loss_rates: list[float] = field(default_factory=lambda: [0])
    hosts: dict[str, str] = field(default_factory=dict)          # --hosts pub=…,sub=…
    peer_addresses: dict[str, str] = field(default_factory=dict)  # --peer-address
    ssh_config: Path | None = None

    wire: bool = False             # one extra, captured, unmeasured repeat per point
    wire_pcap: bool = False        # ... and its frames as a pcap (implies wire)
    wire_interface: str = "lo"     # where the points' traffic flows (templates: loopback)
    wire_expect: Profile | None = None   # check against this profile's governance instead
    wire_leaks: bool = False       # ... and what an eavesdropper reads (govkit.wire.leaks)
    # The rotating latency design (runners with `rotates`: govkit.bench.rotation)
    rotation: RotationSettings = field(default_factory=RotationSettings)
    discovery: DiscoverySettings = field(default_factory=DiscoverySettings)
    # Crypto variants (govkit.runners.crypto): every secured arm of the rotation per
    # cipher × rekey; empty: the runtime's defaults, nothing set
    ciphers: list[str] = field(default_factory=list)
    rekeys: list[int] = field(default_factory=list)
    # --fail-on-flag, --max-ratio: results.json's settings.gates (govkit.results.gates)
    gates: dict | None = None
    # A version axis (`--runner cyclone@/usr,cyclone@PREFIX`, govkit.runners.dds_prefix):
    # per install, its tag and runner options; the first is the baseline (runner_options)
    runtime_axis: list[tuple[str, dict]] = field(default_factory=list)
    # --readers 1,4: every rotated point at each readers count (one writer, N readers;
    # govkit.runners.readers), each paired with `none` at the same count
    readers: list[int] = field(default_factory=lambda: [1])

    @property
    def variants(self) -> list[CryptoVariant]:
        return variants_of(self.ciphers, self.rekeys)

    @property
    def point_modes(self) -> list[str]:
        """The modes measured as points (profile × size); discovery is measured apart."""
        return [m for m in self.modes if m in MODES]

    @property
    def networks(self) -> list[Network]:
        return networks(self.transports, self.paths, self.loss_rates)

    def check(self) -> None:
        self.wire = self.wire or self.wire_pcap or self.wire_leaks
        plain = self.transports == ["udp"] and self.paths == ["lo"] and self.loss_rates == [0]
        if self.runner is None:
            self.runner = (DEFAULT_RUNNER if plain and not self.hosts
                           else DEFAULT_NETWORK_RUNNER)
        rs = self.rotation
        for name, value, lo, hi in (("--slot-ms", rs.slot_ms, 10, 60_000),
                                    ("--settle-ms", rs.settle_ms, 0, 10_000),
                                    ("--instances", rs.instances, 1, 8),
                                    ("--rounds", rs.min_rounds, 1, 10_000)):
            if not lo <= value <= hi:
                raise GovkitError(f"{name} {value} is out of range ({lo} .. {hi})")
        if not 0 < rs.target_ci <= 100:
            raise GovkitError(f"--target-ci {rs.target_ci:g} must be a percentage in (0, 100]")
        for name, (lo, hi) in LIMITS.items():
            value = getattr(self, name)
            if not lo <= value <= hi:
                raise GovkitError(f"--{name.replace('_', '-')} {value} is out of range "
                                  f"({lo} .. {hi})")
        # The seed is recorded in results.json, whose reader takes no number beyond 2^64
        # (govkit.results.check): a larger one ran the whole benchmark, then left results
        # that `govkit report` (and the run's own report) refused.
        if self.seed is not None and not 0 <= self.seed <= MAX_SEED:
            raise GovkitError(f"--seed {self.seed} is out of range (0 .. {MAX_SEED})")
        if self.max_repeat < self.repeat:
            raise GovkitError(f"--max-repeat {self.max_repeat} is below --repeat {self.repeat}")
        if not 0 < self.target_ci <= 100:
            raise GovkitError(f"--target-ci {self.target_ci:g} must be a percentage in (0, 100]")
        if self.peer_addresses and not self.hosts:
            raise GovkitError("--peer-address applies to --hosts only")
        if DISCOVERY in self.modes:
            self.discovery.check()
            if self.runner != DEFAULT_RUNNER or self.wire or not plain:
                raise GovkitError(f"--mode discovery runs on the default runner "
                                  f"({DEFAULT_RUNNER}), over udp on lo, without --wire")
            if not any(p.name == BASELINE for p in self.profiles):
                raise GovkitError("--mode discovery pairs every profile with `none`: add "
                                  "--profile none (or use --all-profiles)")
        self.check_paths()
        self.check_variants()
        if self.runtime_axis and (self.modes == [DISCOVERY] or DISCOVERY in self.modes
                                  or self.wire or self.variants or not plain
                                  or ("throughput" in self.modes
                                      and not self.rotate_throughput)):
            raise GovkitError("a version axis (--runner NAME@PREFIX,NAME@PREFIX) pairs the "
                              "installs in the rotation: --mode latency or throughput by "
                              "rotation, over udp on lo, without --wire, --cipher or --rekey")
        self.check_readers()
        if not runner_info(self.runner).networks and not plain:
            raise GovkitError(f"--transport, --net, --hosts and --loss-rate need --runner "
                              f"ddsperf (Cyclone's transports); {self.runner} runs udp on lo")


    def check_readers(self) -> None:
        """--readers beyond 1: only where the readers run, the long-lived pairs of the
        rotation (cyclone, fastdds); refused, one line, everywhere else."""
        if self.readers == [1]:
            return
        shown = ",".join(map(str, self.readers))
        if not runner_info(self.runner).rotates:
            raise GovkitError(f"--readers {shown}: only the cyclone and fastdds runners' "
                              f"long-lived pairs run several readers; --runner "
                              f"{self.runner} runs one (use --readers 1)")
        if "throughput" in self.modes and not self.rotate_throughput:
            raise GovkitError(f"--readers {shown}: throughput per repeat (the per-second "
                              f"programs) runs one reader; drop --per-repeat-throughput")
        if DISCOVERY in self.modes:
            raise GovkitError(f"--readers {shown}: --mode discovery has a --peers count "
                              f"of its own; measure it without --readers")
        if self.variants:
            raise GovkitError(f"--readers {shown}: not with --cipher/--rekey; measure the "
                              f"readers axis and the crypto variants in runs of their own")
        if self.runtime_axis:
            # a version axis pairs `P@TAG` with `none@TAG` by name (results.versions); at N
            # readers the name would carry both suffixes and no pairing reads them yet
            raise GovkitError(f"--readers {shown}: not with a version axis (--runner "
                              f"NAME@PREFIX,NAME@PREFIX); measure the readers axis and the "
                              f"versions in runs of their own")
        if self.resume:
            raise GovkitError(f"--readers {shown}: a run of several readers counts cannot "
                              f"be resumed yet; start it again")

    def check_variants(self) -> None:
        """--cipher/--rekey: refused, one line, where the runtime or the run cannot apply
        them (govkit.runners.crypto says what each runtime allows)."""
        if not self.variants:
            return
        why = crypto_refusal(self.runner, self.ciphers, self.rekeys)
        if why:
            raise GovkitError(why)
        what = "--cipher" if self.ciphers else "--rekey"
        if self.modes != ["latency"] or self.wire:
            raise GovkitError(f"{what} varies the rotating latency design's arms: only with "
                              f"--mode latency and without --wire")
        if not any(protects(p) for p in self.profiles):
            raise GovkitError(f"{what}: no --profile protects anything (none and "
                              f"no_protection use no key); add e.g. --profile rtps_encrypt")

    def check_paths(self) -> None:
        """What a run would refuse about its paths, refused at once (also by --dry-run):
        --out, --ca or --build that is a file, a missing --ssh-config, and a --pcap
        directory (wire-check) that cannot be made."""
        for option, path in (("--out", self.out), ("--ca", self.ca), ("--build", self.build)):
            if path is not None and path.exists() and not path.is_dir():
                raise GovkitError(f"{option} {shown_path(path)}: exists and is not a directory")
        if self.ssh_config is not None and not self.ssh_config.is_file():
            raise GovkitError(f"--ssh-config {shown_path(self.ssh_config)}: no such file")


@dataclass
class BenchOutcome:
    out: Path | None
    failed: int = 0
    interrupted: bool = False
    summary: list[dict] = field(default_factory=list)
    dry_run_lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    wire: list[dict] = field(default_factory=list)          # results.json's wire.points
    wire_profiles: dict = field(default_factory=dict)       # ... and wire.profiles
    doc: dict | None = None                                 # results.json as written

    @property
    def wire_mismatches(self) -> list[str]:
        return [p for p, v in self.wire_profiles.items() if v["verdict"] != "match"]


@dataclass(frozen=True)
class Cell:
    """One point: what its repeats share."""
    profile: Profile
    mode: str
    size: int
    network: Network = DEFAULT

    @property
    def key(self) -> tuple:
        return key_of(self.profile.name, self.mode, self.size, self.network)

    @property
    def label(self) -> str:
        """`rtps_sign latency size 32` (+ ` over tls netns` off the default network)."""
        net = "" if self.network == DEFAULT else f" over {self.network.label}"
        return f"{self.profile.name} {self.mode} size {self.size}{net}"
