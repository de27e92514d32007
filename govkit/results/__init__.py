"""What a run records and every figure computed from it: the store (`store`), the summary
(`summary`), perftest's CSVs (`perftest_csv`), statistics (`stats`), the paired rotation
analysis (`paired`), and the results.json checker (`check`).

May import: every stage up to govkit.runners.
"""

from govkit.common.faces import lazy_face

_EXPORTS = {
    "AA_ARM": "paired",
    "cost_models": "cost_model",
    "predict": "cost_model",
    "stored": "cost_model",
    "ANY_WARNING": "flags",
    "BASELINE_ARM": "paired",
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
    "short_label": "flags",
    "tail_p99": "figures",
    "variant_differences": "summary",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_face(__name__, _EXPORTS)
