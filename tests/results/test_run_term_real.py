"""Intervals that cover a rerun, checked against real reruns (test_run_term.py checks the
term against data drawn from the very model it assumes; this does not).

tests/data/runs/<host-date>/run*/results.json.gz (each the gzip of an unedited
results.json) are default latency runs made back to back on one host (see
tests/data/runs/README.md: host, date, load, command). For every pair of runs and
every secured point both hold, z = (ln r_a − ln r_b) / sqrt(se_a² + se_b²), each se read off
the run's own 95 % interval; honest intervals give var(z) about 1 and about 5 % of |z|
beyond 1.96. The intervals are those this checkout's code recomputes from the runs' raw
slots (what a user gets today from those measurements), with the run-to-run term each run
carried, or today's default where it carried the default.

Thresholds (issue 42's acceptance): var(z) ≤ 1.3 and ≤ 8 % of |z| beyond 1.96, and the A/A
arm's interval covering 1 on ≥ 95 % of its points. The data are fixed and the bootstrap
seeded, so the verdict is the same on every machine and every run of the suite: it moves
only when the code's intervals do."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from govkit.bench.defaults import RERUN_FLOOR_PCT, RERUN_KAPPA_PCT
from govkit.results.summary import noise_floor, summarize

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "tests" / "data" / "runs"
HOSTS = sorted(p for p in RUNS.iterdir() if p.is_dir()) if RUNS.is_dir() else []
MAX_VAR_Z = 1.3
MAX_BEYOND = 0.08
MIN_AA_COVER = 0.95


def calibration():
    spec = importlib.util.spec_from_file_location(
        "calibration", ROOT / "benchmarks" / "calibration.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["calibration"] = module
    spec.loader.exec_module(module)
    return module


def recomputed_runs(host: Path) -> list[dict]:
    """The host's runs as this checkout states them: a run that carried the default
    run-to-run term gets today's default (what the same measurements give a user who sets
    nothing), a run that carried a measured or given term keeps it."""
    docs = calibration().load_docs(host)
    for doc in docs:
        settings = doc["rotation"]["settings"]
        if settings.get("rerun_term_source", "default") == "default":
            settings["rerun_kappa_pct"] = dict(RERUN_KAPPA_PCT)
            settings["rerun_floor_pct"] = dict(RERUN_FLOOR_PCT)
        doc["summary"] = summarize(doc)
    return docs


def test_the_committed_runs_are_real_default_runs_of_one_host():
    assert HOSTS, "no committed runs in tests/data/runs"
    for host in HOSTS:
        docs = calibration().load_docs(host)
        assert len(docs) >= 3, host
        assert len({d["environment"]["cpu"] for d in docs}) == 1, host
        assert {tuple(d["settings"]["sizes"]) for d in docs} == {
            tuple(docs[0]["settings"]["sizes"])}
        assert all(d["rotation"]["slots"] and d["settings"]["modes"] == ["latency"]
                   for d in docs)
        row = [line for line in (RUNS / "README.md").read_text().splitlines()
               if line.startswith(f"| `{host.name}/`")]
        assert row and docs[0]["environment"]["cpu"] in row[0], host.name


@pytest.mark.parametrize("host", HOSTS, ids=[h.name for h in HOSTS])
def test_intervals_cover_what_real_reruns_show(host):
    cal = calibration()
    docs = recomputed_runs(host)
    zs = cal.pair_zs([cal.ratios(d) for d in docs])
    assert len(zs) >= 30, len(zs)
    var, beyond = cal.coverage(zs)
    assert var <= MAX_VAR_Z and beyond <= MAX_BEYOND, (host.name, var, beyond)


# The late batch of 2026-12-07: 22 of 24 A/A points cover 1 (92 %), two misses where a
# 95 % interval makes two or more about one time in three (docs/background/method.md):
# issue 42's goal not met there, and said so; strict, so a change of the A/A interval
# that meets it shows.
AA_SHORT = {"amd-epyc-2026-12-07-late": "A/A covers 1 on 22 of 24 points (92 %)"}


@pytest.mark.parametrize("host", [
    pytest.param(h, marks=pytest.mark.xfail(strict=True, reason=AA_SHORT[h.name]))
    if h.name in AA_SHORT else h for h in HOSTS], ids=[h.name for h in HOSTS])
def test_the_aa_arm_covers_one_on_real_runs(host):
    rows = [r for d in recomputed_runs(host) for r in noise_floor(d) if r.get("ratio_ci95")]
    assert rows
    covering = sum(r["ratio_ci95"][0] <= 1 <= r["ratio_ci95"][1] for r in rows)
    assert covering >= MIN_AA_COVER * len(rows), (host.name, covering, len(rows))
