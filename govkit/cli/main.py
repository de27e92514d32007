"""The `govkit` command line: parse options, call one stage function, print.

Exit codes: govkit.common.errors.EXIT_CODES.

No `from __future__ import annotations` here: typer would then evaluate every option's
annotation string at start-up (a few hundred evals, ~20 ms of `govkit --help`).
"""

import os
import sys
from pathlib import Path
from typing import Annotated, Literal

import typer

from govkit import __version__
from govkit.bench.defaults import (
    DEFAULT_BUDGET_S,
    DEFAULT_DURATION_S,
    DEFAULT_INSTANCES,
    DEFAULT_MAX_REPEATS,
    DEFAULT_MIN_ROUNDS,
    DEFAULT_REPEATS,
    DEFAULT_ROTATION_TARGET_PCT,
    DEFAULT_SETTLE_MS,
    DEFAULT_SLOT_MS,
    DEFAULT_TARGET_CI_PCT,
    DEFAULT_WARMUP_S,
)
from govkit.catalog.runners import RUNNERS
from govkit.catalog.targets import DEFAULT_TARGET, TARGETS
from govkit.common.errors import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    GovkitError,
)
from govkit.common.limits import KEY_TYPES, MAX_DOMAIN_ID

# Start-up matters (`govkit --help` in well under 0.15 s): nothing heavy is imported here.
# Each command imports what it uses; help is plain text (typer's rich help would import
# rich and a Markdown parser); the consoles are made on first use; the runner names are
# read from the directory, as govkit.runners.runner_names() does, without importing it.
app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  rich_markup_mode=None,
                  help="DDS Security governance/permissions: generate, validate, sign, verify, "
                       "and benchmark every protection profile.")
pki_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                      help="Test PKI (identity CA, permissions CA, participants).")
app.add_typer(pki_app, name="pki")


class _LazyConsole:
    """A rich Console made when first used (importing rich costs more than the rest of
    `govkit --help`)."""

    def __init__(self, make):
        self._make, self._console = make, None

    def get(self):
        """The Console itself (for code that uses it as more than a printer)."""
        if self._console is None:
            self._console = self._make()
        return self._console

    def __getattr__(self, name):
        return getattr(self.get(), name)


def _console(**options):
    def make():
        from rich.console import Console
        return Console(**options)
    return make


out = _LazyConsole(_console(highlight=False, soft_wrap=True))
# Tables written to a file or pipe keep their columns instead of folding at 80.
wide = _LazyConsole(lambda: _console(highlight=False,
                                     width=None if out.is_terminal else 160)())
err = _LazyConsole(_console(stderr=True, highlight=False, soft_wrap=True))


def _json(obj) -> str:
    import json  # on use: govkit --help does not need it
    return json.dumps(obj, indent=2)


def _lines(lines) -> None:
    """Many plain lines to stdout at once (rich prints one line in tens of µs: 20,000
    "wrote" lines would take longer than writing the files)."""
    text = "".join(f"{line}\n" for line in lines)
    if text:
        sys.stdout.write(text)
        sys.stdout.flush()


ProfileOpt = Annotated[list[str] | None, typer.Option(
    "--profile", "-p", help="Profile name or seed alias (repeatable).")]
AllOpt = Annotated[bool, typer.Option("--all-profiles", help="Every catalog profile.")]
RunnerName = Literal[tuple(RUNNERS)]
CaOpt = Annotated[Path, typer.Option(
    "--ca", help="Test PKI directory (a test PKI is created there if it has none, and "
                 "govkit says so).")]
SignCaOpt = Annotated[Path, typer.Option(
    "--ca", help="Test PKI directory holding the Permissions CA (permissions_ca.pem and "
                 ".key); never created here: see `govkit pki init`.")]
VerifyCaOpt = Annotated[Path, typer.Option(
    "--ca", help="The Permissions CA to trust: a test PKI directory (its permissions_ca.pem) "
                 "or a PEM certificate file; never created here.")]
BuildOpt = Annotated[Path, typer.Option(
    "--build", help="Where the generated and signed files go (one directory per runner "
                    "below it).")]
PinOpt = Annotated[bool, typer.Option(
    "--pin/--no-pin", help="Pin the two sides of a pair to two different CPUs.")]
ParticipantsOpt = Annotated[Path | None, typer.Option(
    "--participants", help="A participants file: one name per line, or CSV with a header "
                           "(name, organization, unit, country, publish, subscribe, "
                           "partitions); see docs/guide/fleets.md.")]
