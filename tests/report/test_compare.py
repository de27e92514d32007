"""govkit.report.compare (`govkit report RUN_DIR RUN_DIR …`): every number on compare.html and
compare.md is the one govkit.results.summary.summarize recomputes from each run's raw rows, and
runs that cannot be compared are refused with one line (exit 2), writing nothing.

Fixtures (tests/data/compare/*/results.json, real runs; see the README there):
  ddsperf   none, rtps_sign, rtps_encrypt × 32 B, 2 repeats of 1 s (Cyclone DDS ddsperf)
  fastdds   the same with --runner fastdds (govkit's Fast DDS program)
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path

import lxml.html
import pytest
from helpers.html import interval, num, text, words

from govkit.catalog.rti_published import published_overhead
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.report.compare import (
    HTML_NAME,
    MD_NAME,
    build_compare_model,
    render_compare_html,
    render_compare_md,
    write_reports,
)
from govkit.report.model import DASH
from govkit.results.check import READABLE_SCHEMAS
from govkit.results.flags import FLAGS
from govkit.results.record import Run
from govkit.results.summary import summarize

DATA = Path(__file__).parent.parent / "data" / "compare"
RUNS = ("ddsperf", "fastdds")
GOVKIT = str(Path(sys.executable).with_name("govkit"))
PROFILES = ("none", "rtps_sign", "rtps_encrypt")


def load(name: str) -> dict:
    return json.loads((DATA / name / "results.json").read_text())


def put(directory: Path, doc: dict) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "results.json").write_text(json.dumps(doc))
    return directory


def runs_in(tmp_path: Path, *docs: dict) -> list[Path]:
    """Each doc as its own run directory (run1, run2, …)."""
    return [put(tmp_path / f"run{i}", doc) for i, doc in enumerate(docs, 1)]


def compare(tmp_path: Path, *docs: dict) -> tuple[lxml.html.HtmlElement, str, list[Path]]:
    dirs = runs_in(tmp_path, *docs)
    html, md, _ = write_reports(dirs)
    assert (html, md) == (dirs[0] / HTML_NAME, dirs[0] / MD_NAME)
    return lxml.html.fromstring(html.read_bytes()), md.read_text(), dirs


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    docs = [load(n) for n in RUNS]
    page, md, dirs = compare(tmp_path_factory.mktemp("both"), *docs)
    return docs, page, md, dirs


def check_value(shown: str, value: float | None, digits: int) -> None:
    if value is None:
        assert shown == DASH, shown
    else:
        assert num(shown) == round(value, digits), (shown, value)


def check_interval(shown: str, ci: list | None, digits: int) -> None:
    if ci is None:
        assert shown == DASH, shown
    else:
        assert interval(shown) == (round(ci[0], digits), round(ci[1], digits)), (shown, ci)


def latency(doc: dict) -> list[dict]:
    """What the page must show for a run: its summary recomputed from the raw rows, here."""
    return [s for s in summarize(doc) if s["mode"] == "latency"]


def row_of(page, profile: str, size: int):
    rows = page.xpath(f'//table[@id="compare-table"]/tbody/tr[@data-profile="{profile}"]'
                      f'[@data-size="{size}"]')
    assert len(rows) == 1, (profile, size)
    return rows[0]


def cell(row, column: int, kind: str) -> str:
    found = row.xpath(f'./td[@data-column="{column}"]//*[@data-kind="{kind}"]')
    assert len(found) == 1, (column, kind)
    return text(found[0])


def flag_codes(row, column: int) -> list[str]:
    return [a.get("data-code") for a in
            row.xpath(f'./td[@data-column="{column}"]//a[contains(@class, "flag")]')]


def check_run_cells(page, column: int, summary: list[dict]) -> None:
    """Every figure of one run's latency points, as its column group shows it."""
    assert summary
    for s in summary:
        row = row_of(page, s["profile"], s["size"])
        check_value(cell(row, column, "estimate"), s["estimate"], 1)
        check_interval(cell(row, column, "estimate-ci"), s["ci95"], 1)
        vs = s["vs_none"]
        check_value(cell(row, column, "ratio"), vs and vs["ratio"], 2)
        check_value(cell(row, column, "added"), vs and vs["added"], 1)
        if vs:
            check_interval(cell(row, column, "ratio-ci"), vs["ratio_ci95"], 2)
            check_interval(cell(row, column, "added-ci"), vs["added_ci95"], 1)
        else:
            assert not row.xpath(f'./td[@data-column="{column}"]//*[@data-kind="ratio-ci"]')
        assert flag_codes(row, column) == [f["code"] for f in s["flags"]]


