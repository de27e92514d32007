"""The CLI's shared parts are defined once (issue 45, pip's cmdoptions habit): no command
module imports another, --policy/--protection are declared in govkit/cli/common.py only,
and every error is rendered by GovkitError.rendered (message, details, hint)."""

import ast
import subprocess
import sys
from pathlib import Path

from govkit.common.errors import EXIT_USAGE, GovkitError, run_main

CLI = Path(__file__).resolve().parents[2] / "govkit" / "cli"
# main registers the commands and fast enters before it (issue 47); output and
# lint_validate are shared like common: the consoles, and what lint and validate do
SHARED = {"__init__", "main", "fast", "common", "output", "lint_validate", "examples"}


def cli_imports(source: str) -> set[str]:
    """The govkit.cli modules `source` imports, at any depth of the module."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "govkit.cli":
                found |= {alias.name for alias in node.names}
            elif node.module.startswith("govkit.cli."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[2] for a in node.names
                      if a.name.startswith("govkit.cli.")}
    return found


def command_modules() -> set[str]:
    return {p.stem for p in CLI.glob("*.py")} - SHARED


def test_no_command_module_imports_another():
    commands = command_modules()
    assert {"artefacts", "bench", "check", "export", "pki"} <= commands
    crossing = {p.stem: cli_imports(p.read_text()) & commands
                for p in sorted(CLI.glob("*.py")) if p.stem != "main"}
    assert {m: i for m, i in crossing.items() if i} == {}


def test_the_import_check_sees_a_crossing():
    # the lazy import inside a function that explain once had
    source = "def explain():\n    from govkit.cli.artefacts import load_ros_input\n"
    assert cli_imports(source) == {"artefacts"}
    assert cli_imports("from govkit.cli import bench, common\n") == {"bench", "common"}


def test_policy_and_protection_are_declared_in_common_only():
    for path in CLI.glob("*.py"):
        declared = [n.value for n in ast.walk(ast.parse(path.read_text()))
                    if isinstance(n, ast.Constant) and n.value in ("--policy", "--protection")]
        # fast.py reads lint's usual command line by hand (issue 47): it names the option it
        # reads, typer's declaration stays in common.py
        assert path.stem in ("common", "fast") or not declared, (path.name, declared)


def test_pki_init_lives_with_the_pki_commands():
    source = (CLI / "pki.py").read_text()
    assert "def pki_init(" in source
    assert "def pki_init(" not in (CLI / "artefacts.py").read_text()


def test_an_error_renders_its_message_details_and_hint():
    e = GovkitError("policy.xml: 2 problems", hint="fix the names",
                    details=["policy.xml:3:4: one", "policy.xml:5:6: two"])
    assert e.rendered().splitlines() == ["govkit: policy.xml: 2 problems", "policy.xml:3:4: one",
                                         "policy.xml:5:6: two", "govkit: hint: fix the names"]
    only = GovkitError("", details=["a.xml:1:2: bad"])
    assert only.rendered() == "a.xml:1:2: bad" and str(only) == "a.xml:1:2: bad"
    assert e.exit_code == EXIT_USAGE


def test_a_policy_problem_is_rendered_by_the_root(tmp_path):
    bad = tmp_path / "policy.xml"
    bad.write_text('<?xml version="1.0"?>\n<policy version="0.2.0">\n  <enclaves>\n'
                   '    <enclave><profiles><profile ns="/"/></profiles></enclave>\n'
                   '  </enclaves>\n</policy>\n')
    done = subprocess.run([sys.executable, "-m", "govkit", "explain", "--policy", str(bad)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == EXIT_USAGE, done.stderr
    lines = done.stderr.splitlines()
    assert lines and all(line.startswith(f"{bad}:") for line in lines), lines
    assert "Traceback" not in done.stderr


def test_a_python_m_entry_point_renders_as_the_root(capsys):
    def fails():
        raise GovkitError("no compiler", details=["tried: g++"], hint="apt install g++")
    assert run_main(fails) == EXIT_USAGE
    assert capsys.readouterr().err.splitlines() == [
        "govkit: no compiler", "tried: g++", "govkit: hint: apt install g++"]
