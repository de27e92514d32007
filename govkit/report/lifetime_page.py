"""`govkit lifetime-check --out DIR`: the expiry matrix as files a user keeps and opens,
beside each other as `govkit bench` writes results.json and report.html: DIR/lifetime.json
(the --json document, schemas/json/lifetime-check.schema.json) and DIR/lifetime.html (the
matrix and each cell's evidence, in the report pages' style; every text escaped).

Its own page, not a section of a bench report: a lifetime check is a measurement of its
own (its runtimes, its date, its host), made without any benchmark, and what it answers
(what a runtime does at expiry) is no overhead; a bench report that picked up a matrix
from elsewhere would date it wrongly. Both files are written atomically, the JSON first.
"""

from __future__ import annotations

import json
from pathlib import Path

from govkit.common.fsutil import write_atomic
from govkit.common.templating import get_template

JSON_NAME = "lifetime.json"
HTML_NAME = "lifetime.html"
# the outcome's look on the page: a runtime that went on with an ended grant is the news
OUTCOME_CLASS = {"kept_talking": "bad", "dropped": "good", "refused": "good",
                 "accepted": "bad", "crashed": "bad", "inconclusive": "muted"}


def matrix(cells: list[dict]) -> tuple[list[str], list[dict]]:
    """The page's table: its runtime columns (`NAME VERSION`), and one row per event with
    each runtime's cell (None where that runtime had no such cell)."""
    runtimes = list(dict.fromkeys(f"{c['runtime']} {c['version']}" for c in cells))
    by = {(f"{c['runtime']} {c['version']}", c["event"]): c for c in cells}
    events = list(dict.fromkeys(c["event"] for c in cells))
    rows = [{"event": e, "cells": [by.get((r, e)) for r in runtimes]} for e in events]
    return runtimes, rows


def render_lifetime(doc: dict) -> str:
    runtimes, rows = matrix(doc["cells"])
    return get_template("lifetime.html.j2").render(
        doc=doc, runtimes=runtimes, rows=rows, outcome_class=OUTCOME_CLASS)


def write_lifetime(out: Path, doc: dict) -> tuple[Path, Path]:
    """DIR/lifetime.json and DIR/lifetime.html (DIR made if need be); their paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    json_path, html_path = out / JSON_NAME, out / HTML_NAME
    write_atomic(json_path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    write_atomic(html_path, render_lifetime(doc))
    return json_path, html_path
