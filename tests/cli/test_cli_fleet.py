"""Fleets on the command line: participants files, --count, one-pass generate --sign,
sign and verify with worker processes, and what `govkit` imports to start."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from govkit.cli.main import app
from govkit.pki.testpki import TestPKI

FLEET = """\
# two robots and a controller
name,organization,unit,country,publish,subscribe,partitions
robot-1,Acme Corp,Robots,DE,Temperature Pressure,Commands,plant/*
robot-2,Acme Corp,Robots,DE,Temperature,Commands,plant/*
controller,Acme Corp,,,Commands,Temperature Pressure,plant/*
"""


@pytest.fixture
def cwd(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result


def test_pki_init_from_a_participants_file_and_a_count(cwd):
    Path("fleet.csv").write_text(FLEET)
    result = run("pki", "init", "pki", "--participants", "fleet.csv", "--count", "3",
                 "--prefix", "n", "--participant", "pub")
    assert result.exit_code == 0, result.output
    names = ["pub", "robot-1", "robot-2", "controller", "n0", "n1", "n2"]
    assert result.stdout.splitlines()[4:] == [f"wrote pki/{n}{x}" for n in names
                                              for x in (".pem", ".key")]
    pki = TestPKI(cwd / "pki")
    assert pki.participants() == sorted(names)
    assert pki.certificate("robot-1").subject.rfc4514_string() == \
        "C=DE,O=Acme Corp,OU=Robots,CN=robot-1"


@pytest.mark.parametrize(("content", "message"), [
    ("name,publish\nrobot 1,T\n", "govkit: fleet.csv:2: invalid participant name (7 characters, "
                                      "' ' at character 6)"),
    ("a\nb\na\n", "govkit: fleet.csv:3: participant a is already on line 1"),
])
def test_a_bad_participants_file_is_one_line_naming_file_and_line(cwd, content, message):
    Path("fleet.csv").write_text(content)
    for command in (["pki", "init"], ["generate"]):
        result = run(*command, "--participants", "fleet.csv")
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith(message) and len(result.stderr.splitlines()) == 1
    assert not (cwd / "pki").exists() and not (cwd / "build").exists()


def test_a_name_given_twice_is_a_usage_error(cwd):
    Path("fleet.csv").write_text("p0\n")
    result = run("generate", "--participants", "fleet.csv", "--count", "2")
    assert result.exit_code == 2
    assert result.stderr.startswith("govkit: participant p0 is named twice")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_generate_sign_verify_a_fleet(cwd, jobs):
    Path("fleet.csv").write_text(FLEET)
    gen = run("generate", "--participants", "fleet.csv", "--sign", "--jobs", jobs)
    assert gen.exit_code == 0, gen.output
    assert "created a test PKI in pki/ (TEST ONLY: identity CA, permissions CA, 3 " \
           "participants)" in gen.stdout
    written = [line for line in gen.stdout.splitlines() if line.startswith("wrote ")]
    assert written == [f"wrote build/permissions/{n}{x}" for n in
                       ("robot-1", "robot-2", "controller") for x in (".xml", ".p7s")]
    assert not (cwd / "build" / "governance").exists()   # no profile asked for
    perm = (cwd / "build/permissions/controller.xml").read_text()
    assert "<topic>Commands</topic>" in perm and "<topic>DDSPerfRDataKS</topic>" not in perm

    files = sorted(str(p.relative_to(cwd)) for p in cwd.rglob("*.p7s"))
    verify = run("verify", "--ca", "pki", "--jobs", jobs, "--json", *files)
    assert verify.exit_code == 0, verify.output
    assert [r["ok"] for r in json.loads(verify.stdout)["files"]] == [True] * 3

    # one more participant, and the governance: only the new one is created
    Path("fleet.csv").write_text(FLEET + "robot-3\n")
    more = run("generate", "--participants", "fleet.csv", "-p", "rtps_sign", "--jobs", jobs)
    assert more.exit_code == 0, more.output
    assert "added participants robot-3 to pki/" in more.stdout
    sign = run("sign", "--ca", "pki", "--jobs", jobs)
    assert sign.exit_code == 0, sign.output
    assert sorted(sign.stdout.splitlines()) == sorted(
        f"signed build/{d}.p7s" for d in ("governance/rtps_sign", "permissions/robot-1",
                                          "permissions/robot-2", "permissions/controller",
                                          "permissions/robot-3"))


def test_generate_count_with_a_stale_identity(cwd, pki_dir):
    assert run("pki", "init", "--count", "2", "--prefix", "n").exit_code == 0
    for suffix in (".pem", ".key"):   # an identity of another Identity CA
        Path(f"pki/n1{suffix}").write_bytes((pki_dir / f"pub{suffix}").read_bytes())
    result = run("generate", "--count", "2", "--prefix", "n", "--sign")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "govkit: pki/n1.pem: is not the certificate the PKI manifest lists (changed since "
        "govkit wrote the PKI): checked in full",
        "govkit: pki/n1.pem: not issued by the current Identity CA (left from an earlier "
        "PKI); no permissions written for it (reissue with `govkit pki init pki --force`)"]
    assert (cwd / "build/permissions/n0.p7s").exists()
    assert not (cwd / "build/permissions/n1.xml").exists()


def test_start_up_imports_nothing_heavy():
    """`govkit --help` in well under 0.15 s: neither rich (typer's rich help), nor pydantic
    (typer 0.29 validates every option with it), nor the XML and crypto stacks."""
    heavy = {"rich", "pydantic", "lxml", "cryptography", "jinja2", "asn1crypto", "markdown_it"}
    for argv in (["--help"], ["generate", "--help"], ["profiles", "--json"]):
        code = ("import sys\nsys.argv = ['govkit', *sys.argv[1:]]\n"
                "from govkit.cli.main import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
                "sys.stderr.write('MODULES ' + ' '.join(m.split('.')[0] for m in sys.modules))")
        done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True,
                              text=True, timeout=60)
        modules = set(done.stderr.rsplit("MODULES ", 1)[1].split())
        assert not heavy & modules, (argv, heavy & modules)
