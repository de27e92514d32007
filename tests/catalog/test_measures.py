"""The mode words, transports, network paths, ciphers and the discovery group's size have
one home, govkit/catalog/measures.py (issue 45): no other module defines a constant or a
table of them, and bench's --help lists them from there."""

import ast
from pathlib import Path

from typer.testing import CliRunner

from govkit.catalog import measures
from govkit.cli.main import app

GOVKIT = Path(measures.__file__).resolve().parents[1]
MODE_WORDS = {*measures.MODE_CHOICES, *measures.SLOT_MODES}
WORDS = {*MODE_WORDS, *measures.TRANSPORTS, *measures.PATHS, *measures.CIPHERS}


def word_constants(source: str) -> list[str]:
    """The module-level names `source` binds to a mode word, to a tuple, list or set of the
    words, or to the cipher table (a dict keyed by the ciphers). A dict keyed by modes or
    transports is a per-mode or per-transport fact, not a copy (RERUN_KAPPA_PCT)."""
    found = []
    for node in ast.parse(source).body:
        if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
            continue
        value = node.value
        if isinstance(value, ast.Constant):
            copy = value.value in MODE_WORDS
        elif isinstance(value, ast.Tuple | ast.List | ast.Set):
            copy = bool(value.elts) and all(
                isinstance(i, ast.Constant) and i.value in WORDS for i in value.elts)
        elif isinstance(value, ast.Dict):
            copy = {k.value for k in value.keys if isinstance(k, ast.Constant)} == \
                set(measures.CIPHERS)
        else:
            copy = False
        if copy:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [ast.unparse(t) for t in targets]
    return found


def test_no_module_but_measures_defines_them():
    copies = {str(p.relative_to(GOVKIT)): names for p in sorted(GOVKIT.rglob("*.py"))
              if p.name != "measures.py" and (names := word_constants(p.read_text()))}
    assert copies == {}


def test_the_check_sees_a_copy():
    assert word_constants('LATENCY = "latency"\nX = 1\n') == ["LATENCY"]
    assert word_constants('PATHS = ("lo", "netns")\n') == ["PATHS"]
    assert word_constants('CIPHERS = {"aes128": 128, "aes256": 256}\n') == ["CIPHERS"]
    assert word_constants('KEYS = {"latency": "p50"}\nTLS_DIR = "tls"\n') == []


def test_bench_help_reads_them():
    text = " ".join(CliRunner().invoke(app, ["bench", "--help"], terminal_width=10_000)
                    .output.split())
    for word in (*measures.MODE_CHOICES, *measures.TRANSPORTS, *measures.CIPHERS):
        assert word in text
    for name, words in measures.PATH_WORDS.items():
        assert f"{name} ({words}" in text
    assert f"({measures.MIN_PEERS} .. {measures.MAX_PEERS})" in text
