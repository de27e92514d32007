"""The run's summary as terminal tables (flags by their short labels: govkit.results.flags)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from govkit.catalog.measures import DISCOVERY
from govkit.catalog.profiles import BASELINE
from govkit.results import figures
from govkit.results.figures import FIGURES
from govkit.results.flags import short_label
from govkit.results.point import NoiseFloorRow, PointSummary, Tail, as_points
from govkit.results.summary import POLICY_BASELINE_MEANING
from govkit.runners.network import DEFAULT, Network, sort_key
from govkit.runners.readers import split_readers_arm


def _ci(values, fmt: str) -> str:
    return "–" if not values else f"{fmt.format(values[0])}…{fmt.format(values[1])}"


def _flags(row: PointSummary) -> str:
    return " ".join(short_label(f.code) for f in row.flags) or "–"


def _networks(rows: list[PointSummary]) -> list[Network]:
    return list(dict.fromkeys(r.network for r in rows))


def _with_network(rows: list[PointSummary]) -> bool:
    """Show a network column when the run measured anything but udp over lo."""
    return _networks(rows) != [DEFAULT] and bool(rows)


def tail_p99_key(rows: list[PointSummary]) -> str:
    """The p99 the latency rows carry: of all samples (rotation), else the median of the
    per-second p99s."""
    return "p99_of_samples" if any(r.tail.p99_of_samples is not None for r in rows) \
        else "p99_median_of_seconds"


def tail_p99(tail: Tail) -> float | None:
    """A summary row's tail (results.figures.tail_p99)."""
    return figures.tail_p99(tail.p99_of_samples, tail.p99_median_of_seconds)


def _with_readers(rows: list[PointSummary]) -> bool:
    """Whether the rows hold more than one readers count (govkit bench --readers 1,4)."""
    return len({r.readers for r in rows}) > 1


def _named(r: PointSummary, readers: bool) -> tuple[str, ...]:
    """A row's first cells: its point name, or with a readers column its profile (the
    name at 1 reader: `rtps_sign@4readers` → `rtps_sign`) and its readers count."""
    return (split_readers_arm(r.profile)[0], str(r.readers)) if readers else (r.profile,)


def _mode(summary: list, mode: str) -> list[PointSummary]:
    """The summary's rows of `mode`, as records (rows from results.json or summarize)."""
    return [r for r in as_points(summary) if r.mode == mode]


def noise_floor_table(rows: list[dict]) -> Table | None:
    """The A/A arm (a second `none` paired like a profile): what 'no difference' measures,
    per size (and mode, when throughput rotated too: its ratio is of rates)."""
    if not rows:
        return None
    counts = [r.get("readers", 1) for r in rows]      # --readers: the A/A arm per count
    many = len(set(counts)) > 1
    rows = [NoiseFloorRow.from_json(r) for r in rows]
    modes = len({r.mode for r in rows}) > 1
    table = Table(title="A/A noise floor: an independent second `none`, paired like a "
                        "profile; its ratio should be 1.00", title_justify="left")
    for col in (*(("mode",) if modes else ()), *(("readers",) if many else ()), "B",
                "× none", "95% CI", "±%", "+µs" if not modes else "+", "rounds", "flags"):
        table.add_column(col, justify="left" if col in ("flags", "mode") else "right")
    for r, n in zip(rows, counts, strict=True):
        o = r.overhead
        table.add_row(*((r.mode,) if modes else ()), *((str(n),) if many else ()), str(r.size),
                      f"{o.ratio:.3f}", _ci(o.ratio_ci95, "{:.3f}"),
                      f"{o.halfwidth_pct:.1f}" if o.halfwidth_pct is not None else "–",
                      f"{o.added:+.2f}" if not modes else f"{o.added:+,.2f}", str(o.rounds),
                      " ".join(short_label(f.code) for f in r.flags) or "–")
    return table


