"""summary.md and compare.md under hostile strings (issue 23, item 4): every string of
results.json that reaches the Markdown, made of markup, comes out as text.

The Markdown templates escape every value by default (govkit.report.run renders *.md.j2 with
govkit.report.model.md_finalize): no `<` from the input survives, no link or image can be
formed, no table row broken; and a real CommonMark renderer passing inline HTML
(markdown-it-py, as GitHub and most renderers do for some or all tags) makes no element of
them, while showing each of them literally and the normal content as before.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import lxml.html
import pytest

from govkit.report.compare import write_reports
from govkit.report.model import md_cell, md_code
from govkit.report.run import write_report

DATA = Path(__file__).parent.parent / "data"
ROTATION = Path(__file__).parents[1] / "data" / "report" / "rotation" / "results.json"
SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
# Each breaks out of something else: HTML, a code span, a table cell or row, a link.
HOSTILE = [SCRIPT, IMG, f"``{SCRIPT}``", f"a|b\n{IMG}", f"[x](javascript:alert(1)){IMG}",
           f"&lt;{SCRIPT}", f"\\|{SCRIPT}", "<b>bold</b>\r<i>x</i>", f"![p](http://x/{IMG})"]
PROFILE = "rtps_sign"


def hostile(i: int) -> str:
    return HOSTILE[i % len(HOSTILE)]


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def rename_profile(doc: dict, old: str, new: str) -> None:
    """`old` becomes `new` everywhere results.json names it."""
    for where in (doc["profiles"], doc["results"], doc.get("summary") or [],
                  doc.get("signed_files") or [], (doc.get("rotation") or {}).get("pairs", []),
                  (doc.get("rotation") or {}).get("slots", []),
                  (doc.get("wire") or {}).get("points", [])):
        for entry in where:
            for key in ("name", "profile", "arm"):
                if entry.get(key) == old:
                    entry[key] = new
    if old in doc.get("settings", {}).get("profiles", []):
        doc["settings"]["profiles"] = [new if p == old else p for p in doc["settings"]["profiles"]]


def poison(doc: dict, salt: int = 0) -> dict:
    """Every free string of results.json that the Markdown shows, made hostile; the stored
    summary tampered with, so its differences (naming the points) are listed too."""
    doc = copy.deepcopy(doc)
    n = iter(range(salt, salt + 1000))
    doc.update(runner=hostile(next(n)), created=hostile(next(n)),
               command="govkit bench " + hostile(next(n)))
    env = doc["environment"]
    for key in list(env):
        if isinstance(env[key], str):
            env[key] += hostile(next(n))
    env[hostile(next(n))] = hostile(next(n))
    settings = doc["settings"]
    for key in ("pinning", "method", "interval", "scheduling"):
        if key in settings:
            settings[key] += hostile(next(n))
    settings.update(seed=hostile(next(n)), min_repeats=hostile(next(n)),
                    duration_s=hostile(next(n)), warmup_s=hostile(next(n)))
    for p in doc["profiles"]:
        p["title"] = hostile(next(n))
        p["aliases"] = [hostile(next(n))]
        for key in p.get("settings") or {}:
            if isinstance(p["settings"][key], str):
                p["settings"][key] += hostile(next(n))
    for r in doc["results"]:
        r["commands"] = [c + hostile(next(n)) for c in r.get("commands", [])]
        r["cpus"] = {role: hostile(next(n)) for role in r.get("cpus") or {}}
        r["scheduling"] = {"pub": hostile(next(n))}
        if r["status"] != "ok":
            r["error"] = hostile(next(n)) + "\n" + hostile(next(n))
            r["output_tail"] = {"pub": hostile(next(n))}
    rename_profile(doc, PROFILE, PROFILE + hostile(next(n)))
    if doc.get("summary"):
        doc["summary"][0]["estimate"] = -1.0
    rot = doc.get("rotation")
    if rot:
        for key in ("method", "estimator", "interval"):
            rot[key] = hostile(next(n))
        for slot in rot["slots"][:5]:
            slot.update(status="failed", error=hostile(next(n)))
    for load_ in doc.get("load") or []:
        load_["under_load"] = True
        load_["busy_processes"] = [{"name": hostile(next(n)), "cpu_share": 0.5}]
    for point in (doc.get("wire") or {}).get("points", []):
        point["mode"] = point["mode"] + hostile(next(n))
        if point["status"] == "ok":   # an unknown kind of protection, named in the reasons
            point["observed"]["user"]["rtps"][hostile(next(n))] = 7
    wire_points = (doc.get("wire") or {}).get("points", [])
    if wire_points:
        wire_points[0]["leaks"] = hostile_leaks(n)
        wire_points[-1].update(status="failed", error=hostile(next(n)) + "\n" + SCRIPT)
    return doc


def hostile_leaks(n) -> dict:
    """A `--leaks` record whose every free string is hostile: what it names (`about`),
    says (`text`) and shows (`evidence`), and the runtimes (`vendors`) a sentence names."""
    from govkit.wire.leak_entries import KINDS, escape
    return {"entries": [{"kind": kind, "about": hostile(next(n)), "value": hostile(next(n)),
                         "text": hostile(next(n)), "message": hostile(next(n)),
                         "evidence": escape(hostile(next(n)).encode()), "evidence_frame": 2,
                         "frames": 3, "first_frame": 1, "field": None} for kind in KINDS],
            "vendors": [hostile(next(n))], "protection_started": {"frame": 5, "after_s": 0.1},
            "participants": 2, "endpoints": 4}


def rendered_html(md: str) -> lxml.html.HtmlElement:
    """The Markdown as a CommonMark renderer that passes inline HTML makes it (with GFM
    tables)."""
    markdown_it = pytest.importorskip("markdown_it")
    html = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(md)
    return lxml.html.fromstring(f"<div>{html}</div>")


def assert_inert(md: str) -> lxml.html.HtmlElement:
    """No markup of the input in the Markdown, nor in the HTML a renderer makes of it."""
    assert "<" not in md, md[max(0, md.index("<") - 200):md.index("<") + 200]
    page = rendered_html(md)
    for tag in ("script", "img", "b", "i", "a", "iframe"):
        assert not page.xpath(f"//{tag}"), tag
    assert not page.xpath("//@onerror | //@href | //@src")
    shown = page.text_content()
    assert "alert(1)" in shown
    return page


def assert_tables_intact(md: str) -> None:
    """Every table row has its header's number of cells (no `|` or line break got out)."""
    lines = md.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|---") or line.startswith("| ---"):
            header = lines[i - 1]
            cells = _cells(header)
            j = i + 1
            while j < len(lines) and lines[j].startswith("|"):
                assert len(_cells(lines[j])) == len(cells), (header, lines[j])
                j += 1


