"""govkit.report: the model, report.html and summary.md against hand-built results.json files.

Fixtures (tests/data/report/*/results.json, schema govkit.bench/1):
  full         7 profiles x 3 sizes, latency only, one repeat, one failed point
  throughput   3 profiles, 3 repeats, latency + throughput, one failed repeat
  no_baseline  2 secured profiles, no `none`, a size RTI published nothing for
"""

from __future__ import annotations

import copy
import json
import math
import re
import shutil
from pathlib import Path

import lxml.html
import pytest

from govkit.errors import EXIT_USAGE, GovkitError
from govkit.report import (
    DASH,
    build_report_model,
    render_html,
    render_summary_md,
    write_report,
)

DATA = Path(__file__).parent / "data" / "report"
STATS_COLUMNS = ["Size (B)", "Avg", "Std", "Min", "Max", "50%", "90%", "99%", "Samples"]
STAT_KEYS = ["mean", "std", "min", "max", "median", "p90", "p99"]


def load(name: str) -> dict:
    return json.loads((DATA / name / "results.json").read_text())


def report(tmp_path: Path, doc: dict) -> tuple[lxml.html.HtmlElement, str, Path]:
    """Write `doc` as results.json, run write_report, return (parsed html, summary.md, dir)."""
    (tmp_path / "results.json").write_text(json.dumps(doc))
    html_path, md_path = write_report(tmp_path)
    assert html_path == tmp_path / "report.html" and md_path == tmp_path / "summary.md"
    return lxml.html.fromstring(html_path.read_bytes()), md_path.read_text(), tmp_path


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    doc = load("full")
    page, md, _ = report(tmp_path_factory.mktemp("full"), doc)
    return doc, page, md


@pytest.fixture(scope="module")
def throughput(tmp_path_factory):
    doc = load("throughput")
    page, md, _ = report(tmp_path_factory.mktemp("throughput"), doc)
    return doc, page, md


def text(el) -> str:
    return " ".join(el.text_content().split())


def headline_cell(page, profile: str, size: int, kind: str):
    cells = page.xpath(f'//table[@id="headline-table"]/tbody/tr[@data-profile="{profile}"]'
                       f'/td[@data-size="{size}"][@data-kind="{kind}"]')
    assert len(cells) == 1, (profile, size, kind)
    return cells[0]


def digits(el) -> str:
    """A number shown with thin-space thousands separators, without them."""
    return "".join(el.text_content().split())


def shown(cell) -> str:
    return text(cell.xpath('.//span[@class="v"]')[0])


def as_ratio(s: str) -> float:
    assert s.endswith("\u00d7"), s
    return float(s[:-1])


def ok_latency(doc: dict) -> list[dict]:
    return [r for r in doc["results"] if r["mode"] == "latency" and r["status"] == "ok"]


# --------------------------------------------------------------------- fixtures sanity


def test_fixtures_are_what_the_tests_assume():
    doc = load("full")
    assert doc["schema"] == "govkit.bench/1"
    assert len(doc["profiles"]) == 7 and doc["settings"]["sizes"] == [32, 1024, 63000]
    assert len(doc["results"]) == 21
    assert [r["status"] for r in doc["results"]].count("failed") == 1
    assert not any(r["mode"] == "throughput" for r in doc["results"])


# --------------------------------------------------------------------- headline


def test_headline_numbers_equal_summary(full):
    doc, page, _ = full
    rows = page.xpath('//table[@id="headline-table"]/tbody/tr')
    assert [r.get("data-profile") for r in rows] == [p["name"] for p in doc["profiles"]]
    for s in doc["summary"]:
        median = headline_cell(page, s["profile"], s["size"], "median")
        assert median.get("data-status") == "ok"
        assert float(shown(median)) == round(s["median_us"], 1)
        for kind, key in (("overhead", "overhead_vs_none"), ("rti", "rti_ratio")):
            value = shown(headline_cell(page, s["profile"], s["size"], kind))
            if s[key] is None:
                assert value == DASH
            else:
                assert as_ratio(value) == round(s[key], 2), (s, kind)


def test_headline_has_one_column_group_per_size(full):
    doc, page, _ = full
    groups = page.xpath('//table[@id="headline-table"]/thead/tr[1]/th[@colspan="3"]')
    assert [text(g) for g in groups] == [f"{s} B" for s in doc["settings"]["sizes"]]
    sub = [text(th) for th in page.xpath('//table[@id="headline-table"]/thead/tr[2]/th')]
    assert sub == ["Median µs", "× none", "RTI ×"] * 3


