"""The package's plan holds: one stage per package, each `__init__` saying its job, what it
may import and one line for every module it holds; no cycle and no import back up; no
private name crossing a module, imported or reached as an attribute; and the one-way
order import-linter enforces.

The stages, their order and the import graph are read as docs/_ext/govkit_reference.py
reads them for the layout page, so the page and these checks speak of the same graph."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.docs_reference import load_reference

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "govkit"
reference = load_reference()
STAGES = {s for layer in reference.stage_layers(ROOT) for s in layer}


def _imported_modules(tree) -> set[str]:
    """The names a file binds to a govkit module (`from govkit.x import module`,
    `import govkit.x.module`)."""
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] == "govkit":
            where = ROOT / Path(*node.module.split("."))
            bound.update(a.asname or a.name for a in node.names
                         if (where / f"{a.name}.py").exists() or (where / a.name).is_dir())
        elif isinstance(node, ast.Import):
            bound.update(a.asname or a.name.split(".")[0] for a in node.names
                         if a.name.split(".")[0] == "govkit")
    return bound


def _private(name) -> bool:
    return isinstance(name, str) and name.startswith("_") and not name.startswith("__")


def _private_crossings(path: Path) -> list[str]:
    """Every private name `path` takes from another module: `from m import _x`, `m._x`,
    `setattr(m, "_x", …)` (monkeypatch's too) and `getattr(m, "_x")`."""
    tree = ast.parse(path.read_text())
    modules = _imported_modules(tree)

    def of_a_module(node) -> bool:
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id in modules

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] == "govkit":
            found += [f"from {node.module} import {a.name}" for a in node.names
                      if _private(a.name)]
        elif isinstance(node, ast.Attribute) and _private(node.attr) and of_a_module(node.value):
            found.append(ast.unparse(node))
        elif isinstance(node, ast.Call) and len(node.args) >= 2 and (
                getattr(node.func, "attr", None) in ("setattr", "getattr")
                or getattr(node.func, "id", None) in ("setattr", "getattr")) \
                and isinstance(node.args[1], ast.Constant) and _private(node.args[1].value) \
                and of_a_module(node.args[0]):
            found.append(ast.unparse(node))
    return found


def test_the_top_level_is_the_stages():
    entries = {p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"}
    assert entries == STAGES | {"__init__.py", "__main__.py"}
    assert len(entries) <= 16
    for stage in STAGES:
        doc = importlib.import_module(f"govkit.{stage}").__doc__ or ""
        assert "May import:" in doc, f"govkit.{stage} does not say what it may import"


def test_every_package_is_its_docstring_with_one_line_per_module():
    """Each `__init__.py` is the package's docstring (runners' get_runner aside), and the
    docstring's module lines name every module and subpackage it holds, and nothing else."""
    for init in sorted(PACKAGE.rglob("__init__.py")):
        if init.parent == PACKAGE:
            continue
        name = ".".join(init.parent.relative_to(ROOT).parts)
        tree = ast.parse(init.read_text())
        code = [n for n in tree.body[1:] if not (name == "govkit.runners" and isinstance(
            n, (ast.Import, ast.ImportFrom, ast.FunctionDef)))]
        assert ast.get_docstring(tree) and not code, f"{name}/__init__.py holds code"
        doc = reference.package_doc(ast.get_docstring(tree, clean=False))
        held = {p.stem for p in init.parent.glob("*.py") if p.name != "__init__.py"}
        held |= {f"{p.name}/" for p in init.parent.iterdir()
                 if p.is_dir() and p.name != "__pycache__"}
        assert set(doc.modules) == held, name
        assert doc.job and doc.may_import and all(doc.modules.values()), name


def test_the_import_graph_has_no_cycle_and_no_import_back_up():
    graph = reference.import_graph(ROOT)
    assert len(graph.modules) > 100 and len(graph.arrows) > 40
    assert ("cli", "bench") in graph.arrows and ("check", "documents") in graph.arrows
    assert graph.back_up == []
    assert graph.cycles(graph.arrows) == []
    assert graph.cycles(graph.imports) == []


def test_the_import_graph_sees_an_import_back_up_and_a_cycle(tmp_path):
    copy = tmp_path / "project"
    shutil.copytree(PACKAGE, copy / "govkit", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "pyproject.toml", copy)
    errors = copy / "govkit" / "common" / "errors.py"   # catalog.profiles imports it
    errors.write_text(errors.read_text() + "\n\ndef late():\n"
                      "    from govkit.catalog.profiles import PROFILES  # noqa\n")
    graph = reference.import_graph(copy)
    assert graph.back_up == [("common", "catalog")]
    assert graph.cycles(graph.arrows) == [["catalog", "common"]]
    assert graph.cycles(graph.imports) == [["govkit.catalog.profiles", "govkit.common.errors"]]


def test_no_private_name_crosses_a_module():
    crossing = [f"{path.relative_to(ROOT)}: {c}" for base in ("govkit", "tests", "benchmarks")
                for path in (ROOT / base).rglob("*.py") for c in _private_crossings(path)]
    assert crossing == []


def test_the_private_name_rule_sees_an_attribute_and_a_monkeypatch(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from govkit.common import staging\nimport govkit.runners.netpath\n"
                     "from govkit.common.staging import _x\n"
                     "staging._y()\nsetattr(staging, '_z', 1)\n"
                     "monkeypatch.setattr(govkit.runners.netpath, '_w', 2)\n"
                     "obj._fine = staging.fine\n")
    assert sorted(_private_crossings(probe)) == [
        "from govkit.common.staging import _x",
        "monkeypatch.setattr(govkit.runners.netpath, '_w', 2)", "setattr(staging, '_z', 1)",
        "staging._y"]


@pytest.mark.skipif(shutil.which("lint-imports", path=str(Path(sys.executable).parent)) is None,
                    reason="import-linter is not installed (pip install -e '.[test]')")
def test_the_layers_contract_fails_when_a_lower_stage_imports_a_higher_one(tmp_path):
    lint = Path(sys.executable).parent / "lint-imports"
    copy = tmp_path / "project"
    shutil.copytree(PACKAGE, copy / "govkit", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "pyproject.toml", copy)
    run = lambda: subprocess.run([lint], cwd=copy, capture_output=True, text=True,  # noqa: E731
                                 env={"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin"})
    kept = run()
    assert kept.returncode == 0, kept.stdout + kept.stderr
    xsd = copy / "govkit" / "check" / "xsd.py"
    xsd.write_text(xsd.read_text() + "\nfrom govkit.bench import schedule  # noqa\n")
    broken = run()
    assert broken.returncode != 0
    assert "govkit.check is not allowed to import govkit.bench" in broken.stdout
