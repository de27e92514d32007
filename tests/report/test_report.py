"""govkit.report.run: every number on report.html and summary.md is the one
govkit.results.summary and govkit.results.stats recompute from results.json's raw rows, whatever
the file stores beside them.

Fixtures (tests/data/report/*/results.json, schema govkit.bench/2, from real runs; see the
README there):
  full         none, no_protection, rtps_sign × 32, 1024 B; 2 repeats; one repeat failed
  throughput   none, rtps_encrypt × 1024 B, latency and throughput, 2 repeats
  no_baseline  rtps_sign, rtps_encrypt × 32, 100 B (RTI published nothing at 100 B)
"""

from __future__ import annotations

import copy
import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import lxml.html
import pytest
from helpers.html import interval, num, text, words

from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.report.model import DASH, md_cell
from govkit.report.run import build_report_model, render_html, render_summary_md, write_report
from govkit.results import stats
from govkit.results.flags import FLAGS, flag_advice
from govkit.results.record import Run
from govkit.results.summary import point_key, summarize

DATA = Path(__file__).parent.parent / "data" / "report"
FIXTURES = ("full", "throughput", "no_baseline")
GOVKIT = str(Path(sys.executable).with_name("govkit"))


def load(name: str) -> dict:
    return json.loads((DATA / name / "results.json").read_text())


def report(tmp_path: Path, doc: dict) -> tuple[lxml.html.HtmlElement, str, Path]:
    """Write `doc` as results.json, run write_report, return (parsed html, summary.md, dir)."""
    (tmp_path / "results.json").write_text(json.dumps(doc))
    html_path, md_path = write_report(tmp_path)
    assert html_path == tmp_path / "report.html" and md_path == tmp_path / "summary.md"
    return lxml.html.fromstring(html_path.read_bytes()), md_path.read_text(), tmp_path


@pytest.fixture(scope="module", params=FIXTURES)
def rendered(request, tmp_path_factory):
    doc = load(request.param)
    page, md, _ = report(tmp_path_factory.mktemp(request.param), doc)
    return doc, page, md


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    doc = load("full")
    page, md, _ = report(tmp_path_factory.mktemp("full"), doc)
    return doc, page, md


def summary_of(doc: dict) -> list[dict]:
    """What the report must show: the summary recomputed from the raw rows, here."""
    return summarize(doc)


def point_row(page, table: str, profile: str, size: int):
    rows = page.xpath(f'//table[@id="{table}"]/tbody/tr[@data-profile="{profile}"]'
                      f'[@data-size="{size}"]')
    assert len(rows) == 1, (table, profile, size)
    return rows[0]


def cell(row, kind: str) -> str:
    found = row.xpath(f'.//*[@data-kind="{kind}"]')
    assert len(found) == 1, kind
    return text(found[0])


def check_value(shown: str, value: float | None, digits: int) -> None:
    if value is None:
        assert shown == DASH
    else:
        assert num(shown) == round(value, digits), (shown, value)


def check_interval(shown: str, ci: list | None, digits: int) -> None:
    if ci is None:
        assert shown == DASH
    else:
        assert interval(shown) == (round(ci[0], digits), round(ci[1], digits)), (shown, ci)


def strip_figures(doc: dict) -> dict:
    """Only the raw data: no stored summary, no per-repeat figures."""
    doc = copy.deepcopy(doc)
    doc.pop("summary")
    for r in doc["results"]:
        for key in ("latency_us", "throughput", "count"):
            r.pop(key, None)
    return doc


# --------------------------------------------------------------------- fixtures sanity


def test_fixtures_are_what_the_tests_assume():
    full, thr, nob = (load(n) for n in FIXTURES)
    for doc in (full, thr, nob):
        assert doc["schema"] == "govkit.bench/2"
        assert all(r["raw"]["rows"] for r in doc["results"] if r["status"] == "ok")
        # as the bench stored it (before 2026-12-04: the overhead's `added` as `difference`)
        assert Run.from_json(copy.deepcopy(doc)).stored_summary == summary_of(doc)
    assert {p["name"] for p in full["profiles"]} == {"none", "rtps_sign", "no_protection"}
    assert full["settings"]["sizes"] == [32, 1024] and len(full["results"]) == 12
    assert [r["status"] for r in full["results"]].count("failed") == 1
    assert {r["mode"] for r in thr["results"]} == {"latency", "throughput"}
    assert "none" not in {r["profile"] for r in nob["results"]}
    assert 100 in nob["settings"]["sizes"]


# --------------------------------------------------------------------- headline


def test_latency_table_equals_recomputed_summary(rendered):
    doc, page, _ = rendered
    rows = [s for s in summary_of(doc) if s["mode"] == "latency"]
    assert rows
    for s in rows:
        row = point_row(page, "headline-table", s["profile"], s["size"])
        assert row.get("data-status") == "ok"
        check_value(cell(row, "estimate"), s["estimate"], 1)
        check_interval(cell(row, "estimate-ci"), s["ci95"], 1)
        check_value(cell(row, "p99-median"), s["tail"]["p99_median_of_seconds"], 1)
        check_value(cell(row, "p99-worst"), s["tail"]["p99_worst_second"], 1)
        vs = s["vs_none"]
        check_value(cell(row, "ratio"), vs and vs["ratio"], 2)
        check_value(cell(row, "added"), vs and vs["added"], 1)
        if vs:
            check_interval(cell(row, "ratio-ci"), vs["ratio_ci95"], 2)
            check_interval(cell(row, "added-ci"), vs["added_ci95"], 1)
        else:
            assert not row.xpath('.//*[@data-kind="ratio-ci"]')
        rti = s["rti"]
        check_value(cell(row, "rti-ratio"), rti and rti["ratio"], 2)
        check_value(cell(row, "rti-added"), rti and rti["added_us"], 0)
        assert int(cell(row, "repeats")) == s["repeats"]
        assert cell(row, "seconds") == f"({s['seconds']} s)"
        assert [a.get("data-code") for a in row.xpath('.//a[contains(@class, "flag")]')] == \
            [f["code"] for f in s["flags"]]


def test_headline_rows_in_catalog_order_sizes_ascending(full):
    doc, page, _ = full
    groups = page.xpath('//table[@id="headline-table"]/tbody')
    assert [g.get("data-profile") for g in groups] == ["none", "no_protection", "rtps_sign"]
    for g in groups:
        assert [int(r.get("data-size")) for r in g.xpath("tr")] == [32, 1024]
    header = [words(th) for th in page.xpath('//table[@id="headline-table"]/thead//th')]
    assert header[2] == "Median of per-second medians (µs) 95% interval"
    assert header[3] == "p99 of seconds (µs) median / worst"
    assert header[4:8] == ["× none 95% interval", "Added µs 95% interval", "RTI ×",
                           "RTI added µs"]


def test_rti_added_microseconds_shown():
    """RTI published 25 µs for rtps_sign and 21 µs for none at 32 B: ×1.19, +4 µs."""
    doc = load("full")
    page = lxml.html.fromstring(render_html(build_report_model(doc)))
    row = point_row(page, "headline-table", "rtps_sign", 32)
    assert cell(row, "rti-ratio") == "1.19\u00d7" and cell(row, "rti-added") == "+4"
    md = render_summary_md(build_report_model(doc))
    assert re.search(r"\| `rtps_sign` \| 32 \|.*\| 1\.19× \| \+4 \|", md)


def test_why_both_overheads_are_shown(full):
    _, page, md = full
    why = text(page.get_element_by_id("why-both"))
    assert "ratio depends on the baseline's network and DDS stack" in why
    assert "added µs on the CPU doing the crypto" in why
    assert "10 GbE testbed" in why and "ddsperf" in why and "loopback" in why
    assert "Ratios depend on the baseline's network and DDS stack, added µs on the CPU " \
           "doing the crypto" in md


def test_method_paragraph_in_plain_words(full):
    doc, page, md = full
    box = page.get_element_by_id("method-short")
    assert doc["settings"]["method"] in text(box)
    assert doc["settings"]["interval"] in text(box)
    assert "Each point ran 2 repeats" in text(box)
    assert "1 s of warm-up (kept, not measured), then 2 s measured" in text(box)
    assert doc["settings"]["pinning"] in text(box)
    assert doc["settings"]["interval"] in md


# --------------------------------------------------------------------- summary.md


