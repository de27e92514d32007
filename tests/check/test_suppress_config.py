"""lint's inline suppressions (`<!-- govkit: ignore RULE -->`) and its configuration
([tool.govkit.lint] in pyproject.toml, [lint] in govkit.toml), through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from govkit.cli.main import app

DATA = Path(__file__).resolve().parent.parent / "data" / "lint"
PARTITION = "          <partitions><partition>*</partition></partitions>"


def lint(*args: str) -> tuple[int, dict]:
    r = CliRunner().invoke(app, ["lint", "--json", *args])
    return r.exit_code, json.loads(r.stdout) if r.stdout.startswith("{") else r.stderr


@pytest.fixture
def here(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _doc(here: Path, before: str = "", same: str = "", top: str = "") -> str:
    text = (DATA / "GK213.bad.xml").read_text().replace(" <!-- expect GK213 -->", "")
    text = text.replace(PARTITION, f"{before}{PARTITION}{same}")
    text = text.replace("<dds>", f"{top}<dds>")
    (here / "p.xml").write_text(text)
    return "p.xml"


@pytest.mark.parametrize(("before", "same", "top"), [
    ("          <!-- govkit: ignore GK213 -->\n", "", ""),
    ("", " <!-- govkit: ignore broad-partition -->", ""),
    ("          <!--govkit:ignore GK2,GK1-->\n", "", ""),
    ("", "", "<!-- govkit: ignore-file GK213 -->\n"),
    ("          <!-- govkit: ignore -->\n", "", ""),
])
def test_a_suppression_leaves_out_the_finding_and_counts_it(here, before, same, top):
    code, doc = lint("--select", "GK213", _doc(here))
    assert (code, doc["summary"]["warning"]) == (0, 1)          # without: the finding
    code, doc = lint("--select", "GK213,GK004", _doc(here, before, same, top))
    assert doc["files"][0]["findings"] == [] and doc["summary"]["suppressed"] == 1
    assert doc["files"][0]["suppressed"] == 1


def test_a_suppression_two_lines_above_does_not_reach(here):
    name = _doc(here, before="          <!-- govkit: ignore GK213 -->\n\n")
    _, doc = lint("--select", "GK213,GK004", name)
    assert sorted(f["rule"] for f in doc["files"][0]["findings"]) == ["GK004", "GK213"]


def test_wrong_suppressions_are_findings(here):
    name = _doc(here, same=" <!-- govkit: ignore GK999, nonsense -->")
    _, doc = lint(name)
    (f,) = [f for f in doc["files"][0]["findings"] if f["rule"] == "GK004"]
    assert "'GK999', 'nonsense'" in f["message"]
    assert any(f["rule"] == "GK213" for f in doc["files"][0]["findings"])
    # a suppression of a rule that did not run is not "unused"
    name = _doc(here, before="          <!-- govkit: ignore GK106 -->\n")
    _, doc = lint("--ignore", "GK106", name)
    assert [f["rule"] for f in doc["files"][0]["findings"]] == ["GK213"]
    _, doc = lint(name)
    assert sorted(f["rule"] for f in doc["files"][0]["findings"]) == ["GK004", "GK213"]


def test_pyproject_table_sets_defaults_and_the_command_line_wins(here, monkeypatch):
    name = _doc(here)
    (here / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.govkit.lint]\nfail-on = "warning"\n'
        'ignore = ["GK1"]\ntarget = "cyclone"\n')
    code, doc = lint(name)
    assert (code, doc["target"]) == (1, "cyclone")               # warning fails now
    code, doc = lint("--fail-on", "error", "--target", "omg", name)
    assert (code, doc["target"]) == (0, "omg")
    (here / "sub").mkdir()        # only the working directory's, as for [[profile]]
    monkeypatch.chdir(here / "sub")
    code, doc = lint(f"../{name}")
    assert (code, doc["target"]) == (0, "omg")


def test_govkit_toml_and_output_format(here):
    name = _doc(here)
    # the file's other tables are other commands' (govkit.catalog.profiles_file)
    (here / "govkit.toml").write_text('[[profile]]\nname = "x"\n\n[lint]\n'
                                      'output-format = "concise"\nselect = "GK213"\n')
    r = CliRunner().invoke(app, ["lint", name])
    assert r.exit_code == 0
    assert r.stdout.splitlines()[0].endswith("(partition '*')")   # concise: no why
    r = CliRunner().invoke(app, ["lint", "--output-format", "github", name])
    assert r.stdout.startswith("::warning file=p.xml,")


@pytest.mark.parametrize(("text", "said"), [
    ('[lint]\ntarget = "nope"\n', "[lint] target: expected one of omg"),
    ('[lint]\nwarn_days = 3\n', "unknown key 'warn_days'"),
    ('[lint]\nwarn-days = 10000000000000000000000\n', "[lint] warn-days: expected a whole"),
    ('[lint]\nwarn-days = 1000001\n', "[lint] warn-days: expected a whole number"),
    ('[lint]\nwarn-days = true\n', "[lint] warn-days: expected a whole number"),
    ('[lint]\nselect = [1]\n', "[lint] select: expected a list"),
    ("[lint\n", "not valid TOML"),
    ("lint = 3\n", "[lint]: expected a table"),
    (b"\xff\xfe", "not UTF-8"),
])
def test_a_bad_configuration_is_one_line_and_exit_2(here, text, said):
    name = _doc(here)
    path = here / "govkit.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    r = CliRunner().invoke(app, ["lint", name])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"govkit: {path}: ") and said in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_config_that_is_not_a_regular_file_is_not_read(here):
    name = _doc(here)
    (here / "govkit.toml").mkdir()          # a directory: not a config, keep looking
    assert CliRunner().invoke(app, ["lint", name]).exit_code == 0

