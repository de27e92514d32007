"""validate and explain over ../shared/reference/corpus2 (145 real documents from 13
repositories, verdicts computed with lxml and OpenSSL, not govkit): validate gives the
XSD's verdict on every file and names the right line; explain runs on every file and what
it says of rules, grants and domains is what the documents hold."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.corpus2 import corpus2_dir, deadline, index_rows, verdicts
from typer.testing import CliRunner

from govkit.catalog.profiles import PROTECTION_KINDS
from govkit.check.explain import explain_document
from govkit.check.loaded import load_document
from govkit.check.validate import check_bytes, read_document
from govkit.cli.main import app
from govkit.documents import domainsets

# OMG-valid documents that validate still reports, each for a rule it states: Fast DDS's
# test of an empty topic_expression (a rule that matches no topic) and Cyclone DDS's test
# of domain id 430 (above 232, the RTPS port mapping's limit: every target refuses it).
VALIDATE_LINT = {
    "fastdds/governance_blank_topic_expression.smime": "GK100 error",   # empty-topic-expression
    "cyclonedds/Test_Permissions_invalid_data.p7s": "GK010 error",      # domain-range
}
RULE_FINDING = re.compile(r"GK\d{3} (error|warning|info): ")


# What the index holds: every one is compared.
GRANTS, DOMAIN_RULES = 125, 64


@pytest.fixture(scope="module")
def corpus(shared) -> tuple[Path, list[dict[str, str]]]:
    rows = index_rows(shared)
    assert len(rows) == 145
    return corpus2_dir(shared), rows


def _tag_ends_on(data: bytes, line: int, column: int, want: int) -> bool:
    """The start tag at line:column (govkit points at its '<') ends on line `want`
    (libxml2 numbers an element by the line its start tag ends on)."""
    lines = data.split(b"\n")
    start = sum(len(x) + 1 for x in lines[:line - 1]) + column - 1
    end = data.find(b">", start)
    return data[start:start + 1] == b"<" and end >= 0 and data.count(b"\n", 0, end) + 1 == want


def test_validate_agrees_with_lxml_on_every_document(corpus):
    root, rows = corpus
    lint_reported = {}
    for row in rows:
        path = root / row["file"]
        data = read_document(path)
        with deadline(f"validate {row['file']}"):
            check = check_bytes(data, str(path))
        schema = [f for f in check.findings if not RULE_FINDING.match(f.message)]
        lint = [f for f in check.findings if RULE_FINDING.match(f.message)]
        assert (not schema) == (row["valid_omg_1_1"] == "yes"), (row["file"], schema[:1])
        if lint:
            lint_reported[row["file"]] = {f.message.split(":")[0] for f in lint}
        if row["valid_omg_1_1"] == "no":
            want = int(row["first_error_line_in_file"] or row["first_error"].split(":")[0])
            first = schema[0]
            assert first.line == want or _tag_ends_on(data, first.line, first.column, want), \
                (row["file"], first, want)
    assert lint_reported == {f: {rule} for f, rule in VALIDATE_LINT.items()}
    data = read_document(root / "cyclonedds/Test_Permissions_invalid_data.p7s")
    domain = check_bytes(data, "x", target="cyclone").findings
    assert domain and all("Cyclone DDS 0.10" in f.message for f in domain)   # its version
    assert all("RTPS default port mapping" in f.message for f in check_bytes(data, "x").findings)


def test_validate_command_over_the_corpus_never_crashes(corpus):
    root, rows = corpus
    files = [str(root / r["file"]) for r in rows]
    result = subprocess.run([sys.executable, "-m", "govkit", "validate", *files],
                            capture_output=True, text=True, timeout=300,
                            env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 1, result.stderr[-2000:]   # some are invalid; none crash
    assert "Traceback" not in result.stderr + result.stdout


def _domains_text(items: list[str]) -> str:
    """The index's domain list ("20", "0-23", "0-" open) as explain words a set."""
    spans = []
    for item in items:
        lo, _, hi = item.partition("-")
        spans.append((int(lo), domainsets.INF if _ else int(lo)) if not hi
                     else (int(lo), int(hi)))
    return domainsets.domains_text(domainsets.normalise(spans))