def _cells(row: str) -> list[str]:
    out, cur, k = [], "", 0
    body = row.strip()[1:-1]
    while k < len(body):
        if body[k] == "\\" and k + 1 < len(body):
            cur += body[k:k + 2]
            k += 2
            continue
        if body[k] == "|":
            out.append(cur)
            cur = ""
        else:
            cur += body[k]
        k += 1
    return [*out, cur]


@pytest.mark.parametrize("fixture", ["report/full", "report/throughput", "report/wire",
                                     "rotation"])
def test_summary_md_shows_hostile_strings_as_text(tmp_path, fixture):
    source = ROTATION if fixture == "rotation" else DATA / fixture / "results.json"
    doc = poison(load(source))
    (tmp_path / "results.json").write_text(json.dumps(doc))
    _, md_path = write_report(tmp_path)
    md = md_path.read_text()
    page = assert_inert(md)
    assert_tables_intact(md)
    shown = page.text_content()
    # each hostile string the page names is shown literally, as written
    assert SCRIPT in shown and IMG in shown
    assert f"runner {doc['runner']}" not in md            # (no raw copy of it)
    assert md_cell(doc["runner"]) in md
    # and the normal content is still there
    assert md.startswith("## DDS Security benchmark: latency overhead per profile\n")
    if fixture != "rotation":
        assert "| `none` | 32 |" in md or "| `none` | 1024 |" in md
        assert "Cyclone DDS 0.10.2-2" in md
    else:
        assert "### What each protection level costs" in md
        assert "MEASURED UNDER LOAD" in md


def test_summary_md_names_the_hostile_profile_and_error_literally(tmp_path):
    doc = poison(load(DATA / "report/full/results.json"))
    (tmp_path / "results.json").write_text(json.dumps(doc))
    _, md_path = write_report(tmp_path)
    md = md_path.read_text()
    name = next(p["name"] for p in doc["profiles"] if p["name"].startswith(PROFILE))
    assert md_code(name) in md                       # in the tables, as text
    shown = rendered_html(md).text_content()
    assert name.replace("\n", " ").replace("\r", " ") in shown
    error = next(r["error"] for r in doc["results"] if r["status"] != "ok")
    assert error.splitlines()[0] in shown            # the failure's first line, literally


