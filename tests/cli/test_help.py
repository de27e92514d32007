"""Every command's --help, walked through click's own view of the typer app (issue 23, CLI
and CI conventions 1): no option without help text, every option that takes a name from a
table lists the table's names (in the table's order, the same everywhere), every command
ends with an example that parses with its own options, and every list option takes commas
and repetition alike."""

from __future__ import annotations

import re
import shlex

import pytest
import typer
from typer.testing import CliRunner

from govkit.bench.lifetime_events import EVENTS as LIFETIME_EVENTS
from govkit.bench.lifetime_events import RUNTIMES as LIFETIME_RUNTIMES
from govkit.catalog.measures import CIPHERS, PATHS, TRANSPORTS
from govkit.catalog.profiles import PROFILES, SECURED_PROFILES
from govkit.catalog.runners import RUNNERS
from govkit.catalog.targets import DEFAULT_TARGET, TARGETS
from govkit.check.vocabulary import SEVERITIES
from govkit.cli.examples import EXAMPLES, GROUP_EXAMPLES
from govkit.cli.main import app
from govkit.common.limits import KEY_TYPES
from govkit.pki.vocabulary import HSM_KINDS, REASON_NAMES
from govkit.results.flags import ANY_WARNING, FLAGS

# Options whose value is a name from a table, and the table (in its order). An option of
# that name must list every one in its --help, in that order.
NAMED = {
    "--profile": [p.name for p in SECURED_PROFILES],   # every --profile; the catalog's below
    "--expect": [p.name for p in SECURED_PROFILES],
    "--runner": list(RUNNERS),
    "--target": list(TARGETS),
    "--transport": list(TRANSPORTS),
    "--net": list(PATHS),
    "--key-type": list(KEY_TYPES),
    "--hsm": list(HSM_KINDS),
    "--reason": list(REASON_NAMES),
    "--fail-on": list(SEVERITIES),
    "SHELL": ["bash", "zsh", "fish"],
    "--cipher": list(CIPHERS),
    # `any`, then every flag code of the table parse_fail_on_flags reads
    "--fail-on-flag": [ANY_WARNING, *FLAGS],
    "--runtime": list(LIFETIME_RUNTIMES),       # lifetime-check
    "--event": list(LIFETIME_EVENTS),
}
# Text options whose value is not a name from a table, each with why.
FREE = {
    "--domain": "a domain id or range",
    "--prefix": "any name prefix",
    "--valid-from": "a date",
    "--participant": "participant names",
    "--select": "rule ids, id prefixes and names, an open set: `lint --rules` lists them",
    "--ignore": "as --select",
    "--sizes": "numbers, or 'seeds'",
    "--cost-at": "message sizes in bytes",
    "--readers": "reader counts (1 to 64)",
    "--budget": "a duration",
    "--perftest": "a path to a program",
    "--loss-rate": "percentages",
    "--hosts": "USER@HOST pairs",
    "--peer-address": "IP addresses",
    "--max-ratio": "PROFILE=X",
    "--rekey": "protected messages per session key",
    "--rerun-kappa": "MODE=PCT: a mode and a percentage",
    "--rerun-floor": "MODE=PCT: a mode and a percentage",
    "NAME": "a participant's name",
    "NAMES": "participants' names",
}


def _walk(command, path=("govkit",), parent=None):
    """(path, command, context) for every command that runs (not the groups)."""
    ctx = command.context_class(command, info_name=path[-1], parent=parent)
    if hasattr(command, "list_commands"):
        for name in command.list_commands(ctx):
            yield from _walk(command.get_command(ctx, name), (*path, name), ctx)
    else:
        yield path, command, ctx


ROOT = typer.main.get_command(app)
COMMANDS = list(_walk(ROOT))
IDS = [" ".join(p[1:]) for p, _, _ in COMMANDS]


def _params(command):
    return [p for p in command.params if p.name != "help"]


def _name(param) -> str:
    return param.opts[0] if param.param_type_name == "option" else param.name.upper()


def _help_text(param, ctx) -> str:
    """What --help shows for `param`: its names and metavar, and its help."""
    record = param.get_help_record(ctx)
    return " ".join(record) if record else ""


def _in_order(text: str, names: list[str]) -> bool:
    at = -1
    for name in names:
        found = [m.start() for m in re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)]
        after = [i for i in found if i > at]
        if not after:
            return False
        at = after[0]
    return True