def test_rti_ratio_is_the_summarys_not_recomputed(tmp_path):
    doc = load("full")
    for s in doc["summary"]:
        if s["profile"] == "rtps_sign" and s["size"] == 32:
            s["rti_ratio"] = 9.87  # a value published_ratio would never give
    page, md, _ = report(tmp_path, doc)
    assert shown(headline_cell(page, "rtps_sign", 32, "rti")) == "9.87\u00d7"
    assert "| `rtps_sign` | 32 | 45.8 | 1.19× | 9.87× |" in md


# --------------------------------------------------------------------- failures


def test_failed_point_is_shown_everywhere(full):
    doc, page, md = full
    failed = next(r for r in doc["results"] if r["status"] == "failed")
    name, size = failed["profile"], failed["size"]
    cell = headline_cell(page, name, size, "median")
    assert cell.get("data-status") == "failed" and "failed" in shown(cell)
    assert "peer never matched" in cell.get("title")
    assert shown(headline_cell(page, name, size, "overhead")) == DASH
    # detailed statistics: a row for the failed point with the full error
    row = page.xpath(f'//table[@class="stats"][@data-profile="{name}"]'
                     f'/tbody/tr[@data-size="{size}"]')
    assert len(row) == 1 and row[0].get("data-status") == "failed"
    assert "FAILED" in text(row[0]) and "waiting for ping" in text(row[0])
    # the banner at the top, the header count and summary.md
    banner = page.get_element_by_id("failures")
    assert "1 of 21" in text(banner) and name in text(banner)
    assert text(page.get_element_by_id("failed-count")) == "1 failed"
    assert f"| `{name}` | {size} | **failed** | {DASH} | {DASH} |" in md
    assert "1 of 21 points failed" in md


def test_failed_repeat_next_to_successful_ones(throughput):
    doc, page, md = throughput
    cell = headline_cell(page, "rtps_encrypt", 1024, "median")
    assert cell.get("data-status") == "ok"
    assert "1 run failed" in text(cell) and "(2 runs)" in text(cell)
    rows = page.xpath('//table[@class="stats"][@data-profile="rtps_encrypt"]'
                      '/tbody/tr[@data-size="1024"]')
    assert [r.get("data-status") for r in rows] == ["ok", "ok", "failed"]
    assert [r.get("data-repeat") for r in rows] == ["0", "1", "2"]
    assert "| `rtps_encrypt` | 1024 | 51.5 (1 of 3 runs failed) |" in md


def test_no_failure_banner_when_all_ok(tmp_path):
    doc = load("throughput")
    doc["results"] = [r for r in doc["results"] if r["status"] == "ok"]
    page, md, _ = report(tmp_path, doc)
    assert not page.xpath('//*[@id="failures"]')
    assert "failed" not in md


# --------------------------------------------------------------------- statistics tables


def test_detailed_statistics_equal_results(full):
    doc, page, _ = full
    for table in page.xpath('//table[@class="stats"]'):
        assert [text(th) for th in table.xpath("thead/tr/th")] == STATS_COLUMNS
    for r in ok_latency(doc):
        rows = page.xpath(f'//table[@class="stats"][@data-profile="{r["profile"]}"]'
                          f'/tbody/tr[@data-size="{r["size"]}"][@data-repeat="{r["repeat"]}"]')
        assert len(rows) == 1, r
        cells = rows[0].xpath("td")
        assert int(text(cells[0])) == r["size"]
        for key, cell in zip(STAT_KEYS, cells[1:8], strict=True):
            assert cell.get("data-col") == key
            assert float(text(cell)) == round(r["latency_us"][key], 1), (r, key)
        assert int(digits(cells[8])) == r["count"]


def test_statistics_tables_in_catalog_order_sizes_ascending(full):
    doc, page, _ = full
    tables = page.xpath('//table[@class="stats"]')
    assert [t.get("data-profile") for t in tables] == [p["name"] for p in doc["profiles"]]
    for t in tables:
        sizes = [int(r.get("data-size")) for r in t.xpath("tbody/tr")]
        assert sizes == sorted(sizes) == [32, 1024, 63000]


def test_repeats_get_a_run_column(throughput):
    doc, page, _ = throughput
    header = [text(th) for th in page.xpath('(//table[@class="stats"])[1]/thead/tr/th')]
    assert header == ["Size (B)", "Run", *STATS_COLUMNS[1:]]
    for r in ok_latency(doc):
        row = page.xpath(f'//table[@class="stats"][@data-profile="{r["profile"]}"]/tbody/'
                         f'tr[@data-size="{r["size"]}"][@data-repeat="{r["repeat"]}"]')[0]
        assert float(text(row.xpath('td[@data-col="median"]')[0])) == \
            round(r["latency_us"]["median"], 1)


