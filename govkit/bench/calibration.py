"""The run-to-run term measured on the machine where the figures are made (`govkit
calibrate`), kept in the user's cache under the machine's identity, and the term a run
carries (`rerun_term_settings`).

Why: a rotating run's secured ratios move together from run to run by an amount no
resampling inside one run can see (docs/background/method.md, 2026-12-05), so each run
carries a term measured across runs (govkit.results.paired.RunTerm): κ for latency (the
share of the work security adds moves by κ), a floor for throughput. govkit's defaults are
one 2-core VM's; on another host they under-covered (issue 42: var(z) 1.39, 13 % of |z|
beyond 1.96 on an AMD EPYC VM). `govkit calibrate` makes a few short runs here, back to
back, and estimates both from how far their ratios move beyond their own intervals:

    E[(d_a − d_b)²] − se_a² − se_b² = 2 κ² s²    (latency; s = 1 − 1/r)
    E[(d_a − d_b)²] − se_a² − se_b² = 2 floor²   (throughput)

over every pair of runs (a, b) and secured point, d the log ratio and se its standard
error without the term (the method of moments of benchmarks/calibration.py). Its own
uncertainty is a jackknife over the runs (each left out in turn). The calibration is one
file in the user's cache (govkit.common.cachefile: digest-checked, private, atomic),
named by and holding the machine's identity (CPU model, microcode, kernel release, host
name) and dated; it also holds how far idle CPUs move the absolute latency
(govkit.bench.idle_vs_awake), measured by the same command. A bench run on the same
machine carries it (`rerun_term_source:
machine_calibration`); a file that does not check, or is for another identity, or older
than MAX_AGE_DAYS, is refused in one line and the run carries the default, saying it is
another machine's.

Why not `measured_in_run`: on 2026-12-05 the two halves of each of eight runs agreed
within 0.23 % (SD) where the runs differed by 0.46 %: the shift is set per run, so a
term measured between blocks of one run's rounds reads about half of it and would
under-cover. A run therefore never calls its term measured in it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from govkit.bench.defaults import RERUN_FLOOR_PCT, RERUN_KAPPA_PCT
from govkit.bench.idle_vs_awake import QUICK as IDLE_QUICK
from govkit.bench.idle_vs_awake import (
    IdlePlan,
    IdleRefused,
    aware_date,
    bench_in_child,
    check_idle_vs_awake,
    idle_vs_awake_lines,
    run_idle_vs_awake,
)
from govkit.catalog.measures import MODES
from govkit.common.cachefile import read_cached, write_cached
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.paths import user_cache_dir

FORMAT = "govkit.calibration/1"
# A calibration older than this is not used: the host's run-to-run spread moved by 2× from
# one hour to the next on the 2-core VM (2026-12-05), so an old one is a guess too.
MAX_AGE_DAYS = 7
# What `govkit calibrate` runs: the lightest and the heaviest secured profile (the term
# grows with the share security adds, so both ends of it are sampled) at a small and a
# large size, short runs back to back.
PROFILES = ("none", "rtps_sign", "sign_submsg_encrypt_origin_data_encrypt")
SIZES = (32, 63000)
DEFAULT_RUNS = 4
DEFAULT_RUN_BUDGET_S = 40
QUICK = {"runs": 2, "run_budget_s": 15, "profiles": ("none", "rtps_sign"), "sizes": (32,),
         "idle": IdlePlan(**IDLE_QUICK)}
SETUP_S = 12            # a run's start-up beyond its budget (pairs started, warm-up, save)
MAX_PCT = 100.0


def machine_identity() -> dict[str, str]:
    """What makes a calibration this machine's: CPU model and microcode (/proc/cpuinfo),
    kernel release and host name; `unknown` where the system does not say."""
    model = microcode = "unknown"
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")[:1 << 20]
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and model == "unknown":
            model = value.strip() or model
        elif key == "microcode" and microcode == "unknown":
            microcode = value.strip() or microcode
    uname = os.uname()
    return {"cpu": model, "microcode": microcode, "kernel": uname.release,
            "host": uname.nodename}


def cache_name(identity: dict[str, str]) -> str:
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
    return f"rerun-term-{digest[:16]}.json"


@dataclass(frozen=True)
class Calibration:
    identity: dict[str, str]
    created: str                    # ISO 8601, UTC
    runs: int
    points: int
    terms: dict[str, dict[str, float | None]]   # mode → {kappa_pct|floor_pct, …_se_pct}
    settings: dict
    idle_vs_awake: dict | None = None   # govkit.bench.idle_vs_awake's measurement

    def to_json(self) -> dict:
        return {"format": FORMAT, "identity": self.identity, "created": self.created,
                "runs": self.runs, "points": self.points, "terms": self.terms,
                "settings": self.settings,
                **({"idle_vs_awake": self.idle_vs_awake} if self.idle_vs_awake else {})}

    def summary(self) -> dict:
        """What a run's rotation.settings.rerun_term_calibration records of it."""
        return {"created": self.created, "identity": self.identity, "runs": self.runs,
                "points": self.points, "terms": self.terms}


