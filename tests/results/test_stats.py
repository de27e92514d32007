"""Statistics, intervals and flags, on recorded ddsperf output (tests/data/ddsperf/record.py
says how each file was recorded)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from govkit.results import stats
from govkit.results.perftest_csv import to_csv
from govkit.results.store import ResultStore
from govkit.results.summary import summarize
from govkit.runners.ddsperf import DdsperfRunner

DATA = Path(__file__).parent.parent / "data" / "ddsperf"


def rows(name: str, mode: str = "latency") -> list[dict]:
    text = (DATA / name).read_text()
    if mode == "latency":
        return DdsperfRunner.parse_latency(text).rows
    return DdsperfRunner.parse_throughput(text).rows


def record(profile, name, repeat=0, size=32, mode="latency", warmup=1, duration=None,
           status="ok"):
    r = {"profile": profile, "mode": mode, "size": size, "repeat": repeat, "status": status}
    if status == "ok":
        raw_rows = rows(name, mode)
        r.update(raw={"format": f"{mode}-per-second", "rows": raw_rows},
                 warmup_rows=warmup, measured_rows=duration or len(raw_rows) - warmup)
    return r


def doc(*records, target=5.0):
    return {"settings": {"target_ci_pct": target},
            "profiles": [{"name": "none", "security": False},
                         {"name": "no_protection", "security": True},
                         {"name": "rtps_sign", "security": True}],
            "results": list(records)}


def codes(row):
    return [f["code"] for f in row["flags"]]


# ------------------------------------------------------------------- one repeat


def test_latency_figures_say_what_they_are():
    """sign_origin_data_encrypt, 1024 B: warm-up second dropped, three measured."""
    figures, count = stats.repeat_figures(
        record("rtps_sign", "sign_origin_data_encrypt-latency-1024-pub.out", duration=3))
    assert figures == pytest.approx({
        "median_of_second_medians": 22.830,     # median of 23.371, 22.827, 22.830
        "p90_median_of_seconds": 29.080,        # median of 50.851, 25.542, 29.080
        "p99_median_of_seconds": 75.721,        # median of 930.413, 75.721, 62.033
        "p99_worst_second": 930.413,            # the second a median of p99s would hide
        "mean_of_samples": 37.618,              # count-weighted: the mean of all samples
        "std_of_second_means": 12.68,           # spread of 58.637, 34.592, 29.589
        "min": 21.568, "max": 50318.629}, abs=1e-3)
    assert count == 8515 + 14423 + 16856


def test_throughput_counts_stalled_seconds_as_zero():
    """The publisher was stopped for ~2.4 s: the subscriber's seconds without samples are
    measured as rate 0, not dropped (dropping them would raise the rate)."""
    raw = rows("stall-sub.out", "throughput")
    zero = [r for r in raw if r["count"] == 0]
    assert zero and raw[0]["count"] > 0 and raw[-1]["count"] > 0  # stall in the middle
    rec = record("none", "stall-sub.out", mode="throughput", size=1024, warmup=0)
    figures, count = stats.repeat_figures(rec)
    assert figures["stalled_seconds"] == len(zero)
    rates = [r["rate_sps"] for r in raw]
    assert figures["mean_rate_sps"] == pytest.approx(statistics.fmean(rates))
    assert figures["mean_rate_sps"] < statistics.fmean(r for r in rates if r)
    row = summarize(doc(rec))[0]
    assert "stalled_seconds" in codes(row)
    assert row["estimate"] == pytest.approx(statistics.fmean(rates), rel=1e-4)


def test_throughput_rows_start_with_the_first_sample():
    """Seconds before the publisher's first sample are the subscriber waiting, not a stall."""
    waiting = ("[7] 1.000  size 0 total 0 lost 0 delta 0 lost 0 rate 0.00 kS/s 0.00 Mb/s "
               "(0.00 kS/s 0.00 Mb/s)\n")
    text = (DATA / "stall-sub.out").read_text()
    assert DdsperfRunner.parse_throughput(waiting + text).rows == rows("stall-sub.out",
                                                                       "throughput")


# --------------------------------------------------------------- intervals