# --------------------------------------------------------------------- baseline / RTI gaps


def test_missing_baseline_ratio_shown_as_dash(tmp_path):
    doc = load("no_baseline")
    assert all(s["overhead_vs_none"] is None for s in doc["summary"])
    page, md, _ = report(tmp_path, doc)
    for s in doc["summary"]:
        assert shown(headline_cell(page, s["profile"], s["size"], "overhead")) == DASH
        rti = shown(headline_cell(page, s["profile"], s["size"], "rti"))
        assert rti == (DASH if s["rti_ratio"] is None else f"{s['rti_ratio']:.2f}\u00d7")
    assert "rti" in {c.get("data-kind") for c in page.xpath("//td[@data-size='100']")}
    assert shown(headline_cell(page, "rtps_sign", 100, "rti")) == DASH
    assert "baseline was not measured" in text(page.get_element_by_id("overhead-plot"))
    assert f"| `rtps_sign` | 100 | 46.0 | {DASH} | {DASH} |" in md


def test_only_some_profiles_and_sizes(tmp_path):
    """A partial run: points never measured are '–', unlisted profiles still appear."""
    doc = load("full")
    doc["results"] = [r for r in doc["results"]
                      if not (r["profile"] == "rtps_encrypt" and r["size"] == 1024)]
    doc["summary"] = [s for s in doc["summary"]
                      if not (s["profile"] == "rtps_encrypt" and s["size"] == 1024)]
    extra = copy.deepcopy(next(r for r in doc["results"] if r["profile"] == "rtps_sign"))
    extra["profile"] = "experimental"
    doc["results"].append(extra)
    model = build_report_model(doc)
    cell = model.cell("rtps_encrypt", 1024)
    assert cell.status == "missing" and cell.median_us is None
    assert [p.name for p in model.profiles][-1] == "experimental"
    page, md, _ = report(tmp_path, doc)
    missing = headline_cell(page, "rtps_encrypt", 1024, "median")
    assert missing.get("data-status") == "missing" and shown(missing) == DASH
    assert page.xpath('//table[@class="stats"][@data-profile="experimental"]')
    assert f"| `rtps_encrypt` | 1024 | {DASH} | {DASH} | {DASH} |" in md


# --------------------------------------------------------------------- throughput


def test_throughput_section_absent_when_not_measured(full):
    _, page, _ = full
    assert not page.xpath('//*[@id="throughput"]')
    assert not page.xpath('//*[@id="fig-throughput"]')
    assert "Throughput" not in text(page.xpath("//nav")[0])


def test_throughput_section_matches_results(throughput):
    doc, page, _ = throughput
    assert page.xpath('//*[@id="throughput"]//svg')
    measured = [r for r in doc["results"] if r["mode"] == "throughput"]
    rows = page.xpath('//table[@id="throughput-table"]/tbody/tr')
    assert len(rows) == len(measured)
    for r in measured:
        row = page.xpath(f'//table[@id="throughput-table"]/tbody/tr[@data-profile='
                         f'"{r["profile"]}"][@data-size="{r["size"]}"]')[0]
        sps = digits(row.xpath('td[@data-col="samples_per_s"]')[0])
        assert int(sps) == round(r["throughput"]["samples_per_s"])
        assert float(text(row.xpath('td[@data-col="mbps"]')[0])) == \
            round(r["throughput"]["mbps"], 1)
        assert int(text(row.xpath('td[@data-col="lost"]')[0])) == r["throughput"]["lost"]


def test_failed_throughput_only_is_not_a_section(tmp_path):
    doc = load("throughput")
    for r in doc["results"]:
        if r["mode"] == "throughput":
            r.update(status="failed", error="sub saw no data")
            r.pop("throughput")
    page, _, _ = report(tmp_path, doc)
    assert not page.xpath('//*[@id="throughput"]')
    assert "sub saw no data" in text(page.get_element_by_id("failures"))


def test_throughput_only_run(tmp_path):
    doc = load("throughput")
    doc["results"] = [r for r in doc["results"] if r["mode"] == "throughput"]
    doc["summary"] = []
    doc["settings"]["modes"] = ["throughput"]
    page, md, _ = report(tmp_path, doc)
    assert [f.get("id") for f in page.xpath("//figure")] == ["fig-throughput"]
    assert "No latency was measured" in text(page.get_element_by_id("headline"))
    assert "No latency results" in text(page.get_element_by_id("details"))
    assert "| Profile |" in md and "| `" not in md