def latency_table(summary: list, state_note: str = "") -> Table | None:
    """`state_note`: the CPUs' state behind the µs (govkit.results.latency_state)."""
    rows = _mode(summary, "latency")
    if not rows:
        return None
    net, many = _with_network(rows), _with_readers(rows)
    tail = FIGURES[tail_p99_key(rows)].name     # which p99 the column holds, said once
    # a `bench --policy` run whose governance protects every RTPS message: each class over
    # the policy's unprotected class too (summary.add_policy_baselines)
    own = next((r.source["vs_policy_baseline"]["reference"] for r in rows
                if r.vs_policy_baseline), None)
    table = Table(title=f"One-way latency (µs): {rows[0].statistic}, with 95% intervals; "
                        "overhead over `none` (same network) as a ratio and as added µs; "
                        f"RTI's published Connext figures beside them; p99*: {tail}"
                        + (f"; {state_note}" if state_note else "")
                        + (f"; × class: over {own}, {POLICY_BASELINE_MEANING}" if own
                           else ""),
                  title_justify="left")
    for col in ("profile", *(("readers",) if many else ()), *(("network",) if net else ()),
                "B", "µs", "95% CI", "p99*", "× none", "95% CI", "+µs", "95% CI",
                *(("× class", "95% CI") if own else ()), "RTI ×", "RTI +µs", "flags"):
        table.add_column(col, justify="left" if col in ("profile", "network", "flags")
                         else "right", no_wrap=col != "flags")
    for r in rows:
        vs, rti = r.vs_none, r.rti
        table.add_row(
            *_named(r, many), *((r.network.label,) if net else ()), str(r.size),
            f"{r.estimate:.1f}", _ci(r.ci95, "{:.1f}"),
            f"{p99:.0f}" if (p99 := tail_p99(r.tail)) is not None else "–",
            f"{vs.ratio:.2f}" if vs and vs.ratio is not None else "–",
            _ci(vs and vs.ratio_ci95, "{:.2f}"),
            f"{vs.added:+.1f}" if vs else "–",
            _ci(vs and vs.added_ci95, "{:+.1f}"),
            *((f"{c.ratio:.2f}" if (c := r.vs_policy_baseline) else "–",
               _ci(c and c.ratio_ci95, "{:.2f}")) if own else ()),
            f"{rti.ratio:.2f}" if rti else "–",
            f"{rti.added_us:+.0f}" if rti else "–", _flags(r))
    return table


def throughput_table(summary: list) -> Table | None:
    rows = _mode(summary, "throughput")
    if not rows:
        return None
    net, many = _with_network(rows), _with_readers(rows)
    lossy = any(r.loss for r in rows)
    cpu = any(r.cpu_per_sample for r in rows)
    table = Table(title=f"Throughput (samples/s): {rows[0].statistic}, with 95% "
                        "intervals; ratio over `none` (same network)"
                        + ("; bytes the publisher retransmitted (injected loss)" if lossy
                           else "")
                        + ("; CPU µs per sample (ping + pong) written at the offered rate, "
                           "and its ratio over `none`" if cpu else ""), title_justify="left")
    for col in ("profile", *(("readers",) if many else ()), *(("network",) if net else ()),
                "B", "samples/s", "95% CI",
                "× none", "95% CI", *(("rexmit B", "rexmit %") if lossy else ()),
                *(("offered/s", "CPU µs", "× none", "95% CI") if cpu else ()), "flags"):
        table.add_column(col, justify="left" if col in ("profile", "network", "flags")
                         else "right", no_wrap=col != "flags")
    for r in rows:
        vs, loss = r.vs_none, r.loss or {}
        rex, share = (loss.get(k) for k in ("retransmitted_bytes", "retransmitted_share_pct"))
        table.add_row(*_named(r, many), *((r.network.label,) if net else ()), str(r.size),
                      f"{r.estimate:,.0f}", _ci(r.ci95, "{:,.0f}"),
                      f"{vs.ratio:.2f}" if vs and vs.ratio is not None else "–",
                      _ci(vs and vs.ratio_ci95, "{:.2f}"),
                      *((f"{rex:,}" if rex is not None else "–",
                         f"{share:.1f}" if share is not None else "–") if lossy else ()),
                      *(_cpu_cells(r) if cpu else ()),
                      _flags(r))
    return table