CountOpt = Annotated[int | None, typer.Option(
    "--count", help="N numbered participants PREFIX0.. (tests and benchmarks).")]
PrefixOpt = Annotated[str, typer.Option("--prefix", help="Name prefix for --count.")]
JobsOpt = Annotated[int | None, typer.Option(
    "--jobs", help="Worker processes (default: one per CPU when there are many files).")]


def _fail(e: GovkitError):
    err.print(f"govkit: {e}", markup=False)   # multi-line messages: prefix the first only
    raise typer.Exit(e.exit_code)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("govkit: interrupted")
        sys.exit(EXIT_INTERRUPTED)
    except Exception as e:  # a govkit bug: one line unless asked for the traceback
        if os.environ.get("GOVKIT_DEBUG"):
            raise
        err.print(f"govkit: internal error: {type(e).__name__}: {e} (set GOVKIT_DEBUG=1 for "
                  f"the traceback, and please report it)", markup=False)
        sys.exit(EXIT_INTERNAL)


def _run(fn, *args, **kwargs):
    """Call a stage function; user errors become one line and an exit code."""
    try:
        return fn(*args, **kwargs)
    except GovkitError as e:
        _fail(e)
    except OSError as e:
        _fail(GovkitError(f"{e.filename or ''}: {e.strerror}" if e.filename else str(e)))


@app.callback(invoke_without_command=True)
def _root(version: Annotated[bool, typer.Option("--version", help="Print the version.")] = False):
    if version:
        out.print(f"govkit {__version__}")
        raise typer.Exit()


@app.command()
def profiles(as_json: Annotated[bool, typer.Option("--json", help="JSON list.")] = False):
    """List the protection-profile catalog."""
    from govkit.catalog.profiles import PROFILES
    if as_json:
        print(_json([p.to_json() for p in PROFILES]))
        return
    from rich.table import Table
    cols = {"name": "name", "aliases": "seed alias", "allow_unauthenticated_participants":
            "unauth. ok", "rtps_protection_kind": "rtps", "metadata_protection_kind": "metadata",
            "data_protection_kind": "data"}
    table = Table(title="govkit protection profiles (all settings: govkit profiles --json)")
    for header in cols.values():
        table.add_column(header, overflow="fold")
    for p in PROFILES:
        d = p.to_json()
        table.add_row(*[", ".join(d[c]) if c == "aliases" else str(d[c] or "—") for c in cols])
    out.print(table)


@app.command()
def validate(files: Annotated[list[Path], typer.Argument(help="XML or signed S/MIME files.")],
             as_json: Annotated[bool, typer.Option("--json")] = False):
    """Validate governance/permissions documents against the DDS Security 1.1 schemas."""
    from govkit.check.validate import validate_file
    report, code = [], EXIT_OK
    for f in files:
        try:
            findings = validate_file(f)
        except GovkitError as e:
            report.append({"file": str(f), "valid": False, "error": str(e), "findings": []})
            err.print(f"govkit: {e}", markup=False)
            code = EXIT_USAGE
            continue
        report.append({"file": str(f), "valid": not findings,
                       "findings": [x.to_json() for x in findings]})
        if findings:
            code = max(code, EXIT_INVALID)
        if not as_json:
            for x in findings:
                out.print(str(x), markup=False, soft_wrap=True)
            if not findings:
                out.print(f"{f}: valid", markup=False)
    if as_json:
        print(_json(report))
    raise typer.Exit(code)


