"""`govkit export ...`: hand govkit's files over in another tool's layout (main.py registers
the commands under `export`). Today: `export sros2`, a ROS 2 keystore.

No `from __future__ import annotations` here: typer would then evaluate every option's
annotation string at start-up (a few hundred evals, ~20 ms of `govkit --help`).
"""

from pathlib import Path
from typing import Annotated

import typer

from govkit.catalog.profiles import SECURED_PROFILES
from govkit.cli.common import err, out, print_lines

# Start-up: nothing heavy at module level; the command imports what it uses.


def sros2(keystore: Annotated[Path, typer.Argument(help="The keystore directory to write "
                                                          "(ROS_SECURITY_KEYSTORE).")],
          ca: Annotated[Path, typer.Option(
              "--ca", help="Test PKI directory (identities, both CAs); never created here.")
          ] = Path("pki"),
          build: Annotated[Path, typer.Option(
              "--build", help="Where `govkit generate`/`sign` wrote the signed documents.")
          ] = Path("build"),
          profile: Annotated[str | None, typer.Option(
              "--profile", "-p", help="The profile whose signed governance every enclave "
                                      "gets (needed when build/ holds several): "
                                      f"{', '.join(p.name for p in SECURED_PROFILES)}, or "
                                      "your own.")] = None,
          force: Annotated[bool, typer.Option(
              "--force", help="Replace an existing keystore as a whole (never one holding "
                              "a private key this export would not write again).")] = False,
          ca_keys: Annotated[bool, typer.Option(
              "--ca-keys/--no-ca-keys", help="Copy the CA keys into private/ (0600); "
                                             "--no-ca-keys for a keystore to deploy.")] = True):
    """Write an sros2 keystore (public/, private/, enclaves/<enclave>/) for ROS 2's rmw."""
    from govkit.generate.sros2 import export_sros2
    result = export_sros2(keystore, ca, build, profile, force, ca_keys)
    print_lines(f"{'replaced' if result.replaced else 'wrote'} {keystore}/enclaves{enclave}/ "
                f"(from {ca}/{stem}.pem)" for enclave, stem in sorted(result.enclaves.items()))
    for name, why in result.left_out:
        err.print(f"govkit: note: {name} left out: {why}")
    first = min(result.enclaves)
    out.print(f"use it with: export ROS_SECURITY_KEYSTORE={keystore.absolute()} "
              f"ROS_SECURITY_ENABLE=true ROS_SECURITY_STRATEGY=Enforce; then "
              f"`ros2 run PKG NODE --ros-args --enclave {first}`")
