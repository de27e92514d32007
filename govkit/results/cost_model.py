"""What a profile costs at any message size: a line through its measured sizes.

Per profile, the added cost over `none` is fitted as `fixed + per KiB × size` through the
sizes a rotating run measured: the latency it adds (µs, one way) and, where the run had CPU
slots, the CPU it adds per sample (µs, both sides). A user then reads the cost at their own
message size (`govkit report RUN --cost-at SIZE`), with an interval, and sees how well the
line fits the sizes measured.

How: each size's added cost is its paired overhead's (govkit.results.paired: the 20 %
trimmed mean over the paired rounds). The line is a weighted least-squares fit, each size
weighted by the inverse variance of its bootstrap distribution (so a noisy large size does
not drag the fixed part). Its interval is a percentile bootstrap: the same resampling
that gives each size its interval (the very draws: paired.added_distribution), a line fitted
per resample, the fixed part, the slope and any predicted cost read off the lines. The fit
is checked against every measured size: where a size's own 95 % interval excludes the line,
the model is flagged `cost_model_misfit` and that size's residual is shown (fragmentation,
socket buffers and retransmission make large samples cost more than linearly).

With `govkit bench --readers`, the same per profile and size against the readers count
(`reader_cost_models`: results.json's `cost_per_reader`): "origin authentication adds X µs
per reader at 1024 B", with intervals, and said not to be a line where it is not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from govkit.catalog.profiles import PROFILES
from govkit.results import paired
from govkit.results.flags import flag
from govkit.results.record import Run, as_run
from govkit.results.stats import percentile_interval, resamples_for
from govkit.runners.readers import split_readers_arm

LATENCY_ADDED = "latency_added_us"
CPU_ADDED = "cpu_added_us_per_sample"
# figure -> (the slots' mode, the seed's suffix as the paired overheads use it, what it is)
FIGURES = {
    LATENCY_ADDED: ("latency", "", "one-way latency added over none (µs)"),
    CPU_ADDED: ("cpu", "/cpu", "CPU added over none per sample, both sides (µs)"),
}
METHOD = ("added cost ≈ fixed + per KiB × size (KiB = 1024 B), a weighted least-squares line "
          "through the measured sizes (each weighted by the inverse variance of its paired "
          "bootstrap); 95% percentile intervals from a line fitted to each bootstrap "
          "resample (the resamples that give each size its interval)")


def cost_models(doc: Run | dict) -> dict:
    """results.json's `cost_model`: the method and, per profile and figure measured at two
    or more sizes, its line with intervals and the fit at each size."""
    slots = as_run(doc).slots
    models = []
    if slots:
        for figure, (mode, suffix, what) in FIGURES.items():
            by_arm: dict[str, dict[int, list]] = {}
            for (arm, size), pairs in paired.pairings(slots, mode).items():
                if not paired.is_aa_arm(arm):
                    by_arm.setdefault(arm, {})[size] = pairs
            resamples = resamples_for(sum(len(v) for v in by_arm.values()))
            for arm, sizes in by_arm.items():
                if len(sizes) >= 2:
                    model = fit(arm, figure, what, sizes, suffix, resamples)
                    if model is not None:
                        models.append(model)
    return {"method": METHOD, "models": models}


def fit(arm: str, figure: str, what: str, sizes: dict[int, list], suffix: str,
        resamples: int) -> dict | None:
    """One profile's line for one figure (None when a size has too few rounds)."""
    measured, dists = {}, {}
    for size, pairs in sorted(sizes.items()):
        seed = f"govkit/paired/{arm}/{size}{suffix}"
        dist = paired.added_distribution(pairs, seed, resamples)
        if dist is None:
            return None
        measured[size] = paired.trimmed_mean([p.added for p in pairs])
        dists[size] = dist
    xs = [size / 1024 for size in measured]
    weights = [1 / max(_variance(dists[s]), 1e-12) for s in measured]
    fixed, slope = line(xs, list(measured.values()), weights)
    lines = [line(xs, [dists[s][b] for s in measured], weights)
             for b in range(len(next(iter(dists.values()))))]
    rows, misfit = [], []
    for size, x in zip(measured, xs, strict=True):
        lo, hi = percentile_interval(dists[size])
        model = fixed + slope * x
        rows.append({"size": size, "measured": measured[size], "measured_ci95": [lo, hi],
                     "model": model, "residual": measured[size] - model})
        if not lo <= model <= hi:
            misfit.append(f"{size} B: measured {measured[size]:+.2f} [{lo:+.2f}, {hi:+.2f}], "
                          f"line {model:+.2f}")
    out = {"profile": arm, "figure": figure, "what": what, "fixed": fixed,
           "fixed_ci95": list(percentile_interval([f for f, _ in lines])),
           "per_kib": slope, "per_kib_ci95": list(percentile_interval([k for _, k in lines])),
           "sizes": rows, "fitted_range": [min(measured), max(measured)],
           "resamples": len(lines), "flags": []}
    if misfit:
        out["flags"].append(flag("cost_model_misfit",
            "the line misses a measured size's own 95% interval ("
            + "; ".join(misfit) + "): read the measured sizes, not the line, near them"))
    out["lines"] = lines        # dropped before results.json (predict reads them)
    return out


def predict(model: dict, size: int) -> dict:
    """The model's cost at `size` bytes with its 95 % interval (from the bootstrap lines),
    and whether that is outside the measured sizes (an extrapolation)."""
    x = size / 1024
    low, high = model["fitted_range"]
    lines = model.get("lines") or []
    return {"profile": model["profile"], "figure": model["figure"], "size": size,
            "cost": model["fixed"] + model["per_kib"] * x,
            "ci95": list(percentile_interval([f + k * x for f, k in lines])) if lines
            else None,
            "extrapolated": not low <= size <= high}


