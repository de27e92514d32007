"""`govkit report` on large but valid results.json (issue 23, item 9): tens of thousands of
per-second rows or repeats, hundreds of profiles or sizes, a 200,000-character profile
name, thousands of rotation rounds (tests/helpers/large_results.py makes them). The report's
work is bounded (benchmarks/bench_report.py measures it); here, what it shows is checked:
every point in the tables under its name (up to MAX_SHOWN_CHARS), plots within their
limits and saying what they left out, intervals from a subsample saying so, and the
vectorised bootstrap giving exactly what the loop it replaced gave.
"""

from __future__ import annotations

import hashlib
import json
import random
import statistics
from pathlib import Path

import lxml.html
import pytest
from helpers.html import text
from helpers.large_results import catalog, per_repeat, shapes

from govkit.report.model import MAX_REPEAT_ROWS, MAX_SHOWN_CHARS, md_cell, shortened
from govkit.report.plots import MAX_LABEL, MAX_PROFILES_DRAWN, MAX_SIZES_DRAWN, short_name
from govkit.report.run import write_report
from govkit.results import stats
from govkit.results.check import check_results
from govkit.results.summary import resample_cap, summarize

SHAPES = shapes()


def reference_bootstrap(groups, statistic, seed, resamples=stats.BOOTSTRAP_RESAMPLES):
    """The pure-Python loop stats.bootstrap replaced (govkit before issue 23, item 9)."""
    rand = random.Random(seed).random
    k = len(groups)
    out = []
    for _ in range(resamples):
        pooled = []
        for _ in range(k):
            g = groups[int(rand() * k)]
            m = len(g)
            pooled += [g[int(rand() * m)] for _ in range(m)]
        out.append(statistic(pooled))
    return out


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Each shape's report, written once: (doc, parsed report.html, summary.md)."""
    out = {}

    def get(name):
        if name not in out:
            d = tmp_path_factory.mktemp(name)
            (d / "results.json").write_text(json.dumps(SHAPES[name]))
            html, md = write_report(d)
            out[name] = (SHAPES[name], lxml.html.fromstring(html.read_bytes()),
                         md.read_text())
        return out[name]
    return get


def _svg_texts(page, key) -> list[str]:
    return [t.text_content() for t in page.xpath(f'//figure[@id="{key}"]//svg//text')]


def _caption(page, key) -> str:
    return text(page.xpath(f'//figure[@id="{key}"]/figcaption')[0])


# ------------------------------------------------------------------- the bootstrap


@pytest.mark.parametrize("lengths", [[5, 5, 5], [1], [7], [3, 8, 2, 5], [1, 1, 2],
                                     [30] * 4, [2] * 40, [1, 3] * 20,
                                     [200, 350, 500]])
@pytest.mark.parametrize("statistic", [statistics.median, statistics.fmean, max])
def test_bootstrap_gives_what_the_loop_gave(lengths, statistic):
    """Value for value, for equal and unequal repeats: an interval an earlier govkit stored
    is recomputed unchanged (the report would otherwise say the stored figures differ)."""
    rand = random.Random(len(lengths))
    groups = [[round(rand.uniform(10, 20), 3) for _ in range(n)] for n in lengths]
    groups[0][0] = groups[-1][-1]               # ties among the values
    seed = f"govkit/x/{lengths}"
    assert stats.bootstrap(groups, statistic, seed, 300) == \
        reference_bootstrap(groups, statistic, seed, 300)


def test_bootstrap_beyond_the_exact_stream_resamples_the_same_way():
    """More than EXACT_GROUPS repeats of unequal lengths: numpy's generator makes the
    draws; each resample is still k repeats drawn, then each one's values drawn."""
    groups = [[float(i)] * (1 + i % 3) for i in range(stats.EXACT_GROUPS + 10)]
    dist = stats.bootstrap(groups, len, "govkit/many", 500)      # len: values per resample
    assert dist == stats.bootstrap(groups, len, "govkit/many", 500)      # seeded
    k = len(groups)
    assert all(k <= n <= 3 * k for n in dist)
    assert abs(statistics.fmean(dist) - 2 * k) < 0.05 * k       # E[len] = k × mean length
    means = stats.bootstrap(groups, statistics.fmean, "govkit/many", 500)
    pooled = statistics.fmean([v for g in groups for v in g])
    lo, hi = stats.percentile_interval(means)
    assert lo < pooled < hi


