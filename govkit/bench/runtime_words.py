"""What the runtimes said about security during a run, into its results.json: the events
of every security log in the run's configuration directory (govkit.runners.
security_events), as `security_events`, read by report.html's "What the runtimes said"
and by anyone reading the file. Added once the run is over (the logs are complete then),
results.json rewritten atomically."""

from __future__ import annotations

import json
from pathlib import Path

from govkit.common.fsutil import write_atomic
from govkit.results.store import RESULTS_NAME, load_results
from govkit.runners.security_events import collect

CONFIG_DIR = "config"      # govkit.bench.schedule: the run's configuration files and logs


def add_security_events(out: Path | None, doc: dict | None = None) -> list[dict]:
    """Read the run directory's security logs into its results.json (`doc`, the run's
    document as written, is updated too); [] and nothing written when there are none."""
    if out is None:
        return []
    events = [e.to_json() for e in collect(Path(out) / CONFIG_DIR, Path(out))]
    path = Path(out) / RESULTS_NAME
    if not events or not path.is_file():
        return events
    stored = load_results(path)
    stored["security_events"] = events
    write_atomic(path, json.dumps(stored, indent=2) + "\n")
    if doc is not None:
        doc["security_events"] = events
    return events