class CalibrationRefused(ValueError):
    """A stored calibration that cannot be used: the reason, in one line."""


def parse_calibration(data: object, identity: dict[str, str], now: datetime) -> Calibration:
    """A stored calibration checked field by field (CalibrationRefused naming the first
    problem): its format, that it is this identity's, its date, and every figure."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CalibrationRefused(f"not a {FORMAT} file")
    if data.get("identity") != identity:
        raise CalibrationRefused("it was made on another machine (CPU, microcode, kernel or "
                                 "host name differ)")
    created = aware_date(data.get("created"), "its date `created`", CalibrationRefused)
    if created > now + timedelta(minutes=5):
        raise CalibrationRefused("its date `created` is in the future")
    if now - created > timedelta(days=MAX_AGE_DAYS):
        raise CalibrationRefused(f"it is older than {MAX_AGE_DAYS} days "
                                 f"({created.date().isoformat()}): run govkit calibrate again")
    runs, points = data.get("runs"), data.get("points")
    for name, value in (("runs", runs), ("points", points)):
        if not isinstance(value, int) or isinstance(value, bool) or not 2 <= value <= 10_000:
            raise CalibrationRefused(f"`{name}` is not a count of at least 2")
    terms = data.get("terms")
    if not isinstance(terms, dict) or not terms or not set(terms) <= set(MODES):
        raise CalibrationRefused(f"`terms` must hold {' and/or '.join(MODES)}")
    for mode, term in terms.items():
        want = "kappa_pct" if mode == "latency" else "floor_pct"
        if not isinstance(term, dict) or set(term) != {want, want[:-4] + "_se_pct"}:
            raise CalibrationRefused(f"`terms.{mode}` must hold {want} and its _se_pct")
        for key, value in term.items():
            if value is None and key.endswith("_se_pct"):
                continue
            if (not isinstance(value, int | float) or isinstance(value, bool)
                    or not math.isfinite(value) or not 0 <= value <= MAX_PCT):
                raise CalibrationRefused(f"`terms.{mode}.{key}` is not a percentage")
    settings = data.get("settings")
    idle = data.get("idle_vs_awake")
    if idle is not None:
        try:
            idle = check_idle_vs_awake(idle)
        except IdleRefused as e:
            raise CalibrationRefused(str(e)) from None
    return Calibration(identity, created.isoformat(timespec="seconds"), runs, points,
                       terms, settings if isinstance(settings, dict) else {}, idle)


def load_calibration(identity: dict[str, str] | None = None,
                     now: datetime | None = None) -> tuple[Calibration | None, str | None]:
    """This machine's calibration, or None and why not when one is there but refused (a
    missing one is no news: None, None)."""
    identity = identity or machine_identity()
    name = cache_name(identity)
    path = user_cache_dir() / name
    raw = read_cached(name)
    if raw is None:
        if not os.path.lexists(path):
            return None, None
        return None, (f"the machine calibration {path} was refused: it is not a private "
                      "regular file of this user, or its digest does not match (edited or "
                      "truncated)")
    try:
        return parse_calibration(json.loads(raw), identity, now or datetime.now(UTC)), None
    except (ValueError, RecursionError) as e:
        return None, f"the machine calibration {path} was refused: {e}"


def store_calibration(cal: Calibration) -> Path:
    """Write `cal` to the user's cache (atomically); GovkitError when it cannot."""
    name = cache_name(cal.identity)
    if not write_cached(name, json.dumps(cal.to_json(), indent=1).encode()):
        raise GovkitError(f"could not write the calibration to {user_cache_dir() / name} "
                          "(the cache directory must be this user's and private)")
    return user_cache_dir() / name


