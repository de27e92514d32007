"""`govkit report RUN_DIR RUN_DIR …`: bench runs side by side, in compare.html and compare.md.

Typically one `--runner ddsperf` run and one `--runner fastdds` run of the same profiles and
sizes: per profile and size, each run's latency with its overhead over *its own* `none`
(ratio and added µs, each with its 95 % interval), and RTI's published overhead beside them.

Each run is read exactly as `govkit report` reads one (govkit.report.run.build_report_model:
checked by govkit.results.check, every figure recomputed from its raw rows by
govkit.results.summary.summarize); this module only lines the runs' points up, says what may be
compared, and refuses (GovkitError, exit 2) runs that cannot be compared. The templates
(templates/compare.html.j2, compare.md.j2) format the model; govkit.report.plots draws it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from govkit.catalog.profiles import BASELINE, PROFILES
from govkit.catalog.rti_published import DEFAULT_SOURCE, published_overhead
from govkit.catalog.runners import RUNNERS
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.findings import one_line
from govkit.common.fsutil import write_atomic
from govkit.report.model import Figure, Flag, Point, PointRow, ProfileInfo, Published, ReportModel
from govkit.report.run import build_report_model, render, write_report
from govkit.results.record import Run as RunRecord
from govkit.results.record import as_run
from govkit.results.store import RESULTS_NAME, load_results
from govkit.results.versions import runtime_tags
from govkit.runners.network import DEFAULT

HTML_NAME = "compare.html"
MD_NAME = "compare.md"
# Settings and machine facts that must agree for absolute µs to be measured the same way.
_SETTINGS = {"duration_s": "measured seconds per repeat", "warmup_s": "warm-up seconds",
             "min_repeats": "minimum repeats", "max_repeats": "maximum repeats",
             "target_ci_pct": "target interval (±%)", "pin": "pinning",
             "realtime": "real-time priority",
             "cpus_kept_awake": "CPUs kept awake (no idle halt)"}
_MACHINE = {"cpu": "CPU", "cores": "cores", "kernel": "kernel"}


@dataclass(frozen=True)
class RunInfo:
    """One bench run (one results.json), as the comparison names it."""
    index: int                   # 1-based, in the order given
    source: str                  # its directory, as given
    label: str                   # "ddsperf · Cyclone DDS 0.10.2-2", unique among the runs
    implementation: str          # "Cyclone DDS 0.10.2-2"
    model: ReportModel           # as `govkit report` builds it: recomputed from raw rows

    @property
    def anchor(self) -> str:
        return f"run{self.index}"

    @property
    def flagged(self) -> list[Point]:
        """Its latency points with flags (the comparison shows latency only)."""
        return [p for p in self.model.flagged if p.mode == "latency"]

    @property
    def failed_repeats(self) -> int:
        return len(self.model.failures)

    @property
    def version_note(self) -> str:
        """What a version axis run's rows are, and where the ratio between its two installs
        is ("" for a run on one install; govkit.results.versions)."""
        if not self.model.versions:
            return ""
        base, other = self.model.versions[0]["baseline"], self.model.versions[0]["other"]
        return (f"{self.label} ran two installs in one run, {base} and {other}: its row "
                f"PROFILE@{other} is that profile's cost on {other} over {other}'s own none, "
                f"and none@{other} is {other}'s none over {base}'s. The ratio between the "
                f"two installs, per profile with its interval, is in that run's own report "
                f"(report.html and summary.md, \"Two installs\")")

    @property
    def networks(self) -> list[str]:
        """The networks its latency points were measured over, the run's reference first."""
        return [n for n in self.model.networks
                if any(r.network == n for g in self.model.latency for r in g.rows)]


@dataclass(frozen=True)
class RunColumn:
    """One column group: a run's latency points over one network."""
    run: RunInfo
    network: str                 # govkit.runners.network.Network.label

    @property
    def label(self) -> str:
        net = "" if self.network == DEFAULT.label else f" · {self.network}"
        return self.run.label + net


@dataclass(frozen=True)
class CompareRow:
    """One profile and size: its point in each column (status ok, failed or missing)."""
    profile: ProfileInfo
    size: int
    cells: list[PointRow]        # one per column, in column order
    rti: Published | None        # RTI's published overhead for this profile and size