def _explain(path: Path) -> tuple[int, dict | None]:
    with deadline(f"explain {path}"):
        result = CliRunner().invoke(app, ["explain", "--json", str(path)])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        (path, repr(result.exception))
    return result.exit_code, json.loads(result.stdout) if result.exit_code == 0 else None


def test_explain_runs_on_every_document_and_says_what_it_holds(corpus, shared):
    root, rows = corpus
    index = verdicts(shared)
    grants = rules = 0
    for row in rows:
        code, e = _explain(root / row["file"])
        v = index[row["file"]]
        if row["valid_omg_1_1"] == "not-well-formed":
            assert code == 2, row["file"]
            continue
        assert code == 0, row["file"]
        off = v.get("body_line_offset") or 0
        if e["kind"] == "permissions":
            # every grant (a 1.0-beta root <permissions> too), its rules in order
            assert [(g["line"], g["name"], g["default"],
                     [(r["verdict"], r["line"]) for r in g["rules"]]) for g in e["grants"]] \
                == [(g["line"] + off, g["name"], g["default"],
                     [(k.removesuffix("_rule").upper(), n + off) for k, n in g["rules"]])
                    for g in v.get("grants", [])], row["file"]
            grants += len(e["grants"])
            continue
        want = v.get("governance", [])
        assert len(e["domain_rules"]) == len(want), row["file"]
        for d, w in zip(e["domain_rules"], want, strict=True):
            assert d["line"] == w["line"] + off, row["file"]
            beta = [x for x in w["domains"] if x.startswith("domain_id:")]
            if beta:   # 1.0-beta <domain_id>: said as such, not as "no domain"
                assert "1.0-beta <domain_id> '42'" in d["domains"], d["domains"]
            else:
                assert d["domains"].split(" (")[0] == _domains_text(w["domains"]), row["file"]
            _check_settings(row["file"], d, w)
            rules += 1
    assert (grants, rules) == (GRANTS, DOMAIN_RULES)


def _check_settings(file: str, d: dict, w: dict) -> None:
    """What explain says each topic_rule protects is what its settings are."""
    assert [(t["line"], t["expression"]) for t in d["topic_rules"]] == \
        [(t["line"] + (d["line"] - w["line"]), t["topic_expression"])
         for t in w["topic_rules"]], file
    kind = PROTECTION_KINDS.get(w["rtps_protection_kind"])
    if kind is not None:
        assert d["rtps_messages"] == kind.meaning, file
    for t, tw in zip(d["topic_rules"], w["topic_rules"], strict=True):
        for setting, words in (("enable_read_access_control", "who may read"),
                               ("enable_write_access_control", "who may write")):
            value = tw[setting].strip().lower()
            if value in ("true", "false"):
                said = t["protects"] if value == "true" else t["does_not_protect"]
                assert any(s.startswith(words) for s in said), (file, t["line"], setting)
        data = PROTECTION_KINDS.get(tw["data_protection_kind"])
        if data is not None:
            assert f"data (payload): {data.meaning}" in t["protects"] + t["does_not_protect"]
        # Sent through the secure builtin endpoints protects only as much as the domain
        # rule's kind for them does: with NONE a passive listener reads it all.
        for setting, what, endpoints in (
                ("enable_discovery_protection", "discovery", "discovery_protection_kind"),
                ("enable_liveliness_protection", "liveliness", "liveliness_protection_kind")):
            if (tw.get(setting) or "").strip().lower() != "true":
                continue
            said = [x for x in t["protects"] + t["does_not_protect"]
                    if x.startswith(f"{what}: sent through the secure builtin endpoints")]
            assert len(said) == 1, (file, t["line"], what)
            kind = PROTECTION_KINDS.get((w.get(endpoints) or "").strip())
            if kind is None or kind.meaning == "not protected":
                assert said[0] in t["does_not_protect"] and "visible to" in said[0], said
            else:
                assert said[0] in t["protects"] and said[0].endswith(kind.meaning), said


