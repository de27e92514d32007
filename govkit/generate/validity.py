"""A permissions validity the user chooses, and re-signing permissions with a new one.

`generate --valid-from --valid-for` writes every grant with that validity instead of its
certificate's; `sign --renew --valid-from --valid-for` rewrites the validity of every grant
of permissions documents already there and signs them again. Neither touches a key: the
Permissions CA only signs, and no participant key is involved at all (sros2#186: expiring
permissions are renewed by re-signing, not by re-keying).

Dates are UTC. Without --valid-from a window starts now less the PKI's clock skew (as
certificates do: Fast DDS 2.9 reads these dates as local time, govkit.pki.testpki).
A validity outside the certificate's is allowed (the shorter one decides); `lint --ca`
(GK209) and `pki status` say so.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from govkit.catalog.targets import DEFAULT_TARGET
from govkit.check.validate import validate_bytes
from govkit.common.errors import EXIT_INVALID, EXIT_USAGE, GovkitError
from govkit.common.fsutil import collect_files, write_atomic
from govkit.common.inputs import read_input
from govkit.common.limits import MAX_DOCUMENT_BYTES
from govkit.common.xmltime import xml_datetime
from govkit.pki.testpki import CLOCK_SKEW, LAST_VALID_TIME
from govkit.pki.vocabulary import DEFAULT_GRANT_DAYS
from govkit.smime.sign import sign_document

# <validity> of a grant: its two dates, written by any tool, comments between them kept.
_VALIDITY = re.compile(rb"(<(?:\w+:)?validity\b[^>]*>)(.*?)(</(?:\w+:)?validity\s*>)", re.S)
_DATE = re.compile(rb"(<(?:\w+:)?(not_before|not_after)\b[^>]*>)[^<]*(</(?:\w+:)?\2\s*>)")


def parse_window(valid_from: str | None, valid_for: int | None,
                 now: dt.datetime | None = None) -> tuple[dt.datetime, dt.datetime] | None:
    """(not_before, not_after) from the options, or None when neither is given.
    GovkitError (exit 2) for a date that is not ISO 8601 or a window that cannot be."""
    if valid_from is None and valid_for is None:
        return None
    now = now or dt.datetime.now(dt.UTC)
    if valid_from is None:
        start = now - CLOCK_SKEW
    else:
        try:
            start = dt.datetime.fromisoformat(valid_from)
        except ValueError:
            raise GovkitError(f"--valid-from {valid_from!r}: not a date (YYYY-MM-DD or "
                              f"YYYY-MM-DDThh:mm:ss, UTC unless a zone is given)",
                              EXIT_USAGE) from None
        start = start.replace(tzinfo=dt.UTC) if start.tzinfo is None else start
    days = DEFAULT_GRANT_DAYS if valid_for is None else valid_for
    if days < 1:
        raise GovkitError("--valid-for must be at least 1 (days)", EXIT_USAGE)
    # Any date arithmetic may leave datetime's range (years 1 to 9999): a start in year 1
    # east of UTC, or an end past 9999 (the fallback of an overflow must not add a day to
    # the last representable one either). Each is the same user error, never an OverflowError.
    try:
        start = start.astimezone(dt.UTC)
        end = start + dt.timedelta(days=days)
    except OverflowError:
        end = None
    if end is None or end > LAST_VALID_TIME:
        raise GovkitError(f"--valid-from/--valid-for: the window must lie between "
                          f"{dt.datetime.min.date()} and {LAST_VALID_TIME.date()} (UTC)",
                          EXIT_USAGE)
    return start, end


def with_validity(xml: bytes, window: tuple[dt.datetime, dt.datetime]) -> tuple[bytes, int]:
    """`xml` with every <validity>'s dates replaced; (new bytes, how many validities)."""
    dates = {b"not_before": xml_datetime(window[0]).encode(),
             b"not_after": xml_datetime(window[1]).encode()}

    def dates_in(m: re.Match) -> bytes:
        inner = _DATE.sub(lambda d: d[1] + dates[d[2]] + d[3], m[2])
        return m[1] + inner + m[3]
    return _VALIDITY.subn(dates_in, xml)


def renew_permissions(paths: list[Path], cert_path: Path, key_path: Path,
                      window: tuple[dt.datetime, dt.datetime], target: str = DEFAULT_TARGET
                      ) -> tuple[list[Path], list[GovkitError]]:
    """Every permissions .xml under `paths` with the new validity, validated (as `target`
    reads it: `sign --target`), written back (atomically) and signed again: (signed .p7s
    paths, errors). Governance documents have no validity and are left alone."""
    signed, errors = [], []
    for xml_path in collect_files(paths, ".xml"):
        try:
            data = read_input(xml_path, MAX_DOCUMENT_BYTES, "document")
            new, count = with_validity(data, window)
            if count == 0:
                if b"<permissions" in data:
                    raise GovkitError(f"{xml_path}: a permissions document without a "
                                      f"<validity>; not renewed", EXIT_INVALID)
                continue          # governance: nothing expires in it
            findings = validate_bytes(new, str(xml_path), target=target)
            if findings:
                raise GovkitError(f"{xml_path}: not renewed: {findings[0]}", EXIT_INVALID)
            write_atomic(xml_path, new)
            signed.append(sign_document(xml_path, cert_path, key_path, target=target))
        except GovkitError as e:
            errors.append(e)
    return signed, errors
