"""What a run records and every figure computed from it: the store (`store`), the summary
(`summary`), perftest's CSVs (`perftest_csv`), statistics (`stats`), the paired rotation
analysis (`paired`), and the results.json checker (`check`).

May import: every stage up to govkit.runners.
"""

from govkit.common.faces import lazy_face

_EXPORTS = {
    "AA_ARM": "paired",
    "ANY_WARNING": "flags",
    "BASELINE_ARM": "paired",
    "DISCOVERY_MODE": "discovery",
    "ESTIMATOR": "paired",
    "FIGURES": "figures",
    "FLAGS": "flags",
    "INTERVAL_METHOD": "stats",
    "Malformed": "check",
    "PAIRED_INTERVAL_METHOD": "paired",
    "RESULTS_NAME": "store",
    "ResultStore": "store",
    "SCHEMA": "check",
    "advice": "flags",
    "check_results": "check",
    "check_resumable": "store",
    "discovery_rows": "discovery",
    "flag_advice": "flags",
    "flagged_points": "summary",
    "gate_failures": "gates",
    "gate_settings": "gates",
    "json_excerpt": "check",
    "key_of": "summary",
    "load_line": "summary",
    "load_results": "store",
    "noise_floor": "summary",
    "parse_fail_on_flags": "gates",
    "parse_max_ratios": "gates",
    "point_key": "summary",
    "repeat_figures": "stats",
    "rotation_widths": "summary",
    "run_gates": "gates",
    "short_label": "flags",
    "tail_p99": "figures",
    "variant_differences": "summary",
    "verdict_line": "gates",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_face(__name__, _EXPORTS)
