"""govkit.results.pool (`govkit report --pool`, `govkit bench --runs`): runs of the same points
pooled into one ratio per point whose interval includes the between-run term measured from
those runs; runs that cannot be pooled are refused with one line, exit 2.

The runs are a real rotating run (tests/data/report/rotation_both, Intel Xeon 2-core VM,
2026-12-04) and copies of it whose secured slots were scaled, as a run-level shift moves
them; the statistics are checked against a simulation of the model they assume."""

from __future__ import annotations

import copy
import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

from govkit.common.errors import GovkitError
from govkit.results import pool
from govkit.results.paired import AA_ARM

DATA = Path(__file__).resolve().parents[1] / "data" / "report"
GOVKIT = str(Path(sys.executable).with_name("govkit"))


def real() -> dict:
    return json.loads((DATA / "rotation_both" / "results.json").read_text())


def shifted(doc: dict, factor: float) -> dict:
    """The run as a rerun that read every secured latency slot `factor` times slower."""
    doc = copy.deepcopy(doc)
    for s in doc["rotation"]["slots"]:
        if s["mode"] == "latency" and s["arm"] == "rtps_sign":
            for k in ("p50", "mean"):
                if isinstance(s.get(k), int | float):
                    s[k] = s[k] * factor
    return doc


def put(directory: Path, doc: dict) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "results.json").write_text(json.dumps(doc))
    return directory


def test_t_quantiles():
    assert pool.t975(1) == pytest.approx(12.706, abs=1e-3)
    assert pool.t975(2) == pytest.approx(4.303, abs=1e-3)
    assert pool.t975(30) == pytest.approx(2.042, abs=1e-3)
    assert pool.t975(31) < pool.t975(30)
    assert pool.t975(60) == pytest.approx(2.000, abs=2e-3)
    assert pool.t975(120) == pytest.approx(1.980, abs=2e-3)
    with pytest.raises(ValueError):
        pool.t975(0)


def test_the_between_run_term_is_fitted_in_the_run_terms_form():
    """Points whose runs differ by a known floor and kappa: the fit finds them back; runs
    that agree within their own errors give 0, never a negative variance."""
    rand = random.Random(1)
    floor, kappa, se = 0.01, 0.03, 0.002
    points = []
    for r in (1.0, 1.2, 1.5, 2.0, 3.0, 4.0) * 40:
        share = 1 - 1 / r
        points.append([pool.RunRatio(math.log(r) + rand.gauss(0, math.hypot(
            floor, kappa * share)) + rand.gauss(0, se), se) for _ in range(4)])
    term = pool.between_runs(points)
    assert term.floor == pytest.approx(floor, rel=0.3)
    assert term.kappa == pytest.approx(kappa, rel=0.3)
    agree = [[pool.RunRatio(math.log(1.5) + rand.gauss(0, 0.001), 0.01) for _ in range(3)]
             for _ in range(20)]
    quiet = pool.between_runs(agree)
    assert quiet.floor == 0 and quiet.kappa == 0


def test_pooled_intervals_cover_the_truth_and_one_run_with_an_assumed_term_does_not():
    """Runs drawn with a run-level shift far larger than the runs' own errors: the pooled
    interval of 3 runs (t with 2 df, the term measured from them) covers the long-run ratio
    about 95 % of the time; the intervals of a single run's own errors far less often."""
    rand = random.Random(7)
    truth = {f"p{i}": r for i, r in enumerate((1.1, 1.3, 1.6, 2.0, 2.5, 3.5))}
    se, tau = 0.004, 0.02
    covered = single = total = 0
    for _ in range(300):
        shifts = [rand.gauss(0, tau) for _ in range(3)]   # one per run, shared by its points
        points = {k: [pool.RunRatio(math.log(r) + shifts[i] * (1 - 1 / r) / 0.6
                                    + rand.gauss(0, se), se) for i in range(3)]
                  for k, r in truth.items()}
        term = pool.between_runs(list(points.values()))
        for k, runs in points.items():
            lo, hi = pool.pool_point(runs, term).ratio_ci95
            covered += lo <= truth[k] <= hi
            one = runs[0]
            single += abs(one.log_ratio - math.log(truth[k])) <= 1.96 * one.se
            total += 1
    assert covered / total >= 0.92, covered / total
    assert single / total < 0.6, single / total


