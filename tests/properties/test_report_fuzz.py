"""Property-based fuzzing of `govkit report` with mutated results.json files (issue 23,
item 11): whatever value sits at whatever place, the command writes its report (exit 0) or
refuses the file in one line naming it (exit 2); never an internal error (exit 3), never a
traceback, never more than a few seconds.

Each example takes a real run's results.json (tests/data/report, and the rotating run in
tests/data/report), walks down to a random place in it and replaces the value there with a
random JSON value (null, booleans, integers up to 10^4000, floats up to 1e308 and down to
5e-324, strings, lists, objects, and the words the readers look for) or deletes it. The
budget is fixed and the examples are derandomized, so every run tries the same files.
"""

from __future__ import annotations

import copy
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from govkit.cli.main import app

TESTS = Path(__file__).parent.parent
FIXTURES = {"full": TESTS / "data/report/full/results.json",
            "throughput": TESTS / "data/report/throughput/results.json",
            "wire": TESTS / "data/report/wire/results.json",
            "rotation": TESTS / "data/report/rotation/results.json"}
DOCS = {name: json.loads(path.read_text()) for name, path in FIXTURES.items()}
CPU_LIMIT_S = 5.0

# Values that meant something to a reader once: enum words, formats, edge numbers.
WORDS = ["", "ok", "failed", "latency", "throughput", "udp", "tcp", "tls", "lo", "netns",
         "hosts", "none", "none:aa", "rtps_sign", "latency-per-second", "latency-slots",
         "latency-summary", "throughput-per-second", "throughput-summary", "1:2,3:4",
         "99999:1", "x:y", "match", "mismatch", "<script>alert(1)</script>", "a|b\nc"]
NUMBERS = [0, -1, 1, 2, 10 ** 4000, -10 ** 4000, 10 ** 400, 2 ** 63, 2 ** 64 + 1, 1e308,
           -1e308, 1e300, 5e-324, 1e-300, 1e-10, 0.5, -0.5, 1e12, 1e13, 1e18, 100, 101]
KEYS = ["profile", "mode", "size", "status", "raw", "format", "rows", "summary", "count",
        "p50", "p99", "mean", "transport", "path", "loss_pct", "round", "arm", "hist",
        "observed", "user", "messages", "rtps"]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.sampled_from(NUMBERS),
                    st.floats(allow_nan=False, allow_infinity=False),
                    st.text(max_size=12), st.sampled_from(WORDS))
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=3),
    max_leaves=6)


class _Delete:
    def __repr__(self) -> str:
        return "DELETE"


DELETE = _Delete()     # the mutation that removes the value instead


@st.composite
def mutations(draw) -> tuple[str, list, Any]:
    """(fixture, path, new value or DELETE): a random place in a real results.json, and
    what to put there. (Drawn apart from the document, so a failing example is short.)"""
    name = draw(st.sampled_from(sorted(DOCS)))
    node: Any = DOCS[name]
    path: list = []
    # walk down: at each level go into a random child, or stop there (1 in 4)
    while isinstance(node, dict | list) and node and (not path or draw(st.integers(0, 3))):
        key = draw(st.sampled_from(list(node) if isinstance(node, dict)
                                   else range(len(node))))
        path.append(key)
        node = node[key]
    return name, path, DELETE if draw(st.integers(0, 5)) == 0 else draw(VALUES)


def mutated(name: str, path: list, value: Any) -> dict:
    doc = copy.deepcopy(DOCS[name])
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if value is DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc


FUZZ = settings(max_examples=200, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(mutations())
def test_report_on_a_mutated_results_json(mutation):
    name, path, value = mutation
    doc = mutated(name, path, value)
    with tempfile.TemporaryDirectory() as d:
        source = Path(d) / "results.json"
        source.write_text(json.dumps(doc))
        cpu = time.process_time()
        result = CliRunner().invoke(app, ["report", d])
        cpu = time.process_time() - cpu
        where = f"{name} at {path}"
        assert result.exception is None or isinstance(result.exception, SystemExit), \
            (where, repr(result.exception))
        output = result.stdout + result.stderr
        assert "Traceback" not in output and "internal error" not in output, (where, output)
        assert result.exit_code in (0, 2), (where, result.exit_code, output[-1500:])
        if result.exit_code == 2:
            assert result.stderr.count("\n") == 1, (where, result.stderr)
            assert result.stderr.startswith(f"govkit: {source}: "), (where, result.stderr)
        else:
            assert (Path(d) / "summary.md").is_file() and (Path(d) / "report.html").is_file()
        assert cpu <= CPU_LIMIT_S, (where, f"{cpu:.2f} s of CPU")
