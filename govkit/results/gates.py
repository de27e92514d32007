"""Gates for CI: turn a run's figures into a pass or a fail (`govkit bench --fail-on-flag`,
`--max-ratio`), so a pipeline can refuse a change that makes security cost more, or a run
too noisy to say.

A ratio gate compares the point estimate with the limit and says where the 95 % interval
lies: a ratio above the limit whose interval still reaches below it fails too (the estimate
is what the run found), but the message says the run could not tell them apart.

The gates a run was given are one of its settings (`settings.gates`), and their verdict is
results.json's `gates`, recomputed from the summary at every save (`run_gates`) and again
by the report: the terminal, report.html, summary.md and results.json give one verdict,
in the same words (`verdict_line`, and one line per failure).
"""

from __future__ import annotations

import math

from govkit.catalog.measures import DISCOVERY
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.results.flags import ANY_WARNING, FLAGS
from govkit.results.point import PointSummary, as_points
from govkit.results.record import Run, as_run
from govkit.results.summary import flagged_points, noise_floor
from govkit.runners.network import DEFAULT


def parse_fail_on_flags(values: list[str] | None) -> set[str]:
    """Flag codes (comma lists, repeatable) or `any` (every warning-severity flag)."""
    codes: set[str] = set()
    for value in values or []:
        for code in (c.strip() for c in value.split(",")):
            if not code:
                continue
            if code == ANY_WARNING:
                codes |= {f.code for f in FLAGS.values() if f.severity == "warning"}
            elif code in FLAGS:
                codes.add(code)
            else:
                raise GovkitError(f"--fail-on-flag: unknown flag {code!r}; valid: "
                                  f"{ANY_WARNING}, {', '.join(FLAGS)}", EXIT_USAGE)
    return codes


def parse_max_ratios(values: list[str] | None, profiles: list[str]) -> dict[str, float]:
    """PROFILE=X (comma lists, repeatable): the most a profile's latency may cost over
    `none`, as a ratio. The profile must be one the run measures."""
    limits: dict[str, float] = {}
    for value in values or []:
        for item in (i.strip() for i in value.split(",")):
            if not item:
                continue
            name, sep, number = item.partition("=")
            try:
                limit = float(number) if sep else math.nan
            except ValueError:
                limit = math.nan
            if not (math.isfinite(limit) and limit > 0):
                raise GovkitError(f"--max-ratio {item!r}: expected PROFILE=X with X a "
                                  f"positive number, e.g. rtps_sign=1.5", EXIT_USAGE)
            if name not in profiles:
                raise GovkitError(f"--max-ratio {item!r}: {name!r} is not measured by this "
                                  f"run (profiles: {', '.join(profiles)})", EXIT_USAGE)
            limits[name] = limit
    return limits


def point_label(row: PointSummary) -> str:
    """How a gate's line names a summary row: `rtps_sign latency 32 B` (over its network
    when not udp lo), `rtps_sign discovery of 10 participants`, `A/A none latency 32 B`."""
    if row.mode == DISCOVERY:
        peers = row.discovery.peers if row.discovery and row.discovery.peers else "?"
        return f"{row.profile} discovery of {peers} participants"
    where = "" if row.network == DEFAULT else f" over {row.network.label}"
    return f"{row.profile} {row.mode} {row.size} B{where}"


