"""One verdict per target (issue 23, CLI and CI conventions 5, and item 17): `validate` and
`sign` refused domain 231 for Cyclone DDS while `lint --target omg` called it a warning,
under two rule ids (lint/domain-range and GK010) and two limits (230 and 232). Now the
three commands take the same --target (default omg, or the lint table's), run the same
rule GK010, and give the same verdict; the target states its limit and why. `verify` takes
the same --target too and gives that verdict on the signed document."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from govkit.catalog.profiles import get_profile
from govkit.catalog.runners import runner_info
from govkit.catalog.targets import RTPS_MAX_DOMAIN_ID, TARGETS
from govkit.cli.main import app
from govkit.common.limits import MAX_DOMAIN_ID
from govkit.documents.render import DomainSet, GovernanceDocument, PermissionsDocument
from govkit.pki.issuance import init_pki

DOMAINS = (230, 231, 232, 233)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    pki, _ = init_pki(tmp_path_factory.mktemp("pki") / "pki", participants=["pub"])
    return pki


@pytest.fixture(scope="module")
def documents(pki, tmp_path_factory) -> dict[tuple[str, int], Path]:
    """A governance and a permissions document whose domains end at each of DOMAINS (a
    hand-made DomainSet: `--domain` itself stops at 230)."""
    root = tmp_path_factory.mktemp("docs")
    made = {}
    for top in DOMAINS:
        domains = DomainSet(((0, top),))
        for kind, doc in (("governance", GovernanceDocument(get_profile("rtps_sign"), domains)),
                          ("permissions", PermissionsDocument.for_participant(
                              pki, "pub", runner_info("ddsperf"), domains))):
            path = root / f"{kind}-{top}.xml"
            path.write_bytes(doc.render())
            made[kind, top] = path
    return made


def refused_by(target: str, domain: int) -> bool:
    """What the target table says: above max_domain_id the target's implementation (all of
    them, for omg) refuses the document."""
    return domain > TARGETS[target].max_domain_id


def _run(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("kind", ["governance", "permissions"])
def test_validate_sign_and_lint_give_one_verdict(pki, documents, kind, target, tmp_path,
                                                 monkeypatch):
    monkeypatch.chdir(tmp_path)
    for domain in DOMAINS:
        document = tmp_path / f"{kind}-{domain}.xml"
        document.write_bytes(documents[kind, domain].read_bytes())
        validate = _run("validate", "--target", target, str(document))
        lint = _run("lint", "--target", target, "--select", "GK010", "--output-format",
                    "concise", str(document))
        sign = _run("sign", "--target", target, "--ca", str(pki.directory), str(document))
        want = 1 if refused_by(target, domain) else 0
        assert (validate.exit_code, lint.exit_code, sign.exit_code) == (want, want, want), \
            (kind, target, domain, validate.output, lint.output, sign.output)
        assert document.with_suffix(".p7s").exists() == (want == 0)
        # the same rule, the same id and the same severity in all three
        said = [re.findall(r"GK\d{3} (?:error|warning)", r.output) for r in (validate, lint)]
        said.append(re.findall(r"GK\d{3} (?:error|warning)", sign.stderr))
        expected = ["GK010 error"] if want else \
            ["GK010 warning"] if target == "omg" and domain > MAX_DOMAIN_ID else []
        assert all(set(s) == set(expected) for s in said), (target, domain, said)
        assert "lint/" not in validate.output + sign.output


def test_the_target_states_the_limit_and_why(documents, tmp_path, monkeypatch):
    """Item 17: one rule, and each limit said with the version it holds for and its
    reason: Cyclone DDS 0.10's parser stops at 230, the RTPS port mapping at 232."""
    monkeypatch.chdir(tmp_path)
    assert TARGETS["cyclone"].max_domain_id == MAX_DOMAIN_ID == 230
    assert {TARGETS[t].max_domain_id for t in ("omg", "fastdds", "connext")} == \
        {RTPS_MAX_DOMAIN_ID} == {232}
    cyclone = _run("validate", "--target", "cyclone", str(documents["governance", 231]))
    assert "is above 230, the highest domain id Cyclone DDS 0.10 accepts" in cyclone.stdout
    assert "access-control parser refuses any domain id above 230" in cyclone.stdout
    fastdds = _run("validate", "--target", "fastdds", str(documents["governance", 233]))
    assert "is above 232, the highest domain id eProsima Fast DDS 2.9 accepts" in fastdds.stdout
    assert "RTPS default port mapping" in fastdds.stdout
    omg = _run("validate", str(documents["permissions", 231]))
    assert omg.exit_code == 0 and "GK010 warning" in omg.stdout
    assert "Cyclone DDS 0.10" in omg.stdout and "the specification allows up to 232" in \
        omg.stdout
    beyond = _run("validate", str(documents["permissions", 233]))
    assert beyond.exit_code == 1
    assert "is above 232, the highest domain id the specification allows: the RTPS default " \
           "port mapping" in beyond.stdout


