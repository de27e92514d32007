"""Cyclone DDS 0.10's refusal lines and dates as govkit reads them (no processes: the real
refusals are in tests/integration/test_cyclone_refusal.py)."""

from __future__ import annotations

import datetime as dt

from govkit.runners.cyclone_refusal import cyclone_line, explain_cyclone_refusal
from govkit.runners.fastdds_refusal import cyclone_time


def test_cyclone_reads_dates_in_their_stated_zone_else_utc():
    utc = dt.datetime(2030, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    assert cyclone_time("2030-01-02T03:04:05") == utc
    assert cyclone_time("2030-01-02T03:04:05Z") == utc
    assert cyclone_time("2030-01-02T05:04:05+02:00") == utc
    assert cyclone_time("1969-12-31T23:59:59Z") is None
    assert cyclone_time("2030-01-02") is None


def test_the_most_specific_line_wins_and_its_prefix_is_dropped():
    text = ("1796177956.839573 [114]    ddsperf: Error occurred while validating local "
            "permission: Certificate not valid: error: certificate revoked; subject: /CN=x\n"
            "ddsperf: dds_create_participant: Error\n")
    line, refusal = cyclone_line(text)
    assert line.startswith("Error occurred while validating local permission: Certificate")
    assert refusal.file == "certificate" and "CRL" in refusal.rule
    assert cyclone_line("all fine\n") is None


def test_a_process_without_a_cyclone_configuration_gets_no_explanation():
    assert explain_cyclone_refusal({}, "Subject name is invalid", 1) == ""
    assert explain_cyclone_refusal({"OTHER": "x"}, "certificate revoked", 1) == ""