# --------------------------------------------------------------------- fixtures sanity


def test_fixtures_are_what_the_tests_assume():
    ddsperf, fastdds = (load(n) for n in RUNS)
    assert (ddsperf["runner"], fastdds["runner"]) == RUNS
    assert ddsperf["environment"]["cyclonedds"] and fastdds["environment"]["fastdds"]
    for doc in (ddsperf, fastdds):
        assert doc["schema"] in READABLE_SCHEMAS
        assert {r["profile"] for r in doc["results"]} == set(PROFILES)
        assert {r["size"] for r in doc["results"]} == {32}
        assert all(r["status"] == "ok" for r in doc["results"]) and len(doc["results"]) == 6
        # as the bench stored it (before 2026-12-04: the overhead's `added` as `difference`)
        assert Run.from_json(copy.deepcopy(doc)).stored_summary == summarize(doc)
    assert ddsperf["settings"]["method"].startswith("Eclipse Cyclone DDS ddsperf")
    assert fastdds["settings"]["method"].startswith("eProsima Fast DDS")


# --------------------------------------------------------------------- the table


def test_table_equals_each_runs_recomputed_summary(both):
    docs, page, _, _ = both
    for column, doc in enumerate(docs):
        check_run_cells(page, column, latency(doc))


def test_rti_beside_every_row(both):
    _, page, _, _ = both
    for profile in PROFILES:
        row = row_of(page, profile, 32)
        rti = published_overhead(profile, 32)
        check_value(text(row.xpath('.//*[@data-kind="rti-ratio"]')[0]), rti["ratio"], 2)
        check_value(text(row.xpath('.//*[@data-kind="rti-added"]')[0]), rti["added_us"], 0)
    row = row_of(page, "rtps_sign", 32)          # RTI: 25 µs against 21 µs at 32 B
    assert text(row.xpath('.//*[@data-kind="rti-ratio"]')[0]) == "1.19\u00d7"


def test_rows_in_catalog_order_and_columns_labelled(both):
    docs, page, _, _ = both
    groups = page.xpath('//table[@id="compare-table"]/tbody')
    assert [g.get("data-profile") for g in groups] == list(PROFILES)
    runs = [words(th) for th in page.xpath('//table[@id="compare-table"]/thead/tr[1]/th'
                                           '[@data-column]')]
    cyclone = docs[0]["environment"]["cyclonedds"]
    fastdds = docs[1]["environment"]["fastdds"]
    assert runs[0].startswith(f"ddsperf · Cyclone DDS {cyclone}")
    assert runs[1].startswith(f"fastdds · Fast DDS {fastdds}")
    header = [words(th) for th in page.xpath('//table[@id="compare-table"]/thead/tr[2]/th')]
    assert header == ["Median of per-second medians (µs) 95% interval",
                      "× none 95% interval", "Added µs 95% interval", "Flags"] * 2 + \
        ["× none", "Added µs"]


def _md_table(md: str) -> tuple[list[str], list[list[str]]]:
    lines = md.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("| Profile | Size (B) |"))
    header = [c.strip() for c in lines[start].strip("|").split(" | ")]
    rows = []
    for ln in lines[start + 2:]:
        if not ln.startswith("| "):
            break
        rows.append([c.strip() for c in ln.strip().strip("|").split(" | ")])
    return header, rows


def _md_value(shown: str) -> tuple[str, str | None]:
    value, _, ci = shown.partition(" [")
    return value, ("[" + ci) if ci else None