@pki_app.command("init")
def pki_init(
    directory: Annotated[Path, typer.Argument(help="PKI directory.")] = Path("pki"),
    participant: Annotated[list[str] | None, typer.Option(
        "--participant", help="Participant identity (repeatable; default pub and sub).")] = None,
    key_type: Annotated[str, typer.Option(
        "--key-type", metavar=f"[{'|'.join(KEY_TYPES)}]",
        help="Key type of every new key (the two Cyclone DDS 0.10 accepts).")] = KEY_TYPES[0],
    days: Annotated[int, typer.Option("--days", help="Certificate validity in days.")] = 365,
    force: Annotated[bool, typer.Option(
        "--force", help="Replace the CAs and reissue every participant (new keys).")] = False,
    single_ca: Annotated[bool, typer.Option(
        "--single-ca", help="One CA for identities and permissions (RTI Perftest).")] = False,
    participants: ParticipantsOpt = None, count: CountOpt = None, prefix: PrefixOpt = "p",
    jobs: JobsOpt = None,
):
    """Create a TEST PKI: identity CA, separate permissions CA, participant identities."""
    from govkit.pki.testpki import DEFAULT_PARTICIPANTS, init_pki
    fleet = _fleet(participants, count, prefix, participant or [])
    pki, created = _run(init_pki, directory, fleet or tuple(DEFAULT_PARTICIPANTS), key_type,
                        days, force, single_ca, processes=jobs)
    _lines(f"wrote {f}" for f in created)
    if not created:
        out.print(f"{directory}: PKI already complete; nothing written (use --force to "
                  f"replace keys)", markup=False)
    _warn_stale(pki)


def _fleet(file: Path | None, count: int | None, prefix: str, names: list[str]):
    """The participants named on the command line, in a file and numbered, in that order
    (None if none); a name given twice is a usage error."""
    from govkit.pki.participants import Participant, numbered_participants, read_participants
    fleet = [Participant(n) for n in names]
    if file is not None:
        fleet += _run(read_participants, file)
    if count is not None:
        fleet += _run(numbered_participants, count, prefix)
    seen: set[str] = set()
    for p in fleet:
        if p.name in seen:
            _fail(GovkitError(f"participant {p.name} is named twice (--participant, "
                              f"--participants, --count)"))
        seen.add(p.name)
    return fleet or None


def _warn_stale(pki, names=None) -> None:
    for name in (_run(pki.stale_participants) if names is None else names):
        err.print(f"govkit: warning: {pki.path(name)} was not issued by the current Identity "
                  f"CA (left from an earlier PKI); no permissions are written for it "
                  f"(reissue with `govkit pki init {pki.directory} --force`)", markup=False)


@app.command()
def generate(profile: ProfileOpt = None, all_profiles: AllOpt = False,
             out_dir: Annotated[Path, typer.Option("--out")] = Path("build"),
             ca: CaOpt = Path("pki"),
             domain: Annotated[str, typer.Option(
                 "--domain", help="Domain id or range, e.g. 0 or 0-10.")
             ] = f"0-{MAX_DOMAIN_ID}",
             runner: Annotated[str, typer.Option(
                 "--runner", metavar=f"[{'|'.join(RUNNERS)}]",
                 help="Whose topics the permissions allow (participants without grants "
                      "of their own).")] = "ddsperf",
             participants: ParticipantsOpt = None, count: CountOpt = None,
             prefix: PrefixOpt = "p",
             sign: Annotated[bool, typer.Option(
                 "--sign", help="Also sign every document (NAME.p7s beside NAME.xml) in the "
                                "same pass, with the PKI's Permissions CA.")] = False,
             jobs: JobsOpt = None):
    """Render governance per profile and permissions per participant (validated)."""
    from govkit.catalog.profiles import select_profiles
    from govkit.catalog.runners import runner_info
    from govkit.documents.render import DomainSet
    from govkit.generate.bundle import BundleLog, ensure_pki
    from govkit.generate.fleet import ensure_identities
    from govkit.generate.fleet import generate as generate_documents
    log = BundleLog()
    fleet = _fleet(participants, count, prefix, [])
    chosen = [] if fleet and not (profile or all_profiles) else \
        _run(select_profiles, profile, all_profiles)
    domains = _run(DomainSet.parse, domain)
    single_ca = _run(runner_info, runner).single_ca  # a usage error before anything is created
    if fleet is None:
        pki = _run(ensure_pki, ca, log, single_ca)
    else:
        pki = _run(ensure_identities, ca, fleet, log, single_ca, jobs)
    _lines(log.messages)
    result = _run(generate_documents, chosen, pki, out_dir, domains, runner, fleet, sign, jobs)
    _warn_stale(pki, result.stale if fleet is None else [])
    _lines(f"wrote {path}" for path in result.written)
    for e in result.errors:
        err.print(f"govkit: {e}", markup=False)
    if result.errors:
        raise typer.Exit(max(e.exit_code for e in result.errors))


