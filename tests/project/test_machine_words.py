"""No printed or stored sentence calls a figure "this machine's" unless it was measured on
this machine (issue 42: the `rerun ±` note, the README and every results.json's method
text said "a rerun on this machine moves this ratio by ±X %" of a constant measured on
another VM).

Two checks. Every sentence source (govkit's code: flags, summary words, method text, help;
the templates; the README; the manual; benchmarks/) is read for "this machine" / "on this
machine", and each place must be one of those listed below, each with why it is true; a
new one fails until it is read and listed (and a listed one that is gone fails too, so the
list stays the truth). And the run-to-run term's words are checked source by source: only
a term measured here is called this machine's, a default is always said to be another
machine's, not measured here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from govkit.results.latency_state import NOT_MEASURED, latency_state_note
from govkit.results.record import MEASURED_HERE, RERUN_TERM_SOURCES
from govkit.results.summary import RERUN_TERM_SAID, RERUN_TERM_WORDS, rerun_term_line

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("govkit", "templates", "docs", "benchmarks", "README.md")
SUFFIXES = {".py", ".md", ".j2", ".html", ".txt", ".toml"}
SKIP = ("docs/_build",)
PHRASE = re.compile(r"(?:on )?this machine(?:'s|’s)?", re.IGNORECASE)

# path -> (a snippet of the line, why it is true)
ALLOWED: dict[str, list[tuple[str, str]]] = {
    "templates/summary.md.j2": [("The ratios are this machine's", "the machine named just "
                                 "before (Measured on CPU …) measured them")],
    "templates/report.html.j2": [("The ratios are this machine's", "the same")],
    "docs/reference/results-json.md": [("A ratio is this machine's: the report says on which "
                                        "it was measured", "the run's own machine")],
    "govkit/results/summary.py": [
        ("called this machine's; a default was measured elsewhere", "the rule, in a comment"),
        ("on this machine\" of another VM's constant", "quotes the old, false note"),
        ("reads every sentence that says \"this machine\"", "names this test"),
        ("the run-to-run term measured on this machine (govkit calibrate) puts",
         "machine_calibration's words: measured here"),
        ("\"machine_calibration\": \"measured on this machine\"", "the same"),
    ],
    "govkit/bench/calibration.py": [
        ("What makes a calibration this machine's", "the calibration is measured here"),
        ("This machine's calibration, or None", "the same"),
        ("else this machine's calibration where it", "the same"),
    ],
    "govkit/results/record.py": [("`govkit calibrate`'s on this machine "
                                  "(rerun_term_calibration", "measured here")],
    "govkit/bench/__init__.py": [("the run-to-run term measured on this machine, kept",
                                  "govkit calibrate measures it here")],
    "govkit/cli/__init__.py": [("calibrate, this machine's run-to-run term", "the same")],
    "govkit/cli/calibrate.py": [
        ("measure this machine's run-to-run term (govkit.bench.calibration)", "the same"),
        ("Measure this machine's run-to-run term and keep it", "the same"),
        ("govkit bench on this machine carries it", "the same machine, no figure"),
    ],
    "docs/guide/benchmarking.md": [("says \"measured on this machine by govkit calibrate on "
                                    "DATE\"", "quotes what a run carrying a calibration "
                                    "made there says")],
    "docs/background/method.md": [
        ("note called it what \"a rerun **on this machine**\" moves", "quotes the old, false "
         "note"),
        ("measured on this machine by govkit calibrate on 2026-12-07", "quotes a run carrying "
         "the calibration made on that host"),
        ("lists every \"this machine\" in them", "names the phrase this test reads"),
        ("words call the term this machine's", "the rule"),
    ],
    "docs/reference/cli.md": [("Measure this machine's run-to-run term and keep it",
                               "calibrate's help, generated")],
    # where things run, not figures
    "govkit/common/staging.py": [("this boot of this machine", "a pid's scope")],
    "govkit/runners/base.py": [("on this machine's loopback", "where the processes run")],
    "govkit/runners/network.py": [("on this machine's loopback", "the same"),
                                  ("else \"this machine\")", "the same")],
    "govkit/runners/netpath.py": [("this machine's own namespace", "the same"),
                                  ("This machine's source address", "an address")],
    "govkit/bench/context.py": [("everything on this machine's loopback", "the same")],
    "docs/guide/across-machines.md": [("share this machine's CPUs, memory and kernel",
                                       "where the processes run"),
                                      ("No address outside this machine", "the same")],
}


def _sources():
    for top in SOURCES:
        path = ROOT / top
        files = [path] if path.is_file() else sorted(path.rglob("*"))
        for f in files:
            rel = f.relative_to(ROOT).as_posix()
            if f.is_file() and f.suffix in SUFFIXES and not rel.startswith(SKIP):
                yield rel, f.read_text(errors="replace")


def flat(text: str) -> str:
    """The text as sentences read: Python's adjacent string literals joined, comment marks
    and line breaks gone, so that a sentence broken over lines is read whole."""
    text = re.sub(r'"\s*\n\s*(?:[rf]{1,2})?"', "", text)
    text = re.sub(r"\n\s*#\s*", " ", text)
    return re.sub(r"\s+", " ", text)


def test_every_sentence_that_says_this_machine_is_one_measured_here():
    found, used = [], set()
    for rel, text in _sources():
        text = flat(text)
        for m in PHRASE.finditer(text):
            around = text[max(0, m.start() - 90):m.end() + 90]
            match = [s for s, _ in ALLOWED.get(rel, []) if s in around]
            if match:
                used.update((rel, s) for s in match)
            else:
                found.append(f"{rel}: …{around}…")
    assert not found, ("these say 'this machine' of something: true only if it was "
                       "measured here; rephrase, or list it with why:\n" + "\n".join(found))
    stale = [(p, s) for p, items in ALLOWED.items() for s, _ in items if (p, s) not in used]
    assert not stale, f"listed but no longer said: {stale}"


def test_the_scan_sees_a_false_sentence():
    """The check can fail: the note govkit printed before issue 42 is caught."""
    line = "rerun ±: a rerun on this machine moves this ratio by about ±2.1 %"
    assert PHRASE.search(line) and not any(s in line for items in ALLOWED.values()
                                           for s, _ in items)


@pytest.mark.parametrize("source", RERUN_TERM_SOURCES)
def test_only_a_term_measured_here_is_called_this_machines(source):
    for words in (RERUN_TERM_WORDS[source], RERUN_TERM_SAID[source]):
        here = "this machine" in words
        assert here == (source == "machine_calibration"), (source, words)
        if source not in MEASURED_HERE:
            assert "here" not in words.replace("not measured here", ""), words
        if source == "default":
            assert "a default from another machine, not measured here" in words


@pytest.mark.parametrize("source", ["default", "given"])
def test_the_runs_line_never_calls_a_term_not_measured_here_this_machines(source):
    doc = {"schema": "govkit.bench/3", "rotation": {
        "settings": {"rerun_kappa_pct": {"latency": 2.6}, "rerun_term_source": source},
        "pairs": [], "rounds": [],
        "slots": [{"round": 0, "position": 0, "arm": "none", "profile": "none",
                   "instance": 0, "size": 32, "status": "ok", "p50": 10.0}]}}
    line = rerun_term_line(doc)
    assert line and "this machine" not in line
    assert RERUN_TERM_SAID[source] in line


IDLE_MEASURED = {"created": "2026-12-07T19:00:00+00:00", "size": 32, "ratio": 0.89,
                 "ratio_ci95": [0.85, 0.93], "idle_us": 22.5, "awake_us": 25.4,
                 "runs_per_state": 2, "protected": {"profile": "rtps_sign", "awake": 1.76,
                                                    "idle": 2.04}}


@pytest.mark.parametrize("awake", [True, False])
@pytest.mark.parametrize("idle", [None, IDLE_MEASURED, {"ratio": "0.9"}])
def test_the_cpus_state_gives_idles_figure_only_where_measured_on_the_runs_machine(awake,
                                                                                  idle):
    """Issue 46 item 5: the sentence beside absolute µs names the CPUs' state; it gives
    how far idle moves them only from the run's environment.idle_vs_awake (govkit
    calibrate on the same machine identity), dated and named as govkit calibrate's, and
    otherwise says it is not measured there and how to measure it: never a figure of
    another machine, never "this machine" (the report may be read elsewhere)."""
    doc = {"settings": {"cpus_kept_awake": awake}, "environment": {"idle_vs_awake": idle},
           "profiles": [], "results": []}
    note = latency_state_note(doc)
    assert note.startswith("CPUs kept awake: " if awake else "CPUs allowed to idle: ")
    assert not PHRASE.search(note), note
    if idle is IDLE_MEASURED:
        assert ("idle reads 0.89× [0.85, 0.93] of awake on the machine that made this run"
                in note and "measured 2026-12-07 by govkit calibrate (2 run(s) of each"
                in note), note
    else:
        assert note.endswith(NOT_MEASURED) and not re.search(r"\d×", note), note