def test_empty_run(tmp_path):
    doc = {"schema": "govkit.bench/1", "profiles": [], "results": [], "summary": []}
    page, md, _ = report(tmp_path, doc)
    assert not page.xpath("//figure") and not page.xpath("//*[@id='failures']")
    assert "No signed files" in text(page)


# --------------------------------------------------------------------- plots


def test_plots_are_inline_svg_with_titles_and_legends(full, throughput):
    for (doc, page, _), keys in ((full, ["fig-latency", "fig-overhead"]),
                                 (throughput, ["fig-latency", "fig-overhead",
                                               "fig-throughput"])):
        figures = page.xpath("//figure[@class='plot']")
        assert [f.get("id") for f in figures] == keys
        for f in figures:
            svg = f.xpath(".//svg")
            assert len(svg) == 1 and svg[0].get("viewbox")  # lxml.html lowercases names
            assert text(f.xpath("figcaption")[0])
        latency = text(page.get_element_by_id("fig-latency"))
        assert "Median one-way latency (µs, log scale)" in latency
        assert "Sample size (bytes, log scale)" in latency
        for p in doc["profiles"]:
            assert p["name"] in latency
        overhead = text(page.get_element_by_id("fig-overhead"))
        assert "RTI Connext published ratio" in overhead and "none baseline" in overhead


def test_svg_ids_unique_across_the_page(throughput):
    _, page, _ = throughput
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


# --------------------------------------------------------------------- other sections


def test_governance_settings_shown(full):
    doc, page, _ = full
    gov = page.get_element_by_id("profiles")
    rows = gov.xpath('.//table[@id="governance-table"]/tbody/tr')
    assert [r.get("data-profile") for r in rows] == [p["name"] for p in doc["profiles"]]
    common = text(gov.xpath('.//*[@id="governance-common"]')[0])
    headers = [text(th) for th in gov.xpath('.//table[@id="governance-table"]/thead//th')]
    for p in doc["profiles"]:
        row = text(gov.xpath(f'.//tr[@data-profile="{p["name"]}"]')[0])
        for key, value in p["settings"].items():
            in_row = any(h.startswith(key) for h in headers) and value in row
            assert in_row or f"{key} = {value}" in common, (p["name"], key)
    assert "no security plugins" in text(gov.xpath('.//tr[@data-profile="none"]')[0])
    protects = text(gov.xpath('.//tr[@data-profile="sign_origin_data_encrypt"]')[0])
    assert "origin authentication" in protects and "payload encrypted" in protects


def test_environment_commands_hashes_and_method(full):
    doc, page, _ = full
    env = text(page.get_element_by_id("environment"))
    for key in ("cpu", "kernel", "cyclonedds", "openssl", "govkit"):
        assert str(doc["environment"][key]) in env, key
    assert doc["settings"]["aggregation"] in env
    assert doc["command"] in env
    commands = page.xpath('//*[@id="commands"]//pre/text()')
    shown_lines = {line for block in commands for line in block.splitlines()}
    for r in doc["results"]:
        for c in r["commands"]:
            assert c in shown_lines
    for f in doc["signed_files"]:
        assert f["sha256"] in env and f["path"] in env


# --------------------------------------------------------------------- summary.md


def test_summary_md_table_equals_summary(full):
    doc, _, md = full
    lines = [ln for ln in md.splitlines() if ln.startswith("| `")]
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]
    header = next(ln for ln in md.splitlines() if ln.startswith("| Profile"))
    assert header == "| Profile | Size (B) | Median (µs) | Overhead vs none | RTI ratio |"
    order = [p["name"] for p in doc["profiles"]]
    assert [(r[0].strip("`"), int(r[1])) for r in rows] == \
        [(p, s) for p in order for s in doc["settings"]["sizes"]]
    by_key = {(s["profile"], s["size"]): s for s in doc["summary"]}
    for name, size, median, overhead, rti in rows:
        s = by_key.get((name.strip("`"), int(size)))
        if s is None:
            assert median == "**failed**"
            continue
        assert float(median) == round(s["median_us"], 1)
        assert as_ratio(overhead) == round(s["overhead_vs_none"], 2)
        if s["rti_ratio"] is None:
            assert rti == DASH
        else:
            assert as_ratio(rti) == round(s["rti_ratio"], 2)


def test_summary_md_escapes_table_breakers(tmp_path):
    doc = load("no_baseline")
    doc["results"][0].update(status="failed", error="bad | pipe\nsecond line")
    doc["results"][0].pop("latency_us")
    doc["summary"] = doc["summary"][1:]
    _, md, _ = report(tmp_path, doc)
    assert "bad \\| pipe" in md and "second line" not in md


