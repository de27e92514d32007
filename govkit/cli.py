"""The `govkit` command line: parse options, call one stage function, print.

Exit codes: 0 success; 1 invalid document / failed verification / failed benchmark point;
2 unreadable input, bad usage or a missing prerequisite; 3 internal error; 130 interrupted.

No `from __future__ import annotations` here: typer would then evaluate every option's
annotation string at start-up (a few hundred evals, ~20 ms of `govkit --help`).
"""

import os
import sys
from pathlib import Path
from typing import Annotated, Literal

import typer

from . import __version__
from .access import ACCESS_SCOPES
from .defaults import (
    DEFAULT_BUDGET_S,
    DEFAULT_DURATION_S,
    DEFAULT_MAX_REPEATS,
    DEFAULT_REPEATS,
    DEFAULT_TARGET_CI_PCT,
    DEFAULT_WARMUP_S,
)
from .errors import EXIT_INVALID, EXIT_OK, EXIT_USAGE, GovkitError
from .limits import KEY_TYPES

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


def runner_names() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in (Path(__file__).parent / "runners").glob("*.py")
                        if p.stem not in ("base", "__init__")))


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
RunnerName = Literal[runner_names()]
CaOpt = Annotated[Path, typer.Option(
    "--ca", help="Test PKI directory (a test PKI is created there if it has none, and "
                 "govkit says so).")]
SignCaOpt = Annotated[Path, typer.Option(
    "--ca", help="Test PKI directory holding the Permissions CA (permissions_ca.pem and "
                 ".key); never created here: see `govkit pki init`.")]
VerifyCaOpt = Annotated[Path, typer.Option(
    "--ca", help="The Permissions CA to trust: a test PKI directory (its permissions_ca.pem) "
                 "or a PEM certificate file; never created here.")]
ParticipantsOpt = Annotated[Path | None, typer.Option(
    "--participants", help="A participants file: one name per line, or CSV with a header "
                           "(name, organization, unit, country, publish, subscribe, "
                           "partitions); see the README.")]
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
        sys.exit(130)
    except Exception as e:  # a govkit bug: one line unless asked for the traceback
        if os.environ.get("GOVKIT_DEBUG"):
            raise
        err.print(f"govkit: internal error: {type(e).__name__}: {e} (set GOVKIT_DEBUG=1 for "
                  f"the traceback, and please report it)", markup=False)
        sys.exit(3)


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
    from .profiles import PROFILES
    if as_json:
        import json
        print(json.dumps([p.to_json() for p in PROFILES], indent=2))
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
    from .schema import validate_file
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
        import json
        print(json.dumps(report, indent=2))
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
    from .pki import DEFAULT_PARTICIPANTS, init_pki
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
    from .participants import Participant, numbered_participants, read_participants
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
                 "--domain", help="Domain id or range, e.g. 0 or 0-10.")] = "0-230",
             runner: Annotated[str, typer.Option(
                 "--runner", metavar=f"[{'|'.join(ACCESS_SCOPES)}]",
                 help="Whose topics the permissions allow (participants without grants "
                      "of their own).")] = "ddsperf",
             participants: ParticipantsOpt = None, count: CountOpt = None,
             prefix: PrefixOpt = "p",
             sign: Annotated[bool, typer.Option(
                 "--sign", help="Also sign every document (NAME.p7s beside NAME.xml) in the "
                                "same pass, with the PKI's Permissions CA.")] = False,
             jobs: JobsOpt = None):
    """Render governance per profile and permissions per participant (validated)."""
    from .access import access_scope
    from .bundle import BundleLog, ensure_pki
    from .documents import DomainSet
    from .fleet import ensure_identities
    from .fleet import generate as generate_documents
    from .profiles import select_profiles
    log = BundleLog()
    fleet = _fleet(participants, count, prefix, [])
    chosen = [] if fleet and not (profile or all_profiles) else \
        _run(select_profiles, profile, all_profiles)
    domains = _run(DomainSet.parse, domain)
    _run(access_scope, runner)  # a usage error before anything is created
    if fleet is None:
        pki = _run(ensure_pki, ca, log, runner == "perftest")
    else:
        pki = _run(ensure_identities, ca, fleet, log, runner == "perftest", jobs)
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
    from .fleet import sign_files
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
    from .pki import load_certificate
    from .smime import Verification
    from .verify_batch import verify_files
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
        import json
        print(json.dumps([r.to_json() for r in results], indent=2))
    raise typer.Exit(code)


