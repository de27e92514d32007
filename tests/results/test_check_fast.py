"""The results.json checker's one-pass acceptance of plain rows and slots (issue 23, item 9:
a long run holds tens of thousands of them) says nothing the field-by-field check would
not: on every hostile value put into a row or a slot, check_results gives the same verdict
and the same message with the one-pass check as without it."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest
from helpers.large_results import per_repeat, rotating

from govkit.results import check

DATA = Path(__file__).resolve().parent.parent / "data" / "report"
HOSTILE = [None, "5", True, False, -1, 0, 0.0, 1e-10, 1e-9, 1e12, 1e12 + 1, 2 ** 70, [], {},
           [1], {"a": 1}, "", "ok", "0:1", "1:2,3:4", "x:1", "-5:3,", 3.5, 10 ** 9, 10 ** 9 + 1,
           2 ** 31 - 1, 2 ** 31, "latency", "throughput", "both", "none", "a@b"]
ROW_KEYS = ["count", "mean", "min", "p50", "p90", "p99", "max", "lost", "rate_sps", "mbps",
            "rexmit_bytes", "t"]
SLOT_KEYS = ["arm", "profile", "size", "round", "position", "instance", "status", "error",
             "variant", "mode", "p50", "rate_sps", "count", "mean", "min", "max", "p99",
             "later_n", "span_us", "lost", "cpu_us", "wall_us", "pong_cpu_us", "hist"]


def _verdict(doc, monkeypatch, one_pass: bool) -> str | None:
    with monkeypatch.context() as m:
        if not one_pass:
            m.setattr(check, "plain_slot", lambda slot: False)
            m.setattr(check, "measured_rows", lambda rows, keys, optional=(): False)
        try:
            check.check_results(doc)
        except check.Malformed as e:
            return str(e)
    return None


def _docs():
    yield "latency", per_repeat(["none", "rtps_sign"], [32], 2, 3)
    yield "throughput", per_repeat(["none"], [1024], 2, 3, modes=("throughput",))
    yield "rotation", rotating(["none", "rtps_sign"], [32], 3)
    for path in sorted(DATA.glob("*/results.json")):
        yield path.parent.name, json.loads(path.read_text())


@pytest.mark.parametrize(("name", "doc"), list(_docs()), ids=lambda x: x if isinstance(
    x, str) else "")
def test_one_pass_check_gives_the_field_by_field_verdict(name, doc, monkeypatch):
    rand = random.Random(name)
    assert _verdict(doc, monkeypatch, True) is None
    slots = (doc.get("rotation") or {}).get("slots") or []
    rows = [r["raw"]["rows"] for r in doc["results"] if r.get("status") == "ok"
            and "rows" in r.get("raw", {})]
    said = set()
    for _ in range(400):
        bad = copy.deepcopy(doc)
        places = []
        if slots:
            places.append(bad["rotation"]["slots"][rand.randrange(len(slots))])
        if rows:
            which = rand.randrange(len(rows))
            group = [r["raw"]["rows"] for r in bad["results"] if r.get("status") == "ok"
                     and "rows" in r.get("raw", {})][which]
            places.append(group[rand.randrange(len(group))])
        for target in places:
            key = rand.choice(SLOT_KEYS if "arm" in target else ROW_KEYS)
            if rand.random() < 0.15:
                target.pop(key, None)
            else:
                target[key] = copy.deepcopy(rand.choice(HOSTILE))
        if rand.random() < 0.05 and slots:
            bad["rotation"]["slots"][rand.randrange(len(slots))] = rand.choice(HOSTILE)
        want = _verdict(bad, monkeypatch, False)
        assert _verdict(bad, monkeypatch, True) == want, (name, want)
        said.add(want is None)
    assert said == {True, False}   # both verdicts were reached
