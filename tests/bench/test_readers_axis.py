"""`govkit bench --readers` (issue 41): the readers count as a point axis. The cost per
reader on known input; names and refusals; and real runs of govkit's Cyclone DDS and Fast
DDS programs at 1 and 2 readers, whose rows, slots, terminal table and report carry the
readers count, while a run at `--readers 1` has the shape of a run without it.

Not timed: every check is on what the run printed and stored, never on how fast."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.dds import needs_cyclone
from helpers.procs import left_running, marked_env

from govkit.bench.rotation import arms_of
from govkit.catalog.profiles import PROFILES
from govkit.common.errors import GovkitError
from govkit.results import paired
from govkit.results.cost_model import fit_readers, reader_cost_models
from govkit.runners.readers import parse_readers_list, readers_arm, split_readers_arm

GOVKIT = str(Path(sys.executable).with_name("govkit"))


# --------------------------------------------------------------- names, lists, refusals

def test_an_arm_at_n_readers_is_named_so_and_read_back():
    assert readers_arm("rtps_sign", 1) == "rtps_sign"          # 1 reader: unchanged
    assert readers_arm("rtps_sign", 4) == "rtps_sign@4readers"
    for name in ("rtps_sign", "none", paired.AA_ARM, "rtps_encrypt@aes128"):
        for n in (1, 2, 64):
            assert split_readers_arm(readers_arm(name, n)) == (name, n)
    assert split_readers_arm("rtps_encrypt@aes128") == ("rtps_encrypt@aes128", 1)
    assert paired.is_baseline_arm("none@4readers") and not paired.is_baseline_arm("none:aa")
    assert paired.is_aa_arm(readers_arm(paired.AA_ARM, 8))


def test_the_readers_list_is_parsed_and_bad_counts_refused_in_one_line():
    assert parse_readers_list("1,2,4,8") == [1, 2, 4, 8]
    assert parse_readers_list(" 4, 1,4") == [4, 1]
    for bad in ("0", "65", "two", "1,,2", "²", "-1"):
        with pytest.raises(GovkitError, match="invalid --readers"):
            parse_readers_list(bad)


@pytest.mark.parametrize("args, said", [
    (["--runner", "ddsperf"], "--runner ddsperf runs one"),
    (["--runner", "fastdds", "--mode", "throughput", "--per-repeat-throughput"],
     "throughput per repeat"),
    (["--mode", "discovery"], "--mode discovery"),
])
def test_readers_are_refused_where_one_reader_runs(tmp_path, args, said):
    r = subprocess.run([GOVKIT, "bench", "--all-profiles", "--readers", "1,2", *args,
                        "--dry-run"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0] and "Traceback" not in r.stderr, r.stderr


def test_the_dry_run_shows_each_counts_pairs_with_their_readers(tmp_path):
    r = subprocess.run([GOVKIT, "bench", "--profile", "none,rtps_sign", "--readers", "1,4",
                        "--sizes", "32", "--dry-run"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert "# rtps_sign@4readers: 3 pair(s) of" in r.stdout
    assert "# none@4readers: 6 pair(s) of" in r.stdout     # none at 4, as many as at 1
    pongs = [x for x in r.stdout.splitlines() if "cyclone_perf pong" in x]
    assert sum(x.endswith(" 4") for x in pongs) == 3 and len(pongs) == 6


def test_arms_are_named_for_one_axis_at_a_time():
    """Readers and versions each name an arm `P@SUFFIX`; the version axis pairs `P@TAG` with
    `none@TAG` by name, so the two together are refused rather than misnamed or mispaired."""
    profiles = [p for p in PROFILES if p.name in ("none", "rtps_sign")]
    at4 = arms_of(profiles, aa=True, readers=4)
    assert {a.name for a in at4} == {"rtps_sign@4readers", "none@4readers",
                                     readers_arm(paired.AA_ARM, 4)}
    assert all(a.readers == 4 and a.runtime is None for a in at4)
    assert [a.name for a in at4 if a.is_baseline] == ["none@4readers"]
    versions = arms_of(profiles, aa=False, runtimes=["11.0.1"])
    assert {a.name for a in versions} >= {"none@11.0.1", "rtps_sign@11.0.1"}
    assert all(a.readers == 1 for a in versions)
    # none@TAG is its install's own none, not the baseline arm, and no readers count
    assert [a.name for a in versions if a.is_baseline] == ["none"]
    assert split_readers_arm("rtps_sign@11.0.1") == ("rtps_sign@11.0.1", 1)
    with pytest.raises(GovkitError, match="not with a version axis"):
        arms_of(profiles, aa=False, runtimes=["11.0.1"], readers=4)


# ------------------------------------------------------------------- the cost per reader

def _pairs(added: float, rounds: int = 30, spread: float = 0.5) -> list[paired.Pairing]:
    """Rounds whose slot adds `added` µs over a 100 µs baseline, ± a fixed pattern."""
    return [paired.Pairing(r, r % 3, 100 + added + spread * ((r % 5) - 2), 100.0, 100.0)
            for r in range(rounds)]


def test_the_slope_per_reader_is_recovered_with_an_interval():
    # 10 + 7 µs per reader, exactly: counts 1, 2, 4, 8
    counts = {n: (readers_arm("x", n), _pairs(10 + 7 * n)) for n in (1, 2, 4, 8)}
    m = fit_readers("x", 1024, ("latency_added_us", "what", ""), counts, 500)
    assert m["per_reader"] == pytest.approx(7, abs=0.05)
    assert m["intercept"] == pytest.approx(10, abs=0.2)
    lo, hi = m["per_reader_ci95"]
    assert lo <= 7 <= hi and hi - lo < 1
    assert m["fits"] is True and m["tested"] is True
    assert [c["readers"] for c in m["counts"]] == [1, 2, 4, 8]


def test_growth_that_is_no_line_is_said_not_forced():
    # quadratic: 2 n² µs, far outside any one count's interval from the best line
    counts = {n: (readers_arm("x", n), _pairs(2 * n * n, spread=0.2)) for n in (1, 2, 4, 8)}
    m = fit_readers("x", 32, ("latency_added_us", "what", ""), counts, 500)
    assert m["fits"] is False and m["why"].startswith("not a line")
    # one count: no line at all
    one = fit_readers("x", 32, ("latency_added_us", "what", ""),
                      {4: ("x@4readers", _pairs(5))}, 500)
    assert one["per_reader"] is None and one["fits"] is False and "a line needs two" in one["why"]
    # a count with too few rounds for an interval is shown, not fitted
    few = fit_readers("x", 32, ("latency_added_us", "what", ""),
                      {1: ("x", _pairs(5, rounds=2)), 4: ("x@4readers", _pairs(9))}, 500)
    assert [c["measured_ci95"] is None for c in few["counts"]] == [True, False]
    assert few["per_reader"] is None and "1 readers count(s) with an interval" in few["why"]


def test_a_run_at_one_reader_has_no_cost_per_reader():
    slots = [{"round": r, "position": p, "arm": a, "profile": a.split("@")[0], "instance": 0,
              "size": 32, "status": "ok", "p50": v}
             for r in range(3) for p, (a, v) in enumerate((("none", 10), ("x", 12),
                                                           ("none", 10)))]
    doc = {"schema": "govkit.bench/3", "settings": {}, "profiles": [], "results": [],
           "rotation": {"settings": {}, "slots": slots, "rounds": [], "pairs": []}}
    assert reader_cost_models(doc) is None


# --------------------------------------------------------------------------- real runs

def _bench(tmp_path: Path, out: str, *args: str, runner: str = "cyclone",
           env=None) -> subprocess.CompletedProcess:
    r = subprocess.run([GOVKIT, "bench", "--runner", runner, "--profile", "none",
                        "--profile", "sign_origin_data_encrypt", "--sizes", "32",
                        "--rounds", "3", "--instances", "1", "--budget", "1", "--seed", "7",
                        "--out", out, *args], cwd=tmp_path, capture_output=True, text=True,
                       timeout=1800, stdin=subprocess.DEVNULL, env=env)
    # exit 1 only for a pair that failed (e.g. matched nobody within its wait on a machine
    # at load 200): recorded, the run went on with the others; the checks below need the
    # points they read
    failed = "repeat(s) failed" in r.stderr and "Traceback" not in r.stderr
    assert r.returncode == 0 or (r.returncode == 1 and failed), r.stdout + r.stderr
    return r


def _check_two_counts(tmp_path: Path, runner: str) -> None:
    env, mark = marked_env()
    r = _bench(tmp_path, "two", "--readers", "1,2", runner=runner, env=env)
    doc = json.loads((tmp_path / "two/results.json").read_text())
    assert doc["settings"]["readers"] == [1, 2]
    rot = doc["rotation"]
    # each count's pairs started with its readers; `none` at 2 is 2's baseline
    by_arm = {p["arm"]: p for p in rot["pairs"]}
    assert by_arm["none@2readers"]["readers"] == 2 and "readers" not in by_arm["none"]
    two = [s for s in rot["slots"] if s["arm"].endswith("@2readers")]
    assert two and all(s["readers"] == 2 for s in two)
    ok = [s for s in two if s["status"] == "ok"]
    assert ok and all(s["peers"] == 2 and len(s["per_reader"]) == 2 for s in ok)
    # the counts ran one after the other: no round holds both
    assert not {s["round"] for s in two} & {s["round"] for s in rot["slots"]
                                              if "@" not in s["arm"]}
    rows = {(x["profile"], x["size"]): x for x in doc["summary"]}
    assert rows[("sign_origin_data_encrypt", 32)]["readers"] == 1
    at2 = rows[("sign_origin_data_encrypt@2readers", 32)]
    assert at2["readers"] == 2 and at2["vs_none"]["ratio"] > 1
    assert at2["rti"] is None        # RTI's figures are of one reader
    # the terminal table's readers column: the profile's name, then its count
    table = [x for x in r.stdout.splitlines() if "sign_origin_data_encrypt" in x]
    assert any("│       2 │" in x for x in table) and "readers" in r.stdout, r.stdout
    # the cost per reader, and the report's per-reader figure and plot
    model = [m for m in doc["cost_per_reader"]["models"] if m["figure"] == "latency_added_us"]
    assert model[0]["profile"] == "sign_origin_data_encrypt" and \
        [c["readers"] for c in model[0]["counts"]] == [1, 2]
    assert model[0]["per_reader"] is not None and model[0]["tested"] is False
    html = (tmp_path / "two/report.html").read_text()
    assert 'id="per-reader-matrix"' in html and 'id="fig-readers-32"' in html
    assert "**Per reader**" in (tmp_path / "two/summary.md").read_text()
    assert left_running(mark) == []


@needs_cyclone
@pytest.mark.cyclone
def test_two_readers_on_cyclone(tmp_path):
    _check_two_counts(tmp_path, "cyclone")


@pytest.mark.fastdds
def test_two_readers_on_fastdds(tmp_path):
    from helpers.fastdds import require_fastdds
    require_fastdds()
    _check_two_counts(tmp_path, "fastdds")


@needs_cyclone
@pytest.mark.cyclone
def test_one_reader_has_the_shape_of_a_plain_run(tmp_path):
    _bench(tmp_path, "plain", "--no-report")
    _bench(tmp_path, "one", "--readers", "1", "--no-report")
    plain, one = (json.loads((tmp_path / d / "results.json").read_text())
                  for d in ("plain", "one"))
    assert plain.keys() == one.keys() and "cost_per_reader" not in one
    assert plain["settings"].keys() == one["settings"].keys()
    assert plain["rotation"]["settings"].keys() == one["rotation"]["settings"].keys()
    assert {p["arm"] for p in plain["rotation"]["pairs"]} == \
        {p["arm"] for p in one["rotation"]["pairs"]}
    for a, b in zip(plain["summary"], one["summary"], strict=True):
        assert a.keys() == b.keys() and a["readers"] == b["readers"] == 1
        assert (a["profile"], a["size"]) == (b["profile"], b["size"])
    keys = [{k for s in doc["rotation"]["slots"] if s["status"] == "ok" for k in s}
            for doc in (plain, one)]
    assert keys[0] == keys[1] and "readers" not in keys[0]


@needs_cyclone
@pytest.mark.cyclone
def test_wire_check_at_two_readers_keeps_receiver_macs_per_point(tmp_path):
    import socket

    from helpers.require import missing
    try:
        socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0).close()
    except (PermissionError, AttributeError, OSError):
        pytest.skip(missing("root", "raw capture on lo needs root or CAP_NET_RAW"))
    r = subprocess.run([GOVKIT, "wire-check", "--runner", "cyclone", "--profile", "rtps_sign",
                        "--profile", "sign_origin_data_encrypt", "--readers", "2", "--json"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=900,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    points = {p["profile"]: p for p in json.loads(r.stdout)["points"]}
    assert set(points) == {"rtps_sign@2readers", "sign_origin_data_encrypt@2readers"}
    assert all(p["readers"] == 2 and p["verdict"] == "match" for p in points.values())
    # a MAC per receiving participant with origin authentication, none without
    assert points["sign_origin_data_encrypt@2readers"]["receiver_macs"] >= 2
    assert points["rtps_sign@2readers"]["receiver_macs"] == 0
    # --readers is refused, one line, where one reader runs
    bad = subprocess.run([GOVKIT, "wire-check", "--runner", "ddsperf", "--readers", "2"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         stdin=subprocess.DEVNULL)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr


def test_each_readers_count_gets_its_share_of_the_budget_left():
    from govkit.bench.schedule import share_start
    # 100 s started at t=0, 20 s spent, 2 counts left: this count's budget ends at t=60
    started = share_start(0.0, 20.0, 100.0, 2)
    assert started == -40.0          # its clock reads 60 s at t=20: 40 s left, not 120
    assert 100.0 - (20.0 - started) == 40.0
    assert share_start(0.0, 20.0, 100.0, 1) == 0.0       # the last count: all that is left
    assert share_start(5.0, 150.0, 100.0, 3) == 5.0      # nothing left: the minimum only