def test_thinned_keeps_every_nth_value_and_says_so():
    groups = [list(range(r * 1000, r * 1000 + 900)) for r in range(4)]     # 3600 values
    kept, note = stats.thinned(groups, 1000)
    assert kept == [g[::4] for g in groups]
    assert note.startswith("the interval resamples 900 of the 3,600 measured values "
                           "(every 4th measured second of every repeat), ")
    assert stats.thinned(groups, 3600) == (groups, None)
    many = [[1.0, 2.0]] * 5000                                          # 10,000 repeats
    kept, note = stats.thinned(many, 1000)
    assert len(kept) == 500 and sum(map(len, kept)) <= 1000
    assert "(every measured second of every 10th repeat: 500 of 5,000)" in note


def test_resample_cap_bounds_the_run():
    assert resample_cap(1) == stats.MAX_RESAMPLED
    assert resample_cap(16) == stats.MAX_RESAMPLED
    assert resample_cap(56) >= 8 * 30            # 8 × 7 points of 8 × 30 s: all
    assert resample_cap(100) == stats.MAX_RESAMPLED_TOTAL // 100
    assert resample_cap(10 ** 6) == stats.MIN_RESAMPLED


# ------------------------------------------------------------------ the documents


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_generated_documents_are_valid(name):
    check_results(SHAPES[name])


def test_many_seconds_interval_is_subsampled_and_says_so(reports):
    doc, page, md = reports("many_seconds")
    rows = summarize(doc)
    assert len(rows) == 3 * 2
    for row in rows:
        assert row["seconds"] == 4 * 1500
        flags = {f["code"]: f["reason"] for f in row["flags"]}
        assert flags["subsampled_interval"].startswith(
            "the interval resamples 1,000 of the 6,000 measured values (every 6th measured "
            "second of every repeat)")
        lo, hi = row["ci95"]
        assert lo <= row["estimate"] <= hi
    method = text(page.get_element_by_id("interval"))
    assert stats.SUBSAMPLE_METHOD in method
    assert "subsampled_interval" in _caption(page, "fig-latency")
    assert "CI subsampled" in md and "the interval resamples 1,000 of the 6,000" in md


def test_many_repeats(reports):
    doc, page, _ = reports("many_repeats")
    rows = summarize(doc)
    assert [r["repeats"] for r in rows] == [10_000, 10_000]
    note = next(f["reason"] for f in rows[0]["flags"] if f["code"] == "subsampled_interval")
    assert "(every measured second of every 20th repeat: 500 of 10,000)" in note
    # every repeat counts; the tables list the first MAX_REPEAT_ROWS of each point and
    # say how many more there are (a table of 20,000 rows is 20 MB of HTML)
    listed = page.xpath('//*[@id="repeats"]//tbody/tr')
    assert len(listed) == 2 * MAX_REPEAT_ROWS
    assert [r.get("data-repeat") for r in listed[:3]] == ["0", "1", "2"]
    more = page.xpath('//*[@id="repeats"]//p[@data-more]')
    assert [int(p.get("data-more")) for p in more] == [10_000 - MAX_REPEAT_ROWS] * 2
    assert "Every repeat counts in the figures above" in text(more[0])
    commands = page.xpath('//*[@id="commands"]//tbody/tr')
    assert len(commands) == 2 * MAX_REPEAT_ROWS
    assert "20000 repeats in run order" in text(page.get_element_by_id("commands"))


def test_many_profiles_every_one_in_the_tables_a_dozen_in_the_plots(reports):
    doc, page, _ = reports("many_profiles")
    names = [p["name"] for p in doc["profiles"]]
    shown = page.xpath('//table[@id="headline-table"]/tbody/tr/@data-profile')
    assert set(shown) == set(names)
    legend = _svg_texts(page, "fig-latency")
    drawn = [n for n in names if n in legend]
    assert drawn == names[:MAX_PROFILES_DRAWN + 1]          # none + the first secured ones
    caption = _caption(page, "fig-latency")
    assert f"latency: {MAX_PROFILES_DRAWN} of the 299 secured profiles" in caption
    assert "The tables list every point." in caption
    overhead = _svg_texts(page, "fig-overhead")
    assert names[MAX_PROFILES_DRAWN] in overhead and names[MAX_PROFILES_DRAWN + 1] \
        not in overhead


