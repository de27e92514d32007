"""govkit's XInclude reader (sros2 policies): every included file read as any input is
(regular files only, sizes capped, no DTD, no network), positions kept per file, and what
it does not read refused with one finding at the include, never guessed at."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from govkit.common.findings import DocumentError
from govkit.documents.xinclude import MAX_INCLUDE_DEPTH, load_merged

XI = 'xmlns:xi="http://www.w3.org/2001/XInclude"'


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _problem(path: Path) -> str:
    with pytest.raises(DocumentError) as e:
        load_merged(path)
    (finding,) = e.value.findings
    return str(finding)


def test_both_namespaces_and_positions_per_file(tmp_path):
    _write(tmp_path / "inc.xml", '<profile xmlns:xi="http://www.w3.org/2003/XInclude">\n'
                                 '  <topics publish="ALLOW"><topic>a</topic></topics>\n'
                                 '</profile>\n')
    main = _write(tmp_path / "main.xml", f'<policy {XI}>\n  <profile>\n'
                                         f'    <xi:include href="inc.xml" '
                                         f'xpointer="xpointer(/profile/*)"/>\n'
                                         f'  </profile>\n</policy>\n')
    doc = load_merged(main)
    (topics,) = doc.root.iter("topics")
    assert doc.position(topics) == (str(tmp_path / "inc.xml"), 2, 3)
    assert doc.position(doc.root.find("profile")) == (str(main), 2, 3)
    assert not list(doc.root.iter("{http://www.w3.org/2001/XInclude}include"))


@pytest.mark.parametrize(("include", "said"), [
    ('href="http://example.com/x.xml"', "is a URL; govkit includes local files only"),
    ('href="x.xml" parse="text"', "parse='text' is not read here"),
    ('href="x.xml" xpointer="element(/1)"', "is not read here; use xpointer(/name/.../*)"),
    ('xpointer="xpointer(/a)"', "no href"),
    ('href="missing.xml"', "missing.xml: cannot read"),
])
def test_what_it_does_not_read_is_one_finding_at_the_include(tmp_path, include, said):
    _write(tmp_path / "x.xml", "<profile/>")
    main = _write(tmp_path / "main.xml", f"<policy {XI}>\n  <xi:include {include}/>\n</policy>")
    found = _problem(main)
    assert found.startswith(f"{main}:2:3: xi:include: ") and said in found, found


def test_a_fifo_is_refused_without_being_opened_for_reading(tmp_path):
    os.mkfifo(tmp_path / "pipe.xml")
    main = _write(tmp_path / "main.xml", f'<policy {XI}><xi:include href="pipe.xml"/></policy>')
    assert "is a named pipe (FIFO)" in _problem(main)


def test_a_loop_and_a_deep_chain_are_refused(tmp_path):
    _write(tmp_path / "a.xml", f'<policy {XI}><x><xi:include href="b.xml"/></x></policy>')
    _write(tmp_path / "b.xml", f'<policy {XI}><y><xi:include href="a.xml"/></y></policy>')
    assert "includes itself" in _problem(tmp_path / "a.xml")
    for n in range(MAX_INCLUDE_DEPTH + 2):
        _write(tmp_path / f"d{n}.xml", f'<p {XI}><q><xi:include href="d{n + 1}.xml"/></q></p>')
    _write(tmp_path / f"d{MAX_INCLUDE_DEPTH + 2}.xml", "<p/>")
    assert "levels of includes" in _problem(tmp_path / "d0.xml")


def test_many_includes_of_one_file_cannot_multiply_the_work(tmp_path):
    """Each level includes the next ten times: 10^6 copies, refused long before."""
    _write(tmp_path / "l6.xml", "<p><a/></p>")
    for level in range(5, -1, -1):
        body = "".join(f'<xi:include href="l{level + 1}.xml" xpointer="xpointer(/p/*)"/>'
                       for _ in range(10))
        _write(tmp_path / f"l{level}.xml", f"<p {XI}><q>{body}</q></p>")
    assert "more than 256 files" in _problem(tmp_path / "l0.xml")


def test_a_dtd_in_an_included_file_is_refused(tmp_path):
    _write(tmp_path / "x.xml", '<!DOCTYPE p [<!ENTITY e "boom">]><p>&e;</p>')
    main = _write(tmp_path / "main.xml", f'<policy {XI}><xi:include href="x.xml"/></policy>')
    assert "DTD/DOCTYPE is not allowed" in _problem(main)
