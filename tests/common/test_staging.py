"""Many files made durable together: complete old or complete new, even after SIGKILL."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from govkit.check import validate
from govkit.common import staging
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.fsutil import collect_files
from govkit.documents import mime
from govkit.generate import grants
from govkit.pki.issuance import init_pki
from govkit.pki.testpki import load_certificate
from govkit.smime.verify import verify_bytes

GOVKIT = str(Path(sys.executable).with_name("govkit"))


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



def test_a_streamed_file_is_staged_like_a_written_one_and_removed_on_an_error(tmp_path):
    stager = staging.Stager()
    old = os.umask(0o077)
    try:
        with stager.stream(tmp_path / "big.tar", 0o644) as f:
            for _ in range(3):
                f.write(b"x" * 100_000)
    finally:
        os.umask(old)
    with pytest.raises(RuntimeError), stager.stream(tmp_path / "half.tar") as f:
        f.write(b"half")
        raise RuntimeError("the writer failed halfway")
    staging.commit(stager.staged)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.tar"]   # no temporary
    assert (tmp_path / "big.tar").read_bytes() == b"x" * 300_000
    assert stat.S_IMODE((tmp_path / "big.tar").stat().st_mode) == 0o644
    with pytest.raises(GovkitError, match=r"nowhere/x\.tar: cannot write"):
        with stager.stream(tmp_path / "nowhere" / "x.tar"):
            pass


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


def _tag(pid: int, start: str) -> str:
    return f"{pid}-{start}-{staging.pid_place()}-0a0b0c0d"


def _start_of(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rfind(")") + 2:].split()[19]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux /proc")
def test_remove_orphans_removes_a_gone_owners_temporaries_at_once(tmp_path):
    """A temporary names its owner (pid, start time, this boot's pid namespace): once that
    process is gone (exited, a zombie, or its pid now another process's) nothing will
    commit it, and the next run removes it whatever its age; a live owner's never."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        deadline = time.monotonic() + 30
        while Path(f"/proc/{zombie.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] \
                != "Z" and time.monotonic() < deadline:
            time.sleep(0.01)
        me = _start_of(os.getpid())
        names = {
            "exited": f".a.xml.{_tag(int(done.stdout), '12345')}{staging.TMP_SUFFIX}",
            "zombie": f".b.xml.{_tag(zombie.pid, _start_of(zombie.pid))}{staging.TMP_SUFFIX}",
            "pid-reused": f".c.xml.{_tag(os.getpid(), str(int(me) + 1))}{staging.TMP_SUFFIX}",
            "alive": f".d.xml.{_tag(os.getpid(), me)}{staging.TMP_SUFFIX}",
            "elsewhere-new": f".e.xml.1-1-zzzzzz-0a0b0c0d{staging.TMP_SUFFIX}",
            "elsewhere-old": f".f.xml.1-1-zzzzzz-0a0b0c0d{staging.TMP_SUFFIX}",
        }
        for name in names.values():
            (tmp_path / name).write_bytes(b"x")
        old = time.time() - 2 * staging.FOREIGN_AGE_S
        os.utime(tmp_path / names["elsewhere-old"], (old, old))
        assert staging.remove_orphans(tmp_path) == 4
    finally:
        zombie.wait()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [names["alive"], names["elsewhere-new"]])
    assert staging.Stager().token.startswith(f"{os.getpid()}-{me}-{staging.pid_place()}-")


def _token(part):
    return [staging.Stager().token]


def _nothing():
    pass


def test_a_pool_workers_temporaries_are_named_by_the_pools_owner():
    """The process that commits them owns them: they are orphans only once it is gone."""
    from govkit.common import workers
    tokens = [t for chunk in workers.run(_token, [[1], [2]], _nothing, (), 2) for t in chunk]
    assert len(tokens) == 2
    assert all(t.startswith(f"{os.getpid()}-") for t in tokens)


def test_commit_tidies_orphans_of_its_directories(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    orphan = tmp_path / f".x.xml.{_tag(int(dead.stdout), '1')}{staging.TMP_SUFFIX}"
    orphan.write_bytes(b"half")
    stager = staging.Stager()
    stager.write(tmp_path / "a.xml", b"a")
    staging.commit(stager.staged)
    assert [p.name for p in tmp_path.iterdir()] == ["a.xml"]


# ------------------------------------------------------------------ errors name the target


def test_a_write_error_names_the_file_not_its_temporary(tmp_path, monkeypatch):
    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    stager = staging.Stager()
    stager.write(tmp_path / "a.xml", b"a")
    with monkeypatch.context() as m:
        m.setattr(os, "write", full)
        with pytest.raises(GovkitError) as e:
            stager.write(tmp_path / "b.xml", b"b")
    assert str(e.value) == f"{tmp_path / 'b.xml'}: cannot write: No space left on device"
    assert e.value.exit_code == EXIT_USAGE
    with pytest.raises(GovkitError) as e:   # a directory that is not there
        stager.write(tmp_path / "missing" / "c.xml", b"c")
    assert str(e.value) == \
        f"{tmp_path / 'missing' / 'c.xml'}: cannot write: No such file or directory"
    assert len(stager.staged) == 1   # only a.xml; b's temporary removed
    stager.discard()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("many", [False, True], ids=["fsync-each", "syncfs"])
@pytest.mark.parametrize("failing", ["fsync", "rename"])
def test_a_commit_error_names_the_file_and_removes_every_temporary(tmp_path, monkeypatch,
                                                                   failing, many):
    (tmp_path / "a.xml").write_bytes(b"old")
    stager = staging.Stager()
    for i in range(staging.FSYNC_EACH_UP_TO + 1 if many else 2):
        stager.write(tmp_path / ("a.xml" if i == 0 else f"f{i}.xml"), b"new")

    def denied(*args):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), *args[:1])
    if failing == "fsync":
        monkeypatch.setattr(os, "fsync", denied)
        monkeypatch.setattr(staging, "sync_data", lambda ds: denied(ds[0]))
        where = str(tmp_path) if many else str(tmp_path / "a.xml")
    else:
        monkeypatch.setattr(os, "rename", denied)
        where = str(tmp_path / "a.xml")
    with pytest.raises(GovkitError) as e:
        staging.commit(stager.staged)
    monkeypatch.undo()
    assert str(e.value) == f"{where}: cannot write: Permission denied"
    assert e.value.exit_code == EXIT_USAGE
    assert [p.name for p in tmp_path.iterdir()] == ["a.xml"]
    assert (tmp_path / "a.xml").read_bytes() == b"old"


# ------------------------------------------------------------------ SIGKILL mid-batch


def _generate(pki: Path, out: Path, domain: str) -> subprocess.Popen:
    return subprocess.Popen([GOVKIT, "generate", "--count", "400", "--sign", "--jobs", "2",
                             "--ca", str(pki), "--out", str(out), "--domain", domain],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)


def _snapshot(directory: Path) -> dict[str, bytes]:
    """The documents (not generate's record of who wrote them, govkit.generate.grants)."""
    return {p.name: p.read_bytes() for p in directory.iterdir()
            if p.is_file() and p.name != grants.RECORD}


def test_sigkill_mid_batch_leaves_every_file_complete_old_or_complete_new(tmp_path):
    pki = tmp_path / "pki"
    init_pki(pki, participants=[f"p{i:03d}" for i in range(400)])
    ca = pki / "permissions_ca.pem"
    old_dir, new_dir = tmp_path / "old", tmp_path / "new"
    for out, domain in ((old_dir, "0-230"), (new_dir, "0-10")):
        started = time.monotonic()
        proc = _generate(pki, out, domain)
        assert proc.wait(timeout=600) == 0, proc.stderr.read()
        duration = time.monotonic() - started
    old = _snapshot(old_dir / "permissions")
    new_xml = {k: v for k, v in _snapshot(new_dir / "permissions").items()
               if k.endswith(".xml")}
    assert len(old) == 800 and len(new_xml) == 400
    assert all(old[k] != new_xml[k] for k in new_xml)   # the two generations differ
    seen = {"old": 0, "new": 0, "temporaries": 0}
    # Killed while the workers write temporaries, and right when the renames begin (the
    # first file in commit order, or one in the middle, has just been replaced).
    kills = [(fraction, None) for fraction in (0.3, 0.6, 0.9)] + \
        [(None, "p000.xml"), (None, "p000.p7s"), (None, "p200.xml")]
    for i, (fraction, watched) in enumerate(kills):
        target = tmp_path / f"kill{i}"
        shutil.copytree(old_dir, target)
        directory = target / "permissions"
        proc = _generate(pki, target, "0-10")
        if fraction is not None:
            time.sleep(duration * fraction)
        else:
            inode = (directory / watched).stat().st_ino
            while (directory / watched).stat().st_ino == inode and proc.poll() is None:
                time.sleep(0.0005)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        documents = sorted(p.name for p in directory.iterdir()
                           if not p.name.endswith(staging.TMP_SUFFIX)
                           and p.name != grants.RECORD)
        assert documents == sorted(old), "a document is missing or an extra file appeared"
        for name in documents:
            data = (directory / name).read_bytes()
            if data == old[name]:
                seen["old"] += 1
                continue
            seen["new"] += 1
            if name.endswith(".xml"):
                assert data == new_xml[name], f"{name} is neither the old nor the new one"
            else:   # a new signature: complete, and over the new document
                v = verify_bytes(data, name, load_certificate(ca))
                assert v.ok, (name, v.problems)
                signed = validate.signed_document(data, name).data
                assert signed == mime.signed_text(new_xml[name.replace(".p7s", ".xml")])
        temporaries = [p.name for p in directory.iterdir()
                       if p.name.endswith(staging.TMP_SUFFIX)]
        seen["temporaries"] += len(temporaries)
        assert all(t.startswith(".") for t in temporaries)
        # scans for documents (sign, verify) never take a temporary for one
        for suffix in (".xml", ".p7s"):
            found = collect_files([directory], suffix)
            assert sorted(p.name for p in found) == [d for d in documents if d.endswith(suffix)]
    print(f"after the kills: {seen}")
    assert seen["old"] > 0 and seen["new"] > 0   # some kills did land mid-commit
