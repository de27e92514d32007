"""Turn a bench's results.json into report.html (self-contained) and summary.md.

Nothing stored in results.json is taken on trust: `build_report_model` validates the raw
rows, recomputes the whole summary from them (govkit.results.summary.summarize) and every repeat's
figures (govkit.results.stats.repeat_figures), says so if the stored figures differ, and reduces
it all to the plain dataclasses of govkit.report.model. The templates
(templates/report.html.j2, templates/summary.md.j2) only format what the model holds, and
the plots (govkit.report.plots) only draw it.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment
from markupsafe import Markup

from govkit.catalog.measures import DEFAULT_PATH, DISCOVERY, MODES, PATH_WORDS
from govkit.catalog.profiles import BASELINE, PROFILES
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.fsutil import write_atomic
from govkit.common.templating import template_environment
from govkit.report.model import (
    DASH,
    FORMATTERS,
    MAX_REPEAT_ROWS,
    Column,
    Comparison,
    CostCell,
    Failure,
    Figure,
    Flag,
    FloorRow,
    Governance,
    Headline,
    Point,
    PointRow,
    ProfileInfo,
    ProfileRows,
    Published,
    Relative,
    RepeatRow,
    RepeatTable,
    ReportModel,
    Run,
    SignedFile,
    first_line,
    fmt_ci,
    fmt_size,
    fmt_value,
    fmt_values,
    md_cell,
    md_code,
    md_finalize,
    setting_text,
    shorten_long_texts,
    shown_rows,
    shown_text,
    wbr,
)
from govkit.report.plot_process import Plotter
from govkit.report.plots import build_figures
from govkit.report.rows_html import repeat_rows, run_rows
from govkit.report.wire_section import MAX_WIRE_ROWS, WireMalformed, build_wire_section
from govkit.results import stats
from govkit.results.check import SCHEMA, Malformed, json_excerpt, load_run
from govkit.results.cost_model import (
    LATENCY_ADDED,
    cost_models,
    predict,
    reader_cost_models,
    stored,
)
from govkit.results.figures import FIGURES
from govkit.results.flags import CPU_LANE_FLAGS, flag_advice, short_label
from govkit.results.gates import run_gates
from govkit.results.latency_state import latency_state_note
from govkit.results.paired import ESTIMATOR, is_baseline_arm
from govkit.results.point import Flag as PointFlag
from govkit.results.point import NoiseFloorRow, PointSummary, as_points
from govkit.results.point import Published as PointPublished
from govkit.results.point import Relative as PointRelative
from govkit.results.record import Repeat, Rotation, RotationConfig, RunSettings, as_run
from govkit.results.record import Run as RunRecord
from govkit.results.store import RESULTS_NAME, load_results
from govkit.results.summary import (
    Summarizer,
    base_profile,
    flagged_points,
    load_line,
    noise_floor,
    policy_baseline,
    rerun_term_line,
    rotation_overheads,
    summarize,
    variant_differences,
)
from govkit.results.versions import run_versions
from govkit.runners.network import Network
from govkit.runners.network import sort_key as network_order

__all__ = ["HTML_NAME", "RESULTS_NAME", "SCHEMA", "SUMMARY_NAME", "build_report_model",
           "load_results", "render", "render_html", "render_summary_md", "write_report"]

HTML_NAME = "report.html"
SUMMARY_NAME = "summary.md"

# Environment keys shown first, with labels; any other key follows in document order.
_ENV_LABELS = {
    "cpu": "CPU", "cpu_crypto": "CPU crypto extensions", "cores": "Cores",
    "usable_cpus": "Usable CPUs", "kernel": "Kernel",
    "cyclonedds": "Cyclone DDS", "fastdds": "Fast DDS (libfastrtps)",
    "fastdds_perf": "fastdds_perf build", "openssl": "OpenSSL", "govkit": "govkit",
    "python": "Python",
}
# Governance settings that tell profiles apart; always shown as columns, in this order.
_KEY_SETTINGS = {
    "rtps_protection_kind": "whole RTPS message",
    "metadata_protection_kind": "submessages (metadata)",
    "data_protection_kind": "serialized payload",
    "allow_unauthenticated_participants": "unauthenticated peers may join",
}
# Per-repeat columns per row format: the figures it yields, named by results.figures.
_REPEAT_COLUMNS = {name: [Column(k, FIGURES[k].titled(), FIGURES[k].kind) for k in fmt.figures]
                   for name, fmt in stats.ROW_FORMATS.items()}
_REPEAT_VALUES = {"latency-per-second": ("Measured per-second medians (µs), in time order",
                                         "us"),
                  "throughput-per-second": ("Measured per-second rates (samples/s), in time "
                                            "order", "rate")}


# ---------------------------------------------------------------------- building


def build_report_model(doc: Any, source: str = RESULTS_NAME) -> ReportModel:
    """Validate a parsed results.json, recompute its figures from the raw rows and reduce
    it to what the report shows.

    Raises GovkitError (exit 2) naming `source` and the first thing that is wrong. Texts
    longer than a page shows are shortened in `doc` itself (model.shorten_long_texts).
    """
    shortened = shorten_long_texts(doc)
    try:
        run = load_run(doc)       # checked, then read as records that refuse bad values
        try:
            wire = build_wire_section(doc)       # first: its errors name the wire record
        except WireMalformed as e:
            raise Malformed(str(e)) from None
    except Malformed as e:
        raise GovkitError(f"{source}: {e}", EXIT_USAGE) from None
    # the headline reuses its paired overheads; the bootstraps in one worker per CPU
    summarizer = Summarizer(parallel=True)
    summarizer.wire_verdicts = wire.verdicts if wire is not None else {}
    summary = summarize(run, summarizer)
    model = _build(run, summary, summarizer.records)
    model.shortened_texts = shortened
    model.wire = wire
    model.headline = headline(run, summary, summarizer)
    model.cost_models = cost_models(run)["models"] if run.rotation else []
    # flags as the terminal and summary.md name them (govkit.results.flags)
    model.versions = [{**r, "shown_flags": [
        {"short": short_label(f["code"]), "warning": f["severity"] == "warning",
         "reason": f["reason"]} for f in r["flags"]]}
        for r in run_versions(run, summarizer.overheads)]
    model.runtimes_said = [(f"{p.arm} pair {p.instance}" + (f" (domain {p.domain_id})"
                                                           if p.domain_id is not None else ""),
                            p.error) for p in (run.rotation.pairs if run.rotation else ())
                           if p.error]
    model.security_events = security_event_rows(doc)
    _add_floor_and_gates(model, run, summary, summarizer.overheads)
    return model


def security_event_rows(doc: Any) -> list[dict]:
    """results.json's security_events as the page shows them: each value text (the
    template escapes it), the side named as ping or pong."""
    events = doc.get("security_events") if isinstance(doc, dict) else None
    rows = []
    for e in events if isinstance(events, list) else []:
        if not isinstance(e, dict):
            continue
        text = {k: "" if e.get(k) is None else str(e[k])
                for k in ("runtime", "profile", "domain_id", "kind", "topic", "participant",
                          "reason", "count")}
        text["side"] = {"pub": "ping", "sub": "pong"}.get(e.get("role"), str(e.get("role")))
        rows.append(text)
    return rows


def _add_floor_and_gates(model: ReportModel, run: RunRecord, summary: list[dict],
                         overheads: dict) -> None:
    """The A/A rows' flags among the page's flags and in its advice, as the terminal's
    closing lines and --fail-on-flag read them (results.flagged_points); the gates'
    verdict recomputed (govkit.results.gates.run_gates), and said if the stored one
    differs."""
    floor = noise_floor(run, overheads) + noise_floor(run, overheads, mode="throughput")
    model.floor_flagged = [FloorRow(r.mode, r.size, [_flag(f) for f in r.flags],
                                    f"floor-flags-{i}")
                           for i, r in enumerate(map(NoiseFloorRow.from_json, floor)) if r.flags]
    points = [row for row, p in zip(summary, as_points(summary), strict=True)
              if p.mode != DISCOVERY]
    model.advice = flag_advice(flagged_points(points, floor))
    model.gates = run_gates(run, summary, overheads, model.versions)
    stored = run.stored_gates
    if stored is not None and json.loads(json.dumps(model.gates)) != stored:
        model.stored_summary.append("the gates' stored verdict "
                                    f"({json_excerpt(stored)}) is not the recomputed one")


def _build(run: RunRecord, summary: list[dict], records: list[Repeat]) -> ReportModel:
    """The report's model from the run, its summary and its records (results.all_records:
    for a rotating run, one record per profile, size and process pair)."""
    profiles = {p.name: ProfileInfo.of(p) for p in run.profiles}
    settings = run.settings
    repeats = [_repeat_row(r) for r in records]          # each repeat's figures, once
    figures_of: dict[tuple, list[dict]] = {}             # ok repeats' figures by point
    for r in repeats:
        if r.ok:
            figures_of.setdefault(r.key, []).append(r.figures)
    stored, missing = _stored_differences(run, summary, repeats)    # every row, discovery's
    rows = as_points(summary)
    discovery = [p.source for p in rows if p.mode == DISCOVERY]
    summary = [p.source for p in rows if p.mode != DISCOVERY]
    points = [_point(p, i, figures_of) for i, p in enumerate(p for p in rows
                                                              if p.mode != DISCOVERY)]
    by_key: dict[tuple, list[Repeat]] = {}
    for r in records:
        by_key.setdefault(r.point_key, []).append(r)
    for name, *_ in by_key:
        base = profiles.get(base_profile(name))
        if name not in profiles and base is not None and "@" in name:
            # a crypto variant's arm: its profile's governance, under the arm's name
            profiles[name] = ProfileInfo(name, f"{base.title} ({name.split('@', 1)[1]})",
                                         base.security, [], base.settings)
    for name, *_ in by_key:
        if name not in profiles:          # a result whose profile is not described
            profiles[name] = ProfileInfo(name, "", name != BASELINE, [], {},
                                         listed=False)
    order = _profile_order(profiles)
    tables = {mode: _point_rows(mode, order, points, by_key, settings) for mode in MODES}
    nets = sorted({Network(*k[3:]) for k in by_key}, key=network_order)
    runs = sorted((Run(r.profile, r.mode, r.size, r.repeat, r.order, r.status,
                       list(r.commands), r.network.label) for r in records),
                  key=lambda r: (r.order is None, r.order or 0, r.profile, r.mode, r.size,
                                 r.repeat))
    rank = {p.name: i for i, p in enumerate(order)}
    failures = sorted((_failure(r) for r in records if not r.ok),
                      key=lambda f: (rank[f.profile], f.mode, f.size, f.repeat))
    env = run.environment
    environment = [(label, crypto_text(env[key]) if key == "cpu_crypto"
                    else setting_text(env[key]))
                   for key, label in _ENV_LABELS.items() if env.get(key) is not None]
    environment += [(key, setting_text(v)) for key, v in env.items()
                    if key not in _ENV_LABELS and v is not None]
    return ReportModel(
        schema=run.schema, created=run.created or DASH,
        command=run.command or DASH, runner=run.runner or DASH,
        environment=environment,
        settings=[(k, setting_text(v)) for k, v in settings.items.items()
                  if k not in ("method", "interval", "crypto") and v is not None],
        method=settings.method,
        interval=_interval_text(settings, summary, run.rotation),
        run_shape=_run_shape(settings, run.rotation),
        profiles=order, sizes=sorted({row.size for row in tables["latency"][0].rows})
        if tables["latency"] else [],
        points=points, latency=tables["latency"], throughput=tables["throughput"],
        repeat_tables=[t for mode in MODES if (t := _repeat_table(mode, order, records,
                                                                  repeats))],
        runs=runs, failures=failures,
        signed_files=[SignedFile(f.get("profile") or "", f["path"], f["sha256"])
                      for f in run.signed_files],
        governance=_governance(order), advice=flag_advice(summary),
        stored_summary=stored, stored_summary_missing=missing, result_count=len(records),
        networks=[n.label for n in nets] or ["udp lo"],
        comparisons=[c for mode in MODES if (c := _comparison(mode, order, points, nets))],
        path_text=_path_text(nets), discovery=discovery,
        variants=variant_differences(summary),
        crypto_defaults=settings.crypto.get("defaults") or "",
        awake_note=latency_state_note(run))


def _interval_text(settings: RunSettings, summary: list[dict], rotation: Rotation | None
                   ) -> str:
    """How the intervals were computed, as the run recorded it: a run whose every point
    was rotated, the rotation's method alone (its settings also describe the "other
    points" it could have had, or, before govkit recorded both, those alone); and, when
    some point's interval was resampled from a subsample of its values or with fewer
    resamples (recomputed by this govkit, govkit.results.stats.thinned and
    resamples_for), the sentence saying so if the recorded text lacks it."""
    text = settings.interval
    rows = as_points(summary)
    if rotation and rotation.interval and rows and all(p.rotated for p in rows):
        text = rotation.interval
    reasons = [f.reason for p in rows for f in p.flags if f.code == "subsampled_interval"]
    if reasons and stats.SUBSAMPLE_METHOD not in text:
        text = f"{text} {stats.SUBSAMPLE_METHOD}".strip()
    if any(stats.FEWER_RESAMPLES_NOTE in r for r in reasons) and \
            stats.FEWER_RESAMPLES_METHOD not in text:
        text = f"{text} {stats.FEWER_RESAMPLES_METHOD}"
    return text


def _path_text(nets: list[Network]) -> str:
    return " and ".join(dict.fromkeys(PATH_WORDS.get(n.path, n.path) for n in nets)) or \
        PATH_WORDS[DEFAULT_PATH]


def _comparison(mode: str, order: list[ProfileInfo], points: list[Point],
                nets: list[Network]) -> Comparison | None:
    """Seed 003's side-by-side table, when a mode was measured over several networks."""
    mine = [p for p in points if p.mode == mode]
    labels = [n.label for n in nets if any(p.network == n.label for p in mine)]
    if len(labels) < 2:
        return None
    found = {(p.profile, p.size, p.network): p for p in mine}
    rows = [(profile, size, [found.get((profile.name, size, label)) for label in labels])
            for profile in order
            for size in sorted({p.size for p in mine if p.profile == profile.name})]
    return Comparison(mode, labels, rows)


