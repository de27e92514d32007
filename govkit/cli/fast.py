"""The `govkit` entry (the console script's and `python -m govkit`'s): the commands a
pre-commit hook runs, read without typer; everything else goes to the typer app (main.py).

Importing typer alone costs more than Python's own start-up, so `govkit lint FILE` and
`govkit validate FILE` through typer could not start within a few interpreter start-ups
(issue 47). Here a small reader takes the usual forms of their command lines: options from
`LINT` or `VALIDATE` as `--name value` or `--name=value`, flags, file names, `--` before
file names that start with a dash. Anything else (an unknown option, a value typer would
refuse or convert otherwise, a file typer would refuse as unreadable, no file at all, a
completion request) goes to typer unchanged, which reads it and says what is wrong in its
own words. Both ways call the same functions (lint_validate.py) and map errors to exit
codes the same way (`run_guarded`, as main.py's `Commands.invoke` and `main`), so the
output is byte for byte the same: tests/cli/test_fast_entry.py runs both over the
reference corpora.

`govkit --help`, `govkit --version` and `govkit COMMAND --help` are answered here too: the
help text is rendered by typer once and kept in the user's cache (govkit.common.cachefile:
digest-checked, a miss on anything wrong) under a key of govkit's version, a fingerprint of
its source files (size and modification time of each), the width click would wrap at and
the command's words, so an edited option's help is rendered again. The test compares the
cached text with typer's for every command.
"""

import os
import sys

from govkit import __version__

COMPLETE_PREFIX = "_GOVKIT_COMPLETE"     # main.COMPLETE_VAR: a shell asking for completions
HELP_CACHE_DIR = "cli-help"              # under user_cache_dir()
HELP_FORMAT = 1                          # bump when what is cached changes meaning
MAX_HELP_WORDS = 2                       # `govkit pki init --help`

# The options the fast reader takes, per command: the kind of value each takes (None: a
# flag). Every other option sends the command line to typer.
PATH, CHOICE, COUNT, WORDS = "path", "choice", "count", "words"
LINT = {"--ca": PATH, "--target": CHOICE, "--warn-days": COUNT, "--fail-on": CHOICE,
        "--select": WORDS, "--ignore": WORDS, "--json": None,
        "--output-format": CHOICE, "--rules": None, "--protection": PATH}
VALIDATE = {"--target": CHOICE, "--json": None}


def choices_of(option: str) -> tuple[str, ...]:
    """What typer accepts for a choice option (the same tables its Literal types list)."""
    if option == "--target":
        from govkit.catalog.targets import TARGETS
        return tuple(TARGETS)
    from govkit.check.vocabulary import OUTPUT_FORMATS, SEVERITIES
    return SEVERITIES if option == "--fail-on" else OUTPUT_FORMATS


def typer_refuses_path(value: str) -> bool:
    """True if typer's Path parameter would refuse `value` (it refuses an existing path
    this user cannot read; a missing one is the command's to report)."""
    try:
        os.stat(value)
    except (OSError, ValueError):
        return False
    return not os.access(value, os.R_OK)


def read_options(args: list[str], table: dict) -> tuple[dict, list[str]] | None:
    """(options, file names) as typer would read `args`, or None if the command line is
    anything but the usual forms (typer then reads it)."""
    from pathlib import Path

    from govkit.check.vocabulary import MAX_WARN_DAYS
    options: dict = {}
    files: list[str] = []
    i, only_files = 0, False
    while i < len(args):
        arg = args[i]
        i += 1
        if only_files or not arg.startswith("-"):
            files.append(arg)
            continue
        if arg == "--":
            only_files = True
            continue
        name, eq, value = arg.partition("=")
        if name not in table:
            return None                  # -x, --help, --unknown, a lone "-": typer's
        kind = table[name]
        if kind is None:
            if eq or name in options:
                return None
            options[name] = True
            continue
        if not eq:
            if i == len(args) or args[i].startswith("-"):
                return None
            value, i = args[i], i + 1
        if kind == WORDS:
            options.setdefault(name, []).append(value)
            continue
        if name in options:              # typer keeps the last; rare enough to leave it
            return None
        if kind == CHOICE and value not in choices_of(name):
            return None
        if kind == COUNT:
            if not (value.isascii() and value.isdigit() and len(value) <= 9
                    and int(value) <= MAX_WARN_DAYS):
                return None
            value = int(value)
        if kind == PATH:
            if typer_refuses_path(value):
                return None
            value = Path(value)
        options[name] = value
    if any(typer_refuses_path(f) for f in files):
        return None
    return options, files


def comma_split(values: list[str] | None) -> list[str] | None:
    """common.comma_list (typer's callback of --select and --ignore), without typer."""
    if values is None:
        return None
    return [x.strip() for v in values for x in v.split(",") if x.strip()]