# --------------------------------------------------------------------------- estimate

def points_of(doc: dict, mode: str) -> dict[tuple, tuple[float, float]]:
    """(profile, size) → (log ratio, standard error without the run-to-run term) of every
    secured point of `mode` in a results.json's summary."""
    out = {}
    for row in doc.get("summary") or []:
        vs = row.get("vs_none") or {}
        width = vs.get("ratio_halfwidth_within_pct", vs.get("ratio_halfwidth_pct"))
        ratio = vs.get("ratio")
        if (row.get("mode") == mode and row.get("profile") != "none"
                and isinstance(ratio, int | float) and ratio > 0
                and isinstance(width, int | float) and width > 0):
            out[(row["profile"], row["size"])] = (math.log(ratio),
                                                  math.log(1 + width / 100) / 1.96)
    return out


def term_of(per_run: list[dict[tuple, tuple[float, float]]], grows: bool) -> float | None:
    """κ (`grows`: with the share s = 1 − 1/r) or the floor, as a fraction, by the method
    of moments over every pair of runs and common point; None without one."""
    num = den = 0.0
    for x, y in itertools.combinations(per_run, 2):
        for key in x.keys() & y.keys():
            (la, sa), (lb, sb) = x[key], y[key]
            share = 1 - math.exp(-abs((la + lb) / 2)) if grows else 1.0
            num += (la - lb) ** 2 - sa * sa - sb * sb
            den += 2 * share * share
    if not den:
        return None
    return math.sqrt(max(0.0, num / den))


def estimate(per_run: list[dict[tuple, tuple[float, float]]], grows: bool
             ) -> tuple[float, float | None] | None:
    """The term (%) and its standard error (%, a jackknife over the runs; None with fewer
    than three runs)."""
    whole = term_of(per_run, grows)
    if whole is None:
        return None
    n = len(per_run)
    if n < 3:
        return 100 * whole, None
    leave = [term_of(per_run[:i] + per_run[i + 1:], grows) for i in range(n)]
    leave = [x for x in leave if x is not None]
    if len(leave) < 2:
        return 100 * whole, None
    mean = statistics.fmean(leave)
    se = math.sqrt((len(leave) - 1) / len(leave) * sum((x - mean) ** 2 for x in leave))
    return 100 * whole, 100 * se


def calibration_of(docs: list[dict], identity: dict[str, str], settings: dict,
                   created: str | None = None) -> Calibration:
    """The calibration the runs' results.json give (GovkitError when they give no term)."""
    terms: dict[str, dict[str, float | None]] = {}
    points = 0
    for mode in MODES:
        per_run = [points_of(d, mode) for d in docs]
        got = estimate(per_run, grows=mode == "latency")
        if got is None:
            continue
        name = "kappa" if mode == "latency" else "floor"
        terms[mode] = {f"{name}_pct": round(got[0], 3),
                       f"{name}_se_pct": round(got[1], 3) if got[1] is not None else None}
        points = max(points, len(set().union(*(p.keys() for p in per_run))))
    if not terms:
        raise GovkitError("the calibration runs gave no overhead ratio in two runs: nothing "
                          "to estimate the run-to-run term from")
    return Calibration(identity, created or datetime.now(UTC).isoformat(timespec="seconds"),
                       len(docs), max(points, 2), terms, settings)


# ----------------------------------------------------------------------------- runs

