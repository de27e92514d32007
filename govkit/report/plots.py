"""The report's plots: latency, overhead and throughput figures from a ReportModel, each
estimate with whiskers for its 95% interval.

Plots are drawn with matplotlib (no pyplot, so no global backend state) and inlined as SVG.
matplotlib is imported inside the functions, so importing govkit.report.run does not load it.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
import textwrap
import warnings
from dataclasses import replace

from govkit.catalog.profiles import BASELINE
from govkit.report.model import Figure, ProfileRows, ReportModel, fmt_int, fmt_size
from govkit.results.figures import FIGURES, tail_p99
from govkit.runners.readers import split_readers_arm

# ---------------------------------------------------------------------- plots

# Okabe-Ito colours plus line styles, markers and hatches, so profiles separate in greyscale.
_COLOURS = ("#000000", "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7",
            "#999999")
_LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (3, 1, 1, 1, 1, 1)), (0, (8, 2)),
               (0, (1, 2)))
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_HATCHES = ("", "//", "\\\\", "xx", "..", "++", "oo", "--")
_RC = {
    "svg.fonttype": "none",
    "svg.hashsalt": "govkit-report",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Liberation Sans", "Arial", "Helvetica"],
    "font.size": 10,
    "axes.titlesize": 12,
    "axes.titleweight": "bold",
    "axes.labelsize": 10.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#d9d9d9",
    "grid.linewidth": 0.6,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "hatch.linewidth": 0.7,
    "hatch.color": "#333333",
    "text.parse_math": False,     # a `$` in a profile name is text, not mathtext
}



def _tail(point) -> float | None:
    return tail_p99(point.p99_of_samples, point.p99_median_of_seconds)

def _style_indexes(model: ReportModel) -> dict[str, int]:
    """Catalog position per profile, so a profile keeps its colour from report to report."""
    from govkit.catalog.profiles import PROFILES
    catalog = [p.name for p in PROFILES]
    extra = [p.name for p in model.profiles if p.name not in catalog]
    return {name: i for i, name in enumerate(catalog + extra)}


def profile_style(index: int) -> dict:
    """A profile's look. Past the 8 colours, the line style, marker and hatch shift by one
    per round of colours, so profile 8 does not look like profile 0 (`none`): 64 looks."""
    shift = index + index // len(_COLOURS)
    return {"color": _COLOURS[index % len(_COLOURS)],
            "linestyle": _LINESTYLES[shift % len(_LINESTYLES)],
            "marker": _MARKERS[shift % len(_MARKERS)],
            "hatch": _HATCHES[shift % len(_HATCHES)]}


def _new_figure(width: float, height: float):
    from matplotlib.figure import Figure as MplFigure
    return MplFigure(figsize=(width, height), layout="constrained")


def _size_axis(ax, sizes: list[int]) -> None:
    from matplotlib.ticker import NullFormatter, NullLocator
    if sizes[0] > 0:  # a 0-byte size cannot sit on a log axis
        ax.set_xscale("log")
    ax.set_xticks(sizes, [fmt_size(s) for s in sizes])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    if sizes[0] <= 0:
        ax.set_xlabel("Sample size (bytes)")
        return
    if len(sizes) == 1:
        ax.set_xlim(sizes[0] / 2, sizes[0] * 2)
    else:
        ax.set_xlim(sizes[0] / 1.6, sizes[-1] * 1.6)
    ax.set_xlabel("Sample size (bytes, log scale)")
    ax.grid(True, which="major", axis="both")


def _log_y(ax, values: list[float]) -> None:
    """Log y axis spanning `values`, ticks labelled as plain numbers (1-2-5 or finer)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
    values = [v for v in values if v > 0]
    if not values:
        return
    lo, hi = min(values) / 1.25, max(values) * 1.25
    ax.set_yscale("log")
    ax.set_ylim(lo, hi)
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    for steps in ((1, 2, 5), (1, 1.5, 2, 3, 4, 5, 6, 8)):   # coarse first
        ticks = [m * 10 ** e for e in decades for m in steps if lo <= m * 10 ** e <= hi]
        if len(ticks) >= 4:
            break
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def _to_svg(fig, key: str) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None},
                facecolor="white")
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]                       # drop <?xml ...?> and DOCTYPE
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    # Several SVGs share one HTML document: make every id (and reference to one) unique.
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{key}-\1"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{key}-\1)", svg)
    svg = re.sub(r'href="#([^"]+)"', rf'href="#{key}-\1"', svg)
    # Scale with the page: keep the viewBox, let CSS size the element.
    svg = re.sub(r'^<svg([^>]*?) width="[^"]*" height="[^"]*"',
                 rf'<svg\1 class="plot" role="img" aria-labelledby="{key}-caption"', svg,
                 count=1)
    return svg.strip()


