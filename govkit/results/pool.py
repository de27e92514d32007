"""Several runs of the same points pooled into one estimate per point, whose interval holds
the between-run term measured from those runs (`govkit bench --runs N`, `govkit report
--pool A B C`): pooled.json and pooled.md.

Why: one run's interval covers what its own rounds and process instances show, plus a
run-to-run term that a single run cannot see (govkit.results.paired.RunTerm: a default, a
calibration or a given value). N runs of the same points show that term directly: how far
their ratios move from run to run beyond their own widths. The pool measures it and uses
nothing assumed.

The method (POOL_METHOD), per mode:
- each run's log ratio y of each arm (profile or the A/A arm) and size, and its standard
  error s without any run-to-run term (the paired bootstrap's `within` interval, 95 %
  half-width on the log scale / 1.96), every figure recomputed from the run's raw slots;
- the between-run variance tau² of a point, from all points of the mode together (a run's
  ratios move together, so they share it), in RunTerm's form tau² = floor² + kappa² ·
  share² (share = 1 - 1/r, the part of the work security adds): least squares, floor and
  kappa never below 0, of each point's excess spread (the variance of its N log ratios
  less the mean of their s²);
- per point, the random-effects mean: weights 1 / (s² + tau²), the weighted mean of the
  log ratios, its standard error sqrt(1 / sum of the weights), widened by the
  Hartung-Knapp factor sqrt(max(1, q)) where q is the weighted spread of the N ratios
  about that mean over N - 1 (so never narrower than the runs' own disagreement shows);
- the 95 % interval: Student's t with N - 1 degrees of freedom times that error (the
  between-run term rests on N runs however many points share it).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from govkit.common.errors import EXIT_USAGE, GovkitError

POOL_SCHEMA = "govkit.pool/1"
POOLED_NAME = "pooled.json"
POOLED_MD_NAME = "pooled.md"
# The pooled document's rerun_term_source: the term measured between the pooled runs
# (each run's own results.json keeps its own source: default, given, ...).
BETWEEN_RUNS = "between_runs"
# What the pooled runs must share, as (results.json settings key, what the line calls it).
SHARED_SETTINGS = (("runner", "runner"), ("modes", "mode"), ("profiles", "profiles"),
                   ("sizes", "sizes"), ("transports", "transports"), ("paths", "paths"),
                   ("loss_rates_pct", "loss rates"))
POOL_METHOD = (
    "Each run's per-point log ratio and its standard error without a run-to-run term "
    "(the paired bootstrap's within interval / 1.96); the between-run variance tau² = "
    "floor² + kappa² (1 - 1/r)², fitted per mode over all its points (least squares, "
    "floor, kappa ≥ 0) to the spread of each point's ratios beyond their own errors; per "
    "point the random-effects mean (weights 1/(s² + tau²)), its error widened by the "
    "Hartung-Knapp factor sqrt(max(1, q)) and a 95% interval of Student's t with N - 1 "
    "degrees of freedom (N runs).")

# Student's t 0.975 quantile for 1..30 degrees of freedom; beyond, the Cornish-Fisher
# expansion (within 0.001 there).
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201,
         2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074,
         2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
Z975 = 1.959964


def t975(df: int) -> float:
    """Student's t 0.975 quantile with `df` degrees of freedom (≥ 1)."""
    if df < 1:
        raise ValueError("df must be at least 1")
    if df <= len(_T975):
        return _T975[df - 1]
    z = Z975
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)


@dataclass(frozen=True)
class RunRatio:
    """One run's figure of one point: log ratio and its standard error without the
    run-to-run term."""
    log_ratio: float
    se: float


@dataclass(frozen=True)
class BetweenRuns:
    """The between-run term of one mode, measured from the pooled runs (log scale)."""
    floor: float
    kappa: float
    points: int

    def variance(self, log_ratio: float) -> float:
        share = 1 - math.exp(-abs(log_ratio))
        return self.floor ** 2 + (self.kappa * share) ** 2


