"""`govkit export sros2 --archive` (issue 35, item 4): the keystore offered as one archive
beside it. Checked with the system's own tools, as the machine it is shipped to would:
GNU tar extracts exactly the keystore's files with their bytes and modes, `sha256sum -c`
accepts the checksum file, a rerun writes the same bytes, a revoked participant is not in
it, and no archive (or anything that is not a regular file) is replaced without --force or
at all when it holds a key the new one does not."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tarfile
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from helpers.cli import enclave_project, govkit

from govkit.common import archive


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """pki init with two enclave paths, generate, sign: what a user has before exporting."""
    return enclave_project(tmp_path_factory.mktemp("sros2-archive"))


def _export(root: Path, keystore: Path, *extra: str):
    return govkit("export", "sros2", str(keystore), "--ca", str(root / "pki"), "--build",
                  str(root / "build"), *extra)


def _tree(directory: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every file and directory below `directory`: its bytes (None for a directory) and
    its mode."""
    return {str(p.relative_to(directory)): (None if p.is_dir() else p.read_bytes(),
                                            stat.S_IMODE(p.lstat().st_mode))
            for p in sorted(directory.rglob("*"))}


def _key() -> bytes:
    return ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption())


def _one_line_error(result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize("name", ["ks.tar.gz", "ks.tar"])
def test_tar_extracts_exactly_the_keystore_and_sha256sum_checks_it(made, tmp_path, name):
    ks, arc = tmp_path / "ks", tmp_path / name
    result = _export(made, ks, "--archive", str(arc))
    assert result.exit_code == 0, result.output
    digest = (tmp_path / f"{name}.sha256").read_text()
    assert digest.endswith(f"  {name}\n") and len(digest.split()[0]) == 64
    assert f"wrote {arc}: the " in result.stdout
    assert f"{digest.split()[0]}  {name} (in {name}.sha256" in result.stdout
    # what the robot's side runs: the checksum, then the system's tar
    check = subprocess.run(["sha256sum", "-c", f"{name}.sha256"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=30)
    assert check.returncode == 0 and check.stdout == f"{name}: OK\n", check
    into = tmp_path / "shipped"
    into.mkdir()
    tar = subprocess.run(["tar", "-xf", str(arc), "-C", str(into)], capture_output=True,
                         text=True, timeout=60)
    assert tar.returncode == 0 and tar.stderr == "", tar.stderr   # no warning either
    assert sorted(p.name for p in into.iterdir()) == ["ks"]
    # every file's bytes and mode; the same directories (their modes on disk follow the
    # umask the export ran under, the archive's do not), private/ 0700 in both
    shipped, written = _tree(into / "ks"), _tree(ks)
    assert {p: v for p, v in shipped.items() if v[0] is not None} == \
        {p: v for p, v in written.items() if v[0] is not None}
    assert shipped.keys() == written.keys()
    assert shipped["private"][1] == written["private"][1] == 0o700
    # the members themselves: the keystore's files and their directories, nothing else;
    # relative names, no owner, no time, nothing writable by others, keys 0600
    with tarfile.open(arc) as t:
        members = t.getmembers()
    files = {m.name for m in members if m.isreg()}
    assert files == {f"ks/{p}" for p, (data, _) in _tree(ks).items() if data is not None}
    assert all(m.isreg() or m.isdir() for m in members)
    assert [m.name for m in members] == sorted((m.name for m in members),
                                               key=lambda n: n.split("/"))
    for m in members:
        assert not m.name.startswith("/") and ".." not in m.name.split("/"), m.name
        assert (m.mtime, m.uid, m.gid, m.uname, m.gname) == (0, 0, 0, "", ""), m.name
        assert m.mode & 0o7022 == 0, (m.name, oct(m.mode))
        if m.name.endswith("key.pem"):
            assert m.mode == 0o600, m.name
    # it holds private keys: only its owner reads it
    assert stat.S_IMODE(arc.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / f"{name}.sha256").stat().st_mode) == 0o644
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".govkit-tmp")]


def test_a_rerun_writes_the_same_bytes(made, tmp_path):
    ks, arc = tmp_path / "ks", tmp_path / "ks.tgz"
    assert _export(made, ks, "--archive", str(arc)).exit_code == 0
    first, first_sum = arc.read_bytes(), (tmp_path / "ks.tgz.sha256").read_bytes()
    again = _export(made, ks, "--archive", str(arc), "--force")
    assert again.exit_code == 0, again.output
    assert arc.read_bytes() == first        # new files (new mtimes), the same archive
    assert (tmp_path / "ks.tgz.sha256").read_bytes() == first_sum


