"""govkit.common.archive on its own: what no caller can make it write (names outside the
directory it is extracted into, keys readable by others, set-id bits), and the same bytes
from the same members (an sros2 export's archive is checked end to end in
tests/generate/test_sros2_archive.py)."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from govkit.common import archive, staging
from govkit.common.errors import GovkitError


def _key() -> bytes:
    return ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption())


def test_member_names_and_modes_are_safe_whatever_the_caller_says(tmp_path):
    for bad in ("/etc/passwd", "../up", "a/../b", "a//b", "./a", ""):
        with pytest.raises(GovkitError, match="not a relative archive member name"):
            archive.write_archive(tmp_path / "x.tar", [archive.Member(bad, b"x")])
        assert not list(tmp_path.iterdir())     # nothing written, no temporary left
    arc = tmp_path / "x.tar"
    archive.write_archive(arc, [archive.Member("a/key", _key(), 0o644),   # a key: 0600
                                archive.Member("a/run", b"#!/bin/sh\n", 0o4777)])
    with tarfile.open(arc) as t:
        modes = {m.name: m.mode for m in t.getmembers()}
    assert modes == {"a": 0o755, "a/key": 0o600, "a/run": 0o755}


def test_the_same_members_in_any_order_give_the_same_bytes(tmp_path):
    members = [archive.Member(f"top/d{i % 3}/f{i}", bytes([i]) * i, 0o644) for i in range(40)]
    a, b = tmp_path / "a" / "x.tar.gz", tmp_path / "b" / "x.tar.gz"
    archive.write_archive(a, members)
    archive.write_archive(b, reversed(members))
    assert a.read_bytes() == b.read_bytes()
    assert gzip.decompress(a.read_bytes())[:3] == b"top"    # a tar inside, unnamed gzip
    assert a.read_bytes()[3:8] == b"\0\0\0\0\0"             # no FNAME flag, mtime 0
    listing = subprocess.run(["tar", "-tzf", str(a)], capture_output=True, text=True,
                             timeout=30)
    assert listing.returncode == 0 and listing.stderr == ""
    assert listing.stdout.splitlines()[:3] == ["top/", "top/d0/", "top/d0/f0"]


def test_a_large_archive_streams_and_its_checksum_is_sha256sums(tmp_path):
    arc = tmp_path / "big.tar"
    written = archive.write_archive(arc, [archive.Member(f"big/{i:04}", b"x" * 4096)
                                          for i in range(2000)])
    check = subprocess.run(["sha256sum", "-c", "big.tar.sha256"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=30)
    assert check.returncode == 0 and check.stdout == "big.tar: OK\n"
    assert written.files == 2000 and not written.private
    with tarfile.open(arc) as t:
        assert len(t.getmembers()) == 2001


_WRITER = """
import sys
from pathlib import Path
from govkit.common import archive, staging
members = [archive.Member(f"big/{i:05}", bytes([i % 251]) * 8192) for i in range(6000)]
print("go", flush=True)
archive.write_archive(Path(sys.argv[1]), members, force=True)
"""


NEW_SIZE = 6000 * 8192           # at least: the members' bytes


def _temporary(directory: Path) -> Path | None:
    return next((p for p in directory.iterdir() if p.name.startswith(".fleet.tar.")
                 and p.name.endswith(staging.TMP_SUFFIX)), None)


def _sha256_check(directory: Path) -> str:
    check = subprocess.run(["sha256sum", "-c", "fleet.tar.sha256"], cwd=directory,
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    return check.stdout


@pytest.mark.parametrize("when", ["before", "mid-write", "after"])
def test_sigkill_leaves_the_old_archive_or_the_new_one_never_a_torn_one(tmp_path, when):
    """The writer is killed before it writes, frozen (SIGSTOP) once its temporary holds
    part of the new archive and killed there, or let finish; each time the archive and its
    .sha256 agree (sha256sum -c) and the archive is the whole old one or the whole new one.
    (It slept 0.05-3 s before the kill and never showed that one landed mid-write.)"""
    arc = tmp_path / "fleet.tar"
    archive.write_archive(arc, [archive.Member("old/a", b"the old archive")])
    old, old_sum = arc.read_bytes(), archive.checksum_path(arc).read_bytes()
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(arc)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline() == "go\n"
    if when == "mid-write":
        while (t := _temporary(tmp_path)) is None or t.stat().st_size < (1 << 20):
            assert proc.poll() is None, "the writer ended before it was caught writing"
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGSTOP)          # frozen where it is: nothing more lands
        written = t.stat().st_size
        assert (1 << 20) <= written < NEW_SIZE, written          # mid-write, proven
    elif when == "after":
        assert proc.wait(timeout=600) == 0
    proc.kill()
    proc.wait()
    _sha256_check(tmp_path)
    if when == "after":
        with tarfile.open(arc) as tar:
            assert len(tar.getmembers()) == 6001
    else:
        assert arc.read_bytes() == old and archive.checksum_path(arc).read_bytes() == old_sum
    if when == "mid-write":
        assert _temporary(tmp_path) is not None          # what the killed writer left
    # a later write over the directory removes what the killed one left
    archive.write_archive(tmp_path / "other.tar", [archive.Member("x/y", b"y")])
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".govkit-tmp")]
