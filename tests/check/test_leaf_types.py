"""The XSDs' leaf types compiled and cached (govkit.documents.leaf_types): a value read from
the table is what xmlschema reads; lint finds the same with the cached table, with a table
built in the run and with no table at all (every value through xmlschema); and a cache file
that is truncated, edited, forged, oversized, not a regular file or in a directory others
may write to is not used, the table is built again instead."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from govkit.check.lint import LintOptions, lint_paths
from govkit.common import cachefile
from govkit.common.findings import DocumentKind
from govkit.common.paths import user_cache_dir
from govkit.documents import leaf_types as lt
from govkit.documents import model

KINDS = (DocumentKind.GOVERNANCE, DocumentKind.PERMISSIONS)
DATA = Path(__file__).resolve().parent.parent / "data"
DOCUMENTS = sorted([*DATA.glob("lint/*.xml"), *DATA.glob("schema/*.xml"),
                    *DATA.glob("identify/*.xml")])
TRICKY = ["", " ", "true", "false", "1", "0", "TRUE", " true", "true ", "tru", "01", "00",
          "+1", "-0", "-1", "1.0", "1e3", "٣", "1_000", "12345678901234567890123",
          "2030-01-01T00:00:00Z", "2030-01-01T00:00:00", "2030-01-01T00:00:00.123456+01:00",
          "2030-01-01T00:00:00.1234567Z", "2030-02-29T00:00:00Z", "2028-02-29T00:00:00Z",
          "1900-02-29T00:00:00Z", "2000-02-29T00:00:00Z", "0000-01-01T00:00:00Z",
          "2030-13-01T00:00:00Z", "2030-04-31T00:00:00Z", "2030-01-01T24:00:00Z",
          "2030-01-01T23:59:60Z", "2030-01-01T00:00:00+14:00", "2030-01-01T00:00:00+15:00",
          "2030-01-01T00:00:00-13:59", "12030-01-01T00:00:00Z", "-2030-01-01T00:00:00Z",
          " 2030-01-01T00:00:00Z", "ENCRYPT", "encrypt", "ENCRYPT ",
          "SIGN_WITH_ORIGIN_AUTHENTICATION", "ALLOW", "DENY", "deny", "NONE", "*",
          "rt/chatter", "a\tb", "\u00a0true"]


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    """A cache of this test's own; the process's tables read again from it."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    lt.leaf_types.cache_clear()
    yield tmp_path / "cache" / "govkit"
    lt.leaf_types.cache_clear()


def xmlschema_reading(kind, path, text):
    """(value, valid) as the model reads a value through xmlschema."""
    from xmlschema import XMLSchemaValidationError
    xsd_type = model.schema_type(kind, path)
    try:
        value = xsd_type.text_decode(text, validation="strict")
    except (XMLSchemaValidationError, ValueError, ArithmeticError):
        return None
    return (text, True) if xsd_type.is_datetime() else (value, True)


@functools.cache
def leaves() -> list:
    """One path of each kind's XSD for each distinct leaf type (the others read alike)."""
    found = {}
    for kind in KINDS:
        for path, leaf in sorted(lt.build_table(kind).items()):
            found.setdefault((kind, leaf), path)
    return [(kind, path, leaf) for (kind, leaf), path in found.items()]


def test_every_leaf_the_model_reads_is_in_the_table():
    """The table covers the paths the model asks for, and reads them with the fast reader
    (none falls back for a type the table does not know)."""
    table = {kind: lt.build_table(kind) for kind in KINDS}
    assert all(leaf.plain and leaf.base in lt.BASES for t in table.values() for leaf in t.values())
    for path in ("dds/domain_access_rules/domain_rule/domains/id_range/max",
                 "dds/domain_access_rules/domain_rule/topic_access_rules/topic_rule/"
                 "data_protection_kind"):
        assert path in table[DocumentKind.GOVERNANCE]
    assert table[DocumentKind.GOVERNANCE][
        "dds/domain_access_rules/domain_rule/topic_access_rules/topic_rule/"
        "data_protection_kind"].enumeration == {"ENCRYPT", "SIGN", "NONE"}
    assert table[DocumentKind.PERMISSIONS]["dds/permissions/grant/validity/not_after"].base \
        == "dateTime"


@pytest.mark.parametrize("text", TRICKY)
def test_the_table_reads_what_xmlschema_reads(text):
    for kind, path, leaf in leaves():
        read = leaf.read(text)
        if read is not None:   # None: the model asks xmlschema, so nothing to compare
            assert read == xmlschema_reading(kind, path, text), (path, text)


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(
    st.text(max_size=12),
    st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,7})?"
                  r"(Z|[+-][0-9]{2}:[0-9]{2})?", fullmatch=True),
    st.from_regex(r"[0-9+-]{1,20}", fullmatch=True)))
def test_the_table_reads_what_xmlschema_reads_on_any_text(text):
    for kind, path, leaf in leaves():
        read = leaf.read(text)
        if read is not None:
            assert read == xmlschema_reading(kind, path, text), (path, text)


def lint_all() -> list:
    reports = lint_paths(DOCUMENTS, LintOptions())
    return [r.to_json() for r in reports]