def test_compare_md_shows_hostile_strings_as_text(tmp_path):
    dirs = []
    for i, name in enumerate(("ddsperf", "fastdds")):
        doc = poison(load(DATA / "compare" / name / "results.json"), salt=3 * i)
        d = tmp_path / name
        d.mkdir()
        (d / "results.json").write_text(json.dumps(doc))
        dirs.append(d)
    _, md_path, _ = write_reports(dirs, tmp_path)
    md = md_path.read_text()
    page = assert_inert(md)
    assert_tables_intact(md)
    shown = page.text_content()
    assert SCRIPT in shown and IMG in shown
    assert md.startswith("## DDS Security implementations side by side")
    assert "| `none` | 32 |" in md and "**What may be compared.**" in md
    assert "The runs differ in:" in md


def test_real_runs_render_as_before(tmp_path):
    """Without hostile strings nothing changes: code spans, figures, intervals as written."""
    shutil.copy(DATA / "report/full/results.json", tmp_path / "results.json")
    _, md_path = write_report(tmp_path)
    md = md_path.read_text()
    assert "| `rtps_sign` | 32 | " in md and "\\[" not in md and "&amp;" not in md
    assert "[" in md and "`wide_interval`" in md
    page = rendered_html(md)
    assert page.xpath("//table") and page.xpath("//code[.='rtps_sign']")


def test_markdown_templates_escape_what_the_template_forgets():
    """The mechanism: a Markdown template's every `{{ … }}` is escaped once, with or without
    the md filter, through a macro, a concatenation or a filter that returns text; the
    number formatters and mdcode are Markdown already. HTML templates are unchanged."""
    from govkit.report.run import report_environment
    env = report_environment(markdown=True)
    source = ("{% macro m(v) %}[{{ v }}]{% endmacro %}"
              "{{ x }}/{{ x|md }}/{{ m(x) }}/{{ '**' ~ x ~ '**' }}/{{ x|upper }}/"
              "{{ x|first_line }}/{{ x|mdcode }}/{{ (1.5, 2.25)|ci }}/{{ 1234567|int }}")
    out = env.from_string(source).render(x=f"{IMG}|x\ny")
    cell = md_cell(f"{IMG}|x\ny")
    assert out.split("/") == [
        cell, cell, f"[{cell}]", f"**{cell}**", md_cell(f"{IMG}|X\nY".upper()),
        md_cell(IMG + "|x"), md_code(f"{IMG}|x\ny"), "[1.5, 2.2]", "1\u202f234\u202f567"]
    html = report_environment().from_string("{{ x }}").render(x=IMG)
    assert html == "&lt;img src=x onerror=alert(1)&gt;"


@pytest.mark.parametrize(("text", "cell", "code"), [
    ("rtps_sign", "rtps_sign", "`rtps_sign`"),
    ("a|b", "a\\|b", "`a\\|b`"),
    ("a\\|b", "a\\\\\\|b", "`a\\\\\\|b`"),
    ("two\nlines\r", "two lines ", "`two lines `"),
    ("a`b", "a`b", "`` a`b ``"),
    ("a``b`", "a``b`", "``` a``b` ```"),
    ("x & y", "x &amp; y", "`x & y`"),
    ("[x](y)", "\\[x\\](y)", "`[x](y)`"),
    (SCRIPT, "&lt;script&gt;alert(1)&lt;/script&gt;",
     "&lt;script&gt;alert\\(1\\)&lt;\\/script&gt;"),
    ("``<b>``", "``&lt;b&gt;``", "\\`\\`&lt;b&gt;\\`\\`"),
    ("", "", ""),
])
def test_md_cell_and_md_code(text, cell, code):
    assert md_cell(text) == cell
    assert md_code(text) == code


UNSEEN = "a\x00b\x1b[2Jc\u202ed\u2066e"     # NUL, ESC, a bidi override and an isolate


def test_controls_and_bidi_characters_are_shown_in_every_report_file(tmp_path):
    """A profile name holding NUL, ESC or a bidi override went into report.html, summary.md,
    compare.html and compare.md as it was: a bidi override reverses how the rest of the
    line reads ('Trojan source'), NUL and ESC are not text. Each is shown as an escape."""
    runs = []
    for name in ("ddsperf", "fastdds"):
        doc = load(DATA / "compare" / name / "results.json")
        rename_profile(doc, PROFILE, PROFILE + UNSEEN)
        run = tmp_path / name
        run.mkdir()
        (run / "results.json").write_text(json.dumps(doc))
        runs.append(run)
    files = [*write_report(runs[0]), *write_reports(runs, tmp_path)[:2]]
    for path in files:
        text = path.read_text()
        assert not any(c in text for c in "\x00\x1b\u202e\u2066"), path
        assert "\\x00" in text and "\\x1b" in text and "\\u202e" in text, path
