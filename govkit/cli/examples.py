"""One example per command, shown at the end of its --help and in docs/reference/cli.md.

Made from the tables they name (profile, runner and target names from the catalog; the
paths `govkit generate` writes), and parsed by the tests with the command's own options, so
an example cannot name an option or a choice that does not exist; those that need no
benchmark run are run, in order, in a fresh directory.
"""

from govkit.catalog.profiles import BASELINE, SECURED_PROFILES
from govkit.catalog.runners import RUNNERS
from govkit.catalog.targets import VENDOR_TARGETS
from govkit.cli.common import example
from govkit.common.limits import KEY_TYPES

SIGNED, ENCRYPTED = SECURED_PROFILES[1].name, SECURED_PROFILES[2].name   # rtps_sign, rtps_encrypt
VENDOR = VENDOR_TARGETS[0].name                                          # cyclone
GOVERNANCE = f"build/governance/{SIGNED}.xml"      # what `govkit generate` writes
PERMISSIONS = "build/permissions/pub.xml"           # pki init's default participants: pub, sub

# command path (as typed after `govkit`) -> the example's command lines
EXAMPLES: dict[str, tuple[str, ...]] = {
    "profiles": ("govkit profiles --json",),
    "validate": (f"govkit validate --target {VENDOR} {GOVERNANCE} {PERMISSIONS}",),
    "generate": (f"govkit generate --profile {BASELINE},{SIGNED},{ENCRYPTED} --sign",),
    "sign": (f"govkit sign --target {VENDOR} build",),
    "verify": (f"govkit verify --ca pki build/governance/{SIGNED}.p7s",),
    "bench": (f"govkit bench --profile {BASELINE},{SIGNED},{ENCRYPTED} "
              f"--runner {next(iter(RUNNERS))} --budget 5m",),
    "wire-check": (f"govkit wire-check --profile {ENCRYPTED} --pcap captures",),
    "report": ("govkit report results/run-a results/run-b --out comparison",),
    "calibrate": ("govkit calibrate --runs 4 --run-budget 40",),
    "lint": (f"govkit lint --target {VENDOR} --output-format concise {GOVERNANCE}",),
    "identify": (f"govkit identify {GOVERNANCE}",),
    "explain": (f"govkit explain {PERMISSIONS}",),
    "diff": (f"govkit diff {GOVERNANCE} build/governance/{ENCRYPTED}.xml",),
    "doctor": ("govkit doctor --json",),
    "lifetime-check": ("govkit lifetime-check --runtime cyclone,fastdds --json",),
    "completion": ("govkit completion bash > ~/.local/share/bash-completion/completions/govkit",),
    "pki init": (f"govkit pki init pki --participant pub,sub --key-type {KEY_TYPES[0]}",),
    "pki revoke": ("govkit pki revoke sub --reason keyCompromise",),
    "pki renew": ("govkit pki renew pub --days 90",),
    "pki status": ("govkit pki status pki --documents build --warn-days 14",),
    "export sros2": (f"govkit export sros2 keystore --profile {SIGNED} --no-ca-keys "
                     f"--archive keystore.tar.gz",),
}

# group (as typed after `govkit`; "" for govkit itself) -> its commands' examples, in the
# order they are used: the groups' --help ends with them too
GROUP_EXAMPLES: dict[str, tuple[str, ...]] = {
    "": (*EXAMPLES["pki init"], *EXAMPLES["generate"], *EXAMPLES["verify"],
         "govkit bench --all-profiles"),
    "pki": (*EXAMPLES["pki init"], *EXAMPLES["pki status"], *EXAMPLES["pki renew"]),
    "export": EXAMPLES["export sros2"],
}


def epilog(command: str) -> str:
    """The end of `govkit COMMAND --help` (or a group's): its example."""
    return example(*(EXAMPLES.get(command) or GROUP_EXAMPLES[command]))
