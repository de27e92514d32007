"""Intervals that cover a rerun, part two: on the 2-core VM a run's secured ratios move
together from run to run, in proportion to the share of the work security adds, by an
amount set for the whole run (2026-12-05: eight default runs, var(z) 3.34 and 27 % of |z|
beyond 1.96 without the term). No resampling within a run sees it; the run carries a
measured term (paired.RunTerm) instead. Synthetic runs with a known run-level shift: the
intervals with the term cover the long-run ratio about as often as they claim, those
without it do not; the A/A arm and the stopping rule's width are left alone."""

from __future__ import annotations

import copy
import json
import math
import random
from pathlib import Path
from statistics import NormalDist

import pytest

from govkit.results import paired
from govkit.results.summary import rotation_widths, run_terms, summarize

ARMS = {"x": 1.3, "y": 1.8, "z": 4.0, "none:aa": 1.0}     # the long-run truth per arm
ROUNDS = 30
KAPPA = 0.02                                               # 2 %: the shift's SD (log scale)
DATA = Path(__file__).resolve().parents[1] / "data" / "report"


def _run(seed: int, shift: float, noise: float = 0.01) -> list[dict]:
    """One rotating run at one size: `none X none Y …` per round, a regime every slot of
    the round shares, and this run's shift: the work security adds is exp(shift) times its
    long-run share (a ratio r reads 1 + (r - 1) exp(shift)), `none` and the A/A arm
    unmoved."""
    rand = random.Random(seed)
    slots = []
    for r in range(ROUNDS):
        regime = rand.choice((1.0, 1.3))
        others = list(ARMS)
        rand.shuffle(others)
        seq = []
        for arm in others:
            seq += ["none", arm]
        seq.append("none")
        for pos, arm in enumerate(seq):
            ratio = 1 + (ARMS.get(arm, 1.0) - 1) * math.exp(shift)
            value = 20.0 * ratio * regime * math.exp(rand.gauss(0, noise))
            slots.append({"round": r, "position": pos, "arm": arm, "profile": arm,
                          "instance": 0, "size": 32, "status": "ok", "p50": value})
    return slots


def test_intervals_with_the_run_term_cover_the_long_run_ratio_as_claimed():
    """40 runs, each with its own shift of SD KAPPA: with RunTerm(KAPPA) the secured arms'
    intervals cover the long-run ratio about as often as 95 % intervals should; without it
    (within-run resampling alone) far less often."""
    runs = 40
    # shifts of exactly SD KAPPA: the normal's quantiles, in a seeded order
    shifts = [KAPPA * NormalDist().inv_cdf((i + 0.5) / runs) for i in range(runs)]
    random.Random(5).shuffle(shifts)
    covered = {True: 0, False: 0}
    secured = [a for a in ARMS if a != "none:aa"]
    for seed in range(runs):
        pairs = paired.pairings(_run(seed, shifts[seed]))
        for with_term in (True, False):
            run = paired.RunTerm(KAPPA) if with_term else None
            for arm in secured:
                lo, hi = paired.overhead(pairs[(arm, 32)], f"t/{arm}", resamples=400,
                                         run=run).ratio_ci95
                covered[with_term] += lo <= ARMS[arm] <= hi
    total = runs * len(secured)
    assert covered[True] >= 0.88 * total, covered
    assert covered[False] < 0.75 * total, covered


def test_the_run_term_grows_with_the_share_security_adds_and_spares_the_aa_arm():
    pairs = paired.pairings(_run(3, 0.0))
    run = paired.RunTerm(KAPPA)
    sds = {arm: paired.overhead(pairs[(arm, 32)], f"t/{arm}", run=run).run_sd_pct
           for arm in ARMS}
    # kappa · (1 - 1/r) at the estimated ratio
    assert sds["z"] == pytest.approx(100 * KAPPA * 0.75, rel=0.05)
    assert sds["x"] < sds["y"] < sds["z"]
    assert sds["none:aa"] < 0.05 * sds["z"]
    # a throughput ratio below 1 gets the same share: 1 - r
    assert run.log_sd(math.log(0.25)) == pytest.approx(KAPPA * 0.75)


def test_the_width_more_rounds_can_narrow_is_kept_apart():
    pairs = paired.pairings(_run(4, 0.0))
    plain = paired.overhead(pairs[("z", 32)], "t/z")
    with_run = paired.overhead(pairs[("z", 32)], "t/z", run=paired.RunTerm(KAPPA))
    # the same resamples: without the term, the interval is the one a run without it has
    assert with_run.within_ci95 == plain.ratio_ci95
    assert with_run.within_halfwidth_pct == plain.halfwidth_pct
    assert with_run.halfwidth_pct > plain.halfwidth_pct + 1.5
    doc = with_run.to_json()
    assert doc["ratio_halfwidth_within_pct"] == plain.halfwidth_pct
    assert doc["run_sd_pct"] == with_run.run_sd_pct
    # the added µs widen by the arm's level times the term
    assert with_run.added_ci95[1] - with_run.added_ci95[0] > \
        plain.added_ci95[1] - plain.added_ci95[0]
    # a run that carries no term reads exactly as before
    assert "run_sd_pct" not in plain.to_json()
    assert plain.within_halfwidth_pct == plain.halfwidth_pct