def _md_rows(md: str, header_start: str) -> list[list[str]]:
    lines = md.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(header_start))
    out = []
    for ln in lines[start + 2:]:
        if not ln.startswith("| "):
            break
        out.append([c.strip() for c in ln.strip("|").split(" | ")])
    return out


def test_summary_md_latency_table_equals_recomputed_summary(rendered):
    doc, _, md = rendered
    rows = _md_rows(md, "| Profile | Size (B) | Median of per-second medians (µs) | 95% CI |")
    expected = [s for s in summary_of(doc) if s["mode"] == "latency"]
    by_key = {(r[0].strip("`"), int(r[1])): r for r in rows}
    assert len(by_key) == len(rows)
    for s in expected:
        (est, ci, tail, ratio, ratio_ci, added, added_ci, rti, rti_added,
         flags) = by_key[(s["profile"], s["size"])][2:]
        check_value(est.split(" (")[0], s["estimate"], 1)
        check_interval(ci, s["ci95"], 1)
        median, worst = tail.split(" / ")
        check_value(median, s["tail"]["p99_median_of_seconds"], 1)
        check_value(worst, s["tail"]["p99_worst_second"], 1)
        vs = s["vs_none"]
        check_value(ratio, vs and vs["ratio"], 2)
        check_interval(ratio_ci, vs and vs["ratio_ci95"], 2)
        check_value(added, vs and vs["added"], 1)
        check_interval(added_ci, vs and vs["added_ci95"], 1)
        check_value(rti, s["rti"] and s["rti"]["ratio"], 2)
        check_value(rti_added, s["rti"] and s["rti"]["added_us"], 0)
        assert flags == " ".join(("⚠ " if f["severity"] == "warning" else "ℹ ")
                                 + FLAGS[f["code"]].short for f in s["flags"])


def test_summary_md_lists_every_flag_with_reason_and_advice(rendered):
    doc, _, md = rendered
    for s in summary_of(doc):
        for f in s["flags"]:
            assert f"`{s['profile']}` {s['mode']} {s['size']} B — " in md
            assert f"`{f['code']}`: {f['reason']}".replace("|", "\\|") in md
            if f["code"] in FLAGS:
                assert f"- `{f['code']}`: {FLAGS[f['code']].advice}" in md


# --------------------------------------------------------------------- throughput


def test_throughput_table_equals_recomputed_summary(tmp_path):
    doc = load("throughput")
    page, md, _ = report(tmp_path, doc)
    rows = [s for s in summary_of(doc) if s["mode"] == "throughput"]
    assert rows
    md_rows = {(r[0].strip("`"), int(r[1])): r for r in
               _md_rows(md, "| Profile | Size (B) | Mean of per-second rates (samples/s) |")}
    for s in rows:
        row = point_row(page, "throughput-table", s["profile"], s["size"])
        figures = [stats.repeat_figures(r)[0] for r in doc["results"]
                   if r["status"] == "ok" and point_key(r) == point_key(s)]
        stalled = sum(f["stalled_seconds"] for f in figures)
        lost = sum(f["lost"] for f in figures)
        vs = s["vs_none"]
        shown = [cell(row, "estimate"), cell(row, "estimate-ci"), cell(row, "ratio"),
                 cell(row, "stalled"), cell(row, "lost")]
        md_shown = md_rows[(s["profile"], s["size"])]
        for est, ci, ratio, stalls, lost_shown in (shown, [md_shown[i] for i in (2, 3, 4, 6, 7)]):
            check_value(est, s["estimate"], 0)
            check_interval(ci, s["ci95"], 0)
            check_value(ratio, vs and vs["ratio"], 2)
            assert int(stalls) == stalled and int(lost_shown) == lost
        if vs:
            check_interval(cell(row, "ratio-ci"), vs["ratio_ci95"], 2)
            check_interval(md_shown[5], vs["ratio_ci95"], 2)


def test_stalls_and_lost_samples_are_recomputed_and_flagged(tmp_path):
    doc = load("throughput")
    rec = next(r for r in doc["results"] if r["profile"] == "rtps_encrypt"
               and r["mode"] == "throughput" and r["repeat"] == 0)
    second = rec["raw"]["rows"][rec["warmup_rows"]]
    second.update(count=0, rate_sps=0.0, mbps=0.0, lost=7)
    page, md, _ = report(tmp_path, doc)
    row = point_row(page, "throughput-table", "rtps_encrypt", 1024)
    assert cell(row, "stalled") == "1" and cell(row, "lost") == "7"
    codes = [a.get("data-code") for a in row.xpath('.//a[contains(@class, "flag")]')]
    assert "stalled_seconds" in codes and "lost_samples" in codes
    check_value(cell(row, "estimate"), next(
        s["estimate"] for s in summary_of(doc)
        if (s["profile"], s["mode"]) == ("rtps_encrypt", "throughput")), 0)


def test_throughput_section_absent_when_not_measured(full):
    _, page, md = full
    assert not page.xpath('//*[@id="throughput"]') and not page.xpath('//*[@id="fig-throughput"]')
    assert "Throughput" not in text(page.xpath("//nav")[0])
    assert "Throughput (samples/s)" not in md


def test_failed_throughput_only_is_not_a_section(tmp_path):
    doc = load("throughput")
    for r in doc["results"]:
        if r["mode"] == "throughput":
            r.update(status="failed", error="sub saw no data")
            r.pop("raw")
    page, _, _ = report(tmp_path, doc)
    assert not page.xpath('//*[@id="throughput"]')
    assert "sub saw no data" in text(page.get_element_by_id("failures"))


def test_throughput_only_run(tmp_path):
    doc = load("throughput")
    doc["results"] = [r for r in doc["results"] if r["mode"] == "throughput"]
    doc["settings"]["modes"] = ["throughput"]
    doc["summary"] = summary_of(doc)
    page, md, _ = report(tmp_path, doc)
    assert [f.get("id") for f in page.xpath("//figure")] == ["fig-throughput"]
    assert "No latency was measured" in text(page.get_element_by_id("headline"))
    assert "Latency (µs)" not in md and "Throughput (samples/s)" in md


# --------------------------------------------------------------------- recomputation


def _numbers(page) -> list[tuple[str, str]]:
    """Every figure on the page, in page order, with what it is."""
    return [(el.get("data-kind") or el.get("data-col"), text(el))
            for el in page.xpath("//*[@data-kind or @data-col]")]


@pytest.mark.parametrize("name", FIXTURES)
def test_raw_rows_alone_give_the_same_report(tmp_path, name):
    doc = load(name)
    (tmp_path / "full").mkdir()
    (tmp_path / "raw").mkdir()
    page, md, _ = report(tmp_path / "full", doc)
    page2, md2, _ = report(tmp_path / "raw", strip_figures(doc))
    assert _numbers(page2) == _numbers(page) and len(_numbers(page)) > 20
    table = [ln for ln in md.splitlines() if ln.startswith("|")]
    assert [ln for ln in md2.splitlines() if ln.startswith("|")] == table
    # no stored summary is not a disagreement: a note, not a warning
    note = page2.get_element_by_id("stored-summary")
    assert "no stored summary" in text(note) and note.get("role") is None
    assert "Warning" not in md2
    assert not page.xpath('//*[@id="stored-summary"]')
    assert "equal to the figures stored in it" in text(page.xpath("//footer")[0])


