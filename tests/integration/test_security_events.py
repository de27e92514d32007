"""What the runtimes said: Fast DDS's DDS Security logging plugin is on in the
configurations govkit writes, and a participant Fast DDS refuses has its reason, in Fast
DDS's own words, in the error govkit reports, in results.json and in report.html.

Fast DDS 2.9 writes a refused local identity to its security log as an EMERGENCY with an
empty message (`PKIDH::validate_local_identity : `); the reason (`certificate has
expired`) is in the warning of its general log, which fastdds_perf prints on stderr. Both
are quoted.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.dds import make_bundle, with_file
from helpers.fastdds import require_fastdds, run_pair
from helpers.json_schemas import assert_valid

from govkit.bench import lifetime_material as material
from govkit.pki.testpki import TestPKI
from govkit.runners.base import RunnerError
from govkit.runners.fastdds import FastddsRunner
from govkit.runners.security_log import Event, fastdds_properties, level, read_events, said

EXPIRED = "[SECURITY_AUTHENTICATION] Invalidation error of certificate  (certificate has expired)"
LINE = ("[1796670666.669203220] [EMERGENCY] 01.0f.78.fd.d3.2d.6c.ad.00.00.00.00|0.0.1.c1 171 "
        "PKIDH::validate_local_identity : \n"
        "[1796670618.545981887] [WARNING] 01.0f.78.fd.db.2c.4d.38.00.00.00.00|0.0.1.c1 171 "
        "PKIDH::begin_handshake_reply : Error verifying certificate\n")


def _expired(root: Path, into: Path | None = None) -> Path:
    """pub's certificate again, for its key, ended an hour ago: into/pub.pem (root)."""
    return material.certificate_issued_at(TestPKI(root / "pki"), into or root,
                                          dt.datetime.now(dt.UTC) - dt.timedelta(hours=25))


def test_a_security_log_line_is_an_event_of_its_process(tmp_path, monkeypatch):
    log = tmp_path / "x.security.log"
    log.write_text(LINE)
    events = read_events(log)
    assert [(e.kind, e.level, e.domain, e.pid) for e in events] == [
        ("identity_refused", "EMERGENCY", 171, 0x2dd3), ("handshake_failed", "WARNING", 171,
                                                          0x2cdb)]
    assert [e.source for e in read_events(log, pid=0x2cdb)] == ["PKIDH::begin_handshake_reply"]
    assert events[1].to_json()["message"] == "Error verifying certificate"
    assert said(f"[1] fastdds Warning {EXPIRED}\n", events) == [
        EXPIRED, "[EMERGENCY] PKIDH::validate_local_identity",
        "[WARNING] PKIDH::begin_handshake_reply: Error verifying certificate"]
    monkeypatch.setenv("GOVKIT_SECURITY_LOG_LEVEL", "debug")
    assert level() == "DEBUG_LEVEL"
    assert "dds.sec.log.builtin.DDS_LogTopic.logging_level=DEBUG_LEVEL" in \
        fastdds_properties(log)
    monkeypatch.setenv("GOVKIT_SECURITY_LOG_LEVEL", "loud")
    assert level() == "WARNING_LEVEL"
    assert read_events(tmp_path / "none.log") == [] and read_events(None) == []
    assert Event(0, "INFORMATIONAL", "01.0f", 0, "x", "").pid is None


def test_every_configuration_govkit_writes_turns_the_log_on(tmp_path):
    bundle = make_bundle(tmp_path, "rtps_sign")
    r = FastddsRunner()
    from govkit.runners.base import BenchPoint
    configs = r.configs(BenchPoint(bundle.profile, "latency", 32, 1), bundle, tmp_path / "w")
    for path, text in configs.items():
        role = "pub" if path.name.endswith("-pub.properties") else "sub"
        log = r.security_log_path(bundle, role, tmp_path / "w")
        assert log.parent == (tmp_path / "w").resolve()
        lines = text.splitlines()
        assert "dds.sec.log.plugin=builtin.DDS_LogTopic" in lines
        assert f"dds.sec.log.builtin.DDS_LogTopic.log_file={log}" in lines
        assert "dds.sec.log.builtin.DDS_LogTopic.distribute=false" in lines


@pytest.mark.fastdds
def test_a_refused_participant_has_fastdds_own_words_in_the_error(tmp_path):
    bundle = make_bundle(tmp_path, "rtps_sign")
    refused = with_file(bundle, "pub", certificate=_expired(tmp_path))
    r, point, outputs = run_pair(refused, tmp_path / "run")
    with pytest.raises(RunnerError) as e:
        r.parse(point, outputs)
    message = str(e.value)
    assert "(pub) could not create its participant" in message
    assert f"Fast DDS said: {EXPIRED}" in message, message
    # the security log, in the run directory, names where Fast DDS refused it
    assert "[EMERGENCY] PKIDH::validate_local_identity" in message, message
    log = r.security_log_path(refused, "pub", tmp_path / "run")
    assert [e.kind for e in read_events(log, outputs["pub"].pid)] == ["identity_refused"]


@pytest.mark.fastdds
def test_results_json_and_report_html_say_what_fastdds_said(tmp_path):
    """Through the CLI: a secured pair whose pub Fast DDS refuses; the run goes on with
    the rest, and both files carry Fast DDS's reason."""
    require_fastdds()
    govkit = str(Path(sys.executable).parent / "govkit")
    run = lambda *a: subprocess.run([govkit, *a], cwd=tmp_path, capture_output=True,  # noqa: E731
                                    text=True, timeout=900, stdin=subprocess.DEVNULL,
                                    env={**os.environ})
    assert run("pki", "init").returncode == 0
    _expired(tmp_path, tmp_path / "pki")        # pki/pub.pem now ended an hour ago
    out = run("bench", "--runner", "fastdds", "--profile", "none,rtps_sign", "--sizes", "32",
              "--rounds", "1", "--budget", "1", "--out", "res")
    assert out.returncode == 1, out.stdout[-2000:] + out.stderr[-2000:]   # pairs failed
    doc = json.loads((tmp_path / "res" / "results.json").read_text())
    errors = [p["error"] for p in doc["rotation"]["pairs"] if p.get("error")]
    # every secured pair failed; a ping still starting when its pong gave up (a machine
    # under heavy load) has said nothing yet, so at least one, not each, has the words
    assert errors and any(f"ping: Fast DDS said: {EXPIRED}" in e for e in errors), \
        "\n".join(errors)
    html = (tmp_path / "res" / "report.html").read_text()
    assert 'id="runtimes-said"' in html
    assert f"Fast DDS said: {EXPIRED}" in html
    # the security log, as data: the pub refused its own identity, where Fast DDS says so
    events = doc["security_events"]
    assert_valid(doc, "bench")
    refused = [e for e in events if e["runtime"] == "fastdds" and e["role"] == "pub"
               and e["kind"] == "identity_refused"]
    assert refused and refused[0]["source"] == "PKIDH::validate_local_identity", events
    assert refused[0]["level"] == "EMERGENCY" and refused[0]["profile"] == "rtps_sign"
    assert 'id="security-events"' in html and "PKIDH::validate_local_identity" in html