def _cpu_cells(r: PointSummary) -> tuple[str, str, str, str]:
    if not r.cpu_per_sample:
        return ("–",) * 4
    offered, both = (r.cpu_per_sample.get(k) for k in ("offered_rate_sps", "both"))
    vs = r.cpu_vs_none
    return (f"{offered:,.0f}" if offered else "–",
            f"{both:.2f}" if both is not None else "–",
            f"{vs.ratio:.2f}" if vs and vs.ratio is not None else "–",
            _ci(vs and vs.ratio_ci95, "{:.2f}"))


def cost_table(costs: dict) -> Table:
    """`govkit report RUN --cost-at SIZES`: each profile's modelled cost at each size."""
    table = Table(title="Added cost at your sizes: the run's cost model, fixed + per KiB × "
                        "size (a weighted line through the measured sizes), with 95% "
                        "intervals; 'outside' marks a size beyond those measured "
                        "(an extrapolation)", title_justify="left")
    for col in ("profile", "figure", "B", "added", "95% CI", "fixed", "per KiB", "fit"):
        table.add_column(col, justify="left" if col in ("profile", "figure", "fit")
                         else "right", no_wrap=col != "fit")
    models = {(m["profile"], m["figure"]): m for m in costs["cost_model"]["models"]}
    for at in costs["cost_at"]:
        m = models[(at["profile"], at["figure"])]
        unit = "µs" if at["figure"] == "latency_added_us" else "µs/sample"
        fit = " ".join(short_label(f["code"]) for f in m["flags"])
        table.add_row(at["profile"], f"{'latency' if unit == 'µs' else 'CPU'} ({unit})",
                      f"{at['size']:,}", f"{at['cost']:+.1f}", _ci(at["ci95"], "{:+.1f}"),
                      f"{m['fixed']:+.2f}", f"{m['per_kib']:+.3f}",
                      " ".join(x for x in (fit, "outside" if at["extrapolated"] else "") if x)
                      or "–")
    return table


def network_table(summary: list) -> list[Table]:
    """Seed 003's comparison: rows are profiles (and sizes), one column group per network
    (transport, path, loss), each with the estimate, its interval and its ratio over the
    same profile and size over the run's first network."""
    tables = []
    for mode, unit, fmt in (("latency", "µs", "{:.1f}"), ("throughput", "samples/s",
                                                           "{:,.0f}")):
        rows = _mode(summary, mode)
        nets = sorted(_networks(rows), key=sort_key)    # the reference first
        if len(nets) < 2:
            continue
        table = Table(title=f"{mode.capitalize()} ({unit}) per network, side by side: "
                            f"estimate [95% CI] and × {nets[0].label} (same profile and "
                            "size)", title_justify="left")
        table.add_column("profile", no_wrap=True)
        table.add_column("B", justify="right")
        for n in nets:
            table.add_column(n.label, justify="right", no_wrap=True)
            if n != nets[0]:
                table.add_column(f"× {nets[0].transport}" if n.path == nets[0].path
                                 and n.loss_pct == nets[0].loss_pct else "×",
                                 justify="right", no_wrap=True)
        cells = {(r.profile, r.size, r.network): r for r in rows}
        for profile, size in dict.fromkeys((r.profile, r.size) for r in rows):
            out = [profile, str(size)]
            for n in nets:
                r = cells.get((profile, size, n))
                out.append(f"{fmt.format(r.estimate)} {_ci(r.ci95, fmt)}" if r else "–")
                if n != nets[0]:
                    vs = r and r.vs_network
                    out.append(f"{vs.ratio:.2f} {_ci(vs.ratio_ci95, '{:.2f}')}"
                               if vs and vs.ratio is not None else "–")
            table.add_row(*out)
        tables.append(table)
    return tables