def test_a_revoked_participant_is_not_in_the_archive(made, tmp_path):
    root = tmp_path / "copy"
    shutil.copytree(made, root)
    talker = "/talker_listener/talker"
    revoke = govkit("pki", "revoke", talker, "--ca", str(root / "pki"))
    assert revoke.exit_code == 0, revoke.output
    ks, arc = tmp_path / "ks", tmp_path / "ks.tar.gz"
    result = _export(root, ks, "--archive", str(arc))
    assert result.exit_code == 0, result.output
    assert f"{talker} left out: its certificate is revoked" in result.stderr
    with tarfile.open(arc) as t:
        names = t.getnames()
        files = {m.name for m in t.getmembers() if m.isreg()}
        data = [t.extractfile(m).read() for m in t.getmembers() if m.isreg()]
    assert "ks/enclaves/talker_listener/listener/key.pem" in names
    assert not [n for n in names if n.startswith("ks/enclaves/talker_listener/talker")]
    stem = "+talker_listener+talker"
    for secret in ((root / "pki" / f"{stem}.pem").read_bytes(),
                   (root / "pki" / f"{stem}.key").read_bytes(),
                   (root / "build" / "permissions" / f"{stem}.p7s").read_bytes()):
        assert secret not in data           # not under another name either
    # exactly what the export wrote
    assert files == {f"ks/{p}" for p, (d, _) in _tree(ks).items() if d is not None}


def test_an_existing_archive_is_never_replaced_without_force(made, tmp_path):
    ks, arc = tmp_path / "ks", tmp_path / "ks.tar.gz"
    arc.write_bytes(b"an earlier archive")
    result = _export(made, ks, "--archive", str(arc))
    _one_line_error(result, str(arc), "already exists", "--force")
    assert arc.read_bytes() == b"an earlier archive"
    assert not ks.exists()                  # refused before anything was written
    arc.unlink()
    (tmp_path / "ks.tar.gz.sha256").write_text("kept\n")   # its checksum is its too
    _one_line_error(_export(made, ks, "--archive", str(arc)), "ks.tar.gz.sha256",
                    "already exists")
    assert not arc.exists() and not ks.exists()


def test_what_is_not_a_regular_file_is_never_replaced(made, tmp_path):
    ks = tmp_path / "ks"
    (tmp_path / "dir.tar").mkdir()
    (tmp_path / "target").write_bytes(b"precious")
    (tmp_path / "link.tar").symlink_to(tmp_path / "target")
    os.mkfifo(tmp_path / "fifo.tar")
    for name, kind in (("dir.tar", "is a directory"), ("link.tar", "is a symlink"),
                       ("fifo.tar", "is not a regular file")):
        result = _export(made, ks, "--archive", str(tmp_path / name), "--force")
        _one_line_error(result, name, kind)
    assert (tmp_path / "target").read_bytes() == b"precious"
    assert (tmp_path / "link.tar").is_symlink() and (tmp_path / "dir.tar").is_dir()
    assert not ks.exists()


def test_force_never_replaces_an_archive_holding_a_key_it_would_not_hold(made, tmp_path):
    ks, arc = tmp_path / "ks", tmp_path / "ks.tar"
    archive.write_archive(arc, [archive.Member("ks/private/ca.key.pem", _key(), 0o600)])
    before = arc.read_bytes()
    result = _export(made, ks, "--archive", str(arc), "--force")
    _one_line_error(result, str(arc), "ks/private/ca.key.pem", "never replaced")
    assert arc.read_bytes() == before and not ks.exists()
    arc.write_bytes(b"not a tar")           # what cannot be read cannot be said keyless
    _one_line_error(_export(made, ks, "--archive", str(arc), "--force"), str(arc),
                    "not a tar govkit can read")
    assert arc.read_bytes() == b"not a tar"


def test_names_that_are_no_archive_or_inside_the_keystore_are_refused(made, tmp_path):
    ks = tmp_path / "ks"
    _one_line_error(_export(made, ks, "--archive", str(tmp_path / "ks.zip")), "ks.zip",
                    ".tar, .tar.gz, .tgz")
    _one_line_error(_export(made, ks, "--archive", str(ks / "ks.tar")), "inside the keystore")
    assert not ks.exists()

