"""`govkit bench` end to end on real ddsperf: results, CSVs, report, failure and resume."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.dds import needs_cyclone

from govkit.bench.options import Cell
from govkit.bench.schedule import round_order
from govkit.catalog.profiles import get_profile
from govkit.results.summary import summarize

pytestmark = [needs_cyclone, pytest.mark.cyclone]
GOVKIT = str(Path(sys.executable).with_name("govkit"))


def _per_repeat(args) -> list[str]:
    """These tests are about ddsperf's per-repeat design (repeats, resume, interrupts): the
    default runner rotates instead (tests/test_rotation.py)."""
    args = list(args)
    return ["bench", "--runner", "ddsperf", *args[1:]] if args[:1] == ["bench"] else args


def _govkit(*args, cwd, timeout=240):
    return subprocess.run([GOVKIT, *_per_repeat(args)], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def test_bench_every_profile_writes_results_and_csv(tmp_path):
    """All seven profiles, one size, one short repeat: every secured profile's signed bundle
    is made on the fly and accepted by Cyclone, and every point produces raw rows."""
    r = _govkit("bench", "--all-profiles", "--sizes", "64", "--duration", "1", "--repeat", "1",
                "--max-repeat", "1", "--seed", "7", "--out", "res", "--no-report",
                cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert "created a test PKI in pki/" in r.stderr
    # piped (no terminal, no live bar): one progress line per finished repeat, with the budget
    # and an estimate of what is left (issue 23, item 2), down to nothing after the last
    progress = [x for x in r.stderr.splitlines() if " repeat 0: " in x]
    left = [re.search(r"\(\d+ s of the \d+ s budget; about (\d+) s left\)$", x)
            for x in progress]
    assert len(progress) == 7 and all(left), r.stderr
    assert int(left[0][1]) > 0 and int(left[-1][1]) == 0, progress
    doc = json.loads((tmp_path / "res/results.json").read_text())
    assert doc["schema"] == "govkit.bench/3"
    assert {"govkit", "cyclonedds", "openssl", "cpu", "kernel"} <= doc["environment"].keys()
    assert doc["environment"]["cyclonedds"].startswith("0.10")
    settings = doc["settings"]
    assert settings["seed"] == 7 and settings["warmup_s"] == 1 and settings["duration_s"] == 1
    names = ["none", "no_protection", "rtps_sign", "rtps_encrypt", "sign_origin_data_encrypt",
             "sign_submsg_encrypt_origin_data_encrypt", "sign_submsg_encrypt"]
    # run in the seeded shuffled order, not catalog order
    ran = [r["profile"] for r in sorted(doc["results"], key=lambda r: r["order"])]
    assert sorted(ran) == sorted(names) and ran == [
        c.profile.name for c in round_order([Cell(get_profile(n), "latency", 64) for n in names],
                                            7, 0)]
    pinned = len(os.sched_getaffinity(0)) >= 2
    for res in doc["results"]:
        assert res["status"] == "ok" and res["mode"] == "latency" and res["size"] == 64
        assert res["raw"]["format"] == "latency-per-second" and len(res["raw"]["rows"]) >= 2
        assert res["warmup_rows"] == 1 and res["measured_rows"] == 1
        lat = res["latency_us"]
        assert 0 < lat["min"] <= lat["median_of_second_medians"] <= lat["max"]
        assert res["count"] > 0
        if pinned:   # the affinity the processes really had
            assert res["cpus"] == {"sub": str(settings["cpus"]["sub"]),
                                   "pub": str(settings["cpus"]["pub"])}
            assert res["commands"][0].split()[res["commands"][0].split().index("taskset") + 2] \
                == str(settings["cpus"]["sub"])
    summary = {s["profile"]: s for s in doc["summary"]}
    assert summary["none"]["vs_none"] is None
    assert summary["rtps_sign"]["statistic"] == "median of per-second medians (one-way latency)"
    # RTI published 25 µs for rtps_sign vs 21 µs for none at 64 B.
    assert summary["rtps_sign"]["rti"]["ratio"] == pytest.approx(25 / 21, abs=0.01)
    assert summary["rtps_sign"]["rti"]["added_us"] == 4
    # Per secured profile: its governance + the two shared permissions, each with its SHA-256.
    assert len(doc["signed_files"]) == 6 * 3
    assert len({f["path"] for f in doc["signed_files"]}) == 6 + 2
    assert all(len(f["sha256"]) == 64 for f in doc["signed_files"])
    csv = (tmp_path / "res/lat_udpv4_pub_unkeyed_rel_security_rtps_sign_orig_data_encrypt.csv"
           ).read_text()
    assert csv.startswith("Length (Bytes),") and "Median of per-second medians" in csv
    assert "× none" in r.stdout and "95% CI" in r.stdout   # the summary table
    # every figure can be recomputed from the raw rows alone
    stripped = json.loads(json.dumps(doc))
    for res in stripped["results"]:
        res.pop("latency_us")
    stripped["summary"] = []
    assert summarize(stripped) == doc["summary"]


def test_extra_repeats_until_the_target_or_the_budget(tmp_path):
    """An unreachable target: repeats continue up to --max-repeat; with no budget left,
    none are added and the run says so."""
    args = ["bench", "--profile", "none", "--sizes", "32", "--duration", "1", "--repeat", "1",
            "--max-repeat", "3", "--target-ci", "0.001", "--no-report"]
    r = _govkit(*args, "--out", "a", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "a/results.json").read_text())
    assert [x["repeat"] for x in doc["results"]] == [0, 1, 2]
    assert "wide_interval" in [f["code"] for f in doc["summary"][0]["flags"]]
    assert "wide_interval on 1 point(s)" in r.stderr and "--budget" in r.stderr
    r = _govkit(*args, "--budget", "0", "--out", "b", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "b/results.json").read_text())
    assert [x["repeat"] for x in doc["results"]] == [0]
    assert "stopped adding repeats: the 0 s budget is spent" in r.stderr


def test_resume_refuses_other_settings(tmp_path):
    r = _govkit("bench", "--profile", "none", "--sizes", "32", "--duration", "1",
                "--repeat", "1", "--max-repeat", "1", "--out", "res", "--no-report",
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    before = (tmp_path / "res/results.json").read_text()
    same = {"--sizes": "32", "--duration": "1", "--warmup": "1"}
    for change, named in (({"--duration": "2"}, "--duration is 2 but the run"),
                          ({"--sizes": "32,64"}, "--sizes is 32,64 but the run"),
                          ({"--warmup": "2"}, "--warmup is 2 but the run"),
                          ({"--no-pin": None}, "--pin/--no-pin is False but the run")):
        args = ["bench", "--profile", "none", "--repeat", "2", "--out", "res", "--no-report",
                "--resume"]
        for option, value in {**same, **change}.items():
            args += [option] if value is None else [option, value]
        r = _govkit(*args, cwd=tmp_path)
        assert r.returncode == 2, (change, r.stderr)
        assert named in r.stderr and "choose a new --out" in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert (tmp_path / "res/results.json").read_text() == before


def test_dry_run_creates_nothing_and_needs_no_ddsperf(tmp_path):
    env = {**os.environ, "PATH": "/nonexistent"}
    r = subprocess.run([GOVKIT, *_per_repeat(["bench", "--all-profiles", "--sizes", "32,1024",
                                              "--seed", "3", "--dry-run"])],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert list(tmp_path.iterdir()) == []
    lines = r.stdout.splitlines()
    assert sum(1 for x in lines if x.startswith("# ") and " repeat " in x) == 7 * 2 * 3
    assert sum(1 for x in lines if "ddsperf" in x and " ping " in x) == 7 * 2 * 3
    assert "order seed 3" in lines[0]


def test_absurd_settings_are_refused_at_once(tmp_path):
    for args, msg in ((["--repeat", "1000000000000000"], "--repeat 1000000000000000 is out of"),
                      (["--duration", "0"], "--duration 0 is out of range"),
                      (["--repeat", "5", "--max-repeat", "2"], "--max-repeat 2 is below"),
                      (["--target-ci", "0"], "--target-ci 0 must be"),
                      (["--budget", "soon"], "invalid --budget"),
                      # recorded in results.json, whose reader refuses numbers past 2^64:
                      # the run went through and then its results could not be reported
                      (["--seed", "99999999999999999999999"], "--seed 99999999999999999999999 "
                                                              "is out of range"),
                      (["--seed", "-5"], "--seed -5 is out of range")):
        r = _govkit("bench", "--profile", "none", "--dry-run", *args, cwd=tmp_path, timeout=30)
        assert r.returncode == 2 and msg in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr


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
            "--repeat", "1", "--max-repeat", "1", "--seed", "11", "--out", str(out),
            "--no-report"]
    order = [c.size for c in round_order([Cell(get_profile("none"), "latency", size)
                                          for size in (32, 64, 128)], 11, 0)]
    proc = subprocess.Popen([GOVKIT, *_per_repeat(args)], cwd=tmp_path, stdout=subprocess.PIPE,
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
    killed = order[1]
    assert f"FAILED none latency size {killed} repeat 0" in stderr
    assert "1 repeat(s) failed" in stderr
    doc = json.loads((out / "results.json").read_text())
    status = {r["size"]: r["status"] for r in doc["results"]}
    assert status == {size: "failed" if size == killed else "ok" for size in order}
    failed = next(r for r in doc["results"] if r["size"] == killed)
    assert "exited with status -9" in failed["error"] or "seconds" in failed["error"]
    kept = {r["size"]: r["started"] for r in doc["results"] if r["status"] == "ok"}

    r = _govkit(*args, "--resume", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 completed repeat(s) kept" in r.stderr
    doc = json.loads((out / "results.json").read_text())
    assert {r["size"]: r["status"] for r in doc["results"]} == {32: "ok", 64: "ok", 128: "ok"}
    assert {r["size"]: r["started"] for r in doc["results"] if r["size"] != killed} == kept


@needs_cyclone
@pytest.mark.parametrize("dry_run", [(), ("--dry-run",)])
def test_a_rotation_without_none_is_refused_before_any_work(tmp_path, dry_run):
    """issue 37, item 12: refused only after the PKI, the signed files and an empty
    results.json were written."""
    r = subprocess.run([GOVKIT, "bench", "--profile", "rtps_sign", "--out", "res", *dry_run],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.strip().splitlines() == [
        "govkit: the rotating latency design pairs every profile with `none`: add --profile "
        "none (or use --all-profiles)"]
    assert sorted(p.name for p in tmp_path.iterdir()) == []      # no pki/, build/, res/


def test_bench_refuses_unknown_profile_and_bad_sizes(tmp_path):
    r = _govkit("bench", "--profile", "nope", cwd=tmp_path)
    assert r.returncode == 2 and "valid profiles: none, no_protection" in r.stderr
    r = _govkit("bench", "--profile", "none", "--sizes", "32,abc", cwd=tmp_path)
    assert r.returncode == 2 and "invalid --sizes" in r.stderr
    assert "Traceback" not in r.stderr
    # wire-check's option is --size, one size: its message names that option
    for size in ("0", "11"):
        r = _govkit("wire-check", "--profile", "none", "--size", size, cwd=tmp_path)
        assert r.returncode == 2 and f"invalid --size '{size}'" in r.stderr, r.stderr
        assert "--sizes" not in r.stderr and len(r.stderr.splitlines()) == 1


def test_missing_ddsperf_is_one_clear_message(tmp_path):
    env = {**os.environ, "PATH": "/nonexistent"}
    r = subprocess.run([GOVKIT, *_per_repeat(["bench", "--profile", "none"])], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "ddsperf not found" in r.stderr and "apt-get install cyclonedds-tools" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_keeps_completed_points_and_stops_the_runners(tmp_path, sig):
    out = tmp_path / "res"
    proc = subprocess.Popen([GOVKIT, *_per_repeat([
                             "bench", "--profile", "none", "--sizes", "32,64",
                             "--duration", "3", "--repeat", "1", "--max-repeat", "1",
                             "--seed", "5", "--out", str(out), "--no-report"])],
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
    assert "interrupted; completed repeats are kept" in stderr and "--resume" in stderr
    assert "Traceback" not in stderr
    doc = json.loads((out / "results.json").read_text())
    first = round_order([Cell(get_profile("none"), "latency", s) for s in (32, 64)], 5, 0)[0]
    assert [(r["size"], r["status"]) for r in doc["results"]] == [(first.size, "ok")]
    time.sleep(0.5)
    assert _pong_of(out, set()) is None, "a ddsperf process outlived govkit"


def _runners_of(out_dir: Path) -> list[int]:
    """pids of the ddsperf processes whose configuration lives under out_dir."""
    pids = []
    for d in Path("/proc").iterdir():
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0") if d.name.isdigit() else [b""]
            if cmd[0].endswith(b"ddsperf") and str(out_dir).encode() in \
                    (d / "environ").read_bytes():
                pids.append(int(d.name))
        except OSError:
            continue
    return pids


def test_sigkill_of_govkit_takes_its_runners_with_it(tmp_path):
    """govkit killed by SIGKILL (no handler runs) mid-point: its ddsperf processes, each in
    its own session, die with it instead of staying behind as orphans (a ping whose peer
    is gone waits for a match forever)."""
    out = tmp_path / "res"
    proc = subprocess.Popen([GOVKIT, *_per_repeat([
                             "bench", "--profile", "none", "--sizes", "32",
                             "--duration", "30", "--repeat", "1", "--max-repeat", "1",
                             "--out", str(out), "--no-report"])], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(_runners_of(out)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        runners = _runners_of(out)
        assert len(runners) == 2, "never saw the point's pong and ping"
        time.sleep(1)                      # both running, matched
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        while _runners_of(out) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = _runners_of(out)
    finally:
        proc.kill()
        for pid in _runners_of(out):
            os.kill(pid, signal.SIGKILL)
    assert left == [], f"ddsperf processes outlived govkit: {left}"


def test_dry_run_refuses_what_the_run_would(tmp_path):
    """issue 23: --dry-run checks the paths the real run refuses, and --resume's dry run
    shows the stored run's order (its seed), not a new one."""
    (tmp_path / "afile").write_text("x")
    r = _govkit("bench", "--profile", "none", "--dry-run", "--out", "afile", cwd=tmp_path)
    assert r.returncode == 2 and "--out afile: exists and is not a directory" in r.stderr
    r = _govkit("bench", "--profile", "none", "--dry-run", "--ca", "afile", cwd=tmp_path)
    assert r.returncode == 2 and "--ca afile: exists and is not a directory" in r.stderr
    r = _govkit("bench", "--profile", "none", "--dry-run", "--ssh-config", "nope",
                cwd=tmp_path)
    assert r.returncode == 2 and "--ssh-config nope: no such file" in r.stderr
    stored = tmp_path / "old"
    stored.mkdir()
    doc = json.loads((Path(__file__).parents[1] / "data/report/full/results.json").read_text())
    doc["settings"]["seed"] = 424242
    doc["schema"] = "govkit.bench/3"          # a run this govkit could resume
    (stored / "results.json").write_text(json.dumps(doc))
    r = _govkit("bench", "--profile", "none", "--dry-run", "--resume", "--out", "old",
                cwd=tmp_path)
    assert r.returncode == 0 and "order seed 424242" in r.stdout, r.stdout + r.stderr


def test_wire_check_refuses_an_unusable_pcap_directory_before_any_work(tmp_path):
    (tmp_path / "afile").write_text("x")
    r = subprocess.run([GOVKIT, "wire-check", "--profile", "none", "--pcap", "afile/sub"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and "--pcap afile/sub: cannot create it" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]     # no pki/, no build/
