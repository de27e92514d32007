"""`govkit calibrate` (issue 42, item 1): the run-to-run term estimated from runs made
here, kept in the user's cache under the machine's identity, refused when it does not
check, and carried by `govkit bench` with where it came from; the terminal's, report's
and summary's line and the flags say the same."""

from __future__ import annotations

import copy
import json
import math
import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from helpers.dds import needs_cyclone
from helpers.procs import marked_env

from govkit.bench import calibration as cal
from govkit.bench.defaults import RERUN_FLOOR_PCT, RERUN_KAPPA_PCT
from govkit.bench.options import RotationSettings, parse_rerun_term
from govkit.common.errors import GovkitError
from govkit.results.summary import rerun_term_line, summarize

GOVKIT = str(Path(sys.executable).with_name("govkit"))
DATA = Path(__file__).resolve().parents[1] / "data" / "report"
NOW = datetime(2026, 12, 7, 19, 0, tzinfo=UTC)
IDENTITY = {"cpu": "AMD EPYC", "microcode": "0x1", "kernel": "6.1.0", "host": "vm1"}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    home = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home / "govkit"


def _runs(kappa: float, runs: int, seed: int, floor: float = 0.0) -> list[dict]:
    """Per run, (profile, size) → (log ratio, se): each run's share of the work security
    adds moves by a shift of SD `kappa` (and every ratio by one of SD `floor`), and each
    point reads its ratio with its own noise of SD se."""
    rand = random.Random(seed)
    truth = {(f"p{i}", 32): 1.2 + 0.25 * i for i in range(12)}
    out = []
    for _ in range(runs):
        shift, common = rand.gauss(0, kappa), rand.gauss(0, floor)
        point = {}
        for key, r in truth.items():
            se = 0.004
            moved = math.log(1 + (r - 1) * math.exp(shift)) + common + rand.gauss(0, se)
            point[key] = (moved, se)
        out.append(point)
    return out


def _doc(per_run: dict, mode: str = "latency") -> dict:
    """A results.json summary of those points (a half-width that gives back their se)."""
    rows = [{"profile": p, "mode": mode, "size": size,
             "vs_none": {"ratio": math.exp(lr),
                         "ratio_halfwidth_within_pct": 100 * (math.exp(1.96 * se) - 1)}}
            for (p, size), (lr, se) in per_run.items()]
    return {"summary": rows + [{"profile": "none", "mode": mode, "size": 32, "vs_none": None}]}


def test_the_estimate_recovers_a_known_term_with_its_own_uncertainty():
    got = [cal.estimate(_runs(0.02, 16, seed), grows=True) for seed in range(6)]
    for kappa, se in got:
        assert 1.0 < kappa < 3.0 and 0 < se < 1.5
    # the truth lies within about two of the estimate's standard errors, nearly always
    assert sum(abs(k - 2.0) <= 2.2 * se for k, se in got) >= 5
    # no shift: nothing beyond the points' own noise
    assert cal.estimate(_runs(0.0, 8, 1), grows=True)[0] < 0.3
    # a floor, the same for every ratio
    floor, _ = cal.estimate(_runs(0.0, 16, 2, floor=0.015), grows=False)
    assert 1.0 < floor < 2.2
    # two runs give a term but no uncertainty; one gives nothing
    assert cal.estimate(_runs(0.02, 2, 3), grows=True)[1] is None
    assert cal.estimate(_runs(0.02, 1, 3), grows=True) is None


def test_a_calibration_is_read_off_the_runs_results(cache):
    docs = [_doc(r) for r in _runs(0.02, 6, 4)]
    made = cal.calibration_of(docs, IDENTITY, {"runs": 6}, NOW.isoformat())
    assert set(made.terms) == {"latency"} and made.runs == 6 and made.points == 12
    assert made.terms["latency"]["kappa_pct"] == pytest.approx(
        cal.estimate(_runs(0.02, 6, 4), grows=True)[0], abs=0.01)
    with pytest.raises(GovkitError, match="no overhead ratio"):
        cal.calibration_of([{"summary": []}] * 3, IDENTITY, {})


def _stored(cache: Path, **changes) -> Path:
    made = cal.Calibration(IDENTITY, NOW.isoformat(timespec="seconds"), 4, 12,
                           {"latency": {"kappa_pct": 1.8, "kappa_se_pct": 0.4}}, {})
    data = {**made.to_json(), **changes}
    made = cal.parse_calibration(made.to_json(), IDENTITY, NOW)     # a good one reads
    path = cal.store_calibration(made)
    if changes:
        from govkit.common.cachefile import write_cached
        write_cached(path.name, json.dumps(data).encode())
    return path


