#!/usr/bin/env python3
"""Do a run's intervals cover what a rerun shows? N runs back to back, then every pair of
runs compared ratio by ratio. Prints var(z) and the share of |z| beyond 1.96.

Each run is `govkit bench` with the arguments given after `--` (default: the README's
`--all-profiles`, latency). For every secured point (profile, mode, size) and every pair of
runs (a, b), z is the difference of the two log ratios over its standard error, each run's
standard error read off its own 95 % interval (half-width of the log interval / 1.96):

    z = (ln r_a - ln r_b) / sqrt(se_a^2 + se_b^2)

If the intervals are honest, z is about standard normal over all pairs: var(z) near 1 and
5 % of |z| beyond 1.96. It also estimates the machine's run-to-run term
(govkit.results.paired.RunTerm: the values `govkit bench --rerun-kappa` and `--rerun-floor`
take) from the runs' widths without it.
`--mode throughput` compares the throughput ratios of runs given `-- --all-profiles --mode
both`. Intervals too narrow give var(z) above 1 (issue 32: 2.0 and 19 %
with the design of 2026-12-03). The goal: var(z) ≤ 1.3 and ≤ 8 % beyond 1.96. The A/A
arm's ratio per run (should cover 1) and each run's load are printed too.

    .venv/bin/python benchmarks/calibration.py [--runs 8] [--out DIR] [-- BENCH ARGS]
    .venv/bin/python benchmarks/calibration.py --read DIR    # the runs already in DIR
    .venv/bin/python benchmarks/calibration.py --pooled A/pooled.json B/pooled.json

Recomputed coverage (what docs/background/method.md's "recomputed with κ = …" and "without
the term" figures are): `--kappa PCT` (and `--floor PCT`) replaces the run-to-run term each
run carried by this one, `--no-term` leaves it out. By default from each run's stored
widths (the width without the term, ratio_halfwidth_within_pct, combined with the term as
sqrt(se² + term²) on the log scale: the normal approximation of the bootstrap's draw);
with `--recompute`, every run's figures are recomputed from its raw slots by this
checkout's code (govkit.results.summary.summarize), the term written into its settings
first: exact, and what the code of the day makes of the same runs. The committed runs of
tests/data/runs/ are such DIRs, e.g.

    .venv/bin/python benchmarks/calibration.py --read tests/data/runs/amd-epyc-2026-12-07 \
        --kappa 2.6
"""

from __future__ import annotations

import argparse
import copy
import gzip
import itertools
import json
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

GOVKIT = str(Path(sys.executable).with_name("govkit"))
DEFAULT_ARGS = ["--all-profiles"]
MODE = "latency"                    # the mode whose ratios are compared


