"""One long-lived ping/pong pair of govkit's own programs (cyclone_perf, fastdds_perf -S),
driven through slots over its standard input, and the line protocol it answers in.

The protocol (govkit/runners/native/cyclone_perf.c says it in full; fastdds_perf.cpp speaks
the same): both sides print `ready T` once matched; ping takes `slot SIZE SETTLE_US
MEASURE_US` (latency) and `tput SIZE SETTLE_US MEASURE_US TAG` (throughput) and answers
with one `slot …` / `tslot …` line; pong answers `cpu` with `cpu_us U` and `count TAG` with
what it received of throughput slot TAG. The parsers below turn those lines into raw rows;
govkit.bench.rotation decides which pair gets which slot when.

A pair keeps its own scheduling policy: a latency slot runs under SCHED_FIFO where the run
may use it (`realtime`), a throughput or CPU slot normally scheduled, as ddsperf runs (a
real-time writer that never blocks would keep everything else off its CPU, govkit
included); the pair switches both processes (`sched`) only when a slot needs the other
policy, and each row says which it ran under. It numbers its own throughput slots' tags.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Callable

from govkit.catalog.measures import THROUGHPUT
from govkit.runners.processes import (
    LineReader,
    ProcessSpec,
    command_line,
    end_processes,
    process_placement,
    spawn,
)
from govkit.runners.readers import (
    is_reader_field,
    parse_latency_readers,
    parse_throughput_readers,
)

FIFO, NORMAL = "fifo", "normal"   # a pair's scheduling policy (`sched fifo|normal`)
SLOT_TIMEOUT_S = 15.0             # beyond the slot's own length
PEER_SIDE = "on the peer's side"   # in a refusal of the peer's files (cyclone_refusal)
REFUSAL_WAIT_S = 3.0              # for the other side's refusal, once one side failed


class PairFailed(Exception):
    """A pair's process died, refused or stopped answering; the message says which.
    `commands`: the pair's command lines, where the pair that failed is known."""
    commands: list[str] = []


