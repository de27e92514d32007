"""`govkit export sros2` says nothing false and leaves nothing behind (issue 37, items 3, 4,
14 and 15): a revoked enclave is left out and every enclave gets the CRL rmw reads; the
keystore enforces its grants unless told not to (and then says so loudly); a killed export
leaves no hidden copy of the keys; any keystore name works and the printed hint is
shell-quoted (a name that is not one printable line, or '.', '..', '/', is refused before
anything is written); a permissions file that is really a signed governance is one line,
exit 1."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import enclave_project, govkit

from govkit.generate.sros2 import staging_prefixes


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    return enclave_project(tmp_path_factory.mktemp("sros2-hard"))


@pytest.fixture
def copy(made, tmp_path) -> Path:
    root = tmp_path / "copy"
    shutil.copytree(made, root)
    return root


def _export(root: Path, keystore: Path, *extra: str):
    return govkit("export", "sros2", str(keystore), "--ca", str(root / "pki"), "--build",
                str(root / "build"), *extra)


def _openssl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=30)


# --------------------------------------------------------------------------- item 3


def test_a_revoked_enclave_is_left_out_and_every_enclave_gets_the_crl(copy, tmp_path):
    revoke = govkit("pki", "revoke", "/talker_listener/talker", "--ca", str(copy / "pki"))
    assert revoke.exit_code == 0, revoke.output
    ks = tmp_path / "ks"
    result = _export(copy, ks)
    assert result.exit_code == 0, result.output
    assert "/talker_listener/talker left out: its certificate is revoked" in result.stderr
    assert not (ks / "enclaves/talker_listener/talker").exists()
    listener = ks / "enclaves/talker_listener/listener"
    crl = (copy / "pki" / "identity_ca.crl.pem").read_bytes()
    assert (listener / "crl.pem").read_bytes() == crl
    assert "crl.pem" in result.stdout
    # what rmw's plugins do with it: the listener's certificate passes a CRL check, the
    # revoked talker's does not
    ok = _openssl("verify", "-crl_check", "-CAfile", str(listener / "identity_ca.cert.pem"),
                  "-CRLfile", str(listener / "crl.pem"), str(listener / "cert.pem"))
    assert ok.returncode == 0, ok.stderr
    bad = _openssl("verify", "-crl_check", "-CAfile", str(listener / "identity_ca.cert.pem"),
                   "-CRLfile", str(listener / "crl.pem"),
                   str(copy / "pki" / "+talker_listener+talker.pem"))
    assert bad.returncode != 0 and "revoked" in bad.stdout + bad.stderr


def test_the_manifest_key_and_the_retired_keys_are_never_exported(copy, tmp_path):
    """Two things a PKI holds that no keystore may: the manifest's key (whoever holds it can
    forge a manifest that clears any certificate) and the revoked key and certificate
    `pki renew --new-key` moved to retired/. The re-keyed enclave goes out with its new
    certificate and key, the CRL naming the old one."""
    pki = copy / "pki"
    talker = "/talker_listener/talker"
    for args in (("pki", "revoke", talker, "--ca", str(pki)),
                 ("pki", "renew", talker, "--new-key", "--ca", str(pki)),
                 ("generate", "--profile", "rtps_encrypt", "--ca", str(pki), "--out",
                  str(copy / "build"), "--sign")):
        done = govkit(*args)
        assert done.exit_code == 0, done.output
    secrets = [pki / "manifest-key", *sorted((pki / "retired").iterdir())]
    assert len(secrets) == 3, secrets   # the key, and the retired certificate and key
    ks = tmp_path / "ks"
    result = _export(copy, ks)
    assert result.exit_code == 0, result.output
    exported = [p for p in ks.rglob("*") if p.is_file()]
    assert not {p.read_bytes() for p in exported} & {p.read_bytes() for p in secrets}
    assert not [p for p in ks.rglob("*") if "manifest" in p.name or "retired" in p.name]
    enclave = ks / "enclaves/talker_listener/talker"
    for name, source in (("cert.pem", ".pem"), ("key.pem", ".key")):
        assert (enclave / name).read_bytes() == \
            (pki / f"+talker_listener+talker{source}").read_bytes()
    old = next(p for p in secrets if p.suffix == ".pem")
    bad = _openssl("verify", "-crl_check", "-CAfile", str(enclave / "identity_ca.cert.pem"),
                   "-CRLfile", str(enclave / "crl.pem"), str(old))
    assert bad.returncode != 0 and "revoked" in bad.stdout + bad.stderr


def test_without_revocations_no_crl_is_written(made, tmp_path):
    ks = tmp_path / "ks"
    assert _export(made, ks).exit_code == 0
    assert not list(ks.rglob("crl.pem"))


# --------------------------------------------------------------------------- item 4


def _access_control(p7s: Path, tmp_path: Path) -> set[str]:
    text = tmp_path / "gov.txt"
    done = _openssl("smime", "-verify", "-in", str(p7s), "-CAfile",
                    str(p7s.parent / "permissions_ca.cert.pem"), "-no-CApath", "-no-CAstore",
                    "-text", "-out", str(text))
    assert done.returncode == 0, done.stderr
    body = text.read_text()
    return {line.strip() for line in body.splitlines() if "access_control>" in line}


def test_the_keystore_enforces_access_control_by_default(made, tmp_path):
    ks = tmp_path / "ks"
    result = _export(made, ks)
    assert result.exit_code == 0, result.output
    assert "access control: enforced" in result.stdout and "WARNING" not in result.output
    settings = _access_control(ks / "enclaves/talker_listener/talker/governance.p7s",
                               tmp_path)
    assert settings == {"<enable_join_access_control>true</enable_join_access_control>",
                        "<enable_read_access_control>true</enable_read_access_control>",
                        "<enable_write_access_control>true</enable_write_access_control>"}
    # the profile's protection is what it was
    enforced = (made / "build/governance/enforced/rtps_encrypt.xml").read_text()
    assert "<rtps_protection_kind>ENCRYPT</rtps_protection_kind>" in enforced


def test_no_enforce_copies_the_governance_and_says_so_loudly(made, tmp_path):
    ks = tmp_path / "ks"
    result = _export(made, ks, "--no-enforce")
    assert result.exit_code == 0, result.output
    (warning,) = [x for x in result.stderr.splitlines() if "WARNING" in x]
    assert "enforces NO access control" in warning
    assert (ks / "enclaves/governance.p7s").read_bytes() == \
        (made / "build/governance/rtps_encrypt.p7s").read_bytes()


# --------------------------------------------------------------------------- item 14


def _siblings(parent: Path, keystore: str) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name != keystore)


def test_a_killed_exports_staging_directories_are_removed(made, tmp_path):
    """What SIGKILL leaves (a hidden sibling holding private keys, under the old long
    name too) is removed by the next export, which holds the directory's lock."""
    ks = tmp_path / "ks"
    assert _export(made, ks).exit_code == 0
    new_prefix, old_prefix, legacy, _ = staging_prefixes(ks)
    for name in (f"{new_prefix}dead0001", f"{old_prefix}dead0002", f"{legacy}0a0b0c0d"):
        shutil.copytree(ks, tmp_path / name)
    (tmp_path / ".other-hidden-dir").mkdir()   # not an export's: left alone
    result = _export(made, ks, "--force")
    assert result.exit_code == 0, result.output
    assert "removed 3 hidden staging directories" in result.stderr
    assert _siblings(tmp_path, "ks") == [".other-hidden-dir"]


