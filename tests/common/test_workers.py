"""The worker pool leaves nothing running: a SIGKILLed govkit takes its workers with it
(real processes), and a rerun leaves no temporary behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from govkit.common import staging, workers
from govkit.generate import grants
from govkit.pki.lock import LOCK_NAME

GOVKIT = str(Path(sys.executable).with_name("govkit"))

linux_only = pytest.mark.skipif(workers.dies_with_parent() is None,
                                reason="prctl(PR_SET_PDEATHSIG) is Linux only")


def _running(pid: int) -> bool:
    """`pid` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] not in (b"Z", b"X")


def _children(pid: int) -> set[int]:
    found = set()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_bytes()
        except OSError:
            continue
        if int(stat[stat.rfind(b")") + 2:].split()[1]) == pid:
            found.add(int(d.name))
    return found


def _wait_gone(pids, seconds: float = 5.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while any(map(_running, pids)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return [p for p in pids if _running(p)]


def _kill(pids) -> None:
    """Clean up after a failure: only the processes this test started."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@linux_only
def test_a_child_whose_parent_is_already_gone_exits():
    """The race: the parent died before prctl ran (the child has been handed to another
    process): the child exits at once instead of living on."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import os
        from govkit.common.workers import die_with_parent
        die_with_parent(os.getppid() + 1)   # not our parent: as if it had died
        print("still running")
        """)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "still running" not in done.stdout


@linux_only
def test_a_child_of_a_live_parent_runs_on():
    done = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import os
        from govkit.common.workers import die_with_parent
        die_with_parent(os.getppid())
        print("still running")
        """)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "still running" in done.stdout


POOL = textwrap.dedent("""
    import os, sys, time
    from govkit.common import workers

    def init():
        pass

    def job(part):
        # one write(2) per line: two workers' print()s could interleave in the shared pipe
        os.write(1, f"{os.getpid()}\\n".encode())
        time.sleep(600)

    for _ in workers.run(job, [[1], [2]], init, (), 2):
        pass
""")


@linux_only
def test_pool_workers_die_with_their_sigkilled_parent():
    proc = subprocess.Popen([sys.executable, "-c", POOL], stdout=subprocess.PIPE, text=True)
    pids: list[int] = []
    try:
        pids = [int(proc.stdout.readline()) for _ in range(2)]
        assert len(set(pids)) == 2 and all(map(_running, pids))
        assert _children(proc.pid) == set(pids)   # the workers are the pool's children
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        left = _wait_gone(pids)
    finally:
        proc.kill()
        proc.wait()
        _kill(pids)
    assert left == [], f"pool workers outlived their parent: {left}"


def _temporaries(tree: Path) -> list[str]:
    return [str(p.relative_to(tree)) for p in tree.rglob("*")
            if p.name.startswith(".")
            and p.name not in (".gitignore", LOCK_NAME, grants.RECORD)  # on purpose
            or p.name.endswith((staging.TMP_SUFFIX, ".tmp"))]


@linux_only
@pytest.mark.parametrize("pool", [1, 2], ids=["while-issuing-identities",
                                              "while-writing-documents"])
def test_sigkilled_generate_leaves_no_process_and_the_rerun_no_temporary(tmp_path, pool):
    """`generate --count 400 --sign` (a pool for the PKI's 400 identities, then one for
    the 800 documents) SIGKILLed once the `pool`-th pool's workers have written a
    temporary: none of them outlives it, and the same command run again leaves no
    temporary anywhere."""
    assert 400 >= workers.IN_PROCESS_BELOW   # so both steps use the pool
    argv = [GOVKIT, "generate", "--count", "400", "--sign", "--jobs", "2"]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    seen: set[int] = set()
    doomed: set[int] = set()
    try:
        pools = 0
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            children = _children(proc.pid)
            if children - seen:
                pools += 1 if not (children & seen) else 0
                seen |= children
            if pools == pool and _temporaries(tmp_path):
                doomed = _children(proc.pid) | children
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.001)
        assert doomed, f"never saw pool {pool} write: {proc.wait()} {proc.stderr.read()}"
        proc.wait(timeout=10)
        left = _wait_gone(doomed)
    finally:
        proc.kill()
        proc.wait()
        _kill(seen)
    assert left == [], f"workers outlived govkit: {left}"
    assert _temporaries(tmp_path), "the kill left no temporary: nothing for the rerun to do"
    rerun = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert _temporaries(tmp_path) == []
    assert len(list((tmp_path / "build" / "permissions").glob("*.p7s"))) == 400