def test_lint_finds_the_same_with_and_without_the_cached_table(cache_home, monkeypatch):
    assert len(DOCUMENTS) > 50
    built = lint_all()                          # table built with xmlschema, then cached
    for kind in KINDS:
        assert cache_file(cache_home, kind).stat().st_size > 100
    lt.leaf_types.cache_clear()
    monkeypatch.setattr(lt, "build_table", _no_build)
    cached = lint_all()                         # from the cache: no xmlschema build
    monkeypatch.setattr(model, "leaf_types", lambda kind: None)
    uncached = lint_all()                       # every value through xmlschema
    assert built == cached == uncached
    assert any(f["rule"] == "GK213" for r in built for f in r["findings"])


def _no_build(kind):
    raise AssertionError("the cached table was not used")


def cache_file(cache_home: Path, kind: DocumentKind) -> Path:
    (found,) = (cache_home / lt.CACHE_DIR).glob(f"{kind.value}-*.json")
    return found


def built_again(monkeypatch) -> list:
    """Read the governance table again; the kinds whose table had to be built."""
    built = []
    real = lt.build_table
    monkeypatch.setattr(lt, "build_table", lambda kind: built.append(kind) or real(kind))
    lt.leaf_types.cache_clear()
    table = lt.leaf_types(DocumentKind.GOVERNANCE)
    assert table == real(DocumentKind.GOVERNANCE)
    return built


def test_a_good_cache_is_used(cache_home, monkeypatch):
    lt.leaf_types(DocumentKind.GOVERNANCE)
    assert built_again(monkeypatch) == []


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-20])


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    at = data.index(b"ENCRYPT")
    data[at:at + 7] = b"ENCRYPS"      # a forged enumeration, its digest not updated
    path.write_bytes(bytes(data))


def _forge(path: Path) -> None:
    """A forged table whose digest is right: a type the fast reader does not know."""
    content = path.read_bytes().partition(b"\n")[2]
    doc = json.loads(content)
    doc["types"][next(iter(doc["types"]))] = ["decimal", None, True]
    content = json.dumps(doc).encode()
    path.write_bytes(cachefile.digest(content).encode() + b"\n" + content)


def _other_xsd(path: Path) -> None:
    content = path.read_bytes().partition(b"\n")[2].replace(b'"xsd_sha256": "',
                                                            b'"xsd_sha256": "0')
    path.write_bytes(cachefile.digest(content).encode() + b"\n" + content)


def _huge(path: Path) -> None:
    path.write_bytes(path.read_bytes() + b" " * cachefile.MAX_CACHE_BYTES)


def _symlink(path: Path) -> None:
    real = path.with_name("elsewhere.json")
    path.rename(real)
    path.symlink_to(real)


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _open_directory(path: Path) -> None:
    path.parent.chmod(0o777)


@pytest.mark.parametrize("spoil", [_truncate, _flip, _forge, _other_xsd, _huge, _symlink,
                                   _fifo, _empty, _open_directory])
def test_a_spoilt_cache_is_not_used(cache_home, monkeypatch, spoil):
    lt.leaf_types(DocumentKind.GOVERNANCE)
    path = cache_file(cache_home, DocumentKind.GOVERNANCE)
    spoil(path)
    assert built_again(monkeypatch) == [DocumentKind.GOVERNANCE]


def test_a_cache_that_cannot_be_written_is_no_error(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))   # not a directory
    lt.leaf_types.cache_clear()
    try:
        assert lt.leaf_types(DocumentKind.GOVERNANCE) == lt.build_table(DocumentKind.GOVERNANCE)
    finally:
        lt.leaf_types.cache_clear()


def test_a_changed_xsd_gets_its_own_table(cache_home, monkeypatch, tmp_path):
    lt.leaf_types(DocumentKind.GOVERNANCE)
    xsd = tmp_path / "governance.xsd"
    xsd.write_bytes(lt.xsd_path(DocumentKind.GOVERNANCE).read_bytes().replace(
        b'<xs:enumeration value="SIGN_WITH_ORIGIN_AUTHENTICATION"/>\n', b"", 1))
    monkeypatch.setattr(lt, "xsd_path", lambda kind: xsd)
    lt.leaf_types.cache_clear()
    table = lt.leaf_types(DocumentKind.GOVERNANCE)
    assert table["dds/domain_access_rules/domain_rule/rtps_protection_kind"].enumeration == {
        "ENCRYPT_WITH_ORIGIN_AUTHENTICATION", "ENCRYPT", "SIGN", "NONE"}
    assert len(list((cache_home / lt.CACHE_DIR).glob("governance-*.json"))) == 2


def test_lint_with_a_warm_cache_does_not_load_xmlschema(tmp_path):
    """The point of the table: a valid document linted in a new process never imports
    xmlschema once the cache is warm."""
    doc = DATA / "lint" / "GK213.bad.xml"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    code = ("import sys\nfrom pathlib import Path\n"
            "from govkit.check.lint import LintOptions, lint_paths\n"
            "r = lint_paths([Path(sys.argv[1])], LintOptions())\n"
            "assert r[0].findings, r\n"
            "print('xmlschema' in sys.modules)\n")
    runs = [subprocess.run([sys.executable, "-c", code, str(doc)], env=env, check=True,
                           capture_output=True, text=True).stdout.strip() for _ in range(2)]
    assert runs == ["True", "False"]
    assert user_cache_dir() != tmp_path / "cache" / "govkit"


def test_the_cache_digest_is_sha256():
    """cachefile.digest uses CPython's own SHA-256 (not hashlib's OpenSSL, for start-up):
    the same digest, so caches written either way are read."""
    import hashlib
    for data in (b"", b"abc", bytes(range(256)) * 300):
        assert cachefile.digest(data) == hashlib.sha256(data).hexdigest()