def _permissions_ca(ca: Path, command: str, need_key: bool) -> Path:
    """The Permissions CA certificate that --ca names (for sign, with its key beside it).
    sign and verify never create a CA: a wrong --ca is an error, not a new PKI."""
    if not need_key and ca.exists() and not ca.is_dir():
        return ca   # a certificate file (read_input refuses it if it is not a regular file)
    hint = f"create a test PKI with `govkit pki init {ca}`; {command} never creates one"
    if not ca.is_dir():
        _fail(GovkitError(f"{ca}: no such directory ({hint})"))
    for path in (ca / "permissions_ca.pem", ca / "permissions_ca.key")[:2 if need_key else 1]:
        if not path.is_file():
            _fail(GovkitError(f"{path}: not found: {ca} holds no Permissions CA ({hint})"))
    return ca / "permissions_ca.pem"


@app.command()
def sign(paths: Annotated[list[Path] | None, typer.Argument(
             help="XML files or directories (default build/).")] = None,
         ca: SignCaOpt = Path("pki"), jobs: JobsOpt = None):
    """S/MIME-sign documents with the Permissions CA (writes NAME.p7s beside NAME.xml)."""
    from govkit.generate.fleet import sign_files
    cert = _permissions_ca(ca, "sign", need_key=True)
    signed, errors = _run(sign_files, paths or [Path("build")], cert,
                          cert.with_suffix(".key"), jobs)
    _lines(f"signed {p}" for p in signed)
    for e in errors:  # unreadable files as govkit errors, invalid ones as findings
        err.print(f"govkit: {e}" if e.exit_code == EXIT_USAGE else str(e), markup=False)
    if not signed and not errors:
        err.print(f"govkit: no .xml documents under {', '.join(map(str, paths or ['build']))}; "
                  f"run `govkit generate` first")
        raise typer.Exit(EXIT_USAGE)
    raise typer.Exit(max((e.exit_code for e in errors), default=EXIT_OK))


@app.command()
def verify(files: Annotated[list[Path], typer.Argument(help="Signed .p7s files.")],
           ca: VerifyCaOpt = Path("pki"),
           as_json: Annotated[bool, typer.Option("--json")] = False, jobs: JobsOpt = None):
    """Verify signatures as OpenSSL and Cyclone DDS do, and validate the signed documents."""
    from govkit.pki.testpki import load_certificate
    from govkit.smime import Verification
    from govkit.smime.verify_batch import verify_files
    ca_cert = _run(load_certificate, _permissions_ca(ca, "verify", need_key=False),
                   "Permissions CA certificate")
    results, code, lines = [], EXIT_OK, []
    for f, r in zip(files, _run(verify_files, files, ca_cert, None, jobs), strict=True):
        if isinstance(r, GovkitError):  # unreadable: said on stderr, and exit 2 at the end
            _lines(lines)
            lines = []
            err.print(f"govkit: {r}", markup=False)
            results.append(Verification(str(f), ok=False, problems=[f"cannot verify: {r}"]))
            code = EXIT_USAGE
            continue
        results.append(r)
        code = max(code, EXIT_OK if r.ok else EXIT_INVALID)
        if as_json:
            continue
        if r.ok:
            lines.append(f"{r.file}: OK ({r.kind}, signed by {r.signer})")
        lines += [f"{r.file}: warning: {w}" for w in r.warnings]
        lines += [f"{r.file}: {p}" for p in r.problems]
    _lines(lines)
    if as_json:
        print(_json([r.to_json() for r in results]))
    raise typer.Exit(code)


