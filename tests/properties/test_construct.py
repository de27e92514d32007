"""Validation by construction (govkit.check.construct) never lets through what the full path
refuses: over thousands of random and hostile participants, every document the fast path
renders is byte for byte what Jinja renders, the full validation accepts it, and its
signed text is what `sign` would sign; and `verify`'s recognizer takes a document for a
proven shape's only when the full validation accepts it."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from govkit.catalog.runners import RUNNERS, runner_info
from govkit.check import construct
from govkit.check.validate import validate_bytes
from govkit.common.errors import GovkitError
from govkit.common.findings import DocumentKind
from govkit.documents import compiled
from govkit.documents.render import DomainSet, PermissionsDocument
from govkit.pki.participants import Grants
from govkit.smime.sign import check_signable

HOSTILE = ["<", ">", "&", '"', "'", "&amp;", "]]>", "<!--", "-->", "--", "-", "<!DOCTYPE x>",
           "\t", "\n", "\r", "\r\n", "\x00", "\x01", "\x7f", "\x85", "\u2028", "\ufeff",
           "\ufffe", "\uffff", "\ud800", "\U0001f600", "é", "ß", "中文", "{", "}", "{0}",
           "%s", "\\", ",", "=", "CN=", " ", "  ", "gk0v1x", "\U0010ffff", "\ue000"]


def _hostile_text(rng: random.Random, longest: int = 40) -> str:
    pieces = []
    for _ in range(rng.randint(0, 6)):
        r = rng.random()
        if r < 0.4:
            pieces.append(rng.choice(HOSTILE))
        elif r < 0.8:
            pieces.append("".join(rng.choice("abcXYZ019_.-") for _ in range(rng.randint(1, 8))))
        elif r < 0.95:
            pieces.append(chr(rng.randint(0x20, 0x2FFFF)))
        else:
            pieces.append("x" * rng.choice((200, 600, 1000, 1001, 1500)))
    return "".join(pieces)[:max(longest, 1500)]


def _datetime(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.7:   # as govkit writes a certificate's validity
        when = dt.datetime(rng.randint(1950, 9999), 1, 1, tzinfo=dt.UTC) + dt.timedelta(
            seconds=rng.randint(0, 364 * 86400))
        return when.strftime("%Y-%m-%dT%H:%M:%SZ")
    return rng.choice(["2030-02-30T00:00:00Z", "2030-13-01T00:00:00Z", "0999-01-01T00:00:00Z",
                       "2030-01-01T24:00:00Z", "2030-01-01T00:00:00", "2030-01-01T00:00:00+01:00",
                       " 2030-01-01T00:00:00Z", "2030-01-01", "", "<", "2030-01-01T00:00:60Z",
                       "2030-01-01T00:00:00.5Z", "-2030-01-01T00:00:00Z"])


def _domains(rng: random.Random) -> DomainSet:
    ranges = []
    for _ in range(rng.randint(1, 3)):
        lo = rng.randint(0, 240)
        ranges.append((lo, lo if rng.random() < 0.4 else rng.randint(lo - 3, 240)))
    return DomainSet(tuple(ranges))


def _participant(rng: random.Random) -> PermissionsDocument:
    plain = rng.random() < 0.5   # like a real fleet: names and values that pass
    name = f"robot-{rng.randint(0, 10**6)}" if plain else _hostile_text(rng)
    subject = (f"CN={name},O=govkit test PKI" if plain else
               rng.choice([f"CN={_hostile_text(rng)}", _hostile_text(rng)]))
    nb, na = _datetime(rng), _datetime(rng)
    if plain and rng.random() < 0.8:
        nb, na = sorted((nb, na))
    grants = None
    if rng.random() < 0.6:
        def names(k: int) -> tuple[str, ...]:
            return tuple(f"T{rng.randint(0, 99)}" if plain else _hostile_text(rng)
                         for _ in range(rng.randint(0, k)))
        grants = Grants(names(4), names(4), names(3))
    scope = runner_info(rng.choice(sorted(RUNNERS)))
    domains = DomainSet() if plain else _domains(rng)
    return PermissionsDocument(name, subject, nb, na, scope, domains, grants)


def _full(doc: PermissionsDocument) -> tuple[bytes | None, bool]:
    """What the full path renders and whether its validation accepts it."""
    try:
        data = doc.render()
    except UnicodeEncodeError:   # a lone surrogate: the full path cannot even write it
        return None, False
    return data, validate_bytes(data, "p.xml") == []


def _check(doc: PermissionsDocument) -> bool:
    fast = construct.render_proven(doc)
    full, valid = _full(doc)
    if fast is None:
        return False
    assert fast == full, doc
    assert valid, doc
    text = check_signable(fast, Path("p.xml"), validated=True)
    assert text == fast.replace(b"\n", b"\r\n")
    structure, values = compiled.values_of(doc)
    shape = compiled.shape(structure)
    parsed = shape.parse(fast)   # what verify reads back: the values the document holds
    assert parsed is not None and shape.render(parsed) == fast
    assert all(parsed[i] == values[i] for i in set(shape.slots))
    return True


def _as_govkit_writes(text: str) -> bool:
    try:
        return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").strftime(
            "%Y-%m-%dT%H:%M:%SZ") == text
    except ValueError:
        return False


def test_fast_path_is_the_full_path_on_thousands_of_random_participants():
    rng = random.Random(22)
    proven = refused_by_full = 0
    for _ in range(2000):
        doc = _participant(rng)
        if _check(doc):
            proven += 1
            continue
        if not _full(doc)[1]:
            refused_by_full += 1
        # what a fleet has (a name, its subject and ordered validity as govkit writes
        # them, plain topics) is never left to the full path
        assert not (doc.participant.startswith("robot-") and doc.not_before < doc.not_after
                    and _as_govkit_writes(doc.not_before)
                    and _as_govkit_writes(doc.not_after)), doc
    # both sides are exercised
    assert proven > 300 and refused_by_full > 300, (proven, refused_by_full)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.text(max_size=80), subject=st.text(max_size=80),
       topics=st.lists(st.text(max_size=20), max_size=4),
       partitions=st.lists(st.text(max_size=20), max_size=3),
       nb=st.datetimes(min_value=dt.datetime(1000, 1, 1), max_value=dt.datetime(9999, 1, 1)),
       days=st.integers(-5, 5))
def test_fast_path_never_passes_what_the_full_path_refuses(name, subject, topics, partitions,
                                                           nb, days):
    na = nb + dt.timedelta(days=days)
    if na.year > 9999:
        return
    fmt = "%Y-%m-%dT%H:%M:%SZ"
    doc = PermissionsDocument(name, subject, nb.strftime(fmt), na.strftime(fmt),
                              runner_info("ddsperf"),
                              DomainSet(), Grants(tuple(topics), (), tuple(partitions)))
    _check(doc)


def test_realistic_fleet_documents_are_all_proven(pki_dir):
    """The fast path is the one taken: every document `generate` writes for the default
    runner and for a participants file's grants."""
    from govkit.pki.testpki import TestPKI
    pki = TestPKI(pki_dir)
    for runner in sorted(RUNNERS):
        doc = PermissionsDocument.for_participant(pki, "pub", runner_info(runner),
                                                  DomainSet.parse("0,3-7,230"))
        assert _check(doc), runner
    grants = Grants(("Temperature", "rt/*"), ("Commands",), ("plant/*", "a?"))
    assert _check(PermissionsDocument.for_participant(pki, "sub", runner_info("ddsperf"),
                                                      grants=grants))


