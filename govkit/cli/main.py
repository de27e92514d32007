"""The `govkit` command line: parse options, call one stage function, print.

This module is the typer `app`, the list of commands, and where errors become exit codes,
once for every command (as pip's base command maps them): a `GovkitError` or `OSError` out
of any command is one line on stderr and its exit code (`Commands.invoke`, which the tests'
CliRunner passes through too); Ctrl-C and a govkit bug are `main()`'s. So a command calls
its stage as a plain call. The commands are in artefacts.py, bench.py, calibrate.py,
check.py, doctor.py, export.py, lifetime.py and pki.py, what they share in common.py. No
command module imports this one.

Exit codes: govkit.common.errors.EXIT_CODES.

No `from __future__ import annotations` here: typer would then evaluate every option's
annotation string at start-up (a few hundred evals, ~20 ms of `govkit --help`).
"""

import errno
import inspect
import os
import sys
from collections.abc import MutableMapping
from typing import Annotated

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup

from govkit import __version__
from govkit.cli import artefacts, bench, calibrate, check, doctor, export, lifetime, pki
from govkit.cli.common import err, out
from govkit.cli.examples import epilog
from govkit.common.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, GovkitError
from govkit.common.findings import one_line

# Start-up matters (`govkit --help` in well under 0.15 s): nothing heavy is imported here
# or in the command modules. Each command imports what it uses; help is plain text
# (typer's rich help would import rich and a Markdown parser); the consoles are made on
# first use.


class Commands(TyperGroup):
    """The root command: a user's error out of any command becomes one line and its code."""

    def list_commands(self, ctx):
        return list(self.commands)       # the names, without making every command

    def format_commands(self, ctx, formatter):
        if not isinstance(self.commands, LazyCommands):
            return super().format_commands(ctx, formatter)
        # TyperGroup.format_commands over the commands' stand-ins (name, help, hidden)
        shown = [(name, self.commands.preview(name)) for name in self.commands]
        shown = [(name, cmd) for name, cmd in shown if not cmd.hidden]
        if shown:
            limit = formatter.width - 6 - max(len(name) for name, _ in shown)
            with formatter.section("Commands"):
                formatter.write_dl([(name, cmd.get_short_help_str(limit))
                                    for name, cmd in shown])
        return None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except GovkitError as e:
            fail(e)
        except OSError as e:
            if e.errno == errno.EPIPE:   # stdout closed (`govkit profiles | head -1`): click's
                raise
            fail(GovkitError(f"{one_line(e.filename)}: {e.strerror}" if e.filename else str(e)))


def fail(e: GovkitError):
    """Say `e` on stderr (GovkitError.rendered: its message, details and hint) and exit
    with its code."""
    err.print(e.rendered(), markup=False)
    raise typer.Exit(e.exit_code)


app = typer.Typer(cls=Commands, add_completion=False, no_args_is_help=True,
                  pretty_exceptions_enable=False, rich_markup_mode=None, epilog=epilog(""),
                  help="DDS Security governance/permissions: generate, validate, sign, verify, "
                       "and benchmark every protection profile. ROS 2: an sros2 policy's "
                       "permissions and per-topic governance (generate --policy POLICY.xml "
                       "--protection FILE), what each protection class costs (bench --policy), "
                       "and keystores (export sros2).")
pki_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, epilog=epilog("pki"),
                      help="Test PKI (identity CA, permissions CA, participants).")
export_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, epilog=epilog("export"),
                         help="Write govkit's PKI and signed documents in another tool's "
                              "layout (sros2).")

# The order here is the order of `govkit --help` (sub-apps such as pki come last). Every
# command's --help ends with its example (examples.py).
app.command("profiles", epilog=epilog("profiles"))(artefacts.profiles)
app.command("validate", epilog=epilog("validate"))(artefacts.validate)
app.command("generate", epilog=epilog("generate"))(artefacts.generate)
app.command("sign", epilog=epilog("sign"))(artefacts.sign)
app.command("verify", epilog=epilog("verify"))(artefacts.verify)
app.command("bench", epilog=epilog("bench"))(bench.bench)
app.command("wire-check", epilog=epilog("wire-check"))(bench.wire_check)
app.command("report", epilog=epilog("report"))(bench.report)
app.command("calibrate", epilog=epilog("calibrate"))(calibrate.calibrate)
app.command("lint", epilog=epilog("lint"))(check.lint)
app.command("identify", epilog=epilog("identify"))(check.identify)
app.command("explain", epilog=epilog("explain"))(check.explain)
app.command("diff", epilog=epilog("diff"))(check.diff)
app.command("doctor", epilog=epilog("doctor"))(doctor.doctor)
app.command("lifetime-check", epilog=epilog("lifetime-check"))(lifetime.lifetime_check)
pki_app.command("init", epilog=epilog("pki init"))(pki.pki_init)
pki_app.command("revoke", epilog=epilog("pki revoke"))(pki.pki_revoke)
pki_app.command("renew", epilog=epilog("pki renew"))(pki.pki_renew)
pki_app.command("status", epilog=epilog("pki status"))(pki.pki_status)
app.add_typer(pki_app, name="pki")
export_app.command("sros2", epilog=epilog("export sros2"))(export.sros2)
app.add_typer(export_app, name="export")


COMPLETE_VAR = "_GOVKIT_COMPLETE"       # set by the completion script when the shell asks
SHELLS = ("bash", "zsh", "fish")
# What typer's completion classes read from the environment besides COMPLETE_VAR (typer
# 0.28, typer/_completion_classes.py): the bash script sets COMP_WORDS and COMP_CWORD, the
# others _TYPER_COMPLETE_*. typer indexes os.environ and int()s COMP_CWORD unchecked.
COMPLETION_VARS = ("COMP_WORDS", "COMP_CWORD", "_TYPER_COMPLETE_ARGS",
                   "_TYPER_COMPLETE_FISH_ACTION", "_TYPER_COMPLETE_WORD_TO_COMPLETE")