@app.command()
def bench(
    profile: ProfileOpt = None, all_profiles: AllOpt = False,
    runner: Annotated[RunnerName | None, typer.Option(
        "--runner", help="Benchmark program (default: cyclone, govkit's Cyclone DDS program "
                         "with latency by rotation; ddsperf when --transport, --net, "
                         "--hosts or --loss-rate is given).", show_default=False)] = None,
    mode: Annotated[Literal["latency", "throughput", "both"], typer.Option(
        "--mode", help="What to measure.")] = "latency",
    sizes: Annotated[str, typer.Option(
        "--sizes", help="Comma list of bytes, or 'seeds' (the seeds' 8 sizes).")] = "32,1024,63000",
    duration: Annotated[int, typer.Option(
        "--duration", help="Measured seconds per repeat.")] = DEFAULT_DURATION_S,
    warmup: Annotated[int, typer.Option(
        "--warmup", help="Seconds recorded but not measured at the start of every repeat.")
    ] = DEFAULT_WARMUP_S,
    repeat: Annotated[int, typer.Option(
        "--repeat", help="Repeats of every point (the minimum).")] = DEFAULT_REPEATS,
    max_repeat: Annotated[int, typer.Option(
        "--max-repeat", help="At most this many repeats of a point whose interval is wider "
                             "than --target-ci.")] = DEFAULT_MAX_REPEATS,
    target_ci: Annotated[float | None, typer.Option(
        "--target-ci", help=f"Target 95% interval half-width in %: of every overhead ratio "
                            f"(rotation; default {DEFAULT_ROTATION_TARGET_PCT:g}), of every "
                            f"median (per-repeat runners; default {DEFAULT_TARGET_CI_PCT:g}).",
        show_default=False)] = None,
    rounds: Annotated[int, typer.Option(
        "--rounds", help="Rotation: rounds before the target may stop the run (the minimum)."
    )] = DEFAULT_MIN_ROUNDS,
    slot_ms: Annotated[int, typer.Option(
        "--slot-ms", help="Rotation: measured milliseconds of each slot.")
    ] = DEFAULT_SLOT_MS,
    settle_ms: Annotated[int, typer.Option(
        "--settle-ms", help="Rotation: milliseconds at the start of each slot whose round "
                            "trips are kept apart, not measured.")] = DEFAULT_SETTLE_MS,
    instances: Annotated[int, typer.Option(
        "--instances", help="Rotation: separate process pairs per profile (and for the A/A "
                            "arm), taken in turn by round.")] = DEFAULT_INSTANCES,
    budget: Annotated[str, typer.Option(
        "--budget", help="Seconds from the start of the run after which no extra repeat "
                         "starts (e.g. 300, 5m, 1h); the minimum repeats always run.")
    ] = f"{DEFAULT_BUDGET_S}s",
    seed: Annotated[int | None, typer.Option(
        "--seed", help="Seed of the shuffled run order (default: random, recorded).")] = None,
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="Results directory (default results/<timestamp>/).")] = None,
    ca: CaOpt = Path("pki"),
    build: BuildOpt = Path("build"),
    resume: Annotated[bool, typer.Option(
        "--resume", help="Continue an interrupted run (same settings only).")] = False,
    pin: PinOpt = True,
    realtime: Annotated[bool, typer.Option(
        "--realtime/--no-realtime", help="Run latency repeats SCHED_FIFO where permitted "
                                         "(keeps other programs off their CPUs).")] = True,
    perftest: Annotated[str | None, typer.Option("--perftest", help="perftest_cpp path.")] = None,
    transport: Annotated[list[str] | None, typer.Option(
        "--transport", help="udp, tcp or tls (Cyclone's DDSI transports; repeatable or a "
                            "comma list: each profile is measured over each).")] = None,
    loss_rate: Annotated[list[str] | None, typer.Option(
        "--loss-rate", help="Percent of the publisher's packets Cyclone drops before "
                            "sending (injected by the sender, not the network; 0.1 steps; "
                            "repeatable or a comma list, e.g. 0,1).")] = None,
    net: Annotated[list[str] | None, typer.Option(
        "--net", help="Where the two sides run: lo (loopback), netns (two network "
                      "namespaces and a veth pair; needs root), hosts (with --hosts); "
                      "repeatable or a comma list.")] = None,
    hosts: Annotated[str | None, typer.Option(
        "--hosts", help="pub=USER@HOST,sub=USER@HOST (either may be 'local'): run each "
                        "side there over OpenSSH (batch mode).")] = None,
    peer_address: Annotated[str | None, typer.Option(
        "--peer-address", help="pub=IP,sub=IP: the address each side is reached at "
                               "(default: from the host names).")] = None,
    ssh_config: Annotated[Path | None, typer.Option(
        "--ssh-config", help="ssh_config file for --hosts (ssh -F).")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the command lines of the minimum repeats; create nothing.")
    ] = False,
    no_report: Annotated[bool, typer.Option("--no-report", help="Skip report.html.")] = False,
    wire: Annotated[bool, typer.Option(
        "--wire", help="Also capture one extra, unmeasured repeat of every point and check "
                       "what it put on the wire against the governance (root or CAP_NET_RAW)."
    )] = False,
    wire_pcap: Annotated[bool, typer.Option(
        "--wire-pcap", help="--wire, and write each captured repeat as OUT/wire/*.pcap.")
    ] = False,
):
    """Benchmark each profile with its signed bundle; write results.json, CSVs, report."""
    from govkit.bench.options import BenchOptions, parse_budget, parse_modes, parse_sizes
    from govkit.bench.rotation import RotationSettings
    from govkit.bench.schedule import run_bench
    from govkit.catalog.profiles import select_profiles
    from govkit.report.terminal import (
        latency_table,
        network_table,
        noise_floor_table,
        throughput_table,
        wire_table,
    )
    from govkit.results.flags import flag_advice
    from govkit.results.store import RESULTS_NAME
    from govkit.results.summary import load_line, noise_floor
    from govkit.runners.network import (
        parse_hosts,
        parse_loss_rates,
        parse_paths,
        parse_peer_addresses,
        parse_transports,
    )
    host_map = _run(parse_hosts, hosts)
    opts = BenchOptions(
        profiles=_run(select_profiles, profile, all_profiles), runner=runner,
        modes=_run(parse_modes, mode), sizes=_run(parse_sizes, sizes), duration=duration,
        warmup=warmup, repeat=repeat, max_repeat=max_repeat,
        target_ci=DEFAULT_TARGET_CI_PCT if target_ci is None else target_ci,
        budget=_run(parse_budget, budget), seed=seed, out=out_dir, ca=ca, build=build,
        resume=resume, pin=pin, realtime=realtime, dry_run=dry_run,
        runner_options={"perftest": perftest} if perftest else {},
        command=" ".join(["govkit", *sys.argv[1:]]),
        rotation=RotationSettings(slot_ms=slot_ms, settle_ms=settle_ms, instances=instances,
                                  min_rounds=rounds, target_ci=DEFAULT_ROTATION_TARGET_PCT
                                  if target_ci is None else target_ci),
        transports=_run(parse_transports, transport), loss_rates=_run(parse_loss_rates, loss_rate),
        paths=_run(parse_paths, net, bool(host_map)), hosts=host_map,
        peer_addresses=_run(parse_peer_addresses, peer_address), ssh_config=ssh_config,
        wire=wire, wire_pcap=wire_pcap)
    outcome = _run(run_bench, opts, err.get())
    if dry_run:
        print("\n".join(outcome.dry_run_lines))
        return
    doc = outcome.doc or {}
    for table in (latency_table(outcome.summary), noise_floor_table(noise_floor(doc)),
                  throughput_table(outcome.summary), *network_table(outcome.summary),
                  wire_table(outcome.wire)):
        if table is not None:
            wide.print(table)
    if load_line(doc):
        out.print(load_line(doc), markup=False, highlight=False)
    if not no_report and outcome.summary:
        from govkit.report.run import write_report
        html, md = _run(write_report, outcome.out)
        out.print(f"report: {html}", markup=False)
    out.print(f"results: {outcome.out / RESULTS_NAME}", markup=False)
    for note in outcome.notes:
        err.print(f"govkit: {note}", markup=False)
    advice = flag_advice(outcome.summary)
    if advice:
        err.print("govkit: flagged (see the flags column; the figures are kept):", markup=False)
        for line in advice:
            err.print(f"  {line}", markup=False)
    if outcome.interrupted:
        err.print(f"govkit: interrupted; completed repeats are kept. Continue with "
                  f"`govkit bench ... --resume --out {outcome.out}`")
        raise typer.Exit(EXIT_INTERRUPTED)
    _print_wire_mismatches(outcome)
    if outcome.failed:
        err.print(f"govkit: {outcome.failed} repeat(s) failed (see above and results.json)")
    if outcome.failed or outcome.wire_mismatches:
        raise typer.Exit(EXIT_INVALID)