def test_the_lint_table_target_is_validates_and_signs_default(pki, documents, tmp_path,
                                                              monkeypatch):
    """A repository that says `[lint] target = "cyclone"` gets Cyclone's verdict from all
    three commands without the option; the command line still wins."""
    monkeypatch.chdir(tmp_path)
    document = tmp_path / "g.xml"
    document.write_bytes(documents["governance", 231].read_bytes())
    assert _run("validate", str(document)).exit_code == 0
    (tmp_path / "govkit.toml").write_text('[lint]\ntarget = "cyclone"\n')
    for args in (["validate"], ["lint"], ["sign", "--ca", str(pki.directory)]):
        assert _run(*args, str(document)).exit_code == 1, args
    assert not document.with_suffix(".p7s").exists()
    assert _run("validate", "--target", "omg", str(document)).exit_code == 0
    (tmp_path / "govkit.toml").write_text('[lint]\ntarget = "vms"\n')
    bad = _run("validate", str(document))
    assert bad.exit_code == 2 and "[lint] target: expected one of omg, cyclone" in bad.output


def test_verify_takes_the_target_default_and_lint_table_of_validate(pki, documents, tmp_path,
                                                                    monkeypatch):
    """`sign` (default omg) signs domain 231 with a warning; `verify` gives the signed
    document validate's verdict under the same --target, default and lint table: OK with
    the warning naming Cyclone DDS 0.10 under omg, refused under cyclone. The JSON of
    both says the target."""
    import json

    from helpers.json_schemas import assert_valid
    monkeypatch.chdir(tmp_path)
    document = tmp_path / "p.xml"
    document.write_bytes(documents["permissions", 231].read_bytes())
    signed = _run("sign", "--ca", str(pki.directory), str(document))
    assert signed.exit_code == 0 and "GK010 warning" in signed.stderr
    p7s = str(document.with_suffix(".p7s"))
    ca = ("--ca", str(pki.directory))
    verify = _run("verify", *ca, p7s)
    assert verify.exit_code == 0, verify.output
    assert f"{p7s}: OK (permissions, signed by " in verify.stdout
    assert f"{p7s}: warning: signed document: GK010 warning: domain id 231" in verify.stdout
    assert "Cyclone DDS 0.10" in verify.stdout
    cyclone = _run("verify", "--target", "cyclone", *ca, p7s)
    assert cyclone.exit_code == 1 and f"{p7s}: OK" not in cyclone.stdout
    assert f"{p7s}: signature OK (signed by " in cyclone.stdout   # the document is refused
    assert f"{p7s}: signed document is invalid: GK010 error: domain id 231" in cyclone.stdout
    shown = json.loads(_run("verify", "--json", *ca, p7s).stdout)
    assert_valid(shown, "verify")
    assert shown["target"] == "omg" and shown["files"][0]["ok"] is True
    assert shown["files"][0]["warnings"][0].startswith("signed document: GK010 warning: ")
    strict = json.loads(_run("verify", "--json", "--target", "cyclone", *ca, p7s).stdout)
    assert_valid(strict, "verify")
    assert strict["target"] == "cyclone" and strict["files"][0]["ok"] is False
    (tmp_path / "govkit.toml").write_text('[lint]\ntarget = "cyclone"\n')
    assert _run("verify", *ca, p7s).exit_code == 1
    assert _run("verify", "--target", "omg", *ca, p7s).exit_code == 0
    (tmp_path / "govkit.toml").unlink()
    document.write_bytes(documents["permissions", 230].read_bytes())
    assert _run("sign", "--ca", str(pki.directory), str(document)).exit_code == 0
    assert _run("verify", "--target", "cyclone", *ca, p7s).exit_code == 0
    document.write_bytes(documents["permissions", 231].read_bytes())
    shown = json.loads(_run("validate", "--json", str(document)).stdout)
    assert shown["target"] == "omg" and shown["files"][0]["valid"] is True
    assert shown["files"][0]["warnings"][0]["message"].startswith("GK010 warning: ")
    strict = json.loads(_run("validate", "--json", "--target", "cyclone", str(document)).stdout)
    assert strict["files"][0]["valid"] is False and strict["files"][0]["warnings"] == []


