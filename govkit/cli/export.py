"""`govkit export ...`: hand govkit's files over in another tool's layout (main.py registers
the commands under `export`). Today: `export sros2`, a ROS 2 keystore.

No `from __future__ import annotations` here: typer would then evaluate every option's
annotation string at start-up (a few hundred evals, ~20 ms of `govkit --help`).
"""

import shlex
from pathlib import Path
from typing import Annotated

import typer

from govkit.catalog.profiles import SECURED_PROFILES
from govkit.cli.common import (
    AllowUnmatchedOpt,
    PolicyOpt,
    ProtectionOpt,
    err,
    load_ros_input,
    out,
    policy_domains,
    print_lines,
    refuse_without_policy,
    uses_policy,
)
from govkit.common.findings import one_line

# Start-up: nothing heavy at module level; the command imports what it uses.


def sros2(keystore: Annotated[Path, typer.Argument(help="The keystore directory to write "
                                                          "(ROS_SECURITY_KEYSTORE).")],
          ca: Annotated[Path, typer.Option(
              "--ca", help="Test PKI directory (identities, both CAs); never created here "
                           "(with --policy: created or extended with the policy's "
                           "enclaves).")
          ] = Path("pki"),
          build: Annotated[Path, typer.Option(
              "--build", help="Where `govkit generate`/`sign` wrote the signed documents "
                              "(with --policy: where the policy's are written).")
          ] = Path("build"),
          profile: Annotated[str | None, typer.Option(
              "--profile", "-p", help="The profile whose signed governance every enclave "
                                      "gets (needed when build/ holds several): "
                                      f"{', '.join(p.name for p in SECURED_PROFILES)}, or "
                                      "your own.")] = None,
          force: Annotated[bool, typer.Option(
              "--force", help="Replace an existing keystore as a whole, and the --archive "
                              "(never one holding a private key this export would not write "
                              "again).")] = False,
          archive: Annotated[Path | None, typer.Option(
              "--archive", show_default=False,
              help="Also write the keystore as one archive at this path (.tar, .tar.gz or "
                   ".tgz), beside it, with its SHA-256 in PATH.sha256 (sha256sum -c): the "
                   "same files, bytes and modes, byte-identical from run to run.")] = None,
          ca_keys: Annotated[bool, typer.Option(
              "--ca-keys/--no-ca-keys", help="Copy the CA keys into private/ (0600); "
                                             "--no-ca-keys for a keystore to deploy.")] = True,
          enforce: Annotated[bool, typer.Option(
              "--enforce/--no-enforce",
              help="Enforce the permissions' grants, as sros2's keystores do: a governance "
                   "that turns join, read or write access control off (every catalog "
                   "profile's does) is exported with all three on, signed again by the "
                   "Permissions CA. --no-enforce copies it as signed: any authenticated "
                   "node may then use any topic.")] = True,
          policy: PolicyOpt = None, protection: ProtectionOpt = None,
          domain: Annotated[str | None, typer.Option(
              "--domain", show_default=False,
              help="With --policy: the domain id or range the documents allow (default "
                   "$ROS_DOMAIN_ID or 0, as sros2 writes it).")] = None,
          allow_unmatched: AllowUnmatchedOpt = False):
    """Write an sros2 keystore (public/, private/, enclaves/<enclave>/) for ROS 2's rmw;
    with --policy, the policy's enclaves with its per-topic governance."""
    from govkit.generate.sros2 import export_sros2, refuse_keystore
    refuse_keystore(keystore, force)   # before --policy generates anything
    if archive is not None:   # refused before --policy generates anything
        from govkit.common.archive import refuse_destination
        refuse_destination(archive, force)
    selection = None
    if uses_policy(policy, protection, {"--profile": profile},
                   "exports the policy's own governance"):
        selection = _policy_selection(policy, protection, ca, build, domain,
                                      allow_unmatched)
    refuse_without_policy(policy, {"--domain": domain, "--allow-unmatched": allow_unmatched},
                          " (a profile's documents are signed already)")
    result = export_sros2(keystore, ca, build, profile, force, ca_keys, enforce, selection,
                          archive)
    if result.cleaned:
        err.print(f"govkit: removed {result.cleaned} hidden staging director"
                  f"{'y' if result.cleaned == 1 else 'ies'} beside {one_line(keystore)} left "
                  f"by an export that was stopped (they held private keys)", markup=False)
    print_lines(f"{'replaced' if result.replaced else 'wrote'} {keystore}/enclaves{enclave}/ "
                f"(from {ca}/{stem}.pem)" for enclave, stem in sorted(result.enclaves.items()))
    for name, why in result.left_out:
        err.print(f"govkit: note: {name} left out: {why}", markup=False)
    for path in result.dropped:   # (named as the user named the keystore)
        err.print(f"govkit: note: {one_line(keystore / path.relative_to(result.keystore))}: "
                  f"not in the new keystore (its enclave is left out); the PKI "
                  f"{one_line(ca)}/ keeps this key", markup=False)
    if result.crl:
        out.print(f"revocation: every enclave holds crl.pem ({ca}/identity_ca.crl.pem): rmw "
                  f"hands it to the security plugins, which refuse revoked peers",
                  markup=False)
    if not result.enforcing:
        err.print("govkit: WARNING: this keystore enforces NO access control: its governance "
                  "turns join, read and/or write access control off, so any node with a "
                  "certificate of this PKI may join, publish and subscribe any topic, "
                  "whatever its permissions say (export without --no-enforce to enforce "
                  "them, as sros2's keystores do)", markup=False)
    elif result.resigned:
        out.print(f"access control: enforced ({one_line(result.enforced)}: the governance "
                  f"with join, read and write access control turned on, signed by the "
                  f"Permissions CA; its protection kinds unchanged)", markup=False)
    else:
        out.print("access control: enforced (the governance turns join, read and write "
                  "access control on)", markup=False)
    if result.archived is not None:
        _print_archive(result.archived, archive, keystore)
    first = min(result.enclaves)
    out.print(f"use it with: export ROS_SECURITY_KEYSTORE="
              f"{shlex.quote(str(keystore.absolute()))} ROS_SECURITY_ENABLE=true "
              f"ROS_SECURITY_STRATEGY=Enforce; then `ros2 run PKG NODE --ros-args --enclave "
              f"{shlex.quote(first)}`", markup=False)