def test_explain_says_a_shadowed_deny_denies_nothing_where_lint_says_so(corpus):
    root, _ = corpus
    path = root / "workbook" / "appname_permissions.xml"
    code, e = _explain(path)
    (grant,) = e["grants"]
    deny = grant["rules"][1]
    assert deny["verdict"] == "DENY"
    assert all(a["never_applies"] for a in deny["actions"])
    lint = subprocess.run([sys.executable, "-m", "govkit", "lint", "--select", "GK214",
                           str(path)], capture_output=True, text=True, timeout=60)
    assert lint.stdout.count("GK214") == len(deny["actions"]), lint.stdout


# explain's "valid for N more days" / "expired N days ago" at a fixed instant.
NOW = dt.datetime(2026, 12, 2, 12, 0, tzinfo=dt.UTC)


def _instant(text: str) -> dt.datetime:
    """A grant date as the index holds it; UTC when it states no zone (DDS Security 1.1)."""
    t = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return t if t.tzinfo else t.replace(tzinfo=dt.UTC)


def test_explain_says_each_grants_subject_dates_and_status(corpus, shared):
    """Whom a grant names and when it holds, as the index read them (1.0-beta's
    YYYYMMDDHH dates: 'validity not readable')."""
    root, rows = corpus
    index = verdicts(shared)
    checked = 0
    for row in rows:
        want = index[row["file"]].get("grants")
        if not want:
            continue
        e = explain_document(load_document(root / row["file"]), now=NOW)
        for g, w in zip(e["grants"], want, strict=True):
            assert " ".join(g["subject"].split()) == " ".join(w["subject"].split()), row["file"]
            assert g["not_before"].startswith(w["not_before"].strip()), row["file"]
            assert g["not_after"].startswith(w["not_after"].strip()), row["file"]
            try:
                nb, na = _instant(w["not_before"].strip()), _instant(w["not_after"].strip())
            except ValueError:
                assert g["status"] == "validity not readable", (row["file"], g["status"])
                continue
            assert g["status"] == ("not valid yet" if NOW < nb else
                                   f"expired {(NOW - na).days} days ago" if NOW >= na else
                                   f"valid for {(na - NOW).days} more days"), row["file"]
            checked += 1
    assert checked >= 115   # all 125 grants but the 1.0-beta ones


def test_explain_marks_exactly_the_rules_lint_finds_shadowed(corpus):
    """Every rule explain says never applies is one lint reports (GK214, GK217), under the
    specification's reading and Cyclone's alike: none of the corpus's denies sits behind
    an open id_range, so neither reading holds a deny in part (EARLIER RULES FIRST)."""
    root, rows = corpus
    files = [str(root / r["file"]) for r in rows if "permissions" in r["kind"]
             and r["valid_omg_1_1"] != "not-well-formed"]
    lint = {}
    for target in ("omg", "cyclone", "fastdds"):
        result = subprocess.run([sys.executable, "-m", "govkit", "lint", "--select",
                                 "GK214,GK217",
                                 "--target", target, "--output-format", "json", *files],
                                capture_output=True, text=True, timeout=300)
        lint[target] = {f["file"]: len(f["findings"])
                        for f in json.loads(result.stdout)["files"]}
    never = 0
    for path in files:
        _, e = _explain(Path(path))
        actions = [a for g in e["grants"] for r in g["rules"] for a in r["actions"]]
        shadowed = sum(a["never_applies"] is not None for a in actions)
        assert not any(a["held_by_earlier"] for a in actions), path
        assert shadowed == lint["omg"][path] == lint["cyclone"][path] == \
            lint["fastdds"][path], path
        never += shadowed
    assert never == 2   # workbook/appname_permissions.xml