@dataclass(frozen=True)
class Pooled:
    ratio: float
    ratio_ci95: tuple[float, float]
    runs: int
    between_sd_pct: float
    spread_factor: float          # Hartung-Knapp: sqrt(max(1, q))

    @property
    def halfwidth_pct(self) -> float:
        lo, hi = self.ratio_ci95
        return 100 * max(hi - self.ratio, self.ratio - lo) / self.ratio


def between_runs(points: Sequence[Sequence[RunRatio]]) -> BetweenRuns:
    """The mode's tau² = floor² + kappa² share², fitted to every point of two or more runs:
    least squares of each point's excess spread (variance of its log ratios less the mean
    of their s²) on share², both coefficients kept ≥ 0."""
    xs, ms = [], []
    for runs in points:
        if len(runs) < 2:
            continue
        ys = [r.log_ratio for r in runs]
        ms.append(statistics.variance(ys) - statistics.fmean(r.se ** 2 for r in runs))
        xs.append((1 - math.exp(-abs(statistics.fmean(ys)))) ** 2)
    if not ms:
        return BetweenRuns(0.0, 0.0, 0)
    a, b = _nonnegative_line(xs, ms)
    return BetweenRuns(math.sqrt(a), math.sqrt(b), len(ms))


def _nonnegative_line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least squares y = a + b x with a, b ≥ 0 (the unconstrained fit, else the better of
    the two one-coefficient fits, else 0)."""
    n = len(xs)
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if n > 1 and sxx > 0:
        b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
        a = my - b * mx
        if a >= 0 and b >= 0:
            return a, b
    candidates = [(max(0.0, my), 0.0)]
    sx2 = sum(x * x for x in xs)
    if sx2 > 0:
        candidates.append((0.0, max(0.0, sum(x * y for x, y in zip(xs, ys, strict=True))
                                    / sx2)))
    return min(candidates, key=lambda ab: sum((y - ab[0] - ab[1] * x) ** 2
                                              for x, y in zip(xs, ys, strict=True)))


def pool_point(runs: Sequence[RunRatio], term: BetweenRuns) -> Pooled:
    """One point's runs as one estimate (POOL_METHOD); two runs at least."""
    if len(runs) < 2:
        raise ValueError("pooling needs two runs of the point at least")
    mean_log = statistics.fmean(r.log_ratio for r in runs)
    tau2 = term.variance(mean_log)
    weights = [1 / (r.se ** 2 + tau2) if r.se ** 2 + tau2 > 0 else 1e12 for r in runs]
    total = sum(weights)
    y = sum(w * r.log_ratio for w, r in zip(weights, runs, strict=True)) / total
    q = sum(w * (r.log_ratio - y) ** 2 for w, r in zip(weights, runs, strict=True)) \
        / (len(runs) - 1)
    factor = math.sqrt(max(1.0, q))
    half = t975(len(runs) - 1) * factor / math.sqrt(total)
    return Pooled(math.exp(y), (math.exp(y - half), math.exp(y + half)), len(runs),
                  100 * math.sqrt(tau2), factor)


# ----------------------------------------------------------------- runs as documents


def run_ratios(run) -> dict[tuple[str, str, int], RunRatio]:
    """(arm, mode, size) -> RunRatio of a rotating run (govkit.results.record.Run), the
    A/A arm's included, every figure recomputed from its raw slots."""
    from govkit.results.summary import rotation_overheads
    out = {}
    for key, o in rotation_overheads(run, ratio_only=True).items():
        if o is None or not o.ratio:
            continue
        ci = o.within_ci95 if o.run_sd_pct is not None else o.ratio_ci95
        if ci is None or ci[0] <= 0:
            continue
        out[key] = RunRatio(math.log(o.ratio), (math.log(ci[1]) - math.log(ci[0])) / (2 * Z975))
    return out