def test_a_run_carries_its_term_and_flags_say_which_width_is_wide():
    """A real run's results.json (tests/data/report/rotation): with a run term that widens
    its intervals past the target, points whose rounds reached the target carry the
    `rerun_spread` note, not `wide_interval` (more rounds would not help); the stopping
    rule's widths leave the term out; the budget note's do not."""
    doc = json.loads((DATA / "rotation" / "results.json").read_text())
    assert run_terms(doc["rotation"]) == {}
    before = {(r["profile"], r["size"]): r for r in summarize(copy.deepcopy(doc))}
    doc["rotation"]["settings"]["rerun_kappa_pct"] = {"latency": 8.0}
    doc["rotation"]["settings"]["target_ci_pct"] = 50.0
    assert run_terms(doc["rotation"]) == {"latency": paired.RunTerm(0.08)}
    after = {(r["profile"], r["size"]): r for r in summarize(doc)}
    secured = [k for k, r in after.items() if r.get("vs_none")]
    assert secured
    for k in secured:
        vs, old = after[k]["vs_none"], before[k]["vs_none"]
        assert vs["ratio"] == old["ratio"]
        assert vs["ratio_halfwidth_within_pct"] == pytest.approx(old["ratio_halfwidth_pct"])
        assert vs["ratio_halfwidth_pct"] > old["ratio_halfwidth_pct"]
        codes = {f["code"] for f in after[k]["flags"]}
        assert "wide_interval" not in codes
        assert ("rerun_spread" in codes) == (vs["ratio_halfwidth_pct"] > 50.0)
    assert any("rerun_spread" in {f["code"] for f in after[k]["flags"]} for k in secured) \
        or all(after[k]["vs_none"]["ratio_halfwidth_pct"] <= 50 for k in secured)
    # the terminal explains a note that has advice once, as it does warnings; a note
    # without advice ("≈none") gets no line
    from govkit.results.flags import flag_advice
    noted_doc = copy.deepcopy(doc)
    noted_doc["rotation"]["settings"]["target_ci_pct"] = 5.0   # its point: within ±1.2 %
    noted = summarize(noted_doc)
    assert [x.split(":")[0] for x in flag_advice(noted, "note")] == [
        "rerun_spread on 1 point(s)"]
    assert not flag_advice(summarize(copy.deepcopy(doc)), "note")
    narrow = rotation_widths(doc)
    whole = rotation_widths(doc, narrowable=False)
    # (the A/A arm's term is ~0: its two widths differ by the draws' noise alone)
    assert all(narrow[k] <= whole[k] + 0.05 for k in narrow if narrow[k] is not None)
    assert all(narrow[k] < whole[k] - 1 for k in narrow
               if narrow[k] is not None and k[0] != paired.AA_ARM)


def test_a_floor_moves_every_ratio_the_aa_arm_too():
    """Throughput ratios move from run to run whatever the profile: the floor widens the A/A
    arm's interval as much as any arm's."""
    pairs = paired.pairings(_run(6, 0.0))
    run = paired.RunTerm(0.0, 0.015)
    aa = paired.overhead(pairs[("none:aa", 32)], "t/aa", run=run)
    assert aa.run_sd_pct == pytest.approx(1.5)
    both = paired.RunTerm(KAPPA, 0.015)
    assert both.log_sd(math.log(4.0)) == pytest.approx(math.hypot(0.015, KAPPA * 0.75))


def test_rerun_options_parse_mode_and_percent():
    from govkit.bench.defaults import RERUN_FLOOR_PCT, RERUN_KAPPA_PCT
    from govkit.bench.options import parse_rerun_term
    from govkit.common.errors import GovkitError
    assert dict(parse_rerun_term(None)) == RERUN_KAPPA_PCT
    assert dict(parse_rerun_term(None, "--rerun-floor")) == RERUN_FLOOR_PCT
    got = dict(parse_rerun_term(["latency=0.9", "cpu=0"]))
    assert got["latency"] == 0.9 and got["cpu"] == 0 and got["throughput"] == \
        RERUN_KAPPA_PCT["throughput"]
    for option in ("--rerun-kappa", "--rerun-floor"):
        for bad in ("latency", "latency=x", "disco=1", "latency=-1", "latency=101"):
            with pytest.raises(GovkitError, match=option):
                parse_rerun_term([bad], option)


@pytest.mark.parametrize("source", [None, "default", "given"])
def test_the_rerun_note_calls_a_term_this_machines_only_when_given(source):
    """The rerun_spread note said "a rerun on this machine moves this ratio by ±X %" of
    govkit's default term, a constant measured on another VM (issue 42). A default (or a
    file from before rerun_term_source) is said to be another machine's; only a term given
    with --rerun-kappa/--rerun-floor is called this run's own, and no flag of either speaks
    of "this machine" as where a figure was measured."""
    doc = json.loads((DATA / "rotation" / "results.json").read_text())
    settings = doc["rotation"]["settings"]
    settings["rerun_kappa_pct"] = {"latency": 8.0}
    settings["target_ci_pct"] = 5.0
    if source is not None:
        settings["rerun_term_source"] = source
    rows = summarize(doc)
    notes = [f["reason"] for r in rows for f in r["flags"] if f["code"] == "rerun_spread"]
    assert notes
    expected = ("given (--rerun-kappa, --rerun-floor)" if source == "given"
                else "a default from another machine, not measured here")
    assert all(expected in n for n in notes), notes
    assert not any("this machine" in f["reason"] for r in rows for f in r["flags"])


def test_an_unknown_rerun_term_source_is_refused():
    from govkit.results.record import RecordInvalid, RotationConfig
    with pytest.raises(RecordInvalid, match="rerun_term_source"):
        RotationConfig.from_json({"rerun_term_source": "this machine"})
