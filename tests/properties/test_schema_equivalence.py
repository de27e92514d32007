"""govkit's own XSDs accept exactly what the OMG DDS Security 1.1 XSDs accept.

Compared with lxml (libxml2) on both sides over:
* every document of the reference corpus (signed ones: the XML inside the S/MIME wrapper);
* every well-formed document under tests/data/schema/;
* deterministic mutants of the schema-valid corpus documents;
* the documents govkit itself generates (tests/_documents.py).

The reference material lives outside the repository: ``../shared/reference`` next to the
checkout, or wherever the GOVKIT_SHARED environment variable points (its ``reference``
subdirectory).
"""

from __future__ import annotations

import copy
import csv
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from helpers.documents import render_all
from helpers.require import missing, shared_dir
from lxml import etree

from govkit.check import validate
from govkit.check.validate import signed_document, validate_bytes
from govkit.common.findings import DocumentError, DocumentKind
from govkit.common.paths import SCHEMAS_DIR
from govkit.documents import mime

HERE = Path(__file__).resolve().parent.parent   # tests/
FIXTURES = HERE / "data" / "schema"
SKIP_REASON = missing("shared", "../shared/reference not found: the reference corpus is only "
                               "available in the project's CI/dev workspace")
REFERENCE = shared_dir() / "reference"
CORPUS = REFERENCE / "corpus"
OMG_XSD = REFERENCE / "xsd" / "omg-1.1"
HAVE_REFERENCE = (CORPUS / "INDEX.tsv").is_file() and OMG_XSD.is_dir()
needs_reference = pytest.mark.skipif(not HAVE_REFERENCE, reason=SKIP_REASON)

KINDS = (DocumentKind.GOVERNANCE, DocumentKind.PERMISSIONS)


def _parser() -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                           huge_tree=False)


_SCHEMAS: dict = {}


def schemas() -> dict[str, dict[DocumentKind, etree.XMLSchema]]:
    if not _SCHEMAS:
        def load(path: Path) -> etree.XMLSchema:
            return etree.XMLSchema(etree.parse(str(path), _parser()))

        _SCHEMAS["omg"] = {
            DocumentKind.GOVERNANCE: load(OMG_XSD / "omg_shared_ca_governance.xsd"),
            DocumentKind.PERMISSIONS: load(OMG_XSD / "omg_shared_ca_permissions.xsd"),
        }
        _SCHEMAS["govkit"] = {
            DocumentKind.GOVERNANCE: load(SCHEMAS_DIR / "governance.xsd"),
            DocumentKind.PERMISSIONS: load(SCHEMAS_DIR / "permissions.xsd"),
        }
    return _SCHEMAS


def verdicts(tree, kind: DocumentKind) -> tuple[bool, bool]:
    s = schemas()
    return s["omg"][kind].validate(tree), s["govkit"][kind].validate(tree)


def parse_or_none(data: bytes):
    try:
        return etree.fromstring(data, _parser()).getroottree()
    except etree.XMLSyntaxError:
        return None


def kinds_of(tree) -> tuple[DocumentKind, ...]:
    try:
        return (validate.document_kind(tree.getroot()),)
    except DocumentError:
        return KINDS  # undetectable: the two schemas must agree under both kinds


def schema_findings(data: bytes, name: str, kind: DocumentKind) -> list:
    return [f for f in validate_bytes(data, name, kind) if not re.match(r"GK\d{3} ", f.message)]


# --------------------------------------------------------------------------- corpus


