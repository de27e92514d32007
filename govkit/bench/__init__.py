"""The experiment: its options (`options`), the machine (`machine`), one repeat (`repeat`),
the schedule (`schedule`), the captured wire phase (`wire_phase`), latency by rotation
(`rotation`), the machine's load (`loadwatch`), points made from governance files
(`governance_files`), and the defaults (`defaults`, light: the CLI reads it at start-up).

May import: every stage up to govkit.results and govkit.generate.
"""

from govkit.common.faces import lazy_face

_EXPORTS = {
    "BenchOptions": "options",
    "DEFAULT_BUDGET_S": "defaults",
    "DEFAULT_DURATION_S": "defaults",
    "DEFAULT_INSTANCES": "defaults",
    "DEFAULT_MAX_REPEATS": "defaults",
    "DEFAULT_MIN_ROUNDS": "defaults",
    "DEFAULT_PEERS": "defaults",
    "DEFAULT_REPEATS": "defaults",
    "DEFAULT_ROTATION_TARGET_PCT": "defaults",
    "DEFAULT_RUNNER": "defaults",
    "DEFAULT_SETTLE_MS": "defaults",
    "DEFAULT_SLOT_MS": "defaults",
    "DEFAULT_TARGET_CI_PCT": "defaults",
    "DEFAULT_WARMUP_S": "defaults",
    "DiscoverySettings": "discovery",
    "MAX_DEFAULT_BUDGET_S": "defaults",
    "RotationSettings": "rotation",
    "bench_profiles": "governance_files",
    "default_budget": "defaults",
    "governance_points": "governance_files",
    "parse_budget": "options",
    "parse_modes": "options",
    "parse_sizes": "options",
    "run_bench": "schedule",
    "wire_check": "wire_phase",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_face(__name__, _EXPORTS)
