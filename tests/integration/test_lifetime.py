"""`govkit lifetime-check`: the expiry matrix of Cyclone DDS 0.10 and Fast DDS 2.9, measured
on real pairs with lifetimes of seconds, must be the one docs/guide/expiry.md states.

Where the two runtimes differ from each other (and from what DDS Security 1.1 leaves open:
it asks for identity and permissions checks at authentication and at access, not for what
a matched peer does when they end), EXPECTED says so, cell by cell:
- Cyclone 0.10 sets a timer at a certificate's and at a grant's end and drops the matched
  peer then; Fast DDS 2.9 checks both at the handshake only and keeps talking (the
  expired-identity flaw fixed only in Fast DDS 3.2.5 and 2.6.12, CVE-2025-67108);
- neither reads a CRL again while it runs: a revocation reaches a pair at its next
  handshake (a restart), not while it talks;
- both refuse their own participant when it starts with an expired or not yet valid
  certificate, or with an expired grant (Fast DDS 2.9 says why for a certificate, not for
  a grant).
The whole run takes about a minute: the cells run at once, each on its own domain.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from helpers.dds import needs_cyclone
from helpers.json_schemas import assert_valid
from test_report_browser import (  # the report pages' browser (same directory)
    ARTIFACTS,
    CHROMIUM,
    LAYOUT_FACTS,
    Chromium,
    assert_clean_page,
)
from typer.testing import CliRunner

from govkit.bench import lifetime_material as material
from govkit.bench.lifetime import Cell, Timing, matrix_fields, table_rows
from govkit.bench.lifetime_events import EVENTS
from govkit.cli.main import app
from govkit.pki.issuance import init_pki
from govkit.report.lifetime_page import write_lifetime

DOC = Path(__file__).resolve().parents[2] / "docs" / "guide" / "expiry.md"

EXPECTED = {
    "Cyclone DDS": {"identity_expires": "dropped", "expired_identity_joins": "refused",
                    "not_yet_valid_joins": "refused", "permissions_expire": "dropped",
                    "expired_permissions_join": "refused", "crl_written": "kept_talking"},
    "Fast DDS": {"identity_expires": "kept_talking", "expired_identity_joins": "refused",
                 "not_yet_valid_joins": "refused", "permissions_expire": "kept_talking",
                 "expired_permissions_join": "refused", "crl_written": "kept_talking"},
}
# the runtime's own words each refusal must quote
WORDS = {
    ("Cyclone DDS", "expired_identity_joins"): "certificate has expired",
    ("Cyclone DDS", "not_yet_valid_joins"): "certificate is not yet valid",
    ("Cyclone DDS", "expired_permissions_join"): "Permissions validity period expired",
    ("Fast DDS", "expired_identity_joins"): "(certificate has expired)",
    ("Fast DDS", "not_yet_valid_joins"): "(certificate is not yet valid)",
    ("Fast DDS", "expired_permissions_join"): "Cannot create participant",
}
SHORT = ["--lead", "12", "--observe", "6", "--wait", "10", "--jobs", "12"]


def _doc_matrix() -> dict[str, dict[str, str]]:
    """The matrix the guide states: its table of `| event | cyclone | fastdds |` rows."""
    text = DOC.read_text().split("## Today's matrix", 1)[1].split("\n## ", 1)[0]
    header = re.search(r"^\| event \| (.+) \|$", text, re.M)
    runtimes = [re.sub(r" \d[\d.]*$", "", h.strip()) for h in header[1].split("|")]
    found: dict[str, dict[str, str]] = {r: {} for r in runtimes}
    for m in re.finditer(r"^\| `(\w+)` \| (.+) \|$", text, re.M):
        for r, cell in zip(runtimes, m[2].split("|"), strict=True):
            found[r][m[1]] = re.match(r"\W*([a-z_]+)", cell)[1]
    return found


def test_the_guide_states_the_expected_matrix():
    assert _doc_matrix() == EXPECTED


@needs_cyclone
@pytest.mark.cyclone
@pytest.mark.fastdds
def test_the_measured_matrix_is_the_guides(tmp_path):
    r = CliRunner().invoke(app, ["lifetime-check", "--json", *SHORT, "--out",
                                 str(tmp_path / "out")])
    assert r.exit_code == 0, r.output[-3000:]
    doc = json.loads(r.stdout)
    assert_valid(doc, "lifetime-check")
    # the same document kept beside its page, which a real browser shows cell for cell
    assert json.loads((tmp_path / "out" / "lifetime.json").read_text()) == doc
    _check_page_in_chromium(tmp_path, tmp_path / "out" / "lifetime.html", doc)
    cells = doc["cells"]
    assert [(c["runtime"], c["event"]) for c in cells] == [
        (rt, e) for rt in EXPECTED for e in EVENTS]
    assert {c["runtime"]: c["version"] for c in cells} == {"Cyclone DDS": "0.10.2",
                                                           "Fast DDS": "2.9.1"}
    measured = {rt: {c["event"]: c["outcome"] for c in cells if c["runtime"] == rt}
                for rt in EXPECTED}
    assert measured == EXPECTED, json.dumps(cells, indent=1)
    for c in cells:
        words = WORDS.get((c["runtime"], c["event"]))
        assert words is None or words in c["evidence"], c
        if c["outcome"] == "dropped":     # within the observation window, never before
            assert 0 <= c["seconds"] <= 6, c
        else:
            assert c["seconds"] is None, c


PAGE_FACTS = """(() => ({
  title: document.title, text: document.body.innerText, scripts: document.scripts.length,
  cells: [...document.querySelectorAll('#lifetime-table td[data-outcome]')].map(td => ({
    runtime: td.dataset.runtime, event: td.dataset.event, outcome: td.dataset.outcome,
    shown: td.innerText, title: td.title,
    visible: td.getBoundingClientRect().width > 0 && td.getBoundingClientRect().height > 0})),
  """ + LAYOUT_FACTS + """}))()"""


def _check_page_in_chromium(tmp_path: Path, html: Path, doc: dict) -> None:
    """lifetime.html in a real headless Chromium: every cell shown with its outcome (and
    the seconds of a drop), its evidence on hover and in the evidence table; the page
    clean as every report page (no script, no error, nothing fetched, no overflow)."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium): the page "
                    f"was written but not opened")
    browser = Chromium(tmp_path / "chromium-profile")
    try:
        browser.open_page()
        browser.navigate(html.as_uri())
        facts = browser.evaluate(PAGE_FACTS)
        browser.screenshot(ARTIFACTS / "lifetime.png")
        assert doc["created"] in facts["title"]
        shown = {(c["runtime"], c["event"]): c for c in facts["cells"]}
        assert len(shown) == len(doc["cells"])
        for c in doc["cells"]:
            s = shown[(c["runtime"], c["event"])]
            assert s["outcome"] == c["outcome"] and s["visible"], s
            assert s["shown"].startswith(c["outcome"]), s
            if c["seconds"] is not None:
                assert f"{c['seconds']} s" in s["shown"], s
            assert s["title"] == c["evidence"]
            assert c["evidence"][:60] in facts["text"]
        assert doc["host"] is None or doc["host"] in facts["text"]
        assert_clean_page(browser, facts, ARTIFACTS / "lifetime.png")
    finally:
        browser.close()