def run_all(out: Path, runs: int, args: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for i in range(runs):
        target = out / f"run{i}"
        if (target / "results.json").exists():
            continue
        t0 = time.monotonic()
        r = subprocess.run([GOVKIT, "bench", *args, "--out", str(target), "--no-report"],
                           capture_output=True, text=True)
        (out / f"run{i}.log").write_text(r.stdout + r.stderr)     # what the user saw
        print(f"run {i}: exit {r.returncode}, {time.monotonic() - t0:.0f} s, load "
              f"{open('/proc/loadavg').read().split()[0]}", flush=True)


def load_docs(where: Path) -> list[dict]:
    """The results.json of every run*/ directory in `where` (run0, run1, … or run-1, …;
    results.json.gz as committed in tests/data/runs/)."""
    paths = sorted([*where.glob("run*/results.json"), *where.glob("run*/results.json.gz")])
    return [json.loads(gzip.decompress(p.read_bytes()) if p.suffix == ".gz"
                       else p.read_bytes()) for p in paths]


def pooled_ratios(path: Path) -> dict[tuple, tuple[float, float]]:
    """(arm, mode, size) -> (log ratio, standard error) of a pooled.json's secured points
    (govkit bench --runs, govkit report --pool), the error read off its 95 % interval as
    for one run (half-width of the log interval / 1.96)."""
    doc = json.loads(Path(path).read_text())
    out = {}
    for p in doc["points"]:
        lo, hi = p["ratio_ci95"]
        if p["mode"] == MODE and p["arm"] != "none:aa" and lo > 0:
            out[(p["arm"], p["mode"], p["size"])] = (
                math.log(p["ratio"]), (math.log(hi) - math.log(lo)) / (2 * 1.96))
    return out


def recomputed(doc: dict, kappa: float | None = None, floor: float = 0.0) -> dict:
    """`doc` with its summary recomputed from its raw slots by this checkout's code; with
    `kappa` (%, and `floor`), that run-to-run term written into the run's settings first
    for MODE (0 and 0: none)."""
    from govkit.results.summary import summarize
    doc = copy.deepcopy(doc)
    if kappa is not None and doc.get("rotation"):
        settings = doc["rotation"].setdefault("settings", {})
        settings["rerun_kappa_pct"] = {**settings.get("rerun_kappa_pct", {}), MODE: kappa}
        settings["rerun_floor_pct"] = {**settings.get("rerun_floor_pct", {}), MODE: floor}
    doc["summary"] = summarize(doc)
    return doc


def with_term(per_run: list[dict[tuple, tuple[float, float]]], kappa: float, floor: float
              ) -> list[dict[tuple, tuple[float, float]]]:
    """Each point's standard error without the term (within()) combined with RunTerm(kappa
    %, floor %) at its ratio: sqrt(se² + term²), log scale."""
    from govkit.results.paired import RunTerm
    term = RunTerm(kappa / 100, floor / 100)
    return [{k: (lr, math.hypot(se, term.log_sd(lr))) for k, (lr, se) in r.items()}
            for r in per_run]


def pair_zs(per_run: list[dict[tuple, tuple[float, float]]]) -> list[float]:
    """z of every pair of runs and point both hold: the difference of their log ratios
    over its standard error."""
    zs = []
    for x, y in itertools.combinations(per_run, 2):
        for key in sorted(x.keys() & y.keys()):
            (la, sa), (lb, sb) = x[key], y[key]
            zs.append((la - lb) / math.sqrt(sa * sa + sb * sb))
    return zs


def coverage(zs: list[float]) -> tuple[float, float]:
    """var(z) (mean of z², mean 0 by construction of the pairs) and the share of |z|
    beyond 1.96."""
    return (statistics.fmean(z * z for z in zs),
            sum(abs(z) > 1.96 for z in zs) / len(zs))


def ratios(doc: dict) -> dict[tuple, tuple[float, float]]:
    """(profile, mode, size) -> (log ratio, standard error) of every secured point, from
    its stated 95 % interval."""
    out = {}
    for row in doc["summary"]:
        vs = row.get("vs_none") or {}
        ci = vs.get("ratio_ci95")
        if row["mode"] == MODE and vs.get("ratio") and ci and ci[0] > 0:
            se = (math.log(ci[1]) - math.log(ci[0])) / (2 * 1.96)
            if se > 0:
                out[(row["profile"], row["mode"], row["size"])] = (math.log(vs["ratio"]), se)
    return out


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    extra = argv[argv.index("--") + 1:] if "--" in argv else DEFAULT_ARGS
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--out", type=Path, default=Path("calibration"))
    ap.add_argument("--read", type=Path, help="only read the runs already in this directory")
    ap.add_argument("--mode", choices=("latency", "throughput"), default="latency",
                    help="whose ratios to compare (throughput: give `-- --all-profiles "
                         "--mode both`)")
    ap.add_argument("--kappa", type=float, metavar="PCT",
                    help="recompute every interval with this run-to-run kappa (%%) instead "
                         "of the one the runs carried")
    ap.add_argument("--floor", type=float, default=0.0, metavar="PCT",
                    help="with --kappa: and this floor (%%)")
    ap.add_argument("--no-term", action="store_true",
                    help="recompute every interval without a run-to-run term")
    ap.add_argument("--recompute", action="store_true",
                    help="recompute every figure from the raw slots with this checkout's "
                         "code (slower; exact with --kappa and --no-term)")
    ap.add_argument("--pooled", type=Path, nargs="+", metavar="POOLED_JSON",
                    help="compare pooled results instead (pooled.json of `govkit bench "
                         "--runs` or `govkit report --pool`), each pair point by point")
    a = ap.parse_args(argv)
    global MODE
    MODE = a.mode
    if a.pooled:
        zs = pair_zs([pooled_ratios(p) for p in a.pooled])
        if not zs:
            raise SystemExit("fewer than two pooled results with secured points")
        var, beyond = coverage(zs)
        print(f"{len(a.pooled)} pooled results, {len(zs)} pairs × points ({MODE}): var(z) "
              f"{var:.2f}, |z| > 1.96: {100 * beyond:.1f} % (goal ≤ 1.3 and ≤ 8 %)")
        return
    where = a.read or a.out
    if a.read is None:
        run_all(a.out, a.runs, extra)
    docs = load_docs(where)
    kappa = 0.0 if a.no_term else a.kappa
    floor = 0.0 if a.no_term else a.floor
    if a.recompute:
        docs = [recomputed(d, kappa, floor) for d in docs]
        per_run = [ratios(d) for d in docs]
    elif kappa is not None:
        per_run = with_term([within(d) for d in docs], kappa, floor)
    else:
        per_run = [ratios(d) for d in docs]
    zs = pair_zs(per_run)
    if not zs:
        raise SystemExit("fewer than two runs with overhead ratios")
    var, beyond = coverage(zs)
    how = ("as the runs stated them" if kappa is None else "without the term"
           if not kappa and not floor else f"recomputed with kappa {kappa:g} %, floor "
           f"{floor:g} %") + (", figures recomputed from the raw slots" if a.recompute else "")
    print(f"{len(docs)} runs, {len(zs)} run pairs × points ({MODE}, {how}): var(z) "
          f"{var:.2f}, |z| > 1.96: {100 * beyond:.1f} % (honest: about 1 and 5 %; goal "
          f"≤ 1.3 and ≤ 8 %)")
    widths = [100 * (math.exp(1.96 * se) - 1) for r in per_run for _, se in r.values()]
    print(f"median stated half-width ±{statistics.median(widths):.2f} %")
    aa_points = aa_covering = 0
    for i, d in enumerate(docs):
        load = (d.get("load") or [{}])[0].get("loadavg_before")
        floor_rows = [r for r in _noise_floor(d) if r.get("ratio_ci95")]
        aa_points += len(floor_rows)
        aa_covering += sum(r["ratio_ci95"][0] <= 1 <= r["ratio_ci95"][1] for r in floor_rows)
        print(f"run {i}: A/A " + ", ".join(
            f"{r['size']} B {r['ratio']:.3f} [{r['ratio_ci95'][0]:.3f}, "
            f"{r['ratio_ci95'][1]:.3f}]" for r in floor_rows) + f"; load before {load}; "
            f"{d.get('created')}, {(d.get('environment') or {}).get('cpu')}")
    if aa_points:
        print(f"A/A arm: covers 1 on {aa_covering} of {aa_points} points "
              f"({100 * aa_covering / aa_points:.0f} %; goal ≥ 95 %)")
    by_point: dict[tuple, list[float]] = {}
    for r in per_run:
        for key, (lr, _) in r.items():
            by_point.setdefault(key, []).append(lr)
    spread = [100 * statistics.stdev(v) for v in by_point.values() if len(v) > 1]
    if spread:
        print(f"run-to-run SD of the log ratios: median {statistics.median(spread):.2f} %, "
              f"max {max(spread):.2f} %")
    kappa, floor = rerun_terms([within(d) for d in docs])
    if kappa is not None:
        carried = docs[-1]["rotation"]["settings"]
        cpu = (docs[-1].get("environment") or {}).get("cpu")
        print(f"the run-to-run term measured from these runs ({cpu}, {MODE}): kappa "
              f"{100 * kappa:.2f} % if it grows with the share security adds (--rerun-kappa {MODE}="
              f"{100 * kappa:.2g}), or floor {100 * floor:.2f} % if every ratio moves alike "
              f"(--rerun-floor {MODE}={100 * floor:.2g}); the runs carried kappa "
              f"{carried.get('rerun_kappa_pct', {}).get(MODE, 0)} %, floor "
              f"{carried.get('rerun_floor_pct', {}).get(MODE, 0)} %")


def within(doc: dict) -> dict[tuple, tuple[float, float]]:
    """(profile, mode, size) -> (log ratio, standard error without the run-to-run term)."""
    out = {}
    for row in doc["summary"]:
        vs = row.get("vs_none") or {}
        width = vs.get("ratio_halfwidth_within_pct", vs.get("ratio_halfwidth_pct"))
        if row["mode"] == MODE and vs.get("ratio") and width and row["profile"] != "none":
            out[(row["profile"], row["mode"], row["size"])] = (
                math.log(vs["ratio"]), math.log(1 + width / 100) / 1.96)
    return out


def rerun_terms(per_run: list[dict[tuple, tuple[float, float]]]
                ) -> tuple[float | None, float]:
    """govkit.results.paired.RunTerm's two forms by the method of moments, over every pair
    of runs and point, se the runs' own widths without the term: E[(d_a - d_b)²] - se_a² -
    se_b² = 2 kappa² s² (s = 1 - 1/r, the share of the work security adds) or 2 floor²."""
    num = share2 = pairs = 0.0
    for x, y in itertools.combinations(per_run, 2):
        for key in x.keys() & y.keys():
            (la, sa), (lb, sb) = x[key], y[key]
            share = 1 - math.exp(-abs((la + lb) / 2))
            num += (la - lb) ** 2 - sa * sa - sb * sb
            share2 += 2 * share * share
            pairs += 2
    if not pairs:
        return None, 0.0
    return (math.sqrt(max(0.0, num / share2)) if share2 else 0.0,
            math.sqrt(max(0.0, num / pairs)))


def _noise_floor(doc: dict) -> list[dict]:
    from govkit.results.summary import noise_floor
    return noise_floor(doc, mode=MODE)


if __name__ == "__main__":
    main()