def test_summary_md_table_equals_each_runs_recomputed_summary(both):
    docs, _, md, _ = both
    header, rows = _md_table(md)
    assert header[2].startswith("ddsperf · Cyclone DDS ") and header[2].endswith(": µs")
    assert header[6].startswith("fastdds · Fast DDS ") and header[-2:] == ["RTI ×",
                                                                            "RTI added µs"]
    by_key = {(r[0].strip("`"), int(r[1])): r for r in rows}
    assert len(by_key) == len(rows) == 3
    for column, doc in enumerate(docs):
        for s in latency(doc):
            est, ratio, added, flags = by_key[(s["profile"], s["size"])][2 + 4 * column:
                                                                         6 + 4 * column]
            value, ci = _md_value(est)
            check_value(value, s["estimate"], 1)
            check_interval(ci, s["ci95"], 1)
            vs = s["vs_none"]
            value, ci = _md_value(ratio)
            check_value(value, vs and vs["ratio"], 2)
            check_interval(ci or DASH, vs and vs["ratio_ci95"], 2)
            value, ci = _md_value(added)
            check_value(value, vs and vs["added"], 1)
            check_interval(ci or DASH, vs and vs["added_ci95"], 1)
            assert flags == " ".join(("⚠ " if f["severity"] == "warning" else "ℹ ")
                                     + FLAGS[f["code"]].short for f in s["flags"])
    for profile in PROFILES:
        rti = published_overhead(profile, 32)
        check_value(by_key[(profile, 32)][-2], rti["ratio"], 2)
        check_value(by_key[(profile, 32)][-1], rti["added_us"], 0)


def test_raw_rows_alone_give_the_same_comparison(both, tmp_path):
    """Nothing stored beside the raw rows is read: without the summary and the per-repeat
    figures, the page is the same."""
    docs, page, md, _ = both
    stripped = []
    for doc in docs:
        doc = copy.deepcopy(doc)
        doc.pop("summary")
        for r in doc["results"]:
            for key in ("latency_us", "throughput", "count"):
                r.pop(key, None)
        stripped.append(doc)
    page2, md2, _ = compare(tmp_path, *stripped)
    body = '//table[@id="compare-table"]/tbody'
    assert [text(b) for b in page2.xpath(body)] == [text(b) for b in page.xpath(body)]
    assert _md_table(md2) == _md_table(md)


def test_tampered_stored_summary_is_shown_recomputed(tmp_path):
    docs = [load(n) for n in RUNS]
    for s in docs[1]["summary"]:
        s["estimate"] = 1.0
        if s["vs_none"]:
            s["vs_none"]["ratio"] = 99.0
    page, md, _ = compare(tmp_path, *docs)
    check_run_cells(page, 1, latency(load("fastdds")))
    alert = page.get_element_by_id("stored-summary-run2")
    assert "differ from those recomputed" in text(alert) and "rtps_sign latency 32 B" in \
        text(alert)
    assert not page.xpath('//*[@id="stored-summary-run1"]')
    assert "**Warning:** fastdds · Fast DDS" in md


def test_edited_raw_rows_change_the_figures(tmp_path):
    docs = [load(n) for n in RUNS]
    for r in docs[0]["results"]:
        if r["profile"] == "rtps_sign":
            for row in r["raw"]["rows"]:
                row["p50"] *= 2
    page, _, _ = compare(tmp_path, *docs)
    check_run_cells(page, 0, latency(docs[0]))
    assert num(cell(row_of(page, "rtps_sign", 32), 0, "estimate")) == \
        round(2 * next(s["estimate"] for s in load("ddsperf")["summary"]
                       if s["profile"] == "rtps_sign"), 1)


# --------------------------------------------------------------------- what is compared