def test_the_walk_sees_every_command():
    assert len(COMMANDS) == len(EXAMPLES) == 21
    assert set(IDS) == set(EXAMPLES)


@pytest.mark.parametrize(("path", "command", "ctx"), COMMANDS, ids=IDS)
def test_every_option_and_argument_has_help_text(path, command, ctx):
    missing = [_name(p) for p in _params(command) if not (getattr(p, "help", "") or "").strip()]
    assert missing == [], f"{' '.join(path)}: no help text for {missing}"
    assert (command.help or "").strip(), f"{' '.join(path)} has no description"


@pytest.mark.parametrize(("path", "command", "ctx"), COMMANDS, ids=IDS)
def test_every_enumerated_option_lists_its_choices_in_order(path, command, ctx):
    for p in _params(command):
        name, text = _name(p), _help_text(p, ctx)
        choices = getattr(p.type, "choices", None)
        if choices is not None:                          # click validates these itself
            assert _in_order(text, list(choices)), (path, name, text)
        if name in NAMED:
            assert _in_order(text, NAMED[name]), (path, name, text)
        elif choices is None and p.type.name in ("str", "text") and \
                not getattr(p, "is_flag", False):   # (typer's click calls STRING "str")
            assert name in FREE, f"{' '.join(path)} {name}: a text option that is neither " \
                                 "a name from a table (NAMED) nor a free value (FREE)"


def test_the_same_choices_in_the_same_order_everywhere():
    seen: dict[str, set] = {}
    for _, command, ctx in COMMANDS:
        for p in _params(command):
            if _name(p) in ("--runner", "--target", "--fail-on", "--mode", "--key-type"):
                seen.setdefault(_name(p), set()).add(
                    (tuple(getattr(p.type, "choices", ())), p.make_metavar(ctx)))
    # bench's --runner also takes a version axis (NAME@PREFIX,NAME@PREFIX): its names are
    # checked by govkit.runners.dds_prefix.select_runtimes, not by click's choices, under
    # the same metavar
    metavar = f"[{'|'.join(RUNNERS)}]"
    assert seen["--runner"] - {((), metavar)} == {(tuple(RUNNERS), metavar)}
    assert seen["--target"] == {(tuple(TARGETS), f"[{'|'.join(TARGETS)}]")}
    # --profile names the whole catalog, from the catalog, wherever it takes a list
    for path, command, ctx in COMMANDS:
        for p in _params(command):
            if _name(p) == "--profile" and p.multiple:
                assert _in_order(_help_text(p, ctx), [x.name for x in PROFILES]), path


def test_the_default_target_is_stated_where_it_is_taken():
    for path, command, ctx in COMMANDS:
        for p in _params(command):
            if _name(p) == "--target":
                assert f"Default: {DEFAULT_TARGET}, or the target of [tool.govkit.lint]" in \
                    _help_text(p, ctx), path
    targeted = {" ".join(path[1:]) for path, command, _ in COMMANDS
                if any(_name(p) == "--target" for p in command.params)}
    assert {"lint", "validate", "sign", "verify"} <= targeted


