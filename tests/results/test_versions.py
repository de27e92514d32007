"""The version axis's figures (govkit.results.versions) on a rotating run whose two
installs' slots hold known levels: each profile over its own install's `none`, the ratio
between the installs, and the same rows and flags in results.json, the terminal,
summary.md and report.html."""

from __future__ import annotations

import copy
import json
import math
import random

import pytest
from helpers.large_results import rotating
from rich.console import Console

from govkit.report.run import write_report
from govkit.report.terminal import versions_table
from govkit.results.record import as_run
from govkit.results.store import ResultStore
from govkit.results.summary import Summarizer, summarize
from govkit.results.versions import run_versions

# Each arm's level relative to the baseline's `none`; every slot of a round is scaled by
# that round's regime, as on the 2-core VM.
LEVELS = {"none": 10.0, "rtps_sign": 20.0, "none@11.0.1": 13.0, "rtps_sign@11.0.1": 19.5,
          "none:aa": 10.0}
RUNTIMES = [{"name": "Cyclone DDS", "version": "0.10.2", "prefix": "/usr", "library": None,
             "source": "system", "tag": "0.10.2"},
            {"name": "Cyclone DDS", "version": "11.0.1", "prefix": "/opt/ros/lyrical",
             "library": None, "source": "--runner", "tag": "11.0.1"}]


def _axis_run(rounds: int = 60, drop: str | None = None) -> dict:
    doc = rotating(["none", "rtps_sign"], [1024], 1, instances=1)
    template = doc["rotation"]["slots"][0]
    rand = random.Random(5)
    arms = [a for a in LEVELS if a != "none" and a != drop]
    slots = []
    for rnd in range(rounds):
        regime = rand.choice([1.0, 1.0, 1.0, 1.5])       # a slow state now and then
        order = arms[:]
        rand.shuffle(order)
        sequence = ["none"]
        for arm in order:
            sequence += [arm, "none"]
        for position, arm in enumerate(sequence):
            p50 = round(LEVELS[arm] * regime * rand.uniform(0.995, 1.005), 4)
            slots.append({**copy.deepcopy(template), "round": rnd, "position": position,
                          "arm": arm, "profile": arm.split("@")[0].split(":")[0],
                          "instance": 0, "p50": p50, "mean": p50, "min": p50 * 0.9,
                          "p90": p50 * 1.1, "p99": p50 * 1.5, "max": p50 * 3})
    doc["rotation"]["slots"] = slots
    doc["rotation"]["rounds"] = [{"round": r, "seconds": 0.5} for r in range(rounds)]
    doc["rotation"]["pairs"] = [{**doc["rotation"]["pairs"][0], "arm": a,
                                 "profile": a.split("@")[0].split(":")[0], "instance": 0}
                                for a in LEVELS if a != drop]
    doc["settings"]["runtimes"] = RUNTIMES
    doc["settings"]["runtime"] = {k: v for k, v in RUNTIMES[0].items() if k != "tag"}
    return doc


def _row(rows: list[dict], profile: str) -> dict:
    return next(r for r in rows if r["profile"] == profile)