def test_many_sizes_every_one_in_the_tables_some_in_the_plots(reports):
    doc, page, _ = reports("many_sizes")
    sizes = doc["settings"]["sizes"]
    rows = page.xpath('//table[@id="headline-table"]/tbody/tr[@data-profile="none"]')
    assert len(rows) == len(sizes)
    ticks = [t for t in _svg_texts(page, "fig-overhead") if t.endswith(" B")]
    assert len(ticks) == MAX_SIZES_DRAWN
    assert ticks[0] == f"{sizes[0]} B" and ticks[-1] == f"{sizes[-1]} B"
    assert f"latency: {MAX_SIZES_DRAWN} of the {len(sizes)} sizes (evenly spaced" in \
        _caption(page, "fig-overhead")


def test_long_profile_name_shortened_in_tables_shorter_in_plots(reports):
    """A page shows at most MAX_SHOWN_CHARS of a text (issue 37, item 15: a 50 MB string
    made a 100 MB report), saying so; results.json keeps it whole."""
    doc, page, md = reports("long_name")
    name = doc["profiles"][1]["name"]
    assert len(name) == 200_000
    shown = shortened(name)
    assert len(shown) == MAX_SHOWN_CHARS and shown.startswith("p" * 9000)
    assert shown.endswith("more characters, sha256 "
                          f"{hashlib.sha256(name.encode()).hexdigest()[:16]}; results.json "
                          "holds the whole text]")
    assert page.xpath(f'//table[@id="headline-table"]/tbody/tr[@data-profile="{shown}"]')
    assert name not in md and (shown in md or md_cell(shown) in md)
    assert "text(s) of results.json longer than 10,000 characters are shortened" in \
        text(page.xpath('//section[@id="shortened-texts"]')[0])
    for key in ("fig-latency", "fig-overhead", "fig-throughput"):
        texts = _svg_texts(page, key)
        assert short_name(shown) in texts, key
        assert max(map(len, texts)) <= MAX_LABEL + 40, key     # titles, not the name
    assert len(short_name(shown)) == MAX_LABEL and short_name(shown).startswith("ppp")
    assert "\u2026" in short_name(name) and short_name("rtps_sign") == "rtps_sign"


def test_a_50_mb_string_does_not_make_a_100_mb_report(tmp_path):
    """issue 37, item 15: a command of 50 MB (and an error of 10 MB) was written whole into
    report.html (twice) and summary.md; a page now shows MAX_SHOWN_CHARS of each and says
    so, for one run and for two side by side."""
    from govkit.report.compare import write_reports
    doc = json.loads((Path(__file__).parent.parent / "data" / "report" / "full" /
                      "results.json").read_text())
    doc["command"] = "govkit bench " + "x" * 50_000_000
    failed = next(r for r in doc["results"] if r["status"] != "ok")
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        failed["error"] = d.upper() * 10_000_000     # two runs, not one given twice
        (tmp_path / d / "results.json").write_text(json.dumps(doc))
    html, md = write_report(tmp_path / "a")
    assert html.stat().st_size < 1_000_000 and md.stat().st_size < 200_000
    page = lxml.html.fromstring(html.read_bytes())
    assert "2 text(s) of results.json longer than 10,000 characters" in \
        text(page.xpath('//section[@id="shortened-texts"]')[0])
    assert "x" * MAX_SHOWN_CHARS not in html.read_text()
    assert "A" * MAX_SHOWN_CHARS not in html.read_text()
    assert "2 text(s) of results.json longer than 10,000 characters" in md.read_text()
    assert len(json.loads((tmp_path / "a" / "results.json").read_text())["command"]) \
        == 50_000_013                      # results.json keeps it whole
    chtml, cmd, _ = write_reports([tmp_path / "a", tmp_path / "b"])
    assert chtml.stat().st_size < 1_000_000 and cmd.stat().st_size < 200_000
    assert "longer than 10,000 characters are shortened" in cmd.read_text()


