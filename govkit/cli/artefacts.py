"""The commands that make and check the artefacts: profiles, validate, generate, sign and
verify (main.py registers them).

No `from __future__ import annotations` here: typer would then evaluate every option's
annotation string at start-up (a few hundred evals, ~20 ms of `govkit --help`).
"""

from pathlib import Path
from typing import Annotated

import typer

from govkit.cli.common import (
    RUNNER_METAVAR,
    SAME_ERROR_SHOWN,
    AllOpt,
    AllowUnmatchedOpt,
    CaOpt,
    CountOpt,
    JobsOpt,
    ParticipantsOpt,
    PolicyOpt,
    PrefixOpt,
    ProfileOpt,
    ProfilesOpt,
    ProtectionOpt,
    RunnerName,
    TargetOpt,
    chosen_participants,
    err,
    json_document,
    json_option,
    load_ros_input,
    policy_domains,
    print_errors,
    print_lines,
    refuse_without_policy,
    use_profiles_file,
    uses_policy,
    warn_stale,
    wide,
)
from govkit.common.errors import EXIT_INVALID, EXIT_OK, EXIT_USAGE, GovkitError
from govkit.common.findings import one_line
from govkit.common.limits import MAX_DOMAIN_ID
from govkit.pki.vocabulary import DEFAULT_GRANT_DAYS

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
ValidFromOpt = Annotated[str | None, typer.Option(
    "--valid-from", help="Permissions validity start, ISO 8601 (UTC unless a zone is given; "
                         "default now less a day of clock skew).")]
ValidForOpt = Annotated[int | None, typer.Option(
    "--valid-for", help=f"Permissions validity in days (default {DEFAULT_GRANT_DAYS} with "
                        "--valid-from; without either, each grant follows its certificate).")]
ParanoidOpt = Annotated[bool, typer.Option(
    "--paranoid", help="Check every document in full (schema, lint, own signature), "
                       "even where govkit proves it valid by construction.")]
ProfilesJson = json_option("profiles")
ValidateJson = json_option("validate")
VerifyJson = json_option("verify")


def profiles(as_json: ProfilesJson = False, profiles_file: ProfilesOpt = None):
    """List the protection-profile catalog (and your own, from --profiles or govkit.toml)."""
    from govkit.catalog.profiles import known_profiles
    use_profiles_file(profiles_file)
    if as_json:
        print(json_document("profiles", profiles=[p.listing_json() for p in known_profiles()]))
        return
    from rich.table import Table
    cols = {"name": "name", "aliases": "seed alias", "allow_unauthenticated_participants":
            "unauth. ok", "rtps_protection_kind": "rtps", "metadata_protection_kind": "metadata",
            "data_protection_kind": "data"}
    table = Table(title="govkit protection profiles (all settings: govkit profiles --json)")
    for header in cols.values():
        table.add_column(header, overflow="fold")
    for p in known_profiles():
        d = p.to_json()
        table.add_row(*[", ".join(d[c]) if c == "aliases" else str(d[c] or "—") for c in cols])
    wide.print(table)   # piped: as wide as its rows, no name folded mid-word


def validate(files: Annotated[list[Path], typer.Argument(help="XML or signed S/MIME files.")],
             target: TargetOpt = None, as_json: ValidateJson = False):
    """Validate governance/permissions documents against the DDS Security 1.1 schemas, and
    check what the target refuses that the schema allows (lint's rules marked validate:
    the same verdict as `govkit lint --target`)."""
    from govkit.cli.lint_validate import run_validate
    raise typer.Exit(run_validate(files, target, as_json))


def _warn_revoked_grants(signed, ca: Path) -> None:
    """sign --renew: a grant for a certificate the PKI's CRL revokes is renewed as asked,
    but said (verify and pki status count it as a problem)."""
    from govkit.pki.testpki import TestPKI
    from govkit.smime.status import revoked_grants
    if not ca.is_dir():
        return
    for p7s in signed:
        for line in revoked_grants(p7s, TestPKI(ca)):
            err.print(f"govkit: warning: {p7s}: {line}", markup=False)


def _say_some(lines: list[str], what: str) -> None:
    """The first SAME_ERROR_SHOWN lines on stderr, then how many more."""
    for line in lines[:SAME_ERROR_SHOWN]:
        err.print(line, markup=False)
    if len(lines) > SAME_ERROR_SHOWN:
        err.print(f"govkit: … and {len(lines) - SAME_ERROR_SHOWN} more {what}", markup=False)


def _say_checked_in_full(pki, result) -> None:
    """One line when the PKI manifest was not used, else one per certificate checked in
    full (the first few)."""
    if result.manifest_note:
        err.print(f"govkit: {result.manifest_note}: every certificate checked in full",
                  markup=False)
        return
    why = {"changed": "is not the certificate the PKI manifest lists (changed since govkit "
                      "wrote the PKI)", "unlisted": "is not in the PKI manifest"}
    _say_some([f"govkit: {one_line(pki.path(name))}: {why[reason]}: checked in full"
               for name, reason in result.unproven],
              "certificate(s) checked in full for the same reasons")


