"""`govkit bench --mode discovery`: real groups of Cyclone DDS participants per profile,
secured ones slower to find each other, figures recomputed from the raw groups, and the
refusals that come before any work."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.dds import needs_cyclone

from govkit.results.check import Malformed, check_results
from govkit.results.discovery import discovery_rows
from govkit.results.record import Run
from govkit.results.summary import summarize

GOVKIT = str(Path(sys.executable).with_name("govkit"))


def _bench(tmp_path, *args):
    return subprocess.run([GOVKIT, "bench", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("discovery")
    r = _bench(tmp, "--mode", "discovery", "--peers", "4", "--profile",
               "none,sign_origin_data_encrypt", "--rounds", "3", "--budget", "1", "--out", "res")
    return tmp, r


@needs_cyclone
@pytest.mark.cyclone
def test_groups_match_and_security_costs_time(run):
    tmp, r = run
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((tmp / "res/results.json").read_text())
    groups = doc["discovery"]["groups"]
    # 3 rounds of none X none: 2 none groups and one secured per round, in order
    assert [g["arm"] for g in groups] == ["none", "sign_origin_data_encrypt", "none"] * 3
    assert all(g["status"] == "ok" and len(g["matched_s"]) == 4 for g in groups)
    assert all(0 < t < 60 for g in groups for t in g["matched_s"])
    rows = {x["profile"]: x for x in discovery_rows(Run.from_json(doc))}
    # every printed figure is in results.json's summary, computed once (issue 37, item 9)
    assert doc["summary"] == list(rows.values()) == summarize(doc)
    for row in doc["summary"]:
        assert row["mode"] == "discovery" and row["estimate"] == row["all_matched_s"]
        shown = next(x for x in r.stdout.splitlines() if f"│ {row['profile']} " in x)
        cells = [c.strip() for c in shown.split("│")[1:-1]]
        assert cells[:6] == [row["profile"], str(row["groups"]),
                             f"{row['all_matched_s']:.3f}",
                             f"{row['ci95'][0]:.3f}…{row['ci95'][1]:.3f}",
                             f"{row['median_participant_s']:.3f}",
                             f"{row['first_participant_s']:.3f}"], shown
    secured = rows["sign_origin_data_encrypt"]
    assert secured["groups"] == 3 and secured["vs_none"]["ratio"] > 1.2
    assert secured["all_matched_s"] >= secured["median_participant_s"] \
        >= secured["first_participant_s"]
    assert "Discovery of 4 participants" in r.stdout and "sign_origin_data_encrypt" in r.stdout
    html = (tmp / "res/report.html").read_text()
    assert 'id="discovery-table"' in html and "Discovery only" in html
    assert 'id="stored-summary"' not in html      # the stored rows are the recomputed ones
    md = (tmp / "res/summary.md").read_text()
    assert "### Discovery: 4 participants started together" in md
    left = subprocess.run(["pgrep", "-f", "cyclone_perf discover"], capture_output=True,
                          text=True)
    assert left.stdout.strip() == "", "participants outlived the run"


@needs_cyclone
@pytest.mark.cyclone
def test_a_malformed_group_is_refused_by_the_report(run):
    tmp, _ = run
    doc = json.loads((tmp / "res/results.json").read_text())
    check_results(doc)
    bad = copy.deepcopy(doc)
    bad["discovery"]["groups"][1]["matched_s"].pop()
    with pytest.raises(Malformed, match=r"discovery\.groups\[1\]\.matched_s: expected 4"):
        check_results(bad)
    bad = copy.deepcopy(doc)
    bad["discovery"]["groups"][0]["matched_s"][2] = "soon"
    with pytest.raises(Malformed, match=r"matched_s\[2\]: expected a number of seconds"):
        check_results(bad)


@pytest.mark.parametrize("args, says", [
    (["--peers", "1"], "--peers 1 is out of range (2 .. 100)"),
    (["--runner", "ddsperf"], "--mode discovery runs on the default runner (cyclone)"),
    (["--wire"], "without --wire"),
])
def test_refused_before_any_work(tmp_path, args, says):
    r = _bench(tmp_path, "--mode", "discovery", "--profile", "none", "--dry-run", *args)
    assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr


def test_without_none_there_is_nothing_to_pair_with(tmp_path):
    r = _bench(tmp_path, "--mode", "discovery", "--profile", "rtps_sign", "--dry-run")
    assert r.returncode == 2 and "pairs every profile with `none`" in r.stderr
    assert list(tmp_path.iterdir()) == []
