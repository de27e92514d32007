"""`govkit bench --runs N` (govkit.bench.runs): N real runs into one directory, each a
complete results directory, pooled at the top, the time announced before the first run and
recorded after the last."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.dds import needs_cyclone

from govkit.results.pool import BETWEEN_RUNS, POOLED_MD_NAME, POOLED_NAME

GOVKIT = str(Path(sys.executable).with_name("govkit"))


def bench(tmp_path: Path, *args: str, timeout: int = 60) -> subprocess.CompletedProcess:
    return subprocess.run([GOVKIT, "bench", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def test_runs_refuses_what_it_cannot_do_with_one_line(tmp_path):
    r = bench(tmp_path, "--runs", "1", "--profile", "none,rtps_sign")
    assert r.returncode == 2 and "--runs" in r.stderr
    r = bench(tmp_path, "--runs", "2", "--resume", "--out", "x", "--profile", "none,rtps_sign")
    assert r.returncode == 2 and "--runs does not take --resume" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "x").exists()
    r = bench(tmp_path, "--runs", "2", "--runner", "ddsperf", "--profile", "none,rtps_sign",
              "--out", "y")
    assert r.returncode == 2 and "--runs pools paired ratios: runner ddsperf" in r.stderr
    assert not (tmp_path / "y").exists()


def test_runs_dry_run_announces_the_time_and_writes_nothing(tmp_path):
    r = bench(tmp_path, "--runs", "3", "--profile", "none,rtps_sign", "--sizes", "32",
              "--budget", "100", "--out", "res", "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "3 runs into res: about 5.7 min (3 × (100 s --budget + 14 s to finish)" in r.stderr
    assert r.stdout.strip()                  # the run's plan, as a dry run prints it
    assert not (tmp_path / "res").exists()
    # each lane of each paired point adds to what a run takes after its budget
    r = bench(tmp_path, "--runs", "2", "--all-profiles", "--mode", "both", "--sizes", "32,1024",
              "--budget", "300", "--out", "res", "--dry-run")
    assert "2 runs into res: about 14.0 min (2 × (300 s --budget + 120 s to finish)" in \
        r.stderr, r.stderr


@needs_cyclone
@pytest.mark.cyclone
def test_runs_makes_each_run_and_pools_them(tmp_path):
    r = bench(tmp_path, "--runs", "2", "--profile", "none,rtps_sign", "--sizes", "32",
              "--rounds", "3", "--budget", "1", "--instances", "1", "--out", "res",
              "--no-report", "--allow-idle", timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    said = r.stderr
    assert said.index("2 runs into res: about") < said.index("run 1 of 2") \
        < said.index("run 1 took") < said.index("run 2 of 2")
    for i in (1, 2):
        doc = json.loads((tmp_path / f"res/run-{i}/results.json").read_text())
        assert doc["rotation"]["slots"] and doc["settings"]["profiles"] == ["none", "rtps_sign"]
    pooled = json.loads((tmp_path / "res" / POOLED_NAME).read_text())
    assert [x["dir"] for x in pooled["runs"]] == ["res/run-1", "res/run-2"]
    assert pooled["rerun_term_source"] == BETWEEN_RUNS
    timing = pooled["timing"]
    assert timing["runs_asked"] == 2 and timing["announced_s"] == 2 * (1 + 14)
    assert len(timing["run_wall_s"]) == 2 and timing["actual_s"] >= sum(timing["run_wall_s"])
    assert timing["announced_after_first_run_s"] == round(2 * timing["run_wall_s"][0])
    sign = [p for p in pooled["points"] if p["arm"] == "rtps_sign"]
    assert sign and all(p["runs"] == 2 and len(p["run_ratios"]) == 2 for p in sign)
    assert (tmp_path / "res" / POOLED_MD_NAME).read_text().startswith("# 2 runs pooled")
    assert "pooled: res/pooled.json" in r.stdout and "took" in r.stdout