def test_an_export_killed_while_it_writes_leaves_no_key_behind(made, tmp_path):
    """Real SIGKILLs of `govkit export sros2 --force` while its staging directory exists;
    the next export leaves the keystore alone beside nothing."""
    ks = tmp_path / "ks"
    assert _export(made, ks).exit_code == 0
    prefixes = staging_prefixes(ks)
    argv = [sys.executable, "-m", "govkit", "export", "sros2", str(ks), "--ca",
            str(made / "pki"), "--build", str(made / "build"), "--force"]
    killed = 0
    for _ in range(40):
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while proc.poll() is None:
            if any(p.name.startswith(prefixes) for p in tmp_path.iterdir()):
                proc.send_signal(signal.SIGKILL)
                killed += 1
                break
        proc.wait()
        if killed >= 3:
            break
    assert killed >= 1, "no export was caught while staging"
    again = _export(made, ks, "--force")
    assert again.exit_code == 0, again.output
    assert _siblings(tmp_path, "ks") == []


def test_a_240_character_keystore_name_works(made, tmp_path):
    ks = tmp_path / ("k" * 240)
    first = _export(made, ks)
    assert first.exit_code == 0, first.output
    forced = _export(made, ks, "--force")
    assert forced.exit_code == 0, forced.output
    assert _siblings(tmp_path, ks.name) == []