@app.command()
def bench(
    profile: ProfileOpt = None, all_profiles: AllOpt = False,
    runner: Annotated[RunnerName, typer.Option(
        "--runner", help="Benchmark program.")] = "ddsperf",
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
    target_ci: Annotated[float, typer.Option(
        "--target-ci", help="Target 95% interval half-width, in % of the median.")
    ] = DEFAULT_TARGET_CI_PCT,
    budget: Annotated[str, typer.Option(
        "--budget", help="Seconds from the start of the run after which no extra repeat "
                         "starts (e.g. 300, 5m, 1h); the minimum repeats always run.")
    ] = f"{DEFAULT_BUDGET_S}s",
    seed: Annotated[int | None, typer.Option(
        "--seed", help="Seed of the shuffled run order (default: random, recorded).")] = None,
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="Results directory (default results/<timestamp>/).")] = None,
    ca: CaOpt = Path("pki"),
    build: Annotated[Path, typer.Option("--build", help="Where signed files go.")] = Path("build"),
    resume: Annotated[bool, typer.Option(
        "--resume", help="Continue an interrupted run (same settings only).")] = False,
    pin: Annotated[bool, typer.Option(
        "--pin/--no-pin", help="Pin pub and sub to two different CPUs.")] = True,
    realtime: Annotated[bool, typer.Option(
        "--realtime/--no-realtime", help="Run latency repeats SCHED_FIFO where permitted "
                                         "(keeps other programs off their CPUs).")] = True,
    perftest: Annotated[str | None, typer.Option("--perftest", help="perftest_cpp path.")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the command lines of the minimum repeats; create nothing.")
    ] = False,
    no_report: Annotated[bool, typer.Option("--no-report", help="Skip report.html.")] = False,
):
    """Benchmark each profile with its signed bundle; write results.json, CSVs, report."""
    from .bench import BenchOptions, parse_budget, parse_modes, parse_sizes, run_bench
    from .profiles import select_profiles
    from .tables import flag_advice, latency_table, throughput_table
    opts = BenchOptions(
        profiles=_run(select_profiles, profile, all_profiles), runner=runner,
        modes=_run(parse_modes, mode), sizes=_run(parse_sizes, sizes), duration=duration,
        warmup=warmup, repeat=repeat, max_repeat=max_repeat, target_ci=target_ci,
        budget=_run(parse_budget, budget), seed=seed, out=out_dir, ca=ca, build=build,
        resume=resume, pin=pin, realtime=realtime, dry_run=dry_run,
        runner_options={"perftest": perftest} if perftest else {},
        command=" ".join(["govkit", *sys.argv[1:]]))
    outcome = _run(run_bench, opts, err.get())
    if dry_run:
        print("\n".join(outcome.dry_run_lines))
        return
    for table in (latency_table(outcome.summary), throughput_table(outcome.summary)):
        if table is not None:
            wide.print(table)
    if not no_report and outcome.summary:
        from .report import write_report
        html, md = _run(write_report, outcome.out)
        out.print(f"report: {html}", markup=False)
    out.print(f"results: {outcome.out}/results.json", markup=False)
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
        raise typer.Exit(130)
    if outcome.failed:
        err.print(f"govkit: {outcome.failed} repeat(s) failed (see above and results.json)")
        raise typer.Exit(EXIT_INVALID)


@app.command()
def report(results_dir: Annotated[Path, typer.Argument(help="A govkit bench results dir.")]):
    """Write report.html and summary.md for a results directory."""
    from .report import write_report
    html, md = _run(write_report, results_dir)
    out.print(f"wrote {html}\nwrote {md}", markup=False)