def _profile_order(profiles: dict[str, ProfileInfo]) -> list[ProfileInfo]:
    """Catalog order (as govkit.results.summary.summarize), then described ones, then the rest."""
    catalog = {p.name: i for i, p in enumerate(PROFILES)}
    listed = {name: i for i, name in enumerate(profiles)}

    def key(p: ProfileInfo):    # a crypto variant's arm right after its profile
        base = base_profile(p.name)
        return (not p.listed, catalog.get(base, 99),
                listed[base] if base in listed else listed[p.name], p.name)
    return sorted(profiles.values(), key=key)


def _flag(f: PointFlag) -> Flag:
    return Flag(f.code, f.severity, f.reason)


def _relative(vs: PointRelative | None) -> Relative | None:
    return Relative(vs.ratio, vs.ratio_ci95, vs.added, vs.added_ci95) if vs else None


def _point(p: PointSummary, index: int, figures_of: dict[tuple, list[dict]]) -> Point:
    extra = {}
    if p.mode == "throughput":   # summed over the point's completed repeats
        mine = figures_of.get((p.profile, p.mode, p.size, *p.network.key), [])
        for key in ("stalled_seconds", "lost"):
            found = [f[key] for f in mine if f.get(key) is not None]
            extra[key] = int(sum(found)) if found else None
        extra["cpu"] = p.cpu_per_sample
    return Point(
        profile=p.profile, mode=p.mode, size=p.size, statistic=p.statistic,
        estimate=p.estimate, ci95=p.ci95, repeats=p.repeats,
        failed_repeats=p.failed_repeats, seconds=p.seconds,
        p99_median_of_seconds=p.tail.p99_median_of_seconds,
        p99_worst_second=p.tail.p99_worst_second, vs_none=_relative(p.vs_none),
        rti=Published(p.rti.ratio, p.rti.added_us, p.rti.median_us) if p.rti else None,
        flags=[_flag(f) for f in p.flags], anchor=f"flags-{index}", network=p.network.label,
        vs_network=_relative(p.vs_network), loss=p.loss,
        p99_of_samples=p.tail.p99_of_samples, **extra)