def test_the_page_escapes_what_the_runtimes_said(tmp_path):
    cells = [Cell("Cyclone DDS", "0.10.2", "identity_expires", "dropped", 0.9,
                  "ping: <script>alert(1)</script> & \"quoted\""),
             Cell("Fast DDS", "2.9.1", "crl_written", "kept_talking", None, "b")]
    doc = {"schema": "govkit.lifetime-check/1", **matrix_fields(cells, Timing())}
    assert_valid(doc, "lifetime-check")
    json_path, html_path = write_lifetime(tmp_path / "new" / "dir", doc)
    assert json.loads(json_path.read_text()) == doc
    html = html_path.read_text()
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt; &amp;" in html
    assert 'data-outcome="dropped"' in html and "0.9 s" in html
    assert sorted(p.name for p in (tmp_path / "new" / "dir").iterdir()) == [
        "lifetime.html", "lifetime.json"]      # no temporary file left behind


def test_a_certificate_issued_at_a_moment_ends_or_starts_a_day_from_it(tmp_path):
    pki, _ = init_pki(tmp_path / "pki", participants=("pub",))
    at = dt.datetime(2027, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    path = material.certificate_issued_at(pki, tmp_path, at - material.DAY)
    from cryptography import x509
    cert = x509.load_pem_x509_certificate(path.read_bytes())
    assert cert.not_valid_after_utc == at
    assert cert.public_key() == pki.certificate("pub").public_key()
    assert cert.subject == pki.certificate("pub").subject
    cert.verify_directly_issued_by(pki.certificate("identity_ca"))


def test_the_table_has_a_column_per_runtime_and_the_seconds_of_a_drop():
    cells = [Cell("Cyclone DDS", "0.10.2", "identity_expires", "dropped", 0.9, "a"),
             Cell("Fast DDS", "2.9.1", "identity_expires", "kept_talking", None, "b")]
    rows = table_rows(cells)
    assert rows[0].split() == ["event", "Cyclone", "DDS", "0.10.2", "Fast", "DDS", "2.9.1"]
    assert rows[1].split() == ["identity_expires", "dropped", "0.9", "s", "kept_talking"]
    assert rows[3:] == ["Cyclone DDS identity_expires: a", "Fast DDS identity_expires: b"]