def test_a_stored_calibration_is_this_machines_and_reads_back(cache):
    path = _stored(cache)
    assert path.parent == cache and path.name == cal.cache_name(IDENTITY)
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    got, refused = cal.load_calibration(IDENTITY, NOW + timedelta(hours=2))
    assert refused is None and got.terms["latency"]["kappa_pct"] == 1.8
    # another machine's identity names another file: nothing there, nothing said
    assert cal.load_calibration({**IDENTITY, "microcode": "0x2"}, NOW) == (None, None)
    # identity: what /proc/cpuinfo and uname say, never empty
    me = cal.machine_identity()
    assert set(me) == {"cpu", "microcode", "kernel", "host"} and all(me.values())


@pytest.mark.parametrize(("change", "said"), [
    ({"identity": {**IDENTITY, "host": "vm2"}}, "made on another machine"),
    ({"created": (NOW - timedelta(days=8)).isoformat()}, "older than 7 days"),
    ({"created": (NOW + timedelta(days=1)).isoformat()}, "in the future"),
    ({"created": "yesterday"}, "not a date"),
    ({"runs": 1}, "`runs`"),
    ({"terms": {"latency": {"kappa_pct": -1, "kappa_se_pct": None}}}, "not a percentage"),
    ({"terms": {"latency": {"kappa_pct": float("nan"), "kappa_se_pct": 0.1}}},
     "not a percentage"),
    ({"terms": {"disco": {}}}, "`terms` must hold"),
    ({"format": "govkit.calibration/9"}, "not a govkit.calibration/1 file"),
])
def test_a_calibration_that_does_not_check_is_refused_in_one_line(cache, change, said):
    _stored(cache, **change)
    got, refused = cal.load_calibration(IDENTITY, NOW)
    assert got is None and said in refused and "\n" not in refused, refused


