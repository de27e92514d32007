"""What the command modules share: the consoles, the option types more than one module
uses, and the printing helpers (a stage's errors become one line and an exit code once, in
main.py).

No `from __future__ import annotations` here: typer would then evaluate every option's
annotation string at start-up (a few hundred evals, ~20 ms of `govkit --help`).
"""

import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from govkit.catalog.profiles import PROFILES
from govkit.catalog.runners import RUNNERS
from govkit.catalog.targets import DEFAULT_TARGET, PORTABLE_TARGET, TARGETS
from govkit.cli.output import (  # noqa: F401 (the command modules import them from here)
    VERBATIM,
    err,
    json_document,
    json_text,
    out,
    print_lines,
    shown,
)
from govkit.common.errors import GovkitError
from govkit.common.findings import one_line
from govkit.common.limits import MAX_JOBS

# Start-up matters (`govkit --help` in well under 0.15 s): nothing heavy is imported here.
# The consoles and the printing helpers are in output.py, which imports no typer (the fast
# entry, fast.py, prints through them too).


class _TableConsole:
    """Prints tables on stdout. In a terminal, at the terminal's width. Written to a file
    or a pipe (`govkit profiles | cat`), rich would fold every table at 80 columns (or
    $COLUMNS), breaking names and paths mid-word or cutting them with an ellipsis: there
    each table gets the width its widest row needs, so a cell is never folded or cut."""

    def print(self, table) -> None:
        console = out.get()
        table = shown(table)
        if console.is_terminal:
            console.print(table)
            return
        from rich.console import Console
        from rich.measure import Measurement
        unbounded = Console(width=1_000_000, **VERBATIM)
        width = Measurement.get(unbounded, unbounded.options, table).maximum
        Console(width=max(width, 20), file=sys.stdout, **VERBATIM).print(table)


wide = _TableConsole()


# What `pip install govkit` leaves out and `pip install 'govkit[bench]'` adds (pyproject.toml's
# optional dependencies): the statistics and the plots of bench and report. lint, validate,
# sign, verify, generate, the PKI and export run without them.
BENCH_EXTRA = {"numpy": "the statistics", "matplotlib": "the report's plots"}


def require_bench_extra(command: str, modules=tuple(BENCH_EXTRA)) -> None:
    """One line and exit 2, before any work, when `command` needs what the `bench` extra
    installs and it is missing (it was exit 3, a ModuleNotFoundError, after the work)."""
    import importlib.util
    missing = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(f"{name} ({BENCH_EXTRA[name]})")
    if missing:
        raise GovkitError(f"{command} needs {' and '.join(missing)}, which a lint-only "
                          f"install leaves out: pip install 'govkit[bench]'")


def comma_list(values: list[str] | None) -> list[str] | None:
    """A list option's values, each split at commas: `--profile none,rtps_sign` and
    `--profile none --profile rtps_sign` give the same list (every list option of names or
    values takes both; lists of paths only repetition, as a file name may hold a comma)."""
    if values is None:
        return None
    return [x.strip() for v in values for x in v.split(",") if x.strip()]


def choices(names) -> str:
    """An option's choices as its metavar: [a|b|c], in the order of their table."""
    return f"[{'|'.join(names)}]"


def example(*lines: str) -> str:
    """A command's example for the end of its --help (click keeps a paragraph that starts
    with \\b as it is); docs/reference/cli.md shows it too."""
    return "\b\nExample:\n" + "\n".join(f"  {line}" for line in lines)


# Options of commands in more than one module (an option one module uses is defined there).
# Choices are listed from their tables (the catalog), never by hand.
RunnerName = Literal[tuple(RUNNERS)]
RUNNER_METAVAR = choices(RUNNERS)
TargetName = Literal[tuple(TARGETS)]
_CONFIGURED_TARGET = ", or the target of [tool.govkit.lint] / govkit.toml [lint]"
TARGET_HELP = (
    f"Whose reading to check: {PORTABLE_TARGET} (the specification, warning about each "
    f"implementation that differs) or one implementation: " + ", ".join(
        f"{t.name} ({t.title})" for t in TARGETS.values() if t.name != PORTABLE_TARGET) +
    f". Default: {DEFAULT_TARGET}{_CONFIGURED_TARGET}.")
