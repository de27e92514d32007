"""Many files made durable together: complete old or complete new, even after SIGKILL."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time

import pytest

from govkit import staging


def test_commit_writes_every_file_with_its_mode_and_leaves_no_temporary(tmp_path):
    stager = staging.Stager()
    (tmp_path / "sub").mkdir()
    old = os.umask(0o077)   # the modes are exact whatever the umask, as write_atomic's
    try:
        stager.write(tmp_path / "a.xml", b"a")
        stager.write(tmp_path / "sub" / "b.key", b"b", mode=0o600)
        stager.write(tmp_path / "c.p7s", b"c" * 100_000, mode=0o644)
    finally:
        os.umask(old)
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == [
        f".a.xml.{stager.token}{staging.TMP_SUFFIX}", f".c.p7s.{stager.token}{staging.TMP_SUFFIX}"]
    staging.commit(stager.staged)
    assert (tmp_path / "a.xml").read_bytes() == b"a"
    assert (tmp_path / "c.p7s").read_bytes() == b"c" * 100_000
    assert stat.S_IMODE((tmp_path / "a.xml").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "sub" / "b.key").stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["a.xml", "b.key",
                                                                          "c.p7s"]


@pytest.mark.parametrize("many", [False, True], ids=["fsync-each", "syncfs"])
def test_commit_replaces_old_files_and_never_an_existing_key(tmp_path, many):
    (tmp_path / "doc.xml").write_bytes(b"old")
    (tmp_path / "id.key").write_bytes(b"old key")
    stager = staging.Stager()
    stager.write(tmp_path / "doc.xml", b"new")
    for i in range(staging.FSYNC_EACH_UP_TO + 1 if many else 0):
        stager.write(tmp_path / f"f{i}.xml", b"x")
    stager.write(tmp_path / "id.key", b"new key", mode=0o600, overwrite=False)
    stager.write(tmp_path / "id.pem", b"cert")
    with pytest.raises(FileExistsError):
        staging.commit(stager.staged)
    # committed in order up to the refusal; nothing after it, no temporaries left
    assert (tmp_path / "doc.xml").read_bytes() == b"new"
    assert (tmp_path / "id.key").read_bytes() == b"old key"
    assert not (tmp_path / "id.pem").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(staging.TMP_SUFFIX)]


def test_discard_removes_the_temporaries(tmp_path):
    stager = staging.Stager()
    stager.write(tmp_path / "a.xml", b"a")
    stager.discard()
    assert list(tmp_path.iterdir()) == []


def test_remove_orphans_only_touches_old_temporaries_of_dead_writers(tmp_path):
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = int(done.stdout)
    names = {"dead-old": f".a.xml.{dead}-0a0b0c0d{staging.TMP_SUFFIX}",
             "dead-new": f".b.xml.{dead}-0a0b0c0d{staging.TMP_SUFFIX}",
             "alive-old": f".c.xml.{os.getpid()}-0a0b0c0d{staging.TMP_SUFFIX}",
             "not-ours": "notes.govkit-tmp.txt", "document": "d.xml"}
    for name in names.values():
        (tmp_path / name).write_bytes(b"x")
    old = time.time() - 3600
    for key in ("dead-old", "alive-old", "not-ours", "document"):
        os.utime(tmp_path / names[key], (old, old))
    assert staging.remove_orphans(tmp_path) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        v for k, v in names.items() if k != "dead-old")
    assert staging.remove_orphans(tmp_path / "missing") == 0
