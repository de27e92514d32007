"""The manual in docs/: its reference pages come from the code, and the whole site builds
offline with warnings as errors (a broken link or a stale page fails here, not on a reader)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from helpers.docs_reference import load_reference

from govkit.check.rules.engine import rules_table
from govkit.cli.examples import EXAMPLES, GROUP_EXAMPLES
from govkit.cli.main import app

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reference():
    return load_reference()


def _options(command, path=("govkit",)):
    ctx = command.context_class(command, info_name=path[-1])   # typer's own click
    for p in command.params:
        if getattr(p, "help", None):
            yield path, p
    if hasattr(command, "list_commands"):
        for name in command.list_commands(ctx):
            yield from _options(command.get_command(ctx, name), (*path, name))


def test_the_cli_page_is_every_command_and_every_options_help(reference):
    page = reference.cli_page()
    group = typer.main.get_command(app)
    helps = list(_options(group))
    assert len(helps) > 80
    for path, param in helps:
        assert f"`{' '.join(path)}`" in page
        assert reference.cell(param.help) in page, (path, param.opts)
    for line in [x for lines in (*EXAMPLES.values(), *GROUP_EXAMPLES.values()) for x in lines]:
        assert f"  {line}\n" in page, line       # every command's and group's example


def test_changing_an_options_help_changes_the_page(reference):
    def make(help_text: str) -> typer.Typer:
        toy = typer.Typer()

        @toy.command()
        def run(budget: str = typer.Option("5m", "--budget", help=help_text)):
            """Run it."""

        @toy.command()
        def other():
            """Another command (typer needs two for a group)."""
        return toy
    before = reference.cli_page(make("Seconds before no extra repeat starts."))
    after = reference.cli_page(make("Seconds before no extra round starts."))
    assert "no extra repeat starts" in before and "no extra round starts" in after
    assert before != after


def test_the_committed_reference_pages_are_current(reference):
    """The generated pages are committed (issue 37: git-ignored, the guides' and --help's
    links were broken in a clone and on GitHub); one that no longer says what the code
    does fails here, naming the command that rewrites them."""
    committed = sorted(p.name for p in (ROOT / "docs" / "reference").glob("*.md"))
    assert set(reference.PAGES) <= set(committed)
    tracked = subprocess.run(["git", "ls-files", "docs/reference"], cwd=ROOT,
                             capture_output=True, text=True)
    if tracked.returncode == 0:          # (a wheel's sdist or a tarball has no git)
        assert {f"docs/reference/{n}" for n in reference.PAGES} <= \
            set(tracked.stdout.split()), "reference pages not committed"
    stale = reference.stale_pages()
    assert not stale, (f"stale: {', '.join(stale)}; regenerate with "
                       "`.venv/bin/python docs/_ext/govkit_reference.py` and commit them")


def test_a_changed_table_makes_its_page_stale(reference, tmp_path):
    reference.write_pages(tmp_path)
    assert reference.stale_pages(tmp_path) == []
    page = tmp_path / "exit-codes.md"
    page.write_text(page.read_text().replace("success", "succes"))
    assert reference.stale_pages(tmp_path) == ["exit-codes.md"]


def test_the_lint_rule_page_is_the_registry(reference):
    page = reference.lint_rules_page()
    for r in rules_table():
        assert f"| {r.id} | `{r.name}` | {r.severity} |" in page, r.id


def test_the_layout_page_is_the_tree_and_its_import_graph(reference):
    """docs/development/layout.md's table and graph: every stage in the layers' order with
    every module it holds, and the graph's counts (tests/project/test_layout.py holds the
    code to 0 and 0)."""
    page = reference.layout_fragment()
    rows = [line for line in page.splitlines() if line.startswith("| ") and "`govkit." in line]
    stages = [s for layer in reference.stage_layers() for s in layer]
    assert [row.split("`")[1] for row in rows] == [f"govkit.{s}" for s in stages]
    for stage, row in zip(stages, rows, strict=True):
        for module in (ROOT / "govkit" / stage).glob("*.py"):
            if module.name != "__init__.py":
                assert f"`{module.stem}`" in row, (stage, module.name)
    assert "**0 imports back up**" in page and page.count("**0 cycles**") == 2
    assert "| `cli` | `report`, `bench`," in page


@pytest.mark.skipif(importlib.util.find_spec("sphinx") is None
                    or importlib.util.find_spec("myst_parser") is None,
                    reason="sphinx and myst-parser are not installed (pip install -e '.[test]')")
def test_the_docs_build_offline_with_warnings_as_errors(tmp_path):
    source = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", source, ignore=shutil.ignore_patterns("_build"))
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                           "html", str(source), str(tmp_path / "html")],
                          capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                               "no_proxy": "*", "http_proxy": "http://127.0.0.1:9",
                               "https_proxy": "http://127.0.0.1:9"})
    assert done.returncode == 0, done.stderr[-4000:]
    cli = (tmp_path / "html" / "reference" / "cli.html").read_text()
    assert "govkit bench" in cli and "--target-ci" in cli
    assert (tmp_path / "html" / "reference" / "lint-rules.html").exists()
    layout = (tmp_path / "html" / "development" / "layout.html").read_text()
    assert "imports back up" in layout and "govkit.check" in layout


def test_the_ci_example_is_short_and_each_govkit_line_parses(tmp_path, monkeypatch):
    """issue 37: a GitHub Actions example (lint -> SARIF upload, bench with gates); every
    govkit command in it parsed by that command's own parser (an option renamed breaks
    this test, not a user's pipeline)."""
    import re
    import shlex
    text = (ROOT / "docs" / "guide" / "ci.md").read_text()
    (workflow,) = re.findall(r"```yaml\n(.*?)```", text, re.S)
    assert len(workflow.splitlines()) <= 16
    assert "upload-sarif" in workflow and "--output-format sarif" in workflow
    group = typer.main.get_command(app)
    ctx = group.context_class(group, info_name="govkit")
    monkeypatch.chdir(tmp_path)
    lines = [line.split("run: ", 1)[1] for line in workflow.splitlines() if "run: " in line]
    commands = [c.strip() for line in lines for c in line.split("&&")
                if c.strip().startswith("govkit ")]
    assert [c.split()[1] for c in commands] == ["lint", "bench"]
    for line in commands:
        words = shlex.split(line)
        words = words[:words.index(">")] if ">" in words else words
        command = group.get_command(ctx, words[1])
        assert command.make_context(words[1], words[2:], parent=ctx).params
    assert "--max-ratio" in commands[1] and "--fail-on-flag" in commands[1]
