"""What state the CPUs were in behind a run's absolute latencies, in words, and by how
much idle CPUs moved them on the machine that made the run, where that was measured: one
sentence, the same in the terminal, report.html, summary.md and results.json
(`absolute_latency`).

Why: the µs depend on whether the measured CPUs may halt when idle, by an amount and in a
direction that are the machine's own (issue 46: a bare ddsperf pair read 1.9x govkit's µs
on a 2-core KVM guest; `--allow-idle` read faster on an AMD EPYC VM). govkit keeps them
awake unless told (settings.cpus_kept_awake); `govkit calibrate` measures how far idle
moves them on its machine (govkit.bench.idle_vs_awake), and a run made on the same machine
identity records that in environment.idle_vs_awake. A figure is said only from there;
where the run records none, the sentence says it was not measured and how to measure it,
and never gives another machine's figure.
"""

from __future__ import annotations

from collections.abc import Mapping

from govkit.results.record import Run, as_run

AWAKE = "CPUs kept awake"
IDLE = "CPUs allowed to idle"
AWAKE_WHAT = ("absolute µs are measured with each measured CPU kept out of idle halt (a "
              "lowest-priority spinner), not as most deployments run")
IDLE_WHAT = ("absolute µs are measured with the CPUs allowed to halt when idle "
             "(--allow-idle): every wake-up's cost is in them")
NOT_MEASURED = ("how far idle CPUs move them is not measured on the machine that made this "
                "run: `govkit calibrate` there measures it, and runs after it state it")


def measured_words(m: Mapping) -> str | None:
    """The measurement (environment.idle_vs_awake) in words; None when it is not one."""
    try:
        ratio, size = float(m["ratio"]), int(m["size"])
        idle_us, awake_us = float(m["idle_us"]), float(m["awake_us"])
    except (KeyError, TypeError, ValueError):
        return None
    ci = m.get("ratio_ci95")
    interval = (f" [{float(ci[0]):.2f}, {float(ci[1]):.2f}]"
                if isinstance(ci, list) and len(ci) == 2 else "")
    prot = m.get("protected") if isinstance(m.get("protected"), Mapping) else {}
    ratios = ""
    if isinstance(prot.get("awake"), int | float) and isinstance(prot.get("idle"), int | float):
        ratios = (f"; {prot.get('profile')}'s overhead {prot['idle']:.2f}× idle, "
                  f"{prot['awake']:.2f}× awake")
    runs = m.get("runs_per_state")
    return (f"idle reads {ratio:.2f}×{interval} of awake on the machine that made this run "
            f"(the `none` pair's median one-way latency at {size} B: {idle_us:.1f} µs idle, "
            f"{awake_us:.1f} µs awake{ratios}), measured {str(m.get('created', '?'))[:10]} "
            f"by govkit calibrate ({runs} run(s) of each, interleaved)")


def latency_state(doc: Run | dict) -> dict | None:
    """results.json's `absolute_latency`: the CPUs' state ("kept awake" / "allowed to
    idle"), the sentence, and whether idle's effect was measured on the run's machine;
    None for a run that does not record the state (before 2026-12-02)."""
    run = as_run(doc)
    awake = run.settings.items.get("cpus_kept_awake")
    if not isinstance(awake, bool):
        return None
    m = run.environment.get("idle_vs_awake")
    said = measured_words(m) if isinstance(m, Mapping) else None
    label = AWAKE if awake else IDLE
    note = f"{label}: {AWAKE_WHAT if awake else IDLE_WHAT}; {said or NOT_MEASURED}"
    return {"cpus": label, "idle_vs_awake_measured": said is not None, "note": note}


def latency_state_note(doc: Run | dict) -> str:
    """The sentence alone ("" for a run that does not record the state)."""
    state = latency_state(doc)
    return state["note"] if state else ""