def test_a_summary_stored_under_the_old_overhead_names_is_read(tmp_path):
    """results.json written before 2026-12-04 names the overhead's added µs `difference`
    (summary rows' vs_none and vs_network): `govkit report` reads it under today's name,
    `added`, finds the stored figures equal to the recomputed ones, and shows them; the
    same file under today's names gives the same page."""
    doc = load("full")
    stored = [s["vs_none"] for s in doc["summary"] if s.get("vs_none")]
    assert stored and all("difference" in vs and "added" not in vs for vs in stored)
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "results.json").write_text(json.dumps(doc))
    done = subprocess.run([GOVKIT, "report", str(tmp_path / "old")], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    page = lxml.html.fromstring((tmp_path / "old" / "report.html").read_bytes())
    assert not page.xpath('//*[@id="stored-summary"]')
    fresh = next(s for s in summary_of(doc) if (s["profile"], s["size"]) == ("rtps_sign", 32))
    row = point_row(page, "headline-table", "rtps_sign", 32)
    check_value(cell(row, "added"), fresh["vs_none"]["added"], 1)
    for s in doc["summary"]:
        if s.get("vs_none"):
            vs = s["vs_none"]
            vs["added"], vs["added_ci95"] = vs.pop("difference"), vs.pop("difference_ci95")
    (tmp_path / "new").mkdir()
    page2, _, _ = report(tmp_path / "new", doc)
    assert _numbers(page2) == _numbers(page)
    assert not page2.xpath('//*[@id="stored-summary"]')


def test_tampered_summary_is_reported_and_the_recomputed_figures_shown(tmp_path):
    doc = load("full")
    fresh = summary_of(doc)
    stored = next(s for s in doc["summary"] if (s["profile"], s["size"]) == ("rtps_sign", 32))
    stored["estimate"] = 9.99
    stored["vs_none"]["ratio"] = 0.5
    rec = next(r for r in doc["results"] if r["status"] == "ok" and r["profile"] == "none")
    rec["latency_us"]["median_of_second_medians"] = 1.0
    page, md, _ = report(tmp_path, doc)
    alert = page.get_element_by_id("stored-summary")
    assert alert.get("role") == "alert"
    assert "differ from those recomputed from its raw rows" in text(alert)
    assert "rtps_sign latency 32 B: estimate, vs_none" in text(alert)
    assert f"none latency {rec['size']} B repeat {rec['repeat']}: per-repeat figures" \
        in text(alert)
    row = point_row(page, "headline-table", "rtps_sign", 32)
    want = next(s for s in fresh if (s["profile"], s["size"]) == ("rtps_sign", 32))
    check_value(cell(row, "estimate"), want["estimate"], 1)
    check_value(cell(row, "ratio"), want["vs_none"]["ratio"], 2)
    assert "9.99" not in text(row) and "0.50×" not in text(row)
    repeat = page.xpath(f'//table[@data-profile="none"][@data-mode="latency"]/tbody/'
                        f'tr[@data-size="{rec["size"]}"][@data-repeat="{rec["repeat"]}"]')[0]
    assert text(repeat.xpath('td[@data-col="median_of_second_medians"]')[0]) != "1.0"
    assert "**Warning:** the figures stored in results.json differ" in md
    assert "rtps_sign latency 32 B: estimate, vs_none" in md


def test_edited_raw_rows_change_the_figures(tmp_path):
    """The raw rows are the source: halve rtps_sign's per-second medians and the page (and
    its flags) follow the recomputation, not the stored summary."""
    doc = load("full")
    for r in doc["results"]:
        if r["profile"] == "rtps_sign" and r["status"] == "ok":
            for row in r["raw"]["rows"]:
                row["p50"] = row["p50"] / 10
    page, _, _ = report(tmp_path, doc)
    s = next(s for s in summary_of(doc) if (s["profile"], s["size"]) == ("rtps_sign", 1024))
    row = point_row(page, "headline-table", "rtps_sign", 1024)
    check_value(cell(row, "estimate"), s["estimate"], 1)
    assert s["vs_none"]["ratio"] < 1
    assert "faster_than_none" in [f["code"] for f in s["flags"]]
    flag = row.xpath('.//a[@data-code="faster_than_none"]')[0]
    assert flag.get("title") == next(f["reason"] for f in s["flags"]
                                     if f["code"] == "faster_than_none")
    # the stored summary (from the unedited rows) is reported as differing
    assert "rtps_sign latency 1024 B: estimate" in text(page.get_element_by_id("stored-summary"))


# --------------------------------------------------------------------- flags


def test_flags_shown_per_point_with_reasons_and_advice(rendered):
    doc, page, _ = rendered
    summary = summary_of(doc)
    flagged = [s for s in summary if s["flags"]]
    assert flagged
    section = page.get_element_by_id("flags")
    for s in flagged:
        table = "headline-table" if s["mode"] == "latency" else "throughput-table"
        row = point_row(page, table, s["profile"], s["size"])
        marks = row.xpath('.//a[contains(@class, "flag")]')
        assert [(a.get("data-code"), a.get("title")) for a in marks] == \
            [(f["code"], f["reason"]) for f in s["flags"]]
        anchor = marks[0].get("href")[1:]
        entry = page.get_element_by_id(anchor)
        assert entry.get("data-profile") == s["profile"] and entry.getparent().get("id") == \
            "flags-table"
        assert [(r.get("data-code"), r.get("data-severity"), text(r.xpath("td")[-1]))
                for r in entry.xpath("tr")] == \
            [(f["code"], f["severity"], f["reason"]) for f in s["flags"]]
        warnings = [f["reason"] for f in s["flags"] if f["severity"] == "warning"]
        mark = row.xpath('.//sup[@class="mark"]')
        assert (mark[0].get("title") == "; ".join(warnings)) if warnings else not mark
    codes = {f["code"]: f["severity"] for s in summary for f in s["flags"]}
    advice = {dd.get("data-code"): text(dd) for dd in section.xpath('.//dd')}
    assert set(advice) == set(codes)
    for code, severity in codes.items():
        assert advice[code] == (FLAGS[code].advice if severity == "warning"
                                else "Nothing: a note, not a problem.")


def test_warnings_say_at_the_top_how_to_get_a_clean_run(rendered):
    doc, page, _ = rendered
    summary = summary_of(doc)
    warned = [s for s in summary if any(f["severity"] == "warning" for f in s["flags"])]
    banner = page.get_element_by_id("flag-banner")
    assert f"{len(warned)} of {len(summary)} points are flagged" in text(banner)
    assert [text(li) for li in banner.xpath(".//li")] == flag_advice(summary)
    ids = [e.get("id") for e in page.iter() if isinstance(e.tag, str) and e.get("id")]
    assert ids.index("flag-banner") < ids.index("headline")
    assert text(page.get_element_by_id("flagged-count")) == f"{len(warned)} flagged"


def test_notes_are_shown_but_not_alarmed(tmp_path):
    """Without warnings (a loose target, the point with a failed repeat dropped) only the
    notes stay."""
    doc = load("full")
    doc["settings"]["target_ci_pct"] = 100.0
    failed = {point_key(r) for r in doc["results"] if r["status"] != "ok"}
    doc["results"] = [r for r in doc["results"] if point_key(r) not in failed]
    summary = summary_of(doc)
    assert {f["severity"] for s in summary for f in s["flags"]} == {"note"}
    page, md, _ = report(tmp_path, doc)
    assert not page.xpath('//*[@id="flag-banner"]') and not page.xpath('//*[@id="failures"]')
    assert text(page.get_element_by_id("flagged-count")) == "0 flagged"
    notes = page.xpath('//table[@id="headline-table"]//a[contains(@class, "flag")]')
    assert notes and all(a.get("class") == "flag note" for a in notes)
    assert not page.xpath('//table[@id="headline-table"]//sup[@class="mark"]')
    assert "ℹ `no_measurable_overhead`" in md and "points are flagged" not in md


def test_clean_run_says_so(tmp_path):
    doc = load("no_baseline")
    doc["settings"]["target_ci_pct"] = 100.0
    assert not any(s["flags"] for s in summary_of(doc))
    page, md, _ = report(tmp_path, doc)
    assert "No point is flagged" in text(page.get_element_by_id("flags"))
    assert "**Flags**" not in md and "points are flagged" not in md


# --------------------------------------------------------------------- per repeat


def test_every_repeat_recomputed_from_its_raw_rows(rendered):
    doc, page, _ = rendered
    for r in doc["results"]:
        rows = page.xpath(f'//table[@class="repeats"][@data-profile="{r["profile"]}"]'
                          f'[@data-mode="{r["mode"]}"]/tbody/tr[@data-size="{r["size"]}"]'
                          f'[@data-repeat="{r["repeat"]}"]')
        assert len(rows) == 1, r
        row = rows[0]
        assert row.get("data-status") == r["status"]
        assert text(row.xpath('td[@data-col="order"]')[0]) == str(r["order"])
        assert text(row.xpath('td[@data-col="cpus"]')[0]) == \
            f"pub {r['cpus']['pub']}, sub {r['cpus']['sub']}"
        if r["status"] != "ok":
            assert r["error"] in text(row)
            continue
        figures, count = stats.repeat_figures(r)
        for td in row.xpath("td[@data-col]"):
            key = td.get("data-col")
            if key in ("order", "cpus"):
                continue
            if key == "count":
                assert num(text(td)) == count
            elif key == "values":
                values = [float(v) for v in text(td).split()] if r["mode"] == "latency" \
                    else None
                if values is not None:
                    assert values == [round(v, 1) for v in stats.repeat_values(r)]
            else:
                digits = 0 if key in ("mean_rate_sps", "lost", "stalled_seconds") else 1
                check_value(text(td), figures[key], digits)
        shown = {td.get("data-col") for td in row.xpath("td[@data-col]")}
        assert set(figures) <= shown


def test_repeat_columns_say_what_each_figure_is(full):
    _, page, _ = full
    header = [text(th) for th in page.xpath('(//table[@class="repeats"])[1]/thead//th')]
    assert header == ["Size (B)", "Repeat", "Order in run", "CPUs",
                      "Median of per-second medians (µs)",
                      "p90: median of the per-second p90s (µs)",
                      "p99: median of the per-second p99s (µs)", "p99: worst second (µs)",
                      "Mean of all samples (µs)", "Std of per-second means (µs)",
                      "Min sample (µs)", "Max sample (µs)", "Samples",
                      "Measured per-second medians (µs), in time order"]


# --------------------------------------------------------------------- failures


def test_failed_repeat_is_shown_everywhere(full):
    doc, page, md = full
    failed = next(r for r in doc["results"] if r["status"] == "failed")
    name, size = failed["profile"], failed["size"]
    row = point_row(page, "headline-table", name, size)
    assert row.get("data-status") == "ok"                # the other repeat completed
    assert "✗ 1 of 2 repeats failed" in text(row)
    assert "foreign participant" in row.xpath('.//span[@class="warn"]')[0].get("title")
    banner = page.get_element_by_id("failures")
    assert "1 of 12 repeats failed" in text(banner) and name in text(banner)
    assert text(page.get_element_by_id("failed-count")) == "1 failed"
    details = text(page.get_element_by_id("environment"))
    assert failed["error"] in details
    assert "Last lines of sub" in details and "handshake reply failed" in details
    assert re.search(rf"\| `{name}` \| {size} \| [\d.]+ \(1 of 2 repeats failed\) \|", md)
    assert "1 of 12 repeats failed" in md and failed["error"] in md


def test_point_whose_every_repeat_failed(tmp_path):
    doc = load("full")
    for r in doc["results"]:
        if (r["profile"], r["size"]) == ("no_protection", 1024):
            r.update(status="failed", error="ddsperf ping exited with status 1")
            r.pop("raw")
    page, md, _ = report(tmp_path, doc)
    row = point_row(page, "headline-table", "no_protection", 1024)
    assert row.get("data-status") == "failed"
    assert "all 2 repeats failed: ddsperf ping exited with status 1" in text(row)
    assert f"| `no_protection` | 1024 | **failed** | {DASH} |" in md
    assert "failed" in text(page.get_element_by_id("fig-overhead"))


def test_no_failure_banner_when_all_ok(tmp_path):
    doc = load("throughput")
    page, md, _ = report(tmp_path, doc)
    assert not page.xpath('//*[@id="failures"]')
    assert "repeats failed" not in md


# --------------------------------------------------------------------- baseline / RTI gaps


def test_missing_baseline(tmp_path):
    doc = load("no_baseline")
    page, md, _ = report(tmp_path, doc)
    for s in summary_of(doc):
        row = point_row(page, "headline-table", s["profile"], s["size"])
        assert cell(row, "ratio") == DASH and cell(row, "added") == DASH
        assert (cell(row, "rti-ratio") == DASH) == (s["size"] == 100)
    assert "baseline was not measured" in text(page.get_element_by_id("overhead-plot"))
    assert "no baseline measured" in text(page.get_element_by_id("fig-overhead"))
    (row,) = [r for r in _md_rows(md, "| Profile | Size (B) |") if r[:2] == ["`rtps_sign`", "100"]]
    assert row[5:11] == [DASH] * 6          # no overhead, nothing published by RTI at 100 B


def test_unlisted_profile_and_unmeasured_point(tmp_path):
    """A partial run: a point never measured is '–', an undescribed profile still shows."""
    doc = load("full")
    doc["results"] = [r for r in doc["results"]
                      if not (r["profile"] == "rtps_sign" and r["size"] == 1024)]
    extra = copy.deepcopy(next(r for r in doc["results"] if r["profile"] == "rtps_sign"))
    extra["profile"] = "experimental"
    doc["results"].append(extra)
    model = build_report_model(doc)
    assert [p.name for p in model.profiles][-1] == "experimental"
    assert model.point("rtps_sign", "latency", 1024) is None
    page, md, _ = report(tmp_path, doc)
    row = point_row(page, "headline-table", "rtps_sign", 1024)
    assert row.get("data-status") == "missing" and "not measured" in text(row)
    assert page.xpath('//table[@class="repeats"][@data-profile="experimental"]')
    assert "not described in results.json" in text(page.get_element_by_id("profiles"))
    assert f"| `rtps_sign` | 1024 | {DASH} |" in md


def test_empty_run(tmp_path):
    doc = {"schema": "govkit.bench/2", "profiles": [], "results": []}
    page, md, _ = report(tmp_path, doc)
    assert not page.xpath("//figure") and not page.xpath("//*[@id='failures']")
    assert "No signed files" in text(page) and "No repeats were run" in text(page)
    assert "No latency was measured" in text(page)


# --------------------------------------------------------------------- plots


def _svg(page, key):
    svg = page.xpath(f'//figure[@id="{key}"]//svg')
    assert len(svg) == 1
    return svg[0]


def _whiskers(svg, kind: str) -> list:
    """The error-bar paths of the whisker groups of `kind` (matplotlib LineCollections)."""
    return svg.xpath(f'.//g[starts-with(@id, "{svg.getparent().get("id")}-whiskers-{kind}-")]'
                     f'//path')


def test_plots_are_inline_svg_with_titles_and_legends(rendered):
    doc, page, _ = rendered
    keys = ["fig-latency", "fig-overhead"] + \
        (["fig-throughput"] if any(r["mode"] == "throughput" for r in doc["results"]) else [])
    figures = page.xpath("//figure[@class='plot']")
    assert [f.get("id") for f in figures] == keys
    for f in figures:
        assert f.xpath(".//svg")[0].get("viewbox")          # lxml.html lowercases names
        assert text(f.xpath("figcaption")[0])
    latency = text(page.get_element_by_id("fig-latency"))
    assert "Median of per-second medians (µs, log scale)" in latency
    assert "95% interval" in latency
    for name in {r["profile"] for r in doc["results"]}:
        assert name in latency
    overhead = text(page.get_element_by_id("fig-overhead"))
    assert "RTI Connext published" in overhead and "95% interval" in overhead
    assert "Overhead over none as a ratio" in overhead
    assert "Overhead over none as added µs" in overhead


def test_overhead_plot_has_interval_whiskers(full):
    doc, page, _ = full
    svg = _svg(page, "fig-overhead")
    secured = [s for s in summary_of(doc) if s["vs_none"]]
    for kind in ("ratio", "added"):
        paths = _whiskers(svg, kind)
        # one vertical segment per point with an interval, in each panel
        segments = sum(p.get("d").count("M") for p in paths)
        assert segments == len(secured), kind
    assert _whiskers(_svg(page, "fig-latency"), "latency")


def test_throughput_plot_has_whiskers(tmp_path):
    page, _, _ = report(tmp_path, load("throughput"))
    svg = _svg(page, "fig-throughput")
    assert _whiskers(svg, "rate") and _whiskers(svg, "ratio")


def test_svg_ids_unique_across_the_page(tmp_path):
    page, _, _ = report(tmp_path, load("throughput"))
    ids = [e.get("id") for e in page.iter() if isinstance(e.tag, str) and e.get("id")]
    assert len(ids) == len(set(ids))
    refs = set()
    for e in page.iter():
        if not isinstance(e.tag, str):
            continue
        for value in e.attrib.values():
            refs.update(re.findall(r"url\(#([^)]+)\)", value))
        href = e.get("xlink:href") or e.get("href")
        if href and href.startswith("#") and len(href) > 1:
            refs.add(href[1:])
    assert refs and refs <= set(ids)


@pytest.mark.parametrize("name", ["sign$x^2$", r"a$\frac{$b", "$$", r"x\$y_1"])
def test_profile_names_are_never_mathtext(tmp_path, name):
    doc = load("full")
    for r in doc["results"]:
        if r["profile"] == "rtps_sign":
            r["profile"] = name
    for p in doc["profiles"]:
        if p["name"] == "rtps_sign":
            p["name"] = name
    page, md, _ = report(tmp_path, doc)
    for key in ("fig-latency", "fig-overhead"):
        labels = [t.text_content() for t in _svg(page, key).xpath(".//text")]
        assert name in labels, (key, labels)
    assert point_row(page, "headline-table", name, 32).get("data-status") == "ok"


# --------------------------------------------------------------------- other sections


def test_governance_settings_shown(full):
    doc, page, _ = full
    gov = page.get_element_by_id("profiles")
    rows = gov.xpath('.//table[@id="governance-table"]/tbody/tr')
    assert [r.get("data-profile") for r in rows] == ["none", "no_protection", "rtps_sign"]
    common = text(gov.xpath('.//*[@id="governance-common"]')[0])
    headers = [text(th) for th in gov.xpath('.//table[@id="governance-table"]/thead//th')]
    for p in doc["profiles"]:
        row = text(gov.xpath(f'.//tr[@data-profile="{p["name"]}"]')[0])
        for key, value in p["settings"].items():
            in_row = any(h.replace(" ", "").startswith(key) for h in headers) and value in row
            assert in_row or f"{key} = {value}" in common, (p["name"], key)
    assert "no security plugins" in text(gov.xpath('.//tr[@data-profile="none"]')[0])
    assert "RTPS messages signed" in text(gov.xpath('.//tr[@data-profile="rtps_sign"]')[0])


def test_environment_commands_and_hashes(full):
    doc, page, _ = full
    env = text(page.get_element_by_id("environment"))
    for key in ("cpu", "kernel", "cyclonedds", "openssl", "govkit"):
        assert str(doc["environment"][key]) in env, key
    assert doc["command"] in env and doc["settings"]["pinning"] in env
    commands = page.xpath('//*[@id="commands"]//tbody/tr')
    assert [int(text(tr.xpath("td")[0])) for tr in commands] == list(range(12))   # run order
    shown_lines = {ln for tr in commands for ln in tr.xpath(".//pre")[0].text.splitlines()}
    assert shown_lines == {c for r in doc["results"] for c in r["commands"]}
    for f in doc["signed_files"]:
        assert f["sha256"] in env and f["path"] in env


def test_the_machine_its_crypto_extensions_and_openssl_open_the_report(tmp_path):
    """issue 37, item 10: ratios are the machine's (rtps_sign 1.25× on one host, 1.74× on
    another): the report and summary.md say on which CPU, with which crypto extensions and
    which OpenSSL, at the top."""
    doc = load("full")
    doc["environment"]["cpu_crypto"] = {"AES-NI": True, "PCLMULQDQ": True, "VAES": False,
                                        "SHA": True, "AVX-512": False}
    page, md, _ = report(tmp_path, doc)
    machine = text(page.get_element_by_id("machine"))
    said = "AES-NI, PCLMULQDQ, SHA (no VAES, AVX-512)"
    assert said in machine and doc["environment"]["openssl"] in machine
    assert doc["environment"]["cpu"] in machine and "ratios are this machine's" in machine
    env = text(page.get_element_by_id("environment-table"))
    assert f"CPU crypto extensions{said}" in env
    assert said in md and "ratios are this machine's" in md


# --------------------------------------------------------------------- self-contained, safe


def test_output_is_self_contained(rendered):
    _, page, _ = rendered
    for el in page.iter():
        if not isinstance(el.tag, str):
            continue
        for attr in ("src", "href", "xlink:href", "action", "data", "poster"):
            value = (el.get(attr) or "").strip().lower()
            assert not value.startswith(("http://", "https://", "//")), (el.tag, value)
    assert not page.xpath("//script") and not page.xpath("//link")
    assert not page.xpath("//iframe|//img|//object|//embed")
    for style in page.xpath("//style/text()"):
        assert "@import" not in style and "url(" not in style


def test_everything_is_escaped(tmp_path):
    doc = load("no_baseline")
    evil = "<script>alert(1)</script>"
    doc["profiles"][0]["title"] = evil
    doc["command"] = "govkit bench <b>x</b>"
    doc["results"][1].update(status="failed", error=f"boom {evil} & more",
                             output_tail={"pub": f"tail {evil}"})
    doc["environment"]["cpu"] = '"><img src=x onerror=alert(1)>'
    doc["settings"]["method"] = f"method {evil}"
    for r in doc["results"]:
        if r["profile"] == "rtps_encrypt":
            r["profile"] = "<i>enc</i>"
    page, md, out = report(tmp_path, doc)
    assert not page.xpath("//script") and not page.xpath("//img")
    assert not page.xpath("//b[.='x']") and not page.xpath("//i[.='enc']")
    body = text(page)
    assert evil in body and "govkit bench <b>x</b>" in body and "<i>enc</i>" in body
    raw = (out / "report.html").read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in raw


def test_the_eavesdropper_table_escapes_everything(tmp_path):
    """--leaks: every string of a stored leaks record (what it names, says, shows, the
    runtime a sentence names) reaches report.html as text."""
    from test_markdown_escaping import hostile_leaks
    doc = load("wire")
    doc["wire"]["points"][3]["leaks"] = hostile_leaks(iter(range(1000)))
    page, md, out = report(tmp_path, doc)
    assert not page.xpath("//script") and not page.xpath("//img")
    assert not page.xpath("//b[.='bold']") and not page.xpath("//i[.='x']")
    (row,) = page.xpath('//table[@id="leak-table"]/tbody/tr')
    assert row.get("data-profile") == doc["wire"]["points"][3]["profile"]
    body = text(page)
    assert "<script>alert(1)</script>" in body and "<img src=x onerror=alert(1)>" in body
    raw = (out / "report.html").read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in raw
    evidence = page.xpath('//details[@class="leak-entries"]//code[@class="evidence"]/text()')
    assert len(evidence) == 9 and "<script>alert(1)</script>" in evidence


def test_summary_md_escapes_table_breakers(tmp_path):
    doc = load("no_baseline")
    doc["results"][0].update(status="failed", error="bad | pipe\nsecond line")
    for r in doc["results"]:
        if r["profile"] == "rtps_sign":
            r["profile"] = "a|b"
    _, md, _ = report(tmp_path, doc)
    assert "bad \\| pipe" in md and "second line" not in md
    assert "| `a\\|b` | 32 |" in md


# --------------------------------------------------------------------- writing


def test_write_report_is_deterministic_and_leaves_no_temp_files(tmp_path):
    shutil.copy(DATA / "full" / "results.json", tmp_path / "results.json")
    html1, md1 = write_report(tmp_path)
    first = (html1.read_bytes(), md1.read_bytes())
    write_report(tmp_path)
    assert (html1.read_bytes(), md1.read_bytes()) == first
    assert sorted(p.name for p in tmp_path.iterdir()) == \
        ["report.html", "results.json", "summary.md"]
    assert first[0].startswith(b"<!DOCTYPE html>")


def test_render_functions_work_on_a_model():
    doc = load("full")
    model = build_report_model(doc)
    assert model.sizes == [32, 1024]
    assert [g.profile.name for g in model.latency] == ["none", "no_protection", "rtps_sign"]
    assert model.point("none", "latency", 32).estimate == \
        next(s["estimate"] for s in doc["summary"] if (s["profile"], s["size"]) == ("none", 32))
    assert [f.profile for f in model.failures] == ["no_protection"]
    assert not model.has_throughput and model.has_overhead
    assert render_html(model).count("<svg") == 2
    assert render_summary_md(model).count("\n| `") == 6


# --------------------------------------------------------------------- malformed input


def _broken(mutate, fixture="full"):
    doc = load(fixture)
    mutate(doc)
    return json.dumps(doc)


def _ok(doc, i=0):
    return [r for r in doc["results"] if r["status"] == "ok"][i]


MALFORMED = [
    ("not json", "{ nope", "not valid JSON: Expecting property name"),
    ("empty", "", "not valid JSON"),
    ("top-level list", "[]", "expected a JSON object at the top level"),
    ("nan", _broken(lambda d: _ok(d)["raw"]["rows"][1].update(p50=math.nan)),
     "NaN is not a JSON number"),
    ("old schema", _broken(lambda d: d.update(schema="govkit.bench/1")),
     "schema 'govkit.bench/1' predates raw per-second rows, from which the report "
     "recomputes every figure; re-run `govkit bench` (it writes 'govkit.bench/3')"),
    ("wrong schema", _broken(lambda d: d.update(schema="govkit.bench/9")),
     "schema is 'govkit.bench/9', expected 'govkit.bench/3'"),
    ("no results", _broken(lambda d: d.pop("results")), "missing 'results' (expected a list)"),
    ("results not list", _broken(lambda d: d.update(results={})),
     "results: expected a list, got {}"),
    ("size not int", _broken(lambda d: d["results"][3].update(size="32")),
     "results[3].size: expected an integer, got \"32\""),
    ("unknown mode", _broken(lambda d: d["results"][3].update(mode="jitter")),
     "results[3].mode: expected 'latency' or 'throughput', got 'jitter'"),
    ("ok without raw", _broken(lambda d: d["results"][0].pop("raw")),
     "missing 'results[0].raw' (expected an object)"),
    ("row value not number", _broken(lambda d: d["results"][0]["raw"]["rows"][2].update(
        p50="x")), "results[0].raw.rows[2].p50: expected a number, got \"x\""),
    ("row value missing", _broken(lambda d: d["results"][0]["raw"]["rows"][0].pop("p99")),
     "missing 'results[0].raw.rows[0].p99' (expected a number)"),
    ("negative count", _broken(lambda d: d["results"][0]["raw"]["rows"][0].update(count=-1)),
     "results[0].raw.rows[0].count: expected 0 or a number from 1e-09 to 1e+12, got -1"),
    ("unknown format", _broken(lambda d: d["results"][0]["raw"].update(format="csv")),
     "results[0].raw.format: unknown row format 'csv'"),
    ("format of another mode", _broken(lambda d: d["results"][0]["raw"].update(
        format="throughput-per-second")),
     "results[0].raw.format: 'throughput-per-second' rows cannot make a latency result"),
    ("summary format without summary", _broken(lambda d: d["results"][0]["raw"].update(
        format="latency-summary")), "missing 'results[0].raw.summary' (expected an object)"),
    ("no measured rows", _broken(lambda d: d["results"][0].update(warmup_rows=9)),
     "results[0].raw.rows: no measured rows (3 rows, all within the 9 warm-up rows)"),
    ("measured_rows 0", _broken(lambda d: d["results"][0].update(measured_rows=0)),
     "results[0]: warmup_rows 1 and measured_rows 0: expected"),
    ("no samples", _broken(lambda d: [row.update(count=0) for row in
                                      d["results"][0]["raw"]["rows"]]),
     "results[0].raw.rows: the measured rows hold no samples"),
    ("mixed formats", _broken(lambda d: [r["raw"].update(format="latency-summary",
                                                         summary={"median_of_samples": 30.0})
                                         for r in d["results"][1:2]]),
     "'latency-per-second', but another repeat of this point has 'latency-summary'"),
    ("cpus not text", _broken(lambda d: d["results"][0].update(cpus={"pub": [0]})),
     "results[0].cpus.pub: expected a string, got [0]"),
    ("target not number", _broken(lambda d: d["settings"].update(target_ci_pct="5")),
     "settings.target_ci_pct: expected a number, got \"5\""),
    ("bool as number", _broken(lambda d: d["results"][0]["raw"]["rows"][0].update(
        mean=True)), "results[0].raw.rows[0].mean: expected a number, got true"),
    ("profile not object", _broken(lambda d: d["profiles"].append("rtps_sign")),
     "profiles[3]: expected an object"),
    ("wire not object", _broken(lambda d: d.update(wire=[1])),
     "wire: not an object with a list of points"),
    ("wire point without counts", _broken(lambda d: d["wire"]["points"][2].pop("observed"),
                                          "wire"),
     "wire.points[2]: cannot be read (KeyError: 'observed')"),
    ("wire failed point without error", _broken(
        lambda d: d["wire"]["points"][1].update(status="failed", error=None) or
        d["wire"]["points"][1].pop("error"), "wire"),
     "wire.points: cannot be summed per profile (KeyError: 'error')"),
    ("wire counts not numbers", _broken(
        lambda d: d["wire"]["points"][0]["observed"]["user"].update(readable="many"), "wire"),
     "wire.points[0]: cannot be read (TypeError"),
    ("deep nesting", "[" * 100_000 + "]" * 100_000, "nested deeper than 32 levels"),
    ("deep inside", _broken(lambda d: d["environment"].update(x=json.loads("[" * 40 +
                                                                             "]" * 40))),
     "nested deeper than 32 levels"),
]


@pytest.mark.parametrize(("content", "expected"), [m[1:] for m in MALFORMED],
                         ids=[m[0] for m in MALFORMED])
def test_malformed_results_json_is_one_clear_line(tmp_path, content, expected):
    path = tmp_path / "results.json"
    path.write_text(content)
    with pytest.raises(GovkitError) as exc:
        write_report(tmp_path)
    message = str(exc.value)
    assert exc.value.exit_code == EXIT_USAGE == 2
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    assert expected in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


@pytest.mark.parametrize(("content", "expected"), [
    ("[" * 100_000 + "]" * 100_000, "nested deeper than 32 levels"),
    (_broken(lambda d: d.update(schema="govkit.bench/1")), "predates raw per-second rows"),
], ids=["deep", "schema 1"])
def test_govkit_report_command_exits_2_with_one_line(tmp_path, content, expected):
    (tmp_path / "results.json").write_text(content)
    r = subprocess.run([GOVKIT, "report", str(tmp_path)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and expected in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_govkit_report_command_writes_both_files(tmp_path):
    shutil.copy(DATA / "full" / "results.json", tmp_path / "results.json")
    r = subprocess.run([GOVKIT, "report", str(tmp_path)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [f"wrote {tmp_path / 'report.html'}",
                                     f"wrote {tmp_path / 'summary.md'}"]


def test_missing_results_json(tmp_path):
    with pytest.raises(GovkitError) as exc:
        write_report(tmp_path)
    assert exc.value.exit_code == 2
    assert str(exc.value) == f"{tmp_path / 'results.json'}: not found (run `govkit bench` first)"


def test_unreadable_results_json(tmp_path):
    (tmp_path / "results.json").mkdir()
    with pytest.raises(GovkitError) as exc:
        write_report(tmp_path)
    assert exc.value.exit_code == 2 and "is a directory, not a results file" in str(exc.value)


def test_build_report_model_names_its_source():
    with pytest.raises(GovkitError, match=r"^x/results\.json: missing 'schema'"):
        build_report_model({}, source="x/results.json")


def test_summary_only_runner(tmp_path):
    """A runner without per-second rows (RTI Perftest: one end-of-run summary per repeat)
    gets its own honest column names and no per-second values or tail."""
    doc = load("full")
    doc["runner"] = doc["settings"]["runner"] = "perftest"
    for r in doc["results"]:
        if r["status"] == "ok":
            rows = r["raw"]["rows"][r["warmup_rows"]:]
            r["raw"] = {"format": "latency-summary", "rows": [], "summary": {
                "median_of_samples": rows[0]["p50"], "p90_of_samples": rows[0]["p90"],
                "p99_of_samples": rows[0]["p99"], "mean_of_samples": rows[0]["mean"],
                "std_of_samples": 1.5, "min": rows[0]["min"], "max": rows[0]["max"]}}
            r.update(warmup_rows=0, measured_rows=0)
    summary = summary_of(doc)
    page, md, _ = report(tmp_path, doc)
    header = [words(th) for th in page.xpath('//table[@id="headline-table"]/thead//th')]
    assert header[2] == "Median over repeats of each run's sample median (µs) 95% interval"
    for s in summary:
        row = point_row(page, "headline-table", s["profile"], s["size"])
        check_value(cell(row, "estimate"), s["estimate"], 1)
        check_interval(cell(row, "estimate-ci"), s["ci95"], 1)
        assert cell(row, "p99-median") == DASH and cell(row, "seconds") == f"({DASH} s)"
        check_value(cell(row, "ratio"), s["vs_none"] and s["vs_none"]["ratio"], 2)
    repeat_header = [text(th) for th in
                     page.xpath('(//table[@class="repeats"])[1]/thead//th')]
    assert repeat_header[4:] == ["Median of all samples (µs)", "p90 of all samples (µs)",
                                 "p99 of all samples (µs)", "Mean of all samples (µs)",
                                 "Std of all samples (µs)", "Min sample (µs)",
                                 "Max sample (µs)", "Samples"]
    assert "this run used `perftest` on loopback" in md


def test_a_rotating_run_fills_the_latency_section_and_its_plot(tmp_path):
    """The default design's report showed its cost matrix but "No latency was measured"
    below it: the sections read doc["results"], where a rotating run keeps nothing (its
    records are made from rotation.slots, one per profile, size and process pair)."""
    page, _, _ = report(tmp_path, load("rotation"))
    html = lxml.html.tostring(page, encoding="unicode")
    assert "No latency was measured" not in html
    assert "No completed latency repeat to plot" not in html
    for profile in ("none", "rtps_sign"):       # one measured row each (point_row asserts)
        row = point_row(page, "headline-table", profile, 32)
        assert cell(row, "estimate") != DASH
    header = [text(th) for th in page.xpath('(//table[@class="repeats"])[1]/thead//th')]
    assert "Median of slot medians (µs)" in header and "p99.9 of all samples (µs)" in header
    # the tail is named for what a rotating run measures, not per-second p99s
    heads = [text(th) for th in page.xpath('//table[@id="headline-table"]/thead//th')]
    assert "p99 of all samples (µs)" in heads and "Process pairs" in heads
    assert not any("p99 of seconds" in h or "Repeats" in h for h in heads)
    assert "the tail, p99 of all samples" in html and "per-second p99s" not in html
    # nor are its per-instance series counted as repeats in the header
    facts = " ".join(text(li) for li in page.xpath('//ul[@class="facts"]/li'))
    assert "series (point × process pair)" in facts and "repeats run" not in facts


def test_the_rotation_sentence_says_when_an_arm_got_slots():
    """After the minimum rounds, an arm got slots while it had fewer than 20 rounds or its
    ratio was wider than the target; a run from before that rule (no min_arm_rounds
    recorded) is not described as following it."""
    from govkit.report.run import build_report_model, render_summary_md

    doc = load("rotation")
    doc["rotation"]["settings"]["min_arm_rounds"] = 20
    text_now = render_summary_md(build_report_model(doc))
    assert "only the ratios with fewer than 20 rounds or still wider than ±" in text_now
    del doc["rotation"]["settings"]["min_arm_rounds"]
    text_then = render_summary_md(build_report_model(doc))
    assert "only the ratios still wider than ±" in text_then
    assert "fewer than 20 rounds" not in text_then


@pytest.mark.parametrize("name", ["データ保護", "nul\x00x", "rlo\u202ex", "esc\x1b[2Jx"])
def test_a_name_no_font_can_draw_prints_nothing_on_stderr(tmp_path, name):
    """A profile name from results.json with characters DejaVu Sans lacks: matplotlib drew
    a box but printed a UserWarning naming its own source line on stderr, per glyph and
    figure, under a report that succeeded; and a terminal table printed ESC raw."""
    doc = json.loads((DATA / "full" / "results.json").read_text())
    for where in (doc["profiles"], doc["results"], doc.get("summary") or []):
        for entry in where:
            for key in ("name", "profile"):
                if entry.get(key) == "rtps_sign":
                    entry[key] = name
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "results.json").write_text(json.dumps(doc))
    (tmp_path / "b").mkdir()          # compared with the run it came from
    shutil.copy(DATA / "full" / "results.json", tmp_path / "b")
    govkit = str(Path(sys.executable).with_name("govkit"))
    for args in ([str(tmp_path / "a")], [str(tmp_path / "a"), str(tmp_path / "b"), "--out",
                                         str(tmp_path / "cmp")]):
        done = subprocess.run([govkit, "report", *args], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stderr == "", done.stderr
        assert "\x1b" not in done.stdout


def test_a_flagged_a_a_floor_is_in_the_banner_too():
    """The banner counted points only: a run whose A/A interval excluded 1 (run A of issue
    17) said "2 of 21 points are flagged" and nothing of the floor, which is flagged under
    the cost matrix and fails `--fail-on-flag aa_excludes_one`."""
    from dataclasses import replace

    from govkit.report.run import build_report_model, render_html
    model = build_report_model(load("rotation"))
    assert model.headline.floor_flags == ["the A/A interval ±2.3% is wider than the target "
                                          "±2%: the machine was too noisy for that precision"]
    from govkit.report.model import Flag
    assert not model.warned
    wide = Flag("wide_interval", "warning", "the interval is wider than the target")
    warned = [replace(model.points[0], flags=[*model.points[0].flags, wide]),
              *model.points[1:]]
    for points in (warned, model.points):
        m = replace(model, points=points)
        m.figures = model.figures
        banner = lxml.html.fromstring(render_html(m)).get_element_by_id("flag-banner")
        title = text(banner.xpath(".//h2")[0])
        assert title.endswith(", and the A/A noise floor" if m.warned
                              else "The A/A noise floor is flagged"), title
        assert "the machine was too noisy" in text(banner.xpath(".//li[@data-floor-flag]")[0])
        # the facts at the top too: "0 flagged" alone read as a clean run (run K, 17:19)
        page = lxml.html.fromstring(render_html(m))
        assert text(page.get_element_by_id("floor-flagged")) == "A/A floor flagged"
        assert text(page.get_element_by_id("flagged-count")) == f"{len(m.warned)} flagged"
    m = replace(m, headline=replace(model.headline, floor_flags=[]), floor_flagged=[])
    assert 'id="flag-banner"' not in render_html(m)
    assert 'id="floor-flagged"' not in render_html(m)


def test_the_flags_section_lists_the_a_a_floor_it_is_flagged_for(tmp_path):
    """issue 37, item 7: report.html's Flags section said "No point is flagged" beside the
    "A/A floor flagged" fact at the top; the floor's flags are listed there now, with their
    advice, as the terminal's closing lines and --fail-on-flag read them, and summary.md
    lists them too."""
    doc = load("rotation")
    page, md, _ = report(tmp_path, doc)
    assert text(page.get_element_by_id("floor-flagged")) == "A/A floor flagged"
    flags = page.get_element_by_id("flags")
    assert not flags.xpath('.//*[@id="no-flags"]')
    row = flags.xpath('.//tbody[@data-profile="none (A/A)"]/tr')
    assert [r.get("data-code") for r in row] == ["aa_wide"]
    assert "A/A: none vs none latency 32 B" in text(flags)
    assert flags.xpath('.//dt[@data-code="aa_wide"]')                 # and what to do
    advice = [text(li) for li in page.xpath('//*[@id="flag-banner"]//li')]
    assert advice[0].startswith("aa_wide on 1 point(s): ")       # as the terminal says it
    assert "- A/A `none` vs `none` latency 32 B — ⚠ `aa_wide`: the A/A interval" in md
    assert "aa_wide on 1 point(s): " in md


def test_gates_read_the_same_in_results_json_report_and_summary(tmp_path):
    """issue 37, item 7: --max-ratio/--fail-on-flag verdicts were said on stderr only. The
    run's gates are a setting; their verdict is results.json's `gates` (written at every
    save), recomputed by the report, and report.html and summary.md say it in the same
    words as the terminal (govkit.results.gates.verdict_line, one line per failure)."""
    from govkit.results.gates import gate_settings, verdict_line
    from govkit.results.store import ResultStore
    doc = load("rotation")
    doc["settings"]["gates"] = gate_settings({"aa_wide", "wide_interval"},
                                             {"rtps_sign": 1.01, "rtps_encrypt": 3})
    store = ResultStore(tmp_path, doc)
    store.save()
    stored = json.loads((tmp_path / "results.json").read_text())["gates"]
    assert stored == {
        "fail_on_flag": ["aa_wide", "wide_interval"],
        "max_ratio": {"rtps_sign": 1.01, "rtps_encrypt": 3}, "passed": False,
        "failures": [
            "rtps_sign latency 32 B: costs 1.86× none [1.84, 1.88], above --max-ratio "
            "rtps_sign=1.01",
            "A/A none latency 32 B: flagged aa_wide (--fail-on-flag)",
            "rtps_encrypt: no latency point was measured, so --max-ratio rtps_encrypt=3 "
            "cannot pass"]}
    line = verdict_line(stored)
    assert line == ("gates FAILED (3 reasons; --max-ratio rtps_sign=1.01, --max-ratio "
                    "rtps_encrypt=3, --fail-on-flag aa_wide,wide_interval)")
    html, md_path = write_report(tmp_path)
    page = lxml.html.fromstring(html.read_bytes())
    gates = page.get_element_by_id("gates")
    assert text(gates.xpath(".//h2")[0]) == f"✗ {line}"
    assert [text(li) for li in gates.xpath(".//li[@data-gate]")] == stored["failures"]
    assert text(page.get_element_by_id("gates-fact")) == "gates FAILED"
    assert 'id="stored-summary"' not in html.read_text() or "gates" not in text(
        page.get_element_by_id("stored-summary"))
    md = md_path.read_text()
    assert f"> **✗ {md_cell(line)}**" in md
    for failure in stored["failures"]:
        assert f"> - {md_cell(failure)}" in md
    # a stored verdict that is not the recomputed one is said, like a stored figure
    tampered = json.loads((tmp_path / "results.json").read_text())
    tampered["gates"]["passed"] = True
    page, _, _ = report(tmp_path, tampered)
    assert "the gates' stored verdict" in text(page.get_element_by_id("stored-summary"))
    # gates that pass say so, in green; no gates, no section
    doc["settings"]["gates"] = gate_settings(set(), {"rtps_sign": 2})
    page, md, _ = report(tmp_path, {**doc, "gates": None})
    assert text(page.get_element_by_id("gates").xpath(".//h2")[0]) == \
        "✓ gates passed (--max-ratio rtps_sign=2)"
    doc["settings"].pop("gates")
    page, md, _ = report(tmp_path, {k: v for k, v in doc.items() if k != "gates"})
    assert not page.xpath('//*[@id="gates"]') and "gates" not in md


def test_a_rotating_run_states_its_intervals_once(tmp_path):
    """summary.md of a rotating run said "Intervals:" twice (the run's shape repeated the
    paired method) and described "Other points" that it did not have."""
    doc = load("rotation")
    recorded = doc["settings"]["interval"]      # before govkit recorded both, "other" only
    both = f"latency (rotation): {doc['rotation']['interval']} Other points: {recorded}"
    for recorded_text in (recorded, both):
        doc["settings"]["interval"] = recorded_text
        _intervals_once(tmp_path, doc)


def _intervals_once(tmp_path, doc):
    page, md, _ = report(tmp_path, doc)
    assert md.count("Intervals:") == 1 and "Other points" not in md
    interval = text(page.get_element_by_id("interval"))
    assert "hierarchical percentile bootstrap over the paired rounds" in interval
    assert "Other points" not in interval and "two-stage" not in interval


def test_a_rotating_run_with_throughput_shows_cpu_per_sample_and_its_cost_model(tmp_path):
    """Throughput rotated beside latency (tests/data/report/rotation_both): the cost matrix
    carries the throughput and CPU-per-sample ratios, the throughput table CPU per sample at
    the offered rate, and `govkit report --cost-at --json` the cost model, read at the
    user's own size (valid against govkit/schemas/json/report.schema.json)."""
    import json
    import shutil
    import subprocess
    import sys

    from helpers.json_schemas import assert_valid

    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parent.parent / "data" / "report" / "rotation_both", run)
    govkit = str(Path(sys.executable).with_name("govkit"))
    r = subprocess.run([govkit, "report", str(run), "--cost-at", "2048", "--cost-at",
                        "1048576", "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert_valid(doc, "report")
    at = {(c["profile"], c["figure"], c["size"]): c for c in doc["cost_at"]}
    assert set(at) == {("rtps_sign", f, s) for f in ("latency_added_us", "cpu_added_us_per_sample")
                       for s in (2048, 1048576)}
    inside = at[("rtps_sign", "latency_added_us", 2048)]
    assert inside["extrapolated"] is False
    assert inside["ci95"][0] <= inside["cost"] <= inside["ci95"][1]
    assert at[("rtps_sign", "latency_added_us", 1048576)]["extrapolated"] is True
    html = (run / "report.html").read_text()
    assert 'id="cost-model-table"' in html and 'data-kind="cpu-per-sample"' in html
    assert 'data-kind="throughput-ratio"' in html and 'data-kind="cpu-ratio"' in html
    assert "Cost at any size" in (run / "summary.md").read_text()
    table = subprocess.run([govkit, "report", str(run), "--cost-at", "2048"],
                           capture_output=True, text=True, timeout=120)
    assert table.returncode == 0 and "Added cost at your sizes" in table.stdout
    one = subprocess.run([govkit, "report", str(run), str(run), "--cost-at", "2048"],
                         capture_output=True, text=True, timeout=120)
    assert one.returncode == 2 and "read one run" in one.stderr


def test_a_cost_matrix_warning_stands_beside_the_figure_it_is_about(tmp_path):
    """A throughput point's flag marks the throughput ratio, its CPU lane's flag the CPU
    ratio, and neither the latency ratio (both once marked the latency ratio, in
    summary.md beside no throughput figure at all). The fixture stores the CPU overheads
    under their names of 2026-12-04 (`difference`): read under today's, they equal the
    recomputed ones, so the report says nothing differs."""
    from govkit.report.run import headline

    doc = json.loads((Path(__file__).parent.parent / "data" / "report" / "rotation_both"
                      / "results.json").read_text())
    summary = summarize(doc)
    assert Run.from_json(copy.deepcopy(doc)).stored_summary == summary
    row = {(r["profile"], r["mode"], r["size"]): r for r in summary}
    warned = {key: {f["code"] for f in r["flags"] if f["severity"] == "warning"}
              for key, r in row.items()}
    # the fixture's case: the 4096 B latency point is clean, its throughput point is wide
    assert not warned[("rtps_sign", "latency", 4096)]
    assert warned[("rtps_sign", "throughput", 4096)] == {"wide_interval"}

    page, md, _ = report(tmp_path, doc)
    for size in (32, 4096):
        cell = page.xpath(f'//table[@id="cost-matrix"]//tr[@data-profile="rtps_sign"]'
                          f'/td[@data-size="{size}"]')[0]
        lat, thr = warned[("rtps_sign", "latency", size)], warned[("rtps_sign", "throughput",
                                                                   size)]
        assert cell.get("data-warned") == ("yes" if lat else "no")
        assert ("⚠" in (cell.xpath('span[@data-kind="ratio"]')[0].tail or "")) == bool(lat)
        tspan, cspan = (cell.xpath(f'span[@data-kind="{k}"]')[0]
                        for k in ("throughput-ratio", "cpu-ratio"))
        assert tspan.get("data-warned") == ("yes" if thr - {"cpu_saturated"} else "no")
        assert ("⚠" in text(tspan)) == bool(thr - {"cpu_saturated"})
        assert cspan.get("data-warned") == ("yes" if "cpu_saturated" in thr else "no")
    line = next(x for x in md.splitlines() if x.startswith("| `rtps_sign` |"))
    at_4096 = line.split(" | ")[2]
    assert "⚠" not in at_4096.split(" · throughput")[0]
    assert re.search(r"throughput [\d.]+× \[[^]]+\] ⚠ · CPU/sample [\d.]+× \[[^]]+\]$", at_4096)
    assert "differ from those recomputed" not in md

    # a CPU slot that fell short marks the CPU ratio alone
    short = copy.deepcopy(summary)
    for r in short:
        if (r["profile"], r["mode"], r["size"]) == ("rtps_sign", "throughput", 4096):
            r["flags"] = [{"code": "cpu_saturated", "severity": "warning", "reason": "x"}]
    cells = dict((name, c) for name, c, _ in headline(doc, short).rows)["rtps_sign"]
    assert (cells[1].warned, cells[1].throughput_warned, cells[1].cpu_warned) == (
        False, False, True)


def test_an_aa_arm_without_an_interval_is_reported_not_a_crash(tmp_path):
    """A run whose A/A arm got too few rounds for an interval (a 1 s budget on a busy
    machine: CI of 2026-12-07) ended in 'internal error: UndefinedError: None has no
    element 0' from the report's and summary's A/A rows; each now says it has none."""
    doc = json.loads((DATA / "rotation" / "results.json").read_text())
    doc["rotation"]["slots"] = [s for s in doc["rotation"]["slots"] if s["round"] < 2]
    doc.pop("summary", None)
    (tmp_path / "results.json").write_text(json.dumps(doc))
    done = subprocess.run([GOVKIT, "report", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    md = (tmp_path / "summary.md").read_text()
    assert "| A/A `none` vs `none` | 1.008 (no interval: too few rounds)" in md
    page = lxml.html.parse(str(tmp_path / "report.html"))
    cells = page.xpath('//*[@data-kind="aa-ratio-ci"]')
    assert cells and all(text(c) == "no interval (too few rounds)" for c in cells)
