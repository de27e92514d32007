"""The commands of the test PKI: `pki init`, and its key lifecycle, `pki revoke`, `pki
renew` and `pki status` (main.py registers them).

No `from __future__ import annotations` here: typer would then evaluate every option's
annotation string at start-up (a few hundred evals, ~20 ms of `govkit --help`).
"""

from pathlib import Path
from typing import Annotated

import typer

from govkit.cli.common import (
    CountOpt,
    JobsOpt,
    ParticipantsOpt,
    PrefixOpt,
    choices,
    chosen_participants,
    comma_list,
    err,
    json_document,
    out,
    print_lines,
    warn_stale,
)
from govkit.common.errors import GovkitError
from govkit.common.findings import one_line
from govkit.common.limits import KEY_TYPES
from govkit.pki.vocabulary import (
    DEFAULT_CERT_DAYS,
    DEFAULT_CRL_DAYS,
    DEFAULT_WARN_DAYS,
    HSM_KINDS,
    REASON_NAMES,
)

# Start-up: nothing heavy at module level (govkit --help imports this module and the light
# vocabulary).

PkiDirOpt = Annotated[Path, typer.Option(
    "--ca", help="Test PKI directory (never created here: see `govkit pki init`).")]


def pki_init(
    directory: Annotated[Path, typer.Argument(help="PKI directory.")] = Path("pki"),
    participant: Annotated[list[str] | None, typer.Option(
        "--participant", callback=comma_list,
        help="Participant identity: a name or a ROS 2 enclave path such as "
             "/talker_listener/talker (repeatable or comma-separated; default pub and sub).")
    ] = None,
    key_type: Annotated[str, typer.Option(
        "--key-type", metavar=choices(KEY_TYPES),
        help="Key type of every new key (the two Cyclone DDS 0.10 accepts).")] = KEY_TYPES[0],
    days: Annotated[int, typer.Option("--days", help="Certificate validity in days.")
                    ] = DEFAULT_CERT_DAYS,
    force: Annotated[bool, typer.Option(
        "--force", help="Replace the CAs and reissue every participant (new keys).")] = False,
    single_ca: Annotated[bool, typer.Option(
        "--single-ca", help="One CA for identities and permissions (RTI Perftest).")] = False,
    participants: ParticipantsOpt = None, count: CountOpt = None, prefix: PrefixOpt = "p",
    jobs: JobsOpt = None,
    hsm: Annotated[str | None, typer.Option(
        "--hsm", metavar=choices(HSM_KINDS),
        help="Move every participant's private key into a SoftHSM2 token in the PKI "
             "directory (the key file is removed; <name>.pkcs11 names the key). Fast DDS "
             "only: Cyclone DDS 0.10 cannot use a pkcs11: key.")] = None,
):
    """Create a TEST PKI: identity CA, separate permissions CA, participant identities."""
    from govkit.pki.issuance import init_pki
    from govkit.pki.testpki import DEFAULT_PARTICIPANTS
    if hsm is not None and hsm not in HSM_KINDS:
        raise GovkitError(f"--hsm {hsm}: unknown; the one supported is softhsm (SoftHSM2)")
    if hsm:
        from govkit.pki.hsm import check_softhsm
        check_softhsm()
    fleet = chosen_participants(participants, count, prefix, participant or [])
    pki, created = init_pki(directory, fleet or tuple(DEFAULT_PARTICIPANTS), key_type,
                            days, force, single_ca, processes=jobs)
    print_lines(f"wrote {one_line(f)}" for f in created)
    if hsm:
        from govkit.pki.hsm import move_keys_to_softhsm
        moved = move_keys_to_softhsm(pki)
        print_lines(f"moved {f.removesuffix('.pkcs11')}.key into the SoftHSM2 token "
                    f"({f} names it; Fast DDS only)" for f in moved)
        created = created or moved
    stale = pki.stale_participants()
    if not created and not stale:
        out.print(f"{one_line(directory)}: PKI already complete; nothing written (use --force "
                  f"to replace keys)", markup=False)
    elif not created:   # not complete: e.g. a `pki init --force` killed half-way
        out.print(f"{one_line(directory)}: nothing written, but the PKI is not complete: "
                  f"{len(stale)} participant(s) hold certificates of an earlier Identity CA",
                  markup=False)
    warn_stale(pki, stale)


def pki_revoke(
    names: Annotated[list[str] | None, typer.Argument(
        help="The participants whose certificates to revoke (one new CRL for all of "
             "them). None: write the CRL again if it is missing, older than the last one "
             "the PKI manifest records, or lacks a revocation it records.")] = None,
    ca: PkiDirOpt = Path("pki"),
    reason: Annotated[str | None, typer.Option(
        "--reason", metavar=choices(REASON_NAMES),
        help="RFC 5280 reason code stated on the CRL.")] = None,
    crl_days: Annotated[int, typer.Option(
        "--crl-days", min=1, help="Days until the CRL's next update (capped at the Identity "
                                  "CA's expiry); past it every certificate is refused.")
    ] = DEFAULT_CRL_DAYS,
):
    """Revoke participants' certificates: (re)write the Identity CA's CRL, which every
    configuration govkit writes from then on names."""
    from govkit.pki.revocation import crl_path, revoke_all
    from govkit.pki.testpki import TestPKI
    pki = TestPKI(ca)
    notes: list[str] = []
    done = revoke_all(pki, names or [], reason, crl_days, notes=notes)
    if any(new for _, new in done) or notes:
        out.print(f"wrote {crl_path(pki)}", markup=False)
    elif not names:
        out.print(f"{crl_path(pki)}: nothing written: it lacks no revocation the PKI "
                  f"manifest records and is not older than the last CRL it saw",
                  markup=False)
    print_lines(line if new else f"already revoked: {line}" for line, new in done)
    for note in notes:
        err.print(f"govkit: note: {note}", markup=False)