def generate(profile: ProfileOpt = None, all_profiles: AllOpt = False,
             out_dir: Annotated[Path, typer.Option(
                 "--out", help="Where the documents go: governance/PROFILE.xml and "
                               "permissions/PARTICIPANT.xml (and .p7s beside each with "
                               "--sign).")] = Path("build"),
             ca: CaOpt = Path("pki"),
             domain: Annotated[str | None, typer.Option(
                 "--domain", show_default=False,
                 help=f"Domain id or range, e.g. 0 or 0-10. Default: 0-{MAX_DOMAIN_ID}; "
                      f"with --policy, $ROS_DOMAIN_ID or 0, as sros2 writes it.")
             ] = None,
             runner: Annotated[RunnerName, typer.Option(
                 "--runner", metavar=RUNNER_METAVAR,
                 help="Whose topics the permissions allow (participants without grants "
                      "of their own).")] = "ddsperf",
             participants: ParticipantsOpt = None, count: CountOpt = None,
             prefix: PrefixOpt = "p",
             sign: Annotated[bool, typer.Option(
                 "--sign", help="Also sign every document (NAME.p7s beside NAME.xml) in the "
                                "same pass, with the PKI's Permissions CA.")] = False,
             valid_from: ValidFromOpt = None, valid_for: ValidForOpt = None,
             jobs: JobsOpt = None, profiles_file: ProfilesOpt = None,
             paranoid: ParanoidOpt = False,
             policy: PolicyOpt = None, protection: ProtectionOpt = None,
             allow_unmatched: AllowUnmatchedOpt = False):
    """Render governance per profile and permissions per participant (validated); with
    --policy, an sros2 policy's permissions per enclave and its per-topic governance."""
    refuse_without_policy(policy, {"--allow-unmatched": allow_unmatched})
    if uses_policy(policy, protection, {"--profile": profile, "--all-profiles": all_profiles,
                                        "--participants": participants, "--count": count},
                   "writes the policy's enclaves and governance"):
        _generate_policy(policy, protection, out_dir, ca, domain, sign, valid_from, valid_for,
                         allow_unmatched)
        return
    if domain is None:
        domain = f"0-{MAX_DOMAIN_ID}"
    from govkit.catalog.profiles import select_profiles
    from govkit.catalog.runners import runner_info
    from govkit.documents.render import DomainSet
    from govkit.generate.bundle import BundleLog, ensure_pki
    from govkit.generate.fleet import ensure_identities
    from govkit.generate.fleet import generate as generate_documents
    from govkit.generate.validity import parse_window
    window = parse_window(valid_from, valid_for)
    log = BundleLog()
    use_profiles_file(profiles_file)
    fleet = chosen_participants(participants, count, prefix, [])
    chosen = [] if fleet and not (profile or all_profiles) else \
        select_profiles(profile, all_profiles)
    domains = DomainSet.parse(domain)
    single_ca = runner_info(runner).single_ca  # a usage error before anything is created
    _refuse_policy_grants(ca, out_dir, fleet)
    if fleet is None:
        pki = ensure_pki(ca, log, single_ca)
    else:
        pki = ensure_identities(ca, fleet, log, single_ca, jobs)
    print_lines(log.messages)
    result = generate_documents(chosen, pki, out_dir, domains, runner, fleet, sign, jobs,
                                window, paranoid)
    _say_checked_in_full(pki, result)
    if fleet is None:   # (listed participants: errors, printed below)
        _say_some([f"govkit: warning: {line}" for line in result.revoked.values()],
                  "revoked participant(s) left out")
    warn_stale(pki, result.stale if fleet is None else [])
    for stem, why in pki.stray_identities():
        err.print(f"govkit: {str(pki.path(stem))!r}: ignored, no permissions written: {why}",
                  markup=False)
    print_lines(f"wrote {one_line(path)}" for path in result.files)
    for p in chosen:
        if not p.security:      # said, not silently skipped: there is nothing to write
            err.print(f"govkit: {p.name}: no governance document (the baseline runs without "
                      f"the security plugins); permissions only", markup=False)
    print_errors(result.errors)
    if result.errors:
        raise typer.Exit(max(e.exit_code for e in result.errors))


def _refuse_policy_grants(ca: Path, out_dir: Path, fleet) -> None:
    """Before the PKI is touched: no grant `generate --policy` wrote in --out is replaced
    (govkit.generate.grants; fleet.generate checks it again)."""
    from govkit.generate.grants import PROFILES, refuse_other_mode
    from govkit.pki.testpki import TestPKI
    pki = TestPKI(ca)
    names = [p.name for p in fleet] if fleet else pki.identities() if pki.exists() else []
    refuse_other_mode(Path(out_dir) / "permissions", names, PROFILES, ca)