def test_both_method_texts_and_what_may_be_compared(both):
    docs, page, md, _ = both
    for i, doc in enumerate(docs, 1):
        box = text(page.get_element_by_id(f"method-run{i}"))
        assert doc["settings"]["method"] in box and doc["settings"]["interval"] in box
        assert "Each point ran 2 repeats" in box
        assert doc["settings"]["method"] in md
    said = text(page.get_element_by_id("comparable-text"))
    for phrase in ("Within one run, ratios and added µs are like for like",
                  "Across implementations, absolute µs are measured the same way",
                  "CPU (AMD EPYC)" if docs[0]["environment"]["cpu"] == "AMD EPYC" else "CPU",
                  "over loopback", "the same payload type and topics (DDSPerfRDataKS",
                  "the same governance settings in every run",
                  "each runner's method text below says how", "its own unsecured baseline",
                  "10 GbE testbed"):
        assert phrase in said, phrase
    # the one way the recorded runs differ: Fast DDS's runner ignored --realtime then
    # (fixed since); its repeats recorded normal scheduling, Cyclone's SCHED_FIFO
    items = [text(li) for li in page.xpath('//*[@id="differences"]//li')]
    assert items == ["scheduling the latency repeats had: ddsperf · Cyclone DDS 0.10.2-2: "
                     "pub fifo, sub fifo; fastdds · Fast DDS 2.9.1+ds-1+deb12u2: pub normal, "
                     "sub normal"], items
    assert "**What may be compared.** Within one run, ratios and added µs are like for " \
           "like" in md


def test_runs_alike_in_every_way_show_no_differences(tmp_path):
    docs = [load(n) for n in RUNS]
    for r in docs[1]["results"]:
        r["scheduling"] = {"pub": "fifo", "sub": "fifo"}
    page, _, _ = compare(tmp_path, *docs)
    assert not page.xpath('//*[@id="differences"]')


def test_differences_between_runs_are_said(tmp_path):
    docs = [load(n) for n in RUNS]
    docs[1]["settings"]["duration_s"] = 5
    docs[1]["environment"]["kernel"] = "Linux 9.9"
    page, md, _ = compare(tmp_path, *docs)
    items = [text(li) for li in page.xpath('//*[@id="differences"]//li')]
    assert items[0].startswith("kernel: ddsperf · Cyclone DDS") and "Linux 9.9" in items[0]
    assert items[1].startswith("measured seconds per repeat:") and ": 5" in items[1]
    said = text(page.get_element_by_id("comparable-text"))
    assert "the same CPU (" in said and "kernel (" not in said
    assert "- measured seconds per repeat: ddsperf" in md


def test_networks_topics_and_governance_differences_are_said(tmp_path):
    docs = [load(n) for n in RUNS]
    for r in docs[0]["results"]:
        r["transport"] = "tcp"
    docs[1]["runner"] = "perftest"                   # another runner's topics
    next(p for p in docs[1]["profiles"] if p["name"] == "rtps_sign")["settings"][
        "rtps_protection_kind"] = "ENCRYPT"
    page, _, _ = compare(tmp_path, *docs)
    items = [text(li) for li in page.xpath('//*[@id="differences"]//li')]
    assert "networks: ddsperf · Cyclone DDS 0.10.2-2: tcp lo; perftest · RTI Connext DDS: " \
           "udp lo" in items
    assert any(i.startswith("topics: ddsperf · Cyclone DDS 0.10.2-2: DDSPerfRDataKS") and
               "perftest · RTI Connext DDS: Throughput, Latency, Announcement" in i
               for i in items), items
    assert "governance settings of rtps_sign" in items
    said = text(page.get_element_by_id("comparable-text"))
    assert "same payload type and topics" not in said and "same governance" not in said


def test_throughput_is_left_to_each_runs_own_report(tmp_path):
    docs = [load(n) for n in RUNS]
    extra = copy.deepcopy(next(r for r in docs[1]["results"] if r["profile"] == "none"))
    extra.update(mode="throughput", raw={"format": "throughput-summary", "rows": [],
                                         "summary": {"mean_rate_sps": 1000.0}})
    docs[1]["results"].append(extra)
    page, md, _ = compare(tmp_path, *docs)
    assert text(page.get_element_by_id("throughput-note")) == (
        "Throughput, measured by fastdds · Fast DDS 2.9.1+ds-1+deb12u2, is not compared "
        "here: see that run's own report.")
    assert "Throughput, measured by fastdds" in md
    check_run_cells(page, 1, latency(docs[1]))