def test_recognizer_accepts_only_what_the_full_validation_accepts():
    rng = random.Random(7)
    scope = runner_info("ddsperf")
    base = PermissionsDocument("robot-1", "CN=robot-1,O=govkit test PKI",
                               "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z", scope)
    recognizer = construct.Recognizer()
    data = construct.render_proven(base)
    recognizer.learn(data)
    assert recognizer.recognize(data) == DocumentKind.PERMISSIONS
    other = construct.render_proven(PermissionsDocument(
        "robot-2", "CN=robot-2,O=Acme", "2026-01-01T00:00:00Z", "2026-06-01T00:00:00Z", scope))
    assert recognizer.recognize(other) == DocumentKind.PERMISSIONS
    recognized = 0
    for _ in range(1500):   # tampered documents: recognized only if valid
        mutant = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(mutant))
            op = rng.random()
            piece = rng.choice(HOSTILE + ["a", "0", "9", "1"]).encode("utf-8", "surrogatepass")
            if op < 0.4:
                mutant[at:at + 1] = piece
            elif op < 0.7:
                mutant[at:at] = piece
            else:
                del mutant[at:at + rng.randint(1, 4)]
        mutant = bytes(mutant)
        if recognizer.recognize(mutant) is not None:
            recognized += 1
            assert validate_bytes(mutant, "p.xml") == [], mutant
    swapped = data.replace(b"2026-01-01T00:00:00Z", b"2028-01-01T00:00:00Z")
    assert recognizer.recognize(swapped) is None   # not_before after not_after
    assert validate_bytes(swapped, "p.xml") != []
    assert recognized > 10   # value edits within the shape are recognized


def test_an_unprovable_document_goes_the_full_path_and_is_refused_there(pki_dir, tmp_path):
    """A value the construction cannot prove (here: a control character) is rendered and
    validated in full by generate's worker, which refuses it with the full path's message."""
    doc = PermissionsDocument("p", "CN=p\x01", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z",
                              runner_info("ddsperf"))
    assert construct.render_proven(doc) is None
    from govkit.generate.fleet import check_generated
    try:
        check_generated(doc.render(), tmp_path / "p.xml")
    except GovkitError as e:
        assert "invalid" in str(e)
    else:
        raise AssertionError("a control character in a subject was accepted")
