"""The cost model: a line through the added cost at each measured size, with intervals that
cover a known truth, a prediction at any size, and a flag where the line misses a size."""

from __future__ import annotations

import math
import random

import pytest

from govkit.results.cost_model import CPU_ADDED, LATENCY_ADDED, cost_models, line, predict

SIZES = (32, 1024, 16384, 63000)


def _slots(added, rounds: int = 40, noise: float = 0.3, seed: int = 1,
           mode: str = "latency", key: str = "p50") -> list[dict]:
    """none X none per round and size, `none` at 20 µs + 0.1 µs/KiB; X adds added(size)."""
    rand = random.Random(seed)
    out = []
    for r in range(rounds):
        regime = rand.choice((1.0, 1.2))
        for size in SIZES:
            base = regime * (20 + 0.1 * size / 1024)
            for pos, arm in enumerate(("none", "rtps_sign", "none")):
                value = base + (added(size) if arm != "none" else 0) + rand.gauss(0, noise)
                out.append({"round": r, "position": pos, "arm": arm, "profile": arm,
                            "instance": r % 2, "size": size, "status": "ok", "mode": mode,
                            key: value})
    return out


def test_the_line_recovers_a_known_fixed_cost_and_slope():
    doc = {"rotation": {"slots": _slots(lambda s: 7.0 + 0.4 * s / 1024)}}
    (model,) = cost_models(doc)["models"]
    assert model["profile"] == "rtps_sign" and model["figure"] == LATENCY_ADDED
    assert model["fixed_ci95"][0] < 7.0 < model["fixed_ci95"][1]
    assert model["per_kib_ci95"][0] < 0.4 < model["per_kib_ci95"][1]
    assert model["fixed"] == pytest.approx(7.0, abs=0.3)
    assert model["flags"] == []
    assert [r["size"] for r in model["sizes"]] == list(SIZES)
    # at a size of the user's own: between the measured sizes, with an interval
    at = predict(model, 8000)
    assert at["ci95"][0] < 7.0 + 0.4 * 8000 / 1024 < at["ci95"][1]
    assert at["extrapolated"] is False and predict(model, 1 << 22)["extrapolated"] is True


def test_a_cost_that_is_not_linear_is_flagged_at_the_size_it_misses():
    # a jump at the largest size (fragments, socket buffers): the line cannot follow it
    doc = {"rotation": {"slots": _slots(
        lambda s: 7.0 + 0.1 * s / 1024 + (60 if s == 16384 else 0), noise=0.2)}}
    (model,) = cost_models(doc)["models"]
    (f,) = model["flags"]
    assert f["code"] == "cost_model_misfit" and "16384 B" in f["reason"]


def test_cpu_slots_give_a_cpu_per_sample_line_too():
    slots = [{**s, "cpu_us_per_sample": s.pop("v")}
             for s in _slots(lambda s: 2.0 + 1.5 * s / 1024, mode="cpu", key="v")]
    (model,) = cost_models({"rotation": {"slots": slots}})["models"]
    assert model["figure"] == CPU_ADDED
    assert model["per_kib_ci95"][0] < 1.5 < model["per_kib_ci95"][1]


def test_one_size_gives_no_line_and_the_a_a_arm_none():
    slots = [s for s in _slots(lambda s: 5.0) if s["size"] == 1024]
    assert cost_models({"rotation": {"slots": slots}})["models"] == []
    aa = [{**s, "arm": "none:aa"} if s["arm"] != "none" else s for s in _slots(lambda s: 0)]
    assert cost_models({"rotation": {"slots": aa}})["models"] == []


def test_weighted_least_squares_is_exact_on_a_line_and_flat_on_one_x():
    a, b = line([0, 1, 2], [1, 3, 5], [1, 5, 0.5])
    assert math.isclose(a, 1) and math.isclose(b, 2)
    assert line([3, 3], [1, 2], [1, 1]) == (1.5, 0.0)
