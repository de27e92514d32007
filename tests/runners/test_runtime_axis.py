"""Two runtimes of one runner: `--resume` refuses another runtime than the run's, and the
version axis (`--runner cyclone@/usr,cyclone@PREFIX`) measures both in one rotation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cyclone11 import VERSION, cyclone11_prefix
from helpers.dds import needs_cyclone

from govkit.common.errors import GovkitError
from govkit.results.store import check_resumable

GOVKIT = str(Path(sys.executable).parent / "govkit")


@pytest.fixture(scope="module")
def cyclone11() -> Path:
    return cyclone11_prefix()


def _govkit(*args, cwd, timeout=600):
    return subprocess.run([GOVKIT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


# ---------------------------------------------------------------- --resume and the runtime

SYSTEM = {"name": "Cyclone DDS", "version": "0.10.2", "prefix": "/usr",
          "library": "/usr/lib/x86_64-linux-gnu/libddsc.so.0.10.2", "source": "system"}


def test_resume_refuses_another_runtime_in_one_line():
    stored = {"runner": "cyclone", "runtime": SYSTEM}
    other = {**SYSTEM, "version": VERSION, "prefix": "/opt/ros/lyrical",
             "source": "--dds-prefix"}
    check_resumable(stored, dict(stored), Path("r.json"))
    # how the install was given does not matter; its prefix and version do
    check_resumable(stored, {**stored, "runtime": {**SYSTEM, "source": "GOVKIT_DDS_PREFIX"}},
                    Path("r.json"))
    for now in (other, {**SYSTEM, "version": "0.10.5"}, {**SYSTEM, "prefix": "/opt/c"}):
        with pytest.raises(GovkitError) as e:
            check_resumable(stored, {**stored, "runtime": now}, Path("r.json"))
        assert e.value.exit_code == 2 and "\n" not in str(e.value)
        assert str(e.value).startswith(f"--resume: the runtime is Cyclone DDS {now['version']} "
                                       f"in {now['prefix']} but the run in r.json used Cyclone "
                                       "DDS 0.10.2 in /usr")
    # a run from before settings.runtime existed: nothing to compare
    check_resumable({"runner": "cyclone"}, {**stored, "runtime": other}, Path("r.json"))


@needs_cyclone
@pytest.mark.cyclone
def test_bench_resume_with_another_prefix_is_refused_before_anything(cyclone11, tmp_path):
    """A run on the system's 0.10.2, then `--resume` on 11.0.1: one line, exit 2, the
    stored run untouched."""
    args = ["bench", "--runner", "ddsperf", "--profile", "none", "--sizes", "32",
            "--duration", "1", "--warmup", "1", "--repeat", "1", "--max-repeat", "1",
            "--out", "res", "--no-report"]
    r = _govkit(*args, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    before = (tmp_path / "res" / "results.json").read_bytes()
    assert json.loads(before)["settings"]["runtime"]["version"] == "0.10.2"
    r = _govkit(*args, "--resume", "--dds-prefix", str(cyclone11), cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = [x for x in r.stderr.strip().splitlines()
             if not x.startswith("govkit: Cyclone DDS ")]     # the run's own start line
    assert len(lines) == 1, r.stderr
    assert (f"--resume: the runtime is Cyclone DDS {VERSION} in {cyclone11} but the run in "
            f"res/results.json used Cyclone DDS 0.10.2 in /usr") in lines[0], r.stderr
    assert (tmp_path / "res" / "results.json").read_bytes() == before