def test_flags_marked_with_reasons_that_lead_to_the_flags_list(both):
    docs, page, md, _ = both
    for column, doc in enumerate(docs):
        for s in latency(doc):
            row = row_of(page, s["profile"], s["size"])
            marks = row.xpath(f'./td[@data-column="{column}"]//a[contains(@class, "flag")]')
            assert [a.get("title") for a in marks] == [f["reason"] for f in s["flags"]]
            for a in marks:
                entry = page.get_element_by_id(a.get("href")[1:])
                assert entry.get("data-run") == str(column + 1)
                assert entry.get("data-profile") == s["profile"]
                assert a.get("title") in text(entry)
            for f in s["flags"]:
                assert f"`{f['code']}`: {f['reason']}" in md
    advice = [dt.get("data-code") for dt in page.xpath('//dl[@id="flag-advice"]/dt')]
    assert advice == sorted({f["code"] for doc in docs for s in latency(doc)
                             for f in s["flags"]})


def test_chart_has_a_bar_per_run_and_rti_markers(both):
    docs, page, _, _ = both
    (svg,) = page.xpath('//figure[@id="fig-compare"]/*[local-name()="svg"]')
    words = " ".join(svg.itertext())
    for label in ("ddsperf · Cyclone DDS", "fastdds · Fast DDS", "RTI Connext published",
                  "rtps_sign", "rtps_encrypt", "32 B samples"):
        assert label in words, label
    assert "none baseline" in words
    # whiskers: one group per run and size panel, each with a path per secured profile
    for j in range(2):
        (group,) = svg.xpath(f'.//*[@id="fig-compare-whiskers-ratio-0-{j}"]')
        assert len(group.xpath('.//*[local-name()="path"]')) == 2


def test_chart_bars_are_the_recomputed_ratios(both):
    """The bars' heights are the ratios in the table (same model, checked via the figure
    built from it)."""
    from govkit.report.plots import build_compare_figures
    docs, _, _, dirs = both
    model = build_compare_model(dirs)
    for j, doc in enumerate(docs):
        want = {s["profile"]: s["vs_none"]["ratio"] for s in latency(doc) if s["vs_none"]}
        got = {row.profile.name: row.cells[j].point.vs_none.ratio
               for row in model.rows if row.cells[j].point and row.cells[j].point.vs_none}
        assert {k: round(v, 4) for k, v in got.items()} == want
    assert [f.key for f in build_compare_figures(model)] == ["fig-compare"]


# --------------------------------------------------------------------- edge cases


def test_run_without_baseline_shows_medians_and_dashes(tmp_path):
    docs = [load(n) for n in RUNS]
    docs[1]["results"] = [r for r in docs[1]["results"] if r["profile"] != "none"]
    page, md, _ = compare(tmp_path, *docs)
    check_run_cells(page, 1, latency(docs[1]))
    row = row_of(page, "rtps_sign", 32)
    assert cell(row, 1, "ratio") == DASH and cell(row, 1, "added") == DASH
    assert "no none baseline" in row.xpath('./td[@data-column="1"][2]')[0].get("title")
    none_row = row_of(page, "none", 32)
    assert none_row.xpath('./td[@data-column="1"]')[0].get("data-status") == "missing"
    check_run_cells(page, 0, latency(docs[0]))       # the other run keeps its overheads
    svg = " ".join(page.xpath('//figure[@id="fig-compare"]')[0].itertext())
    assert "no none" in svg
    md_row = {r[0]: r for r in _md_table(md)[1]}["`rtps_sign`"]
    assert md_row[7:9] == [DASH, DASH] and md_row[3] != DASH