def test_an_edited_or_truncated_file_is_refused_and_the_run_carries_the_default(
        cache, monkeypatch):
    monkeypatch.setattr(cal, "machine_identity", lambda: IDENTITY)
    monkeypatch.setattr(cal, "datetime", _Frozen)
    path = _stored(cache)
    kappa, floor = parse_rerun_term(None), parse_rerun_term(None, "--rerun-floor")
    used = cal.rerun_term_settings(kappa, floor, given=False)
    assert used["rerun_term_source"] == "machine_calibration"
    assert dict(used["rerun_kappa"])["latency"] == 1.8
    assert dict(used["rerun_floor"]) == RERUN_FLOOR_PCT          # not measured: default
    assert used["rerun_term_calibration"]["identity"] == IDENTITY
    # given values win over the calibration
    given = cal.rerun_term_settings(parse_rerun_term(["latency=3"]), floor, given=True)
    assert given["rerun_term_source"] == "given"
    for damage in (lambda b: b.replace(b"1.8", b"0.1"), lambda b: b[:len(b) // 2]):
        path.write_bytes(damage(path.read_bytes()))
        used = cal.rerun_term_settings(kappa, floor, given=False)
        assert used["rerun_term_source"] == "default"
        assert dict(used["rerun_kappa"]) == RERUN_KAPPA_PCT
        assert "was refused" in used["rerun_term_note"] and str(path) in \
            used["rerun_term_note"]
        # and results.json records why
        settings = RotationSettings(**used).to_json()
        assert settings["rerun_term_note"] == used["rerun_term_note"]
        _stored(cache)
    path.unlink()
    assert cal.rerun_term_settings(kappa, floor, given=False) == {
        "rerun_kappa": kappa, "rerun_floor": floor, "rerun_term_source": "default"}


class _Frozen(datetime):
    @classmethod
    def now(cls, tz=None):
        return NOW


def _with_source(doc: dict, **settings) -> dict:
    doc = copy.deepcopy(doc)
    doc["rotation"]["settings"].update(settings)
    return doc


def test_the_notes_and_the_line_say_where_each_modes_term_came_from():
    """A calibration of latency only: the latency ratios' notes and the run's line say
    measured on this machine, with its date; throughput's term is still the default and
    says so; a default run never says "this machine"."""
    base = json.loads((DATA / "rotation_both" / "results.json").read_text())
    calibration = {"created": "2026-12-07T19:00:00+00:00", "runs": 4, "identity": IDENTITY,
                   "terms": {"latency": {"kappa_pct": 6.0, "kappa_se_pct": 0.5}}}
    notes = set()
    # (its throughput ratios are ±12-44 % wide: a target of 50 % and a floor of 40 % give
    # them the note, 2 % and 6 % the latency ratios)
    for target in (2.0, 50.0):
        calibrated = _with_source(
            base, rerun_kappa_pct={"latency": 6.0}, rerun_floor_pct={"throughput": 40.0},
            target_ci_pct=target, rerun_term_source="machine_calibration",
            rerun_term_calibration=calibration)
        notes |= {(r["mode"], f["reason"]) for r in summarize(copy.deepcopy(calibrated))
                  for f in r["flags"] if f["code"] == "rerun_spread"}
    assert {m for m, _ in notes} == {"latency", "throughput"}, notes
    for mode, reason in notes:
        assert ("measured on this machine (govkit calibrate)" in reason) == \
            (mode == "latency"), reason
        assert ("a default from another machine, not measured here" in reason) == \
            (mode == "throughput"), reason
    line = rerun_term_line(calibrated)
    assert line.startswith("run-to-run term (what a rerun moves a ratio by, in every "
                           "interval): latency κ 6 %: measured on this machine by govkit "
                           "calibrate on 2026-12-07T19:00 UTC (4 runs, ± 0.5 %); "
                           "throughput floor 40 %: a default from another machine, not "
                           "measured here"), line
    default = _with_source(base, rerun_kappa_pct={"latency": 2.6},
                           rerun_floor_pct={"throughput": 1.5})
    line = rerun_term_line(default)
    assert "this machine" not in line and line.count("not measured here") == 2
    # a file from before the term: no line
    assert rerun_term_line(base) is None
    # a calibration that measured no term (κ 0) still says where the figure came from
    zero = _with_source(base, rerun_kappa_pct={"latency": 0.0},
                        rerun_term_source="machine_calibration",
                        rerun_term_calibration={**calibration, "terms": {
                            "latency": {"kappa_pct": 0.0, "kappa_se_pct": None}}})
    assert ": latency κ 0 %: measured on this machine by govkit calibrate on 2026-12-07T19:00 " \
        "UTC (4 runs)" in rerun_term_line(zero)


@pytest.mark.browser
def test_the_report_and_summary_read_the_terminals_line(tmp_path):
    base = json.loads((DATA / "rotation_both" / "results.json").read_text())
    doc = _with_source(base, rerun_kappa_pct={"latency": 2.6},
                       rerun_floor_pct={"throughput": 1.5},
                       rerun_term_note="the machine calibration X was refused: edited")
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.json").write_text(json.dumps(doc))
    r = subprocess.run([GOVKIT, "report", str(run)], capture_output=True, text=True,
                       timeout=300, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    line = rerun_term_line(doc)
    assert "(the machine calibration X was refused: edited)" in line
    html = (run / "report.html").read_text()
    assert f'<p id="rerun-term">{line}.</p>' in html
    assert f"\n{line}.\n" in (run / "summary.md").read_text()


@needs_cyclone
@pytest.mark.cyclone
def test_calibrate_measures_stores_and_bench_carries_it(tmp_path):
    """A real `govkit calibrate --quick` (two short runs, then one awake and one idle run),
    then a bench run that carries its term and its awake/idle figure and says so: the
    same sentence beside the µs in the terminal, report.html, summary.md and results.json
    (issue 46 item 5)."""
    import lxml.html
    from helpers.html import text

    from govkit.report.model import md_cell
    env, _ = marked_env()
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    r = subprocess.run([GOVKIT, "calibrate", "--quick"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=900, stdin=subprocess.DEVNULL, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stderr.startswith("govkit calibrate: 2 runs of `govkit bench "), r.stderr
    assert ", then 2 awake/idle runs (" in r.stderr.splitlines()[0]
    assert "about 1 min 38 s in all" in r.stderr.splitlines()[0]
    assert "latency: κ " in r.stdout and "stored in " in r.stdout
    assert "idle over awake: " in r.stdout
    stored = list((tmp_path / "cache" / "govkit").glob("rerun-term-*.json"))
    assert len(stored) == 1
    idle = json.loads(stored[0].read_text().split("\n", 1)[1])["idle_vs_awake"]  # digest, JSON
    assert idle["order"] == ["awake", "idle"] and idle["size"] == 32
    lo, hi = idle["ratio_ci95"]
    assert lo <= idle["ratio"] <= hi
    assert idle["ratio"] == pytest.approx(idle["idle_us"] / idle["awake_us"], rel=2e-3)
    b = subprocess.run([GOVKIT, "bench", "--profile", "none,rtps_sign", "--sizes", "32",
                        "--budget", "10", "--out", "res"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
                       env=env)
    assert b.returncode in (0, 1), b.stderr
    doc = json.loads((tmp_path / "res/results.json").read_text())
    settings = doc["rotation"]["settings"]
    assert settings["rerun_term_source"] == "machine_calibration"
    assert settings["rerun_term_calibration"]["identity"] == cal.machine_identity()
    assert "measured on this machine by govkit calibrate on " in b.stdout
    # the run records the measurement, and every output says the same words of it
    assert doc["environment"]["idle_vs_awake"] == idle
    state = doc["absolute_latency"]
    note = state["note"]
    assert state["cpus"] == "CPUs kept awake" and state["idle_vs_awake_measured"] is True
    assert note.startswith("CPUs kept awake: ") and (
        f"idle reads {idle['ratio']:.2f}× [{lo:.2f}, {hi:.2f}] of awake on the machine "
        f"that made this run" in note), note
    assert note in " ".join(b.stdout.split())
    shown = lxml.html.parse(str(tmp_path / "res/report.html")).xpath('//*[@id="awake-note"]')
    assert len(shown) == 1 and text(shown[0]) == f"{note}."
    assert f"{md_cell(note)}." in (tmp_path / "res/summary.md").read_text()
