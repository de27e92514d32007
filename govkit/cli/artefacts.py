"""The commands that make and check the artefacts: profiles, validate, generate, sign,
verify, and `pki init` (main.py registers them).

No `from __future__ import annotations` here: typer would then evaluate every option's
annotation string at start-up (a few hundred evals, ~20 ms of `govkit --help`).
"""

from pathlib import Path
from typing import Annotated

import typer

from govkit.catalog.runners import RUNNERS
from govkit.cli.common import (
    AllOpt,
    CaOpt,
    ProfileOpt,
    err,
    json_text,
    out,
    print_errors,
    print_lines,
    run,
)
from govkit.common.errors import EXIT_INVALID, EXIT_OK, EXIT_USAGE, GovkitError
from govkit.common.limits import KEY_TYPES, MAX_DOMAIN_ID, MAX_JOBS

# Start-up: nothing heavy at module level (govkit --help imports this module); each
# command imports what it uses.

SignCaOpt = Annotated[Path, typer.Option(
    "--ca", help="Test PKI directory holding the Permissions CA (permissions_ca.pem and "
                 ".key); never created here: see `govkit pki init`.")]
VerifyCaOpt = Annotated[Path, typer.Option(
    "--ca", help="The Permissions CA to trust: a test PKI directory (its permissions_ca.pem) "
                 "or a PEM file, every certificate of which is trusted (as openssl -CAfile "
                 "and Fast DDS 2.9 do; Cyclone DDS 0.10 trusts the first only, and a line "
                 "says where that changes the verdict); never created here.")]
ParticipantsOpt = Annotated[Path | None, typer.Option(
    "--participants", help="A participants file: one name per line, or CSV with a header "
                           "(name, organization, unit, country, publish, subscribe, "
                           "partitions); see docs/guide/fleets.md.")]
CountOpt = Annotated[int | None, typer.Option(
    "--count", help="N numbered participants PREFIX0.. (tests and benchmarks).")]
PrefixOpt = Annotated[str, typer.Option("--prefix", help="Name prefix for --count.")]
JobsOpt = Annotated[int | None, typer.Option(
    "--jobs", min=1, max=MAX_JOBS,
    help=f"Worker processes, 1 to {MAX_JOBS} (default: one per CPU when there are many "
         "files).")]


def profiles(as_json: Annotated[bool, typer.Option("--json", help="JSON list.")] = False):
    """List the protection-profile catalog."""
    from govkit.catalog.profiles import PROFILES
    if as_json:
        print(json_text([p.to_json() for p in PROFILES]))
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
        print(json_text(report))
    raise typer.Exit(code)


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
    pki, created = run(init_pki, directory, fleet or tuple(DEFAULT_PARTICIPANTS), key_type,
                       days, force, single_ca, processes=jobs)
    print_lines(f"wrote {f}" for f in created)
    if not created:
        out.print(f"{directory}: PKI already complete; nothing written (use --force to "
                  f"replace keys)", markup=False)
    _warn_stale(pki)


def _fleet(file: Path | None, count: int | None, prefix: str, names: list[str]):
    """The participants named on the command line, in a file and numbered, in that order
    (None if none); a name given twice is a usage error."""
    from govkit.pki.participants import merge_participants
    return run(merge_participants, names, file, count, prefix) or None


def _warn_stale(pki, names=None) -> None:
    for name in (run(pki.stale_participants) if names is None else names):
        err.print(f"govkit: warning: {pki.path(name)} was not issued by the current Identity "
                  f"CA (left from an earlier PKI); no permissions are written for it "
                  f"(reissue with `govkit pki init {pki.directory} --force`)", markup=False)


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
        run(select_profiles, profile, all_profiles)
    domains = run(DomainSet.parse, domain)
    single_ca = run(runner_info, runner).single_ca  # a usage error before anything is created
    if fleet is None:
        pki = run(ensure_pki, ca, log, single_ca)
    else:
        pki = run(ensure_identities, ca, fleet, log, single_ca, jobs)
    print_lines(log.messages)
    result = run(generate_documents, chosen, pki, out_dir, domains, runner, fleet, sign, jobs)
    _warn_stale(pki, result.stale if fleet is None else [])
    print_lines(f"wrote {path}" for path in result.written)
    print_errors(result.errors)
    if result.errors:
        raise typer.Exit(max(e.exit_code for e in result.errors))


def sign(paths: Annotated[list[Path] | None, typer.Argument(
             help="XML files or directories (default build/).")] = None,
         ca: SignCaOpt = Path("pki"), jobs: JobsOpt = None):
    """S/MIME-sign documents with the Permissions CA (writes NAME.p7s beside NAME.xml)."""
    from govkit.generate.fleet import sign_files
    from govkit.pki.testpki import permissions_ca_paths
    cert, key = run(permissions_ca_paths, ca, "sign", need_key=True)
    signed, errors = run(sign_files, paths or [Path("build")], cert, key, jobs)
    print_lines(f"signed {p}" for p in signed)
    print_errors(errors, prefix_usage=False)  # unreadable files as errors, invalid as findings
    if not signed and not errors:
        err.print(f"govkit: no .xml documents under {', '.join(map(str, paths or ['build']))}; "
                  f"run `govkit generate` first")
        raise typer.Exit(EXIT_USAGE)
    raise typer.Exit(max((e.exit_code for e in errors), default=EXIT_OK))


def verify(files: Annotated[list[Path], typer.Argument(help="Signed .p7s files.")],
           ca: VerifyCaOpt = Path("pki"),
           as_json: Annotated[bool, typer.Option("--json")] = False, jobs: JobsOpt = None):
    """Verify signatures as OpenSSL, Cyclone DDS 0.10 and Fast DDS 2.9 do, and validate the
    signed documents."""
    from govkit.pki.testpki import permissions_ca_paths
    from govkit.smime import Verification, load_trusted, trust_note
    from govkit.smime.verify_batch import verify_files
    cert, _ = run(permissions_ca_paths, ca, "verify", need_key=False)
    ca_cert = run(load_trusted, cert)
    if len(ca_cert) > 1:
        err.print(f"govkit: {trust_note(cert, ca_cert)}", markup=False)
    results, code, lines = [], EXIT_OK, []
    for f, r in zip(files, run(verify_files, files, ca_cert, None, jobs), strict=True):
        if isinstance(r, GovkitError):  # unreadable: said on stderr, and exit 2 at the end
            print_lines(lines)
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
        lines += [f"{r.file}: {t}" for t in r.target_lines()]
    print_lines(lines)
    if as_json:
        print(json_text([r.to_json() for r in results]))
    raise typer.Exit(code)
