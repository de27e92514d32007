"""The experiment: options and schedule (`schedule`), latency by rotation (`rotation`),
the machine's load (`loadwatch`), and the defaults (`defaults`, light: the CLI reads it at
start-up).

May import: every stage up to govkit.results and govkit.generate.
"""

from govkit.common.faces import lazy_face

_EXPORTS = {
    "BenchOptions": "schedule",
    "DEFAULT_BUDGET_S": "defaults",
    "DEFAULT_DURATION_S": "defaults",
    "DEFAULT_INSTANCES": "defaults",
    "DEFAULT_MAX_REPEATS": "defaults",
    "DEFAULT_MIN_ROUNDS": "defaults",
    "DEFAULT_REPEATS": "defaults",
    "DEFAULT_ROTATION_TARGET_PCT": "defaults",
    "DEFAULT_SETTLE_MS": "defaults",
    "DEFAULT_SLOT_MS": "defaults",
    "DEFAULT_TARGET_CI_PCT": "defaults",
    "DEFAULT_WARMUP_S": "defaults",
    "RotationSettings": "rotation",
    "parse_budget": "schedule",
    "parse_modes": "schedule",
    "parse_sizes": "schedule",
    "run_bench": "schedule",
    "wire_check": "schedule",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_face(__name__, _EXPORTS)