def test_the_printed_hint_is_shell_quoted(made, tmp_path):
    ks = tmp_path / "key store $(touch pwned_ex); `touch pwned_bq`"
    result = _export(made, ks)
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if x.startswith("use it with: "))
    command = line.removeprefix("use it with: ").split("; then `", 1)[0]
    assert command == f"export ROS_SECURITY_KEYSTORE={shlex.quote(str(ks))} " \
                      f"ROS_SECURITY_ENABLE=true ROS_SECURITY_STRATEGY=Enforce"
    pasted = subprocess.run(["bash", "-c", command + '; printf %s "$ROS_SECURITY_KEYSTORE"'],
                            cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert pasted.stdout == str(ks)
    assert not list(tmp_path.glob("pwned*"))


def _tree(root: Path) -> list[tuple[str, int]]:
    return sorted((str(f.relative_to(root)), f.stat().st_mtime_ns) for f in root.rglob("*"))


@pytest.mark.parametrize("name", [".", "..", "", "/", "a/..", "ks\nfake: OK", "ks\x1b[2J",
                                  "ks\udcff"])
@pytest.mark.parametrize("policy", [False, True])
def test_a_keystore_path_no_export_may_write_is_refused_before_anything_is(
        copy, monkeypatch, name, policy):
    """Held-out battery of 2026-12-07 (issue 46): export wrote BUILD/governance/enforced/
    (and with --policy, the policy's documents) before it refused '.', '..', '' or '/';
    and a name holding a newline broke the printed `use it with:` line in two."""
    monkeypatch.chdir(copy / "build")                 # '..' is then the project itself
    before = _tree(copy)
    extra = ["--policy", str(Path(__file__).parents[1] / "data/ros2/acceptance.policy.xml")] \
        if policy else []
    result = _export(copy, Path(name), "--force", *extra)
    assert result.exit_code == 2, result.output
    (line,) = result.output.splitlines()
    assert "name the keystore directory by its own name" in line or \
        "must be printable text on one line" in line, line
    assert _tree(copy) == before


def test_an_existing_keystore_is_refused_before_policy_generates(copy, tmp_path):
    ks = tmp_path / "ks"
    (ks / "public").mkdir(parents=True)
    (ks / "public" / "ca.cert.pem").write_text("x")
    before = _tree(copy)
    policy = Path(__file__).parents[1] / "data/ros2/acceptance.policy.xml"
    result = _export(copy, ks, "--policy", str(policy))
    assert result.exit_code == 2 and "already exists" in result.output, result.output
    assert _tree(copy) == before


# --------------------------------------------------------------------------- item 15


def test_a_signed_governance_as_permissions_is_one_line_exit_1(copy, tmp_path):
    shutil.copyfile(copy / "build/governance/rtps_encrypt.p7s",
                    copy / "build/permissions/+talker_listener+talker.p7s")
    ks = tmp_path / "ks"
    result = _export(copy, ks)
    assert result.exit_code == 1, result.output
    (line,) = result.stderr.splitlines()
    assert line == (f"govkit: {copy}/build/permissions/+talker_listener+talker.p7s: is a "
                    f"signed governance document, not permissions (signed permissions); "
                    f"regenerate it with `govkit generate --sign`")
    assert not ks.exists() and _siblings(tmp_path, "ks") == ["copy"]
    assert os.listdir(tmp_path) == ["copy"]
