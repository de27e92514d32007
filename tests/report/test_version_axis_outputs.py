"""A version axis run (Cyclone DDS 0.10.2 and 11.0.1 in one run, tests/data/report/versions)
in each of its four outputs, and beside a plain run in `govkit report A B`.

The fixtures are real runs (their README). `govkit report` recomputes every figure from the
raw rows; each output must show the same row of results.json's `versions`: each profile's
cost on both installs and the ratio between them, with intervals, and the same flags.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import lxml.html
from rich.console import Console

from govkit.report.compare import write_reports
from govkit.report.run import write_report
from govkit.report.terminal import compare_table, versions_table
from govkit.results.flags import short_label

DATA = Path(__file__).parents[1] / "data" / "report" / "versions"
GOVKIT = str(Path(sys.executable).parent / "govkit")


def _copy(tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    out.mkdir()
    shutil.copy(DATA / name / "results.json", out / "results.json")
    return out


def _text(renderable) -> str:
    console = Console(width=250, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_text()


def _ci(ci: list[float]) -> str:
    return f"{ci[0]:.2f}…{ci[1]:.2f}"


def test_the_fixture_is_a_version_axis():
    doc = json.loads((DATA / "axis" / "results.json").read_text())
    assert [r["version"] for r in doc["settings"]["runtimes"]] == ["0.10.2", "11.0.1"]
    assert {r["profile"] for r in doc["versions"]} == {"none", "rtps_sign"}
    assert "versions" not in json.loads((DATA / "plain" / "results.json").read_text())


def test_the_versions_table_reads_the_same_in_all_four_outputs(tmp_path):
    run = _copy(tmp_path, "axis")
    html_path, md_path = write_report(run)
    doc = json.loads((run / "results.json").read_text())
    stored = {r["profile"]: r for r in doc["versions"]}
    sign = stored["rtps_sign"]
    between, on_base, on_other = (sign["other_over_baseline"], sign["baseline_vs_none"],
                                  sign["other_vs_none"])
    assert between["ratio_ci95"] and on_base["ratio_ci95"] and on_other["ratio_ci95"]
    # results.json: what govkit report recomputes from the raw rows is what was stored
    from govkit.report.run import build_report_model
    model = build_report_model(doc, source=str(run / "results.json"))
    recomputed = {r["profile"]: r for r in model.versions}
    assert recomputed["rtps_sign"]["other_over_baseline"]["ratio"] == \
        between["ratio"]
    # the terminal (what `govkit bench` prints at the end)
    terminal = _text(versions_table(doc["versions"]))
    line = next(x for x in terminal.splitlines() if " rtps_sign " in x)
    for figure in (f"{on_base['ratio']:.2f}", _ci(on_base["ratio_ci95"]),
                   f"{on_other['ratio']:.2f}", _ci(on_other["ratio_ci95"]),
                   f"{between['ratio']:.2f}", _ci(between["ratio_ci95"])):
        assert figure in line, (figure, line)
    flags = [short_label(f["code"]) for f in sign["flags"]]
    assert flags and all(f in line for f in flags)
    # report.html
    page = lxml.html.fromstring(html_path.read_text())
    (row,) = page.xpath('//table[@id="versions-table"]//tr[@data-profile="rtps_sign"]')
    cell = row.xpath('td[@data-kind="between"]')[0].text_content()
    assert f"{between['ratio']:.2f}" in cell
    assert all(f"{v:.2f}" in cell for v in between["ratio_ci95"])
    shown = [s.text_content() for s in row.xpath('td[@data-kind="flags"]/span')]
    assert shown == flags
    # summary.md
    md = md_path.read_text()
    assert "### Two installs: 0.10.2 and 11.0.1" in md
    md_row = next(x for x in md.splitlines() if x.startswith("| `rtps_sign` | latency"))
    assert f"{between['ratio']:.2f}" in md_row
    assert all(f"{v:.2f}" in md_row for v in between["ratio_ci95"])
    assert all(f in md_row for f in flags)


def test_report_a_b_names_both_installs_and_says_where_the_ratio_is(tmp_path):
    """`govkit report PLAIN AXIS`: the version axis run's label names both installs (it said
    only the baseline's, "Cyclone DDS 0.10.2-2", as if it were a plain run), and a note
    says what its PROFILE@11.0.1 rows are and where the ratio between the installs is, in
    compare.md, compare.html and the terminal."""
    plain, axis = _copy(tmp_path, "plain"), _copy(tmp_path, "axis")
    html_path, md_path, model = write_reports([plain, axis], tmp_path / "cmp")
    labels = [r.label for r in model.runs]
    assert labels == ["cyclone · Cyclone DDS 0.10.2-2",
                      "cyclone · Cyclone DDS 0.10.2-2 and 11.0.1"], labels
    note = model.runs[1].version_note
    assert not model.runs[0].version_note
    assert "PROFILE@11.0.1 is that profile's cost on 11.0.1 over 11.0.1's own none" in note
    md = md_path.read_text()
    assert "ran two installs in one run, 0.10.2 and 11.0.1" in md
    page = lxml.html.fromstring(html_path.read_text())
    assert "ran two installs in one run" in page.get_element_by_id("versions-run2").text_content()
    terminal = _text(compare_table(model))
    assert "ran two installs in one run" in " ".join(terminal.split())
    # the other install's rows are there, missing in the plain run
    row = model.row("rtps_sign@11.0.1", 1024)
    assert [c.status for c in row.cells] == ["missing", "ok"]


def test_govkit_report_a_b_on_the_command_line(tmp_path):
    plain, axis = _copy(tmp_path, "plain"), _copy(tmp_path, "axis")
    r = subprocess.run([GOVKIT, "report", str(plain), str(axis), "--out", str(tmp_path / "c")],
                       capture_output=True, text=True, timeout=300,
                       env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    assert "Cyclone DDS 0.10.2-2 and 11.0.1" in r.stdout
    assert "ran two installs in one run" in " ".join(r.stdout.split())


def test_fail_on_flag_judges_the_versions_rows_and_reads_the_same_everywhere(tmp_path):
    """--fail-on-flag judges the ratio between the two installs (each row of `versions`,
    with flags of its own) beside the points: results.json's `gates` (as `govkit bench`
    saves it and prints its lines), report.html and summary.md give the same lines. Before,
    a version axis row's flags never reached a gate."""
    from govkit.results.store import ResultStore
    run = _copy(tmp_path, "axis")
    doc = json.loads((run / "results.json").read_text())
    doc["settings"]["gates"] = {"fail_on_flag": ["wide_interval"], "max_ratio": {}}
    (run / "results.json").write_text(json.dumps(doc))
    store = ResultStore.load(run)
    store.save()                    # what bench does at its end: summary, versions, gates
    saved = json.loads((run / "results.json").read_text())
    line = "rtps_sign latency 1024 B, 11.0.1 / 0.10.2: flagged wide_interval (--fail-on-flag)"
    assert any(f["code"] == "wide_interval" for r in saved["versions"]
               if r["profile"] == "rtps_sign" for f in r["flags"])
    assert line in saved["gates"]["failures"] and not saved["gates"]["passed"]
    html_path, md_path = write_report(run)
    page = lxml.html.fromstring(html_path.read_text())
    shown = [li.text_content() for li in page.xpath('//section[@id="gates"]//li')]
    assert shown == saved["gates"]["failures"]      # the same lines, in the same order
    md = md_path.read_text()
    assert all(x in md for x in saved["gates"]["failures"])
    # report.html does not say the stored verdict differs from the recomputed one
    assert "is not the recomputed one" not in html_path.read_text()