def test_many_rounds_rotation(reports):
    doc, page, _ = reports("many_rounds")
    rows = summarize(doc)
    assert {r["rounds"] for r in rows} == {3000}
    secured = [r for r in rows if r["profile"] != "none"]
    assert secured and all(r["vs_none"] and r["vs_none"]["ratio_ci95"] for r in secured)
    assert page.get_element_by_id("fig-latency") is not None


def test_many_arms_rotation(reports):
    doc, page, _ = reports("many_arms")
    names = {p["name"] for p in doc["profiles"]}
    shown = set(page.xpath('//table[@id="headline-table"]/tbody/tr/@data-profile'))
    assert names <= shown | {"none"}
    assert "secured profiles (the first in catalog order)" in _caption(page, "fig-latency")


def test_old_design_throughput(reports):
    doc, page, _ = reports("throughput_v2")
    rows = summarize(doc)
    assert all(r["mode"] == "throughput" and r["seconds"] == 9000 for r in rows)
    assert all(any(f["code"] == "subsampled_interval" for f in r["flags"]) for r in rows)
    assert page.get_element_by_id("fig-throughput") is not None


def test_small_runs_are_not_subsampled():
    """The recorded fixtures (a few repeats of a few seconds): every value resampled, no
    note, and the method text as the run recorded it."""
    data = Path(__file__).parent.parent / "data" / "report"
    for name in ("full", "throughput", "wire", "rotation"):
        doc = json.loads((data / name / "results.json").read_text())
        for row in summarize(doc):
            assert "subsampled_interval" not in {f["code"] for f in row["flags"]}, name


# ------------------------------------------- the same report, faster (issue 23, item 9)

# report.html.j2's loops before govkit/report/rows_html.py wrote the rows (its trim_blocks
# environment): the rows must come out byte for byte as these wrote them.
TEMPLATE_REPEAT_ROWS = """\
    {% for r in rows %}
      <tr data-size="{{ r.size }}" data-repeat="{{ r.repeat }}" data-status="{{ r.status }}" class="{{ '' if r.ok else 'failed' }}">
        {% if show_network %}<td data-col="network">{{ r.network }}</td>{% endif %}<td class="num">{{ r.size }}</td><td class="num">{{ r.repeat }}</td>
        <td class="num" data-col="order">{{ DASH if r.order is none else r.order }}</td>
        <td data-col="cpus">{{ r.cpus }}</td>
        {% if r.ok %}
        {% for c in t.columns %}<td class="num" data-col="{{ c.key }}">{{ r.figures.get(c.key)|value(c.kind) }}</td>{% endfor %}
        <td class="num" data-col="count">{{ r.count|int }}</td>
        {% if t.values_title %}<td class="values" data-col="values">{{ r.values|values(t.values_kind) }}</td>{% endif %}
        {% else %}
        <td class="failed-msg" colspan="{{ t.columns|length + 1 + (1 if t.values_title else 0) }}">✗ {{ r.status|upper }}: {{ r.error|first_line or "no error message recorded" }}</td>
        {% endif %}
      </tr>
    {% endfor %}
"""  # noqa: E501
TEMPLATE_RUN_ROWS = """\
      {% for r in runs %}
        <tr data-profile="{{ r.profile }}">
          <td class="num">{{ DASH if r.order is none else r.order }}</td>
          <td><code>{{ r.profile }}</code></td><td>{{ r.mode }}</td><td class="num">{{ r.size }}</td>{% if show_network %}<td>{{ r.network }}</td>{% endif %}
          <td class="num">{{ r.repeat }}</td>
          <td class="{{ '' if r.status == 'ok' else 'failed' }}">{{ r.status }}</td>
          <td class="cmds"><pre>{{ r.commands|join("\\n") }}</pre></td>
        </tr>
      {% endfor %}
"""  # noqa: E501