def headline(run: RunRecord | dict, summary: list[dict],
             summarizer: Summarizer | None = None) -> Headline | None:
    """The cost matrix of a rotating run (None for a per-repeat run): every profile's
    overhead ratio and added µs per size, with intervals, RTI's ratio, the A/A floor, the
    time to match, and how quiet the machine was."""
    run = as_run(run)
    rot = run.rotation
    if rot is None:
        return None
    points = [p for p in as_points(summary) if p.rotated]
    rows = [p for p in points if p.mode == "latency"]
    sizes = sorted({r.size for r in rows})
    names = list(dict.fromkeys(r.profile for r in rows if not is_baseline_arm(r.profile)))
    tput = {(r.profile, r.size): r for r in points if r.mode == "throughput"}

    def cell(vs: PointRelative | None, rti: PointPublished | None, flags=(), key=None
             ) -> CostCell | None:
        if not vs:
            return None
        t = tput.get(key)
        own = by[key].vs_policy_baseline if key in by else None
        tv, cv = (t.vs_none, t.cpu_vs_none) if t else (None, None)
        # the throughput point's warnings are about its rate, except the CPU lane's own
        t_warn = {f.code for f in t.flags if f.warning} if t else set()
        return CostCell(vs.ratio, vs.ratio_ci95, vs.added, vs.added_ci95,
                        rti.ratio if rti else None, any(f.warning for f in flags),
                        (tv.ratio, tv.ratio_ci95) if tv else None,
                        (cv.ratio, cv.ratio_ci95) if cv else None,
                        throughput_warned=bool(tv) and bool(t_warn - CPU_LANE_FLAGS),
                        cpu_warned=bool(cv) and bool(t_warn & CPU_LANE_FLAGS),
                        policy_baseline=(own.ratio, own.ratio_ci95) if own else None)
    by = {(r.profile, r.size): r for r in rows}
    match: dict[str, list[float]] = {}
    for pair in rot.pairs:
        if pair.ok and pair.time_to_match_s is not None:
            match.setdefault(pair.arm, []).append(pair.time_to_match_s)
    table = [(name, [cell(by[(name, s)].vs_none, by[(name, s)].rti, by[(name, s)].flags,
                          (name, s)) if (name, s) in by else None for s in sizes],
              statistics.median(match[name]) if match.get(name) else None) for name in names]
    overheads = summarizer.overheads if summarizer is not None and summarizer.overheads \
        else rotation_overheads(run)      # (summarize's, when it has them)
    floor = {f.size: f for f in map(NoiseFloorRow.from_json, (
        r for r in noise_floor(run, overheads) if r.get("readers", 1) == 1))}
    return Headline(
        sizes=sizes, rows=table,
        floor=[cell(floor[s].overhead, None, floor[s].flags) if s in floor else None
               for s in sizes],
        floor_flags=list(dict.fromkeys(f.reason for x in floor.values() for f in x.flags)),
        load=load_line(run) or "not recorded",
        under_load=any(x.under_load for x in run.load),
        # the figures are recomputed from the raw slots by today's estimator: name that one,
        # not the one the run recorded
        rounds=len(rot.rounds), estimator=ESTIMATOR, rerun_term=rerun_term_line(run),
        policy_reference=policy_baseline(run), per_reader=per_reader_rows(run, sizes))


