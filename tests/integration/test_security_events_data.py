"""The runtimes' security events as data (govkit.runners.security_events): a real pair
refused by each runtime, whose refusal is in the events read back from the run's
configuration directory, in the runtime's own words.

The refused pair: ping's identity comes from another Identity CA (its own certificate,
key and CA, which it validates locally), so each side refuses the other's handshake.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import fastdds as fastdds_helpers
from helpers.dds import make_bundle, needs_cyclone, next_domain, run_pair, with_file
from helpers.json_schemas import assert_valid

from govkit.bench import lifetime_material as material
from govkit.pki.issuance import init_pki
from govkit.pki.testpki import TestPKI
from govkit.runners.security_events import collect, cyclone_kind, cyclone_log_pattern


def _foreign_ping(tmp_path: Path):
    bundle = make_bundle(tmp_path, "rtps_sign")
    other, _ = init_pki(tmp_path / "other-pki")
    return with_file(bundle, "pub", certificate=other.path("pub"),
                     private_key=other.path("pub", ".key"), identity_ca=other.identity_ca)


def test_cyclone_lines_are_named_by_their_words():
    assert cyclone_kind("Validate remote identity failed: X509 certificate verify failed"
                        "(code: 0)") == "handshake_failed"
    assert cyclone_kind("Error occurred while validating local permission: Certificate "
                        "not valid(code: 200)") == "participant_refused"
    assert cyclone_kind("Access control does not allow remote topic Secret: x(code: 1)") \
        == "access_denied"
    assert cyclone_kind("It is not allowed to create participant: y") == "participant_refused"
    assert cyclone_log_pattern(Path("/r/config/cyclonedds-p-udp-lo-pub.xml")) == \
        "/r/config/cyclonedds-p-udp-lo-pub-${CYCLONEDDS_DOMAIN_ID}-${CYCLONEDDS_PID}.security.log"


def test_a_file_that_is_not_a_log_is_not_read(tmp_path):
    (tmp_path / "cyclonedds-p-pub-1-2.security.log").mkdir()
    (tmp_path / "x.security.log").symlink_to("/etc/passwd")
    assert collect(tmp_path) == [] and collect(tmp_path / "none") == []


@needs_cyclone
@pytest.mark.cyclone
def test_cyclone_refusing_a_peer_from_another_ca_is_an_event_in_its_words(tmp_path):
    work = tmp_path / "res" / "config"
    _, point, outputs = run_pair(_foreign_ping(tmp_path), work)
    events = collect(work, tmp_path / "res")
    failed = [e for e in events if e.kind == "handshake_failed"]
    assert failed, [e.to_json() for e in events] + [o.tail() for o in outputs.values()]
    e = failed[0]
    assert e.runtime == "cyclone" and e.domain_id == point.domain_id
    assert e.file.startswith("config/cyclonedds-rtps_sign")
    # Cyclone's own words (ddsi_handshake.c's and the authentication plugin's)
    assert "remote identity" in e.reason.lower() or "handshake" in e.reason.lower(), e.reason
    assert "certificate" in e.reason.lower(), e.reason
    stderr = {o.role: o.stderr for o in outputs.values()}
    assert any(e.reason.split("(code")[0] in s for s in stderr.values()), stderr


@pytest.mark.fastdds
def test_fastdds_refusing_a_peer_from_another_ca_is_an_event_in_its_words(tmp_path):
    fastdds_helpers.require_fastdds()
    work = tmp_path / "res" / "config"
    _, point, outputs = fastdds_helpers.run_pair(_foreign_ping(tmp_path), work)
    events = collect(work, tmp_path / "res")
    failed = [e for e in events if e.kind == "handshake_failed"]
    assert failed, [e.to_json() for e in events] + [o.tail() for o in outputs.values()]
    e = failed[0]
    assert e.runtime == "fastdds" and e.domain_id == point.domain_id
    assert e.source.startswith("PKIDH::") and e.level == "WARNING"
    # Fast DDS's own words, as its logging plugin wrote them
    assert e.reason == f"{e.source}: Error verifying certificate", e.reason
    assert {x.pid for x in failed} <= {o.pid & 0xFFFF for o in outputs.values()}


@needs_cyclone
@pytest.mark.cyclone
def test_results_json_and_report_html_carry_cyclone_words(tmp_path):
    """Through the CLI: ping's certificate ended a day ago; Cyclone refuses its own
    participant, and says why in results.json's security_events and in report.html."""
    govkit = str(Path(sys.executable).parent / "govkit")
    run = lambda *a: subprocess.run([govkit, *a], cwd=tmp_path, capture_output=True,  # noqa: E731
                                    text=True, timeout=900, stdin=subprocess.DEVNULL,
                                    env={**os.environ})
    assert run("pki", "init").returncode == 0
    material.certificate_issued_at(TestPKI(tmp_path / "pki"), tmp_path / "pki",
                                   dt.datetime.now(dt.UTC) - dt.timedelta(hours=25))
    out = run("bench", "--runner", "ddsperf", "--profile", "none,rtps_sign", "--sizes", "32",
              "--rounds", "1", "--budget", "1", "--allow-idle", "--out", "res")
    assert out.returncode == 1, out.stdout[-2000:] + out.stderr[-2000:]   # repeats failed
    doc = json.loads((tmp_path / "res" / "results.json").read_text())
    assert_valid(doc, "bench")
    refused = [e for e in doc["security_events"] if e["role"] == "pub"
               and e["kind"] == "participant_refused"]
    assert refused, doc.get("security_events")
    assert "certificate has expired" in refused[0]["reason"]        # Cyclone's words
    assert refused[0]["runtime"] == "cyclone" and refused[0]["level"] is None
    html = (tmp_path / "res" / "report.html").read_text()
    assert 'id="security-events"' in html and "certificate has expired" in html