def _on_reference_network(model: ReportModel) -> ReportModel:
    """The model with only the points over the run's first network: one line per profile
    (the other networks are compared in the report's "Networks side by side" table)."""
    if not model.show_network:
        return model
    ref = model.networks[0]

    def only(groups):
        return [ProfileRows(g.profile, [r for r in g.rows if r.network == ref])
                for g in groups]

    return replace(model, latency=only(model.latency), throughput=only(model.throughput),
                   points=[p for p in model.points if p.network == ref])


# What a plot draws at most. A legend of 300 entries, 300 tick labels or a name of 200,000
# characters is read by nobody and only costs layout time; the caption says what was left
# out (`_within_limits`), the report's tables list every point under its full name.
MAX_PROFILES_DRAWN = 12
MAX_SIZES_DRAWN = 16
MAX_LABEL = 40
MAX_PANELS = 6           # govkit report A B: one panel per size


def short_name(name: str, width: int = MAX_LABEL) -> str:
    """A name as a plot shows it: whole up to `width` characters, else its start and end
    around an ellipsis (so two long names that differ at the end still differ)."""
    if len(name) <= width:
        return name
    tail = width // 3
    return name[:width - tail - 1] + "\u2026" + name[-tail:]


def _spread(items: list, most: int) -> list:
    """At most `most` of `items`, evenly spaced, the first and the last among them."""
    if len(items) <= most:
        return list(items)
    picks = sorted({round(i * (len(items) - 1) / (most - 1)) for i in range(most)})
    return [items[i] for i in picks]


def _within_limits(model: ReportModel) -> tuple[ReportModel, str]:
    """The model with at most MAX_PROFILES_DRAWN profiles per mode (the first in catalog
    order; `none` and the first MAX_PROFILES_DRAWN secured ones in the overhead plot) and
    MAX_SIZES_DRAWN sizes (evenly spaced), and a sentence saying what was left out ('' if
    nothing)."""
    def keep(groups: list[ProfileRows], all_sizes: list[int]) -> list[ProfileRows]:
        secured = [g.profile.name for g in groups if g.profile.name != BASELINE]
        names = {BASELINE, *secured[:MAX_PROFILES_DRAWN]}
        wanted = set(_spread(all_sizes, MAX_SIZES_DRAWN))
        return [ProfileRows(g.profile, [r for r in g.rows if r.size in wanted])
                for g in groups if g.profile.name in names]

    t_sizes = sorted({r.size for g in model.throughput for r in g.rows if r.point})
    latency, throughput = keep(model.latency, model.sizes), keep(model.throughput, t_sizes)
    notes = []
    for mode, before, after in (("latency", model.latency, latency),
                                ("throughput", model.throughput, throughput)):
        total = sum(1 for g in before if g.profile.name != BASELINE)
        shown = sum(1 for g in after if g.profile.name != BASELINE)
        if shown < total:
            notes.append(f"{mode}: {shown} of the {total} secured profiles (the first in "
                         "catalog order) and none")
    for mode, total in (("latency", model.sizes), ("throughput", t_sizes)):
        if len(total) > MAX_SIZES_DRAWN:
            notes.append(f"{mode}: {MAX_SIZES_DRAWN} of the {len(total)} sizes (evenly "
                         "spaced, the smallest and the largest among them)")
    if not notes:
        return model, ""
    drawn = {(g.profile.name, r.size) for g in (*latency, *throughput) for r in g.rows}
    return replace(model, latency=latency, throughput=throughput,
                   sizes=_spread(model.sizes, MAX_SIZES_DRAWN),
                   points=[p for p in model.points if (p.profile, p.size) in drawn]), (
        " Drawn: " + "; ".join(notes) + ". The tables list every point.")