def complete_profiles(incomplete: str) -> list[str]:
    """What the shell completes --profile with: the catalog's names and seed aliases, for
    the name after the last comma (`none,rt<TAB>`). A profiles file's own names are not
    offered: reading it on every TAB is not worth its cost."""
    head, comma, last = incomplete.rpartition(",")
    names = [p.name for p in PROFILES] + [a for p in PROFILES for a in p.aliases]
    return [f"{head}{comma}{n}" for n in names if n.startswith(last)]


ProfileOpt = Annotated[list[str] | None, typer.Option(
    "--profile", "-p", callback=comma_list, autocompletion=complete_profiles,
    help="Profile name or seed alias, repeatable or comma-separated: "
         f"{', '.join(p.name for p in PROFILES)}, or your own (--profiles); "
         "`govkit profiles` lists them with their aliases.")]
AllOpt = Annotated[bool, typer.Option("--all-profiles", help="Every catalog profile.")]
ProfilesOpt = Annotated[Path | None, typer.Option(
    "--profiles", help="Your own profiles: a TOML file of [[profile]] tables with the catalog's "
                       "fields (default: those of ./govkit.toml, if any); see "
                       "docs/guide/profiles.md.")]
CaOpt = Annotated[Path, typer.Option(
    "--ca", help="Test PKI directory (a test PKI is created there if it has none, and "
                 "govkit says so).")]
TargetOpt = Annotated[TargetName | None, typer.Option(
    "--target", metavar=choices(TARGETS), show_default=False, help=TARGET_HELP)]


# The participants of generate and pki init, and their worker processes.
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


def use_profiles_file(path: Path | None):
    """Read a profiles file (or ./govkit.toml) and make its profiles known to every command
    of this process, as catalog names are (a bad field: its lines, exit 2)."""
    from govkit.catalog.profiles import use_profiles
    from govkit.catalog.profiles_file import read_profiles
    profiles = read_profiles(path)
    use_profiles(profiles)
    return profiles


SAME_ERROR_SHOWN = 3   # per distinct reason; then one line counts the rest


def print_errors(errors, prefix_usage: bool = True) -> None:
    """One line per error, but a reason shared by many files (a full disk, a read-only
    output directory) is shown for the first SAME_ERROR_SHOWN and then counted once."""
    from collections import Counter

    from govkit.common.errors import EXIT_USAGE
    seen: Counter = Counter()
    for e in errors:
        text = str(e)
        reason = text.split(": ", 1)[-1]
        seen[reason] += 1
        if seen[reason] <= SAME_ERROR_SHOWN:
            usage = prefix_usage or getattr(e, "exit_code", EXIT_USAGE) == EXIT_USAGE
            err.print(f"govkit: {text}" if usage else text)
    for reason, n in seen.items():
        if n > SAME_ERROR_SHOWN:
            err.print(f"govkit: … and {n - SAME_ERROR_SHOWN} more with the same error: {reason}")


def json_option(command: str, where: str = "") -> Any:
    """`--json` of `govkit COMMAND`: its wrapper and JSON Schema named in its help, not
    "COMMAND" (one definition for every command that has one)."""
    return Annotated[bool, typer.Option(
        "--json", help=f"JSON, as {{\"schema\": \"govkit.{command}/1\", ...}} ({where}its JSON "
                       f"Schema: govkit/schemas/json/{command}.schema.json).")]


# ROS 2 input, for generate, export sros2, bench, explain and lint: --policy and
# --protection, the rule that pairs them with a command's other options, and the loader (a
# policy that does not check is PolicyInvalid: one FILE:LINE:COLUMN line per problem,
# rendered by the root).
POLICY_HELP = "An sros2 policy (format 0.2.0, XIncludes read): "
PolicyOpt = Annotated[Path | None, typer.Option(
    "--policy", help=POLICY_HELP + "one identity and permissions per enclave, decided as "
                                   "sros2's, and one governance; see "
                                   "docs/guide/ros2-protection.md.")]
