"""results.json bookkeeping: summary over repeats, overhead, CSVs, resume."""

from __future__ import annotations

import json

import pytest

from govkit.errors import GovkitError
from govkit.results import SCHEMA, ResultStore, csv_name, summarize, to_csv


def _lat(profile, size, median, repeat=0, status="ok"):
    r = {"profile": profile, "mode": "latency", "size": size, "repeat": repeat,
         "status": status}
    if status == "ok":
        r["latency_us"] = {"median": median, "mean": median + 1, "std": 0.5,
                           "min": median - 5, "max": median * 10, "p90": median + 2,
                           "p99": median + 9}
        r["count"] = 1000
    return r


def test_summary_is_median_over_repeats_with_spread_and_overheads():
    results = [_lat("none", 32, 20.0, 0), _lat("none", 32, 22.0, 1), _lat("none", 32, 30.0, 2),
               _lat("rtps_sign", 32, 33.0, 0), _lat("rtps_sign", 32, 11.0, 1, status="failed"),
               _lat("rtps_sign", 64, 40.0, 0)]
    rows = {(r["profile"], r["size"]): r for r in summarize(results)}
    none = rows[("none", 32)]
    assert none["repeats"] == 3 and none["median_us"] == 22.0
    assert none["spread_us"] == [20.0, 30.0] and none["overhead_vs_none"] == 1.0
    sign = rows[("rtps_sign", 32)]
    assert sign["repeats"] == 1                   # the failed repeat is not averaged in
    assert sign["overhead_vs_none"] == pytest.approx(33.0 / 22.0, abs=1e-3)
    assert sign["rti_ratio"] == pytest.approx(25 / 21, abs=1e-3)   # RTI: 25 vs 21 us
    assert rows[("rtps_sign", 64)]["overhead_vs_none"] is None     # no baseline measured
    assert [r["profile"] for r in summarize(results)] == ["none", "rtps_sign", "rtps_sign"]


def test_csv_names_and_columns_follow_the_seed_scripts():
    assert csv_name("sign_submsg_encrypt", "latency") == \
        "lat_udpv4_pub_unkeyed_rel_security_rtps_sign_submessage_encrypt.csv"
    text = to_csv([_lat("none", 64, 21.0), _lat("none", 32, 20.0)], "latency")
    lines = text.splitlines()
    assert lines[0].startswith("Length (Bytes),Repeat,Latency Samples,Ave (us),Std (us)")
    assert lines[1].split(",")[:4] == ["32", "0", "1000", "21.0"] and lines[2].startswith("64,")


def test_store_writes_after_every_point_and_resumes(tmp_path):
    store = ResultStore.create(tmp_path, "govkit bench", "ddsperf", {}, {}, [])
    store.add(_lat("none", 32, 20.0))
    store.add(_lat("none", 64, 0, status="failed"))
    on_disk = json.loads((tmp_path / "results.json").read_text())
    assert on_disk["schema"] == SCHEMA and len(on_disk["results"]) == 2
    assert (tmp_path / "lat_udpv4_pub_unkeyed_rel_security_none.csv").exists()
    again = ResultStore.load(tmp_path)
    assert again.completed() == {("none", "latency", 32, 0)}   # failed points run again
    again.add(_lat("none", 64, 21.0))                            # replaces the failed one
    assert [r["status"] for r in again.doc["results"]] == ["ok", "ok"]
    assert not list(tmp_path.glob(".*.tmp"))                     # atomic writes left nothing


def test_load_refuses_missing_or_foreign_files(tmp_path):
    with pytest.raises(GovkitError, match="no results to resume"):
        ResultStore.load(tmp_path)
    (tmp_path / "results.json").write_text('{"schema": "other/1"}')
    with pytest.raises(GovkitError, match="expected 'govkit.bench/1'"):
        ResultStore.load(tmp_path)
    (tmp_path / "results.json").write_text("{not json")
    with pytest.raises(GovkitError, match="unreadable results file"):
        ResultStore.load(tmp_path)