MAX_COMPLETION_CHARS = 1 << 16      # a command line a person completes is far shorter


def completion_problem(environ) -> str | None:
    """Why the completion request in `environ` cannot be answered (None: it can). A shell's
    own script never sends these; anything else setting the variables gets one line."""
    if environ.get(COMPLETE_VAR, "").startswith(("complete_bash", "bash_complete")):
        missing = [v for v in ("COMP_WORDS", "COMP_CWORD") if v not in environ]
        if missing:
            return f"{' and '.join(missing)} not set (bash sets them)"
        cword = environ["COMP_CWORD"]
        if not (cword.isascii() and cword.isdigit() and len(cword) <= 6):
            return f"COMP_CWORD must be a word index (0 to 999999), not {cword[:40]!r}"
    for name in (COMPLETE_VAR, *COMPLETION_VARS):
        value = environ.get(name, "")
        if len(value) > MAX_COMPLETION_CHARS:
            return f"{name} is {len(value)} characters long (at most {MAX_COMPLETION_CHARS})"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:      # non-UTF-8 bytes, decoded with surrogateescape
            return f"{name} is not UTF-8 text"
    return None


@app.command(epilog=epilog("completion"))
def completion(shell: Annotated[str, typer.Argument(
        metavar="[bash|zsh|fish]", help="The shell to print the completion script for.",
        autocompletion=lambda incomplete: [s for s in SHELLS if s.startswith(incomplete)])]):
    """Print the shell completion script (bash, zsh or fish)."""
    from typer._completion_shared import get_completion_script  # typer is pinned <0.29
    if shell not in SHELLS:
        raise GovkitError(f"completion: unknown shell {shell!r}; valid: bash, zsh, fish")
    print(get_completion_script(prog_name="govkit", complete_var=COMPLETE_VAR, shell=shell))


@app.callback(invoke_without_command=True)
def _root(version: Annotated[bool, typer.Option("--version", help="Print the version.")] = False):
    if version:
        out.print(f"govkit {__version__}")
        raise typer.Exit()


class LazyCommands(MutableMapping):
    """The root's subcommands, each made by typer (its parameters read from its function's
    signature) when first looked up: `govkit lint` makes one command, not twenty (15 ms of
    its start-up, issue 47), and `govkit --help` makes none (`preview`)."""

    def __init__(self, app: typer.Typer):
        settings = {"pretty_exceptions_short": app.pretty_exceptions_short,
                    "rich_markup_mode": app.rich_markup_mode}
        self.makers, self.previews, self.made = {}, {}, {}
        for info in app.registered_commands:
            name = info.name or typer.main.get_command_name(info.callback.__name__)
            self.makers[name] = lambda info=info: typer.main.get_command_from_info(
                info, **settings)
            self.previews[name] = lambda info=info, name=name: TyperCommand(
                name=name, short_help=info.short_help, hidden=info.hidden,
                deprecated=info.deprecated, rich_markup_mode=app.rich_markup_mode,
                help=inspect.getdoc(info.callback) if info.help is None
                else inspect.cleandoc(info.help))
        for group in app.registered_groups:
            solved = typer.main.solve_typer_info_defaults(group)
            self.makers[solved.name] = lambda group=group: typer.main.get_group_from_info(
                group, suggest_commands=app.suggest_commands, **settings)
            self.previews[solved.name] = lambda solved=solved: TyperGroup(
                name=solved.name, help=solved.help, short_help=solved.short_help,
                hidden=solved.hidden, deprecated=solved.deprecated,
                rich_markup_mode=app.rich_markup_mode)

    def preview(self, name: str):
        """What `govkit --help` reads of a command (name, help, hidden), made cheaply."""
        return self.made[name] if name in self.made else self.previews[name]()

    def __getitem__(self, name):
        if name not in self.made:
            self.made[name] = self.makers[name]()
        return self.made[name]

    def __setitem__(self, name, command):
        self.makers[name] = self.previews[name] = lambda: command
        self.made[name] = command

    def __delitem__(self, name):
        del self.makers[name]
        self.previews.pop(name, None)
        self.made.pop(name, None)

    def __iter__(self):
        return iter(self.makers)

    def __len__(self):
        return len(self.makers)


def lazy_command(app: typer.Typer) -> Commands:
    """`app` as typer.main.get_command makes it, but with LazyCommands for its commands
    (tests/cli/test_lazy_commands.py: every --help and command list the same)."""
    commands, groups = app.registered_commands, app.registered_groups
    app.registered_commands, app.registered_groups = [], []
    try:
        root = typer.main.get_command(app)
    finally:
        app.registered_commands, app.registered_groups = commands, groups
    root.commands = LazyCommands(app)
    return root


def main() -> None:
    if COMPLETE_VAR in os.environ:      # the shell asks for completions: typer's classes
        problem = completion_problem(os.environ)
        if problem:
            err.print(f"govkit: completion: {problem}", markup=False)
            sys.exit(EXIT_USAGE)
        from typer.completion import completion_init
        completion_init()
    try:
        lazy_command(app)()
    except KeyboardInterrupt:
        err.print("govkit: interrupted")
        sys.exit(EXIT_INTERRUPTED)
    except Exception as e:  # a govkit bug: one line unless asked for the traceback
        if os.environ.get("GOVKIT_DEBUG"):
            raise
        err.print(f"govkit: internal error: {type(e).__name__}: {e} (set GOVKIT_DEBUG=1 for "
                  f"the traceback, and please report it)", markup=False)
        sys.exit(EXIT_INTERNAL)
