"""The run record (govkit.results.record): records refuse a bad value when they are made,
give back the JSON they were read from, and the loader reads every format version of
results.json in one place."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from govkit.results.check import Malformed, load_run
from govkit.results.record import (
    VERSION,
    Pair,
    RecordInvalid,
    Repeat,
    Run,
    Slot,
    as_run,
)
from govkit.results.store import ResultStore

DATA = Path(__file__).parent.parent / "data"
FIXTURES = sorted(DATA.glob("**/results.json"))

SLOT = {"round": 0, "position": 1, "arm": "rtps_sign", "profile": "rtps_sign",
        "instance": 2, "size": 32, "mode": "latency", "count": 100, "mean": 20.5,
        "min": 15.0, "max": 60.0, "p50": 19.0, "p99": 40.0, "timeline": [1, 2, 3],
        "status": "ok"}


def test_every_fixture_reads_as_a_run_and_gives_back_its_json_unchanged():
    """What results.json holds, the records give back: every key and its order, the keys
    no figure reads (a slot's timeline, a repeat's started) included."""
    assert FIXTURES
    for path in FIXTURES:
        doc = json.loads(path.read_text())
        run = load_run(copy.deepcopy(doc))
        assert run.schema == doc["schema"], path
        assert json.dumps(run.to_json()) == json.dumps(doc), path


def test_the_rotation_fixture_reads_as_typed_slots_and_pairs():
    run = load_run(json.loads((DATA / "report" / "rotation_both" / "results.json")
                              .read_text()))
    assert run.version == 3
    slots = run.rotation.slots
    assert slots and all(isinstance(s, Slot) for s in slots)
    assert {s.mode for s in slots} == {"latency", "throughput", "cpu"}
    assert all(isinstance(p, Pair) and p.instance >= 0 for p in run.rotation.pairs)
    assert all(s.value == s.p50 for s in slots if s.mode == "latency")
    assert all(s.value == s.rate_sps for s in slots if s.mode == "throughput")
    assert run.rotation.throughput and run.rotation.config.slot_ms is not None


def test_a_version_2_file_is_read_with_its_overheads_under_todays_names():
    """The committed fixture of 2026-12 stores the overhead's second form as `difference`
    (its name before 2026-12-04); the loader reads it as `added`."""
    doc = json.loads((DATA / "report" / "full" / "results.json").read_text())
    assert doc["schema"] == "govkit.bench/2"
    old = next(r for r in doc["summary"] if r.get("vs_none"))
    assert {"difference", "difference_ci95"} <= old["vs_none"].keys()
    run = Run.from_json(copy.deepcopy(doc), 2)
    row = next(r for r in run.stored_summary if r.get("vs_none"))
    assert {"added", "added_ci95"} <= row["vs_none"].keys()
    assert "difference" not in row["vs_none"]
    assert row["vs_none"]["added"] == old["vs_none"]["difference"]
    assert run.version == 2 and run.rotation is None


@pytest.mark.parametrize("change", [
    {"size": -1}, {"round": "0"}, {"instance": 1.5}, {"mode": "discovery"},
    {"status": 7}, {"p50": -3.0}, {"p50": float("inf")}, {"arm": None},
    {"variant": {"name": "aes128", "cipher": "aes128"}},      # arm is not PROFILE@VARIANT
])
def test_a_slot_with_a_value_no_run_has_is_refused_when_made(change):
    with pytest.raises(RecordInvalid):
        Slot.from_json({**SLOT, **change})


def test_a_repeat_with_a_value_no_run_has_is_refused_when_made():
    good = {"profile": "none", "mode": "latency", "size": 32, "status": "failed",
            "error": "no output"}
    assert not Repeat.from_json(good).ok
    for bad in ({"size": -32}, {"repeat": -1}, {"status": None},
                {"status": "ok"},                       # ok without rows or their format
                {"warmup_rows": -1}):
        with pytest.raises(RecordInvalid):
            Repeat.from_json({**good, **bad})


def test_the_store_refuses_a_slot_when_bench_hands_it_over_and_writes_the_others_as_given(
        tmp_path):
    store = ResultStore.create(tmp_path, "govkit bench", {"runner": "cyclone"}, {}, [])
    store.rotation()
    store.add_slots([SLOT])
    with pytest.raises(RecordInvalid, match="profile"):
        store.add_slots([{k: v for k, v in SLOT.items() if k != "profile"}])
    store.finish_round(0, 0.1)
    store.save(summary=False)
    on_disk = json.loads((tmp_path / "results.json").read_text())
    assert on_disk["rotation"]["slots"] == [SLOT]
    assert list(on_disk["rotation"]["slots"][0]) == list(SLOT)     # the key order too
    assert store.run().slots == tuple(store.slots)
    assert store.run().version == VERSION


def test_load_run_names_the_place_of_a_bad_value():
    doc = json.loads((DATA / "report" / "rotation" / "results.json").read_text())
    doc["rotation"]["slots"][3]["size"] = -1
    with pytest.raises(Malformed, match=r"rotation\.slots\[3\]\.size"):
        load_run(doc)


def test_as_run_reads_a_document_without_a_schema_as_this_version():
    assert as_run({}).version == VERSION
    run = as_run({"schema": "govkit.bench/2"})
    assert run.version == 2 and as_run(run) is run


def test_a_value_only_a_record_refuses_is_one_line_naming_its_place(tmp_path):
    """A failed slot's numbers are not figures, so the checks pass them; the slot record
    refuses a negative one all the same, and `govkit report` says where in one line (exit
    2, no traceback) instead of reporting from a file no run wrote."""
    import subprocess
    import sys
    doc = json.loads((DATA / "report" / "rotation" / "results.json").read_text())
    doc["rotation"]["slots"][5].update(status="failed", error="pair died", mean=-5.0)
    with pytest.raises(Malformed, match=r"^rotation\.slots\[5\]\.mean: expected a measured"):
        load_run(copy.deepcopy(doc))
    (tmp_path / "results.json").write_text(json.dumps(doc))
    done = subprocess.run([sys.executable, "-m", "govkit", "report", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "rotation.slots[5].mean: expected a measured number, got -5.0" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "report.html").exists()
