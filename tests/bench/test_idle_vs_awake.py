"""Absolute latencies say the CPUs' state, and how far idle moved them where that was
measured on the run's machine (issue 46 item 5): `govkit calibrate`'s awake/idle
measurement (govkit.bench.idle_vs_awake), kept with the machine's calibration, and the one
sentence (govkit.results.latency_state) the terminal, report.html, summary.md and
results.json give alike. The real measurement is in test_machine_calibration.py."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import lxml.html
import pytest
from helpers.html import text
from helpers.json_schemas import assert_valid
from rich.console import Console

from govkit.bench import calibration as cal
from govkit.bench.idle_vs_awake import IdlePlan, idle_vs_awake_of, none_slot_medians
from govkit.report.model import md_cell
from govkit.report.terminal import latency_table
from govkit.results.latency_state import latency_state, latency_state_note
from govkit.results.store import ResultStore
from govkit.results.summary import summarize

GOVKIT = str(Path(sys.executable).with_name("govkit"))
DATA = Path(__file__).resolve().parents[1] / "data" / "report" / "rotation_both"
NOW = datetime(2026, 12, 7, 19, 0, tzinfo=UTC)
IDENTITY = {"cpu": "AMD EPYC", "microcode": "0x1", "kernel": "6.1.0", "host": "vm1"}


def _doc() -> dict:
    return json.loads((DATA / "results.json").read_text())


def _idle_copy(doc: dict, factor: float) -> dict:
    """`doc` as if measured on idle CPUs that read `none` `factor` times its µs."""
    idle = copy.deepcopy(doc)
    for slot in idle["rotation"]["slots"]:
        if slot["arm"] == "none" and slot.get("p50") is not None:
            slot["p50"] *= factor
    return idle


def _measured(factor: float = 0.8) -> dict:
    doc = _doc()
    return idle_vs_awake_of({"awake": [doc], "idle": [_idle_copy(doc, factor)]},
                            IdlePlan(runs=1, run_budget_s=10), NOW.isoformat())


def test_the_measurement_is_the_tables_statistic_with_the_projects_interval():
    """The ratio is idle's median of `none` slot medians at 32 B over awake's; its interval
    (the project's bootstrap) holds the factor the idle slots were scaled by."""
    m = _measured(0.8)
    awake = sorted(none_slot_medians(_doc()))
    assert m["awake_us"] == pytest.approx(awake[len(awake) // 2], abs=1e-3)
    assert m["ratio"] == pytest.approx(0.8, abs=1e-3)
    lo, hi = m["ratio_ci95"]
    assert lo < 0.8 < hi and hi - lo < 0.2
    assert m["protected"]["profile"] == "rtps_sign" and m["protected"]["awake"] > 1
    # ABBA: a drift across the runs falls on both states alike
    assert IdlePlan(runs=2).order == ["awake", "idle", "idle", "awake"]
    assert "--allow-idle" in IdlePlan().bench_args("idle")
    assert "--allow-idle" not in IdlePlan().bench_args("awake")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "govkit"


def test_the_calibration_keeps_it_and_refuses_a_bad_one(cache):
    made = cal.Calibration(IDENTITY, NOW.isoformat(timespec="seconds"), 4, 12,
                           {"latency": {"kappa_pct": 1.8, "kappa_se_pct": 0.4}}, {},
                           _measured())
    cal.store_calibration(made)
    got, refused = cal.load_calibration(IDENTITY, NOW)
    assert refused is None and got.idle_vs_awake == made.idle_vs_awake
    assert any(line.startswith("idle over awake: 0.80× [") for line in
               cal.calibration_lines(got))
    bad = {**made.to_json(), "idle_vs_awake": {**made.idle_vs_awake, "ratio": -1}}
    with pytest.raises(cal.CalibrationRefused, match="idle_vs_awake.ratio"):
        cal.parse_calibration(bad, IDENTITY, NOW)
    # another machine's: not this one's figure
    with pytest.raises(cal.CalibrationRefused, match="another machine"):
        cal.parse_calibration(made.to_json(), {**IDENTITY, "host": "vm2"}, NOW)
    # a calibration older than a week is refused, and its idle figure with it
    with pytest.raises(cal.CalibrationRefused, match="older than"):
        cal.parse_calibration(made.to_json(), IDENTITY, NOW + timedelta(days=8))


@pytest.mark.parametrize("awake", [True, False])
@pytest.mark.parametrize("measured", [True, False])
def test_every_output_gives_the_same_sentence(tmp_path, awake, measured):
    """report.html, summary.md, the terminal's latency table and results.json's
    `absolute_latency` carry one sentence: the CPUs' state, and idle's figure only where
    the run's environment records one measured on its machine."""
    doc = _doc()
    doc["settings"]["cpus_kept_awake"] = awake
    doc["environment"]["idle_vs_awake"] = _measured() if measured else None
    note = latency_state_note(doc)
    label = "CPUs kept awake: " if awake else "CPUs allowed to idle: "
    assert note.startswith(label)
    if measured:
        assert ("idle reads 0.80× [" in note and "of awake on the machine that made this run"
                in note and "measured 2026-12-07 by govkit calibrate" in note), note
        assert "not measured" not in note
    else:
        assert "is not measured on the machine that made this run: `govkit calibrate`" in note
        assert "×" not in note and "reads" not in note

    (tmp_path / "results.json").write_text(json.dumps(doc))
    done = subprocess.run([GOVKIT, "report", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    shown = lxml.html.parse(str(tmp_path / "report.html")).xpath('//*[@id="awake-note"]')
    assert len(shown) == 1 and text(shown[0]) == f"{note}."
    assert f"{md_cell(note)}." in (tmp_path / "summary.md").read_text()
    console = Console(width=2000, record=True)
    console.print(latency_table(summarize(copy.deepcopy(doc)), note))
    assert note in " ".join(console.export_text().split())
    # results.json: what the store writes at every save
    store = ResultStore.load(tmp_path)
    store.save()
    whole = json.loads((tmp_path / "results.json").read_text())
    assert_valid(whole, "bench")
    saved = whole["absolute_latency"]
    assert saved == latency_state(doc) and saved["note"] == note
    assert saved["idle_vs_awake_measured"] is measured
    assert saved["cpus"] == label[:-2]


def test_a_run_that_records_no_state_says_nothing():
    doc = _doc()
    del doc["settings"]["cpus_kept_awake"]
    assert latency_state(doc) is None and latency_state_note(doc) == ""