@contextlib.contextmanager
def _drawing():
    """Where every plot is drawn: govkit's style, and matplotlib's warnings kept off the
    terminal. A name from results.json may hold characters no font has (a NUL, a control
    or bidi character, a script DejaVu Sans lacks): matplotlib drew a box for each but also
    printed a UserWarning naming its own source line on stderr, for each glyph and figure,
    under a report that succeeded (issue 23: one clear line or none)."""
    import matplotlib
    with matplotlib.rc_context(_RC), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def build_figures(model: ReportModel) -> list[Figure]:
    """The report's plots as inline SVG, in page order (throughput only if measured)."""
    every = _on_reference_network(model)     # the readers plots: a line per profile
    model, left_out = _within_limits(every)
    figures = []
    with _drawing():
        if any(r.point for g in model.latency for r in g.rows):
            figures.append(_latency_figure(model))
        if any(r.point and (r.point.vs_none or r.point.rti)
               for g in model.latency if g.profile.name != BASELINE for r in g.rows):
            figures.append(_overhead_figure(model))
        if model.has_throughput:
            figures.append(_throughput_figure(model))
        figures += [_readers_figure(every, size) for size in readers_sizes(every)]
    subsampled = sum(1 for p in model.points if any(f.code == "subsampled_interval"
                                                     for f in p.flags))
    if subsampled:
        left_out += (f" The whiskers of {subsampled} drawn point(s) come from a subsample of "
                     "their values (flagged subsampled_interval: see the flags).")
    return [replace(f, caption=f.caption + left_out) for f in figures]


def _whiskers(ax, xs, values, intervals, gid: str, **kw) -> None:
    """95% interval whiskers (caps at both ends) at the points that have an interval."""
    pts = [(x, v, ci) for x, v, ci in zip(xs, values, intervals, strict=True)
           if v is not None and ci is not None]
    if not pts:
        return
    errs = [[max(v - ci[0], 0) for _, v, ci in pts], [max(ci[1] - v, 0) for _, v, ci in pts]]
    style = {"ecolor": "black", "elinewidth": 1.1, "capsize": 3.5, "capthick": 1.1,
             "zorder": 6, **kw}
    container = ax.errorbar([x for x, _, _ in pts], [v for _, v, _ in pts], yerr=errs,
                            fmt="none", **style)
    container.lines[2][0].set_gid(gid)


def _whisker_proxy():
    from matplotlib.lines import Line2D
    return Line2D([], [], color="black", marker="|", markersize=10, linewidth=0,
                  markeredgewidth=1.3)


# Markers of different profiles at one size are shifted by this many decades apart on the
# log size axis, so that equal values do not hide each other.
_DODGE_DECADES = 0.018


def _dodged(xs: list[int], j: int, n: int) -> list[float]:
    if not xs or xs[0] <= 0:      # linear axis (a 0-byte size): no room to shift
        return list(xs)
    f = 10 ** (_DODGE_DECADES * (j - (n - 1) / 2))
    return [x * f for x in xs]


