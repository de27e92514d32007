"""The fast entry (govkit/cli/fast.py) prints what typer's path prints, byte for byte, with
the same exit code: lint and validate over the reference corpora in every output format,
with options, and every command's --help from its cache; and it really leaves typer out
(issue 47). Command lines it does not take go to typer unchanged."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import typer.main

from govkit import __version__
from govkit.cli import fast
from govkit.cli.main import app

# The two ways in, as whole processes: typer's (main.py, what `govkit` ran before issue
# 47) and the console script's. The second reports whether typer was imported.
TYPER = [sys.executable, "-c",
         "import sys; sys.argv[0] = 'govkit'; from govkit.cli.main import main; main()"]
FAST = [sys.executable, "-c",
        "import atexit, sys; sys.argv[0] = 'govkit'\n"
        "atexit.register(lambda: sys.stderr.write(f'[typer {\"typer\" in sys.modules}]'))\n"
        "from govkit.cli.fast import main; main()"]
SCRIPT = Path(sys.executable).with_name("govkit")


def run(entry: list[str], argv: list[str], env: dict, cwd: Path) -> tuple[int, str, str]:
    r = subprocess.run([*entry, *argv], capture_output=True, text=True, env=env, cwd=cwd,
                       timeout=600)
    return r.returncode, r.stdout, r.stderr


@pytest.fixture
def env(tmp_path) -> dict:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "COLUMNS": "100"}


def both(argv: list[str], env: dict, cwd: Path, fast_path: bool = True):
    """Run `argv` both ways; assert the same exit code, stdout and stderr; return them."""
    code, out, err = run(FAST, argv, env, cwd)
    err, _, marker = err.rpartition("[typer ")
    assert marker == ("False]" if fast_path else "True]"), (argv, marker)
    assert (code, out, err) == run(TYPER, argv, env, cwd), argv
    return code, out, err


def corpus_files(shared: Path) -> list[str]:
    files = []
    for name in ("corpus", "corpus2"):
        root = shared / "reference" / name
        files += sorted(str(p) for p in root.rglob("*")
                        if p.is_file() and p.suffix in (".xml", ".p7s", ".smime"))
    return files


@pytest.mark.parametrize("fmt", ["full", "concise", "json", "sarif", "junit", "github"])
def test_lint_over_the_corpora_is_typers_byte_for_byte(shared, env, tmp_path, fmt):
    files = corpus_files(shared)
    assert len(files) > 150
    code, out, err = both(["lint", "--output-format", fmt, *files], env, tmp_path)
    assert code == 1 and "Traceback" not in out + err   # the corpora hold invalid documents
    assert out.count("GK") > 100


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_validate_over_the_corpora_is_typers_byte_for_byte(shared, env, tmp_path, json_flag):
    code, out, err = both(["validate", *json_flag, *corpus_files(shared)], env, tmp_path)
    assert code == 1 and "Traceback" not in out + err


@pytest.mark.parametrize("options", [
    ["--target", "cyclone"], ["--target=fastdds", "--json"], ["--select", "GK1,GK2"],
    ["--select=GK106", "--select", "GK107"], ["--ignore", "GK106, GK107", "--fail-on", "info"],
    ["--warn-days", "3650", "--fail-on=error"], ["--output-format=concise", "--", "--x.xml"],
    ["--rules"], ["--rules", "--json"], ["missing.xml"], ["--ca", "no-such-dir"],
])
def test_lint_options_are_read_as_typer_reads_them(shared, env, tmp_path, options):
    files = corpus_files(shared)[:6]
    argv = ["lint", *options] if options[0] in ("--rules", "missing.xml") else \
        ["lint", *options, *files]
    both(argv, env, tmp_path)


def test_a_configuration_file_applies_on_the_fast_path(shared, env, tmp_path):
    (tmp_path / "govkit.toml").write_text('[lint]\ntarget = "cyclone"\nignore = ["GK106"]\n'
                                          'output-format = "concise"\n')
    both(["lint", *corpus_files(shared)[:6]], env, tmp_path)
    both(["validate", *corpus_files(shared)[:6]], env, tmp_path)
    (tmp_path / "govkit.toml").write_text('[lint]\ntarget = "nobody"\n')
    code, _, err = both(["lint", *corpus_files(shared)[:1]], env, tmp_path)
    assert code == 2 and "govkit.toml" in err


@pytest.mark.parametrize("argv", [
    ["lint", "--target", "nobody", "x.xml"], ["lint", "--warn-days", "-1", "x.xml"],
    ["lint", "--warn-days", "+5", "x.xml"], ["lint", "--warn-days", "99999999999", "x.xml"],
    ["lint", "--json=yes", "x.xml"], ["lint", "--nope", "x.xml"], ["lint", "-", "x.xml"],
    ["lint", "--target", "omg", "--target", "cyclone", "x.xml"], ["lint"], ["validate"],
    ["lint", "--select"], ["lint", "x.xml", "--help", "y"], ["validate", "--fail-on", "info"],
    ["lnit", "x.xml"], ["--version", "lint"],
])
def test_what_the_fast_reader_does_not_take_goes_to_typer(argv, env, tmp_path):
    assert fast.fast_command(argv) is None
    both(argv, env, tmp_path, fast_path=False)


def test_an_unreadable_file_goes_to_typer_which_refuses_it(env, tmp_path):
    secret = tmp_path / "secret.xml"
    secret.write_text("<x/>")
    secret.chmod(0)
    if not os.access(secret, os.R_OK):
        assert fast.fast_command(["lint", str(secret)]) is None
        return
    # root reads files whatever their mode: ask as an unprivileged user, in a child, of a
    # file in a directory that user may enter (tmp_path's parents are root's alone)
    with tempfile.TemporaryDirectory(dir="/tmp") as open_dir:
        os.chmod(open_dir, 0o711)
        secret = Path(open_dir) / "secret.xml"
        secret.write_text("<x/>")
        secret.chmod(0)
        assert unprivileged_fast_command_is_none(secret)


def unprivileged_fast_command_is_none(secret) -> bool:
    """fast_command's verdict on `secret`, asked by uid 65534 in a forked child."""
    pid = os.fork()
    if pid == 0:                                   # pragma: no cover (the child's verdict)
        code = 3
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            code = 0 if fast.fast_command(["lint", str(secret)]) is None else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def command_paths(command, path=()):
    yield path
    if hasattr(command, "list_commands"):
        for name in command.list_commands(None):
            yield from command_paths(command.get_command(None, name), (*path, name))


