"""Default `govkit bench` settings (a light module: the CLI imports it at start-up).

Chosen from runs on a 2-core VM (README, "Benchmarking"): seven profiles × three sizes ×
three repeats of 1 s warm-up + 2 s measured fit in about four minutes, leaving the rest of
a five-minute run for extra repeats of the widest intervals.
"""

DEFAULT_DURATION_S = 2
DEFAULT_WARMUP_S = 1
DEFAULT_REPEATS = 3
DEFAULT_MAX_REPEATS = 8
DEFAULT_TARGET_CI_PCT = 5.0
DEFAULT_BUDGET_S = 270
