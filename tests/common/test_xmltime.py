"""One xs:dateTime writer (issue 45): govkit/common/xmltime.py; the documents, generate and
the PKI write their times through it."""

import datetime as dt
from pathlib import Path

from govkit.common.xmltime import XML_DATETIME_FORMAT, xml_datetime

GOVKIT = Path(__file__).resolve().parents[2] / "govkit"


def test_utc_whole_seconds_and_z():
    plus_two = dt.timezone(dt.timedelta(hours=2))
    assert xml_datetime(dt.datetime(2026, 12, 7, 20, 30, 5, 999, tzinfo=plus_two)) == \
        "2026-12-07T18:30:05Z"


def test_no_other_writer_in_the_stages_that_write_documents():
    writers = [str(p.relative_to(GOVKIT)) for stage in ("documents", "generate", "pki", "smime")
               for p in sorted((GOVKIT / stage).rglob("*.py"))
               if XML_DATETIME_FORMAT in p.read_text() or 'M:%SZ"' in p.read_text()]
    assert writers == []
