"""Property-based fuzzing of lint, identify, explain and diff with mutated governance and
permissions documents (the lint fixtures): never an internal error, never a traceback,
exit code 0, 1 or 2 only, whatever the document holds; plus large documents that hit the
comparison budget. Mutations favour what reaches the rules: odd values, extension
elements, rules out of place, open ranges, huge numbers and long patterns. Fixed budget,
derandomized: every run tries the same inputs.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from govkit.check.lint import LintOptions, lint_paths
from govkit.cli.main import app

DATA = Path(__file__).resolve().parent.parent / "data" / "lint"
BASES = [p.read_bytes() for p in sorted(DATA.glob("*.xml"))]
TOKENS = [b"TRUE", b"True", b"1", b"0", b"NONE", b"ENCRYPT", b"SIGN_WITH_ORIGIN_AUTHENTICATION",
          b"*", b"?", b"[", b"[!a-", b"]", b"", b" ", b"CN=a, O=b", b"/O=b/CN=a", b"\\", b"=",
          b",", b"+", b'"', b"<id>99999999999999999999999</id>", b"<id_range><min>7</min>"
          b"</id_range>", b"<id_range><max>3</max></id_range>",
          b"<enable_key_revision>true</enable_key_revision>", b"<tag>x</tag>",
          b"<topic_expression>*</topic_expression>", b"</topic_rule>", b"<topic_rule>",
          b"<deny_rule><domains><id>1</id></domains></deny_rule>", b"<partition>*</partition>",
          b"<default>ALLOW</default>", b"2030-01-01T00:00:00", b"9999-12-31T23:59:59Z",
          b"-0001-01-01T00:00:00", b"<!-- x -->", b"<![CDATA[*]]>", b"</grant>", b"<grant>",
          b"\xff", b"\0", b"*" * 3000]


@st.composite
def mutated(draw) -> bytes:
    data = bytearray(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["insert", "delete", "replace_text", "duplicate"]))
        pos = draw(st.integers(0, len(data)))
        if op == "insert":
            data[pos:pos] = draw(st.sampled_from(TOKENS))
        elif op == "delete":
            del data[pos:pos + draw(st.integers(1, 40))]
        elif op == "replace_text":   # a value between two tags
            start = data.find(b">", pos)
            end = data.find(b"<", start + 1) if start >= 0 else -1
            if 0 <= start < end:
                data[start + 1:end] = draw(st.sampled_from(TOKENS))
        else:
            data[pos:pos] = data[pos:pos + draw(st.integers(1, 600))]
    return bytes(data)


def run(*args: str) -> int:
    result = CliRunner().invoke(app, list(args))
    output = result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert "Traceback" not in output and "internal error" not in output, output[-1500:]
    assert result.exit_code in (0, 1, 2), (args, result.exit_code, output[-1500:])
    return result.exit_code


FUZZ = settings(max_examples=80, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(mutated(), mutated(), st.sampled_from(["omg", "cyclone", "connext", "fastdds"]))
def test_mutated_documents(a, b, target):
    with tempfile.TemporaryDirectory() as d:
        pa, pb = Path(d) / "a.xml", Path(d) / "b.xml"
        pa.write_bytes(a)
        pb.write_bytes(b)
        run("lint", "--target", target, "--json", str(pa), str(pb))
        run("identify", str(pa))
        run("explain", str(pa))
        run("explain", "--json", str(pb))
        run("diff", str(pa), str(pb))


def _topic_rule(expr: str) -> str:
    return (f"<topic_rule><topic_expression>{expr}</topic_expression>"
            "<enable_discovery_protection>true</enable_discovery_protection>"
            "<enable_liveliness_protection>true</enable_liveliness_protection>"
            "<enable_read_access_control>true</enable_read_access_control>"
            "<enable_write_access_control>true</enable_write_access_control>"
            "<metadata_protection_kind>NONE</metadata_protection_kind>"
            "<data_protection_kind>NONE</data_protection_kind></topic_rule>")


def test_large_documents_stop_at_the_budget(tmp_path):
    rules = "".join(_topic_rule(f"P{i}/*") for i in range(999))   # none covers another
    doc = ("<dds><domain_access_rules><domain_rule><domains><id>1</id></domains>"
           "<allow_unauthenticated_participants>false</allow_unauthenticated_participants>"
           "<enable_join_access_control>true</enable_join_access_control>"
           "<discovery_protection_kind>SIGN</discovery_protection_kind>"
           "<liveliness_protection_kind>SIGN</liveliness_protection_kind>"
           "<rtps_protection_kind>SIGN</rtps_protection_kind>"
           f"<topic_access_rules>{rules}{_topic_rule('P5/x')}</topic_access_rules>"
           "</domain_rule></domain_access_rules></dds>")
    path = tmp_path / "big.xml"
    path.write_text(doc)
    (report,) = lint_paths([path], LintOptions())
    assert [f.rule for f in report.findings] == ["GK003"]   # 500,000 pairs: stopped
    assert run("explain", str(path)) == 0
    # a megabyte-scale pattern pair is not decided (no finding), not a hang
    long = "*a" * 150_000
    path.write_text(doc.replace(rules, _topic_rule(long) + _topic_rule(long + "b")))
    (report,) = lint_paths([path], LintOptions())
    assert report.findings == []