def gate_failures(summary: list[dict], fail_on: set[str], max_ratios: dict[str, float]
                  ) -> list[str]:
    """One line per point that trips a gate, and per --max-ratio no latency point of its
    profile was measured for (empty: the run passes). `summary`: the run's rows and its
    A/A rows (govkit.results.summary.flagged_points)."""
    lines = []
    judged: set[str] = set()
    for row in as_points(summary):
        point = point_label(row)
        hit = sorted(row.codes & fail_on)
        if hit:
            lines.append(f"{point}: flagged {', '.join(hit)} (--fail-on-flag)")
        name = row.profile.split("@", 1)[0]     # a crypto variant's arm: its profile's
        limit = max_ratios.get(name)
        if limit is None or row.mode != "latency":
            continue
        judged.add(name)
        ratio = row.vs_none.ratio if row.vs_none else None
        if ratio is None:
            lines.append(f"{point}: no ratio over none was measured, so --max-ratio "
                         f"{name}={limit:g} cannot pass")
        elif ratio > limit:
            ci = row.vs_none.ratio_ci95
            where = ""
            if ci:
                where = (f" [{ci[0]:.2f}, {ci[1]:.2f}]"
                         + ("; its interval reaches below the limit: a longer run can tell"
                            if ci[0] <= limit else ""))
            lines.append(f"{point}: costs {ratio:.2f}× none{where}, above --max-ratio "
                         f"{name}={limit:g}")
    lines += [f"{name}: no latency point was measured, so --max-ratio {name}={limit:g} "
              "cannot pass" for name, limit in max_ratios.items() if name not in judged]
    return lines


def version_failures(versions: list[dict] | None, fail_on: set[str]) -> list[str]:
    """One line per row of a version axis's table (results.json's `versions`) whose flags
    trip --fail-on-flag: the ratio between the two installs is a figure of its own, with
    flags of its own, beside the points (each install's cost is a point, judged above)."""
    lines = []
    for r in versions or ():
        hit = sorted({f["code"] for f in r["flags"]} & fail_on)
        if hit:
            lines.append(f"{r['profile']} {r['mode']} {r['size']} B, {r['other']} / "
                         f"{r['baseline']}: flagged {', '.join(hit)} (--fail-on-flag)")
    return lines


def gate_settings(fail_on: set[str], max_ratios: dict[str, float]) -> dict | None:
    """results.json's settings.gates: the flag codes that fail the run (`any` expanded) and
    the ratio limits; None when no gate was given."""
    if not fail_on and not max_ratios:
        return None
    return {"fail_on_flag": sorted(fail_on), "max_ratio": dict(max_ratios)}


def run_gates(doc: Run | dict, summary: list[dict], overheads: dict | None = None,
              versions: list[dict] | None = None) -> dict | None:
    """results.json's `gates`: the run's gates (settings.gates) and their verdict over
    `summary`, the A/A rows (`overheads`: the summary's paired overheads, if at hand) and a
    version axis's rows (`versions`, govkit.results.versions), `passed` and one line per
    `failures`; None when the run has no gates."""
    run = as_run(doc)
    gates = run.settings.gates
    if not gates:
        return None
    floor = noise_floor(run, overheads) + noise_floor(run, overheads, mode="throughput")
    failures = gate_failures(flagged_points(summary, floor), set(gates["fail_on_flag"]),
                             gates["max_ratio"]) \
        + version_failures(versions, set(gates["fail_on_flag"]))
    return {"fail_on_flag": gates["fail_on_flag"], "max_ratio": gates["max_ratio"],
            "passed": not failures, "failures": failures}


def gates_asked(verdict: dict) -> str:
    """The gates as the command line gives them: `--max-ratio rtps_sign=2, --fail-on-flag
    any` (`any` when every warning is asked)."""
    warnings = sorted(f.code for f in FLAGS.values() if f.severity == "warning")
    codes = verdict["fail_on_flag"]
    asked = [f"--max-ratio {name}={limit:g}" for name, limit in verdict["max_ratio"].items()]
    if codes:
        shown = ANY_WARNING if sorted(codes) == warnings else ",".join(codes)
        asked.append(f"--fail-on-flag {shown}")
    return ", ".join(asked)


def verdict_line(verdict: dict) -> str:
    """The verdict in one line, the same in the terminal, report.html and summary.md."""
    n = len(verdict["failures"])
    if verdict["passed"]:
        return f"gates passed ({gates_asked(verdict)})"
    return f"gates FAILED ({n} reason{'s' if n > 1 else ''}; {gates_asked(verdict)})"