def fast_command(argv: list[str]):
    """A function running `argv` and returning its exit code, or None for typer's path."""
    if argv in (["--version"],):
        return lambda: print(f"govkit {__version__}") or 0
    if argv and argv[-1] == "--help":
        return help_command(argv[:-1])
    if not argv or argv[0] not in ("lint", "validate"):
        return None
    from pathlib import Path
    read = read_options(argv[1:], LINT if argv[0] == "lint" else VALIDATE)
    if read is None:
        return None
    options, names = read
    files = [Path(f) for f in names]
    if argv[0] == "validate":
        if not files:
            return None                  # typer's "Missing argument"
        from govkit.cli.lint_validate import run_validate
        return lambda: run_validate(files, options.get("--target"),
                                    options.get("--json", False))
    if not files and "--rules" not in options:
        return None
    from govkit.cli.lint_validate import run_lint
    return lambda: run_lint(
        files or None, ca=options.get("--ca"), target=options.get("--target"),
        warn_days=options.get("--warn-days"), fail_on=options.get("--fail-on"),
        select=comma_split(options.get("--select")), ignore=comma_split(options.get("--ignore")),
        as_json=options.get("--json", False), output_format=options.get("--output-format"),
        list_rules=options.get("--rules", False), protection=options.get("--protection"))


def run_guarded(command) -> int:
    """Run `command` as typer and main.py run a command: a GovkitError or OSError is one
    line on stderr and its exit code (main.py's `Commands.invoke`); Ctrl-C exits 130 and a
    closed stdout 1, quietly (typer's `_main`); a govkit bug is one line (main.py's
    `main`)."""
    import errno

    from govkit.cli.output import err
    from govkit.common.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, GovkitError
    from govkit.common.findings import one_line
    try:
        try:
            return command()
        except OSError as e:
            if e.errno == errno.EPIPE:
                raise
            raise GovkitError(f"{one_line(e.filename)}: {e.strerror}" if e.filename
                              else str(e)) from None
    except GovkitError as e:
        err.print(f"govkit: {e}", markup=False)
        return e.exit_code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except OSError as e:
        if e.errno != errno.EPIPE:
            raise
        from typer._click.utils import PacifyFlushWrapper
        sys.stdout = PacifyFlushWrapper(sys.stdout)
        sys.stderr = PacifyFlushWrapper(sys.stderr)
        return 1
    except Exception as e:  # a govkit bug: one line unless asked for the traceback
        if os.environ.get("GOVKIT_DEBUG"):
            raise
        err.print(f"govkit: internal error: {type(e).__name__}: {e} (set GOVKIT_DEBUG=1 for "
                  f"the traceback, and please report it)", markup=False)
        return EXIT_INTERNAL


# --------------------------------------------------------------------------- help


def program_name() -> str:
    """The program name click shows in usage lines (click.utils._detect_program_name)."""
    main = sys.modules.get("__main__")
    if getattr(main, "__package__", None) in (None, ""):
        return os.path.basename(sys.argv[0])
    return ""        # `python -m govkit`: not cached, typer says it


def help_width() -> int:
    """The width click wraps help at: the terminal's columns (shutil.get_terminal_size's
    answer: $COLUMNS, else stdout's terminal, else 80), at most 80, less 2, at least 50."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return max(min(columns, 80) - 2, 50)


def source_fingerprint() -> str:
    """The size and modification time of every Python file of govkit, as a digest: any
    edit to the package (an option's help, a docstring) changes it."""
    from govkit.common.cachefile import digest
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    entries = []
    stack = [package]
    while stack:
        directory = stack.pop()
        with os.scandir(directory) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    if e.name != "__pycache__":
                        stack.append(e.path)
                elif e.name.endswith(".py"):
                    st = e.stat(follow_symlinks=False)
                    entries.append(f"{e.path}\0{st.st_size}\0{st.st_mtime_ns}")
    return digest("\n".join(sorted(entries)).encode("utf-8", "surrogateescape"))[:32]


def is_word(word: str) -> bool:
    return word.isascii() and word.replace("-", "").isalnum() and len(word) <= 40


def help_cache_name(words: list[str], prog: str) -> str:
    key = "\0".join([str(HELP_FORMAT), __version__, source_fingerprint(), str(help_width()),
                     prog, *words])
    from govkit.common.cachefile import digest
    return f"{HELP_CACHE_DIR}/{digest(key.encode())[:40]}.txt"


def typer_help(words: list[str], prog: str) -> str | None:
    """What `PROG WORDS --help` prints, rendered by the typer app itself as click's --help
    renders it; None if WORDS are not a command (typer then says so)."""
    from govkit.cli.main import app, lazy_command
    command = lazy_command(app)
    ctx = command.context_class(command, info_name=prog, **command.context_settings)
    for word in words:
        sub = command.get_command(ctx, word) if hasattr(command, "get_command") else None
        if sub is None:
            return None
        command = sub
        ctx = command.context_class(command, info_name=word, parent=ctx,
                                    **command.context_settings)
    return ctx.get_help() + "\n"


def help_command(words: list[str]):
    """`govkit [WORDS] --help` from the cache (made on a miss), or None for typer's path."""
    prog = program_name()
    if len(words) > MAX_HELP_WORDS or not all(map(is_word, words)) or not is_word(prog):
        return None
    from govkit.common.cachefile import read_cached, write_cached
    name = help_cache_name(words, prog)
    cached = read_cached(name)
    text = cached.decode("utf-8", "replace") if cached is not None else None
    if text is None or not text.replace("\n", "").isprintable():   # ours: printable only
        text = typer_help(words, prog)
        if text is None:
            return None
        write_cached(name, text.encode())

    def show() -> int:
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0
    return show


def main() -> None:
    if not any(k.startswith(COMPLETE_PREFIX) for k in os.environ):
        command = fast_command(sys.argv[1:])
        if command is not None:
            sys.exit(run_guarded(command))
    from govkit.cli.main import main as typer_main
    typer_main()