# --------------------------------------------------------------------- self-contained, safe


def test_output_is_self_contained(full, throughput):
    for _, page, _ in (full, throughput):
        for el in page.iter():
            if not isinstance(el.tag, str):
                continue
            for attr in ("src", "href", "xlink:href", "action", "data", "poster"):
                value = (el.get(attr) or "").strip().lower()
                assert not value.startswith(("http://", "https://", "//")), (el.tag, value)
        assert not page.xpath("//script")
        assert not page.xpath("//link[@rel='stylesheet']") and not page.xpath("//link")
        assert not page.xpath("//iframe|//img|//object|//embed")
        for style in page.xpath("//style/text()"):
            assert "@import" not in style and "url(" not in style


def test_everything_is_escaped(tmp_path):
    doc = load("no_baseline")
    evil = "<script>alert(1)</script>"
    doc["profiles"][0]["title"] = evil
    doc["command"] = "govkit bench <b>x</b>"
    doc["results"][1].update(status="failed", error=f"boom {evil} & more")
    doc["results"][1].pop("latency_us")
    doc["summary"] = [s for s in doc["summary"]
                      if not (s["profile"] == doc["results"][1]["profile"]
                              and s["size"] == doc["results"][1]["size"])]
    doc["environment"]["cpu"] = '"><img src=x onerror=alert(1)>'
    page, _, out = report(tmp_path, doc)
    assert not page.xpath("//script") and not page.xpath("//img") and not page.xpath("//b[.='x']")
    body = text(page)
    assert evil in body and "govkit bench <b>x</b>" in body and "boom" in body
    raw = (out / "report.html").read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in raw


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
    model = build_report_model(load("full"))
    assert model.sizes == [32, 1024, 63000]
    assert len(model.headline) == 7 and all(len(r.cells) == 3 for r in model.headline)
    assert model.cell("none", 32).median_us == 38.4
    assert [f.profile for f in model.failures] == ["sign_submsg_encrypt_origin_data_encrypt"]
    assert not model.has_throughput and model.has_overhead
    assert render_html(model).count("<svg") == 2
    assert render_summary_md(model).count("\n| `") == 21


# --------------------------------------------------------------------- malformed input


def _broken(mutate):
    doc = load("full")
    mutate(doc)
    return json.dumps(doc)


MALFORMED = [
    ("not json", "{ nope", "not valid JSON: Expecting property name"),
    ("empty", "", "not valid JSON"),
    ("top-level list", "[]", "expected a JSON object at the top level"),
    ("nan", _broken(lambda d: d["summary"][0].update(median_us=math.nan)),
     "NaN is not a JSON number"),
    ("wrong schema", _broken(lambda d: d.update(schema="govkit.bench/0")),
     "schema is 'govkit.bench/0', expected 'govkit.bench/1'"),
    ("no results", _broken(lambda d: d.pop("results")), "missing 'results' (expected a list)"),
    ("results not list", _broken(lambda d: d.update(results={})),
     "results: expected a list, got {}"),
    ("size not int", _broken(lambda d: d["results"][3].update(size="32")),
     "results[3].size: expected an integer, got \"32\""),
    ("median not number", _broken(lambda d: d["results"][0]["latency_us"].update(median="x")),
     "results[0].latency_us.median: expected a number"),
    ("ok without stats", _broken(lambda d: d["results"][0].pop("latency_us")),
     "missing 'results[0].latency_us' (expected an object)"),
    ("summary spread", _broken(lambda d: d["summary"][2].update(spread_us=[1])),
     "summary[2].spread_us: expected [low, high]"),
    ("bool as number", _broken(lambda d: d["summary"][0].update(rti_ratio=True)),
     "summary[0].rti_ratio: expected a number, got true"),
    ("profile not object", _broken(lambda d: d["profiles"].append("rtps_sign")),
     "profiles[7]: expected an object"),
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


def test_missing_results_json(tmp_path):
    with pytest.raises(GovkitError) as exc:
        write_report(tmp_path)
    assert exc.value.exit_code == 2
    assert str(exc.value) == f"{tmp_path / 'results.json'}: not found (run `govkit bench` first)"


def test_unreadable_results_json(tmp_path):
    (tmp_path / "results.json").mkdir()
    with pytest.raises(GovkitError) as exc:
        write_report(tmp_path)
    assert exc.value.exit_code == 2 and "cannot read" in str(exc.value)


def test_build_report_model_names_its_source():
    with pytest.raises(GovkitError, match=r"^x/results\.json: missing 'schema'"):
        build_report_model({}, source="x/results.json")