BenchPolicyOpt = Annotated[Path | None, typer.Option(
    "--policy", help=POLICY_HELP + "one point per protection class of its protection "
                                   "(--protection, else the <protection> in its metadata, else "
                                   "all encrypted), each on topics its class's first rule "
                                   "covers, under the governance `generate --policy` writes, "
                                   "paired against `none` (runners cyclone and fastdds).")]
ExplainPolicyOpt = Annotated[Path | None, typer.Option(
    "--policy", help="Explain an sros2 policy instead: per ROS name, its DDS names, the "
                     "governance rule and kinds each gets, and which enclaves may publish "
                     "and subscribe it.")]
LintProtectionOpt = Annotated[Path | None, typer.Option(
    "--protection", help="The protection sidecar of the sros2 policies linted (default: the "
                         "<protection> in each policy's <metadata>).")]
ProtectionOpt = Annotated[Path | None, typer.Option(
    "--protection", help="With --policy: the policy's protection sidecar "
                         "(schemas/protection.xsd): which topics, services and actions are "
                         "signed or encrypted (default: a <protection> in the policy's "
                         "<metadata>, else all encrypted, as sros2's governance).")]
AllowUnmatchedOpt = Annotated[bool, typer.Option(
    "--allow-unmatched", help="Write the documents even if a --protection rule names a "
                              "topic or service no enclave is granted (lint's GK402; most "
                              "often a misspelt name, whose real topic then gets the "
                              "default protection).")]


def given(options: dict[str, Any]) -> list[str]:
    """The names of the options in `options` (name → value) that were given: not None,
    False or empty."""
    return [name for name, value in options.items() if value is not None and value is not False
            and value != [] and value != ()]


def uses_policy(policy: Path | None, protection: Path | None, leave_out: dict[str, Any],
                what_policy_does: str) -> bool:
    """Whether the command runs on an sros2 policy. The rule that pairs the options:
    --protection needs --policy, and --policy takes none of `leave_out` (name → value)
    (GovkitError, exit 2)."""
    if policy is None and protection is None:
        return False
    if policy is None:
        raise GovkitError("--protection needs --policy")
    named = given(leave_out)
    if named:
        raise GovkitError(f"--policy {what_policy_does}: leave out {', '.join(named)}")
    return True


def refuse_without_policy(policy: Path | None, options: dict[str, Any], why: str = "") -> None:
    """The options (name → value) only --policy takes: the first given without it is a
    usage error, `why` said after it."""
    named = given(options)
    if policy is None and named:
        raise GovkitError(f"{named[0]} is for --policy{why}")


def load_ros_input(policy: Path, protection: Path | None):
    """The checked policy and its protection (govkit.check.ros_policy.RosInput)."""
    from govkit.check.ros_policy import load_policy
    return load_policy(policy, protection)


def policy_domains(domain: str | None):
    """--domain, or for a policy what sros2 writes: $ROS_DOMAIN_ID, else 0."""
    import os

    from govkit.documents.render import DomainSet
    text = domain if domain is not None else os.environ.get("ROS_DOMAIN_ID", "").strip() or "0"
    return DomainSet.parse(text)


def chosen_participants(file: Path | None, count: int | None, prefix: str, names: list[str]):
    """The participants named on the command line, in a file and numbered, in that order
    (None if none); a name given twice is a usage error."""
    from govkit.pki.participants import merge_participants
    return merge_participants(names, file, count, prefix) or None


def warn_stale(pki, names=None) -> None:
    """One warning per participant left from an earlier Identity CA: the first few named,
    the rest counted (a `pki init --force` killed half-way leaves thousands)."""
    names = pki.stale_participants() if names is None else names
    fix = f"reissue with `govkit pki init {one_line(pki.directory)} --force`"
    for name in names[:SAME_ERROR_SHOWN]:
        err.print(f"govkit: warning: {one_line(pki.path(name))} was not issued by the current "
                  f"Identity CA (left from an earlier PKI); no permissions are written for it "
                  f"({fix})", markup=False)
    if len(names) > SAME_ERROR_SHOWN:
        err.print(f"govkit: warning: … and {len(names) - SAME_ERROR_SHOWN} more participant(s) "
                  f"of an earlier Identity CA ({fix})", markup=False)