@dataclass(frozen=True)
class CalibrationPlan:
    runs: int = DEFAULT_RUNS
    run_budget_s: int = DEFAULT_RUN_BUDGET_S
    profiles: tuple[str, ...] = PROFILES
    sizes: tuple[int, ...] = SIZES
    mode: str = "latency"           # or "both": the throughput floor too
    idle: IdlePlan | None = IdlePlan()  # the awake/idle runs after them (None: none)

    @property
    def seconds(self) -> int:
        """What the runs take, about: the budget and the start-up of each."""
        return self.runs * (self.run_budget_s + SETUP_S) + (
            self.idle.seconds if self.idle else 0)

    def with_idle_runs(self, runs: int | None) -> CalibrationPlan:
        """`--idle-runs`: the awake/idle runs per state (0: none; None: as planned)."""
        if runs is None:
            return self
        if not 0 <= runs <= 50:
            raise GovkitError(f"--idle-runs {runs}: expected 0 to 50", EXIT_USAGE)
        return replace(self, idle=replace(self.idle or IdlePlan(), runs=runs) if runs else None)

    def bench_args(self) -> list[str]:
        return ["--profile", ",".join(self.profiles), "--sizes",
                ",".join(map(str, self.sizes)), "--mode", self.mode, "--budget",
                str(self.run_budget_s), "--no-report"]

    def to_json(self) -> dict:
        return {"runs": self.runs, "run_budget_s": self.run_budget_s,
                "profiles": list(self.profiles), "sizes": list(self.sizes), "mode": self.mode,
                "idle_runs_per_state": self.idle.runs if self.idle else 0}


def run_calibration(plan: CalibrationPlan, say, keep: Path | None = None) -> Calibration:
    """`plan.runs` short `govkit bench` runs back to back in a work directory of their own
    (their test PKI and results there; removed unless `keep`), then the estimate, then
    `plan.idle`'s awake/idle runs; `say` prints a line."""
    work = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="govkit-calibrate-"))
    work.mkdir(parents=True, exist_ok=True)
    docs = []
    try:
        for i in range(plan.runs):
            t0 = time.monotonic()
            doc, code = bench_in_child(plan.bench_args(), work, f"run{i}",
                                       f"calibration run {i + 1} of {plan.runs}")
            docs.append(doc)
            load = os.getloadavg()[0]
            say(f"run {i + 1} of {plan.runs}: {time.monotonic() - t0:.0f} s, exit "
                f"{code}, load average {load:.2f}")
        cal = calibration_of(docs, machine_identity(), plan.to_json())
        if plan.idle:
            cal = replace(cal, idle_vs_awake=run_idle_vs_awake(plan.idle, work, say))
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return cal


def calibration_lines(cal: Calibration) -> list[str]:
    """What `govkit calibrate` prints of a calibration, one line per mode."""
    lines = []
    for mode, term in cal.terms.items():
        name = "kappa" if mode == "latency" else "floor"
        value, se = term[f"{name}_pct"], term[f"{name}_se_pct"]
        unc = f" ± {se:.2f} %" if se is not None else " (uncertainty unknown: 2 runs)"
        default = (RERUN_KAPPA_PCT if mode == "latency" else RERUN_FLOOR_PCT)[mode]
        lines.append(f"{mode}: {'κ' if mode == 'latency' else 'floor'} {value:.2f} %{unc} "
                     f"(the default, from another machine: {default:g} %)")
    if cal.idle_vs_awake:
        lines += idle_vs_awake_lines(cal.idle_vs_awake)
    return lines


def measured_idle_vs_awake() -> dict | None:
    """The awake/idle measurement of the calibration made on the same machine identity
    (load_calibration), or None: what a bench run records in environment.idle_vs_awake."""
    cal, _ = load_calibration()
    return cal.idle_vs_awake if cal is not None else None


# ------------------------------------------------------------------- what a run carries

def rerun_term_settings(kappa: tuple[tuple[str, float], ...],
                        floor: tuple[tuple[str, float], ...], given: bool
                        ) -> dict:
    """The RotationSettings fields of the run-to-run term a bench run carries: the values
    given (`given`: --rerun-kappa/--rerun-floor), else this machine's calibration where it
    measured the mode, else the defaults (another machine's); with the calibration's
    summary, or the line saying why a stored one was refused."""
    if given:
        return {"rerun_kappa": kappa, "rerun_floor": floor, "rerun_term_source": "given"}
    cal, refused = load_calibration()
    if cal is None:
        return {"rerun_kappa": kappa, "rerun_floor": floor, "rerun_term_source": "default",
                **({"rerun_term_note": refused} if refused else {})}
    k, f = dict(kappa), dict(floor)
    if "latency" in cal.terms:
        k["latency"] = cal.terms["latency"]["kappa_pct"]
    if "throughput" in cal.terms:
        f["throughput"] = cal.terms["throughput"]["floor_pct"]
    return {"rerun_kappa": tuple(k.items()), "rerun_floor": tuple(f.items()),
            "rerun_term_source": "machine_calibration",
            "rerun_term_calibration": cal.summary()}