def _print_wire_mismatches(outcome) -> None:
    for name in outcome.wire_mismatches:
        v = outcome.wire_profiles[name]
        against = (v.get("expected") or {}).get("profile", name)
        whose = "its" if against == name else f"{against}'s"
        err.print(f"govkit: wire: {name} does NOT match {whose} governance:", markup=False)
        for reason in v["reasons"]:
            err.print(f"  {reason}", markup=False)


@app.command("wire-check")
def wire_check(
    profile: ProfileOpt = None, all_profiles: AllOpt = False,
    size: Annotated[int, typer.Option("--size", help="Payload bytes.")] = 1024,
    mode: Annotated[Literal["latency", "throughput"], typer.Option(
        "--mode", help="Which ddsperf pair to run.")] = "latency",
    duration: Annotated[int, typer.Option("--duration", help="Seconds of traffic.")] = 2,
    expect: Annotated[str | None, typer.Option(
        "--expect", help="Check against this profile's governance instead of the run's own "
                         "(a deliberately wrong pairing must be a mismatch).")] = None,
    pcap: Annotated[Path | None, typer.Option(
        "--pcap", help="Write each capture as DIR/PROFILE-MODE-SIZE.pcap.")] = None,
    ca: CaOpt = Path("pki"),
    build: BuildOpt = Path("build"),
    pin: PinOpt = True,
    as_json: Annotated[bool, typer.Option("--json", help="The records as JSON.")] = False,
):
    """Run each profile's point once with its traffic captured (root or CAP_NET_RAW) and
    check what it put on the wire against its governance; no benchmark, no results dir."""
    from govkit.bench.options import BenchOptions, parse_sizes
    from govkit.bench.wire_phase import wire_check as run_wire_check
    from govkit.catalog.profiles import get_profile, select_profiles
    from govkit.report.terminal import wire_table
    opts = BenchOptions(
        profiles=_run(select_profiles, profile, all_profiles), modes=[mode],
        sizes=_run(parse_sizes, str(size)), duration=duration, ca=ca, build=build, pin=pin,
        out=pcap, wire=True, wire_pcap=pcap is not None,
        wire_expect=_run(get_profile, expect) if expect else None)
    outcome = _run(run_wire_check, opts, err)
    if as_json:
        print(_json({"points": outcome.wire, "profiles": outcome.wire_profiles}))
    else:
        table = wire_table(outcome.wire)
        if table is not None:
            wide.print(table)
    _print_wire_mismatches(outcome)
    if outcome.interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)
    if outcome.wire_mismatches:
        raise typer.Exit(EXIT_INVALID)


