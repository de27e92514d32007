"""`govkit` (main()) makes each command only when it is looked up (main.LazyCommands):
every --help, every error for a wrong command line and the list of commands are what typer
prints when it makes them all (app(), which the other tests invoke), and running one command
makes no other."""

from __future__ import annotations

import sys

import pytest
import typer.main

from govkit.cli import main as cli_main
from govkit.cli.main import LazyCommands, app, lazy_command


def _paths(command, path=()):
    yield path
    if hasattr(command, "list_commands"):
        for name in command.list_commands(None):
            yield from _paths(command.get_command(None, name), (*path, name))


PATHS = list(_paths(typer.main.get_command(app)))


def _run(entry, argv, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["govkit", *argv])
    with pytest.raises(SystemExit) as exit_:
        entry()
    out, err = capsys.readouterr()
    return exit_.value.code, out, err


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "govkit")
def test_help_is_what_typer_prints(path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    lazy = _run(cli_main.main, [*path, "--help"], capsys, monkeypatch)
    eager = _run(app, [*path, "--help"], capsys, monkeypatch)
    assert lazy == eager
    assert lazy[1].startswith("Usage: ")


@pytest.mark.parametrize("argv", [[], ["lint"], ["no-such"], ["lnit"], ["validate"],
                                  ["pki"], ["pki", "nope"], ["--version"], ["--nope"]])
def test_errors_are_what_typer_prints(argv, capsys, monkeypatch):
    assert _run(cli_main.main, argv, capsys, monkeypatch) == _run(app, argv, capsys,
                                                                 monkeypatch)


def test_the_root_lists_every_command_in_order_without_making_them():
    root = lazy_command(app)
    eager = typer.main.get_command(app)
    assert isinstance(root.commands, LazyCommands)
    assert root.list_commands(None) == eager.list_commands(None) == list(eager.commands)
    assert root.commands.made == {}
    root.get_command(None, "lint")
    assert list(root.commands.made) == ["lint"]
    assert [p.name for p in root.get_command(None, "lint").params] == \
        [p.name for p in eager.get_command(None, "lint").params]
