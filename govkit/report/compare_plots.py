"""The comparison's chart: each profile's latency over `none` as a ratio, one bar per run
(and network) with its 95% interval, RTI's published ratio as a marker; one panel per
size. Drawn with report_plots' helpers, styles and mathtext-safe settings, inlined as SVG.
"""

from __future__ import annotations

import textwrap

from govkit.report.model import Figure, fmt_size
from govkit.report.plots import (
    _COLOURS,
    _HATCHES,
    _RC,
    _new_figure,
    _to_svg,
    _whisker_proxy,
    _whiskers,
)
from govkit.results.store import BASELINE

KEY = "fig-compare"


def build_compare_figures(model) -> list[Figure]:
    """The chart (govkit.report.compare.CompareModel), if any secured profile is in it."""
    import matplotlib
    if not any(p.name != BASELINE for p, _ in model.groups):
        return []
    with matplotlib.rc_context(_RC):
        return [_ratio_figure(model)]


def _bar_style(j: int) -> dict:
    """Run j's bars: Okabe-Ito colours from orange on (black would hide the whiskers),
    each with its own hatch so runs separate in greyscale."""
    return {"facecolor": _COLOURS[1 + j % (len(_COLOURS) - 1)], "alpha": 0.85,
            "hatch": _HATCHES[(j + 1) % len(_HATCHES)], "edgecolor": "#333333",
            "linewidth": 0.6}


def _profile_tick(name: str, width: int = 16) -> str:
    """A profile name on lines of about `width` characters, broken only after underscores."""
    lines = [""]
    for part in name.replace("_", "_\n").splitlines():
        if lines[-1] and len(lines[-1]) + len(part) > width:
            lines.append("")
        lines[-1] += part
    return "\n".join(lines)


def _ratio_figure(model) -> Figure:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    profiles = [p for p, _ in model.groups if p.name != BASELINE]
    sizes = [s for s in model.sizes
             if any(model.row(p.name, s) for p in profiles)]
    n = max(len(model.columns), 1)
    width = min(0.8 / n, 0.3)
    fig = _new_figure(10.0, 1.4 + 2.9 * len(sizes))
    axes = fig.subplots(len(sizes), 1, sharex=True, squeeze=False)[:, 0]
    for i, (ax, size) in enumerate(zip(axes, sizes, strict=True)):
        shown = [0.0, 1.0]              # the axis includes 0 and the baseline
        rows = [model.row(p.name, size) for p in profiles]
        for j in range(len(model.columns)):
            xs = [k + width * (j + 0.5 - n / 2) for k in range(len(profiles))]
            cells = [row.cells[j] if row else None for row in rows]
            vs = [c.point.vs_none if c and c.point else None for c in cells]
            ratios = [v.ratio if v else None for v in vs]
            bars = [(x, r) for x, r in zip(xs, ratios, strict=True) if r is not None]
            if bars:
                ax.bar([x for x, _ in bars], [r for _, r in bars], width=width * 0.92,
                       zorder=2, **_bar_style(j))
            _whiskers(ax, xs, ratios, [v.ratio_ci95 if v else None for v in vs],
                      f"whiskers-ratio-{i}-{j}")
            shown += [r for r in ratios if r is not None]
            shown += [end for v in vs if v and v.ratio_ci95 for end in v.ratio_ci95]
            for x, c, r in zip(xs, cells, ratios, strict=True):
                if r is not None:
                    continue
                why = ("failed" if c and c.status == "failed" else
                       "no none" if c and c.point else "not run")
                ax.text(x, 0.03, why, rotation=90, ha="center", va="bottom", fontsize=7.5,
                        color="#b00020" if why == "failed" else "#555555", zorder=4,
                        transform=ax.get_xaxis_transform())
        marks = [(k, row.rti.ratio) for k, row in enumerate(rows) if row and row.rti]
        if marks:
            ax.scatter([k for k, _ in marks], [r for _, r in marks], marker="D", s=38,
                       facecolor="white", edgecolor="black", linewidth=1.3, zorder=7)
            shown += [r for _, r in marks]
        ax.axhline(1.0, color="black", linewidth=1.0, linestyle="--", zorder=3)
        ax.set_ylim(0, max(shown) * 1.12)
        ax.set_xlim(-0.5, len(profiles) - 0.5)
        ax.grid(False, axis="x")
        ax.set_title(f"{fmt_size(size)} samples", loc="left")
        ax.set_ylabel("Latency / its run's\nlatency of none (\u00d7)")
    axes[-1].set_xticks(range(len(profiles)), [_profile_tick(p.name) for p in profiles],
                        fontsize=8.5)
    handles = [Patch(**_bar_style(j)) for j in range(len(model.columns))] + [
        _whisker_proxy(),
        Line2D([], [], marker="D", markersize=6, linewidth=0, markerfacecolor="white",
               markeredgecolor="black", markeredgewidth=1.3),
        Line2D([], [], color="black", linestyle="--", linewidth=1.0)]
    labels = [textwrap.fill(c.label, 26) for c in model.columns] + [
        "95% interval", "RTI Connext published\n(same profile and size)",
        "none baseline (1\u00d7)"]
    fig.legend(handles, labels, loc="outside right upper", title="Run", title_fontsize=9,
               alignment="left")
    fig.suptitle("Overhead over none as a ratio, per implementation", fontweight="bold")
    return Figure(KEY, "Overhead over none, per implementation",
                  f"Bars: each run's {model.statistic or 'latency statistic'} of the profile "
                  "over that same run's none at the same size (so each implementation is "
                  "set against its own unsecured baseline); whiskers: 95% intervals. "
                  "Diamonds: RTI's published Connext ratio for the same profile and size. "
                  "Lower is better.", _to_svg(fig, KEY))