def _hostile_networked_run() -> dict:
    """A real run's results with half its repeats over TCP (the network column), markup in
    the CPUs, errors and command lines, and its failed repeats."""
    doc = json.loads((Path(__file__).resolve().parent.parent / "data" / "report" / "full"
                      / "results.json").read_text())
    for i, r in enumerate(doc["results"]):
        r["transport"] = "tcp" if i % 2 else "udp"
        r["cpus"] = {"pub": "0<b>&\"'", "sub": None}
        r["commands"] = ["ddsperf <x> & 'y'", "two"]
        if r["status"] != "ok":
            r["error"] = "<script>alert(1)</script> & \"x\"\nsecond line"
    assert any(r["status"] != "ok" for r in doc["results"])
    return doc


@pytest.mark.parametrize("name", ["hostile_networked", "many_repeats", "many_rounds",
                                  "throughput_v2"])
def test_the_rows_are_the_templates_byte_for_byte(name):
    from govkit.report.rows_html import repeat_rows, run_rows
    from govkit.report.run import build_report_model, report_environment
    doc = _hostile_networked_run() if name == "hostile_networked" else shapes(0.02)[name]
    model = build_report_model(doc)
    env = report_environment()
    old_repeats = env.from_string(TEMPLATE_REPEAT_ROWS)
    old_runs = env.from_string(TEMPLATE_RUN_ROWS)
    blocks = [(t, rows) for t in model.repeat_tables for _, rows, _more in t.blocks]
    assert blocks and model.runs
    shown = ""
    for table, rows in blocks:
        want = old_repeats.render(rows=rows, t=table, show_network=model.show_network)
        assert str(repeat_rows(rows, table, model.show_network)) == want
        shown += want
    want = old_runs.render(runs=model.runs, show_network=model.show_network)
    assert str(run_rows(model.runs, model.show_network)) == want
    if name == "hostile_networked":
        assert model.show_network and 'data-col="network">tcp' in shown
        assert "&lt;script&gt;" in shown and 'class="failed"' in shown and "&lt;x&gt;" in want


def test_the_headline_and_tails_reuse_what_summarize_paired_and_pooled():
    """summarize pairs each mode's slots once and pools each point's histograms once; the
    headline's A/A floor and each row's tail are what pairing and pooling again give."""
    from govkit.results import stats as results_stats
    from govkit.results.summary import (
        Summarizer,
        noise_floor,
        rotation_overheads,
        rotation_records,
    )
    doc = shapes(0.02)["many_rounds"]
    summarizer = Summarizer()
    rows = summarize(doc, summarizer)
    assert summarizer.overheads == rotation_overheads(doc)
    assert noise_floor(doc, summarizer.overheads) == noise_floor(doc)
    records = [r for r in rotation_records(doc) if r.ok]
    for row in (r for r in rows if r["mode"] == "latency" and r["profile"] != "none"):
        slots = [s for r in records if (r.profile, r.size) == (row["profile"], row["size"])
                 for s in r.rows]
        pooled = results_stats.pooled_percentiles(slots)
        assert row["tail"]["p99_of_samples"] == round(pooled["p99"], 4)
        assert row["tail"]["p99_9_of_samples"] == round(pooled["p99_9"], 4)


def test_a_capped_table_still_lists_every_failed_repeat(tmp_path):
    """Past MAX_REPEAT_ROWS repeats of a point, a failed repeat is listed all the same, in
    the repeat table and in the table of command lines."""
    doc = per_repeat(catalog(2), [32], MAX_REPEAT_ROWS + 10, 2)
    last = doc["results"][-1]
    assert last["repeat"] == MAX_REPEAT_ROWS + 9
    last.update(status="failed", error="ping: <b>refused</b>")
    del last["raw"]
    (tmp_path / "results.json").write_text(json.dumps(doc))
    html, _ = write_report(tmp_path)
    page = lxml.html.fromstring(html.read_bytes())
    for table in page.xpath('//*[@id="repeats"]//table'):
        rows = table.xpath("./tbody/tr")
        failed = [r for r in rows if r.get("data-status") != "ok"]
        if table.get("data-profile") == last["profile"]:
            assert len(rows) == MAX_REPEAT_ROWS + 1
            assert [r.get("data-repeat") for r in failed] == [str(last["repeat"])]
            assert "refused" in text(failed[0])
        else:
            assert len(rows) == MAX_REPEAT_ROWS and not failed
    more = [int(p.get("data-more")) for p in page.xpath('//p[@data-more]')]
    assert more == [10, 9]
    commands = page.xpath('//*[@id="commands"]//tbody/tr')
    assert len(commands) == 2 * MAX_REPEAT_ROWS + 1
    assert any("failed" in text(r) for r in commands)


