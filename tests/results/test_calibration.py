"""benchmarks/calibration.py (do a run's intervals cover what a rerun shows?) and
benchmarks/cpu_direction.py (does security cost CPU per sample?): their arithmetic, their
options, and their verdicts on real runs, so that what docs/background/method.md quotes from
them can be reproduced from the runs committed in tests/data/runs/."""

from __future__ import annotations

import copy
import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

from govkit.results.paired import RunTerm
from govkit.results.summary import summarize

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


def script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


calibration = script("calibration")
cpu_direction = script("cpu_direction")


def fixture() -> dict:
    return json.loads((DATA / "report" / "rotation_both" / "results.json").read_text())


def put(directory: Path, doc: dict) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "results.json").write_text(json.dumps(doc))
    return directory


def test_z_is_the_difference_of_log_ratios_over_its_error():
    a = {("x", "latency", 32): (math.log(1.5), 0.01), ("y", "latency", 32): (0.2, 0.02)}
    b = {("x", "latency", 32): (math.log(1.5) + 0.03, 0.02), ("z", "latency", 32): (0.1, 0.1)}
    zs = calibration.pair_zs([a, b])
    assert zs == [pytest.approx(-0.03 / math.hypot(0.01, 0.02))]       # only x is in both
    var, beyond = calibration.coverage([1.0, -3.0, 0.5, 2.0])
    assert var == pytest.approx((1 + 9 + 0.25 + 4) / 4) and beyond == 0.5


def test_a_given_term_is_added_to_the_width_without_it():
    within = [{("x", "latency", 32): (math.log(2.0), 0.01)}]
    assert calibration.with_term(within, 0, 0) == within
    (lr, se), = calibration.with_term(within, 2.6, 0.5)[0].values()
    assert se == pytest.approx(math.hypot(0.01, RunTerm(0.026, 0.005).log_sd(math.log(2.0))))
    assert se == pytest.approx(math.hypot(0.01, 0.005, 0.026 * 0.5))


def test_recomputed_with_a_kappa_or_none_from_the_raw_slots(tmp_path, capsys):
    """--recompute writes the term into the run's settings and recomputes: the interval
    with kappa 5 % is wider than without the term, whose width is the run's own."""
    doc = fixture()
    without = {r["profile"]: r for r in calibration.recomputed(doc, 0.0, 0.0)["summary"]
               if r["mode"] == "latency" and r["size"] == 4096}["rtps_sign"]["vs_none"]
    wide = {r["profile"]: r for r in calibration.recomputed(doc, 5.0, 0.0)["summary"]
            if r["mode"] == "latency" and r["size"] == 4096}["rtps_sign"]["vs_none"]
    assert wide["ratio"] == pytest.approx(without["ratio"], rel=1e-6)
    assert wide["ratio_halfwidth_pct"] > without["ratio_halfwidth_pct"] + 1
    assert wide["ratio_halfwidth_within_pct"] == pytest.approx(
        without["ratio_halfwidth_pct"], rel=0.05)
    assert doc == fixture()                     # the run given is left as it was


def test_the_command_line_reads_runs_and_says_how_it_recomputed(tmp_path, capsys):
    shifted = copy.deepcopy(fixture())
    for s in shifted["rotation"]["slots"]:
        if s["mode"] == "latency" and s["arm"] == "rtps_sign":
            s["p50"] *= 1.05
    shifted["summary"] = summarize(shifted)        # as the run would have stored it
    put(tmp_path / "run0", fixture())
    put(tmp_path / "run1", shifted)
    outputs = {}
    for args in ([], ["--no-term"], ["--kappa", "10"]):
        calibration.main(["--read", str(tmp_path), *args])
        outputs[tuple(args)] = capsys.readouterr().out
    assert "as the runs stated them" in outputs[()]
    assert "without the term" in outputs[("--no-term",)]
    assert "recomputed with kappa 10 %, floor 0 %" in outputs[("--kappa", "10")]

    def var(out: str) -> float:
        return float(out.split("var(z) ")[1].split(",")[0])
    # a 5 % shift against widths of about 1 %: far beyond without the term, covered with
    # a kappa of 10 % (share ≈ 0.25, so about 2.5 %)
    assert var(outputs[("--no-term",)]) > 4 > var(outputs[("--kappa", "10")])
    assert "A/A arm: covers 1 on" in outputs[()]
    # the term is the runs' machine's, named, not "this machine's"
    assert "this machine" not in "".join(outputs.values())
    assert "Intel(R) Xeon(R) Processor" in outputs[()]


