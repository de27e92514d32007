"""`govkit bench` end to end on real ddsperf: results, CSVs, report, failure and resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _dds import needs_cyclone

pytestmark = [needs_cyclone, pytest.mark.cyclone]
GOVKIT = str(Path(sys.executable).with_name("govkit"))


def _govkit(*args, cwd, timeout=240):
    return subprocess.run([GOVKIT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def test_bench_every_profile_writes_results_csv_and_report(tmp_path):
    """All seven profiles, one size, short: every secured profile's signed bundle is
    made on the fly and accepted by Cyclone, and every point produces numbers."""
    r = _govkit("bench", "--all-profiles", "--sizes", "64", "--duration", "1",
                "--out", "res", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert "created a test PKI in pki/" in r.stderr
    doc = json.loads((tmp_path / "res/results.json").read_text())
    assert doc["schema"] == "govkit.bench/1"
    assert {"govkit", "cyclonedds", "openssl", "cpu", "kernel"} <= doc["environment"].keys()
    assert doc["environment"]["cyclonedds"].startswith("0.10")
    names = ["none", "no_protection", "rtps_sign", "rtps_encrypt", "sign_origin_data_encrypt",
             "sign_submsg_encrypt_origin_data_encrypt", "sign_submsg_encrypt"]
    assert [r["profile"] for r in doc["results"]] == names
    for res in doc["results"]:
        assert res["status"] == "ok" and res["mode"] == "latency" and res["size"] == 64
        assert set(res["latency_us"]) == {"median", "mean", "std", "min", "max", "p90", "p99"}
        assert res["count"] > 0
        lat = res["latency_us"]
        assert 0 < lat["min"] <= lat["median"] <= lat["max"]
    summary = {s["profile"]: s for s in doc["summary"]}
    assert summary["none"]["overhead_vs_none"] == 1.0
    # RTI published 25 µs for rtps_sign vs 21 µs for none at 64 B.
    assert summary["rtps_sign"]["rti_ratio"] == pytest.approx(25 / 21, abs=0.01)
    # Six signed governance files + two permissions, each with its SHA-256.
    assert len(doc["signed_files"]) == 8
    assert all(len(f["sha256"]) == 64 for f in doc["signed_files"])
    assert (tmp_path / "res/lat_udpv4_pub_unkeyed_rel_security_rtps_sign_orig_data_encrypt.csv"
            ).read_text().startswith("Length (Bytes),")
    assert (tmp_path / "res/report.html").stat().st_size > 10_000
    assert "sign_submsg_encrypt" in (tmp_path / "res/summary.md").read_text()
    assert "× none" in r.stdout    # the summary table


def _pong_of(out_dir: Path, exclude: set[int]) -> int | None:
    """pid of a ddsperf pong whose configuration lives under out_dir."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) in exclude:
            continue
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
            env = (d / "environ").read_bytes()
        except OSError:
            continue
        if cmd[0].endswith(b"ddsperf") and b"pong" in cmd and str(out_dir).encode() in env:
            return int(d.name)
    return None


def test_killed_peer_fails_one_point_keeps_the_rest_and_resume_finishes(tmp_path):
    out = tmp_path / "res"
    args = ["bench", "--profile", "none", "--sizes", "32,64,128", "--duration", "3",
            "--out", str(out), "--no-report"]
    proc = subprocess.Popen([GOVKIT, *args], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        first_pong = None
        # Wait until point 1 is recorded, then kill point 2's pong while it runs.
        while time.monotonic() < deadline:
            doc = json.loads((out / "results.json").read_text()) \
                if (out / "results.json").exists() else {"results": []}
            if len(doc["results"]) == 0 and first_pong is None:
                first_pong = _pong_of(out, set())
            if len(doc["results"]) == 1:
                pong = _pong_of(out, {first_pong} if first_pong else set())
                if pong:
                    time.sleep(1.5)  # mid-run: after warm-up, before the 3 measured seconds
                    os.kill(pong, signal.SIGKILL)
                    break
            time.sleep(0.1)
        else:
            pytest.fail("never saw point 2's pong")
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 1, stdout + stderr
    assert "Traceback" not in stderr
    assert "FAILED none latency size 64" in stderr
    assert "1 point(s) failed" in stderr
    doc = json.loads((out / "results.json").read_text())
    status = {r["size"]: r["status"] for r in doc["results"]}
    assert status == {32: "ok", 64: "failed", 128: "ok"}
    failed = next(r for r in doc["results"] if r["size"] == 64)
    assert "exited with status -9" in failed["error"] or "measured seconds" in failed["error"]
    kept = {r["size"]: r["started"] for r in doc["results"] if r["status"] == "ok"}

    r = _govkit(*args, "--resume", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 completed point(s) kept" in r.stderr
    doc = json.loads((out / "results.json").read_text())
    assert {r["size"]: r["status"] for r in doc["results"]} == {32: "ok", 64: "ok", 128: "ok"}
    assert {r["size"]: r["started"] for r in doc["results"] if r["size"] != 64} == kept


def test_bench_refuses_unknown_profile_and_bad_sizes(tmp_path):
    r = _govkit("bench", "--profile", "nope", cwd=tmp_path)
    assert r.returncode == 2 and "valid profiles: none, no_protection" in r.stderr
    r = _govkit("bench", "--profile", "none", "--sizes", "32,abc", cwd=tmp_path)
    assert r.returncode == 2 and "invalid --sizes" in r.stderr
    assert "Traceback" not in r.stderr


def test_missing_ddsperf_is_one_clear_message(tmp_path):
    env = {**os.environ, "PATH": "/nonexistent"}
    r = subprocess.run([GOVKIT, "bench", "--profile", "none"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "ddsperf not found" in r.stderr and "apt-get install cyclonedds-tools" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_keeps_completed_points_and_stops_the_runners(tmp_path, sig):
    out = tmp_path / "res"
    proc = subprocess.Popen([GOVKIT, "bench", "--profile", "none", "--sizes", "32,64",
                             "--duration", "3", "--out", str(out), "--no-report"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if (out / "results.json").exists() and \
                    json.loads((out / "results.json").read_text())["results"]:
                break
            time.sleep(0.1)
        time.sleep(1.0)   # point 2 is running now
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert "interrupted; completed points are kept" in stderr and "--resume" in stderr
    assert "Traceback" not in stderr
    doc = json.loads((out / "results.json").read_text())
    assert [(r["size"], r["status"]) for r in doc["results"]] == [(32, "ok")]
    time.sleep(0.5)
    assert _pong_of(out, set()) is None, "a ddsperf process outlived govkit"
