"""The `govkit` command line, driven the way a user drives it, in a fresh directory."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from govkit import __version__
from govkit.catalog.profiles import PROFILES, get_profile
from govkit.cli.main import app
from govkit.common.errors import GovkitError
from govkit.documents.render import GovernanceDocument
from govkit.generate.grants import RECORD
from govkit.pki.testpki import TestPKI

# Seed 000's listing for "RTPS Sign, Submessage Encrypt with Original Auth, Data Encrypt",
# verbatim (4-space root indentation and the blank line after the declaration included).
SEED_BAD_GOVERNANCE = """\
<?xml version="1.0" encoding="UTF-8"?>

<dds>
    <domain_access_rules>
      <domain_rule>
        <domains>
          <id_range>
            <min>0</min>
          </id_range>
        </domains>
        <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
        <enable_join_access_control>false</enable_join_access_control>
        <discovery_protection_kind>NONE</discovery_protection_kind>
        <liveliness_protection_kind>NONE</liveliness_protection_kind>
        <rtps_protection_kind>SIGN</rtps_protection_kind>
        <topic_access_rules>
          <topic_rule>
            <topic_expression>*</topic_expression>
            <enable_discovery_protection>false</enable_discovery_protection>
            <enable_liveliness_protection>false</enable_liveliness_protection>
            <enable_read_access_control>false</enable_read_access_control>
            <enable_write_access_control>false</enable_write_access_control>
            <metadata_protection_kind>ENCRYPT_WITH_ORIGINAL_AUTHENTICATION</metadata_protection_kind>
            <data_protection_kind>ENCRYPT</data_protection_kind>
          </topic_rule>
        </topic_access_rules>
      </domain_rule>
    </domain_access_rules>