@pytest.mark.fastdds
def test_a_rotating_fastdds_pair_refused_quotes_its_security_log(tmp_path):
    """The rotating road (govkit.runners.pair): a refused handshake's reason, which Fast
    DDS 2.9 writes only to its security log, is in the explanation of the failed pair."""
    from govkit.common.fsutil import write_atomic
    from govkit.runners.base import BenchPoint
    from govkit.runners.pair import Pair, PairFailed

    bundle = _foreign_ping(tmp_path)
    runner = fastdds_helpers.runner()
    domain = next_domain()
    workdir = tmp_path / "cfg"
    workdir.mkdir()
    point = BenchPoint(bundle.profile, "latency", 32, 1, domain_id=domain)
    for path, text in runner.configs(point, bundle, workdir).items():
        write_atomic(Path(path), text.encode())
    pair = Pair("rtps_sign", "rtps_sign", 0, domain,
                runner.pair_specs(bundle, domain, None, False, workdir, wait_s=5),
                runner.explain_refusal)
    try:
        with pytest.raises(PairFailed) as e:
            pair.start(timeout=30)
    finally:
        pair.close()
    message = str(e.value)
    assert "Fast DDS said:" in message, message
    assert "[WARNING] PKIDH::" in message and ": Error verifying certificate" in message, \
        message


@needs_cyclone
@pytest.mark.cyclone
def test_the_cyclone_explainer_quotes_its_warning_log(tmp_path):
    """A refused Cyclone side whose stderr govkit no longer has (a rotating pair reads only
    its last lines): the explanation still quotes Cyclone, from the side's warning log."""
    from govkit.runners.cyclone import CycloneRunner
    bundle = make_bundle(tmp_path, "rtps_sign")
    expired = material.certificate_issued_at(TestPKI(tmp_path / "pki"), tmp_path,
                                             dt.datetime.now(dt.UTC) - dt.timedelta(hours=25))
    refused = with_file(bundle, "pub", certificate=expired)
    work = tmp_path / "res" / "config"
    runner, point, outputs = run_pair(refused, work)
    assert outputs["pub"].returncode not in (0, None)
    pub = next(s for s in outputs.values() if s.role == "pub")
    env = {"CYCLONEDDS_URI": runner.config_path(refused, "pub", work, point).as_uri()}
    message = CycloneRunner.explain_refusal(env, "", point.domain_id)
    assert "Cyclone DDS says" in message and "certificate has expired" in message, message
    assert "fix: " in message
    assert "certificate has expired" in pub.stderr     # the same words as on its stderr