def _latency_figure(model: ReportModel) -> Figure:
    """Two panels sharing the size axis: the centre statistic with its interval on top, the
    tail below on its own scale (drawn together, a 63000 B tail squashed the medians)."""
    fig = _new_figure(10.0, 7.4)
    ax, tail_ax = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    styles = _style_indexes(model)
    groups = [g for g in model.latency if any(r.point for r in g.rows)]
    position = {id(g): i for i, g in enumerate(model.latency)}
    values, tails = [], []
    for j, group in enumerate(groups):
        pts = [r.point for r in group.rows if r.point]
        st = profile_style(styles[group.profile.name])
        xs = _dodged([p.size for p in pts], j, len(groups))
        ax.plot(xs, [p.estimate for p in pts], color=st["color"], linestyle=st["linestyle"],
                marker=st["marker"], markersize=6, linewidth=1.8,
                label=short_name(group.profile.name), zorder=3)
        _whiskers(ax, xs, [p.estimate for p in pts], [p.ci95 for p in pts],
                  f"whiskers-latency-{position[id(group)]}", ecolor=st["color"])
        tail = [(x, _tail(p)) for x, p in zip(xs, pts, strict=True) if _tail(p) is not None]
        if tail:
            tail_ax.plot([x for x, _ in tail], [v for _, v in tail], color=st["color"],
                         linestyle=st["linestyle"], marker=st["marker"], markersize=5,
                         markerfacecolor="white", linewidth=1.2, zorder=3)
        values += [v for p in pts for v in (p.estimate, *(p.ci95 or ())) if v is not None]
        tails += [v for _, v in tail]
    handles, labels = ax.get_legend_handles_labels()
    handles.append(_whisker_proxy())
    labels.append("95% interval")
    tail_name = FIGURES["p99_of_samples" if model.rotated else "p99_median_of_seconds"].name
    _size_axis(tail_ax, model.sizes)
    ax.set_xlabel("")
    _log_y(ax, values)
    title = model.statistic_title("latency")
    ax.set_ylabel(f"{title} (\u00b5s, log scale)")
    ax.set_title(f"One-way latency vs sample size: {title[:1].lower() + title[1:]}")
    if tails:
        _log_y(tail_ax, tails)
        tail_ax.set_ylabel("\n".join(textwrap.wrap(f"{tail_name} (\u00b5s, log scale)", 28)))
        tail_ax.set_title(f"The tail: {tail_name[:1].lower() + tail_name[1:]}")
    else:
        tail_ax.set_title("The tail: not measured")
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="Profile",
              title_fontsize=9, alignment="left")
    return Figure("fig-latency", "Latency vs sample size",
                  f"Top: {model.statistic('latency')}, with its 95% interval (whiskers); "
                  "each profile's markers are shifted a little sideways so that equal values "
                  f"stay visible. Bottom, on its own scale: the tail, {tail_name[:1].lower()}"
                  f"{tail_name[1:]}. Lower is better.", _to_svg(fig, "fig-latency"))