def test_interval_is_reproducible_and_covers_the_estimate():
    groups = [[20.1, 21.0, 19.8], [22.0, 21.5, 22.3], [20.5, 20.9, 21.2]]
    a = stats.estimate(groups, statistics.median, "seed")
    b = stats.estimate(groups, statistics.median, "seed")
    assert a.interval == b.interval and a.dist == b.dist
    lo, hi = a.interval
    assert lo <= a.value <= hi and lo >= 19.8 and hi <= 22.3
    assert a.halfwidth_pct == pytest.approx(100 * max(hi - a.value, a.value - lo) / a.value)


def test_between_repeat_spread_widens_the_interval():
    """Repeats that disagree must give a wider interval than the same number of seconds
    from repeats that agree: the two-stage bootstrap sees the run-to-run variation."""
    agree = [[20.0, 20.4, 19.8], [20.2, 19.9, 20.3], [20.1, 20.0, 19.7]]
    disagree = [[18.0, 18.4, 17.8], [20.2, 19.9, 20.3], [23.1, 23.0, 22.7]]
    narrow = stats.estimate(agree, statistics.median, "s").halfwidth_pct
    wide = stats.estimate(disagree, statistics.median, "s").halfwidth_pct
    assert wide > 4 * narrow


def test_one_value_has_no_interval():
    est = stats.estimate([[21.0]], statistics.median, "s")
    assert est.interval is None and est.halfwidth_pct is None


def test_overhead_ratio_and_added_carry_intervals():
    none = stats.estimate([[20.0, 21.0], [20.5, 19.5], [21.0, 20.0]], statistics.median, "a")
    sign = stats.estimate([[40.0, 42.0], [41.0, 39.0], [42.0, 40.0]], statistics.median, "b")
    c = stats.compare(sign, none)
    assert c["ratio"] == pytest.approx(sign.value / none.value)
    assert c["added"] == pytest.approx(sign.value - none.value)
    assert c["ratio_ci95"][0] <= c["ratio"] <= c["ratio_ci95"][1]
    assert c["added_ci95"][0] <= c["added"] <= c["added_ci95"][1]
    assert c["ratio_ci95"][0] > 1.7 and c["added_ci95"][0] > 15


# ---------------------------------------------------------------------- flags


def test_bimodal_seconds_are_flagged():
    """Both CPUs got a busy neighbour halfway through (this VM then ran ddsperf faster)."""
    seconds = [r["p50"] for r in rows("bimodal-pub.out")]
    low, high = stats.bimodal(seconds)
    assert high > 1.15 * low
    row = summarize(doc(record("rtps_sign", "bimodal-pub.out", warmup=0)))[0]
    assert "bimodal" in codes(row)
    assert "two groups" in next(f["reason"] for f in row["flags"] if f["code"] == "bimodal")


def test_steady_noise_is_not_bimodal_or_trending():
    """The quiet recording's seconds vary by noise only."""
    row = summarize(doc(record("no_protection", "quiet-no_protection-pub.out", warmup=0)))[0]
    assert "bimodal" not in codes(row) and "trend" not in codes(row)


def test_settling_seconds_are_flagged_as_a_trend():
    """The secured run's per-second means settle 58.6 -> 34.6 -> 29.6 -> 25.8 µs after the
    one warm-up second: the warm-up was too short."""
    rec = record("rtps_sign", "sign_origin_data_encrypt-latency-1024-pub.out", size=1024,
                 duration=4)
    row = summarize(doc(rec))[0]
    reason = next(f["reason"] for f in row["flags"] if f["code"] == "trend")
    assert "means still drift" in reason and "--warmup" in reason
    # with the three settling seconds as warm-up, nothing is left to flag
    calm = summarize(doc(record("rtps_sign", "sign_origin_data_encrypt-latency-1024-pub.out",
                                size=1024, warmup=3, duration=2)))[0]
    assert "trend" not in codes(calm)


def test_a_secured_profile_faster_than_none_is_flagged():
    """`none` recorded with busy neighbours on both CPUs, no_protection on an idle machine:
    the secured profile comes out faster, which security cannot do."""
    row = {r["profile"]: r for r in summarize(doc(
        record("none", "disturbed-none-pub.out", warmup=0),
        record("no_protection", "quiet-no_protection-pub.out", warmup=0)))}["no_protection"]
    assert row["vs_none"]["ratio_ci95"][1] < 1
    flag = next(f for f in row["flags"] if f["code"] == "faster_than_none")
    assert flag["severity"] == "warning" and "disturbed" in flag["reason"]