def per_reader_rows(run: RunRecord, sizes: list[int]) -> list[tuple[str, list[dict | None]]]:
    """The cost matrix's "per reader" figure (govkit bench --readers): per profile and
    size, how its added latency grows per reader (govkit.results.cost_model)."""
    found = reader_cost_models(run)
    if found is None:
        return []
    models = {(m["profile"], m["size"]): m for m in found["models"]
              if m["figure"] == LATENCY_ADDED}
    names = list(dict.fromkeys(name for name, _ in models))
    return [(name, [models.get((name, s)) for s in sizes]) for name in names]


def _point_rows(mode: str, order: list[ProfileInfo], points: list[Point],
                by_key: dict[tuple, list[Repeat]], settings: RunSettings
                ) -> list[ProfileRows]:
    """Every profile × network × size of `mode` that was asked for or measured, with its
    status."""
    measured = [key for key in by_key if key[1] == mode]
    if not measured:
        return []
    asked = settings.sizes if mode in settings.modes else ()
    sizes = sorted({*asked, *(key[2] for key in measured)})
    nets = sorted({Network(*key[3:]) for key in measured}, key=network_order)
    found = {(p.profile, p.size, p.network): p for p in points if p.mode == mode}
    names = {key[0] for key in measured}
    out = []
    for profile in order:
        if profile.name not in names:
            continue
        rows = []
        for net in nets:
            for size in sizes:
                failed = [r for r in by_key.get((profile.name, mode, size, *net.key), [])
                          if not r.ok]
                errors = tuple(dict.fromkeys(first_line(r.error) or r.status
                                             for r in failed))
                point = found.get((profile.name, size, net.label))
                status = "ok" if point else "failed" if failed else "missing"
                rows.append(PointRow(size, status, point, len(failed), errors, net.label))
        out.append(ProfileRows(profile, rows))
    return out