def test_point_whose_every_repeat_failed(tmp_path):
    docs = [load(n) for n in RUNS]
    for r in docs[1]["results"]:
        if r["profile"] == "rtps_encrypt":
            r.update(status="failed", error="peer never matched\nmore")
            r.pop("raw")
    page, md, _ = compare(tmp_path, *docs)
    (td,) = row_of(page, "rtps_encrypt", 32).xpath('./td[@data-column="1"]')
    assert td.get("data-status") == "failed"
    assert text(td) == "✗ all 2 repeats failed: peer never matched"
    assert "2 repeats failed" in text(page.get_element_by_id("failures"))
    assert "| **failed** |" in md
    svg = " ".join(page.xpath('//figure[@id="fig-compare"]')[0].itertext())
    assert "failed" in svg


def test_network_other_than_the_default_is_in_the_label(tmp_path):
    docs = [load(n) for n in RUNS]
    for r in docs[0]["results"]:
        r["transport"] = "tcp"
    page, _, _ = compare(tmp_path, *docs)
    labels = [text(th) for th in page.xpath('//table[@id="compare-table"]/thead/tr[1]/th'
                                            '[@data-column]')]
    assert labels[0].startswith("ddsperf · Cyclone DDS 0.10.2-2 · tcp lo")
    assert " · udp lo" not in labels[1]
    check_run_cells(page, 0, latency(docs[0]))
    # RTI's figures do not depend on the runs: still beside every row
    assert text(row_of(page, "rtps_sign", 32).xpath('.//*[@data-kind="rti-ratio"]')[0]) \
        == "1.19\u00d7"


def test_three_runs_and_labels_made_unique(tmp_path):
    docs = [load("ddsperf"), load("fastdds"), load("ddsperf")]
    for r in docs[2]["results"]:                 # another ddsperf run, other rows
        for row in r.get("raw", {}).get("rows", []):
            row["p50"] += 1
    page, _, dirs = compare(tmp_path, *docs)
    labels = [text(th) for th in page.xpath('//table[@id="compare-table"]/thead/tr[1]/th'
                                            '[@data-column]')]
    assert labels[0].startswith(f"ddsperf · Cyclone DDS 0.10.2-2 ({dirs[0]})")
    assert labels[2].startswith(f"ddsperf · Cyclone DDS 0.10.2-2 ({dirs[2]})")
    for column, doc in enumerate(docs):
        check_run_cells(page, column, latency(doc))


def test_only_shared_and_unshared_points(tmp_path):
    """Rows are every profile and size any run measured; a run that did not shows it."""
    docs = [load(n) for n in RUNS]
    docs[0]["results"] = [r for r in docs[0]["results"] if r["profile"] != "rtps_encrypt"]
    page, _, _ = compare(tmp_path, *docs)
    (td,) = row_of(page, "rtps_encrypt", 32).xpath('./td[@data-column="0"]')
    assert td.get("data-status") == "missing" and "not measured in this run" in text(td)
    check_run_cells(page, 1, latency(docs[1]))


def test_everything_is_escaped_and_never_mathtext(tmp_path):
    docs = [load(n) for n in RUNS]
    docs[1]["command"] = "govkit <script>alert(1)</script> | x"
    docs[1]["environment"]["fastdds"] = "$x^2$ <b>"
    page, md, dirs = compare(tmp_path, *docs)
    html = (dirs[0] / HTML_NAME).read_text()
    assert not page.xpath("//script") and "$x^2$ <b>" not in html and "$x^2$ &lt;b&gt;" in html
    label = words(page.xpath('//table[@id="compare-table"]/thead/tr[1]/th[@data-column]')[1])
    assert label.startswith("fastdds · Fast DDS $x^2$ <b>")
    assert "govkit <script>alert(1)</script> | x" in text(page.get_element_by_id("runs"))
    svg = " ".join(page.xpath('//figure[@id="fig-compare"]')[0].itertext())
    assert "$x^2$" in svg
    assert "\\| x" in md