def test_each_install_is_over_its_own_none_and_the_ratio_between_is_paired():
    doc = _axis_run()
    summarizer = Summarizer()
    summary = summarize(doc, summarizer)
    # the other install's secured arm: over its own `none` (19.5 / 13), not the
    # baseline's (19.5 / 10), in the summary row every table, flag and gate reads
    row = next(r for r in summary if r["profile"] == "rtps_sign@11.0.1")
    assert row["vs_none"]["ratio"] == pytest.approx(1.5, rel=0.01)
    lo, hi = row["vs_none"]["ratio_ci95"]
    assert lo <= row["vs_none"]["ratio"] <= hi and hi / lo < 1.05
    # `none` on the other install: over the baseline's `none`, and no "faster than none"
    # or "no measurable overhead" about a `none`
    none11 = next(r for r in summary if r["profile"] == "none@11.0.1")
    assert none11["vs_none"]["ratio"] == pytest.approx(1.3, rel=0.01)
    assert not {"faster_than_none", "no_measurable_overhead"} & \
        {f["code"] for f in none11["flags"]}
    rows = run_versions(as_run(doc), summarizer.overheads)
    assert [r["profile"] for r in rows] == ["none", "rtps_sign"]
    sign = _row(rows, "rtps_sign")
    assert (sign["baseline"], sign["other"]) == ("0.10.2", "11.0.1")
    assert sign["baseline_vs_none"]["ratio"] == pytest.approx(2.0, rel=0.01)
    assert sign["other_vs_none"]["ratio"] == pytest.approx(1.5, rel=0.01)
    between = sign["other_over_baseline"]
    assert between["ratio"] == pytest.approx(0.75, rel=0.01)
    lo, hi = between["ratio_ci95"]
    assert lo <= between["ratio"] <= hi and hi / lo < 1.05
    assert between["rounds"] == 60
    none = _row(rows, "none")
    assert none["other_over_baseline"]["ratio"] == pytest.approx(1.3, rel=0.01)
    assert none["baseline_us"] == pytest.approx(10.0, rel=0.01)
    assert none["other_us"] == pytest.approx(13.0, rel=0.01)
    assert sign["flags"] == [] and none["flags"] == []


def test_without_its_own_none_the_other_install_gets_no_ratio_under_its_name():
    """A stranger on the other `none`'s domain (every slot discarded) leaves the other
    install's arms with nothing to be over: no ratio, flagged, never one over the
    baseline's `none` in its place."""
    doc = _axis_run(drop="none@11.0.1")
    summarizer = Summarizer()
    summary = summarize(doc, summarizer)
    assert next(r for r in summary if r["profile"] == "rtps_sign@11.0.1")["vs_none"] is None
    sign = _row(run_versions(as_run(doc), summarizer.overheads), "rtps_sign")
    assert sign["other_vs_none"] is None and sign["other_over_baseline"] is None
    assert [f["code"] for f in sign["flags"]] == ["no_interval"]


def test_results_json_terminal_summary_md_and_report_html_say_the_same(tmp_path):
    doc = _axis_run()
    store = ResultStore(tmp_path, doc)
    store.save()
    stored = json.loads((tmp_path / "results.json").read_text())["versions"]
    sign = _row(stored, "rtps_sign")
    between = sign["other_over_baseline"]
    console = Console(width=200, record=True)
    console.print(versions_table(stored))
    text = console.export_text()
    assert "0.10.2" in text and "11.0.1" in text and "11.0.1 / 0.10.2" in text
    line = next(x for x in text.splitlines() if " rtps_sign " in x)
    assert f"{between['ratio']:.2f}" in line
    assert f"{between['ratio_ci95'][0]:.2f}…{between['ratio_ci95'][1]:.2f}" in line
    html, md = write_report(tmp_path)
    md_text, html_text = md.read_text(), html.read_text()
    assert "### Two installs: 0.10.2 and 11.0.1" in md_text
    md_line = next(x for x in md_text.splitlines() if x.startswith("| `rtps_sign` | latency"))
    assert f"{between['ratio']:.2f}× [{between['ratio_ci95'][0]:.2f}×, " \
           f"{between['ratio_ci95'][1]:.2f}×]" in md_line
    assert 'id="versions-table"' in html_text
    assert f'data-kind="between">{between["ratio"]:.2f}×' in html_text
    assert not math.isnan(between["ratio"])


def test_flags_read_the_same_everywhere(tmp_path):
    """A wide interval between the versions: the same flag in results.json, the terminal,
    summary.md and report.html."""
    doc = _axis_run(rounds=8)
    doc["rotation"]["settings"]["target_ci_pct"] = 0.01
    ResultStore(tmp_path, doc).save()
    stored = json.loads((tmp_path / "results.json").read_text())["versions"]
    assert [f["code"] for f in _row(stored, "rtps_sign")["flags"]] == ["wide_interval"]
    console = Console(width=200, record=True)
    console.print(versions_table(stored))
    assert "wide" in next(x for x in console.export_text().splitlines() if " rtps_sign " in x)
    html, md = write_report(tmp_path)
    assert "⚠ wide" in next(x for x in md.read_text().splitlines()
                            if x.startswith("| `rtps_sign` | latency"))
    assert 'class="flag warning"' in html.read_text()
