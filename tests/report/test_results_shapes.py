"""`govkit report` on results.json whose fields have the wrong shape (issue 23, item 11):
refused by the checker (govkit.results.check) with one line naming the file and the first
problem, exit 2, never an internal error (exit 3) from deep inside the summary or the report.

One case per class: a field the readers hash or format that is a list or an object, a
number too large for a float (JSON allows 10^4000; `1e400` parses as infinity), a
measured value whose sums, ratios or squares would overflow, a count that is negative, null
where a reader takes the value as given, and the sections beside the raw rows (rotation,
load, wire) that the headline and the wire part read.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from govkit.cli.main import app
from govkit.results.check import Malformed, check_results

DATA = Path(__file__).parent.parent / "data" / "report"
ROTATION = Path(__file__).parents[1] / "data" / "report" / "rotation" / "results.json"
FIXTURES = {"full": DATA / "full/results.json", "wire": DATA / "wire/results.json",
            "throughput": DATA / "throughput/results.json", "rotation": ROTATION}
DOCS = {name: json.loads(path.read_text()) for name, path in FIXTURES.items()}


def ok(doc: dict, i: int = 0) -> dict:
    return [r for r in doc["results"] if r["status"] == "ok"][i]


def slot(doc: dict, i: int = 3) -> dict:
    return doc["rotation"]["slots"][i]


def observed(doc: dict) -> dict:
    return doc["wire"]["points"][0]["observed"]


# (id, fixture, mutation, what the line says)
CASES = [
    ("transport list", "full", lambda d: ok(d).update(transport=["udp"]),
     "results[0].transport: expected a string, got [\"udp\"]"),
    ("transport object", "full", lambda d: ok(d).update(transport={"udp": 1}),
     "results[0].transport: expected a string, got {\"udp\": 1}"),
    ("transport unknown", "full", lambda d: ok(d).update(transport="quic"),
     "results[0].transport: expected one of udp, tcp, tls, got \"quic\""),
    ("path list", "wire", lambda d: ok(d).update(path=["lo"]),
     "results[0].path: expected a string, got [\"lo\"]"),
    ("path null", "wire", lambda d: ok(d).update(path=None),
     "results[0].path: expected a string, got null"),
    ("loss list", "wire", lambda d: ok(d).update(loss_pct=[1]),
     "results[0].loss_pct: expected a number, got [1]"),
    ("loss object", "full", lambda d: ok(d).update(loss_pct={}),
     "results[0].loss_pct: expected a number, got {}"),
    ("loss over 100", "full", lambda d: ok(d).update(loss_pct=150.5),
     "results[0].loss_pct: expected a number from 0 to 100, got 150.5"),
    ("size 10^4000", "full", lambda d: ok(d).update(size=10 ** 4000),
     "results[0].size: an integer of 4001 digits is beyond any number a run records"),
    ("size negative", "full", lambda d: ok(d).update(size=-1),
     "results[0].size: expected an integer from 0 to 2147483647, got -1"),
    ("size too large", "full", lambda d: ok(d).update(size=2 ** 40),
     "results[0].size: expected an integer from 0 to 2147483647, got 1099511627776"),
    ("settings size", "full", lambda d: d["settings"]["sizes"].append(2 ** 62),
     "settings.sizes[2]: expected an integer from 0 to 2147483647"),
    ("repeat null", "full", lambda d: ok(d).update(repeat=None),
     "results[0].repeat: expected an integer, got null"),
    ("repeat huge", "full", lambda d: ok(d).update(repeat=10 ** 18),
     "results[0].repeat: expected an integer from 0 to 1000000000"),
    ("order list", "full", lambda d: ok(d).update(order=[1]),
     "results[0].order: expected an integer, got [1]"),
    ("row value 1e300", "full", lambda d: ok(d)["raw"]["rows"][1].update(p50=1e300),
     "results[0].raw.rows[1].p50: 1e+300 is beyond any number a run records"),
    ("row value overflows sums", "full", lambda d: ok(d)["raw"]["rows"][1].update(mean=1e18),
     "results[0].raw.rows[1].mean: expected 0 or a number from 1e-09 to 1e+12, got 1e+18"),
    ("row value tiny", "full", lambda d: ok(d)["raw"]["rows"][1].update(p50=5e-324),
     "results[0].raw.rows[1].p50: expected 0 or a number from 1e-09 to 1e+12, got 5e-324"),
    ("retransmitted bytes", "throughput",
     lambda d: [r for r in d["results"] if r["mode"] == "throughput"][0]["raw"]["rows"][0]
     .update(rexmit_bytes="many"), "raw.rows[0].rexmit_bytes: expected a number"),
    ("warm-up rows huge", "full", lambda d: ok(d).update(warmup_rows=10 ** 18),
     "results[0]: warmup_rows 1000000000000000000 and measured_rows 2: expected at most"),
    ("slots in results", "full", lambda d: ok(d)["raw"].update(format="latency-slots"),
     "results[0].raw.format: 'latency-slots' rows are a rotating run's slots"),
    ("settings null", "full", lambda d: d.update(settings=None),
     "settings: expected an object, got null"),
    ("wire counter 10^400", "wire", lambda d: observed(d)["user"]["rtps"].update(none=10 ** 400),
     "wire.points[0].observed.user.rtps.none: an integer of 401 digits is beyond"),
    ("wire counter negative", "wire", lambda d: observed(d)["user"]["rtps"].update(gcm=-81558),
     "wire.points[0].observed.user.rtps.gcm: expected a count (an integer from 0 to 1e+15)"),
    ("wire counter fraction", "wire", lambda d: observed(d)["user"].update(messages=0.5),
     "wire.points[0].observed.user.messages: expected a count"),
    ("rotation list", "rotation", lambda d: d.update(rotation=[1]),
     "rotation: expected an object, got [1]"),
    ("rotation pairs null", "rotation", lambda d: d["rotation"].update(pairs=None),
     "rotation.pairs: expected a list, got null"),
    ("rotation slot size", "rotation", lambda d: slot(d).update(size=[32]),
     "rotation.slots[3].size: expected an integer, got [32]"),
    ("rotation slot arm", "rotation", lambda d: slot(d).update(arm={"a": 1}),
     "rotation.slots[3].arm: expected a string, got {\"a\": 1}"),
    ("rotation slot round", "rotation", lambda d: slot(d).pop("round"),
     "missing 'rotation.slots[3].round' (expected an integer)"),
    ("rotation slot p50", "rotation", lambda d: slot(d).update(p50="fast"),
     "rotation.slots[3].p50: expected a number, got \"fast\""),
    ("rotation slot mean", "rotation", lambda d: slot(d).update(mean=1e200),
     "rotation.slots[3].mean: 1e+200 is beyond any number a run records"),
    ("rotation slot p99 missing", "rotation", lambda d: slot(d).pop("p99"),
     "missing 'rotation.slots[3].p99' (expected a number)"),
    ("rotation slot histogram", "rotation", lambda d: slot(d).update(hist="99999:1"),
     "rotation.slots[3].hist: expected bin:count,… (integers), got \"99999:1\""),
    ("rotation pair time", "rotation",
     lambda d: d["rotation"]["pairs"][0].update(time_to_match_s="soon"),
     "rotation.pairs[0].time_to_match_s: expected a number, got \"soon\""),
    ("rotation target", "rotation",
     lambda d: d["rotation"]["settings"].update(target_ci_pct=[2]),
     "rotation.settings.target_ci_pct: expected a number, got [2]"),
    ("load not a list", "rotation", lambda d: d.update(load={"steal_pct": 1}),
     "load: expected a list, got {\"steal_pct\": 1}"),
    ("load average text", "rotation", lambda d: d["load"][0].update(loadavg_before=["1"]),
     "load[0].loadavg_before[0]: expected a number, got \"1\""),
    ("busy process name", "rotation",
     lambda d: d["load"][0].update(busy_processes=[{"name": ["sh"], "cpu_share": 1}]),
     "load[0].busy_processes[0].name: expected a string, got [\"sh\"]"),
]


def run_report(tmp_path: Path, doc: dict | None = None, text: str | None = None):
    (tmp_path / "results.json").write_text(json.dumps(doc) if text is None else text)
    result = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result


@pytest.mark.parametrize(("fixture", "mutate", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_wrong_shape_is_one_line_and_exit_2(tmp_path, fixture, mutate, expected):
    doc = copy.deepcopy(DOCS[fixture])
    mutate(doc)
    result = run_report(tmp_path, doc)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    line = result.stderr.strip()
    assert "\n" not in line and "Traceback" not in result.output
    assert line.startswith(f"govkit: {tmp_path / 'results.json'}: "), line
    assert expected in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_infinity_written_as_a_number_is_refused(tmp_path):
    text = json.dumps(DOCS["full"]).replace('"p50": 64.416', '"p50": 1e400', 1)
    assert "1e400" in text
    result = run_report(tmp_path, text=text)
    assert result.exit_code == 2
    assert "raw.rows[0].p50: Infinity is beyond any number a run records" in result.stderr


def test_a_stored_summary_of_any_shape_is_compared_not_read(tmp_path):
    """The stored summary is derived data: whatever it holds, the report recomputes and says
    how it differs."""
    doc = copy.deepcopy(DOCS["full"])
    doc["summary"][0].update(loss_pct="x", transport=["udp"], path={"a": 1})
    doc["summary"][1].update(loss_pct=[1])
    result = run_report(tmp_path, doc)
    assert result.exit_code == 0, result.output
    md = (tmp_path / "summary.md").read_text()
    assert "differ from those recomputed from its raw rows" in md


@pytest.mark.parametrize("fixture", sorted(FIXTURES))
def test_every_real_run_passes_the_checker(fixture):
    check_results(DOCS[fixture])
    for path in Path(DATA.parent / "compare").glob("*/results.json"):
        check_results(json.loads(path.read_text()))


def test_the_checker_raises_nothing_but_malformed_on_odd_documents():
    for doc in ({}, {"schema": "govkit.bench/3"}, {"schema": "govkit.bench/3", "profiles": {}},
                {"schema": "govkit.bench/3", "profiles": [], "results": [[]]},
                {"schema": "govkit.bench/3", "profiles": [], "results": [], "x": 10 ** 5000}):
        with pytest.raises(Malformed):
            check_results(doc)