def test_writing_is_deterministic_and_in_the_first_run_by_default(tmp_path):
    dirs = runs_in(tmp_path, load("ddsperf"), load("fastdds"))
    html, md, _ = write_reports(dirs)
    first = (html.read_bytes(), md.read_bytes())
    write_reports(dirs)
    assert (html.read_bytes(), md.read_bytes()) == first
    assert sorted(p.name for p in dirs[0].iterdir()) == [HTML_NAME, MD_NAME, "results.json"]
    assert sorted(p.name for p in dirs[1].iterdir()) == ["results.json"]
    out = tmp_path / "elsewhere" / "cmp"
    assert write_reports(dirs, out)[:2] == (out / HTML_NAME, out / MD_NAME)
    assert (out / HTML_NAME).read_bytes() == first[0]


def test_render_functions_work_on_a_model(both):
    _, _, _, dirs = both
    model = build_compare_model(dirs)
    assert [c.label for c in model.columns] == [r.label for r in model.runs]
    assert model.sizes == [32] and [p.name for p, _ in model.groups] == list(PROFILES)
    assert render_compare_html(model).count("<svg") == 1
    assert render_compare_md(model).count("\n| `") == 3


# --------------------------------------------------------------------- refusals


def _refused(dirs, out=None) -> str:
    with pytest.raises(GovkitError) as exc:
        write_reports(dirs, out)
    assert exc.value.exit_code == EXIT_USAGE == 2
    assert "\n" not in str(exc.value)
    for d in dirs:
        if Path(d).is_dir():
            assert not (Path(d) / HTML_NAME).exists() and not (Path(d) / MD_NAME).exists()
    return str(exc.value)


def test_refuses_the_same_run_twice(tmp_path):
    a, b = runs_in(tmp_path, load("ddsperf"), load("fastdds"))
    assert _refused([a, b, a]) == f"cannot compare {a} with {a}: the same run given twice"
    assert "the same run given twice" in _refused([a, tmp_path / "run1" / ".." / "run1"])
    copy_dir = tmp_path / "copy"
    shutil.copytree(a, copy_dir)
    assert _refused([a, copy_dir]) == (f"cannot compare {a} with {copy_dir}: the same run "
                                       "given twice (identical raw rows)")


def test_refuses_runs_with_nothing_in_common(tmp_path):
    docs = [load(n) for n in RUNS]
    for r in docs[1]["results"]:
        r["size"] = 1024
    a, b = runs_in(tmp_path, *docs)
    assert _refused([a, b]) == (
        "cannot compare: no latency point (profile and size) was measured in every run "
        f"({a}: none 32 B, rtps_encrypt 32 B, rtps_sign 32 B; {b}: none 1024 B, "
        "rtps_encrypt 1024 B, rtps_sign 1024 B)")


def test_refuses_a_run_without_latency(tmp_path):
    docs = [load(n) for n in RUNS]
    docs[1]["results"] = []
    a, b = runs_in(tmp_path, *docs)
    assert f"{b}: no latency point" in _refused([a, b])


@pytest.mark.parametrize(("schema", "expected"), [
    ("govkit.bench/1", "schema 'govkit.bench/1' predates raw per-second rows"),
    ("govkit.bench/9", "schema is 'govkit.bench/9', expected 'govkit.bench/3'"),
])
def test_refuses_a_schema_mismatch(tmp_path, schema, expected):
    docs = [load(n) for n in RUNS]
    docs[1]["schema"] = schema
    a, b = runs_in(tmp_path, *docs)
    message = _refused([a, b])
    assert message.startswith(f"{b / 'results.json'}: ") and expected in message


def test_refuses_a_missing_or_malformed_run(tmp_path):
    a, b = runs_in(tmp_path, load("ddsperf"), load("fastdds"))
    assert _refused([a, tmp_path / "nope"]) == \
        f"{tmp_path / 'nope' / 'results.json'}: not found (run `govkit bench` first)"
    (b / "results.json").write_text("{ nope")
    assert "not valid JSON" in _refused([a, b])


def test_out_is_only_for_a_comparison(tmp_path):
    (a,) = runs_in(tmp_path, load("ddsperf"))
    assert _refused([a], tmp_path / "x") == (
        "--out is for a comparison of two or more runs; a single run's report is written "
        "beside its results.json")


