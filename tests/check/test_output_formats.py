"""`govkit lint --output-format`: every format from real lint runs over the rule fixtures,
SARIF against the official OASIS SARIF 2.1.0 schema, and every format against file names
and messages that hold newlines, `::`, `%`, `,` and XML metacharacters."""

from __future__ import annotations

import json
import shutil
import typing
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import unquote

import pytest
from jsonschema import Draft4Validator
from typer.testing import CliRunner

from govkit.check.rules.engine import rules_table
from govkit.check.vocabulary import OUTPUT_FORMATS
from govkit.cli import check as cli_check
from govkit.cli.main import app

DATA = Path(__file__).resolve().parent.parent / "data"
SARIF_SCHEMA = DATA / "sarif-schema-2.1.0.json"   # OASIS errata01, as published
# Fixtures with findings of each severity, one schema-invalid, one a governance document.
FIXTURES = ["GK002.bad.xml", "GK106.bad.xml", "GK213.bad.xml", "GK214.bad.xml"]
HOSTILE = 'x <&>"\n::error::%0A,col=9 %25.xml'


def lint(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, ["lint", *args])
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture
def files(tmp_path) -> list[str]:
    out = []
    for name in FIXTURES:
        shutil.copy(DATA / "lint" / name, tmp_path / name)
        out.append(str(tmp_path / name))
    hostile = tmp_path / HOSTILE
    shutil.copy(DATA / "lint" / "GK213.bad.xml", hostile)
    return [*out, str(hostile), str(tmp_path / "missing.xml")]


def test_the_cli_offers_exactly_the_formats_there_are():
    assert typing.get_args(cli_check.OutputFormat) == OUTPUT_FORMATS


def _reference(files: list[str]) -> dict:
    code, out, _ = lint("--json", *files)
    assert code == 2      # one unreadable file
    return json.loads(out)


def test_sarif_validates_as_sarif_2_1_0_and_says_what_json_says(files):
    code, out, _ = lint("--output-format", "sarif", *files)
    assert code == 2
    log = json.loads(out)
    schema = json.loads(SARIF_SCHEMA.read_text())
    problems = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
                for e in Draft4Validator(schema).iter_errors(log)]
    assert not problems, "\n".join(problems[:10])
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "govkit"
    table = rules_table()
    assert [(r["id"], r["name"], r["defaultConfiguration"]["level"]) for r in driver["rules"]] \
        == [(r.id, r.name, {"info": "note"}.get(r.severity, r.severity)) for r in table]
    expected = [f for r in _reference(files)["files"] for f in r["findings"]]
    assert expected and len(run["results"]) == len(expected)
    for res, f in zip(run["results"], expected, strict=True):
        assert res["ruleId"] == f["rule"] == driver["rules"][res["ruleIndex"]]["id"]
        assert res["level"] == {"info": "note"}.get(f["severity"], f["severity"])
        where = res["locations"][0]["physicalLocation"]
        assert unquote(where["artifactLocation"]["uri"].removeprefix("file://")) == f["file"]
        assert where["region"] == {"startLine": f["line"], "startColumn": f["column"]}
        assert res["message"]["text"].startswith(f["message"])
    # the unreadable file: a notification, and the run says it did not succeed
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert "missing.xml" in note["message"]["text"]
    assert "\n" not in where["artifactLocation"]["uri"]


def test_sarif_with_nothing_found_is_still_a_valid_log(tmp_path):
    ok = tmp_path / "ok.xml"
    shutil.copy(DATA / "lint" / "GK106.ok.xml", ok)
    code, out, _ = lint("--output-format", "sarif", "--select", "GK106", str(ok))
    assert code == 0
    log = json.loads(out)
    assert not list(Draft4Validator(json.loads(SARIF_SCHEMA.read_text())).iter_errors(log))
    assert log["runs"][0]["results"] == []
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True


def _github_unescape(s: str) -> str:
    return (s.replace("%0A", "\n").replace("%0D", "\r").replace("%3A", ":")
            .replace("%2C", ",").replace("%25", "%"))


def test_github_annotations_one_line_each_escaped(files):
    code, out, _ = lint("--output-format", "github", *files)
    assert code == 2
    expected = _reference(files)["files"]
    lines = out.splitlines()
    assert len(lines) == sum(len(r["findings"]) for r in expected) + 1
    assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines)
    hostile = [line for line in lines if "%0A" in line]
    assert hostile
    for line in hostile:
        head, message = line[2:].split("::", 1)      # the first :: ends the properties
        level, props = head.split(" ", 1)
        fields = dict(p.split("=", 1) for p in props.split(","))
        assert _github_unescape(fields["file"]) == str(Path(files[-2]))
        assert int(fields["line"]) >= 1 and int(fields["col"]) >= 1
        assert level == "warning" and message.startswith("allow_rule")
    (unreadable,) = [line for line in lines if "missing.xml" in line]
    assert unreadable.startswith("::error file=")


def test_junit_one_testcase_per_file_one_failure_per_finding(files):
    code, out, _ = lint("--output-format", "junit", "--fail-on", "warning", *files)
    assert code == 2
    root = ET.fromstring(out.encode())
    (suite,) = root
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == files
    expected = _reference(files)["files"]
    for case, report in zip(cases, expected, strict=True):
        failing = [f for f in report["findings"] if f["severity"] in ("error", "warning")]
        assert [f.get("type") for f in case.findall("failure")] == [f["rule"] for f in failing]
    assert int(suite.get("failures")) == sum(len(c.findall("failure")) for c in cases) > 0
    assert suite.get("errors") == "1" and cases[-1].find("error") is not None
    # at the default --fail-on error, warnings are not failures but are still said
    _, out, _ = lint("--output-format", "junit", files[2])
    (case,) = ET.fromstring(out.encode())[0]
    assert not case.findall("failure") and "GK213" in case.find("system-out").text


def test_junit_is_well_formed_with_control_characters_in_a_name(tmp_path):
    odd = tmp_path / "a\x01\x1b[31m<b>.xml"
    shutil.copy(DATA / "lint" / "GK213.bad.xml", odd)
    _, out, _ = lint("--output-format", "junit", str(odd))
    (case,) = ET.fromstring(out.encode())[0]
    assert case.get("name") == str(odd).replace("\x01", "\\x01").replace("\x1b", "\\x1b")


def test_concise_and_full_keep_one_finding_per_line(files):
    _, full, err = lint(*files)
    _, concise, _ = lint("--output-format", "concise", *files)
    expected = [f for r in _reference(files)["files"] for f in r["findings"]]
    for text in (full, concise):
        lines = text.splitlines()
        assert len(lines) == len(expected) + 1               # + the summary
        assert lines[-1].startswith("6 file(s), target omg: ")
    for f, line_full, line_concise in zip(expected, full.splitlines(), concise.splitlines(),
                                          strict=False):
        shown = f["file"].replace("\n", "\\n")
        assert line_concise == (f"{shown}:{f['line']}:{f['column']}: {f['rule']} "
                                f"{f['severity']}: {f['message']}")
        assert line_full == f"{line_concise}. {f['why']}."
    assert "missing.xml" in err


def test_json_option_is_the_json_format(files):
    assert lint("--json", *files) == lint("--output-format", "json", *files)


def test_unknown_format_is_a_usage_error(files):
    code, _, err = lint("--output-format", "xml", files[0])
    assert code == 2 and "xml" in err