def wire_table(points: list[dict]) -> Table | None:
    """What each captured point's user traffic carried, against its governance."""
    from govkit.wire.verdict import level, readable
    if not points:
        return None
    table = Table(title="On the wire (one extra, unmeasured repeat per point): what the user "
                        "traffic carried, per RTPS message, against the governance",
                  title_justify="left")
    for col in ("profile", "mode", "B", "user msgs", "rtps", "submessages", "payload",
                "readable", "discovery msgs", "verdict"):
        table.add_column(col, justify="right" if col in ("B", "user msgs", "readable",
                                                          "discovery msgs") else "left",
                         no_wrap=col != "verdict")
    for p in points:
        if p["status"] != "ok":
            table.add_row(p["profile"], p["mode"], str(p["size"]), "–", "–", "–", "–", "–",
                          "–", Text("FAILED", style="red"))
            continue
        e, o = p["expected"], p["observed"]
        u = o["user"]
        shown = readable(o)
        name = p["profile"] + ("" if e["profile"] == p["profile"] else f" (as {e['profile']})")
        table.add_row(
            name, p["mode"], str(p["size"]), f"{u['messages']:,}",
            level(u["rtps"], e["rtps"]), level(u["submessage"], e["submessage"]),
            level(u["payload"], e["payload"]),
            f"{shown:,}" + ("" if (shown == 0) == (not e["readable_payload"]) else
                               " (want 0)" if not e["readable_payload"] else " (want >0)"),
            f"{o['discovery']['messages']:,}",
            "match" if p["verdict"] == "match" else Text("MISMATCH", style="red"))
    return table


def leak_table(profiles: dict) -> Table | None:
    """What an eavesdropper reads, per profile (`--leaks`): how many things of each kind
    (govkit.wire.leak_summary; `leak_sentences` says them in words, the report and --json
    in full)."""
    from govkit.wire.leak_entries import KINDS
    rows = [(name, v["leaks"]) for name, v in profiles.items() if v.get("leaks")]
    if not rows:
        return None
    table = Table(title="What an eavesdropper reads: things learned per kind, per profile "
                        "(one captured repeat per point; --json lists each with its "
                        "evidence and frames)", title_justify="left")
    table.add_column("profile", no_wrap=True)
    for kind in KINDS.values():
        table.add_column(kind.title, justify="right")
    for name, leaks in rows:
        table.add_row(name, *(f"{leaks['entries'][k]:,}" if k in leaks["entries"] else
                              "\u2013" for k in KINDS))
    return table


def leak_sentences(profiles: dict) -> list[str]:
    """Each profile's sentence (`--leaks`), as the report and summary.md say it."""
    return [v["leaks"]["sentence"] for v in profiles.values() if v.get("leaks")]


def compare_table(model) -> Table | None:
    """`govkit report A B` in the terminal: per profile and size, each run's latency over
    `none` with its 95 % interval, RTI's published ratio last (govkit.report.compare)."""
    rows = [(profile, row) for profile, group in model.groups if profile.name != BASELINE
            for row in group]
    if not rows:
        return None
    table = Table(title="Latency over `none` (× none, 95% interval), per run; RTI: "
                        "published Connext ratio (single run, no interval)",
                  title_justify="left")
    table.add_column("profile", no_wrap=True)
    table.add_column("B", justify="right")
    for column in model.columns:
        table.add_column(Text(f"{column.run.index}: {column.label}"), justify="right")
    table.add_column("RTI ×", justify="right")
    for profile, row in rows:
        cells = []
        for cell in row.cells:
            vs = cell.point.vs_none if cell.point else None
            if vs is None:
                cells.append(Text(cell.status if cell.status != "ok" else "–"))
                continue
            ci = f" [{_ci(vs.ratio_ci95, '{:.2f}')}]" if vs.ratio_ci95 else " (no interval)"
            cells.append(Text(f"{vs.ratio:.2f}{ci}"))
        table.add_row(Text(profile.name), str(row.size), *cells,
                      f"{row.rti.ratio:.2f}" if row.rti else "–")
    notes = [r.version_note for r in model.runs if r.version_note]
    if notes:
        table.caption, table.caption_justify = "\n".join(notes), "left"
    return table