def sign(paths: Annotated[list[Path] | None, typer.Argument(
             help="XML files or directories (default build/).")] = None,
         ca: SignCaOpt = Path("pki"), target: TargetOpt = None, jobs: JobsOpt = None,
         renew: Annotated[bool, typer.Option(
             "--renew", help="Give every permissions document's grants a new validity "
                             "(--valid-from, --valid-for) and sign it again; no key is "
                             "touched.")] = False,
         valid_from: ValidFromOpt = None, valid_for: ValidForOpt = None):
    """S/MIME-sign documents with the Permissions CA (writes NAME.p7s beside NAME.xml);
    only documents `govkit validate --target` calls valid are signed, and none that grants
    a certificate the PKI's CRL revokes."""
    from govkit.check.config import lint_target
    from govkit.generate.fleet import sign_files
    from govkit.pki.testpki import permissions_ca_paths
    if (valid_from is not None or valid_for is not None) and not renew:
        raise GovkitError("--valid-from/--valid-for need --renew (sign keeps a document's "
                          "dates otherwise)")
    target = lint_target(target, Path.cwd())
    cert, key = permissions_ca_paths(ca, "sign", need_key=True)
    if not paths and not Path("build").exists():
        raise GovkitError("build: no such directory: run `govkit generate` first (it writes "
                          "the documents to sign there)")
    if renew:
        from govkit.generate.validity import parse_window, renew_permissions
        window = parse_window(valid_from, valid_for or DEFAULT_GRANT_DAYS)
        if ca.is_dir():   # a CRL missing or older than the PKI manifest records: refused
            from govkit.pki.revocation import current_crl
            from govkit.pki.testpki import TestPKI
            current_crl(TestPKI(ca))
        signed, errors = renew_permissions(paths or [Path("build")], cert, key, window,
                                           target)
        _warn_revoked_grants(signed, ca)
    else:
        warnings: list[str] = []
        signed, errors = sign_files(paths or [Path("build")], cert, key, jobs, target,
                                    warnings, ca)   # (a grant of a revoked certificate: error)
        for line in warnings:   # signed all the same: another implementation refuses it
            err.print(line, markup=False)
    print_lines(f"signed {one_line(p)}" for p in signed)
    print_errors(errors, prefix_usage=False)  # unreadable files as errors, invalid as findings
    if not signed and not errors:
        raise GovkitError(f"no .xml documents under {', '.join(map(str, paths or ['build']))}; "
                          f"run `govkit generate` first")
    raise typer.Exit(max((e.exit_code for e in errors), default=EXIT_OK))


def verify(files: Annotated[list[Path], typer.Argument(help="Signed .p7s files.")],
           ca: VerifyCaOpt = Path("pki"), target: TargetOpt = None,
           as_json: VerifyJson = False, jobs: JobsOpt = None,
           paranoid: ParanoidOpt = False):
    """Verify signatures as OpenSSL, Cyclone DDS 0.10 and Fast DDS 2.9 do, and validate the
    signed documents (the verdict of `govkit validate --target` on each)."""
    from govkit.check.config import lint_target
    from govkit.pki.testpki import permissions_ca_paths
    from govkit.smime.status import add_revocation_problems
    from govkit.smime.verify import Verification, load_trusted, trust_note
    from govkit.smime.verify_batch import verify_files
    target = lint_target(target, Path.cwd())
    cert, _ = permissions_ca_paths(ca, "verify", need_key=False)
    ca_cert = load_trusted(cert)
    if len(ca_cert) > 1:
        err.print(f"govkit: {trust_note(cert, ca_cert)}", markup=False)
    results, code, lines = [], EXIT_OK, []
    verdicts = verify_files(files, ca_cert, None, jobs, paranoid, target)
    # --ca a test PKI with a CRL: a grant for a revoked certificate is a problem
    for line in add_revocation_problems([r for r in verdicts if isinstance(r, Verification)],
                                        ca):
        err.print(f"govkit: warning: {line}", markup=False)
    for f, r in zip(files, verdicts, strict=True):
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
        name = one_line(r.file)
        if r.ok:
            lines.append(f"{name}: OK ({r.kind}, signed by {r.signer})")
        elif r.signature_ok:   # OpenSSL accepts the signature: only the document fails
            lines.append(f"{name}: signature OK (signed by {r.signer}, as `openssl smime "
                         f"-verify` decides), but the document is refused:")
        lines += [f"{name}: warning: {w}" for w in r.warnings]
        lines += [f"{name}: {p}" for p in r.problems]
        lines += [f"{name}: {t}" for t in r.target_lines()]
    print_lines(lines)
    if as_json:
        print(json_document("verify", target=target, files=[r.to_json() for r in results]))
    raise typer.Exit(code)


def _generate_policy(policy: Path, protection: Path | None, out_dir: Path, ca: Path,
                     domain: str | None, sign: bool, valid_from, valid_for,
                     allow_unmatched: bool) -> None:
    from govkit.generate.bundle import BundleLog
    from govkit.generate.policy import generate_policy
    from govkit.generate.validity import parse_window
    window = parse_window(valid_from, valid_for)
    domains = policy_domains(domain)
    ros = load_ros_input(policy, protection)
    log = BundleLog()
    result = generate_policy(ros, ca, out_dir, domains, sign, log, window, allow_unmatched)
    print_lines(log.messages)
    print_lines(f"wrote {one_line(path)}" for path in result.written)
    for enclave, why in result.left_out:
        err.print(f"govkit: warning: enclave {one_line(enclave)} left out, no permissions "
                  f"written: {why}", markup=False)