def _repeat_table(mode: str, order: list[ProfileInfo], records: list[Repeat],
                  repeats: list[RepeatRow]) -> RepeatTable | None:
    mine = [r for r in repeats if r.mode == mode]
    if not mine:
        return None
    formats = [r.format for r in records if r.mode == mode and r.ok]
    name = formats[0] if formats else f"{mode}-per-second"
    values_title, values_kind = _REPEAT_VALUES.get(name, (None, "us"))
    blocks = []
    by_profile: dict[str, list[RepeatRow]] = {}
    for r in mine:
        by_profile.setdefault(r.profile, []).append(r)
    for profile in order:
        rows = by_profile.get(profile.name)
        if rows:
            rows = sorted(rows, key=lambda r: (network_order(Network(*r.net_key)), r.size,
                                               r.repeat))
            shown = shown_rows(rows, MAX_REPEAT_ROWS, lambda r: not r.ok, lambda r: r.key)
            blocks.append((profile, shown, len(rows) - len(shown)))
    return RepeatTable(mode, _REPEAT_COLUMNS[name], values_title, values_kind, blocks)


def _repeat_row(r: Repeat) -> RepeatRow:
    roles = sorted(r.cpus, key=lambda role: (role not in ("pub", "sub"), role))
    common = {"profile": r.profile, "mode": r.mode, "size": r.size, "repeat": r.repeat,
              "order": r.order, "status": r.status, "error": r.error,
              "cpus": ", ".join(f"{role} {r.cpus[role] or '?'}" for role in roles) or DASH,
              "net_key": r.network.key, "network": r.network.label}
    if not r.ok:
        return RepeatRow(**common)
    figures, count = stats.repeat_figures(r)
    values = stats.repeat_values(r) if stats.row_format(r.format).value_key else []
    return RepeatRow(**common, figures=figures, count=count, values=values)


