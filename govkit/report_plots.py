"""The report's plots: latency, overhead and throughput figures from a ReportModel.

Plots are drawn with matplotlib (no pyplot, so no global backend state) and inlined as SVG.
matplotlib is imported inside the functions, so importing govkit.report does not load it.
"""

from __future__ import annotations

import io
import math
import re

from .report_model import Figure, ReportModel, fmt_int, fmt_size

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
}


def _style_indexes(model: ReportModel) -> dict[str, int]:
    """Catalog position per profile, so a profile keeps its colour from report to report."""
    from .profiles import PROFILES
    catalog = [p.name for p in PROFILES]
    extra = [p.name for p in model.profiles if p.name not in catalog]
    return {name: i for i, name in enumerate(catalog + extra)}


def _style(index: int) -> dict:
    return {"color": _COLOURS[index % len(_COLOURS)],
            "linestyle": _LINESTYLES[index % len(_LINESTYLES)],
            "marker": _MARKERS[index % len(_MARKERS)],
            "hatch": _HATCHES[index % len(_HATCHES)]}


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


def build_figures(model: ReportModel) -> list[Figure]:
    """The report's plots as inline SVG, in page order (throughput only if measured)."""
    import matplotlib

    figures = []
    with matplotlib.rc_context(_RC):
        if any(c.median_us is not None for r in model.headline for c in r.cells):
            figures.append(_latency_figure(model))
        if any(c.overhead_vs_none is not None or c.rti_ratio is not None
               for r in model.headline if r.profile.name != "none" for c in r.cells):
            figures.append(_overhead_figure(model))
        if model.has_throughput:
            figures.append(_throughput_figure(model))
    return figures


def _latency_figure(model: ReportModel) -> Figure:
    fig = _new_figure(10.0, 5.0)
    ax = fig.add_subplot()
    styles = _style_indexes(model)
    for row in model.headline:
        pts = [c for c in row.cells if c.median_us is not None]
        if not pts:
            continue
        st = _style(styles[row.profile.name])
        xs = [c.size for c in pts]
        ax.plot(xs, [c.median_us for c in pts], color=st["color"], linestyle=st["linestyle"],
                marker=st["marker"], markersize=6, linewidth=1.8, label=row.profile.name,
                zorder=3)
        band = [c for c in pts if c.p90_us is not None and c.p99_us is not None]
        if band:
            ax.fill_between([c.size for c in band], [c.p90_us for c in band],
                            [c.p99_us for c in band], color=st["color"], alpha=0.10,
                            linewidth=0, zorder=1)
    from matplotlib.patches import Patch
    handles, labels = ax.get_legend_handles_labels()
    handles.append(Patch(facecolor="#000000", alpha=0.15, linewidth=0))
    labels.append("p90\u2013p99 (shaded,\nsame colour)")
    _size_axis(ax, model.sizes)
    values = [v for r in model.headline for c in r.cells
              for v in (c.median_us, c.p90_us, c.p99_us) if v is not None]
    _log_y(ax, values)
    ax.set_ylabel("Median one-way latency (\u00b5s, log scale)")
    ax.set_title("Median latency vs sample size, per profile")
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="Profile",
              title_fontsize=9, alignment="left")
    return Figure("fig-latency", "Latency vs sample size",
                  "Median one-way latency per profile (lines); shaded: p90 to p99. "
                  "Lower is better.", _to_svg(fig, "fig-latency"))


