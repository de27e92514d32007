"""Every `--json` output is `{"schema": "govkit.COMMAND/1", ...}` and valid against the JSON
Schema govkit ships for it (schemas/json/, in the wheel as govkit/schemas/json/); so is
every results.json the report tests read."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
import typer
from helpers.json_schemas import assert_valid, errors, validator
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from govkit.cli.main import app
from govkit.common.paths import JSON_SCHEMAS_DIR

DATA = Path(__file__).resolve().parent.parent / "data"
REPORT_RUNS = sorted((DATA / "report").glob("*/results.json"))


def _json_commands() -> dict[str, list[str]]:
    """Every command with a --json option, by its schema name: the argv that names it."""
    found: dict[str, list[str]] = {}

    def walk(command, path: list[str]):
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, [*path, name])
        elif any("--json" in p.opts for p in command.params):
            found["-".join(path)] = path
    walk(typer.main.get_command(app), [])
    return found


def govkit_json(*args: str, codes=(0,)) -> dict:
    r = CliRunner().invoke(app, list(args))
    assert r.exit_code in codes, r.output
    return json.loads(r.stdout)


def test_every_schema_is_a_valid_2020_12_schema_named_after_its_file():
    names = sorted(p.name.removesuffix(".schema.json") for p in JSON_SCHEMAS_DIR.iterdir())
    for name in names:
        schema = json.loads((JSON_SCHEMAS_DIR / f"{name}.schema.json").read_text())
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        if name != "bench":
            assert schema["properties"]["schema"] == {"const": f"govkit.{name}/1"}
    assert set(_json_commands()) | {"lint-rules", "bench"} == set(names)


def test_profiles(tmp_path):
    doc = govkit_json("profiles", "--json")
    assert_valid(doc, "profiles")
    bad = copy.deepcopy(doc)
    bad["profiles"][1]["allow_unauthenticated_participants"] = "true"   # the old strings
    assert errors(bad, "profiles")


def test_lint_lint_rules_identify_explain_diff(tmp_path):
    lint = DATA / "lint"
    files = [str(p) for p in sorted(lint.glob("GK2*.bad.xml"))[:6]]
    doc = govkit_json("lint", "--json", *files, str(tmp_path / "missing.xml"), codes=(2,))
    assert_valid(doc, "lint")
    assert doc["summary"]["unreadable"] == 1 and doc["files"][0]["findings"]
    assert_valid(govkit_json("lint", "--rules", "--json"), "lint-rules")
    seed = DATA / "identify" / "seed000"
    assert_valid(govkit_json("identify", "--json", *map(str, sorted(seed.glob("*.xml"))),
                             codes=(1,)), "identify")
    for f in ("GK214.bad.xml", "GK106.bad.xml"):    # permissions, governance
        assert_valid(govkit_json("explain", "--json", str(lint / f)), "explain")
    a, b = (str(lint / f) for f in ("GK106.bad.xml", "GK106.ok.xml"))
    doc = govkit_json("diff", "--json", a, b, codes=(1,))
    assert_valid(doc, "diff")
    assert doc["changes"] and not doc["same"]


def test_validate_and_verify(tmp_path, monkeypatch, pki_dir):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(pki_dir, "pki")
    runner = CliRunner()
    assert runner.invoke(app, ["generate", "-p", "rtps_sign"]).exit_code == 0
    assert runner.invoke(app, ["sign"]).exit_code == 0
    Path("bad.xml").write_text("<dds><domain_access_rules/></dds>")
    doc = govkit_json("validate", "--json", "build/governance/rtps_sign.xml", "bad.xml",
                      "missing.xml", codes=(2,))
    assert_valid(doc, "validate")
    assert [f["valid"] for f in doc["files"]] == [True, False, False]
    doc = govkit_json("verify", "--json", "build/governance/rtps_sign.p7s",
                      "build/permissions/pub.p7s", "missing.p7s", codes=(2,))
    assert_valid(doc, "verify")
    assert [f["ok"] for f in doc["files"]] == [True, True, False]


@pytest.mark.parametrize("path", REPORT_RUNS, ids=lambda p: p.parent.name)
def test_results_json_of_real_runs(path):
    doc = json.loads(path.read_text())
    assert_valid(doc, "bench")


def test_results_json_schema_refuses_what_the_checker_refuses():
    doc = json.loads(REPORT_RUNS[0].read_text())
    assert doc["results"][0]["status"] == "ok"
    for mutate in (lambda d: d["results"][0].update(transport=["udp"]),
                   lambda d: d["results"][0].update(size=10 ** 40),
                   lambda d: d["results"][0].update(mode="both"),
                   lambda d: d.update(schema="govkit.bench/1"),
                   lambda d: d["results"][0].pop("raw")):
        bad = copy.deepcopy(doc)
        mutate(bad)
        assert not validator("bench").is_valid(bad)


def test_a_file_name_that_is_not_utf8_gives_strict_utf8_json(tmp_path, pki_dir):
    """A name's non-UTF-8 byte was written as the lone surrogate escape "\\udcff", which a
    strict JSON reader refuses (issue 37, item 15); it is the text \\xff, as the terminal
    shows it, in every --json output and in SARIF."""
    import os
    import re
    import subprocess
    import sys
    shutil.copytree(pki_dir, tmp_path / "pki")
    govkit = str(Path(sys.executable).with_name("govkit"))
    run = lambda *args: subprocess.run([govkit, *args], cwd=tmp_path, capture_output=True,  # noqa: E731
                                       timeout=120)
    assert run("generate", "-p", "rtps_sign").returncode == 0
    assert run("sign").returncode == 0
    odd = os.fsencode(tmp_path) + b"/odd\xff"
    shutil.copy(DATA / "lint" / "GK106.bad.xml", odd + b".xml")        # with findings
    shutil.copy(tmp_path / "build/governance/rtps_sign.p7s", odd + b".p7s")
    name, signed = os.fsdecode(odd + b".xml"), os.fsdecode(odd + b".p7s")
    for args in (("lint", "--json", name), ("lint", "--output-format", "sarif", name),
                 ("identify", "--json", name), ("validate", "--json", name),
                 ("explain", "--json", name), ("diff", "--json", name, name),
                 ("verify", "--json", signed)):
        done = run(*args)
        assert done.returncode in (0, 1), (args, done.stderr)
        text = done.stdout.decode("utf-8")                  # valid UTF-8
        assert not re.search(r"\\ud[89a-f][0-9a-f]{2}", text, re.I), args   # no lone surrogate
        doc = json.loads(text)
        assert "odd\\\\xff" in text or "odd%FF" in text, args   # JSON: the text odd\\xff
        if args[1] == "--json":
            assert_valid(doc, args[0])