def read_runs(dirs: Sequence[Path]) -> list[tuple[Path, dict, object]]:
    """Each directory's results.json, parsed and checked: (dir, doc, Run). One line, exit
    2, for an unreadable one, one given twice, fewer than two, or runs that do not share
    what pooling needs (refuse_unlike)."""
    from govkit.results.check import Malformed, load_run
    from govkit.results.store import RESULTS_NAME, load_results
    if len(dirs) < 2:
        raise GovkitError("--pool needs two or more runs", EXIT_USAGE)
    seen = set()
    out = []
    for d in dirs:
        real = Path(d).resolve()
        if real in seen:
            raise GovkitError(f"--pool: {d} is given twice", EXIT_USAGE)
        seen.add(real)
        doc = load_results(Path(d) / RESULTS_NAME)
        try:
            run = load_run(doc)
        except Malformed as e:
            raise GovkitError(f"{Path(d) / RESULTS_NAME}: {e}", EXIT_USAGE) from None
        if run.rotation is None:
            raise GovkitError(f"--pool: {d} is not a rotating run (runner cyclone or "
                              "fastdds): only paired ratios are pooled", EXIT_USAGE)
        out.append((Path(d), doc, run))
    refuse_unlike([(d, doc) for d, doc, _ in out])
    return out


def refuse_unlike(runs: Sequence[tuple[Path, dict]]) -> None:
    """One line, exit 2, naming the first run that differs from the first in a setting
    pooling needs shared (SHARED_SETTINGS)."""
    first_dir, first = runs[0]
    for d, doc in runs[1:]:
        for key, said in SHARED_SETTINGS:
            a, b = (first.get("settings") or {}).get(key), (doc.get("settings") or {}).get(key)
            if a != b:
                raise GovkitError(f"--pool: {d} does not share {said} with {first_dir} "
                                  f"({_shown(b)} against {_shown(a)}); pool only runs of the "
                                  "same profiles, sizes, runner and mode", EXIT_USAGE)


def _shown(v) -> str:
    return ",".join(map(str, v)) if isinstance(v, list) else str(v)


def pool_runs(runs: Sequence[tuple[Path, dict, object]], timing: dict | None = None) -> dict:
    """The pooled document (govkit.pool/1) of runs read by read_runs."""
    per_run = [run_ratios(run) for _, _, run in runs]
    keys = sorted({k for r in per_run for k in r}, key=lambda k: (k[1], k[2], k[0]))
    by_key = {k: [r[k] for r in per_run if k in r] for k in keys}
    modes = sorted({k[1] for k in keys})
    terms = {m: between_runs([v for k, v in by_key.items() if k[1] == m]) for m in modes}
    points = []
    for key in keys:
        arm, mode, size = key
        values = by_key[key]
        if len(values) < 2:
            continue
        p = pool_point(values, terms[mode])
        points.append({
            "arm": arm, "mode": mode, "size": size, "runs": p.runs,
            "ratio": round(p.ratio, 5), "ratio_ci95": [round(x, 5) for x in p.ratio_ci95],
            "ratio_halfwidth_pct": round(p.halfwidth_pct, 3),
            "between_sd_pct": round(p.between_sd_pct, 3),
            "spread_factor": round(p.spread_factor, 3), "df": p.runs - 1,
            "run_ratios": [round(math.exp(v.log_ratio), 5) for v in values],
            "run_within_halfwidth_pct": [round(100 * (math.exp(Z975 * v.se) - 1), 3)
                                         for v in values]})
    first = runs[0][1]
    doc = {
        "schema": POOL_SCHEMA,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "runs": [{"dir": str(d), "created": doc.get("created"),
                  "seed": (doc.get("settings") or {}).get("seed"),
                  "rerun_term_source": ((doc.get("rotation") or {}).get("settings") or {})
                  .get("rerun_term_source", "default")} for d, doc, _ in runs],
        "settings": {key: (first.get("settings") or {}).get(key)
                     for key, _ in SHARED_SETTINGS},
        "environment": first.get("environment"),
        "rerun_term_source": BETWEEN_RUNS,
        "between_runs": {m: {"floor_pct": round(100 * t.floor, 3),
                             "kappa_pct": round(100 * t.kappa, 3), "points": t.points}
                         for m, t in terms.items()},
        "method": POOL_METHOD,
        "points": points,
    }
    if timing:
        doc["timing"] = timing
    return doc


