"""The flag vocabulary: every flag a result can carry, in one table.

A flag marks a figure that looks wrong or is less sure than it seems. Its code is what
results.json records; its severity, short label (the terminal's and the report's flags
column) and one line of advice (what a user can do about it) live here and nowhere else,
so a new flag is one row. The reason, specific to the point, is written where the flag is
raised (govkit.results.summary).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True)
class Flag:
    code: str
    severity: str       # "warning": the figure may be wrong; "note": read it knowing this
    short: str          # the flags column
    advice: str         # what to do about it, one line ("" if nothing)


# `--fail-on-flag any`: every flag of severity "warning" (govkit.results.gates)
ANY_WARNING = "any"

FLAGS: dict[str, Flag] = {f.code: f for f in (
    Flag("wide_interval", "warning", "wide",
         "more rounds (or repeats) narrow it: a larger --budget (e.g. --budget 15m; for "
         "per-repeat runs also --max-repeat); --resume --out DIR continues this run"),
    Flag("rerun_spread", "note", "rerun ±",
         "more rounds cannot narrow what moves between runs: compare runs (govkit report A "
         "B); where the term is a default from another machine, `govkit calibrate` "
         "measures it where you run, and bench then carries it"),
    Flag("no_interval", "warning", "no CI", "run at least two repeats (--repeat)"),
    Flag("one_repeat", "warning", "1 repeat", "run at least two repeats (--repeat)"),
    Flag("faster_than_none", "warning", "FASTER?",
         "the machine was disturbed: close other programs and run again (a new --out, not "
         "--resume)"),
    Flag("no_measurable_overhead", "note", "≈none", ""),
    Flag("bimodal", "warning", "bimodal",
         "the machine switched between two speeds: run again on an idle machine"),
    Flag("trend", "warning", "trend",
         "a longer --warmup lets each repeat settle before it is measured"),
    Flag("failed_repeats", "warning", "failed",
         "each failed repeat and its error is listed (the terminal's FAILED lines, the "
         "report's failures); --resume --out DIR re-runs them"),
    Flag("stalled_seconds", "warning", "stalls",
         "the subscriber stalled: run again on an idle machine"),
    Flag("lost_samples", "warning", "lost",
         "samples were lost on a reliable topic: check the runner's output"),
    Flag("injected_loss", "note", "loss injected", ""),
    Flag("subsampled_interval", "note", "CI subsampled", ""),
    Flag("aa_excludes_one", "warning", "A/A≠1",
         "two identical arms differed: the machine, not security, moved by that much; run "
         "again on an idle machine"),
    Flag("aa_wide", "warning", "A/A wide",
         "the machine was too noisy for the target: a larger --budget adds rounds"),
    Flag("cost_model_misfit", "note", "not linear",
         "the cost does not grow linearly with size over the measured sizes: read the "
         "measured sizes near your own (--sizes adds more), the line only between them"),
    Flag("cpu_saturated", "warning", "CPU sat.",
         "some CPU slots could not deliver the offered rate (the machine was busy, or the "
         "profile saturates below it): run again on an idle machine"),
    Flag("wire_mismatch", "warning", "WIRE≠gov",
         "the profile's traffic does not match its governance (see the wire table and "
         "results.json's wire.profiles): fix the configuration; the figures are not the cost "
         "of the protection it claims"),
)}

# Flags a throughput point carries about its CPU-per-sample figure, not its rate: the
# report marks that figure, not the throughput ratio.
CPU_LANE_FLAGS = frozenset({"cpu_saturated"})


def flag(code: str, reason: str) -> dict:
    """A flag as results.json records it; KeyError for a code not in the table."""
    return {"code": code, "severity": FLAGS[code].severity, "reason": reason}


def short_label(code: str) -> str:
    known = FLAGS.get(code)
    return known.short if known else code      # a code from a newer govkit: shown as is


def advice(code: str) -> str:
    known = FLAGS.get(code)
    return known.advice if known else ""


def flag_advice(summary: list[dict], severity: str = "warning") -> list[str]:
    """One line per kind of flag of `severity` in the run, with what to do about it (a
    note without advice, such as "≈none", needs no line)."""
    found = Counter(f["code"] for r in summary for f in r["flags"]
                    if f["severity"] == severity)
    return [f"{code} on {n} point(s): {advice(code)}" for code, n in sorted(found.items())
            if severity == "warning" or advice(code)]