def _overhead_figure(model: ReportModel) -> Figure:
    from matplotlib.patches import Patch
    rows = [r for r in model.headline if r.profile.name != "none"]
    styles = _style_indexes(model)
    sizes = model.sizes
    fig = _new_figure(10.0, 5.0)
    ax = fig.add_subplot()
    n = max(len(rows), 1)
    width = min(0.8 / n, 0.22)
    top = 1.0
    rti_drawn = False
    proxies = []
    for j, row in enumerate(rows):
        st = _style(styles[row.profile.name])
        xs = [k + width * (j + 0.5 - n / 2) for k in range(len(sizes))]
        vals = [c.overhead_vs_none for c in row.cells]
        bx = [x for x, v in zip(xs, vals, strict=True) if v is not None]
        bv = [v for v in vals if v is not None]
        bar = {"facecolor": st["color"], "alpha": 0.85, "hatch": st["hatch"],
               "edgecolor": "#333333", "linewidth": 0.6}
        if bv:
            ax.bar(bx, bv, width=width * 0.92, zorder=2, **bar)
        proxies.append((Patch(**bar), row.profile.name))  # legend even without bars
        for x, c in zip(xs, row.cells, strict=True):
            if c.status == "failed":
                ax.text(x, 0.04, "failed", rotation=90, ha="center", va="bottom", fontsize=8,
                        color="#b00020", zorder=4)
        rti = [(x, c.rti_ratio) for x, c in zip(xs, row.cells, strict=True)
               if c.rti_ratio is not None]
        if rti:
            ax.scatter([x for x, _ in rti], [v for _, v in rti], marker="D", s=34,
                       facecolor="white", edgecolor="black", linewidth=1.3, zorder=5,
                       label=None if rti_drawn else "RTI Connext published ratio")
            rti_drawn = True
        top = max([top, *bv, *(v for _, v in rti)])
    ax.axhline(1.0, color="black", linewidth=1.0, linestyle="--", zorder=3,
               label="none baseline (1\u00d7)")
    ax.set_xticks(range(len(sizes)), [fmt_size(s) for s in sizes])
    ax.set_xlim(-0.5, len(sizes) - 0.5)
    ax.set_ylim(0, top * 1.12)
    ax.grid(False, axis="x")
    ax.set_xlabel("Sample size")
    ax.set_ylabel("Median latency / median of none (\u00d7)")
    title = "Security overhead over the none baseline"
    if not model.has_overhead:
        title += " (no baseline measured)"
    ax.set_title(title)
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles + [h for h, _ in proxies], labels + [n for _, n in proxies],
              loc="upper left", bbox_to_anchor=(1.01, 1.0), title="Profile",
              title_fontsize=9, alignment="left")
    return Figure("fig-overhead", "Overhead over none",
                  "Bars: this run's median latency divided by none's at the same size. "
                  "Diamonds: the same ratio from RTI's published Connext figures.",
                  _to_svg(fig, "fig-overhead"))


def _throughput_figure(model: ReportModel) -> Figure:
    import statistics

    from matplotlib.ticker import FuncFormatter
    fig = _new_figure(10.0, 4.2)
    axes = fig.subplots(1, 2)
    sizes = sorted({r.size for r in model.throughput if r.ok})
    index = _style_indexes(model)
    for ax, attr, label in ((axes[0], "samples_per_s", "Samples per second"),
                            (axes[1], "mbps", "Throughput (Mbit/s)")):
        for p in model.profiles:
            pts = []
            for size in sizes:
                vals = [getattr(r, attr) for r in model.throughput
                        if r.ok and r.profile == p.name and r.size == size
                        and getattr(r, attr) is not None]
                if vals:
                    pts.append((size, statistics.median(vals)))
            if pts:
                st = _style(index[p.name])
                ax.plot([x for x, _ in pts], [y for _, y in pts], color=st["color"],
                        linestyle=st["linestyle"], marker=st["marker"], linewidth=1.8,
                        markersize=6, label=p.name)
        _size_axis(ax, sizes)
        ax.set_ylim(bottom=0)
        ax.set_ylabel(label)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_int(v)))
    axes[0].set_title("Samples per second")
    axes[1].set_title("Throughput (Mbit/s)")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside right upper",
               title="Profile", title_fontsize=9, alignment="left")
    fig.suptitle("Throughput vs sample size (median over repeats)", fontweight="bold")
    return Figure("fig-throughput", "Throughput",
                  "Subscriber-side throughput per profile; higher is better.",
                  _to_svg(fig, "fig-throughput"))
