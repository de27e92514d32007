"""Which ratios a rotating run will not narrow to its target in time, said while it runs.

Why: on a noisy host (issue 42, a 2-core AMD EPYC VM, 2026-12-07) three of six default runs
went on to the 400-round cap with ratios still wide, and nothing said so before the end:
the user waited 4-5 minutes to learn that the budget had never been enough. Once every
arm's width can be trusted (govkit.bench.rotation.trusted_widths: 20 rounds an arm), the
run forecasts each still-wide ratio's remaining rounds and says at once which will not
reach the target within the budget or the round cap, and what budget would.

The forecast: a ratio's interval narrows as 1/sqrt(rounds) (the rounds are resampled, the
instance term is pooled over the run and the run-to-run term is left out of the width the
target is read against), so a ratio of half-width w after n rounds needs about
n·(w/target)² rounds. Rounds then shrink as ratios reach the target (round_plan gives slots
only to the arms still wide, and the A/A arm rides along in every lane that has one), so
the time is simulated round by round: each remaining round's slots (per lane, `none X none
… none`) at each lane's slot length, scaled by what the run's rounds really took per
slot-second so far (process switching, the bootstrap of the stopping rule, the host).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from govkit.bench.options import MIN_ARM_ROUNDS
from govkit.results.paired import AA_ARM

# Lines listing late points before the rest are counted ("and 12 more")
MAX_LISTED = 8


@dataclass(frozen=True)
class Late:
    key: tuple[str, str, int]        # (arm, mode, size)
    width: float                     # its half-width now (%)
    rounds: int                      # its paired rounds now
    needs: int                       # the rounds it needs, all told
    capped: bool                     # the round cap, not the budget, stops it
    ends_near: float | None = None   # the half-width it will end near (%)


@dataclass(frozen=True)
class Forecast:
    late: list[Late]
    needed_s: float                  # from the start of the run, every ratio at the target
    rounds_needed: int               # the run's rounds, all told, for that

    def lines(self, target: float, budget_s: float, max_rounds: int) -> list[str]:
        """What the run says (nothing when every ratio will reach the target in time)."""
        if not self.late:
            return []
        capped = sum(x.capped for x in self.late)
        head = (f"at this pace {len(self.late)} ratio(s) will not reach ±{target:g}% within "
                f"the {budget_s:.0f} s budget")
        if capped < len(self.late):
            budget = nice_budget(self.needed_s)
            head += (f"; a budget of about {budget} would do" + (
                f" for {len(self.late) - capped} of them" if capped else "")
                + f" (--budget {budget})")
        if capped:
            head += (f"; {capped} need more rounds than the {max_rounds}-round cap allows, "
                     "whatever the budget: compare two runs (govkit report A B) or take a "
                     "wider --target-ci")
        out = [head + ":"]
        for x in self.late[:MAX_LISTED]:
            arm, mode, size = x.key
            name = "none (A/A)" if arm == AA_ARM else arm
            out.append(f"  {name} {mode} {size} B: ±{x.width:.1f}% after {x.rounds} rounds, "
                       f"needs about {x.needs}" + (" (beyond the cap)" if x.capped else "")
                       + (f"; it will end near ±{x.ends_near:.1f}%"
                          if x.ends_near is not None else ""))
        if len(self.late) > MAX_LISTED:
            out.append(f"  and {len(self.late) - MAX_LISTED} more")
        return out


def nice_budget(seconds: float) -> str:
    """A --budget value a user can type, rounded up: `90s`, `4m`, `70m`, as `parse_budget`
    reads them (seconds up to two minutes, then whole minutes)."""
    s = max(1, math.ceil(seconds))
    if s <= 120:
        return f"{math.ceil(s / 10) * 10}s"
    minutes = math.ceil(s / 60)
    return f"{minutes}m"


def forecast(widths: dict[tuple[str, str, int], float | None],
             rounds: dict[tuple[str, str, int], int], target: float,
             slot_s: dict[tuple[str, int], float], timing: tuple[float, float, float, int],
             cap_left: int) -> Forecast | None:
    """The ratios that will not reach `target` in time. `widths` the stopping rule's
    (every one known: None means not yet forecastable, and None is returned), `rounds` each
    key's paired rounds so far, `slot_s` each lane's (mode, size) nominal seconds per slot
    (settle + measured part), `timing` (the run's elapsed seconds, the seconds its rounds
    took, the seconds left in its budget, its rounds so far), `cap_left` the rounds the
    round cap still allows."""
    if not widths or any(w is None for w in widths.values()):
        return None
    elapsed, rounds_s, left_s, done = timing
    needs = {k: max(rounds.get(k, 0), math.ceil(rounds.get(k, 0) * (w / target) ** 2))
             for k, w in widths.items()}
    extra = {k: needs[k] - rounds.get(k, 0) for k in widths}
    lanes = sorted({(m, s) for _, m, s in widths})
    with_aa = {(m, s) for a, m, s in widths if a == AA_ARM}
    # what the rounds so far took over their slots' nominal seconds: a key's paired rounds
    # are its slots, each with a `none` before it, and every lane's round one `none` more
    nominal = sum(2 * n * slot_s.get((m, s), 0.0) for (_, m, s), n in rounds.items())
    nominal += done * sum(slot_s.get(lane, 0.0) for lane in lanes)
    scale = rounds_s / nominal if nominal > 0 and rounds_s > 0 else 1.0
    t = 0.0
    finish: dict[tuple[str, str, int], float] = {}
    elapsed_by_round = [0.0]         # the simulated seconds after each future round
    # (beyond the cap no round runs: a hostile target cannot make this loop long)
    for r in range(1, min(max(extra.values(), default=0), max(0, cap_left)) + 1):
        for lane in lanes:
            arms = {k[0] for k in widths if k[1:] == lane and extra[k] >= r}
            if arms:
                arms |= {AA_ARM} if lane in with_aa else set()
                t += (2 * len(arms) + 1) * slot_s.get(lane, 0.0) * scale
        elapsed_by_round.append(t)
        for k in widths:
            if extra[k] == r:
                finish[k] = t
    # the rounds the budget still gives a ratio that stays wide (it is in every one)
    in_budget = sum(1 for x in elapsed_by_round[1:] if x <= left_s)
    late = []
    for k in sorted(widths, key=lambda k: -(widths[k] or 0)):
        if extra[k] <= 0 or (extra[k] <= cap_left and finish.get(k, 0.0) <= left_s):
            continue
        n = rounds.get(k, 0)
        more = min(in_budget, cap_left)
        late.append(Late(k, widths[k], n, needs[k],
                         extra[k] > cap_left,
                         widths[k] * math.sqrt(n / (n + more)) if n else None))
    return Forecast(late, elapsed + max(finish.values(), default=0.0),
                    done + min(max(extra.values(), default=0), max(0, cap_left)))


def short_budget_lines(done: int, min_arm_rounds: int, round_s: float, left_s: float,
                       elapsed: float) -> list[str]:
    """Before the widths can be trusted: a budget that cannot give every arm its
    `min_arm_rounds` says so at once (each arm's width counts only after that many)."""
    if round_s <= 0 or done >= min_arm_rounds:
        return []
    more = int(left_s // round_s)
    if done + more >= min_arm_rounds:
        return []
    need = elapsed + (min_arm_rounds - done) * round_s
    budget = nice_budget(need)
    return [f"at this pace the budget allows about {done + more} rounds, fewer than the "
            f"{min_arm_rounds} each arm needs before its interval is read: every ratio will "
            f"be left as it is then, unchecked against the target; a budget of about "
            f"{budget} gives them (--budget {budget})"]


def cap_note(done: int, widths: dict[tuple[str, str, int], float | None], target: float
             ) -> str:
    """What a run the round cap stopped says (it was silent before, issue 42)."""
    wide = [w for w in widths.values() if w is None or w > target]
    worst = max((w for w in widths.values() if w is not None), default=None)
    text = f"stopped at the {done}-round cap"
    if wide:
        text += (f" with {len(wide)} ratio(s) wider than ±{target:g}%"
                 + (f" (widest ±{worst:.1f}%)" if worst is not None else "")
                 + ": more budget cannot narrow them; compare two runs (govkit report A B)")
    return text


def warn_late(ctx, widths: dict[tuple[str, str, int], float | None],
              lengths: dict[tuple[str, int], int], first_round: int, done: int) -> bool:
    """Say at once (one line, then one per late ratio) what will not reach the target;
    True once the run has been forecast (said or not), so that it is said once. `ctx` the
    run's RunContext, `lengths` each lane's measured µs per slot, `done` the run's rounds
    (a resumed run's stored ones too; the cap counts this invocation's, from
    `first_round`)."""
    rs, store = ctx.opts.rotation, ctx.store
    rounds_s = sum(r.seconds or 0.0 for r in store.rounds)
    elapsed, left = ctx.elapsed(), max(0.0, ctx.budget - ctx.elapsed())
    if any(w is None for w in widths.values()):
        lines = short_budget_lines(done, MIN_ARM_ROUNDS, rounds_s / done if done else 0.0,
                                   left, elapsed)
        for line in lines:
            ctx.say(f"govkit: {line}", style="yellow")
        return bool(lines)
    counts: dict[tuple[str, str, int], int] = {}
    for s in store.doc["rotation"]["slots"]:
        if s.get("status") == "ok":
            key = (s["arm"], s.get("mode", "latency"), s["size"])
            counts[key] = counts.get(key, 0) + 1
    slot_s = {lane: (rs.settle_ms * 1000 + us) / 1e6 for lane, us in lengths.items()}
    found = forecast(widths, counts, rs.target_ci, slot_s,
                     (elapsed, rounds_s, left, done),
                     first_round + rs.max_rounds - done)
    if found is None:
        return False
    for line in found.lines(rs.target_ci, ctx.budget, rs.max_rounds):
        ctx.say(f"govkit: {line}", style="yellow")
    return True
