"""The rotating run's store and stopping rule, on the recorded rotating run in
tests/data/report/rotation (real slots of a real run)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from govkit.results.store import ROUND_SAVE_S, ResultStore
from govkit.results.summary import rotation_overheads, rotation_widths

RUN = Path(__file__).parent.parent / "data" / "report" / "rotation" / "results.json"


def test_stopping_rule_widths_are_the_reported_intervals():
    # the stopping rule skips the added µs' bootstrap; the ratio's interval must stay the
    # one the summary reports (same seed, same draws), or runs would stop at other widths
    doc = json.loads(RUN.read_text())
    widths = rotation_widths(doc)
    full = rotation_overheads(doc)
    assert widths and set(widths) == set(full)
    for key, o in full.items():
        assert widths[key] == o.halfwidth_pct, key
    assert any(o.added_ci95 is not None for o in full.values())


def test_rounds_are_written_at_most_every_few_seconds_and_all_at_the_end(tmp_path, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr("govkit.results.store.time.monotonic", lambda: clock[0])
    store = ResultStore.create(tmp_path, "govkit bench", {"runner": "cyclone"}, {}, [])
    store.rotation()

    def on_disk_rounds():
        doc = json.loads((tmp_path / "results.json").read_text())
        return [r["round"] for r in (doc.get("rotation") or {}).get("rounds", [])]

    store.add_slots([{"round": 0, "position": 0, "arm": "none", "profile": "none",
                      "instance": 0, "size": 32}])
    store.finish_round(0, 0.3)
    assert on_disk_rounds() == []                   # created a moment ago: not yet
    clock[0] += ROUND_SAVE_S
    store.finish_round(1, 0.3)
    assert on_disk_rounds() == [0, 1]
    clock[0] += ROUND_SAVE_S / 2
    store.finish_round(2, 0.3)
    assert on_disk_rounds() == [0, 1]
    store.save(summary=False)                       # what an interrupted or finished run does
    assert on_disk_rounds() == [0, 1, 2]


def test_an_arm_of_thousands_of_rounds_resamples_a_thinned_series_and_says_so():
    # the same cap on the bootstrap's work as a point's: the estimate uses every round, the
    # interval a stated subsample, and the point carries the subsampled_interval note
    from helpers.large_results import rotating

    from govkit.results.paired import MAX_RESAMPLED_ROUNDS, pairings, trimmed_mean
    from govkit.results.summary import summarize

    doc = rotating(["none", "rtps_sign"], [32], 2 * MAX_RESAMPLED_ROUNDS + 10)
    row = next(r for r in summarize(doc) if r["profile"] == "rtps_sign")
    pairs = pairings(doc["rotation"]["slots"])[("rtps_sign", 32)]
    assert len(pairs) > MAX_RESAMPLED_ROUNDS
    assert abs(row["vs_none"]["ratio"] - math.exp(trimmed_mean([p.log_ratio for p in pairs]))) \
        < 1e-3
    note = row["vs_none"]["subsampled"]
    assert f"of the {len(pairs):,} paired rounds (one in 3" in note
    assert [f["code"] for f in row["flags"]].count("subsampled_interval") == 1
    assert note in next(f["reason"] for f in row["flags"] if f["code"] == "subsampled_interval")
    small = rotating(["none", "rtps_sign"], [32], 50)
    row = next(r for r in summarize(small) if r["profile"] == "rtps_sign")
    assert "subsampled" not in row["vs_none"]
    assert "subsampled_interval" not in [f["code"] for f in row["flags"]]


def test_what_a_resume_keeps_is_said_for_every_design(tmp_path):
    """issue 37, item 12: a rotating run has no repeats; --resume said "0 completed
    repeat(s) kept" while keeping every round."""
    doc = json.loads(RUN.read_text())
    assert ResultStore(tmp_path, doc).kept() == "8 rotation round(s) (40 slot(s)) kept"
    doc["results"] = [{"profile": "none", "mode": "latency", "size": 32, "status": "ok",
                       "raw": {"format": "latency-per-second", "rows": []},
                       "warmup_rows": 0, "measured_rows": 1}]
    doc["discovery"] = {"groups": [{}, {}]}
    assert ResultStore(tmp_path, doc).kept() == (
        "1 completed repeat(s) and 8 rotation round(s) (40 slot(s)) and 2 discovery "
        "group(s) kept")
    empty = {"results": [], "summary": []}
    assert ResultStore(tmp_path, empty).kept() == "0 completed repeat(s) kept"