def _failure(r: Repeat) -> Failure:
    return Failure(r.profile, r.mode, r.size, r.repeat, r.status,
                   r.error or f"status {r.status!r} (no error message recorded)",
                   [(role, text) for role, text in r.output_tail.items() if text],
                   r.network.label)


def _label(profile: Any, mode: Any, size: Any, network: Any = "udp lo",
           repeat: Any = None) -> str:
    net = "" if network == "udp lo" else f" over {network}"
    return f"{profile} {mode} {size} B{net}" + ("" if repeat is None else f" repeat {repeat}")


def _stored_key(s: dict) -> tuple[str, ...]:
    """A summary row's point, as text (a stored row may hold anything: the checker does
    not read the stored summary, this only compares it)."""
    loss = s.get("loss_pct", 0)
    if isinstance(loss, int | float) and not isinstance(loss, bool):
        net = Network(str(s.get("transport", "udp")), str(s.get("path", "lo")), loss).label
    else:
        net = f"{s.get('transport', 'udp')} {s.get('path', 'lo')} loss {json_excerpt(loss)}"
    return (*(str(s.get(k)) for k in ("profile", "mode", "size")), net)


def _stored_differences(run: RunRecord, summary: list[dict], repeats: list[RepeatRow]
                        ) -> tuple[list[str], bool]:
    """Where the figures stored in results.json differ from the recomputed ones (one text
    per point or repeat), and whether it stores no summary at all."""
    fresh = json.loads(json.dumps(summary))           # as stored: lists, not tuples
    stored = run.stored_summary
    out = []
    if stored in (None, []):
        missing = bool(fresh)
    elif not isinstance(stored, list):
        out.append(f"the stored summary is {json_excerpt(stored)}, not a list of points")
        missing = False
    else:
        missing = False
        by_key = {}
        for s in stored:
            if isinstance(s, dict):
                by_key[_stored_key(s)] = s
            else:
                out.append(f"a stored summary entry is {json_excerpt(s)}, not an object")
        for row in fresh:
            s = by_key.pop(_stored_key(row), None)
            label = _label(*_stored_key(row))
            if s is None:
                out.append(f"{label}: not in the stored summary")
            elif s != row:
                fields = [k for k in row if s.get(k) != row[k]] + [k for k in s if k not in row]
                out.append(f"{label}: {', '.join(fields)}")
        out += [f"{_label(*key)}: stored, but no completed repeat gives it" for key in by_key]
    stored_repeats = run.results     # rotation records (after them) store no figures
    for r, fresh_repeat in zip(stored_repeats, repeats[:len(stored_repeats)], strict=True):
        key = "latency_us" if r.mode == "latency" else "throughput"
        if not r.ok or not {key, "count"} & r.source.keys():
            continue
        figures, count = fresh_repeat.figures, fresh_repeat.count
        if r.stored(key, figures) != figures or r.stored("count", count) != count:
            label = _label(r.profile, r.mode, r.size, r.network.label, r.repeat)
            out.append(f"{label}: per-repeat figures")
    return out, missing


