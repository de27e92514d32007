"""Every package's "May import:" line says what the import-linter layers contract allows it
(pyproject.toml's [tool.importlinter]), no more and no less (issue 45: wire's said
"govkit.common, govkit.catalog" while it imported govkit.documents, as the layers let it)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from helpers.docs_reference import load_reference

ROOT = Path(__file__).resolve().parents[2]
LAYERS = load_reference().stage_layers(ROOT)          # lowest first


def allowed(stage: str) -> set[str]:
    """The stages `stage` may import: every stage of a lower layer."""
    row = next(i for i, layer in enumerate(LAYERS) if stage in layer)
    return {s for layer in LAYERS[:row] for s in layer}


def said(stage: str, line: str) -> set[str]:
    """The stages a "May import:" line names: "nothing in govkit", "every stage" (the top
    one), "every stage up to govkit.A and govkit.B" (their layers and every lower one), or
    a list of govkit.X."""
    text = line.removeprefix("May import:").strip()
    if text.startswith("nothing in govkit"):
        return set()
    named = re.findall(r"govkit\.(\w+)", text)
    if text.startswith("every stage up to"):
        top = max(next(i for i, layer in enumerate(LAYERS) if s in layer) for s in named)
        return {s for layer in LAYERS[:top + 1] for s in layer} - {stage}
    if text.startswith("every stage"):
        return {s for layer in LAYERS for s in layer} - {stage}
    return set(named)


def may_import_line(stage: str) -> str:
    doc = ast.get_docstring(ast.parse((ROOT / "govkit" / stage / "__init__.py").read_text()))
    lines = " ".join(doc.split("\n\n")[-1].split()) if doc else ""
    assert lines.startswith("May import:"), (stage, lines)
    return lines


def test_every_may_import_line_is_the_layers_contract():
    wrong = {}
    for stage in (s for layer in LAYERS for s in layer):
        named, allows = said(stage, may_import_line(stage)), allowed(stage)
        if named != allows:
            wrong[stage] = {"says but may not": sorted(named - allows),
                            "may but does not say": sorted(allows - named)}
    assert wrong == {}


def test_the_check_sees_a_stale_line():
    assert said("wire", "May import: govkit.common, govkit.catalog.") != allowed("wire")
    assert said("report", "May import: every stage up to govkit.bench.") == allowed("report")
    assert said("common", "May import: nothing in govkit.") == allowed("common") == set()