def stored(models: dict) -> dict:
    """`cost_models` as results.json keeps it (without the bootstrap lines)."""
    return {**models, "models": [{k: v for k, v in m.items() if k != "lines"}
                                 for m in models["models"]]}


def line(xs: Sequence[float], ys: Sequence[float], weights: Sequence[float]
         ) -> tuple[float, float]:
    """Weighted least squares y = a + b·x; (a, b). With all x equal: (weighted mean, 0)."""
    sw = sum(weights)
    mx = sum(w * x for w, x in zip(weights, xs, strict=True)) / sw
    my = sum(w * y for w, y in zip(weights, ys, strict=True)) / sw
    sxx = sum(w * (x - mx) ** 2 for w, x in zip(weights, xs, strict=True))
    if sxx == 0:
        return my, 0.0
    b = sum(w * (x - mx) * (y - my) for w, x, y in zip(weights, xs, ys, strict=True)) / sxx
    return my - b * mx, b


def _variance(values: Sequence[float]) -> float:
    n = len(values)
    m = math.fsum(values) / n
    return math.fsum((v - m) ** 2 for v in values) / max(1, n - 1)


# ------------------------------------------------------------------ cost per reader

READERS_METHOD = (
    "added cost ≈ intercept + per reader × N (N readers of one writer, each count paired "
    "with `none` at the same count), a weighted least-squares line through the measured "
    "reader counts of one profile and size (each weighted by the inverse variance of its "
    "paired bootstrap); 95% percentile intervals from a line fitted to each bootstrap "
    "resample. No line where fewer than two counts were measured, and `fits` false where "
    "a count's own 95% interval excludes the line: read the counts, not the line, then")


def reader_cost_models(doc: Run | dict) -> dict | None:
    """results.json's `cost_per_reader` (None for a run at 1 reader only): per profile,
    size and figure, how the added cost over `none` grows with the readers count."""
    slots = as_run(doc).slots
    if not any(s.readers > 1 for s in slots):
        return None
    models = []
    for figure, (mode, suffix, what) in FIGURES.items():
        by_point: dict[tuple[str, int], dict[int, tuple[str, list]]] = {}
        for (arm, size), pairs in paired.pairings(slots, mode).items():
            if paired.is_aa_arm(arm):
                continue
            name, readers = split_readers_arm(arm)
            by_point.setdefault((name, size), {})[readers] = (arm, pairs)
        resamples = resamples_for(sum(len(v) for v in by_point.values()))
        for (name, size), counts in by_point.items():
            models.append(fit_readers(name, size, (figure, what, suffix), counts, resamples))
    order = {p.name: i for i, p in enumerate(PROFILES)}     # the catalog's, as the tables
    models.sort(key=lambda m: (order.get(m["profile"], len(order)), m["profile"], m["size"]))
    return {"method": READERS_METHOD, "models": models}


def fit_readers(profile: str, size: int, figure: tuple[str, str, str],
                counts: dict[int, tuple[str, list]], resamples: int) -> dict:
    """One profile's added cost against its readers count at one size (`figure`: its name,
    what it is, its seed's suffix; `counts`: per count, the arm and its pairings)."""
    name, what, suffix = figure
    measured, dists, shown = {}, {}, []
    for n, (arm, pairs) in sorted(counts.items()):
        dist = paired.added_distribution(pairs, f"govkit/paired/{arm}/{size}{suffix}",
                                         resamples)
        value = paired.trimmed_mean([p.added for p in pairs]) if pairs else None
        if dist is not None:        # (None below 3 paired rounds: no interval, not fitted)
            measured[n], dists[n] = value, dist
        if value is not None:
            shown.append({"readers": n, "measured": value, "measured_ci95": list(
                percentile_interval(dist)) if dist is not None else None})
    out = {"profile": profile, "size": size, "figure": name, "what": what,
           "counts": shown, "per_reader": None, "per_reader_ci95": None, "intercept": None,
           "intercept_ci95": None, "fits": False}
    if len(measured) < 2:
        out["why"] = (f"{len(measured)} readers count(s) with an interval (3 or more paired "
                      "rounds): a line needs two; no cost per reader")
        return out
    xs = [float(n) for n in measured]
    weights = [1 / max(_variance(dists[n]), 1e-12) for n in measured]
    intercept, slope = line(xs, list(measured.values()), weights)
    draws = min(len(d) for d in dists.values())
    lines = [line(xs, [dists[n][b] for n in measured], weights) for b in range(draws)]
    misses = []
    for row in out["counts"]:
        if row["measured_ci95"] is None:
            continue
        model = intercept + slope * row["readers"]
        lo, hi = row["measured_ci95"]
        row.update(model=model, residual=row["measured"] - model)
        if not lo <= model <= hi:
            misses.append(f"{row['readers']} readers: measured {row['measured']:+.2f} "
                          f"[{lo:+.2f}, {hi:+.2f}], line {model:+.2f}")
    out.update(per_reader=slope, per_reader_ci95=list(percentile_interval(
        [k for _, k in lines])), intercept=intercept,
        intercept_ci95=list(percentile_interval([a for a, _ in lines])),
        fits=not misses, tested=len(measured) > 2, resamples=len(lines))
    if len(measured) == 2:
        out["why"] = "two readers counts: the line passes through both, so nothing tests it"
    elif misses:
        out["why"] = ("not a line: a count's own 95% interval excludes it ("
                      + "; ".join(misses) + ")")
    return out