def _overhead_figure(model: ReportModel) -> Figure:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    groups = [g for g in model.latency if g.profile.name != BASELINE]
    styles = _style_indexes(model)
    sizes = model.sizes
    fig = _new_figure(10.0, 7.4)
    ratio_ax, added_ax = fig.subplots(2, 1, sharex=True)
    n = max(len(groups), 1)
    width = min(0.8 / n, 0.22)
    proxies = []
    shown = {"ratio": [0.0, 1.0], "added": [0.0]}   # the axes include 0 and the baseline
    for j, group in enumerate(groups):
        st = profile_style(styles[group.profile.name])
        bar = {"facecolor": st["color"], "alpha": 0.85, "hatch": st["hatch"],
               "edgecolor": "#333333", "linewidth": 0.6}
        proxies.append((Patch(**bar), short_name(group.profile.name)))   # even without bars
        xs = [k + width * (j + 0.5 - n / 2) for k in range(len(sizes))]
        pts = [r.point for r in group.rows]
        vs = [p.vs_none if p else None for p in pts]
        rti = [p.rti if p else None for p in pts]
        for ax, key, value, ci, published in (
                (ratio_ax, "ratio", "ratio", "ratio_ci95", "ratio"),
                (added_ax, "added", "added", "added_ci95", "added_us")):
            vals = [getattr(v, value) if v else None for v in vs]
            bx = [x for x, v in zip(xs, vals, strict=True) if v is not None]
            if bx:
                ax.bar(bx, [v for v in vals if v is not None], width=width * 0.92, zorder=2,
                       **bar)
            _whiskers(ax, xs, vals, [getattr(v, ci) if v else None for v in vs],
                      f"whiskers-{key}-{j}")
            marks = [(x, getattr(r, published)) for x, r in zip(xs, rti, strict=True) if r]
            shown[key] += [v for v in vals if v is not None] + [v for _, v in marks] + [
                end for v in vs if v and getattr(v, ci) for end in getattr(v, ci)]
            if marks:
                ax.scatter([x for x, _ in marks], [v for _, v in marks], marker="D", s=34,
                           facecolor="white", edgecolor="black", linewidth=1.3, zorder=7)
            for x, row in zip(xs, group.rows, strict=True):
                if row.status == "failed":
                    ax.text(x, 0.03, "failed", rotation=90, ha="center", va="bottom",
                            fontsize=8, color="#b00020", zorder=4,
                            transform=ax.get_xaxis_transform())
    ratio_ax.axhline(1.0, color="black", linewidth=1.0, linestyle="--", zorder=3)
    added_ax.axhline(0.0, color="black", linewidth=1.0, linestyle="--", zorder=3)
    for ax, key in ((ratio_ax, "ratio"), (added_ax, "added")):
        lo, hi = min(shown[key]), max(shown[key])
        pad = 0.12 * (hi - lo or 1)
        ax.set_ylim(lo - pad if lo < 0 else 0, hi + pad)
        ax.grid(False, axis="x")
    added_ax.set_xticks(range(len(sizes)), [fmt_size(s) for s in sizes])
    added_ax.set_xlim(-0.5, len(sizes) - 0.5)
    added_ax.set_xlabel("Sample size")
    ratio_ax.set_ylabel("Latency / latency of none (\u00d7)")
    added_ax.set_ylabel("Latency \u2212 latency of none (\u00b5s)")
    suffix = "" if model.has_overhead else " (no baseline measured: RTI's figures only)"
    ratio_ax.set_title("Overhead over none as a ratio" + suffix)
    added_ax.set_title("Overhead over none as added \u00b5s" + suffix)
    handles = [h for h, _ in proxies] + [
        _whisker_proxy(),
        Line2D([], [], marker="D", markersize=6, linewidth=0, markerfacecolor="white",
               markeredgecolor="black", markeredgewidth=1.3),
        Line2D([], [], color="black", linestyle="--", linewidth=1.0)]
    labels = [name for _, name in proxies] + [
        "95% interval", "RTI Connext published\n(same profile and size)",
        "none baseline\n(1\u00d7, +0 \u00b5s)"]
    ratio_ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                    title="Profile", title_fontsize=9, alignment="left")
    return Figure("fig-overhead", "Overhead over none",
                  f"Bars: this run's {model.statistic('latency')} over none's at the same "
                  "size, as a ratio (top) and as added \u00b5s (bottom); whiskers: their 95% "
                  "intervals. Diamonds: the same from RTI's published Connext figures.",
                  _to_svg(fig, "fig-overhead"))


