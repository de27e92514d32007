"""`govkit export sros2`: the keystore layout rmw reads, every file checked with the real
`openssl` as rmw's plugins would check it, and the keystore written whole or not at all."""

from __future__ import annotations

import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from typer.testing import CliRunner

from govkit.cli.main import app

ENCLAVES = ("/talker_listener/talker", "/talker_listener/listener")
# `generate` without --participants also makes sure of pub and sub: plain names, whose
# enclaves are /pub and /sub
EXPORTED = (*ENCLAVES, "/pub", "/sub")


def _cli(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result


def _openssl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=30)


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """pki init with two enclave paths, generate, sign: what a user has before exporting."""
    root = tmp_path_factory.mktemp("sros2")
    pki, build = str(root / "pki"), str(root / "build")
    init = _cli("pki", "init", pki, *(a for e in ENCLAVES for a in ("--participant", e)))
    assert init.exit_code == 0, init.output
    gen = _cli("generate", "--profile", "rtps_encrypt", "--ca", pki, "--out", build, "--sign")
    assert gen.exit_code == 0, gen.output
    return root


def _export(made: Path, keystore: Path, *extra: str):
    return _cli("export", "sros2", str(keystore), "--ca", str(made / "pki"), "--build",
                str(made / "build"), *extra)


def _tree(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}


def test_the_layout_rmw_reads(made, tmp_path):
    ks = tmp_path / "ks"
    result = _export(made, ks)
    assert result.exit_code == 0, result.output
    for enclave in ENCLAVES:
        assert f"wrote {ks}/enclaves{enclave}/" in result.stdout
    assert f"ROS_SECURITY_KEYSTORE={ks}" in result.stdout
    files = set(_tree(ks))
    expected = {"public/identity_ca.cert.pem", "public/permissions_ca.cert.pem",
                "private/identity_ca.key.pem", "private/permissions_ca.key.pem",
                "enclaves/governance.p7s"}
    for enclave in EXPORTED:   # what sros2's create_enclave writes, and rmw reads
        expected |= {f"enclaves{enclave}/{f}" for f in (
            "cert.pem", "key.pem", "identity_ca.cert.pem", "permissions_ca.cert.pem",
            "governance.p7s", "permissions.p7s")}
    assert files == expected
    # copies, never symlinks; keys 0600, the CA keys' directory 0700; nothing left beside
    assert not [p for p in ks.rglob("*") if p.is_symlink()]
    for path in ks.rglob("*"):
        mode = stat.S_IMODE(path.stat().st_mode)
        if path.is_file():
            assert mode == (0o600 if path.name.endswith("key.pem") else 0o644), path
    assert stat.S_IMODE((ks / "private").stat().st_mode) == 0o700
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ks"]
    # govkit's two CAs stay two: the identity CA is not the permissions CA (sros2#282)
    assert (ks / "public/identity_ca.cert.pem").read_bytes() != \
        (ks / "public/permissions_ca.cert.pem").read_bytes()
    assert (ks / "public/identity_ca.cert.pem").read_bytes() == \
        (made / "pki/identity_ca.pem").read_bytes()


def _subject(cert: Path) -> str:
    out = _openssl("x509", "-in", str(cert), "-noout", "-subject", "-nameopt", "RFC2253")
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().removeprefix("subject=")


def test_every_enclave_checks_out_with_openssl(made, tmp_path):
    ks = tmp_path / "ks"
    assert _export(made, ks).exit_code == 0
    for enclave in ENCLAVES:
        d = ks / "enclaves" / enclave.lstrip("/")
        for signed in ("governance.p7s", "permissions.p7s"):
            check = _openssl("smime", "-verify", "-in", str(d / signed), "-CAfile",
                             str(d / "permissions_ca.cert.pem"), "-no-CApath", "-no-CAstore",
                             "-text", "-out", str(tmp_path / f"{signed}.txt"))
            assert check.returncode == 0, check.stderr
            # ... and not against the Identity CA: the two roles are separate
            wrong = _openssl("smime", "-verify", "-in", str(d / signed), "-CAfile",
                             str(d / "identity_ca.cert.pem"), "-no-CApath", "-no-CAstore",
                             "-text", "-out", "/dev/null")
            assert wrong.returncode != 0
        chain = _openssl("verify", "-CAfile", str(d / "identity_ca.cert.pem"), "-no-CApath",
                         "-no-CAstore", str(d / "cert.pem"))
        assert chain.returncode == 0, chain.stderr
        from_key = _openssl("pkey", "-in", str(d / "key.pem"), "-pubout")
        from_cert = _openssl("x509", "-in", str(d / "cert.pem"), "-noout", "-pubkey")
        assert from_key.stdout == from_cert.stdout != ""
        subject = _subject(d / "cert.pem")
        assert subject == f"O=govkit test PKI,CN={enclave}"
        granted = re.findall(r"<subject_name>([^<]*)</subject_name>",
                             (tmp_path / "permissions.p7s.txt").read_text())
        assert granted == [subject]