def _arm_rounds_note(config: RotationConfig) -> str:
    """Since 2026-12-02 an arm keeps its slots until it has this many rounds (older runs
    do not record it, and did not do it)."""
    n = config.min_arm_rounds
    return f" with fewer than {n} rounds or" if isinstance(n, int) else ""


def _tput_slot_note(config: RotationConfig) -> str:
    """A throughput slot's length where it is not the latency slots' (rotation settings;
    runs before 2026-12-02 used --slot-ms for both and do not say)."""
    ms = config.throughput_slot_ms if config.throughput_slot_ms is not None \
        else config.slot_ms
    return f" ({ms} ms in throughput slots)" if ms != config.slot_ms else ""


def _text_or(value: Any, absent: str = "?") -> str:
    return absent if value is None else setting_text(value)


def _run_shape(settings: RunSettings, rotation: Rotation | None = None) -> str:
    """How the repeats were run, in one plain sentence, from the run's settings."""
    seed = _text_or(settings.seed)
    parts = []
    said = [setting_text(v) for v in (settings.pinning, settings.idle) if v is not None]
    if list(settings.modes) == ["discovery"]:
        return (f"Discovery only: groups of participants started together, `none X none Y "
                f"…` per round in a fresh seeded order (seed {seed}), not "
                f"pinned and at normal priority (more processes than CPUs).")
    if rotation:
        r = rotation.config
        tput = rotation.throughput
        what = "Latency and throughput" if tput else "Latency"
        parts.append(
            f"{what} by rotation: {_text_or(r.instances)} long-lived process pairs per "
            f"profile and for the A/A arm, each started once and timed to match; "
            f"{len(rotation.rounds)} rounds, each giving every arm one slot of "
            f"{_text_or(r.settle_ms)} ms settle (not measured) + {_text_or(r.slot_ms)} ms "
            f"per size{' and mode' if tput else ''}"
            f"{_tput_slot_note(r) if tput else ''} between two `none` slots, in a fresh "
            f"seeded order (seed {seed}); after {_text_or(r.min_rounds)} "
            f"rounds only the ratios{_arm_rounds_note(r)} still wider than "
            f"±{_text_or(r.target_ci_pct)}% got slots, until all were within it or the "
            f"budget ended.")
        if tput or "throughput" not in settings.modes:
            return " ".join(parts) + "".join(f" {t[:1].upper()}{t[1:]}." for t in said)
    if settings.min_repeats is not None:
        least = setting_text(settings.min_repeats)
        most = _text_or(settings.max_repeats, least)
        more = (f" (up to {most} while its 95% interval was wider than "
                f"±{setting_text(settings.target_ci_pct)}% of the estimate)"
                if settings.target_ci_pct is not None and most != least else "")
        seeded = f" (seed {seed})" if settings.seed is not None else ""
        parts.append(f"Each point ran {least} repeats{more}, all points "
                     f"interleaved in a shuffled order{seeded}")
    if settings.duration_s is not None:
        parts.append(f"each repeat recorded {_text_or(settings.warmup_s, '0')} s of warm-up "
                     f"(kept, not measured), then {setting_text(settings.duration_s)} s "
                     "measured")
    parts += said
    return "; ".join(parts) + "." if parts else ""


def crypto_text(extensions: Any) -> str:
    """results.json's environment.cpu_crypto (name → present) as the report says it:
    "AES-NI, VAES, SHA (no AVX-512)"."""
    if not isinstance(extensions, dict):
        return setting_text(extensions)
    have = [str(k) for k, v in extensions.items() if v is True]
    lack = [str(k) for k, v in extensions.items() if v is not True]
    return (", ".join(have) or "none of them") + (f" (no {', '.join(lack)})" if lack else "")


def _governance(profiles: list[ProfileInfo]) -> Governance:
    secured = [p for p in profiles if p.security and p.settings]
    keys = list(dict.fromkeys(k for p in secured for k in p.settings))
    varying = [k for k in keys
               if len({p.settings.get(k) for p in secured}) > 1 or k in _KEY_SETTINGS]
    columns = [k for k in _KEY_SETTINGS if k in varying]
    columns += sorted(k for k in varying if k not in _KEY_SETTINGS)
    common = [(k, secured[0].settings[k]) for k in keys if k not in columns]
    return Governance(columns, common, profiles)