def test_secured_profile_level_with_none_gets_a_note_not_a_warning():
    """Same seconds on both sides: ratio 1, interval around 1: "no measurable overhead"."""
    recs = [record(p, "quiet-no_protection-pub.out", i, warmup=0)
            for p in ("none", "no_protection") for i in (0, 1)]
    row = {r["profile"]: r for r in summarize(doc(*recs))}["no_protection"]
    assert row["vs_none"]["ratio"] == pytest.approx(1.0)
    assert [(f["code"], f["severity"]) for f in row["flags"]
            if f["code"] in ("faster_than_none", "no_measurable_overhead")] == [
        ("no_measurable_overhead", "note")]


def test_wide_interval_and_failed_repeats_are_flagged():
    recs = [record("none", "bimodal-pub.out", 0, warmup=0),
            record("none", "quiet-no_protection-pub.out", 1, warmup=0),
            record("none", None, 2, status="failed")]
    row = summarize(doc(*recs, target=1.0))[0]
    assert row["repeats"] == 2 and row["failed_repeats"] == 1
    assert {"wide_interval", "failed_repeats"} <= set(codes(row))
    assert not [f for f in summarize(doc(*recs[:2], target=100.0))[0]["flags"]
                if f["code"] == "wide_interval"]


# ------------------------------------------------------------ the results file


def test_summary_names_its_statistic_and_keeps_repeat_estimates():
    recs = [record("none", "quiet-no_protection-pub.out", 0, warmup=0),
            record("none", "disturbed-none-pub.out", 1, warmup=0)]
    row = summarize(doc(*recs))[0]
    assert row["statistic"] == "median of per-second medians (one-way latency)"
    pooled = [r["p50"] for n in ("quiet-no_protection", "disturbed-none")
              for r in rows(f"{n}-pub.out")]
    assert row["estimate"] == pytest.approx(statistics.median(pooled), abs=1e-4)
    assert row["seconds"] == len(pooled) and row["repeats"] == 2
    assert row["tail"]["p99_worst_second"] == max(
        r["p99"] for n in ("quiet-no_protection", "disturbed-none")
        for r in rows(f"{n}-pub.out"))


def test_csv_leaves_perftest_columns_empty_that_ddsperf_cannot_fill():
    text = to_csv([record("rtps_sign", "sign_origin_data_encrypt-latency-1024-pub.out",
                          duration=3)], "latency")
    header, line = text.splitlines()
    cells = dict(zip(header.split(","), line.split(","), strict=True))
    assert cells["Std (us)"] == cells["50% (us)"] == cells["90% (us)"] == cells["99% (us)"] == ""
    assert cells["Ave (us)"] == "37.618" and cells["Median of per-second medians (us)"] == "22.83"
    assert cells["p99: worst second (us)"] == "930.413"
    assert cells["Std of per-second means (us)"] == "12.68"


def test_summary_is_recomputed_from_raw_rows_alone(tmp_path):
    """What `govkit report` relies on: drop every computed figure from results.json,
    recompute, get the same summary."""
    store = ResultStore.create(tmp_path, "govkit bench", {"runner": "ddsperf",
                                                          "target_ci_pct": 5.0}, {}, [])
    for i, name in enumerate(("quiet-no_protection", "disturbed-none", "bimodal")):
        store.add(record("none", f"{name}-pub.out", i, warmup=0))
        store.add(record("rtps_sign", f"{name}-pub.out", i, warmup=1))
    saved = json.loads((tmp_path / "results.json").read_text())
    stripped = json.loads(json.dumps(saved))
    stripped["summary"] = []
    for r in stripped["results"]:
        r.pop("latency_us", None)
    assert summarize(stripped) == saved["summary"]


def test_a_re_signed_file_replaces_its_stale_hash(tmp_path):
    store = ResultStore.create(tmp_path, "govkit bench", {"runner": "ddsperf"}, {}, [])
    store.set_signed_files([{"profile": "rtps_sign", "path": "/b/gov.p7s", "sha256": "a" * 64},
                            {"profile": "rtps_sign", "path": "/b/pub.p7s", "sha256": "b" * 64}])
    store.set_signed_files([{"profile": "rtps_sign", "path": "/b/gov.p7s", "sha256": "c" * 64}])
    assert {e["path"]: e["sha256"] for e in store.doc["signed_files"]} == {
        "/b/gov.p7s": "c" * 64, "/b/pub.p7s": "b" * 64}


