"""CI gates (`bench --fail-on-flag`, `--max-ratio`) on a real rotating run's recomputed
summary, and the CLI refusing a bad gate before anything runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from govkit.common.errors import GovkitError
from govkit.results.gates import gate_failures, parse_fail_on_flags, parse_max_ratios
from govkit.results.summary import summarize

DATA = Path(__file__).parent.parent / "data" / "report" / "rotation" / "results.json"
GOVKIT = str(Path(sys.executable).with_name("govkit"))


@pytest.fixture(scope="module")
def summary():
    return summarize(json.loads(DATA.read_text()))


def _ratio(summary, profile, size):
    return next(r["vs_none"]["ratio"] for r in summary
                if r["profile"] == profile and r["size"] == size)


def test_a_ratio_above_its_limit_fails_and_one_below_passes(summary):
    measured = _ratio(summary, "rtps_sign", 32)
    below = {"rtps_sign": measured * 0.9}
    lines = gate_failures(summary, set(), below)
    assert any(line.startswith("rtps_sign latency 32 B: costs ") and "above --max-ratio"
               in line for line in lines), lines
    assert gate_failures(summary, set(), {"rtps_sign": measured * 2}) == []


def test_the_message_says_when_the_interval_reaches_below_the_limit(summary):
    row = next(r for r in summary if r["profile"] == "rtps_sign" and r["size"] == 32)
    lo, hi = row["vs_none"]["ratio_ci95"]
    inside = (lo + row["vs_none"]["ratio"]) / 2         # above the interval's bottom
    lines = [x for x in gate_failures(summary, set(), {"rtps_sign": inside}) if " 32 B" in x]
    assert lines and "a longer run can tell" in lines[0]
    clear = [x for x in gate_failures(summary, set(), {"rtps_sign": lo * 0.9}) if " 32 B" in x]
    assert clear and "a longer run can tell" not in clear[0]


def test_flags_trip_only_the_codes_asked_for():
    flagged = summarize(json.loads((DATA.parent.parent / "full" / "results.json").read_text()))
    present = {f["code"] for r in flagged for f in r["flags"]}
    assert "wide_interval" in present and "lost_samples" not in present
    assert any("flagged wide_interval (--fail-on-flag)" in line
               for line in gate_failures(flagged, {"wide_interval"}, {}))
    assert gate_failures(flagged, {"lost_samples"}, {}) == []
    # `any` is the warnings: a note (≈none) alone does not fail a run
    notes = [{**r, "flags": [f for f in r["flags"] if f["severity"] == "note"]}
             for r in flagged]
    assert any(r["flags"] for r in notes)
    assert gate_failures(notes, parse_fail_on_flags(["any"]), {}) == []


def test_parsing():
    assert parse_fail_on_flags(["wide_interval,aa_wide", "bimodal"]) == {
        "wide_interval", "aa_wide", "bimodal"}
    assert "no_measurable_overhead" not in parse_fail_on_flags(["any"])   # a note, not a warning
    assert "wide_interval" in parse_fail_on_flags(["any"])
    assert parse_max_ratios(["rtps_sign=1.5,none=1.1"], ["none", "rtps_sign"]) == {
        "rtps_sign": 1.5, "none": 1.1}
    for bad in (["rtps_sign"], ["rtps_sign=x"], ["rtps_sign=-1"], ["rtps_sign=nan"],
                ["rtps_sign=inf"], ["other=2"]):
        with pytest.raises(GovkitError):
            parse_max_ratios(bad, ["none", "rtps_sign"])
    with pytest.raises(GovkitError, match="unknown flag 'wid'"):
        parse_fail_on_flags(["wid"])


@pytest.mark.parametrize("args, says", [
    (["--max-ratio", "rtps_sign=2"], "'rtps_sign' is not measured by this run"),
    (["--max-ratio", "none=0"], "expected PROFILE=X"),
    (["--fail-on-flag", "nope"], "unknown flag 'nope'"),
])
def test_a_bad_gate_is_refused_before_the_run(tmp_path, args, says):
    r = subprocess.run([GOVKIT, "bench", "--profile", "none", "--dry-run", *args],
                       cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr
    assert list(tmp_path.iterdir()) == []                 # nothing created


def test_the_a_a_floor_flags_are_said_and_can_fail_the_run(summary):
    """`--fail-on-flag aa_excludes_one` was listed but could never trip: the A/A arm's flags
    live on the noise floor's rows, not on the summary's points."""
    from govkit.results.flags import flag_advice
    from govkit.results.summary import AA_POINT, flagged_points, noise_floor

    doc = json.loads(DATA.read_text())
    floor = noise_floor(doc)
    assert floor, "the rotating fixture carries an A/A arm"
    excluded = [{**floor[0], "flags": [{"code": "aa_excludes_one", "severity": "warning",
                                        "reason": "two identical `none` arms differ"}]}]
    points = flagged_points(summary, excluded)
    assert points[:len(summary)] == summary and points[-1]["profile"] == AA_POINT
    lines = gate_failures(points, {"aa_excludes_one"}, {})
    assert lines == [f"{AA_POINT} latency {floor[0]['size']} B: flagged aa_excludes_one "
                     f"(--fail-on-flag)"]
    assert any(line.startswith("aa_excludes_one on 1 point(s)") for line in flag_advice(points))
    assert gate_failures(summary, {"aa_excludes_one"}, {}) == []   # the points alone: none