def test_an_out_that_cannot_be_a_directory_is_refused_before_any_work(tmp_path):
    """`report A B --out FILE` refused only when it wrote, after the comparison's work
    (1.5 s on a real run); --out is checked first now, and a malformed run is not read."""
    a, b = runs_in(tmp_path, load("ddsperf"), load("fastdds"))
    (b / "results.json").write_text("{ nope")          # never read: --out is refused first
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert _refused([a, b], afile) == f"--out {afile}: exists and is not a directory"
    assert _refused([a, b], afile / "sub") == \
        f"--out {afile / 'sub'}: {afile}: exists and is not a directory"
    assert afile.read_text() == "x"


# --------------------------------------------------------------------- the command


def _govkit(*args, cwd=None):
    return subprocess.run([GOVKIT, *map(str, args)], capture_output=True, text=True,
                          timeout=180, cwd=cwd)


def test_govkit_report_compares_two_runs(tmp_path):
    a, b = runs_in(tmp_path, load("ddsperf"), load("fastdds"))
    r = _govkit("report", a, b)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-2:] == [f"wrote {a / HTML_NAME}", f"wrote {a / MD_NAME}"]
    # the comparison in the terminal too: each run's ratio with its interval, per point
    both = summarize(load("ddsperf")), summarize(load("fastdds"))
    assert "1: ddsperf · Cyclone DDS" in r.stdout and "2: fastdds · Fast DDS" in r.stdout
    line = next(x for x in r.stdout.splitlines() if "rtps_sign" in x and " 32 " in x)
    for summary in both:
        vs = next(x["vs_none"] for x in summary
                  if x["profile"] == "rtps_sign" and x["size"] == 32)
        assert f"{vs['ratio']:.2f} [{vs['ratio_ci95'][0]:.2f}…{vs['ratio_ci95'][1]:.2f}]" in line
    r = _govkit("report", a, b, "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / HTML_NAME).exists() and (tmp_path / "out" / MD_NAME).exists()


def test_govkit_report_with_one_run_is_unchanged(tmp_path):
    (a,) = runs_in(tmp_path, load("ddsperf"))
    r = _govkit("report", a)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [f"wrote {a / 'report.html'}", f"wrote {a / 'summary.md'}"]
    assert sorted(p.name for p in a.iterdir()) == ["report.html", "results.json",
                                                   "summary.md"]


@pytest.mark.parametrize("case", ["twice", "nothing in common", "schema"])
def test_govkit_report_refusals_exit_2_with_one_line(tmp_path, case):
    docs = [load(n) for n in RUNS]
    if case == "nothing in common":
        for r in docs[1]["results"]:
            r["profile"] = "sign_submsg_encrypt"
    elif case == "schema":
        docs[1]["schema"] = "govkit.bench/1"
    a, b = runs_in(tmp_path, *docs)
    r = _govkit("report", a, a if case == "twice" else b)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("govkit: "), r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""
    assert not (a / HTML_NAME).exists()


def test_refuses_a_copy_of_a_rotating_run(tmp_path):
    """A rotating run keeps its rows in `rotation`, and `results` is empty: the same-run
    check read `results` alone, so a copy compared with itself undetected (issue 37,
    item 12). A different run of the same shape still compares."""
    rotation = Path(__file__).parent.parent / "data" / "report" / "rotation" / "results.json"
    doc = json.loads(rotation.read_text())
    assert doc["results"] == [] and doc["rotation"]["slots"]
    a, b = runs_in(tmp_path, doc, doc)
    assert _refused([a, b]) == (f"cannot compare {a} with {b}: the same run given twice "
                                "(identical raw rows)")
    doc["rotation"]["slots"][0]["p50"] += 0.5
    c = tmp_path / "other"
    c.mkdir()
    (c / "results.json").write_text(json.dumps(doc))
    html, _, _ = write_reports([a, c])
    assert html.exists()
