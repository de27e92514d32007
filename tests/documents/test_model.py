"""govkit.documents.model: one xs:dateTime reader for validate (GK200) and the model.

Before, validate read instants with a hand regex and the model with xmlschema's
todelta(); they disagreed on years before 1 CE (the hand reader counted a year 0 that
XSD 1.0 does not have, and its civil-day formula, carried over from C, was a day off for
negative years before March), xmlschema dropped digits below the microsecond, and its
todelta() raised OverflowError on a valid year 3000000, which crashed lint, identify and
explain. Where they disagreed, xmlschema (XSD 1.0) was right; the one reader left agrees
with it to the microsecond and is exact below it.
"""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from govkit.catalog.runners import runner_info
from govkit.common.findings import DocumentKind
from govkit.documents import model
from govkit.documents.model import Instant, datetime_key
from govkit.documents.render import PermissionsDocument
from govkit.pki.issuance import init_pki

NOT_BEFORE = "dds/permissions/grant/validity/not_before"


@pytest.mark.parametrize("text", [
    "2026-01-01T00:00:00Z", "2026-01-01T24:00:00Z", "2024-02-29T00:00:00.5-05:00",
    "9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+01:00", "12026-06-30T12:00:00",
    "-0001-12-31T00:00:00", "-0100-03-01T00:00:00Z"])
def test_the_reader_agrees_with_xmlschema_to_the_microsecond(text):
    import xmlschema  # noqa: F401 - the reference
    xsd_type = model.schema_type(DocumentKind.PERMISSIONS, NOT_BEFORE)
    reference = xsd_type.text_decode(text, validation="strict").todelta()
    ours = Instant.from_text(text)
    assert ours.since_epoch == reference
    assert ours.has_timezone == (text.endswith("Z") or text[-6] in "+-")


def test_the_reader_is_exact_below_the_microsecond():
    assert datetime_key("2025-12-31T23:59:59.9999999Z") == 1767225600 - Fraction(1, 10**7)
    assert datetime_key("1970-01-01T00:00:00+01:00") == -3600


def test_a_year_beyond_timedelta_is_read_not_crashed_on(tmp_path):
    pki, _ = init_pki(tmp_path / "pki")
    xml = PermissionsDocument.for_participant(pki, "pub", runner_info("ddsperf")).render()
    start = xml.index(b"<not_after>") + len(b"<not_after>")
    end = xml.index(b"</not_after>")
    far = tmp_path / "permissions.xml"
    far.write_bytes(xml[:start] + b"3000000-01-01T00:00:00Z" + xml[end:])
    assert Instant.from_text("3000000-01-01T00:00:00Z").since_epoch > Instant.from_text(
        "9999-12-31T23:59:59Z").since_epoch
    govkit = str(Path(sys.executable).parent / "govkit")
    for command in (["lint"], ["explain"], ["identify"]):
        done = subprocess.run([govkit, *command, str(far)], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode in (0, 1), (command, done.stderr)
        assert "Traceback" not in done.stderr