</dds>
"""
BAD_LINE = 23  # the metadata_protection_kind line above
BAD_COLUMN = 13


@pytest.fixture
def cwd(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args: str):
        result = runner.invoke(app, list(args))
        assert "Traceback" not in result.output, result.output
        # an uncaught exception would show up here rather than as a traceback
        assert result.exception is None or isinstance(result.exception, SystemExit), \
            repr(result.exception)
        return result

    return invoke


def _files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}


def test_three_commands_on_a_fresh_directory(cwd, run):
    assert list(cwd.iterdir()) == []
    gen = run("generate", "--profile", "sign_origin_data_encrypt")
    assert gen.exit_code == 0, gen.output
    assert "created a test PKI in pki/" in gen.stdout
    assert "TEST ONLY" in gen.stdout
    for path in ("build/governance/sign_origin_data_encrypt.xml", "build/permissions/pub.xml",
                 "build/permissions/sub.xml"):
        assert f"wrote {path}" in gen.stdout
        assert (cwd / path).is_file()
    assert TestPKI(cwd / "pki").participants() == ["pub", "sub"]
    assert (cwd / "build/governance/sign_origin_data_encrypt.xml").read_bytes() == \
        GovernanceDocument(get_profile("sign_origin_data_encrypt")).render()

    sign = run("sign", "--ca", "pki/")
    assert sign.exit_code == 0, sign.output
    for stem in ("governance/sign_origin_data_encrypt", "permissions/pub", "permissions/sub"):
        assert f"signed build/{stem}.p7s" in sign.stdout
        assert (cwd / "build" / f"{stem}.p7s").is_file()
    assert sorted(str(p.relative_to(cwd)) for p in cwd.rglob("*.p7s")) == [
        "build/governance/sign_origin_data_encrypt.p7s", "build/permissions/pub.p7s",
        "build/permissions/sub.p7s"]

    verify = run("verify", "--ca", "pki/", "build/governance/sign_origin_data_encrypt.p7s")
    assert verify.exit_code == 0, verify.output
    assert verify.stdout.startswith("build/governance/sign_origin_data_encrypt.p7s: OK "
                                    "(governance, signed by ")
    assert "Permissions CA" in verify.stdout

    every = run("verify", "--ca", "pki", "--json", *sorted(
        str(p.relative_to(cwd)) for p in cwd.rglob("*.p7s")))
    assert every.exit_code == 0, every.output
    doc = json.loads(every.stdout)
    assert doc["schema"] == "govkit.verify/1"
    report = doc["files"]
    assert [r["ok"] for r in report] == [True, True, True]
    assert [r["kind"] for r in report] == ["governance", "permissions", "permissions"]
    assert set(report[0]) == {"file", "ok", "problems", "signer", "kind", "warnings",
                              "signature_ok", "trusted", "targets", "first_only_problems"}


def test_generate_again_keeps_the_pki(cwd, run):
    assert run("generate", "-p", "rtps_sign").exit_code == 0
    keys = _files(cwd / "pki")
    again = run("generate", "-p", "rtps_sign", "-p", "rtps_encrypt")
    assert again.exit_code == 0, again.output
    assert "created" not in again.stdout
    assert _files(cwd / "pki") == keys
    assert (cwd / "build/governance/rtps_encrypt.xml").is_file()


def test_generate_by_alias(cwd, run):
    result = run("generate", "--profile", "rtps_sign_orig_data_encrypt")
    assert result.exit_code == 0, result.output
    assert (cwd / "build/governance/sign_origin_data_encrypt.xml").is_file()
    assert not (cwd / "build/governance/rtps_sign_orig_data_encrypt.xml").exists()


def test_generate_all_profiles_and_options(cwd, run):
    result = run("generate", "--all-profiles", "--out", "o", "--ca", "k", "--domain", "3",
                 "--runner", "perftest")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (cwd / "o" / "governance").iterdir()) == sorted(
        f"{p.name}.xml" for p in PROFILES if p.security)
    assert "single-CA" in result.stdout  # perftest takes one CA
    assert TestPKI(cwd / "k").single_ca
    perm = (cwd / "o" / "permissions" / "pub.xml").read_text()
    assert "<topic>Throughput</topic>" in perm and "<id>3</id>" in perm


def test_unknown_profile(cwd, run):
    result = run("generate", "--profile", "rtps_sign_encrypt")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("govkit: unknown profile 'rtps_sign_encrypt'")
    for p in PROFILES:
        assert p.name in lines[0]
    assert result.stdout == ""
    assert list(cwd.iterdir()) == []  # nothing created, not even the PKI


@pytest.mark.parametrize("args", [["generate"], ["generate", "-p", "rtps_sign", "--domain", "231"],
                                  ["generate", "-p", "rtps_sign", "--runner", "connext"]])
def test_generate_usage_errors(cwd, run, args):
    result = run(*args)
    assert result.exit_code == 2, result.output
    if "--runner" in args:   # a choice of the runner table, refused as bench refuses it
        assert "'connext' is not one of 'cyclone', 'ddsperf', 'fastdds', 'perftest'" in \
            result.stderr
    else:
        assert result.stderr.startswith("govkit: ")
    assert not (cwd / "build").exists() and not (cwd / "pki").exists()


def test_validate_exit_codes_and_json(cwd, run):
    assert run("generate", "-p", "rtps_sign").exit_code == 0
    good = "build/governance/rtps_sign.xml"
    Path("bad_governance.xml").write_text(SEED_BAD_GOVERNANCE)

    ok = run("validate", good, "build/permissions/pub.xml")
    assert ok.exit_code == 0, ok.output
    assert ok.stdout.splitlines() == [f"{good}: valid", "build/permissions/pub.xml: valid"]

    bad = run("validate", "bad_governance.xml")
    assert bad.exit_code == 1, bad.output

    missing = run("validate", "missing.xml")
    assert missing.exit_code == 2, missing.output
    assert missing.stderr.startswith("govkit: missing.xml")

    assert run("validate", good, "bad_governance.xml").exit_code == 1
    assert run("validate", good, "bad_governance.xml", "missing.xml").exit_code == 2

    js = run("validate", "--json", good, "bad_governance.xml", "missing.xml")
    assert js.exit_code == 2
    doc = json.loads(js.stdout)
    assert doc["schema"] == "govkit.validate/1"
    report = doc["files"]
    assert [r["file"] for r in report] == [good, "bad_governance.xml", "missing.xml"]
    assert [r["valid"] for r in report] == [True, False, False]
    assert report[0]["findings"] == []
    (finding,) = report[1]["findings"]
    assert finding == {"file": "bad_governance.xml", "line": BAD_LINE, "column": BAD_COLUMN,
                       "message": finding["message"]}
    assert "ENCRYPT_WITH_ORIGINAL_AUTHENTICATION" in finding["message"]
    assert "ENCRYPT_WITH_ORIGIN_AUTHENTICATION" in finding["message"]
    assert report[2]["findings"] == [] and "missing.xml" in report[2]["error"]


def test_validate_points_at_the_seed_error(cwd, run):
    Path("seed.xml").write_text(SEED_BAD_GOVERNANCE)
    assert SEED_BAD_GOVERNANCE.splitlines()[BAD_LINE - 1].index("<") + 1 == BAD_COLUMN
    assert "ORIGINAL" in SEED_BAD_GOVERNANCE.splitlines()[BAD_LINE - 1]
    result = run("validate", "seed.xml")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    assert re.match(rf"seed\.xml:{BAD_LINE}:{BAD_COLUMN}: metadata_protection_kind: ", lines[0])
    assert "did you mean ENCRYPT_WITH_ORIGIN_AUTHENTICATION?" in lines[0]


def test_validate_signed_file(cwd, run):
    assert run("generate", "-p", "rtps_sign").exit_code == 0
    assert run("sign").exit_code == 0
    result = run("validate", "build/governance/rtps_sign.p7s")
    assert result.exit_code == 0, result.output


def test_verify_tampered_exits_1(cwd, run):
    assert run("generate", "-p", "rtps_encrypt").exit_code == 0
    assert run("sign", "--ca", "pki").exit_code == 0
    p7s = cwd / "build/governance/rtps_encrypt.p7s"
    data = p7s.read_bytes()
    p7s.write_bytes(data.replace(b"<max>230</max>", b"<max>200</max>", 1))
    result = run("verify", "--ca", "pki/", str(p7s.relative_to(cwd)))
    assert result.exit_code == 1, result.output
    assert "content digest mismatch" in result.stdout
    assert "OK" not in result.stdout


def test_verify_errors(cwd, run):
    assert run("generate", "-p", "rtps_sign").exit_code == 0
    assert run("sign").exit_code == 0
    no_ca = run("verify", "--ca", "nowhere", "build/governance/rtps_sign.p7s")
    assert no_ca.exit_code == 2 and no_ca.stderr.startswith("govkit: ")
    missing = run("verify", "missing.p7s")
    assert missing.exit_code == 2 and missing.stderr.startswith("govkit: ")
    # an unsigned document is not a signed one
    plain = run("verify", "build/governance/rtps_sign.xml")
    assert plain.exit_code == 1 and "malformed" in plain.stdout
    # the wrong CA: the identity CA did not sign it
    wrong = run("verify", "--ca", "pki/identity_ca.pem", "build/governance/rtps_sign.p7s")
    assert wrong.exit_code == 1 and "not the Permissions CA" in wrong.stdout


def test_verify_corrupt_signature_is_reported_not_raised(cwd, run):
    assert run("generate", "-p", "rtps_sign").exit_code == 0
    assert run("sign").exit_code == 0
    p7s = cwd / "build/governance/rtps_sign.p7s"
    # X.509 version 3 (value 2) -> 4 (value 3) in the embedded certificate: unparsable
    data = p7s.read_bytes()
    head, _, rest = data.partition(b'filename="smime.p7s"\n\n')
    b64, _, tail = rest.partition(b"\n\n--")
    der = base64.b64decode(b64.replace(b"\n", b""))
    der = der.replace(b"\xa0\x03\x02\x01\x02", b"\xa0\x03\x02\x01\x03", 1)
    p7s.write_bytes(head + b'filename="smime.p7s"\n\n' + base64.encodebytes(der) + b"\n--" + tail)
    result = CliRunner().invoke(app, ["verify", str(p7s)])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code == 1


def test_sign_directory_with_an_invalid_document(cwd, run):
    assert run("generate", "-p", "rtps_sign").exit_code == 0
    bad = cwd / "build" / "governance" / "seed.xml"
    bad.write_text(SEED_BAD_GOVERNANCE)
    result = run("sign", "--ca", "pki", "build")
    assert result.exit_code == 1, result.output
    assert not bad.with_suffix(".p7s").exists()
    assert f"build/governance/seed.xml:{BAD_LINE}:{BAD_COLUMN}:" in result.stderr
    assert "not signed" in result.stderr
    # the valid ones are still signed
    assert (cwd / "build/governance/rtps_sign.p7s").is_file()
    assert (cwd / "build/permissions/pub.p7s").is_file()


def test_sign_with_nothing_to_sign(cwd, run):
    assert run("pki", "init").exit_code == 0
    Path("empty").mkdir()
    result = run("sign", "empty")
    assert result.exit_code == 2
    assert "govkit generate" in result.stderr


def test_version(run):
    result = run("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"govkit {__version__}"


def test_pki_init_twice_keeps_keys(cwd, run):
    first = run("pki", "init", "pki")
    assert first.exit_code == 0, first.output
    assert "wrote pki/pub.key" in first.stdout
    keys = _files(cwd / "pki")
    second = run("pki", "init", "pki")
    assert second.exit_code == 0, second.output
    assert "already complete" in second.stdout and "nothing written" in second.stdout
    assert _files(cwd / "pki") == keys
    forced = run("pki", "init", "pki", "--force")
    assert forced.exit_code == 0
    assert _files(cwd / "pki")["pub.key"] != keys["pub.key"]


def test_no_arguments_shows_help(run):
    result = run()
    assert "generate" in result.output and "verify" in result.output


# ------------------------------------------------------------------ sign/verify never create a CA


@pytest.mark.parametrize("command", [["sign"], ["verify", "x.p7s"]])
def test_sign_and_verify_never_create_a_ca(cwd, run, command):
    assert run("generate", "-p", "rtps_sign").exit_code == 0
    Path("x.p7s").write_text("x")
    before = sorted(str(p) for p in cwd.rglob("*"))
    result = run(*command, "--ca", "typo/")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("govkit: typo") and "never creates" in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert sorted(str(p) for p in cwd.rglob("*")) == before  # nothing created or signed


def test_sign_refuses_a_permissions_ca_key_that_does_not_match(cwd, run):
    assert run("generate", "-p", "rtps_sign").exit_code == 0
    assert run("pki", "init", "other").exit_code == 0
    Path("pki/permissions_ca.key").write_bytes(Path("other/permissions_ca.key").read_bytes())
    result = run("sign", "--ca", "pki")
    assert result.exit_code == 2, result.output
    assert "does not belong to the certificate" in result.stderr
    assert not list(cwd.rglob("*.p7s"))


def test_verify_reports_every_file(cwd, run):
    assert run("generate", "-p", "rtps_sign").exit_code == 0
    assert run("sign").exit_code == 0
    good = "build/governance/rtps_sign.p7s"
    result = run("verify", good, "missing.p7s", "build/permissions/pub.p7s")
    assert result.exit_code == 2, result.output
    assert result.stdout.splitlines()[0].startswith(f"{good}: OK (governance")
    assert result.stdout.splitlines()[1].startswith("build/permissions/pub.p7s: OK")
    assert result.stderr.startswith("govkit: missing.p7s: cannot read")
    js = run("verify", "--json", good, "missing.p7s")
    assert js.exit_code == 2
    report = json.loads(js.stdout)["files"]
    assert [(r["file"], r["ok"]) for r in report] == [(good, True), ("missing.p7s", False)]


def test_verify_accepts_a_ca_certificate_file(cwd, run):
    assert run("generate", "-p", "rtps_sign").exit_code == 0
    assert run("sign").exit_code == 0
    result = run("verify", "--ca", "pki/permissions_ca.pem", "build/governance/rtps_sign.p7s")
    assert result.exit_code == 0, result.output


def test_pki_init_days_too_large_is_a_usage_error(cwd, run):
    result = run("pki", "init", "--days", "1000000000")
    assert result.exit_code == 2
    assert result.stderr.startswith("govkit: --days must be between 1 and ")
    assert len(result.stderr.splitlines()) == 1
    assert not (cwd / "pki").exists()


def test_generate_skips_identities_of_an_earlier_identity_ca(cwd, run, pki_dir):
    assert run("pki", "init").exit_code == 0
    for suffix in (".pem", ".key"):
        Path(f"pki/old{suffix}").write_bytes((pki_dir / f"pub{suffix}").read_bytes())
    result = run("generate", "-p", "rtps_sign")
    assert result.exit_code == 0, result.output
    assert "pki/old.pem was not issued by the current Identity CA" in result.stderr
    assert not (cwd / "build/permissions/old.xml").exists()
    assert (cwd / "build/permissions/pub.xml").exists()
    forced = run("pki", "init", "--force")  # reissues every participant, old included
    assert forced.exit_code == 0 and "wrote pki/old.pem" in forced.stdout
    assert "not issued" not in forced.stderr
    assert run("generate", "-p", "rtps_sign").exit_code == 0
    assert (cwd / "build/permissions/old.xml").exists()


@pytest.mark.parametrize(("command", "option", "choices"), [
    (["pki", "init"], "--key-type", "[ec-p256|rsa-2048]"),
    (["generate"], "--runner", "[cyclone|ddsperf|fastdds|perftest]"),
    (["bench"], "--runner", "[cyclone|ddsperf|fastdds|perftest]"),
])
def test_enumerated_options_show_their_choices(run, command, option, choices, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")       # a line wide enough for the whole list
    result = run(*command, "--help")
    line = next(x for x in result.stdout.splitlines() if option in x)
    assert choices in line


def test_ca_help_says_who_creates_a_pki(run):
    def help_text(command: str) -> str:  # rich wraps the help in a box: unwrap it
        return " ".join(run(command, "--help").stdout.replace("│", " ").split())

    assert "created there if it has none" in help_text("generate")
    for command in ("sign", "verify"):
        assert "never created" in help_text(command), command


@pytest.mark.parametrize("command", [["pki", "init", "pki"], ["generate", "--profile", "rtps_sign"],
                                     ["sign"], ["verify", "x.p7s"]])
@pytest.mark.parametrize("jobs", ["0", "-1", "100000"])
def test_jobs_outside_its_range_is_a_usage_error_before_anything_runs(run, cwd, command, jobs):
    """Issue 23: --jobs 100000 forked a process per document; 0 and negatives were taken."""
    result = run(*command, "--jobs", jobs)
    assert result.exit_code == 2
    assert f"{jobs} is not in the range 1<=x<=64" in result.output
    assert list(cwd.iterdir()) == []


def test_paths_are_printed_verbatim_never_as_markup_or_emoji(run, cwd):
    """Issue 23: a directory named `X[/red]` crashed sign (rich markup) and `:x:.xml` was
    printed as an emoji; every user-supplied string is printed as it is."""
    pki, out = "p[/red]:x:", "o[bold]:x:"
    made = run("generate", "--profile", "rtps_sign", "--ca", pki, "--out", out)
    assert made.exit_code == 0, made.output
    assert f"created a test PKI in {pki}/" in made.output
    assert f"wrote {out}/governance/rtps_sign.xml" in made.output
    signed = run("sign", "--ca", pki, out)
    assert signed.exit_code == 0, signed.output
    assert f"signed {out}/governance/rtps_sign.p7s" in signed.output
    assert "❌" not in made.output + signed.output
    (cwd / "x[red]:x:.xml").write_text("<not governance/>")
    bad = run("validate", "x[red]:x:.xml")
    assert bad.exit_code == 1 and "x[red]:x:.xml:" in bad.output


@pytest.mark.parametrize("name", ["esc\x1b[2Jx.xml", "t\x1b]0;owned\x07.xml",
                                  "cr\rfake: valid.xml", "c1\x9b31m.xml",
                                  "rlo\u202elmx.ngis_sptr", "lri\u2066x\u2069.xml",
                                  "rlm\u200fx.xml"])
def test_control_characters_in_names_are_shown_never_obeyed(run, cwd, pki_dir, name):
    """A file name holding an escape sequence reached the terminal raw (validate, verify,
    sign, every `govkit: ...` error): ESC could clear the screen or retitle the window, and
    rich dropped CR and BEL without a trace. Every string printed shows them as \\xNN, and
    a bidi override, isolate or mark as \\uNNNN ('rlo\\u202elmx.ngis_sptr' reads as
    'rlortps_sign.xml' where it is obeyed), as the report pages do."""
    (cwd / name).write_text("<not governance/>")
    shown = name.encode("unicode_escape").decode().replace("\\r", "\\x0d")
    shown = re.sub(r"\\u00([0-9a-f]{2})", r"\\x\1", shown)
    for args, code in ((["validate", name], 1), (["sign", "--ca", str(pki_dir), name], 1),
                       (["explain", name], 2), (["validate", name + ".missing"], 2),
                       (["verify", "--ca", str(pki_dir), name], 1)):
        r = run(*args)
        assert r.exit_code == code, (args, r.output)
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e"
                             "\u2066-\u2069]", r.output), (args, r.output)
        assert shown in r.output, (args, shown, r.output)


def test_a_newline_in_a_file_name_cannot_split_or_forge_a_line(run, cwd, pki_dir):
    """A file named 'x\\nfake.xml: valid' printed each verdict on two lines, the second
    one a forged verdict of a file that does not exist (validate, verify, sign, explain,
    identify, read errors); lint already wrote \\n. Each name is one line now."""
    bad, good = "nl\nfake.xml: valid", "ok\nfake.xml"
    (cwd / bad).write_text("<not governance/>")
    (cwd / good).write_bytes(GovernanceDocument(get_profile("rtps_sign")).render())
    for args, code in ((["validate", bad], 1), (["validate", good], 0),
                       (["validate", bad + ".missing"], 2), (["explain", bad], 2),
                       (["explain", good], 0), (["identify", bad], 2), (["identify", good], 0),
                       (["sign", "--ca", str(pki_dir), bad], 1),
                       (["sign", "--ca", str(pki_dir), good], 0),
                       (["verify", "--ca", str(pki_dir), "ok\nfake.p7s"], 0),
                       (["verify", "--ca", str(pki_dir), bad], 1)):
        r = run(*args)
        assert r.exit_code == code, (args, r.output)
        assert not any(line.startswith("fake") for line in r.output.splitlines()), \
            (args, r.output)
        assert "nl\\nfake.xml: valid" in r.output or "ok\\nfake." in r.output, (args, r.output)


def test_python_dash_m_govkit_is_the_cli():
    done = subprocess.run([sys.executable, "-m", "govkit", "--version"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == f"govkit {__version__}"


def test_one_reason_shared_by_many_files_is_counted_not_repeated(capsys):
    """A full disk during a fleet of 10,000 documents: a line per document would bury the
    reason, so the first three are shown and the rest counted."""
    from govkit.cli.common import print_errors
    errors = [GovkitError(f"build/permissions/p{i}.xml: cannot write: No space left on device")
              for i in range(400)] + [GovkitError("pki/q.pem: not issued by the Identity CA")]
    print_errors(errors)
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [
        "govkit: build/permissions/p0.xml: cannot write: No space left on device",
        "govkit: build/permissions/p1.xml: cannot write: No space left on device",
        "govkit: build/permissions/p2.xml: cannot write: No space left on device",
        "govkit: pki/q.pem: not issued by the Identity CA",
        "govkit: … and 397 more with the same error: cannot write: No space left on device"]


def test_shell_completion_script_and_answers():
    """`govkit completion bash` prints a script; the shell's request it makes (the
    _GOVKIT_COMPLETE variable) gets commands and options back, from the real executable."""
    govkit = str(Path(sys.executable).with_name("govkit"))
    script = subprocess.run([govkit, "completion", "bash"], capture_output=True, text=True,
                            timeout=60)
    assert script.returncode == 0 and "_GOVKIT_COMPLETE=complete_bash" in script.stdout
    assert "complete -o default -F _govkit_completion govkit" in script.stdout

    def ask(words: str) -> list[str]:
        env = {"COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1),
               "_GOVKIT_COMPLETE": "complete_bash", "PATH": "/usr/bin:/bin"}
        return subprocess.run([govkit], env=env, capture_output=True, text=True,
                              timeout=60).stdout.split()

    assert ask("govkit be") == ["bench"]
    assert {"--profile", "--profiles"} <= set(ask("govkit bench --pro"))
    # list options complete their names, after a comma too (issue 23, item 1)
    assert ask("govkit bench --profile sign_submsg_encrypt_") == \
        ["sign_submsg_encrypt_origin_data_encrypt"]
    assert set(ask("govkit generate -p none,rtps_e")) == {"none,rtps_encrypt"}
    assert ask("govkit completion z") == ["zsh"]
    for shell in ("zsh", "fish"):
        out = subprocess.run([govkit, "completion", shell], capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 0 and "_GOVKIT_COMPLETE" in out.stdout
    bad = subprocess.run([govkit, "completion", "tcsh"], capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and "unknown shell 'tcsh'" in bad.stderr


@pytest.mark.parametrize("env, said", [
    ({"COMP_WORDS": "govkit bench --profile"}, "COMP_CWORD not set"),
    ({"COMP_CWORD": "1"}, "COMP_WORDS not set"),
    ({"COMP_WORDS": "govkit x", "COMP_CWORD": "abc"}, "COMP_CWORD must be a word index"),
    ({"COMP_WORDS": "govkit x", "COMP_CWORD": "\u00b2"}, "COMP_CWORD must be a word index"),
    ({"COMP_WORDS": "govkit x", "COMP_CWORD": "9" * 5000}, "COMP_CWORD must be a word index"),
    ({"COMP_WORDS": b"govkit \xff", "COMP_CWORD": "1"}, "COMP_WORDS is not UTF-8 text"),
    ({"COMP_WORDS": "govkit " + "x " * 40000, "COMP_CWORD": "1"}, "COMP_WORDS is 80007 chara"),
    ({"_GOVKIT_COMPLETE": b"complete_\xff"}, "_GOVKIT_COMPLETE is not UTF-8 text"),
    ({"_GOVKIT_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": b"govkit \xfe"},
     "_TYPER_COMPLETE_ARGS is not UTF-8 text"),
])
def test_hostile_completion_variables_are_one_line_and_exit_2(env, said):
    """Variables no shell's script sends were KeyError/ValueError, exit 3 (issue 37, 15)."""
    govkit = str(Path(sys.executable).with_name("govkit"))
    environ = {b"PATH": b"/usr/bin:/bin", b"_GOVKIT_COMPLETE": b"complete_bash"}
    environ.update({k.encode(): v if isinstance(v, bytes) else v.encode()
                    for k, v in env.items()})
    done = subprocess.run([govkit], env=environ, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("govkit: completion: ") and said in done.stderr
    assert done.stderr.count("\n") == 1 and done.stdout == ""


def test_messages_say_what_happened(tmp_path):
    """issue 23: `lint` of an unreadable file does not say "no findings"; `sign` before
    `generate` names what to do; `generate --profile none` says why no governance."""
    govkit = str(Path(sys.executable).with_name("govkit"))

    def run(*args):
        return subprocess.run([govkit, *args], cwd=tmp_path, capture_output=True, text=True,
                              timeout=120)

    r = run("lint", "missing.xml")
    assert r.returncode == 2 and "no findings" not in r.stdout
    assert "1 file(s), target omg: 1 unreadable (not linted)" in r.stdout
    assert run("pki", "init").returncode == 0
    r = run("sign")
    assert r.returncode == 2
    assert "build: no such directory: run `govkit generate` first" in r.stderr
    r = run("generate", "--profile", "none")
    assert r.returncode == 0 and "none: no governance document" in r.stderr
    assert not (tmp_path / "build" / "governance").exists()


def test_stray_identities_in_the_pki_are_named_and_skipped(tmp_path):
    """issue 23: files put in pki/ by hand under names no participant may have (a space, a
    newline, `--`) get no permissions document, and govkit says which and why."""
    govkit = str(Path(sys.executable).with_name("govkit"))
    assert subprocess.run([govkit, "pki", "init"], cwd=tmp_path, capture_output=True,
                          timeout=120).returncode == 0
    for stray in ("a b", "--x", "n\nl"):
        for suffix in (".pem", ".key"):
            (tmp_path / "pki" / f"{stray}{suffix}").write_bytes(
                (tmp_path / "pki" / f"pub{suffix}").read_bytes())
    r = subprocess.run([govkit, "generate", "--profile", "rtps_sign"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "build" / "permissions").iterdir()
                  if p.name != RECORD) == ["pub.xml", "sub.xml"]   # (generate's record)
    assert r.stderr.count("ignored, no permissions written") == 3
    assert "'pki/n\\nl.pem'" in r.stderr and "invalid" in r.stderr