@app.command()
def report(
    run_dirs: Annotated[list[Path], typer.Argument(
        help="A govkit bench results dir, or two or more to compare.", show_default=False)],
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="Where compare.html and compare.md go (default: the first run's "
                      "directory); only with two or more runs.")] = None,
):
    """Write report.html and summary.md for a results directory; for two or more (e.g. a
    ddsperf run and a fastdds run), compare.html and compare.md side by side."""
    from govkit.report.compare import write_reports
    html, md = _run(write_reports, run_dirs, out_dir)
    out.print(f"wrote {html}\nwrote {md}", markup=False)


# --------------------------------------------------------------------------- analysis

TargetName = Literal[tuple(TARGETS)]
SeverityName = Literal["error", "warning", "info"]
JsonOpt = Annotated[bool, typer.Option("--json", help="JSON (its fields: docs/guide/checking.md).")]


@app.command()
def lint(
    files: Annotated[list[Path] | None, typer.Argument(
        help="Governance/permissions documents: XML or signed S/MIME.")] = None,
    ca: Annotated[Path | None, typer.Option(
        "--ca", help="Identity certificates to check grants against: a directory of PEM "
                     "files (e.g. a test PKI) or one PEM file; never created here.")] = None,
    target: Annotated[TargetName, typer.Option(
        "--target", metavar=f"[{'|'.join(TARGETS)}]",
        help="Whose reading to check: omg (the specification, warning about every known "
             "implementation that differs) or one implementation.")
    ] = DEFAULT_TARGET,
    warn_days: Annotated[int, typer.Option(
        "--warn-days", min=0, help="Warn when a grant expires within this many days.")] = 30,
    fail_on: Annotated[SeverityName, typer.Option(
        "--fail-on", metavar="[error|warning|info]",
        help="Exit 1 when a finding has at least this severity.")] = "error",
    select: Annotated[list[str] | None, typer.Option(
        "--select", help="Only these rules: ids, id prefixes (GK2) or names, comma-separated "
                         "or repeated; ALL for every rule.")] = None,
    ignore: Annotated[list[str] | None, typer.Option(
        "--ignore", help="Leave out these rules (same forms as --select).")] = None,
    as_json: JsonOpt = False,
    list_rules: Annotated[bool, typer.Option(
        "--rules", help="List every rule with its id, severity, why and an example.")] = False,
):
    """Check what the XSD cannot: rules that never apply, what leaks, subjects, validity."""
    from govkit.check.lint import LintOptions, lint_paths, worst
    from govkit.check.rules import rules_table
    from govkit.check.rules.registry import SEVERITY_RANK
    if list_rules:
        table = rules_table()
        if as_json:
            print(_json({"schema": "govkit.lint-rules/1",
                              "rules": [r.to_json() for r in table]}))
            return
        for r in table:
            kinds = ", ".join(k.value for k in r.kinds)
            out.print(f"{r.id} {r.severity:<7} {r.name} ({kinds})", markup=False)
            out.print(f"      why: {r.why}.", markup=False)
            out.print(f"      example: {r.example}", markup=False)
            if r.note:
                out.print(f"      note: {r.note}", markup=False)
        return
    if not files:
        _fail(GovkitError("give the files to lint (or --rules)"))
    options = LintOptions(target=target, warn_days=warn_days, ca=ca, select=select or [],
                          ignore=ignore or [])
    reports = _run(lint_paths, files, options)
    code = EXIT_USAGE if any(r.error for r in reports) else EXIT_OK
    if worst(reports) >= SEVERITY_RANK[fail_on]:
        code = max(code, EXIT_INVALID)
    counts = {s: sum(f.severity == s for r in reports for f in r.findings)
              for s in ("error", "warning", "info")}
    if as_json:
        print(_json({"schema": "govkit.lint/1", "target": target,
                          "files": [r.to_json() for r in reports],
                          "summary": {**counts, "files": len(reports),
                                      "unreadable": sum(bool(r.error) for r in reports)}}))
        raise typer.Exit(code)
    for r in reports:
        if r.error:
            err.print(f"govkit: {r.error}", markup=False)
        for f in r.findings:
            out.print(str(f), markup=False)
    total = sum(counts.values())
    summary = ", ".join(f"{n} {s}{'s' if n != 1 and s != 'info' else ''}"
                        for s, n in counts.items() if n)
    out.print(f"{len(reports)} file(s), target {target}: "
              f"{summary if total else 'no findings'}", markup=False)
    raise typer.Exit(code)