def _throughput_figure(model: ReportModel) -> Figure:
    from matplotlib.ticker import FuncFormatter
    with_ratio = any(r.point and r.point.vs_none for g in model.throughput for r in g.rows)
    fig = _new_figure(10.0, 4.2)
    axes = fig.subplots(1, 2 if with_ratio else 1, squeeze=False)[0]
    sizes = sorted({r.size for g in model.throughput for r in g.rows if r.point})
    index = _style_indexes(model)
    panels = [(axes[0], "estimate", "ci95", "Samples per second", "rate")]
    if with_ratio:
        panels.append((axes[1], "ratio", "ratio_ci95", "Rate / rate of none (\u00d7)", "ratio"))
    for ax, value, ci, label, key in panels:
        for j, group in enumerate(model.throughput):
            # (size, what holds the value): the point itself, or its overhead over none
            pairs = [(r.size, r.point if value == "estimate" else r.point.vs_none)
                     for r in group.rows if r.point]
            pairs = [(x, src) for x, src in pairs if src]
            if not pairs:
                continue
            st = profile_style(index[group.profile.name])
            xs = _dodged([x for x, _ in pairs], j, len(model.throughput))
            src = [s for _, s in pairs]
            ys = [getattr(s, value) for s in src]
            ax.plot(xs, ys, color=st["color"], linestyle=st["linestyle"],
                    marker=st["marker"], linewidth=1.8, markersize=6,
                    label=short_name(group.profile.name))
            _whiskers(ax, xs, ys, [getattr(s, ci) for s in src], f"whiskers-{key}-{j}",
                      ecolor=st["color"])
        _size_axis(ax, sizes)
        ax.set_ylim(bottom=0)
        ax.set_ylabel(label)
        ax.set_title(label)
        if value == "estimate":
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_int(v)))
        else:
            ax.axhline(1.0, color="black", linewidth=1.0, linestyle="--", zorder=1)
            ax.set_ylim(0, max(ax.get_ylim()[1], 1.1))     # the baseline stays in view
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend([*handles, _whisker_proxy()], [*labels, "95% interval"],
               loc="outside right upper", title="Profile", title_fontsize=9,
               alignment="left")
    fig.suptitle("Throughput vs sample size", fontweight="bold")
    return Figure("fig-throughput", "Throughput",
                  f"Subscriber-side {model.statistic('throughput')} per profile with its 95% "
                  "interval" + (", and its ratio over none" if with_ratio else "")
                  + "; higher is better.", _to_svg(fig, "fig-throughput"))


# ------------------------------------------------------------- govkit report A B (compare)
# The comparison's chart: each profile's latency over `none` as a ratio, one bar per run (and
# network) with its 95% interval, RTI's published ratio as a marker; one panel per size.


COMPARE_KEY = "fig-compare"


def build_compare_figures(model) -> list[Figure]:
    """The chart (govkit.report.compare.CompareModel), if any secured profile is in it."""
    if not any(p.name != BASELINE for p, _ in model.groups):
        return []
    with _drawing():
        return [_ratio_figure(model)]


def _bar_style(j: int) -> dict:
    """Run j's bars: Okabe-Ito colours from orange on (black would hide the whiskers),
    each with its own hatch so runs separate in greyscale."""
    return {"facecolor": _COLOURS[1 + j % (len(_COLOURS) - 1)], "alpha": 0.85,
            "hatch": _HATCHES[(j + 1) % len(_HATCHES)], "edgecolor": "#333333",
            "linewidth": 0.6}


def _profile_tick(name: str, width: int = 16) -> str:
    """A profile name on lines of about `width` characters, broken only after underscores
    (a name longer than MAX_LABEL shortened first)."""
    lines = [""]
    for part in short_name(name).replace("_", "_\n").splitlines():
        if lines[-1] and len(lines[-1]) + len(part) > width:
            lines.append("")
        lines[-1] += part
    return "\n".join(lines)


def _ratio_figure(model) -> Figure:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    every = [p for p, _ in model.groups if p.name != BASELINE]
    profiles = every[:MAX_PROFILES_DRAWN]
    measured = [s for s in model.sizes if any(model.row(p.name, s) for p in every)]
    sizes = _spread(measured, MAX_PANELS)
    left_out = [f"{len(profiles)} of the {len(every)} secured profiles (the first in catalog "
                "order)" if len(profiles) < len(every) else "",
                f"{len(sizes)} of the {len(measured)} sizes (evenly spaced)"
                if len(sizes) < len(measured) else ""]
    left_out = [x for x in left_out if x]
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
    labels = [textwrap.fill(short_name(c.label), 26) for c in model.columns] + [
        "95% interval", "RTI Connext published\n(same profile and size)",
        "none baseline (1\u00d7)"]
    fig.legend(handles, labels, loc="outside right upper", title="Run", title_fontsize=9,
               alignment="left")
    fig.suptitle("Overhead over none as a ratio, per implementation", fontweight="bold")
    return Figure(COMPARE_KEY, "Overhead over none, per implementation",
                  f"Bars: each run's {model.statistic or 'latency statistic'} of the profile "
                  "over that same run's none at the same size (so each implementation is "
                  "set against its own unsecured baseline); whiskers: 95% intervals. "
                  "Diamonds: RTI's published Connext ratio for the same profile and size. "
                  "Lower is better." + (f" Drawn: {'; '.join(left_out)}. The tables list "
                                        "every point." if left_out else ""),
                  _to_svg(fig, COMPARE_KEY))