@dataclass
class CompareModel:
    runs: list[RunInfo]
    columns: list[RunColumn]
    groups: list[tuple[ProfileInfo, list[CompareRow]]]   # catalog order, sizes ascending
    sizes: list[int]
    statistic: str               # the runs' latency statistic's exact name ("": they differ)
    machine: list[tuple[str, str]]   # what every run records about its machine, if equal
    differences: list[str]       # settings and machine facts in which the runs differ
    topics: list[str]            # the topics every run's runner uses, if they are the same
    same_governance: bool        # every shared profile has the same governance settings
    published_source: str = DEFAULT_SOURCE
    figures: list[Figure] = field(default_factory=list)

    @property
    def rows(self) -> list[CompareRow]:
        return [row for _, rows in self.groups for row in rows]

    @property
    def path_text(self) -> str:
        texts = list(dict.fromkeys(r.model.path_text for r in self.runs))
        return " and ".join(texts)

    @property
    def statistic_title(self) -> str:
        """The statistic as a column title, or "Latency" when the runs' statistics differ."""
        name = self.statistic.split(" (")[0] or "latency (each run's own statistic)"
        return name[:1].upper() + name[1:]

    @property
    def throughput_runs(self) -> list[str]:
        """Labels of the runs that also measured throughput (not compared here)."""
        return [r.label for r in self.runs if r.model.has_throughput]

    @property
    def flagged_count(self) -> int:
        """Latency points with any flag, over all runs."""
        return sum(len(r.flagged) for r in self.runs)

    @property
    def warned_count(self) -> int:
        """Latency points with a warning, over all runs."""
        return sum(1 for r in self.runs for p in r.flagged if p.warnings)

    @property
    def failed_repeats(self) -> int:
        return sum(r.failed_repeats for r in self.runs)

    @property
    def flag_codes(self) -> list[Flag]:
        """One flag per code present in any run (warnings first), for its advice."""
        seen: dict[str, Flag] = {}
        for r in self.runs:
            for p in r.flagged:
                for f in p.flags:
                    seen.setdefault(f.code, f)
        return sorted(seen.values(), key=lambda f: (not f.warning, f.code))

    def row(self, profile: str, size: int) -> CompareRow | None:
        return next((r for r in self.rows if (r.profile.name, r.size) == (profile, size)),
                    None)


# ---------------------------------------------------------------------- building


def read_run(directory: Path) -> tuple[dict, ReportModel]:
    """A run's parsed results.json and its report model (every figure recomputed)."""
    source = Path(directory) / RESULTS_NAME
    doc = load_results(source)
    return doc, build_report_model(doc, source=str(source))


def build_compare_model(dirs: list[Path]) -> CompareModel:
    """Read every run, refuse what cannot be compared, line their latency points up.

    Raises GovkitError (exit 2), one line, when a run cannot be read, a run is given twice,
    or the runs have no latency point (profile and size) in common."""
    _refuse_same_directory(dirs)
    docs, models = zip(*(read_run(d) for d in dirs), strict=True)
    _refuse_same_run(dirs, docs)
    _refuse_nothing_in_common(dirs, models)
    records = tuple(as_run(doc) for doc in docs)    # each checked by build_report_model
    runs = _runs(dirs, records, models)
    columns = [RunColumn(run, net) for run in runs for net in run.networks]
    profiles = _profiles(models)
    cells = [{(g.profile.name, r.size): r for g in c.run.model.latency for r in g.rows
              if r.network == c.network} for c in columns]
    sizes = sorted({size for found in cells for _, size in found})
    groups = []
    for profile in profiles:
        rows = []
        for size in sizes:
            here = [found.get((profile.name, size)) for found in cells]
            if not any(here):
                continue
            rti = published_overhead(profile.name, size)
            rows.append(CompareRow(
                profile, size, [cell or PointRow(size, "missing", None, network=c.network)
                                for cell, c in zip(here, columns, strict=True)],
                Published(rti["ratio"], rti["added_us"], rti["median_us"]) if rti else None))
        if rows:
            groups.append((profile, rows))
    return CompareModel(runs=runs, columns=columns, groups=groups, sizes=sizes,
                        **_comparability(records, runs, groups))


def _refuse_same_directory(dirs: list[Path]) -> None:
    seen: dict[Path, Path] = {}
    for d in dirs:
        real = Path(d).resolve()
        if real in seen:
            raise GovkitError(f"cannot compare {seen[real]} with {d}: the same run given "
                              "twice", EXIT_USAGE)
        seen[real] = Path(d)


