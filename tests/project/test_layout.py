"""The package's plan holds: one stage per package, faces that list what crosses them, no
private name crossing a module, and the one-way order import-linter enforces."""

from __future__ import annotations

import ast
import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "govkit"
STAGES = {"common", "catalog", "pki", "documents", "check", "smime", "wire", "runners",
          "generate", "results", "bench", "report", "cli"}


def _imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.startswith("govkit."):
            yield node.module, [a.name for a in node.names]


def _stage(module: str) -> str:
    return module.split(".")[1]


def test_the_top_level_is_the_stages():
    entries = {p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"}
    assert entries == STAGES | {"__init__.py", "__main__.py"}
    assert len(entries) <= 16
    for stage in STAGES:
        doc = importlib.import_module(f"govkit.{stage}").__doc__ or ""
        assert "May import:" in doc, f"govkit.{stage} does not say what it may import"


def test_every_name_crossing_a_package_is_in_its_face():
    missing = []
    for path in PACKAGE.rglob("*.py"):
        me = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        if path.parent == PACKAGE:
            continue   # govkit/__init__.py and __main__.py sit above the stages
        for module, names in _imports(path):
            stage = _stage(module)
            if stage == _stage(me) or module == f"govkit.{stage}":
                continue
            face = importlib.import_module(f"govkit.{stage}")
            for name in names:
                if importlib.util.find_spec(f"{module}.{name}") if (ROOT / Path(
                        *module.split("."))).is_dir() else False:
                    continue   # a submodule
                if name not in face.__all__:
                    missing.append(f"{me} imports {module}.{name}, not in govkit.{stage}.__all__")
                else:
                    assert getattr(face, name) is getattr(importlib.import_module(module), name)
    assert missing == []


def test_no_private_name_crosses_a_module():
    crossing = [f"{path.relative_to(ROOT)}: {module}.{name}"
                for base in ("govkit", "tests", "benchmarks")
                for path in (ROOT / base).rglob("*.py")
                for module, names in _imports(path)
                for name in names if name.startswith("_") and not name.startswith("__")]
    assert crossing == []


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