def pki_renew(
    name: Annotated[str, typer.Argument(help="The participant whose certificate to renew.")],
    ca: PkiDirOpt = Path("pki"),
    days: Annotated[int, typer.Option("--days", help="Validity of the new certificate in "
                                                     "days (never past the Identity CA's "
                                                     "expiry).")] = DEFAULT_CERT_DAYS,
    new_key: Annotated[bool, typer.Option(
        "--new-key", help="Re-key a revoked participant: a new key and certificate; the "
                          "revoked ones stay on the CRL and move to PKI/retired/.")] = False,
):
    """Issue a new certificate for a participant's existing key (same public key, new
    serial and validity; the key file is never written), or with --new-key a new key and
    certificate for a revoked participant."""

    from govkit.pki.renewal import rekey, renew
    from govkit.pki.testpki import TestPKI
    pki = TestPKI(ca)
    notes: list[str] = []
    if new_key:
        old, new, moved = rekey(pki, name, days, notes=notes)
        stem = pki.participant_stem(name)
        out.print(f"wrote {pki.path(stem, '.key')} and {pki.path(stem)}: a new key and "
                  f"certificate, serial {new.serial_number:#x}, valid "
                  f"{new.not_valid_before_utc:%Y-%m-%d} to {new.not_valid_after_utc:%Y-%m-%d}"
                  f"; the revoked certificate (serial {old.serial_number:#x}, still on the "
                  f"CRL) and its key moved to {', '.join(moved)}", markup=False)
    else:
        old, new = renew(pki, name, days, notes=notes)
        stem = pki.participant_stem(name)
        out.print(f"wrote {pki.path(stem)}: serial {new.serial_number:#x}, valid "
                  f"{new.not_valid_before_utc:%Y-%m-%d} to {new.not_valid_after_utc:%Y-%m-%d}"
                  f" (was serial {old.serial_number:#x}, to "
                  f"{old.not_valid_after_utc:%Y-%m-%d}); same key {pki.path(stem, '.key')}",
                  markup=False)
    for note in notes:
        err.print(f"govkit: note: {pki.path(stem)}: {note}", markup=False)
    what = "permissions signed for the old certificate name its key, which is revoked" \
        if new_key else "permissions signed for the old certificate keep its validity"
    out.print(f"{what}: regenerate them ({_regenerate(ca, stem)})", markup=False)


def _regenerate(ca: Path, stem: str) -> str:
    """The command that makes a participant's permissions again, as its project was made:
    the `generate --policy` run recorded in the PKI for an enclave of it, else generate's
    (govkit.generate.grants)."""
    import shlex

    from govkit.generate.grants import policy_command, policy_run
    from govkit.pki.ros import ENCLAVE_MARK
    run = policy_run(ca)
    if run is not None and stem in run["enclaves"]:
        return (f"`{policy_command(run['policy'], run['protection'], run['out'], str(ca))}`, "
                f"the run that made them")
    if stem.startswith(ENCLAVE_MARK):
        return (f"`govkit generate --policy YOUR_POLICY.xml --ca {shlex.quote(str(ca))} "
                f"--sign`, with your --protection and --out, if a policy made them")
    return (f"`govkit generate --ca {shlex.quote(str(ca))} --all-profiles --sign`, with your "
            f"--out and --participants")


def pki_status(
    ca: Annotated[Path, typer.Argument(help="Test PKI directory.")] = Path("pki"),
    documents: Annotated[list[Path] | None, typer.Option(
        "--documents", help="Signed documents (.p7s files or directories; repeatable, not "
                            "comma-separated: a file name may hold a comma; default "
                            "build/).")] = None,
    warn_days: Annotated[int, typer.Option(
        "--warn-days", min=0, help="Exit 1 if anything expires within this many days.")
    ] = DEFAULT_WARN_DAYS,
    as_json: Annotated[bool, typer.Option(
        "--json", help="JSON, as {\"schema\": \"govkit.pki-status/1\", ...} (its JSON "
                       "Schema: govkit/schemas/json/pki-status.schema.json).")] = False,
):
    """Every CA, participant certificate, CRL, signed governance and permissions grant:
    validity, days left, revoked or not; private keys others may read, certificates that
    outlive their CA, grants that end after or before their certificate. Exit 1 if anything
    is expired, expires within --warn-days, is not yet valid, is revoked yet still granted,
    outlives its CA, or is a private key its group or others may read or write."""
    from govkit.pki.status import status_lines
    from govkit.smime.status import lifecycle_status
    status = lifecycle_status(ca, documents or None, warn_days)
    if as_json:
        print(json_document("pki-status", now=status.now.isoformat(), warn_days=warn_days,
                            exit_code=status.exit_code,
                            items=[i.to_json(status.now) for i in status.items]))
    else:
        print_lines(status_lines(status))
    raise typer.Exit(status.exit_code)