@pytest.mark.parametrize("columns", ["100", "60", "20"])
def test_every_help_from_the_cache_is_typers(env, tmp_path, columns):
    env["COLUMNS"] = columns
    for path in command_paths(typer.main.get_command(app)):
        argv = [*path, "--help"]
        expected = run(TYPER, argv, env, tmp_path)
        assert expected[0] == 0 and expected[1].startswith("Usage: govkit")
        assert run([str(SCRIPT)], argv, env, tmp_path) == expected, argv   # made, stored
        assert run(FAST, argv, env, tmp_path)[:2] == expected[:2], argv     # from the cache
    assert len(list((tmp_path / "cache" / "govkit" / fast.HELP_CACHE_DIR).iterdir())) > 20


def test_a_damaged_or_stale_help_cache_is_made_again(env, tmp_path):
    expected = run(TYPER, ["--help"], env, tmp_path)
    assert run([str(SCRIPT), "--help"], [], env, tmp_path) == expected
    (entry,) = (tmp_path / "cache" / "govkit" / fast.HELP_CACHE_DIR).iterdir()
    entry.write_bytes(entry.read_bytes().replace(b"Usage", b"Usurp"))   # digest now wrong
    assert run([str(SCRIPT), "--help"], [], env, tmp_path) == expected
    assert b"Usage" in entry.read_bytes()


def test_the_help_key_follows_the_source(tmp_path, monkeypatch):
    """An edited module (its size or time) gives another cache entry, not the old text."""
    before = fast.source_fingerprint()
    module = Path(fast.__file__)
    stat = module.stat()
    try:
        os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
        assert fast.source_fingerprint() != before
    finally:
        os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert fast.source_fingerprint() == before


def test_version_and_help_leave_typer_out(env, tmp_path):
    assert run(FAST, ["--version"], env, tmp_path) == (0, f"govkit {__version__}\n",
                                                       "[typer False]")
    run([str(SCRIPT)], ["--help"], env, tmp_path)
    code, out, err = run(FAST, ["--help"], env, tmp_path)
    assert code == 0 and out.startswith("Usage: govkit") and err == "[typer False]"