@app.command()
def identify(files: Annotated[list[Path], typer.Argument(help="Governance documents.")],
             as_json: JsonOpt = False):
    """Name the catalog profile a governance document implements (or the nearest one)."""
    from govkit.check.identify import identification_text, identify_paths
    results = identify_paths(files)
    if as_json:
        print(_json({"schema": "govkit.identify/1",
                          "files": [r.to_json() for r in results]}))
    else:
        for r in results:
            (err if r.error and r.kind is None else out).print(identification_text(r), markup=False)
    code = EXIT_OK if all(r.ok for r in results) else EXIT_INVALID
    if any(r.error and r.kind is None for r in results):
        code = EXIT_USAGE
    raise typer.Exit(code)


@app.command()
def explain(file: Annotated[Path, typer.Argument(help="A governance or permissions document.")],
            as_json: JsonOpt = False):
    """Say in plain English what a document protects and what it does not."""
    from govkit.check.explain import explain_document, explanation_text
    from govkit.check.loaded import load_document
    explanation = explain_document(_run(load_document, file))
    if as_json:
        print(_json({"schema": "govkit.explain/1", **explanation}))
    else:
        out.print(explanation_text(explanation), markup=False)


@app.command()
def diff(a: Annotated[Path, typer.Argument(help="The first document (A).")],
         b: Annotated[Path, typer.Argument(help="The second document (B), of the same kind.")],
         as_json: JsonOpt = False):
    """Semantic difference of two governance (or two permissions) documents."""
    from govkit.check.diff import diff_documents
    from govkit.check.loaded import load_document
    docs = [_run(load_document, p) for p in (a, b)]
    changes = _run(diff_documents, *docs)
    for d in docs:
        if d.problems:
            err.print(f"govkit: warning: {d.file} is not valid against the DDS Security 1.1 "
                      f"XSD ({len(d.problems)} problem(s), see govkit validate); compared as "
                      "read leniently", markup=False)
    if as_json:
        print(_json({"schema": "govkit.diff/1", "a": str(a), "b": str(b),
                          "kind": docs[0].kind.value, "same": not changes,
                          "changes": [c.to_json() for c in changes]}))
    else:
        for c in changes:
            out.print(str(c), markup=False)
        out.print(f"{len(changes)} difference(s)" if changes else "no semantic difference",
                  markup=False)
    raise typer.Exit(EXIT_INVALID if changes else EXIT_OK)
