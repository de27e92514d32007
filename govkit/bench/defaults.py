"""Default `govkit bench` settings (a light module: the CLI imports it at start-up).

Chosen from runs on a 2-core VM (docs/background/method.md; benchmarks/warmup.py for the
warm-up): a repeat costs about 1.3 s of start-up (discovery, the secure handshake and
ddsperf's idle first second) + warm-up + measured seconds, so seven profiles × three sizes
× three repeats of 1 s warm-up + 2 s measured take about 4.5 minutes; extra repeats of the
widest intervals fill what is left of --budget (counted from the start of the run; the
report after it takes a few seconds).
"""

from govkit.catalog.measures import CPU, LATENCY, THROUGHPUT

DEFAULT_SIZES = (32, 1024, 63000)   # payload bytes (--sizes)

DEFAULT_DURATION_S = 2
DEFAULT_WARMUP_S = 1
DEFAULT_REPEATS = 3
DEFAULT_MAX_REPEATS = 8
DEFAULT_TARGET_CI_PCT = 5.0
DEFAULT_BUDGET_S = 285
# With more than the three default sizes the budget grows with them, up to what lets the
# seeds' matrix (--sizes seeds: 8 sizes, 7 profiles) finish with its report in 8 minutes:
# at 285 s it stopped after 18 rounds (2026-12-02).
MAX_DEFAULT_BUDGET_S = 465


def default_budget(sizes: int) -> int:
    """--budget when not given: 285 s for up to three sizes, more for more (at most 465 s)."""
    return min(MAX_DEFAULT_BUDGET_S, max(DEFAULT_BUDGET_S, DEFAULT_BUDGET_S * sizes // 3))
# The runner `govkit bench` uses unless told: govkit's Cyclone program, latency by rotation
# (govkit.bench.rotation); its rounds stop when every overhead ratio's 95 % interval is within
# DEFAULT_ROTATION_TARGET_PCT, or at the budget.
DEFAULT_RUNNER = "cyclone"
# ... and with --transport/--net/--hosts/--loss-rate, which only ddsperf takes.
DEFAULT_NETWORK_RUNNER = "ddsperf"
DEFAULT_ROTATION_TARGET_PCT = 2.0
# Measured part of a slot. Shorter slots put each secured slot's `none` neighbours closer in
# time, where the VM's speed has had less time to change: on 2026-12-02, runs of three profiles
# alternated back to back reached ±2 % on every secured ratio in 92 and 107 s with 30 ms slots,
# while 100 ms slots left the heaviest at ±3.2-5.1 % after 110 s (same ratios within 2.1 %,
# same levels within 2 %; docs/background/method.md, "Shorter slots").
DEFAULT_SLOT_MS = 30
# Throughput slots (--rotate-throughput) last at least this long: a burst's start and its
# acknowledgement wait weigh more in a shorter slot, and 100 ms is what was measured against
# ddsperf (docs/background/method.md, "Fidelity with the spinners, and throughput").
MIN_THROUGHPUT_SLOT_MS = 100
# CPU slots (throughput written at a fixed rate, as RTI's -cpu measures): CPU time over the
# samples written, exact over any length; this is the shortest that still holds hundreds of
# samples at the large sizes' rates.
DEFAULT_CPU_SLOT_MS = 50
# CPU slots offer one fixed rate per size, as RTI Perftest's -cpu is read at a rate the user
# fixes: CPU per sample depends on the rate (the writer batches more at higher rates), so a
# rate measured per run made two runs' figures disagree by 8 % (46,000 against 51,000
# samples/s, 2026-12-04). The rate is the 1-2-5 step at or below both caps; a machine whose
# slowest arm cannot sustain it at twice that in its warm-up gets a lower step, and is told.
CPU_RATE_MAX_SPS = 20_000            # samples/s, small payloads
CPU_RATE_MAX_BYTES_PER_S = 64_000_000  # payload bytes/s, large payloads (1000/s at 63000 B)
# What a rerun moves a ratio by, beyond its own rounds (govkit.results.paired.RunTerm), in %
# (log scale): latency ratios move together, by kappa · (1 - 1/r) (the share of the work
# security adds changes from run to run); throughput ratios by about `floor` whatever the
# profile. Measured on the 2-core VM with the Cyclone runner by benchmarks/calibration.py
# (docs/background/method.md, 2026-12-05): eight default runs back to back gave kappa
# 1.37 % at 06:45 and 2.64 % at 07:45 (the host's state drifts; runs an hour apart need
# about 3 %); on 2026-12-07 an AMD EPYC VM's eight runs at 22:14-22:53, others using up to
# 0.7 of a CPU, needed 4.5 % (var(z) 2.37 with 2.6, 1.21 with 4.5;
# tests/data/runs/amd-epyc-2026-12-07-late). A default must cover what a rerun shows where
# nothing was measured, so it is the largest a batch needed; `govkit calibrate` measures a
# machine's own, and --rerun-kappa and --rerun-floor MODE=PCT give one by hand. CPU per
# sample at a fixed rate needed neither.
RERUN_KAPPA_PCT = {LATENCY: 4.5, THROUGHPUT: 0.0, CPU: 0.0}
RERUN_FLOOR_PCT = {LATENCY: 0.0, THROUGHPUT: 1.5, CPU: 0.0}
DEFAULT_SETTLE_MS = 10         # round trips sent before this are kept apart
DEFAULT_INSTANCES = 3          # process pairs per arm (paired.InstanceTerm: fewer, wider)
DEFAULT_MIN_ROUNDS = 6


def budget_note(spent_s: float, budget_s: float, left_s: float | None = None) -> str:
    """The end of a progress line: the budget spent, and what is left (issue 23: an ETA
    piped or not). `left_s`: the planned work's estimate ("about"); None when the run goes
    on until its intervals are narrow enough, so the budget is all that is known ("at
    most")."""
    rest = max(0.0, budget_s - spent_s)
    left = "at most" if left_s is None else "about"
    return (f"({spent_s:.0f} s of the {budget_s:.0f} s budget; {left} "
            f"{rest if left_s is None else min(left_s, rest):.0f} s left)")


def step_at_or_below(x: float) -> float:
    """The largest of 1, 2, 5 × 10^k not above `x` (x > 0): rates a reader recognises, the
    same from one run to the next."""
    import math

    k = math.floor(math.log10(x))
    for m in (5, 2, 1):
        if m * 10.0 ** k <= x * (1 + 1e-12):
            return m * 10.0 ** k
    return 10.0 ** (k - 1) * 5


def cpu_rate(size: int) -> float:
    """The offered rate of CPU slots at `size` payload bytes (samples/s), before the
    machine's warm-up is consulted (govkit.bench.rotation.offered_rates)."""
    return step_at_or_below(min(CPU_RATE_MAX_SPS, CPU_RATE_MAX_BYTES_PER_S / max(1, size)))
