"""The run context keeps govkit.bench's functions narrow: none takes more than six
parameters (issue 45: twelve took 8 to 13 before one RunContext was handed down whole).
Read from the source with `ast`, as tests/project/test_layout.py reads the imports."""

from __future__ import annotations

import ast
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "govkit" / "bench"
MAX_PARAMETERS = 6


def wide_functions(directory: Path, limit: int = MAX_PARAMETERS) -> list[str]:
    """`file:line name (n)` for every function or lambda, nested ones and methods included,
    with more than `limit` parameters; a method's `self` or `cls` is not counted."""
    found = []
    for path in sorted(directory.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            a = node.args
            named = [*a.posonlyargs, *a.args]
            n = len(named) + len(a.kwonlyargs) + (a.vararg is not None) + \
                (a.kwarg is not None)
            if named and named[0].arg in ("self", "cls"):
                n -= 1
            if n > limit:
                found.append(f"{path.name}:{node.lineno} {getattr(node, 'name', 'lambda')} "
                             f"({n})")
    return found


def test_no_bench_function_takes_more_than_six_parameters():
    assert wide_functions(BENCH) == []


def test_the_count_sees_every_kind_of_parameter(tmp_path):
    (tmp_path / "m.py").write_text(
        "def narrow(ctx, a, b, c, d, e): pass\n"
        "def wide(a, /, b, c=1, *rest, d, e=2, **more): pass\n"
        "class C:\n"
        "    def method(self, a, b, c, d, e, f): pass\n"
        "    def wider(self, a, b, c, d, e, f, g): pass\n"
        "f = lambda a, b, c, d, e, f, g: a\n")
    assert wide_functions(tmp_path) == ["m.py:2 wide (7)", "m.py:5 wider (7)",
                                        "m.py:6 lambda (7)"]