def _print_archive(written, given: Path, keystore: Path) -> None:
    """Where the archive went, as the user named it, and its SHA-256 as sha256sum prints
    it (what to compare on the machine it is shipped to)."""
    out.print(f"wrote {one_line(given)}: the {written.files} files of {one_line(keystore)}/ "
              f"in one archive{' (0600: it holds private keys)' if written.private else ''}",
              markup=False)
    out.print(f"{written.sha256}  {one_line(written.path.name)} (in "
              f"{one_line(written.checksum.name)}: `sha256sum -c "
              f"{shlex.quote(written.checksum.name)}` beside it checks it)", markup=False)


def _policy_selection(policy: Path, protection: Path | None, ca: Path, build: Path,
                      domain: str | None, allow_unmatched: bool):
    """generate --policy --sign into `build`, then what to export: its governance and its
    enclaves."""
    from govkit.generate.bundle import BundleLog
    from govkit.generate.policy import generate_policy
    from govkit.generate.sros2 import Selection
    ros = load_ros_input(policy, protection)
    log = BundleLog()
    made = generate_policy(ros, ca, build, policy_domains(domain), True, log,
                           allow_unmatched=allow_unmatched)
    print_lines(log.messages)
    print_lines(f"wrote {one_line(path)}" for path in made.written)
    return Selection(made.governance.with_suffix(".p7s"), made.enclaves,
                     tuple(made.left_out))