@pytest.mark.parametrize(("path", "command", "ctx"), COMMANDS, ids=IDS)
def test_every_command_ends_its_help_with_an_example_that_parses(path, command, ctx, tmp_path,
                                                                 monkeypatch):
    monkeypatch.chdir(tmp_path)    # nothing runs, but a callback may look at the directory
    assert (command.epilog or "").startswith("\b\nExample:\n"), path
    shown = CliRunner().invoke(app, [*path[1:], "--help"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0
    lines = EXAMPLES[" ".join(path[1:])]
    for line in lines:
        assert f"  {line}" in shown.stdout, (path, shown.stdout[-400:])
        words = shlex.split(line)
        words = words[:words.index(">")] if ">" in words else words
        assert words[:len(path)] == list(path), line
        # the command's own parser: unknown options, bad choices, out-of-range numbers fail
        parsed = command.make_context(path[-1], words[len(path):], parent=ctx.parent)
        assert parsed.params


def _groups(command, path=("govkit",), parent=None):
    """(path, group, context) for govkit and each of its groups (pki, export)."""
    ctx = command.context_class(command, info_name=path[-1], parent=parent)
    if hasattr(command, "list_commands"):
        yield path, command, ctx
        for name in command.list_commands(ctx):
            yield from _groups(command.get_command(ctx, name), (*path, name), ctx)


GROUPS = list(_groups(ROOT))


@pytest.mark.parametrize(("path", "group", "ctx"), GROUPS,
                         ids=[" ".join(p[1:]) or "govkit" for p, _, _ in GROUPS])
def test_every_group_ends_its_help_with_examples_of_its_commands(path, group, ctx):
    """`govkit --help`, `govkit pki --help`: the commands in the order they are used, each
    line parsed by the command it names."""
    assert len(GROUPS) == len(GROUP_EXAMPLES) == 3
    shown = CliRunner().invoke(app, [*path[1:], "--help"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0
    lines = GROUP_EXAMPLES[" ".join(path[1:])]
    assert shown.stdout.rstrip().endswith("Example:\n" + "\n".join(f"    {x}" for x in lines))
    by_path = {p: (c, x) for p, c, x in COMMANDS}
    for line in lines:
        words = shlex.split(line)
        assert words[:len(path)] == list(path), line
        command_path = next(p for p in by_path if tuple(words[:len(p)]) == p)
        command, command_ctx = by_path[command_path]
        parsed = command.make_context(command_path[-1], words[len(command_path):],
                                      parent=command_ctx.parent)
        assert parsed.params


def _list_options():
    for path, command, ctx in COMMANDS:
        for p in _params(command):
            if p.param_type_name == "option" and p.multiple:
                yield path, command, ctx, p


LIST_OPTIONS = list(_list_options())


def test_the_list_options_are_the_expected_ones():
    names = {(" ".join(path[1:]), _name(p)) for path, _, _, p in LIST_OPTIONS}
    assert {("generate", "--profile"), ("bench", "--profile"), ("bench", "--sizes"),
            ("bench", "--transport"), ("pki init", "--participant"),
            ("lint", "--select")} <= names


@pytest.mark.parametrize(("path", "command", "ctx", "param"), LIST_OPTIONS,
                         ids=[f"{' '.join(p[1:])} {_name(o)}" for p, _, _, o in LIST_OPTIONS])
def test_every_list_option_takes_commas_and_repetition_alike(path, command, ctx, param,
                                                            tmp_path, monkeypatch):
    """`--profile none,rtps_sign` and `--profile none --profile rtps_sign` give the same
    values; lists of paths take repetition only (a file name may hold a comma)."""
    monkeypatch.chdir(tmp_path)
    required = [a for a in command.params if a.param_type_name == "argument" and a.required]
    arguments = ["x"] * sum(max(a.nargs, 1) for a in required)
    opt = param.opts[0]
    if param.type.name == "path":
        said = (param.help or "").replace("not comma-separated", "")
        assert "repeatable" in said and not re.search("comma-separated|comma list", said), \
            (path, opt, "a list of paths says it is repeatable, and not that it takes commas")
        return
    a, b = (NAMED.get(opt) or ["1", "2"])[:2] if opt != "--sizes" else ["32", "1024"]

    def parse(*words):
        return command.make_context(path[-1], [*words, *arguments],
                                    parent=ctx.parent).params[param.name]
    together, repeated = parse(opt, f"{a},{b}"), parse(opt, a, opt, b)
    assert together == repeated == [a, b], (path, opt, together, repeated)
    assert "comma" in (param.help or ""), (path, opt, "its help says it takes commas")


def test_fail_on_flag_help_names_every_flag_code_and_its_severity():
    """The codes come from the flag table, so a new flag is listed without touching the
    command line; each is one parse_fail_on_flags accepts, notes marked as such."""
    from govkit.results.gates import parse_fail_on_flags
    bench = next(command for path, command, _ in COMMANDS if path == ("govkit", "bench"))
    (param,) = [p for p in bench.params if p.opts == ["--fail-on-flag"]]
    shown = CliRunner().invoke(app, ["bench", "--help"], env={"COLUMNS": "1000"}).stdout
    said = " ".join(shown.split())
    for f in FLAGS.values():
        assert re.search(rf"(?<![\w-]){f.code}(?![\w-])", param.help), f.code
        assert f.code in said, f.code   # as --help prints it, not only the parameter
        assert parse_fail_on_flags([f.code]) == {f.code}
        assert (f"{f.code} (note)" in param.help) == (f.severity == "note"), f.code
    assert f"{ANY_WARNING} (every warning)" in param.help


def test_help_texts_that_name_a_table_list_it():
    """Where an option's help names its choices in prose, the prose is the table's."""
    bench = next(command for path, command, _ in COMMANDS if path == ("govkit", "bench"))
    help_of = {p.name: p.help for p in bench.params}
    assert "udp, tcp or tls" in help_of["transport"] and TRANSPORTS == ("udp", "tcp", "tls")
    assert "lo (loopback), netns (" in help_of["net"] and PATHS == ("lo", "netns", "hosts")


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_comma_and_repeated_profiles_write_the_same_files(cwd):
    """The end-to-end form of the above: the same documents either way."""
    runner = CliRunner()
    a = runner.invoke(app, ["generate", "--profile", "none,rtps_sign", "--out", "a"])
    b = runner.invoke(app, ["generate", "--profile", "none", "--profile", "rtps_sign",
                            "--out", "b"])
    assert a.exit_code == b.exit_code == 0, a.output + b.output
    files = lambda d: sorted(p.relative_to(d) for p in d.rglob("*.xml"))  # noqa: E731
    assert files(cwd / "a") == files(cwd / "b") and files(cwd / "a")
    documents = [str(cwd / "a" / f) for f in files(cwd / "a")]
    lints = [runner.invoke(app, ["lint", *sel, "--output-format", "concise", *documents])
             for sel in (["--select", "GK010,GK2"], ["--select", "GK010", "--select", "GK2"])]
    assert lints[0].stdout == lints[1].stdout and lints[0].exit_code == lints[1].exit_code


# The examples run in this order in one directory; the rest need a benchmark run (bench,
# wire-check, report, lifetime-check: real pairs, tests/integration/test_lifetime.py) or
# write outside it (completion). diff finds a difference: exit 1.
RUN_IN_ORDER = ("pki init", "generate", "validate", "sign", "verify", "lint", "identify",
                "explain", "diff", "profiles", "pki status", "pki renew", "pki revoke",
                "export sros2", "doctor")


def test_the_examples_run(cwd):
    """Each example does what it shows, on what the examples before it made."""
    assert set(RUN_IN_ORDER) | {"bench", "wire-check", "report", "calibrate", "completion",
                                "lifetime-check"} == set(EXAMPLES)
    runner = CliRunner()
    for command in RUN_IN_ORDER:
        for line in EXAMPLES[command]:
            done = runner.invoke(app, shlex.split(line)[1:])
            assert done.exception is None or isinstance(done.exception, SystemExit), line
            # doctor: 1 where an installed runtime has an advisory (Debian 12's Fast DDS)
            expected = {"diff": {1}, "doctor": {0, 1}}.get(command, {0})
            assert done.exit_code in expected, (line, done.output)


@pytest.mark.parametrize(("path", "command", "ctx"), COMMANDS, ids=IDS)
def test_json_help_names_the_commands_own_wrapper_and_schema(path, command, ctx):
    """`--json` said `govkit.COMMAND/1` and `COMMAND.schema.json` literally: it names the
    command's own wrapper and a JSON Schema file that exists (issue-31's check)."""
    from govkit.common.paths import SCHEMAS_DIR
    option = next((p for p in command.params if "--json" in getattr(p, "opts", ())), None)
    if option is None:
        return
    text = option.help or ""
    assert "COMMAND" not in text, (path, text)
    schema = re.search(r"govkit/schemas/json/([\w-]+)\.schema\.json", text)
    if schema is None:          # bench-like commands document theirs elsewhere
        assert "govkit." in text, (path, text)
        return
    assert (SCHEMAS_DIR / "json" / f"{schema[1]}.schema.json").is_file(), (path, text)
    assert f'"govkit.{schema[1]}/1"' in text, (path, text)


def test_the_root_help_names_the_ros2_entry_points():
    """A ROS 2 user reading `govkit --help` learns that govkit takes sros2 policies and
    writes keystores (issue 46 item 10: the root help never said so)."""
    out = CliRunner().invoke(app, ["--help"], terminal_width=200).output
    for words in ("ROS 2", "generate --policy", "--protection", "bench --policy",
                  "export sros2"):
        assert words in out, words