def test_hundreds_of_points_draw_fewer_resamples_and_say_so():
    """A run of 900 points spent 8 s on bootstraps at 2000 resamples each: past
    MAX_BOOTSTRAP_RESAMPLES_TOTAL / 2000 points each draws fewer (never fewer than
    MIN_BOOTSTRAP_RESAMPLES), flagged subsampled_interval; a usual run is untouched."""
    assert stats.resamples_for(21) == stats.resamples_for(120) == 2000
    assert stats.resamples_for(150) == 1600
    assert stats.resamples_for(900) == stats.resamples_for(10**6) == 500
    rows = summarize(SHAPES["many_arms"])
    assert len(rows) == 150
    fewer = "the interval from 1,600 bootstrap resamples, not 2,000"
    for row in rows:
        flags = {f["code"]: f["reason"] for f in row["flags"]}
        assert fewer in flags["subsampled_interval"], row["profile"]
        if row["profile"] != "none":
            assert fewer in row["vs_none"]["subsampled"]
    usual = summarize(shapes(0.02)["many_rounds"])
    assert all("bootstrap resamples" not in f["reason"] for r in usual for f in r["flags"])


def test_every_drawn_profile_looks_different():
    """Colour, line style, marker and hatch all repeated every 8 profiles: the ninth drawn
    (of up to MAX_PROFILES_DRAWN + none) looked exactly like `none`."""
    from govkit.report.plots import profile_style
    looks = [tuple(str(v) for v in profile_style(i).values()) for i in range(64)]
    assert len(set(looks)) == 64
    # the first 8 unchanged: a profile keeps its look from earlier reports
    assert profile_style(0)["color"] == "#000000" and profile_style(1)["linestyle"] == "--"


def test_many_wire_points(reports):
    """20,000 captured points (issue 37): every point is judged again, the table lists every
    one that does not match and MAX_WIRE_ROWS others per profile (saying how many it leaves
    out), the eavesdropper's table comes from the points' own entries."""
    from govkit.report.wire_section import MAX_WIRE_ROWS
    doc, page, md = reports("many_wire_points")
    points = doc["wire"]["points"]
    mismatched = [p for p in points if p["verdict"] != "match"]
    assert len(points) == 20_000 and len(mismatched) == 11
    rows = page.xpath('//table[@id="wire-table"]/tbody/tr')
    shown = len(mismatched) + 7 * MAX_WIRE_ROWS
    assert len(rows) == shown
    assert len([r for r in rows if r.get("data-verdict") == "mismatch"]) == 11
    hidden = text(page.get_element_by_id("wire-hidden"))
    assert f"{20_000 - shown:,} more matching points not listed" in hidden
    assert f"{20_000 - shown:,} more matching points not listed" in md
    bad = len({p["profile"] for p in mismatched})
    assert f"{7 - bad} of 7 match their governance on the wire" in text(
        page.get_element_by_id("wire-count"))
    leak_rows = page.xpath('//table[@id="leak-table"]/tbody/tr/@data-profile')
    assert leak_rows == ["none", "rtps_encrypt"]
    sentences = [text(li) for li in page.xpath('//ul[@id="leak-sentences"]/li')]
    assert sentences[1].startswith("rtps_encrypt hides the data; it does not hide the topic")
    assert "| `rtps_encrypt` |" in md and sentences[1] in md.replace("\\_", "_")
    # what can be read is answered on the first screen, beside what it costs (issue 46
    # item 7: the table sat 64 % down the page): the same sentences, before the headline
    first = [text(li) for li in page.xpath('//ul[@id="leak-first"]/li')]
    assert first == sentences
    html = lxml.html.tostring(page).decode()
    assert html.index('id="leak-first"') < html.index('id="headline"') < \
        html.index('id="leak-table"')
