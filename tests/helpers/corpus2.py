"""../shared/reference/corpus2: 145 real governance and permissions documents from 13
repositories, with the CAs that signed them and verdicts computed with lxml and OpenSSL
(not with govkit): INDEX.tsv, verdicts.json (see the corpus's README.md)."""

from __future__ import annotations

import contextlib
import csv
import json
import signal
from pathlib import Path

# Every document gets this long per command; real ones take well under a second.
SECONDS_PER_FILE = 10


def corpus2_dir(shared: Path) -> Path:
    return shared / "reference" / "corpus2"


def index_rows(shared: Path) -> list[dict[str, str]]:
    with (corpus2_dir(shared) / "INDEX.tsv").open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def verdicts(shared: Path) -> dict[str, dict]:
    data = json.loads((corpus2_dir(shared) / "verdicts.json").read_text(encoding="utf-8"))
    return {v["file"]: v for v in data}


@contextlib.contextmanager
def deadline(what: str, seconds: int = SECONDS_PER_FILE):
    """Fail (TimeoutError) instead of hanging when one file takes too long."""
    def expired(signum, frame):
        raise TimeoutError(f"{what}: still running after {seconds} s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