class Pair:
    """One long-lived ping/pong pair: `name` is what it measures (the scheduler's arm),
    `label` how messages name it; `explain(env, stderr, domain)` maps a side's refusal to
    the file, the rule and the fix (the runner's RotatingRunner.explain_refusal);
    `realtime`: its specs start it under SCHED_FIFO, and its latency slots run so."""

    def __init__(self, name: str, label: str, instance: int, domain_id: int,
                 specs: list[ProcessSpec],
                 explain: Callable[[dict[str, str], str, int], str] | None = None, *,
                 realtime: bool = False):
        self.name, self.label, self.instance = name, label, instance
        self.domain_id, self.specs, self.explain = domain_id, specs, explain
        self.realtime = realtime
        self.procs: dict[str, subprocess.Popen] = {}
        self.reader: LineReader | None = None
        self.errs: dict[str, object] = {}
        self.ready_s: dict[str, float] = {}
        self.start_to_ready_s: float | None = None
        self.alive = False
        self.discarded_total = 0      # the reader's discarded bytes, as pong last said
        self.policy = FIFO if realtime else NORMAL   # what both processes run under now
        self.tags = 0                 # throughput slots so far (their tags: next_tag)

    @property
    def key(self) -> str:
        return f"{self.name}#{self.instance}"

    def start(self, timeout: float) -> None:
        """Start pong and ping and wait until both say they matched."""
        t0 = time.monotonic()
        for spec in self.specs:
            err = tempfile.TemporaryFile()
            self.errs[spec.role] = err
            self.procs[spec.role] = spawn(spec, stdin=subprocess.PIPE, stderr=err)
        self.reader = LineReader(self.procs)
        self.alive = True
        deadline = t0 + timeout
        for role in ("sub", "pub"):
            line = self._line(role, deadline)
            if not line.startswith("ready "):
                raise PairFailed(f"{self.label} pair {self.instance}: expected 'ready', "
                                 f"got {line[:80]!r}")
            self.ready_s[role] = float(line.split()[1])
        self.start_to_ready_s = time.monotonic() - t0

    def placement(self) -> dict:
        """Per role, the CPUs and scheduling policy its process really has (/proc): what
        the run claims (pinned, SCHED_FIFO) is checked, not assumed."""
        return {role: process_placement(p.pid) for role, p in self.procs.items()}

    def _line(self, role: str, deadline: float) -> str:
        return self.reader.line(
            role, deadline, lambda: PairFailed(self._why(role, "did not answer in time")),
            lambda status: PairFailed(self._why(role, f"exited with status {status}")))

    def _why(self, role: str, what: str) -> str:
        name = "ping" if role == "pub" else "pong"
        why = self._refusal()
        if not why or PEER_SIDE in why:   # the refused side may be saying why right now
            for proc in self.procs.values():
                try:
                    proc.wait(timeout=REFUSAL_WAIT_S)
                except subprocess.TimeoutExpired:
                    pass
            why = self._refusal()
        return (f"{self.label} pair {self.instance} (domain {self.domain_id}): {name} "
                f"{what}" + (f": {self.stderr_tail(role)}" if self.stderr_tail(role) else "")
                + (f"; {why}" if why else ""))

    def _refusal(self) -> str:
        """A side's refusal mapped to the file, the rule and the fix (else ""): a side
        refused over its own files first, then one refusing its peer's (a refused ping
        leaves pong waiting in vain, or refusing ping's handshake)."""
        if self.explain is None:
            return ""
        found = [f"{'ping' if s.role == 'pub' else 'pong'}: {w}" for s in self.specs
                 if (w := self.explain(s.env, self.stderr_lines(s.role, 50),
                                       self.domain_id))]
        found.sort(key=lambda w: PEER_SIDE in w)
        return found[0] if found else ""

    def stderr_tail(self, role: str, n: int = 3) -> str:
        """The last `n` lines of a side's stderr, on one line."""
        return " | ".join(self.stderr_lines(role, n).splitlines())

    def stderr_lines(self, role: str, n: int) -> str:
        """The last `n` lines of a side's stderr, one per line: Cyclone's refusal is read
        line by line (a local refusal after a remote one is still the local one)."""
        err = self.errs.get(role)
        if err is None:
            return ""
        err.seek(0)
        lines = err.read().decode("utf-8", "replace").strip().splitlines()
        return "\n".join(lines[-n:])

    def _send(self, role: str, command: str) -> None:
        try:
            self.procs[role].stdin.write(command.encode())
            self.procs[role].stdin.flush()
        except (BrokenPipeError, OSError):
            raise PairFailed(self._why(role, "is gone")) from None

    def pong_cpu_us(self) -> int:
        """The CPU time the pong process has used so far (it answers `cpu`)."""
        self._send("sub", "cpu\n")
        line = self._line("sub", time.monotonic() + SLOT_TIMEOUT_S)
        words = line.split()
        if len(words) != 2 or words[0] != "cpu_us" or not words[1].isdigit():
            raise PairFailed(self._why("sub", f"answered {line[:80]!r} to 'cpu'"))
        return int(words[1])

    def slot(self, size: int, settle_us: int, measure_us: int) -> dict:
        """One latency slot (SCHED_FIFO if the pair is `realtime`); the row also holds the
        CPU time the pong used during it (the ping's own, cpu_us, is in its slot line)."""
        self.use_policy(FIFO if self.realtime else NORMAL)
        before = self.pong_cpu_us()
        self._send("pub", f"slot {size} {settle_us} {measure_us}\n")
        deadline = time.monotonic() + (settle_us + measure_us) / 1e6 + SLOT_TIMEOUT_S
        row = parse_slot(self._line("pub", deadline))
        row["pong_cpu_us"] = self.pong_cpu_us() - before
        row["policy"] = self.policy
        return row

    def next_tag(self) -> int:
        """A throughput slot's tag (1 .. 255, in turn): pong tells a slot's samples from
        the previous slot's by it."""
        self.tags += 1
        return 1 + self.tags % 255

    def tslot(self, size: int, settle_us: int, measure_us: int, rate: float = 0) -> dict:
        """One throughput slot, normally scheduled: ping writes (as fast as it can, or
        paced at `rate` samples/s), pong counts; the row holds both sides' counts, CPU time
        and protocol counters, the arrivals per bin and the receive rate (samples after
        the first arrival over the time from the first arrival to the last)."""
        self.use_policy(NORMAL)
        tag = self.next_tag()
        before = self.pong_cpu_us()
        command = f"tput {size} {settle_us} {measure_us} {tag}" + (f" {rate:g}" if rate else "")
        self._send("pub", command + "\n")
        deadline = time.monotonic() + (settle_us + measure_us) / 1e6 + SLOT_TIMEOUT_S
        row = parse_tslot(self._line("pub", deadline))
        self._send("sub", f"count {tag}\n")
        row.update(parse_count(self._line("sub", time.monotonic() + SLOT_TIMEOUT_S), tag))
        if "discarded_total" in row:     # pong's running total, per slot here
            total = row.pop("discarded_total")
            row["discarded_bytes"] = total - self.discarded_total
            self.discarded_total = total
        row["mbps"] = round(row["rate_sps"] * size * 8 / 1e6, 4)    # payload, as ddsperf
        row["pong_cpu_us"] = self.pong_cpu_us() - before
        row["policy"] = self.policy
        return row

    def use_policy(self, policy: str) -> None:
        """Every thread of both processes to `policy` (FIFO: SCHED_FIFO 1, NORMAL), unless
        they already run under it."""
        if self.policy == policy:
            return
        for role in ("sub", "pub"):
            self._send(role, f"sched {policy}\n")
        for role in ("sub", "pub"):
            line = self._line(role, time.monotonic() + SLOT_TIMEOUT_S)
            if line != "sched ok":
                raise PairFailed(self._why(role, f"answered {line[:80]!r} to 'sched {policy}'"))
        self.policy = policy

    def commands(self) -> list[str]:
        return [command_line(s) for s in self.specs]

    def close(self) -> None:
        """End of input: both delete their participants and exit; killed if they do not."""
        end_processes(list(self.procs.values()), grace_s=3)
        for err in self.errs.values():
            err.close()
        self.alive = False