def _refuse_same_run(dirs: list[Path], docs: tuple[dict, ...]) -> None:
    """Two directories holding copies of one run (identical raw rows: the per-repeat
    records, a rotating run's slots and pairs, a discovery run's groups). A rotating run's
    `results` is empty: reading that alone let a copy pass as another run (issue 37)."""
    seen: dict[str, Path] = {}
    for d, doc in zip(dirs, docs, strict=True):
        raw = raw_rows(doc)
        if not any(raw.values()):
            continue
        digest = hashlib.sha256(json.dumps(raw, sort_keys=True).encode()).hexdigest()
        if digest in seen:
            raise GovkitError(f"cannot compare {seen[digest]} with {d}: the same run given "
                              "twice (identical raw rows)", EXIT_USAGE)
        seen[digest] = Path(d)


def raw_rows(doc: dict) -> dict:
    """What a run measured, whatever its design: the rows no two runs share."""
    rotation = doc.get("rotation") or {}
    return {"results": doc.get("results") or [], "slots": rotation.get("slots") or [],
            "pairs": rotation.get("pairs") or [],
            "groups": (doc.get("discovery") or {}).get("groups") or []}


def _attempted(model: ReportModel) -> set[tuple[str, int]]:
    """(profile, size) of every latency point the run measured or tried to."""
    return {(g.profile.name, r.size) for g in model.latency for r in g.rows
            if r.status != "missing"}


def _refuse_nothing_in_common(dirs: list[Path], models: tuple[ReportModel, ...]) -> None:
    common = set.intersection(*(_attempted(m) for m in models))
    if common:
        return
    measured = "; ".join(f"{d}: {_points_text(_attempted(m))}"
                         for d, m in zip(dirs, models, strict=True))
    raise GovkitError(f"cannot compare: no latency point (profile and size) was measured in "
                      f"every run ({measured})", EXIT_USAGE)


def _points_text(points: set[tuple[str, int]]) -> str:
    if not points:
        return "no latency point"
    by_profile: dict[str, list[int]] = {}
    for name, size in sorted(points):
        by_profile.setdefault(name, []).append(size)
    return ", ".join(f"{name} {'/'.join(map(str, sizes))} B"
                     for name, sizes in by_profile.items())


def _runs(dirs: list[Path], records: tuple[RunRecord, ...], models: tuple[ReportModel, ...]
          ) -> list[RunInfo]:
    labels, implementations = [], []
    for run, model in zip(records, models, strict=True):
        info = RUNNERS.get(model.runner)  # the implementation, and where its version is kept
        name, key = (info.implementation, info.environment_key) if info else (model.runner, None)
        version = run.environment.get(key) if key else None
        implementations.append(f"{name} {version}" if version else name)
        others = runtime_tags(dict(run.settings.items))[1:]   # a version axis's other install
        if others:
            implementations[-1] += " and " + ", ".join(map(str, others))
        labels.append(f"{model.runner} · {implementations[-1]}")
    return [RunInfo(i, str(d), label if labels.count(label) == 1 else f"{label} ({d})",
                    impl, model)
            for i, (d, label, impl, model) in enumerate(
                zip(dirs, labels, implementations, models, strict=True), 1)]


def _profiles(models: tuple[ReportModel, ...]) -> list[ProfileInfo]:
    """Every profile of any run, described by the first run that has it; catalog order."""
    found: dict[str, ProfileInfo] = {}
    for m in models:
        for p in m.profiles:
            found.setdefault(p.name, p)
    catalog = {p.name: i for i, p in enumerate(PROFILES)}
    order = list(found)
    return sorted(found.values(), key=lambda p: (catalog.get(p.name, len(catalog)),
                                                 order.index(p.name)))


