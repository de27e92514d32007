"""Fast DDS by prefix (`--runner fastdds --dds-prefix DIR`, govkit.runners.fastdds_prefix):
a Fast DDS 2 install with DDS Security is taken, govkit's program compiled against it and
cached per (source, compiler, runtime build); anything else is one line and exit 2 before
anything is signed, built or started. No Fast DDS 3 is vendored (its build takes far longer
than CI allows on 2 cores): the prefix tested is the system's, /usr, given as a prefix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.fastdds import require_fastdds
from helpers.json_schemas import assert_valid

from govkit.common.errors import GovkitError
from govkit.runners.dds_prefix import prefix_options
from govkit.runners.fastdds_build import build_key, compiler, prefix_flags
from govkit.runners.fastdds_prefix import find_fastdds_install

GOVKIT = str(Path(sys.executable).parent / "govkit")
SYSTEM_CONFIG = Path("/usr/include/x86_64-linux-gnu/fastrtps/config.h")


def _prefix(tmp_path: Path, kind: str) -> Path:
    """A prefix that is not a usable Fast DDS 2: empty, a Fast DDS 3, without Fast CDR,
    without headers, or without DDS Security."""
    prefix = tmp_path / "prefix"
    (prefix / "lib").mkdir(parents=True)
    if kind == "empty":
        return prefix
    if kind == "fast dds 3":
        (prefix / "lib" / "libfastdds.so").write_bytes(b"\x7fELF")
        return prefix
    (prefix / "lib" / "libfastrtps.so").write_bytes(b"\x7fELF")
    if kind != "no fastcdr":
        (prefix / "lib" / "libfastcdr.so").write_bytes(b"\x7fELF")
    if kind != "no headers":
        config = prefix / "include" / "fastrtps" / "config.h"
        config.parent.mkdir(parents=True)
        text = '#define FASTRTPS_VERSION_STR "2.14.4"\n'
        if kind != "no security":
            text += "#define HAVE_SECURITY 1\n"
        config.write_text(text)
    return prefix


@pytest.mark.parametrize("kind, says", [
    ("empty", "not a Fast DDS install (no lib/libfastrtps.so)"),
    ("fast dds 3", "a Fast DDS 3 install (lib/libfastdds.so): govkit's Fast DDS program is "
                   "written against Fast DDS 2's API"),
    ("no fastcdr", "a Fast DDS install without Fast CDR (lib/libfastcdr.so)"),
    ("no headers", "a Fast DDS install without its headers (include/fastrtps/config.h)"),
    ("no security", "a Fast DDS install without DDS Security"),
])
@pytest.mark.parametrize("how", ["option", "env"])
def test_a_bad_fast_dds_prefix_is_one_line_and_exit_2_before_anything(tmp_path, kind, says,
                                                                      how):
    prefix = _prefix(tmp_path, kind)
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    argv = [GOVKIT, "bench", "--runner", "fastdds", "--profile", "none,rtps_sign"]
    if how == "env":
        env["GOVKIT_DDS_PREFIX"] = str(prefix)
    else:
        argv += ["--dds-prefix", str(prefix)]
    r = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and str(prefix) in lines[0], r.stderr
    assert ("GOVKIT_DDS_PREFIX" if how == "env" else "--dds-prefix") in lines[0]
    # nothing was made: no PKI, no signed files, no results, no program built
    assert list(work.iterdir()) == [] and not (tmp_path / "cache").exists()


def test_a_fast_dds_2_prefix_is_read_from_its_own_headers(tmp_path):
    install = find_fastdds_install(_prefix(tmp_path, "good"), "--dds-prefix")
    assert install.version == "2.14.4"
    assert install.to_json()["name"] == "Fast DDS"
    assert install.said == f"govkit: Fast DDS 2.14.4 in {install.prefix} (--dds-prefix)"


def test_ament_prefix_path_counts_for_fast_dds_only_through_an_entry_holding_it(
        tmp_path, monkeypatch):
    monkeypatch.delenv("GOVKIT_DDS_PREFIX", raising=False)
    cyclone_only = tmp_path / "cyclone"
    (cyclone_only / "lib").mkdir(parents=True)
    (cyclone_only / "lib" / "libddsc.so").write_bytes(b"")
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(cyclone_only))
    assert prefix_options("fastdds", None) == {}       # the system's Fast DDS
    fast = _prefix(tmp_path, "no security")
    monkeypatch.setenv("AMENT_PREFIX_PATH", os.pathsep.join([str(cyclone_only), str(fast)]))
    with pytest.raises(GovkitError, match=r"^AMENT_PREFIX_PATH .*: a Fast DDS install "
                                          r"without DDS Security"):
        prefix_options("fastdds", None)


def test_the_program_is_cached_per_runtime_build(tmp_path):
    cxx = compiler()
    if cxx is None:
        pytest.skip("no C++ compiler")
    install = find_fastdds_install(_prefix(tmp_path, "good"), "--dds-prefix")
    first = build_key(cxx, install)
    assert first == build_key(cxx, install) != build_key(cxx)
    assert f"-Wl,-rpath,{install.lib_dir}" in prefix_flags(install)
    install.library.write_bytes(install.library.read_bytes() + b"rebuilt")
    assert build_key(cxx, install) != first


@pytest.mark.fastdds
def test_bench_on_the_systems_fast_dds_given_as_a_prefix(tmp_path):
    """/usr as --dds-prefix: the program is compiled against it (its own cache entry, run
    path /usr's library directory) and results.json records the prefix and 2.9.1."""
    require_fastdds()
    if not SYSTEM_CONFIG.is_file():
        pytest.skip("Debian's libfastrtps-dev headers are not where this test looks")
    init = subprocess.run([GOVKIT, "pki", "init"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert init.returncode == 0, init.stderr
    r = subprocess.run([GOVKIT, "bench", "--runner", "fastdds", "--dds-prefix", "/usr",
                        "--profile", "none,rtps_sign", "--sizes", "1024", "--rounds", "3",
                        "--instances", "1", "--budget", "1", "--no-report", "--out", "res"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=1500,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "govkit: Fast DDS 2.9.1 in /usr (--dds-prefix)" in r.stderr
    doc = json.loads((tmp_path / "res" / "results.json").read_text())
    assert_valid(doc, "bench")
    runtime = doc["settings"]["runtime"]
    assert (runtime["name"], runtime["version"], runtime["prefix"], runtime["source"]) == \
        ("Fast DDS", "2.9.1", "/usr", "--dds-prefix")
    program = doc["environment"]["fastdds_perf"]
    cxx = compiler()
    assert program == f"fastdds_perf-{build_key(cxx, find_fastdds_install(Path('/usr'), 'x'))}"
    assert program != Path(require_fastdds()).name        # not the plain run's program
    signed = [x for x in doc["rotation"]["slots"] if x["arm"] == "rtps_sign"]
    assert signed and all(x["status"] == "ok" for x in signed), signed