_NUMBERS = ("n", "settle_n", "mean", "min", "p50", "p90", "p99", "max", "cpu_us", "wall_us",
            "peers")


def parse_slot(line: str) -> dict:
    """A slot line (cyclone_perf, fastdds_perf -S) as a raw row (every field kept;
    percentiles in µs)."""
    words = line.split()
    if len(words) < 3 or words[0] != "slot":
        raise PairFailed(f"unexpected output from ping: {line[:80]!r}")
    row: dict = {"size": int(words[1])}
    per_reader: dict[str, str] = {}     # N readers: govkit.runners.readers
    it = iter(words[2:])
    for key, value in zip(it, it, strict=False):
        if is_reader_field(key):
            per_reader[key] = value
        elif key in _NUMBERS:
            row[key] = float(value) if "." in value else int(value)
        elif key == "tl":       # median of each 25 ms, settle included
            row["timeline"] = value
        elif key == "hist":     # kept as printed: bin:count,… (govkit.results.stats.histogram)
            row["hist"] = value
    row["count"] = row.get("n", 0)
    if per_reader:
        try:
            row.update(parse_latency_readers(per_reader))
        except (KeyError, ValueError):
            raise PairFailed(f"unexpected output from ping: {line[:80]!r}") from None
    return row


# ping's tslot fields: its counts and CPU, and the writer's protocol counters during the
# slot (Cyclone's statistics, as ddsperf -X prints them; absent from fastdds_perf's line)
_TSLOT_NUMBERS = ("sent", "settle_sent", "cpu_us", "wall_us", "peers", "rexmit_bytes",
                  "time_rexmit_ns", "throttle_count", "time_throttle_ns")


def parse_tslot(line: str) -> dict:
    """ping's line after a throughput slot: `tslot SIZE sent N settle_sent K cpu_us U
    wall_us W peers P` [`rexmit_bytes B time_rexmit_ns T throttle_count C
    time_throttle_ns H`]."""
    words = line.split()
    if len(words) < 2 or words[0] != "tslot" or len(words) % 2:
        raise PairFailed(f"unexpected output from ping: {line[:80]!r}")
    row: dict = {"size": int(words[1]), "mode": THROUGHPUT}
    it = iter(words[2:])
    for key, value in zip(it, it, strict=True):
        if key in _TSLOT_NUMBERS:
            row[key] = int(value)
    return row


def parse_count(line: str, tag: int) -> dict:
    """pong's answer to `count TAG`: what arrived, and the receive rate from it."""
    words = line.split()
    if words == ["count", str(tag), "missing"]:
        raise PairFailed(f"pong did not receive the end of throughput slot {tag} in time")
    if words[:2] != ["count", str(tag)] or len(words) % 2:
        raise PairFailed(f"unexpected answer from pong: {line[:80]!r}")
    given = dict(zip(words[2::2], words[3::2], strict=True))
    bins = given.pop("bins", None)
    per_reader = {k: given.pop(k) for k in list(given) if is_reader_field(k)}
    try:
        fields = {k: int(v) for k, v in given.items()}
        arrivals = [int(c) for c in bins.split(",")] if bins not in (None, "-") else []
        readers = parse_throughput_readers(per_reader) if per_reader else {}
    except (KeyError, ValueError):
        raise PairFailed(f"unexpected answer from pong: {line[:80]!r}") from None
    span_us = fields.get("span_us", 0)
    later = fields.get("later_n", 0)
    rate = later / (span_us / 1e6) if span_us > 0 and later > 0 else 0.0
    row = {"n": fields.get("n", 0), "later_n": later, "span_us": span_us,
           "lost": fields.get("lost", 0), "rate_sps": round(rate, 3),
           "count": fields.get("n", 0)}
    if "discarded_total" in fields:
        row["discarded_total"] = fields["discarded_total"]
    if bins is not None and fields.get("bin_us", 0) > 0:
        row["bin_us"] = fields["bin_us"]
        row["bins"] = arrivals
    row.update(readers)
    return row
