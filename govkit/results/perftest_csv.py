"""The per-profile CSVs: perftest's file names and summary columns, one line per size and
repeat, computed from the raw rows like every other figure.

Why apart: it is a format for existing post-processing (perftest's and the seeds'), not a
statistic; its names and columns must stay as they are whatever the summary becomes.
"""

from __future__ import annotations

import csv
import io

from govkit.catalog.measures import MODES
from govkit.catalog.profiles import get_profile
from govkit.common.errors import GovkitError
from govkit.results import stats
from govkit.results.figures import FIGURES
from govkit.results.record import Repeat
from govkit.runners.network import Network, csv_prefix, csv_suffix


def csv_name(profile: str, mode: str, net: Network | None = None) -> str:
    """The seeds' file names, so existing post-processing keeps working: the transport in
    the prefix as the seeds write it (lat_udpv4_pub, lat_tcpv4_pub, lat_tlsv4_pub); a path
    other than loopback or injected loss appended (…_netns_loss1pct.csv), and a crypto
    variant last (…_rtps_encrypt_aes128.csv)."""
    base, _, variant = profile.partition("@")      # a crypto variant's arm: its own file
    alias = get_profile(base).alias
    if mode not in MODES:
        raise GovkitError(f"unknown benchmark mode {mode!r}; valid: latency, throughput")
    net = net or Network()
    tail = f"_{variant.replace('+', '_')}" if variant else ""
    return f"{csv_prefix(mode, net)}_unkeyed_rel_security_{alias}{csv_suffix(net)}{tail}.csv"


# Perftest's summary columns, then govkit's own. A perftest column the runner cannot fill
# with the quantity its name promises (ddsperf has no per-sample std or percentiles) stays
# empty; what ddsperf does give is in the extra, exactly named columns.
LATENCY_COLUMNS = (
    ("Length (Bytes)", None), ("Repeat", None), ("Latency Samples", None),
    ("Ave (us)", "mean_of_samples"), ("Std (us)", "std_of_samples"),
    ("Min (us)", "min"), ("Max (us)", "max"), ("50% (us)", "median_of_samples"),
    ("90% (us)", "p90_of_samples"), ("99% (us)", "p99_of_samples"),
    *((FIGURES[k].titled(ascii_units=True), k) for k in (
        "median_of_second_medians", "p90_median_of_seconds", "p99_median_of_seconds",
        "p99_worst_second", "std_of_second_means", "p99_9_of_samples",
        "median_of_slot_medians", "std_of_slot_medians", "cpu_pct_ping", "cpu_pct_pong")),
)
THROUGHPUT_COLUMNS = (
    ("Length (Bytes)", None), ("Repeat", None), ("Total Samples", None),
    ("Ave Samples/s", "mean_rate_sps"), ("Ave Mbps", "mean_mbps"), ("Lost Samples", "lost"),
    *((FIGURES[k].titled(), k) for k in ("stalled_seconds", "rexmit_bytes",
                                         "rexmit_share_pct", "median_of_slot_rates",
                                         "cpu_pct_ping", "cpu_pct_pong")),
)


# Perftest's own "CPU (%)": the CPU time of the process that writes the file (the
# publisher's for latency, the subscriber's for throughput: lat_…_pub, thr_…_sub) over the
# wall time times the machine's processors (perftest's CpuMonitor counts /proc/cpuinfo's),
# so 100 % is the whole machine; govkit's own columns beside it give % of one core.
PERFTEST_CPU = "CPU (%)"
_CPU_SIDE = {"latency": "cpu_pct_ping", "throughput": "cpu_pct_pong"}


def to_csv(rows: list[Repeat | dict], mode: str, processors: int | None = None) -> str:
    """Perftest-style summary columns, one line per size and repeat (repeat records, or
    results.json's records read as such); `processors` (the machine's, results.json's
    environment.cores) fills perftest's "CPU (%)"."""
    rows = [r if isinstance(r, Repeat) else Repeat.from_json(r) for r in rows]
    columns = LATENCY_COLUMNS if mode == "latency" else THROUGHPUT_COLUMNS
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow([title for title, _ in columns] + [PERFTEST_CPU])
    for r in sorted(rows, key=lambda r: (r.size, r.repeat)):
        figures, count = stats.repeat_figures(r)
        core_pct = figures.get(_CPU_SIDE[mode])
        whole = core_pct / processors if core_pct is not None and processors else None
        w.writerow([r.size, r.repeat, "" if count is None else count]
                   + [_csv_number(figures.get(key)) for _, key in columns[3:]]
                   + [_csv_number(whole)])
    return out.getvalue()


def _csv_number(v) -> str:
    if v is None:
        return ""
    return str(round(v, 3)) if isinstance(v, float) else str(v)