def corpus_rows() -> list[dict]:
    if not HAVE_REFERENCE:
        return []
    with open(CORPUS / "INDEX.tsv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def unwrap(data: bytes) -> bytes | None:
    """The XML an S/MIME file carries (as OpenSSL extracts it); None for plain XML."""
    return signed_document(data, "x.p7s").data if mime.looks_like_mime(data) else None


def corpus_xml(row: dict) -> bytes:
    data = (CORPUS / row["file"]).read_bytes()
    unwrapped = unwrap(data)
    assert (unwrapped is not None) == (row["signed"] == "y"), row["file"]
    return unwrapped if unwrapped is not None else data


_ROWS = corpus_rows()


@needs_reference
def test_reference_corpus_is_complete():
    assert len(_ROWS) == 80
    assert Counter(r["valid_omg_1_1"] for r in _ROWS) == {"yes": 52, "no": 28}


@needs_reference
@pytest.mark.parametrize("row", _ROWS, ids=[r["file"] for r in _ROWS])
def test_corpus_document(row):
    kind = DocumentKind(row["kind"])
    xml = corpus_xml(row)
    expected_valid = row["valid_omg_1_1"] == "yes"
    tree = parse_or_none(xml)
    raw = (CORPUS / row["file"]).read_bytes()
    findings = schema_findings(raw, row["file"], kind)
    if tree is None:  # not well-formed: invalid for both
        assert not expected_valid
        assert findings and findings[0].message.startswith("not well-formed XML")
        return
    omg, ours = verdicts(tree, kind)
    assert omg == ours, f"{row['file']}: OMG says {omg}, govkit schema says {ours}"
    assert omg == expected_valid, "lxml disagrees with INDEX.tsv (xmlschema)"
    # The whole validation stage agrees, and its positions point into the original file.
    assert (not findings) == omg, findings
    lines = raw.decode("utf-8", "replace").split("\n")
    for f in findings:
        assert 1 <= f.line <= len(lines) and f.column >= 1
        assert lines[f.line - 1][f.column - 1] == "<", (str(f), lines[f.line - 1])


# --------------------------------------------------------------------------- fixtures


def _fixture_tree(path: Path):
    data = path.read_bytes()
    return parse_or_none(unwrap(data) or data)


def _schema_checkable(path: Path) -> bool:
    """Well-formed and without a DTD: hostile fixtures never reach a schema."""
    tree = _fixture_tree(path)
    return tree is not None and tree.docinfo.internalDTD is None and not tree.docinfo.doctype


def fixture_documents(checkable: bool = True) -> list[Path]:
    return sorted(p for p in FIXTURES.iterdir()
                  if p.is_file() and _schema_checkable(p) is checkable)


def test_hostile_fixtures_are_refused_before_any_schema():
    """The fixtures no schema sees (a DTD, not well-formed) are exactly the hostile ones,
    and govkit refuses each with a finding, so the comparison below leaves nothing out."""
    hostile = fixture_documents(checkable=False)
    assert [p.name for p in hostile] == ["billion_laughs.xml", "xxe_file.xml", "xxe_http.xml",
                                         "xxe_parameter_entity.xml"]
    for path in hostile:
        assert validate_bytes(path.read_bytes(), path.name), path.name


@needs_reference
@pytest.mark.parametrize("path", fixture_documents(), ids=lambda p: p.name)
def test_fixture_document(path):
    tree = _fixture_tree(path)
    for kind in kinds_of(tree):
        omg, ours = verdicts(tree, kind)
        assert omg == ours, f"{path.name} as {kind.value}: OMG {omg}, govkit {ours}"


# --------------------------------------------------------------------------- mutants

PROTECTION = ["ENCRYPT_WITH_ORIGIN_AUTHENTICATION", "SIGN_WITH_ORIGIN_AUTHENTICATION",
              "ENCRYPT", "SIGN", "NONE"]
ENUM_VARIANTS = PROTECTION + [
    "ENCRYPT_WITH_ORIGINAL_AUTHENTICATION", "ENCRYPT_WITH_", "encrypt", "Sign", "NONE ",
    " NONE", "\n  NONE\n", "", "ALLOW", "DENY", "allow", "Deny", "DENY ", "NONE,SIGN",
]
BOOLEAN_VARIANTS = ["true", "false", "1", "0", "TRUE", "FALSE", "True", " true ", "\n false\n",
                    "yes", "2", "", "01", "-0", "t"]
NUMBER_VARIANTS = ["0", "230", "231", "-1", "+5", " 7 ", "007", "1.0", "1e3", "x", "",
                   "99999999999999999999999999", "-0"]
DATETIME_VARIANTS = [
    "2020-01-01T00:00:00", "2020-01-01T00:00:00Z", "2020-01-01T00:00:00+05:30",
    "2035-06-27T03:13:14.908199+00:00", "2020-01-01", "2020-01-01 00:00:00",
    "2020-13-01T00:00:00", "2020-02-30T00:00:00", "2020-01-01T24:00:00",
    "2020-01-01T25:00:00", "20200101T000000Z", "2020-01-01T00:00:00+15:00",
    "-0001-01-01T00:00:00", "12020-01-01T00:00:00", " 2020-01-01T00:00:00 ", "",
    "2020-01-01T00:00:00.Z",
]
UNKNOWN_ELEMENTS = ["ufo", "enable_key_revision", "tag", "validity", "domain_id", "topics",
                    "id", "publish", "default", "DDS", "enable_key_protection"]
RENAMES = {"id": "domain_id", "allow_unauthenticated_participants": "allow_unauthenticated_join",
           "topic_expression": "topic_expressions", "default": "Default", "topics": "topic",
           "publish": "Publish", "not_before": "notBefore", "grant": "Grant",
           "data_protection_kind": "payload_protection_kind"}
ENUM_ELEMENTS = {"discovery_protection_kind", "liveliness_protection_kind", "rtps_protection_kind",
                 "metadata_protection_kind", "data_protection_kind", "default"}
BOOLEAN_ELEMENTS = {"allow_unauthenticated_participants", "enable_join_access_control",
                    "enable_discovery_protection", "enable_liveliness_protection",
                    "enable_read_access_control", "enable_write_access_control"}
NUMBER_ELEMENTS = {"id", "min", "max"}
DATETIME_ELEMENTS = {"not_before", "not_after"}


def _elements(root) -> list:
    return [e for e in root.iter() if isinstance(e.tag, str)]


def _pick(rng: random.Random, items: list):
    return rng.choice(items) if items else None


def m_drop(rng, root):
    e = _pick(rng, _elements(root)[1:])
    if e is not None:
        e.getparent().remove(e)
        return f"drop {e.tag}"


def m_swap(rng, root):
    pairs = [(a, b) for a in _elements(root) for b in [a.getnext()]
             if b is not None and isinstance(b.tag, str)]
    if pairs:
        a, b = rng.choice(pairs)
        parent = a.getparent()
        i = parent.index(a)
        parent.remove(b)
        parent.insert(i, b)
        return f"swap {a.tag}<->{b.tag}"


def _set_text(rng, root, names: set, variants: list, label: str):
    e = _pick(rng, [x for x in _elements(root) if x.tag in names and len(x) == 0])
    if e is not None:
        e.text = rng.choice(variants)
        return f"{label} {e.tag}={e.text!r}"


def m_enum(rng, root):
    return _set_text(rng, root, ENUM_ELEMENTS, ENUM_VARIANTS, "enum")


def m_boolean(rng, root):
    return _set_text(rng, root, BOOLEAN_ELEMENTS, BOOLEAN_VARIANTS, "bool")


def m_number(rng, root):
    return _set_text(rng, root, NUMBER_ELEMENTS, NUMBER_VARIANTS, "number")


def m_datetime(rng, root):
    return _set_text(rng, root, DATETIME_ELEMENTS, DATETIME_VARIANTS, "datetime")


def m_insert_unknown(rng, root):
    parent = _pick(rng, [e for e in _elements(root) if len(e)])
    if parent is not None:
        new = etree.Element(rng.choice(UNKNOWN_ELEMENTS))
        new.text = rng.choice(["", "true", "0", "x"])
        parent.insert(rng.randrange(len(parent) + 1), new)
        return f"insert {new.tag} into {parent.tag}"


def m_empty_text(rng, root):
    e = _pick(rng, [x for x in _elements(root) if len(x) == 0])
    if e is not None:
        e.text = rng.choice(["", None, "   "])
        return f"empty {e.tag}"


def m_remove_attribute(rng, root):
    e = _pick(rng, [x for x in _elements(root) if x.attrib])
    if e is not None:
        name = rng.choice(sorted(e.attrib))
        del e.attrib[name]
        return f"remove @{name} from {e.tag}"


def m_add_attribute(rng, root):
    e = _pick(rng, _elements(root))
    name, value = rng.choice([
        ("must_interpret", "false"), ("name", "x"), ("id", "1"),
        ("{http://www.w3.org/2001/XMLSchema-instance}nil", "true"),
        ("{http://www.w3.org/2001/XMLSchema-instance}noNamespaceSchemaLocation", "x.xsd"),
        ("{urn:vendor}ext", "1")])
    e.set(name, value)
    return f"add @{name} to {e.tag}"


def m_duplicate(rng, root):
    e = _pick(rng, _elements(root)[1:])
    if e is not None:
        e.addnext(copy.deepcopy(e))
        return f"duplicate {e.tag}"


def m_move_last(rng, root):
    e = _pick(rng, [x for x in _elements(root)[1:] if x.getnext() is not None])
    if e is not None:
        e.getparent().append(e)
        return f"move {e.tag} last"


def m_rename(rng, root):
    e = _pick(rng, [x for x in _elements(root) if x.tag in RENAMES])
    if e is not None:
        old, e.tag = e.tag, RENAMES[e.tag]
        return f"rename {old}->{e.tag}"


def m_add_text(rng, root):
    e = _pick(rng, [x for x in _elements(root) if len(x)])
    if e is not None:
        e.text = rng.choice(["junk", "\n  ", "0"])
        return f"text in {e.tag}"


def m_nest(rng, root):
    e = _pick(rng, [x for x in _elements(root) if len(x) == 0])
    if e is not None:
        etree.SubElement(e, rng.choice(["x", e.tag]))
        return f"nest into {e.tag}"


def m_shuffle_children(rng, root):
    e = _pick(rng, [x for x in _elements(root) if len(x) >= 2])
    if e is not None:
        kids = list(e)
        rng.shuffle(kids)
        for k in kids:
            e.append(k)
        return f"shuffle {e.tag}"


def m_comment(rng, root):
    e = _pick(rng, _elements(root))
    e.insert(rng.randrange(len(e) + 1),
             rng.choice([etree.Comment(" note "), etree.ProcessingInstruction("pi", "x")]))
    return f"comment in {e.tag}"


def m_namespace(rng, root):
    new = etree.Element("{urn:omg:dds}" + root.tag, nsmap={None: "urn:omg:dds"})
    new[:] = list(root)
    return new, "namespace root"


def m_copy_from_other_rule(rng, root):
    """Move a publish/subscribe/relay/allow_rule/deny_rule/topic_rule to another place."""
    movable = [x for x in _elements(root) if x.tag in (
        "publish", "subscribe", "relay", "allow_rule", "deny_rule", "topic_rule", "partitions",
        "data_tags", "id_range", "value", "name")]
    e = _pick(rng, movable)
    if e is not None:
        siblings = list(e.getparent())
        e.getparent().insert(rng.randrange(len(siblings)), copy.deepcopy(e))
        return f"copy {e.tag} within {e.getparent().tag}"


MUTATORS = [m_drop, m_swap, m_enum, m_boolean, m_number, m_datetime, m_insert_unknown,
            m_empty_text, m_remove_attribute, m_add_attribute, m_duplicate, m_move_last,
            m_rename, m_add_text, m_nest, m_shuffle_children, m_comment, m_namespace,
            m_copy_from_other_rule]
MUTANTS_PER_OPERATOR = 2  # per valid corpus document


def mutants() -> list[tuple[str, DocumentKind, bytes]]:
    """Deterministic mutants of every schema-valid corpus document."""
    out = []
    for row in _ROWS:
        if row["valid_omg_1_1"] != "yes":
            continue
        kind = DocumentKind(row["kind"])
        base = etree.fromstring(corpus_xml(row), _parser())
        rng = random.Random(f"govkit-mutants:{row['file']}")
        for mutate in MUTATORS:
            for n in range(MUTANTS_PER_OPERATOR):
                root = copy.deepcopy(base)
                result = mutate(rng, root)
                if result is None:
                    continue
                if isinstance(result, tuple):
                    root, result = result
                data = etree.tostring(root, xml_declaration=True, encoding="UTF-8")
                out.append((f"{row['file']}#{mutate.__name__}.{n}: {result}", kind, data))
    return out


@needs_reference
def test_mutants_agree():
    all_mutants = mutants()
    assert len(all_mutants) >= 300
    disagreements, outcome = [], Counter()
    for name, kind, data in all_mutants:
        tree = etree.fromstring(data, _parser()).getroottree()
        omg, ours = verdicts(tree, kind)
        outcome[omg] += 1
        if omg != ours:
            disagreements.append(f"{name}: OMG {omg}, govkit {ours}")
    assert not disagreements, "\n".join(disagreements)
    # The mutants must exercise both verdicts substantially.
    assert outcome[True] >= 50 and outcome[False] >= 300, outcome


@needs_reference
def test_mutants_through_the_validation_stage():
    """validate_bytes agrees with the OMG verdict and points every finding at a start tag."""
    for name, kind, data in mutants()[::3]:
        tree = etree.fromstring(data, _parser()).getroottree()
        omg, _ = verdicts(tree, kind)
        findings = schema_findings(data, name, kind)
        assert (not findings) == omg, (name, findings)
        lines = data.decode("utf-8").split("\n")
        for f in findings:
            assert lines[f.line - 1][f.column - 1] == "<", (name, str(f))
            assert not f.message.startswith("Element '"), (name, f.message)


# --------------------------------------------------------------------------- generated


@needs_reference
def test_generated_documents_agree():
    generated = render_all()
    assert generated
    for name, data in generated:
        xml = unwrap(data) or data
        tree = parse_or_none(xml)
        assert tree is not None, f"{name} is not well-formed"
        for kind in kinds_of(tree):
            omg, ours = verdicts(tree, kind)
            assert omg == ours, f"{name} as {kind.value}: OMG {omg}, govkit {ours}"