def test_an_existing_keystore_is_refused_and_force_replaces_it_whole(made, tmp_path):
    ks = tmp_path / "ks"
    assert _export(made, ks).exit_code == 0
    first = _tree(ks)
    (ks / "enclaves/old_node").mkdir()
    (ks / "enclaves/old_node/cert.pem").write_text("left from an earlier export")
    again = _export(made, ks)
    assert again.exit_code == 2
    assert "already exists" in again.output and "--force" in again.output
    assert (ks / "enclaves/old_node/cert.pem").exists()
    forced = _export(made, ks, "--force")
    assert forced.exit_code == 0, forced.output
    assert f"replaced {ks}/enclaves/talker_listener/talker/" in forced.stdout
    assert _tree(ks) == first          # nothing of the old one is left: no mix of two
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ks"]


def test_force_never_replaces_a_key_it_would_not_write_again(made, tmp_path):
    ks = tmp_path / "ks"
    assert _export(made, ks).exit_code == 0
    foreign = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption())
    (ks / "private/ca.key.pem").write_bytes(foreign)   # e.g. sros2's own CA key
    before = _tree(ks)
    forced = _export(made, ks, "--force")
    assert forced.exit_code == 2
    assert f"{ks}/private/ca.key.pem" in forced.output and "never replaced" in forced.output
    assert _tree(ks) == before


def test_force_never_replaces_a_directory_that_is_not_a_keystore(made, tmp_path, monkeypatch):
    """`govkit export sros2 . --force` in a project directory swapped the whole directory
    (its pki/ with every private key, build/, any other file) for the keystore, deleted
    it, and then failed with an internal error. --force replaces a keystore only."""
    project = tmp_path / "project"
    shutil.copytree(made, project)
    (project / "notes.txt").write_text("precious")
    before = _tree(project)
    monkeypatch.chdir(project)
    for keystore, said in ((".", "name the keystore directory by its own name"),
                           (str(project), "is not an sros2 keystore (it holds build, "
                                          "notes.txt, pki,")):
        r = _cli("export", "sros2", keystore, "--force")
        assert r.exit_code == 2, r.output
        assert said in r.output
        assert _tree(project) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project"]


def test_without_ca_keys_and_an_empty_directory(made, tmp_path):
    ks = tmp_path / "ks"
    ks.mkdir()                          # an empty directory holds nothing to keep
    result = _export(made, ks, "--no-ca-keys")
    assert result.exit_code == 0, result.output
    assert not (ks / "private").exists()
    keys = sorted(str(p.relative_to(ks)) for p in ks.rglob("*.pem")
                  if p.is_file() and b"PRIVATE KEY" in p.read_bytes())
    assert keys == [f"enclaves{e}/key.pem" for e in sorted(EXPORTED)]


def test_what_cannot_be_an_enclave_is_left_out_and_said(made, tmp_path):
    root = tmp_path / "copy"
    shutil.copytree(made, root)
    init = _cli("pki", "init", str(root / "pki"), "--participant", "node-1.a",
                "--participant", "plain_node")
    assert init.exit_code == 0, init.output
    gen = _cli("generate", "--profile", "rtps_encrypt", "--ca", str(root / "pki"), "--out",
               str(root / "build"), "--sign")
    assert gen.exit_code == 0, gen.output
    (root / "build/permissions/+talker_listener+listener.p7s").unlink()
    ks = tmp_path / "ks"
    result = _export(root, ks)
    assert result.exit_code == 0, result.output
    assert "node-1.a left out: its CN 'node-1.a' is no ROS 2 enclave name" in result.output
    assert "/talker_listener/listener left out: no signed permissions" in result.output
    assert sorted(p.parent.relative_to(ks / "enclaves").as_posix()
                  for p in ks.rglob("key.pem")) == ["plain_node", "pub", "sub",
                                                    "talker_listener/talker"]


def test_a_document_that_does_not_verify_is_refused(made, tmp_path):
    root = tmp_path / "copy"
    shutil.copytree(made, root)
    p7s = root / "build/permissions/+talker_listener+talker.p7s"
    p7s.write_bytes(p7s.read_bytes().replace(b"<publish>", b"<subscribe>", 1)
                    .replace(b"</publish>", b"</subscribe>", 1))
    result = _export(root, tmp_path / "ks")
    assert result.exit_code == 1
    assert f"{p7s}: does not verify against the Permissions CA" in result.output
    assert not (tmp_path / "ks").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy"]


def test_several_governance_documents_need_a_profile(made, tmp_path):
    root = tmp_path / "copy"
    shutil.copytree(made, root)
    gen = _cli("generate", "--profile", "rtps_sign", "--ca", str(root / "pki"), "--out",
               str(root / "build"), "--sign")
    assert gen.exit_code == 0, gen.output
    result = _export(root, tmp_path / "ks")
    assert result.exit_code == 2
    assert "2 signed governance documents (rtps_encrypt, rtps_sign)" in result.output
    chosen = _export(root, tmp_path / "ks", "--profile", "rtps_sign")
    assert chosen.exit_code == 0, chosen.output
    # rtps_sign's governance with access control turned on (the catalog's turns it off)
    assert (tmp_path / "ks/enclaves/talker_listener/talker/governance.p7s").read_bytes() == \
        (root / "build/governance/enforced/rtps_sign.p7s").read_bytes()
    assert b"<rtps_protection_kind>SIGN<" in \
        (root / "build/governance/enforced/rtps_sign.xml").read_bytes()