# ------------------------------------------------------------- --readers: ratio per count

def _by_readers(model: ReportModel, size: int) -> dict[str, list[tuple[int, object]]]:
    """Per profile (its name at 1 reader), its latency points at `size` as (readers, point),
    by readers count; `none` and points without a ratio left out."""
    out: dict[str, list[tuple[int, object]]] = {}
    for group in model.latency:
        name, readers = split_readers_arm(group.profile.name)
        if name == BASELINE:
            continue
        for row in group.rows:
            if row.point and row.size == size and row.point.vs_none \
                    and row.point.vs_none.ratio is not None:
                out.setdefault(name, []).append((readers, row.point))
    return {k: sorted(v, key=lambda t: t[0]) for k, v in out.items()}


def readers_sizes(model: ReportModel) -> list[int]:
    """The sizes measured at more than one readers count (govkit bench --readers): a
    readers plot each."""
    return [s for s in model.sizes
            if any(len(v) > 1 for v in _by_readers(model, s).values())]


def _readers_figure(model: ReportModel, size: int) -> Figure:
    """At one size: each profile's latency ratio over `none` (at the same readers count)
    against the readers count, a line per profile, with its 95% interval."""
    fig = _new_figure(10.0, 5.2)
    ax = fig.subplots(1, 1)
    styles = _style_indexes(model)
    lines = _by_readers(model, size)
    counts = sorted({n for v in lines.values() for n, _ in v})
    shown = [1.0]
    for j, (name, pts) in enumerate(lines.items()):
        st = profile_style(styles.get(name, j))
        spread = 0.06 * (j - (len(lines) - 1) / 2)       # equal values stay visible
        xs = [n + spread for n, _ in pts]
        ratios = [p.vs_none.ratio for _, p in pts]
        intervals = [p.vs_none.ratio_ci95 for _, p in pts]
        ax.plot(xs, ratios, color=st["color"], linestyle=st["linestyle"],
                marker=st["marker"], markersize=6, linewidth=1.8, label=short_name(name),
                zorder=3)
        _whiskers(ax, xs, ratios, intervals, f"whiskers-readers-{size}-{j}",
                  ecolor=st["color"])
        shown += ratios + [e for ci in intervals if ci for e in ci]
    ax.axhline(1.0, color="black", linewidth=1.0, linestyle="--", zorder=2)
    ax.set_xticks(counts, [str(n) for n in counts])
    ax.set_xlabel("Readers of one writer")
    ax.set_ylabel("Latency / latency of none\nat the same readers count (\u00d7)")
    ax.set_title(f"Overhead over none against the readers count, {fmt_size(size)}")
    lo, hi = min(shown), max(shown)
    ax.set_ylim(max(0.0, lo - 0.1 * (hi - lo or 1)), hi + 0.1 * (hi - lo or 1))
    handles, labels = ax.get_legend_handles_labels()
    ax.legend([*handles, _whisker_proxy()], [*labels, "95% interval"], loc="upper left",
              bbox_to_anchor=(1.01, 1.0), title="Profile", title_fontsize=9,
              alignment="left")
    key = f"fig-readers-{size}"
    return Figure(key, f"Overhead against readers, {fmt_size(size)}",
                  f"At {fmt_size(size)}: each profile's one-way latency (the slowest "
                  "reader's) over none's at the same readers count, one line per profile, "
                  "with its 95% interval (whiskers); markers shifted a little sideways so "
                  "that equal values stay visible. 1 = no overhead.", _to_svg(fig, key))
