"""write_atomic: an error names the file the user asked for, never its temporary, and
leaves no temporary; a temporary a killed writer left is removed by the next write."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from govkit.common import staging
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.fsutil import write_atomic
from govkit.pki.lock import LOCK_NAME


def _fail(code: int):
    def fail(*args):
        raise OSError(code, os.strerror(code))
    return fail


@pytest.mark.parametrize("failing", ["write", "fsync", "rename", "link"])
def test_no_space_names_the_target_and_leaves_the_old_file_and_no_temporary(
        tmp_path, monkeypatch, failing):
    target = tmp_path / "report" / "report.html"
    write_atomic(target, "old")
    with monkeypatch.context() as m:
        m.setattr(os, failing, _fail(errno.ENOSPC))
        with pytest.raises(GovkitError) as e:
            write_atomic(target, "new", overwrite=failing != "link")
    assert str(e.value) == f"{target}: cannot write: No space left on device"
    assert e.value.exit_code == EXIT_USAGE
    assert [p.name for p in target.parent.iterdir()] == ["report.html"]
    assert target.read_text() == "old"


@pytest.mark.parametrize("below", [".", "sub"], ids=["parent-is-a-file", "ancestor-is-a-file"])
def test_a_directory_that_cannot_exist_names_the_target(tmp_path, below):
    """A parent that is a regular file: fails for root too (a read-only directory would
    not)."""
    (tmp_path / "out").write_text("a file")
    target = tmp_path / "out" / below / "report.html"
    with pytest.raises(GovkitError) as e:
        write_atomic(target, "x")
    assert str(e.value) == f"{target}: cannot write: Not a directory"
    assert e.value.exit_code == EXIT_USAGE


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="Linux /proc")
def test_a_directory_where_nothing_can_be_created_names_the_target():
    target = Path(f"/proc/{os.getpid()}/report.html")   # not even root creates files here
    with pytest.raises(GovkitError) as e:
        write_atomic(target, "x")
    assert str(e.value).startswith(f"{target}: cannot write: ")
    assert ".tmp" not in str(e.value) and staging.TMP_SUFFIX not in str(e.value)


def test_refusing_to_replace_names_the_target(tmp_path):
    target = tmp_path / "x.key"
    write_atomic(target, b"old", overwrite=False)
    with pytest.raises(FileExistsError) as e:
        write_atomic(target, b"new", overwrite=False)
    assert e.value.filename == str(target)
    assert [p.name for p in tmp_path.iterdir()] == ["x.key"]


def test_the_next_write_removes_a_killed_writers_temporary(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    orphan = tmp_path / (f".report.html.{int(dead.stdout)}-1-{staging.pid_place()}-0a0b0c0d"
                         f"{staging.TMP_SUFFIX}")
    orphan.write_text("half")
    write_atomic(tmp_path / "report.html", "new")
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_the_cli_says_one_line_naming_the_target_on_enospc(tmp_path):
    """`govkit pki init` with a full disk (fsync fails): one line naming the file, exit 2,
    no traceback, no temporary."""
    script = ("import errno, os, sys\n"
              "def full(fd):\n"
              "    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))\n"
              "os.fsync = full\n"
              "from govkit.cli.main import main\n"
              "sys.argv = ['govkit', 'pki', 'init', 'pki']\n"
              "main()\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == EXIT_USAGE, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("govkit: pki/"), done.stderr
    assert lines[0].endswith(": cannot write: No space left on device")
    assert "tmp" not in lines[0]
    assert [p.name for p in (tmp_path / "pki").iterdir() if p.name.startswith(".")
            and p.name != LOCK_NAME] == []   # (the PKI's write lock stays, on purpose)
