"""Reading one document for identify, explain and diff: the same steps as `validate`
(read_document's limits, the safe parser, S/MIME as OpenSSL reads it, the XSD) and then the
typed model (govkit.documents.model). A document that breaks the XSD is still read, leniently, and
its schema findings travel with it so each command can say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from govkit.check import validate
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.findings import DocumentKind, Finding
from govkit.documents.model import Model, build_model
from govkit.documents.parse import ParsedDocument


@dataclass
class LoadedDocument:
    file: str
    kind: DocumentKind
    doc: ParsedDocument
    model: Model
    problems: list[Finding]      # schema findings; [] for a schema-valid document

    def where(self, elem) -> tuple[int, int]:
        return self.doc.locate(elem)


def load_document(path: Path) -> LoadedDocument:
    """GovkitError (exit 2) if the file cannot be read, is not well-formed, or is of no
    known kind: there is no document to talk about."""
    check = validate.check_bytes(validate.read_document(path), str(path), lint=False)
    if check.kind is None or check.document is None:
        raise GovkitError("; ".join(str(f) for f in check.findings[:3]), EXIT_USAGE)
    return LoadedDocument(str(path), check.kind, check.document,
                          build_model(check.document.root, check.kind), check.findings)
