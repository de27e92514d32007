"""Show a run: the HTML and Markdown report (`run`, `model`), charts (`plots`), the wire
section (`wire_section`), comparisons of runs (`compare`) and terminal tables
(`terminal`).

May import: every stage up to govkit.bench.
"""

from govkit.common.faces import lazy_face

_EXPORTS = {
    "compare_table": "terminal",
    "cost_table": "terminal",
    "costs_at": "run",
    "discovery_table": "terminal",
    "latency_table": "terminal",
    "leak_sentences": "terminal",
    "leak_table": "terminal",
    "network_table": "terminal",
    "noise_floor_table": "terminal",
    "throughput_table": "terminal",
    "variant_table": "terminal",
    "wire_table": "terminal",
    "write_report": "run",
    "write_reports": "compare",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_face(__name__, _EXPORTS)