def discovery_table(summary: list) -> Table | None:
    """`--mode discovery`: per profile, the time until every participant of a group had
    matched every other, its interval, the median and first participant, the ratio; the
    summary's discovery rows as they are (govkit.results.discovery)."""
    rows = _mode(summary, DISCOVERY)
    if not rows:
        return None
    table = Table(title=f"Discovery of {rows[0].discovery.peers} participants started together "
                        "(s): median over groups of the time until every participant had "
                        "matched every other (secure handshakes included), with 95% "
                        "intervals; overhead over `none`, paired by round",
                  title_justify="left")
    for col in ("profile", "groups", "all matched", "95% CI", "median participant",
                "first participant", "× none", "95% CI", "failed"):
        table.add_column(col, justify="left" if col == "profile" else "right")
    for r in rows:
        vs, d = r.vs_none, r.discovery
        times = [f"{t:.3f}" if t is not None else "–"
                 for t in (d.all_matched_s, d.median_participant_s, d.first_participant_s)]
        table.add_row(
            Text(r.profile), str(d.groups), times[0], _ci(r.ci95, "{:.3f}"), *times[1:],
            f"{vs.ratio:.2f}" if vs else "–", _ci(vs and vs.ratio_ci95, "{:.2f}"),
            str(d.failed_groups) if d.failed_groups else "–")
    return table


def variant_table(rows: list[dict]) -> Table | None:
    """--cipher/--rekey: each crypto variant against its profile's reference variant
    (govkit.results.summary.variant_differences), paired by round; RTI's AES pair beside."""
    if not rows:
        return None
    table = Table(title="Crypto variants: median one-way latency (µs) of the reference "
                        "variant and of the arm, their difference (arm − reference) in µs "
                        "and %, paired by round, with 95% intervals; RTI's published "
                        "AES-128 − AES-256 beside (Connext 7.0)", title_justify="left")
    for col in ("arm", "reference", "B", "reference µs", "arm µs", "diff µs", "95% CI",
                "diff %", "95% CI", "rounds", "RTI diff µs", "RTI diff %"):
        table.add_column(col, justify="left" if col in ("arm", "reference") else "right")
    for r in rows:
        rti = r.get("rti")
        table.add_row(
            Text(r["arm"]), Text(r["reference_variant"]), str(r["size"]),
            f"{r['reference_us']:.1f}", f"{r['figure_us']:.1f}", f"{r['difference']:+.2f}",
            _ci(r["difference_ci95"], "{:+.2f}"), f"{r['difference_pct']:+.1f}",
            _ci(r["difference_pct_ci95"], "{:+.1f}"), str(r["rounds"]),
            f"{rti['difference_us']:+.1f}" if rti else "–",
            f"{rti['difference_pct']:+.1f}" if rti else "–")
    return table


def versions_table(rows: list[dict] | None) -> Table | None:
    """A version axis (results.json's `versions`, govkit.results.versions): each profile's
    overhead on each install, over its own install's `none`, and the ratio between them,
    paired by round, with 95% intervals; `none`'s row: each install's latency (µs) and
    their ratio."""
    if not rows:
        return None
    base, other = rows[0]["baseline"], rows[0]["other"]
    modes = len({r["mode"] for r in rows}) > 1
    table = Table(title=f"Version axis, one run: each profile's cost on {base} and on "
                        f"{other} (× its own install's none) and {other} / {base}, paired "
                        f"by round, with 95% intervals; none: one-way µs on each",
                  title_justify="left")
    for col in (*(("mode",) if modes else ()), "B", "profile", base, "95% CI", other,
                "95% CI", f"{other} / {base}", "95% CI", "flags"):
        table.add_column(col, justify="left" if col in ("mode", "profile", "flags")
                         else "right")
    for r in rows:
        between = r.get("other_over_baseline") or {}
        if r["profile"] == BASELINE:
            cells = [_us(r.get("baseline_us")), _ci(r.get("baseline_us_ci95"), "{:.1f}"),
                     _us(r.get("other_us")), _ci(r.get("other_us_ci95"), "{:.1f}")]
        else:
            cells = [x for side in ("baseline_vs_none", "other_vs_none")
                     for x in (_ratio(r.get(side)), _ci((r.get(side) or {}).get("ratio_ci95"),
                                                        "{:.2f}"))]
        table.add_row(*((r["mode"],) if modes else ()), str(r["size"]), Text(r["profile"]),
                      *cells, _ratio(between), _ci(between.get("ratio_ci95"), "{:.2f}"),
                      " ".join(short_label(f["code"]) for f in r["flags"]) or "–")
    return table


def _us(value: float | None) -> str:
    return f"{value:.1f} µs" if value is not None else "–"


def _ratio(overhead: dict | None) -> str:
    return f"{overhead['ratio']:.2f}" if overhead and overhead.get("ratio") is not None \
        else "–"
