"""Slow points on a noisy host (issue 42, item 3): once every arm's width can be trusted, a
rotating run says at once which ratios will not reach the target within the budget or
the round cap, and what budget would; the cap is never met in silence. The forecast on
known widths, then a real run whose target its budget cannot reach."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers.dds import needs_cyclone
from helpers.procs import marked_env

from govkit.bench.forecast import cap_note, forecast, nice_budget, short_budget_lines
from govkit.bench.options import parse_budget

GOVKIT = str(Path(sys.executable).with_name("govkit"))
LANE = ("latency", 32)
SLOT_S = {LANE: 0.04}


def _widths(**arms: float) -> dict:
    return {(arm.replace("aa", "none:aa"), *LANE): w for arm, w in arms.items()}


def test_a_ratio_the_budget_reaches_is_not_named():
    # 20 rounds at ±2.5 % need 32 to reach ±2 %: 12 rounds of 5 slots, about 3 s
    widths = _widths(a=2.5, aa=1.5)
    found = forecast(widths, dict.fromkeys(widths, 20), 2.0, SLOT_S, (30.0, 10.0, 60.0, 20),
                     380)
    assert found.late == [] and found.lines(2.0, 90, 400) == []


def test_a_ratio_the_budget_cannot_reach_is_named_with_the_budget_that_would():
    widths = _widths(a=4.0, b=2.5, aa=1.5)
    rounds = dict.fromkeys(widths, 20)
    # the rounds so far took 10 s for 20 rounds of 7 slots of 40 ms: 1.79 × nominal
    found = forecast(widths, rounds, 2.0, SLOT_S, (30.0, 10.0, 20.0, 20), 380)
    assert [x.key[0] for x in found.late] == ["a"]          # b needs 12 rounds: in time
    late = found.late[0]
    assert late.needs == 80 and not late.capped
    assert 2.0 < late.ends_near < 4.0
    lines = found.lines(2.0, 50, 400)
    assert lines[0].startswith("at this pace 1 ratio(s) will not reach ±2% within the 50 s "
                               "budget; a budget of about ")
    budget = lines[0].split("--budget ")[1].rstrip("):")
    # the budget named is one --budget reads, and at least what the forecast needs
    assert parse_budget(budget) >= found.needed_s > 30
    assert lines[1].startswith("  a latency 32 B: ±4.0% after 20 rounds, needs about 80")
    # with the budget it names, nothing is late
    again = forecast(widths, rounds, 2.0, SLOT_S,
                     (30.0, 10.0, parse_budget(budget) - 30.0, 20), 380)
    assert again.late == []


def test_a_ratio_beyond_the_round_cap_is_said_to_need_more_than_any_budget():
    widths = _widths(a=4.0, aa=3.0, b=1.5)
    found = forecast(widths, dict.fromkeys(widths, 20), 0.5, SLOT_S,
                     (30.0, 10.0, 10_000.0, 20), 380)
    # b needs 180 rounds: within the cap, and the budget is ample
    assert [x.key[0] for x in found.late] == ["a", "none:aa"]
    assert all(x.capped for x in found.late)
    head = found.lines(0.5, 10_030, 400)[0]
    assert "need more rounds than the 400-round cap allows, whatever the budget" in head
    assert "would do" not in head
    # it ends near its width at the cap: 20 rounds now, 380 more
    assert found.late[0].ends_near == pytest.approx(4.0 * (20 / 400) ** 0.5)


def test_widths_not_yet_trusted_give_no_forecast_but_a_short_budget_is_said():
    widths = {**_widths(a=4.0), ("b", *LANE): None}
    assert forecast(widths, dict.fromkeys(widths, 8), 2.0, SLOT_S, (9.0, 4.0, 2.0, 8),
                    392) is None
    # 8 rounds of 0.5 s done, 2 s left: 12 rounds, not 20
    said = short_budget_lines(8, 20, 0.5, 2.0, 9.0)
    assert len(said) == 1 and "fewer than the 20 each arm needs" in said[0]
    assert parse_budget(said[0].split("--budget ")[1].rstrip(")")) >= 9.0 + 12 * 0.5
    assert short_budget_lines(8, 20, 0.5, 6.0, 9.0) == []


def test_the_cap_note_says_what_is_left_wide():
    note = cap_note(400, _widths(a=3.1, aa=1.0), 2.0)
    assert note.startswith("stopped at the 400-round cap with 1 ratio(s) wider than ±2% "
                           "(widest ±3.1%)")
    assert cap_note(400, _widths(a=1.9), 2.0) == "stopped at the 400-round cap"


def test_budgets_are_said_as_a_user_types_them():
    assert [nice_budget(s) for s in (1, 61, 120, 121, 3601)] == ["10s", "70s", "120s", "3m",
                                                                 "61m"]
    for s in (1, 61, 121, 3601):
        assert parse_budget(nice_budget(s)) >= s


@needs_cyclone
@pytest.mark.cyclone
def test_a_run_whose_budget_is_too_small_says_so_before_its_end(tmp_path):
    """A real run with a target no 25 s budget reaches: the forecast lines come as soon as
    every arm has its 20 rounds, with rounds after them (not at the end), and the end
    note says why it stopped."""
    env, _ = marked_env()
    r = subprocess.run([GOVKIT, "bench", "--profile", "none", "--profile", "rtps_sign",
                        "--sizes", "32", "--budget", "25", "--target-ci", "0.3", "--no-report",
                        "--out", "res"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       stdin=subprocess.DEVNULL, env=env)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    lines = r.stderr.splitlines()
    said = [i for i, x in enumerate(lines) if "will not reach ±0.3%" in x]
    assert len(said) == 1, r.stderr
    listed = []                               # the ratios the forecast names, one a line
    for x in lines[said[0] + 1:]:
        if not x.startswith("govkit:   "):
            break
        listed.append(x)
    # rtps_sign's ratio is named; the A/A arm may be named too on a noisy machine
    assert any(x.startswith("govkit:   rtps_sign latency 32 B: ±") for x in listed), r.stderr
    assert all(" latency 32 B: ±" in x for x in listed), r.stderr
    later = [x for x in lines[said[0]:] if x.startswith("round ")]
    assert later, "the forecast came at the end, not at once:\n" + r.stderr
    first = int(later[0].split()[1].rstrip(":"))
    assert 20 <= first <= 60, r.stderr        # soon after every arm's 20 rounds
    assert any(x.startswith("govkit: stopped after") or "round cap" in x
               for x in lines[said[0]:]), r.stderr