def pooled_markdown(doc: dict) -> str:
    """pooled.md: the pooled ratios as a table, the runs and the term they measured."""
    from govkit.results.paired import AA_ARM
    from govkit.results.summary import AA_POINT
    lines = [f"# {len(doc['runs'])} runs pooled", "",
             "Runs: " + ", ".join(f"`{r['dir']}`" for r in doc["runs"]) + ".", "",
             "Between-run term measured from these runs (`rerun_term_source: "
             f"{doc['rerun_term_source']}`): " + "; ".join(
                 f"{m} floor {t['floor_pct']:.2f} %, kappa {t['kappa_pct']:.2f} %"
                 for m, t in doc["between_runs"].items()) + ".", ""]
    timing = doc.get("timing")
    if timing:
        lines += [f"Announced {timing['announced_s']:.0f} s, took {timing['actual_s']:.0f} s.",
                  ""]
    lines += ["| point | mode | size (B) | ratio | 95 % interval | ± % | each run |",
              "|---|---|---:|---:|---|---:|---|"]
    for p in doc["points"]:
        name = AA_POINT if p["arm"] == AA_ARM else p["arm"]
        lo, hi = p["ratio_ci95"]
        lines.append(f"| {_md(name)} | {p['mode']} | {p['size']} | {p['ratio']:.3f} | "
                     f"{lo:.3f}–{hi:.3f} | {p['ratio_halfwidth_pct']:.1f} | "
                     + ", ".join(f"{r:.3f}" for r in p["run_ratios"]) + " |")
    lines += ["", f"Method: {doc['method']}", ""]
    return "\n".join(lines)


def pooled_lines(doc: dict) -> list[str]:
    """The pooled ratios as the terminal shows them, one line per point."""
    from govkit.results.paired import AA_ARM
    from govkit.results.summary import AA_POINT
    lines = [f"{len(doc['runs'])} runs pooled; between-run term measured from them: "
             + "; ".join(f"{m} floor {t['floor_pct']:.2f} %, kappa {t['kappa_pct']:.2f} %"
                         for m, t in doc["between_runs"].items())]
    for p in doc["points"]:
        lo, hi = p["ratio_ci95"]
        name = AA_POINT if p["arm"] == AA_ARM else p["arm"]
        lines.append(f"  {name:<40} {p['mode']:<10} {p['size']:>6} B  × {p['ratio']:.3f} "
                     f"[{lo:.3f}, {hi:.3f}] ±{p['ratio_halfwidth_pct']:.1f} %  runs: "
                     + ", ".join(f"{r:.3f}" for r in p["run_ratios"]))
    return lines


def _md(text: str) -> str:
    """A name as Markdown text: every character Markdown reads escaped."""
    return "".join("\\" + c if c in "\\`*_{}[]()<>#+-.!|~" else c for c in str(text))


def write_pooled(out: Path, doc: dict) -> tuple[Path, Path]:
    from govkit.common.fsutil import write_atomic
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / POOLED_NAME, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    write_atomic(out / POOLED_MD_NAME, pooled_markdown(doc))
    return out / POOLED_NAME, out / POOLED_MD_NAME


def pool_directories(dirs: Sequence[Path], out: Path | None = None) -> tuple[dict, Path]:
    """`govkit report --pool A B C`: the runs read, refused unless alike, pooled, and
    pooled.json and pooled.md written to `out` (default: the first run's directory)."""
    runs = read_runs(dirs)
    doc = pool_runs(runs)
    target = Path(out) if out is not None else Path(dirs[0])
    path, _ = write_pooled(target, doc)
    return doc, path


def pool_report(dirs: Sequence[Path], out: Path | None, other_options: bool = False
                ) -> list[str]:
    """`govkit report --pool`: what the terminal prints (the pooled lines and where they
    were written)."""
    if other_options:
        raise GovkitError("--pool writes pooled.json and pooled.md; it takes neither "
                          "--cost-at nor --json", EXIT_USAGE)
    doc, path = pool_directories(dirs, out)
    return [*pooled_lines(doc), f"wrote {path}", f"wrote {path.with_name(POOLED_MD_NAME)}"]