# ---------------------------------------------------------------------- rendering


@cache
def report_environment(markdown: bool = False) -> Environment:
    """The report templates' environment. HTML (*.html.j2) is autoescaped as HTML; Markdown
    (*.md.j2) is escaped for Markdown by default: every `{{ … }}` goes through
    model.md_finalize unless it is Markdown already (a Markup: the md and mdcode filters,
    the number formatters below, a macro's output), so a value from results.json cannot
    become HTML, a link or a broken table in summary.md or compare.md, whatever the
    template forgets."""
    env = template_environment(trim_blocks=True)
    filters = {**FORMATTERS, "ci": fmt_ci, "value": fmt_value, "values": fmt_values}
    if markdown:
        env = env.overlay(autoescape=True, finalize=md_finalize)
        # numbers only (their format specs refuse anything else): Markdown as they are
        filters = {name: _markdown_already(f) for name, f in filters.items()}
        filters.update(md=_markdown_already(md_cell), mdcode=_markdown_already(md_code))
    env.filters.update({**filters, "wbr": wbr, "size": fmt_size, "first_line": first_line})
    env.globals.update(DASH=DASH, hints=_KEY_SETTINGS, max_wire_rows=MAX_WIRE_ROWS,
                       repeat_rows=repeat_rows,
                       run_rows=run_rows, max_repeat_rows=MAX_REPEAT_ROWS)
    return env


def _markdown_already(fmt: Callable[..., str]) -> Callable[..., Markup]:
    """A filter whose text is written into Markdown as it is (not escaped again)."""
    return lambda *args: Markup(fmt(*args))


def render(template: str, figures: Iterable[Figure] = (), **context: Any) -> str:
    """One of the report templates (templates/*.html.j2, *.md.j2) with the report's filters;
    `figures` become the page's inline SVGs, by key. Markdown templates escape every value
    for Markdown (see report_environment)."""
    svgs = {f.key: {**f.__dict__, "svg": Markup(f.svg)} for f in figures}
    env = report_environment(markdown=template.endswith(".md.j2"))
    return shown_text(env.get_template(template).render(figures=svgs, **context))


def render_html(model: ReportModel) -> str:
    if not model.figures:
        model.figures = build_figures(model)
    return render("report.html.j2", model.figures, m=model)


def render_summary_md(model: ReportModel) -> str:
    return render("summary.md.j2", m=model)


def costs_at(results_dir: Path, sizes: list[int]) -> dict:
    """`govkit report RUN --cost-at SIZES`: the run's cost model (checked and recomputed
    from its raw slots) and each profile's modelled cost at each size, with intervals."""
    source = Path(results_dir) / RESULTS_NAME
    try:
        run = load_run(load_results(source))
    except Malformed as e:
        raise GovkitError(f"{source}: {e}", EXIT_USAGE) from None
    models = cost_models(run) if run.rotation else {"method": "", "models": []}
    if not models["models"]:
        raise GovkitError(f"{source}: no cost model: it needs a rotating run (the default "
                          "runner) over two or more sizes", EXIT_USAGE)
    return {"cost_model": stored(models),
            "cost_at": [predict(m, size) for m in models["models"] for size in sizes]}


def write_report(results_dir: Path) -> tuple[Path, Path]:
    """Read results_dir/results.json; write report.html and summary.md beside it (atomically).

    Returns (report.html, summary.md). Raises GovkitError (exit 2) if results.json is
    missing or malformed; nothing is written in that case.
    """
    results_dir = Path(results_dir)
    source = results_dir / RESULTS_NAME
    with Plotter() as plotter:      # imports matplotlib while this process reads the run
        model = build_report_model(load_results(source), source=str(source))
        # the plots draw no wire part: the plotter is sent the model without it (20,000
        # captured points took seconds to pickle and unpickle there; issue 37)
        model.figures = plotter.figures(replace(model, wire=None))
    html = render("report.html.j2", model.figures, m=model)
    md = render_summary_md(model)
    html_path, md_path = results_dir / HTML_NAME, results_dir / SUMMARY_NAME
    write_atomic(html_path, html)
    write_atomic(md_path, md)
    return html_path, md_path
