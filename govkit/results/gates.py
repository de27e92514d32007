"""Gates for CI: turn a run's figures into a pass or a fail (`govkit bench --fail-on-flag`,
`--max-ratio`), so a pipeline can refuse a change that makes security cost more, or a run
too noisy to say.

A ratio gate compares the point estimate with the limit and says where the 95 % interval
lies: a ratio above the limit whose interval still reaches below it fails too (the estimate
is what the run found), but the message says the run could not tell them apart.
"""

from __future__ import annotations

import math

from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.results.flags import ANY_WARNING, FLAGS


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


def gate_failures(summary: list[dict], fail_on: set[str], max_ratios: dict[str, float]
                  ) -> list[str]:
    """One line per point that trips a gate (empty: the run passes)."""
    lines = []
    for row in summary:
        point = f"{row['profile']} {row['mode']} {row['size']} B"
        hit = sorted({f["code"] for f in row.get("flags", [])} & fail_on)
        if hit:
            lines.append(f"{point}: flagged {', '.join(hit)} (--fail-on-flag)")
        name = row["profile"].split("@", 1)[0]     # a crypto variant's arm: its profile's
        limit = max_ratios.get(name)
        vs = row.get("vs_none") or {}
        if limit is None or row["mode"] != "latency":
            continue
        ratio = vs.get("ratio")
        if ratio is None:
            lines.append(f"{point}: no ratio over none was measured, so --max-ratio "
                         f"{name}={limit:g} cannot pass")
        elif ratio > limit:
            ci = vs.get("ratio_ci95")
            where = ""
            if ci:
                where = (f" [{ci[0]:.2f}, {ci[1]:.2f}]"
                         + ("; its interval reaches below the limit: a longer run can tell"
                            if ci[0] <= limit else ""))
            lines.append(f"{point}: costs {ratio:.2f}× none{where}, above --max-ratio "
                         f"{name}={limit:g}")
    return lines