@pytest.fixture(scope="module")
def openssl_signed(pki, documents, tmp_path_factory) -> dict[tuple[str, int], Path]:
    """Every document of `documents` signed by `openssl smime -sign -text` (not by govkit,
    whose `sign` refuses what its target refuses), with the PKI's Permissions CA."""
    root = tmp_path_factory.mktemp("signed")
    out = {}
    for (kind, domain), xml in documents.items():
        out[kind, domain] = root / f"{kind}-{domain}.p7s"
        subprocess.run(["openssl", "smime", "-sign", "-text", "-md", "sha256", "-signer",
                        str(pki.permissions_ca), "-inkey", str(pki.permissions_ca_key),
                        "-in", str(xml), "-out", str(out[kind, domain])],
                       check=True, capture_output=True)
    return out


@pytest.mark.parametrize("target", list(TARGETS))
def test_verify_gives_validates_verdict_on_the_signed_document(pki, documents, openssl_signed,
                                                               target, tmp_path, monkeypatch):
    """The same exit code, rule and severity as `validate --target` on the document signed,
    at each domain limit, governance and permissions alike."""
    monkeypatch.chdir(tmp_path)
    for (kind, domain), p7s in openssl_signed.items():
        validate = _run("validate", "--target", target, str(documents[kind, domain]))
        verify = _run("verify", "--target", target, "--ca", str(pki.directory), str(p7s))
        want = 1 if refused_by(target, domain) else 0
        assert verify.exit_code == validate.exit_code == want, \
            (kind, target, domain, validate.output, verify.output)
        said = [sorted(re.findall(r"GK\d{3} (?:error|warning)", r.stdout))
                for r in (validate, verify)]
        assert said[0] == said[1], (kind, target, domain, said)
        assert (f"{p7s}: OK ({kind}, signed by " in verify.stdout) == (want == 0)


def test_sign_renew_takes_the_target_too(pki, documents, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    document = tmp_path / "p.xml"
    document.write_bytes(documents["permissions", 231].read_bytes())
    ca = str(pki.directory)
    assert _run("sign", "--renew", "--target", "cyclone", "--ca", ca, str(document)) \
        .exit_code == 1
    assert _run("sign", "--renew", "--ca", ca, str(document)).exit_code == 0


@pytest.mark.parametrize("processes", [1, 2], ids=["in-process", "pool"])
def test_sign_files_gives_each_documents_verdict_and_warnings_from_workers(
        pki, documents, tmp_path, processes):
    """`sign` over many files (the worker pool above 200): the target reaches every worker,
    and each warning comes back to be printed."""
    from govkit.common import workers
    from govkit.generate.fleet import sign_files
    data = documents["permissions", 231].read_bytes()
    count = workers.IN_PROCESS_BELOW + 10 if processes > 1 else 3
    for i in range(count):
        (tmp_path / f"p{i}.xml").write_bytes(data)
    warnings: list[str] = []
    signed, errors = sign_files([tmp_path], pki.permissions_ca, pki.permissions_ca_key,
                                processes, "omg", warnings)
    assert (len(signed), errors, len(warnings)) == (count, [], count)
    assert all("GK010 warning" in w and "Cyclone DDS 0.10" in w for w in warnings)
    for p in tmp_path.glob("*.p7s"):
        p.unlink()
    signed, errors = sign_files([tmp_path], pki.permissions_ca, pki.permissions_ca_key,
                                processes, "cyclone")
    assert signed == [] and len(errors) == count
    assert all("GK010 error" in str(e) and e.exit_code == 1 for e in errors)