def _comparability(records: tuple[RunRecord, ...], runs: list[RunInfo],
                   groups: list[tuple[ProfileInfo, list[CompareRow]]]) -> dict:
    """What the runs share (machine, statistic, topics, governance) and, one line each,
    where they differ: CompareModel's fields for the "what may be compared" text."""
    def text(vals: list) -> str:
        return "; ".join(f"{r.label}: {'not recorded' if v is None else v}"
                         for r, v in zip(runs, vals, strict=True))

    machine, differences = [], []
    for key, label in _MACHINE.items():
        vals = [run.environment.get(key) for run in records]
        if len(set(map(str, vals))) > 1:
            differences.append(f"{label}: {text(vals)}")
        elif vals[0] is not None:
            machine.append((label, str(vals[0])))
    for key, label in _SETTINGS.items():
        vals = [run.settings.items.get(key) for run in records]
        if len(set(map(str, vals))) > 1:
            differences.append(f"{label}: {text(vals)}")
    # What the latency repeats really had (read back from /proc per repeat), not what the
    # settings asked for: a runner that ignored the request must not pass for like.
    for what, label in (("scheduling", "scheduling the latency repeats had"),
                        ("cpus", "CPUs the latency repeats ran on")):
        vals = [_recorded(run, what) for run in records]
        if len(set(map(str, vals))) > 1:
            differences.append(f"{label}: {text(vals)}")
    networks = [", ".join(r.networks) for r in runs]
    if len(set(networks)) > 1:
        differences.append(f"networks: {text(networks)}")
    statistics = [r.model.statistic("latency") for r in runs]
    if len(set(statistics)) > 1:
        differences.append(f"latency statistic: {text(statistics)}")
    scopes = [RUNNERS.get(r.model.runner) for r in runs]
    topics = [", ".join(s.topics) if s else None for s in scopes]
    if len(set(topics)) > 1:
        differences.append(f"topics: {text(topics)}")
    unlike = [p.name for p, _ in groups if len({tuple(sorted(q.settings.items()))
                                               for r in runs for q in r.model.profiles
                                               if q.name == p.name and q.listed}) > 1]
    if unlike:
        differences.append("governance settings of " + ", ".join(unlike))
    return {"machine": machine, "differences": differences,
            "statistic": statistics[0] if len(set(statistics)) == 1 else "",
            "topics": list(scopes[0].topics) if len(set(topics)) == 1 and scopes[0] else [],
            "same_governance": not unlike}


def _recorded(run: RunRecord, what: str) -> str | None:
    """'pub fifo, sub fifo': what every completed latency repeat recorded under `what`
    (one value), or the values joined with ' | ' where repeats differ."""
    seen = []
    for r in run.results:
        value = r.stored(what) if r.mode == "latency" and r.ok else None
        if isinstance(value, dict):
            text = ", ".join(f"{k} {v}" for k, v in sorted(value.items()))
            if text not in seen:
                seen.append(text)
    return " | ".join(seen) or None


# ---------------------------------------------------------------------- writing


def render_compare_html(model: CompareModel) -> str:
    if not model.figures:
        from govkit.report.plots import build_compare_figures
        model.figures = build_compare_figures(model)
    return render("compare.html.j2", model.figures, c=model, BASELINE=BASELINE)


def render_compare_md(model: CompareModel) -> str:
    return render("compare.md.j2", c=model, BASELINE=BASELINE)


def _write_comparison(dirs: list[Path], out: Path | None) -> tuple[Path, Path, CompareModel]:
    """compare.html and compare.md for two or more runs, in `out` (default: the first run's
    directory). Nothing is written when the runs cannot be compared (GovkitError, exit 2)."""
    out = Path(out) if out is not None else Path(dirs[0])
    _check_out(out)                   # before a second of work that could not be written
    model = build_compare_model(dirs)
    html, md = render_compare_html(model), render_compare_md(model)
    html_path, md_path = out / HTML_NAME, out / MD_NAME
    write_atomic(html_path, html)
    write_atomic(md_path, md)
    return html_path, md_path, model


def _check_out(out: Path) -> None:
    """--out, refused at once where it cannot become a directory: a file, or a path under
    one."""
    for place in (out, *out.parents):
        if place.exists():
            if not place.is_dir():
                what = "--out" if place == out else f"--out {one_line(out)}:"
                raise GovkitError(f"{what} {one_line(place)}: exists and is not a directory",
                                  EXIT_USAGE)
            return


def write_reports(dirs: list[Path], out: Path | None = None
                  ) -> tuple[Path, Path, CompareModel | None]:
    """`govkit report`: one run's report.html and summary.md beside its results.json, or,
    for two or more runs, their comparison (and its model, for the terminal)."""
    if len(dirs) == 1:
        if out is not None:
            raise GovkitError("--out is for a comparison of two or more runs; a single run's "
                              "report is written beside its results.json", EXIT_USAGE)
        return (*write_report(dirs[0]), None)
    return _write_comparison(dirs, out)