def test_the_spread_factor_never_narrows_below_what_the_runs_disagree_by():
    runs = [pool.RunRatio(math.log(1.5) + d, 0.001) for d in (-0.02, 0.0, 0.02)]
    p = pool.pool_point(runs, pool.BetweenRuns(0.0, 0.0, 0))
    assert p.spread_factor > 1
    half = math.log(p.ratio_ci95[1] / p.ratio)
    assert half == pytest.approx(pool.t975(2) * 0.02 / math.sqrt(3), rel=0.01)
    with pytest.raises(ValueError):
        pool.pool_point(runs[:1], pool.BetweenRuns(0.0, 0.0, 0))


def test_report_pool_writes_one_ratio_per_point_with_the_measured_term(tmp_path):
    doc = real()
    dirs = [put(tmp_path / f"run-{i}", shifted(doc, f))
            for i, f in enumerate((1.0, 1.04, 0.97), 1)]
    r = subprocess.run([GOVKIT, "report", "--pool", *map(str, dirs), "--out",
                        str(tmp_path / "top")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    pooled = json.loads((tmp_path / "top" / pool.POOLED_NAME).read_text())
    assert pooled["schema"] == pool.POOL_SCHEMA
    assert pooled["rerun_term_source"] == pool.BETWEEN_RUNS
    assert [x["dir"] for x in pooled["runs"]] == [str(d) for d in dirs]
    assert {x["rerun_term_source"] for x in pooled["runs"]} == {"default"}
    points = {(p["arm"], p["mode"], p["size"]): p for p in pooled["points"]}
    sign = points[("rtps_sign", "latency", 32)]
    assert sign["runs"] == 3 and sign["df"] == 2
    # the three runs' ratios, as each run alone reads it, in the pooled row
    alone = [pool.run_ratios(pool.read_runs([d, dirs[0] if d != dirs[0] else dirs[1]])[0][2])
             for d in dirs]
    assert sign["run_ratios"] == pytest.approx(
        [math.exp(a[("rtps_sign", "latency", 32)].log_ratio) for a in alone], abs=1e-4)
    assert sign["run_ratios"][1] / sign["run_ratios"][0] == pytest.approx(1.04, abs=1e-3)
    # the runs disagree by 3-4 %: the term measured is that, not the runs' 0.4-0.8 % widths
    assert pooled["between_runs"]["latency"]["kappa_pct"] + \
        pooled["between_runs"]["latency"]["floor_pct"] > 1
    lo, hi = sign["ratio_ci95"]
    assert lo < min(sign["run_ratios"]) and hi > max(sign["run_ratios"])
    # the unshifted A/A arm and throughput points are pooled too, unmoved
    aa = points[(AA_ARM, "latency", 32)]
    assert aa["run_ratios"][0] == aa["run_ratios"][1] == aa["run_ratios"][2]
    md = (tmp_path / "top" / pool.POOLED_MD_NAME).read_text()
    assert "rtps\\_sign" in md and "A/A none" in md and "between\\_runs" not in md
    assert "rtps_sign" in r.stdout and f"wrote {tmp_path / 'top' / pool.POOLED_NAME}" in \
        r.stdout


@pytest.mark.parametrize("edit, said", [
    (lambda d: d["settings"].update(sizes=[32]), "does not share sizes"),
    (lambda d: d["settings"].update(runner="fastdds"), "does not share runner"),
    (lambda d: d["settings"].update(modes=["latency"]), "does not share mode"),
    (lambda d: d["settings"].update(profiles=["none"]), "does not share profiles"),
])
def test_runs_that_differ_are_refused_with_one_line(tmp_path, edit, said):
    other = real()
    edit(other)
    dirs = [put(tmp_path / "a", real()), put(tmp_path / "b", other)]
    r = subprocess.run([GOVKIT, "report", "--pool", *map(str, dirs)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0] and str(dirs[1]) in lines[0], r.stderr
    assert not (tmp_path / "a" / pool.POOLED_NAME).exists()


def test_other_refusals(tmp_path):
    a = put(tmp_path / "a", real())
    full = json.loads((DATA / "full" / "results.json").read_text())
    for dirs, said in (([a], "two or more"), ([a, a], "given twice"),
                       ([a, put(tmp_path / "f", full)], "not a rotating run"),
                       ([a, tmp_path / "missing"], "not found")):
        with pytest.raises(GovkitError, match=said) as e:
            pool.pool_directories(dirs)
        assert e.value.exit_code == 2
    r = subprocess.run([GOVKIT, "report", "--pool", str(a), str(put(tmp_path / "b", real())),
                        "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--json" in r.stderr
