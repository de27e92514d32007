"""One writer, N readers: the readers count a pair is started with, and the per-reader
figures its programs print.

govkit's two programs (cyclone_perf, fastdds_perf -S) take a readers count: pong then forks
that many reader processes, each a participant of its own, and relays for them
(govkit/runners/native/readers.h); ping waits for all of them, sends the next ping once
every reader answered, and times each reader's round trip apart. With 1 reader nothing
changes, not a byte of what the programs print.

A latency slot line then carries, after its usual fields (per ping: the slowest reader's
one-way latency, i.e. when the last reader had the sample), `readers N` and comma lists
`reader_n`, `reader_mean`, `reader_min`, `reader_p50`, `reader_p90`, `reader_p99`,
`reader_max` (each reader's one-way latency, round trip / 2, over its round trips sent
after the settle time). A throughput `count` answer carries the slowest reader's counts
(the lowest receive rate: samples/s delivered to every reader) and comma lists
`reader_n`, `reader_later_n`, `reader_span_us`, `reader_lost`. The parsers here turn those
into a row's `readers` and `per_reader` (a dict per reader) plus the summaries a bench
reports: the median over readers of each reader's median latency and the slowest
reader's (`reader_p50_median`, `reader_p50_slowest`), and each reader's receive rate.
"""

from __future__ import annotations

from statistics import median

from govkit.common.errors import GovkitError

MAX_READERS = 64          # READERS_MAX in readers.h: ping's answered-readers bit mask
LATENCY_FIELDS = ("n", "mean", "min", "p50", "p90", "p99", "max")
THROUGHPUT_FIELDS = ("n", "later_n", "span_us", "lost")


def check_readers(readers: int, what: str = "readers") -> int:
    """`readers` if the programs take it (1 .. MAX_READERS), else a usage error naming
    `what` (an option, as the user gave it)."""
    if not isinstance(readers, int) or isinstance(readers, bool) \
            or not 1 <= readers <= MAX_READERS:
        raise GovkitError(f"{what} {readers!r}: use 1 .. {MAX_READERS}")
    return readers


def is_reader_field(key: str) -> bool:
    return key == "readers" or key.startswith("reader_")


def _per_reader(given: dict[str, str], fields: tuple[str, ...]) -> tuple[int, list[dict]]:
    """`readers` and each `reader_F` comma list of a line as one dict per reader; ValueError
    when a list is missing, has another length, or holds a non-number."""
    n = int(given["readers"])
    if not 1 <= n <= MAX_READERS:
        raise ValueError(f"readers {n}")
    rows: list[dict] = [{} for _ in range(n)]
    for f in fields:
        values = given[f"reader_{f}"].split(",")
        if len(values) != n:
            raise ValueError(f"reader_{f} has {len(values)} values for {n} readers")
        for row, v in zip(rows, values, strict=True):
            row[f] = float(v) if "." in v else int(v)
    return n, rows


def parse_latency_readers(given: dict[str, str]) -> dict:
    """A slot line's per-reader fields (as printed) as row fields."""
    n, rows = _per_reader(given, LATENCY_FIELDS)
    measured = [r["p50"] for r in rows if r["n"] > 0]
    out: dict = {"readers": n, "per_reader": rows}
    if measured:
        out["reader_p50_median"] = median(measured)
        out["reader_p50_slowest"] = max(measured)
    return out


def parse_throughput_readers(given: dict[str, str]) -> dict:
    """A count answer's per-reader fields (as printed) as row fields; each reader's receive
    rate as the row's own (samples after the first arrival over the time from the first
    arrival to the last)."""
    n, rows = _per_reader(given, THROUGHPUT_FIELDS)
    for r in rows:
        r["rate_sps"] = round(r["later_n"] / (r["span_us"] / 1e6), 3) \
            if r["span_us"] > 0 and r["later_n"] > 0 else 0.0
    return {"readers": n, "per_reader": rows}


# ------------------------------------------------- a bench's arms and points at N readers

# `govkit bench --readers 1,4`: at N > 1 readers every arm, `none` and the A/A arm
# included, is named `ARM@Nreaders` (a point of its own, as a crypto variant's arm is
# `PROFILE@VARIANT`); at 1 reader the arm keeps its plain name, so a run at 1 reader is
# figure for figure, key for key, a run without --readers.
READERS_SUFFIX = "readers"


def readers_arm(arm: str, readers: int) -> str:
    """The arm (or point) name of `arm` at `readers` readers."""
    return arm if readers == 1 else f"{arm}@{readers}{READERS_SUFFIX}"


def split_readers_arm(name: str) -> tuple[str, int]:
    """(the arm's name at 1 reader, its readers count) of an arm or point name: inverse of
    readers_arm; a name without the suffix is at 1 reader."""
    head, sep, tail = name.rpartition("@")
    if sep and tail.endswith(READERS_SUFFIX):
        count = tail[:-len(READERS_SUFFIX)]
        if count.isascii() and count.isdigit() and int(count) > 1:
            return head, int(count)
    return name, 1


def parse_readers_list(text: str) -> list[int]:
    """`--readers 1,2,4,8`: the reader counts, in the order given, each once; GovkitError
    (a usage error, one line) when one is not a whole number 1 .. MAX_READERS."""
    counts = []
    for item in (x.strip() for x in str(text).split(",")):
        if not (item.isascii() and item.isdigit()) or not 1 <= int(item) <= MAX_READERS:
            raise GovkitError(f"invalid --readers {text!r}: use reader counts 1 .. "
                              f"{MAX_READERS}, e.g. 1,2,4,8")
        counts.append(int(item))
    return list(dict.fromkeys(counts))