def test_cpu_direction_passes_fails_and_says_when_it_cannot_judge(tmp_path, capsys):
    good = put(tmp_path / "good", fixture())
    assert cpu_direction.main(["--read", str(good)]) == 0
    assert "PASS" in capsys.readouterr().out
    cheaper = fixture()
    for s in cheaper["rotation"]["slots"]:          # security made to cost less CPU
        if s["mode"] == "cpu" and s["arm"] == "rtps_sign":
            for k in ("cpu_us_per_sample", "ping_us_per_sample", "pong_us_per_sample"):
                s[k] = round(s[k] * 0.7, 4)
            s["cpu_us"], s["pong_cpu_us"] = int(s["cpu_us"] * 0.7), int(s["pong_cpu_us"] * 0.7)
    bad = put(tmp_path / "bad", cheaper)
    assert cpu_direction.main(["--read", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "rtps_sign 32 B" in out and "rtps_sign 4096 B" in out
    latency_only = put(tmp_path / "lat", json.loads(
        (DATA / "report" / "rotation" / "results.json").read_text()))
    assert cpu_direction.main(["--read", str(latency_only)]) == 2


def test_two_pooled_results_are_compared_point_by_point(tmp_path, capsys):
    def pooled(name: str, ratio: float, half: float) -> Path:
        lo, hi = ratio * math.exp(-half), ratio * math.exp(half)
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"points": [
            {"arm": "rtps_sign", "mode": "latency", "size": 32, "ratio": ratio,
             "ratio_ci95": [lo, hi]},
            {"arm": "none:aa", "mode": "latency", "size": 32, "ratio": 1.5,
             "ratio_ci95": [1.0, 2.0]}]}))
        return path
    a, b = pooled("a", 1.30, 0.0196), pooled("b", 1.30 * math.exp(0.03), 0.0392)
    assert calibration.pooled_ratios(a) == {
        ("rtps_sign", "latency", 32): (pytest.approx(math.log(1.3)), pytest.approx(0.01))}
    calibration.main(["--pooled", str(a), str(b)])
    z = -0.03 / math.hypot(0.01, 0.02)
    assert f"1 pairs × points (latency): var(z) {z * z:.2f}, |z| > 1.96: 0.0 %" in \
        capsys.readouterr().out


HOST = DATA / "runs" / "amd-epyc-2026-12-07"
LATE = DATA / "runs" / "amd-epyc-2026-12-07-late"


@pytest.mark.parametrize("host, args", [
    (HOST, []), (HOST, ["--no-term"]), (HOST, ["--kappa", "1.4"]),
    (LATE, []), (LATE, ["--kappa", "4.5"])],
    ids=["as-stated", "no-term", "kappa-1.4", "late-as-stated", "late-kappa-4.5"])
def test_method_md_quotes_what_calibration_prints_on_the_committed_runs(host, args, capsys):
    """docs/background/method.md's figures of 2026-12-07 are reproduced from the runs
    committed in tests/data/runs/ (from their stored widths: figures that do not move when
    the code's intervals do; tests/results/test_run_term_real.py judges those)."""
    calibration.main(["--read", str(host), *args])
    out = capsys.readouterr().out
    var = out.split("var(z) ")[1].split(",")[0]
    beyond = out.split("|z| > 1.96: ")[1].split(" %")[0]
    method = (ROOT / "docs" / "background" / "method.md").read_text()
    assert f"var(z) {var}, {beyond} % beyond 1.96" in method, (args, var, beyond)