def test_a_baseline_of_zero_gives_no_ratio_instead_of_a_crash():
    """`none` throughput with every measured second stalled: nothing to divide by."""
    stalled = record("none", "stall-sub.out", mode="throughput", size=1024, warmup=0)
    stalled["raw"]["rows"] = [r for r in stalled["raw"]["rows"] if r["count"] == 0] * 2
    stalled["measured_rows"] = len(stalled["raw"]["rows"])
    other = record("rtps_sign", "stall-sub.out", mode="throughput", size=1024, warmup=0)
    rows_ = {r["profile"]: r for r in summarize(doc(stalled, other))}
    assert rows_["none"]["estimate"] == 0 and rows_["none"]["ci_halfwidth_pct"] is None
    assert any("of unknown width" in f["reason"] for f in rows_["none"]["flags"])
    assert rows_["rtps_sign"]["vs_none"]["ratio"] is None


def test_wide_interval_reason_never_rounds_onto_the_target():
    """'±5.0% is wider than the target ±5%' reads as a contradiction: more decimals."""
    from govkit.results.summary import pct_text
    assert pct_text(5.04, 5.0) == "±5.04%"
    assert pct_text(5.0004, 5.0) == "±5.0004%"
    assert pct_text(6.33, 5.0) == "±6.3%"
    assert pct_text(None) == "of unknown width (the estimate is 0)"


def test_pstdev_is_statistics_pstdev_to_the_bit():
    """stats.pstdev (integers, for the tens of thousands of repeats a report may hold)
    gives what statistics.pstdev (Fractions) gave, value for value: a figure stored by an
    earlier govkit is recomputed unchanged."""
    import random
    rand = random.Random(23)
    draws = [lambda n: [round(rand.uniform(10, 20), 3) for _ in range(n)],
             lambda n: [rand.uniform(1e-9, 1e12) for _ in range(n)],
             lambda n: [rand.randint(0, 10 ** 6) for _ in range(n)],
             lambda n: [rand.choice([0, 1e-9, 3.5, 1e12]) for _ in range(n)],
             lambda n: [rand.random() * 10.0 ** rand.randint(-9, 12) for _ in range(n)]]
    cases = [[5.0, 5.0], [0, 0, 0], [1, 2], [1e12, 1e-9], [0.1, 0.2, 0.3]]
    cases += [draw(rand.choice([2, 3, 7, 30, 300])) for _ in range(800) for draw in draws]
    for values in cases:
        got, want = stats.pstdev(values), statistics.pstdev(values)
        assert got == want and type(got) is float, (values, got, want)


def test_each_row_format_states_the_figures_its_repeats_yield():
    """RowFormat.figures (the report's per-repeat columns) and .row_keys (what
    results.check requires of every row) are what a repeat of that format really has."""
    from helpers.large_results import rotating

    from govkit.results.figures import FIGURES
    from govkit.results.record import Repeat
    from govkit.results.summary import all_records
    slots = all_records(rotating(["none", "rtps_sign"], [32], 3))
    records = {
        "latency-per-second": Repeat.from_json(record(
            "rtps_sign", "sign_origin_data_encrypt-latency-1024-pub.out")),
        "throughput-per-second": Repeat.from_json(record(
            "none", "stall-sub.out", mode="throughput", size=1024, warmup=0)),
        "latency-slots": next(r for r in slots if r.format == "latency-slots"),
    }
    for fmt in stats.ROW_FORMATS.values():
        assert set(fmt.figures) <= set(FIGURES), fmt.name
        assert fmt.rotating == (fmt.name in stats.ROTATION_FORMAT.values()), fmt.name
        if fmt.name in records:
            figures, _ = stats.repeat_figures(records[fmt.name])
            assert set(fmt.figures) <= set(figures), fmt.name
            rows = [row if isinstance(row, dict) else row.to_json()
                    for row in records[fmt.name].rows]
            assert all(set(fmt.row_keys) <= set(row) for row in rows), fmt.name
    assert stats.ROTATION_FORMAT == {"latency": "latency-slots",
                                     "throughput": "throughput-slots"}
