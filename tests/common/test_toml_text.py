"""TOML nested past tomllib's recursion (issue 37, item 13): `--profiles`, or a govkit.toml
or pyproject.toml in the working directory nesting 3,000 deep, was a RecursionError (exit 3).
Now one line naming the file, line and column, exit 2, measured before tomllib recurses."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest

from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.toml_text import MAX_TOML_DEPTH, parse_toml, toml_too_deep

DEEP_ARRAY = "x = " + "[" * 3000 + "]" * 3000 + "\n"
DEEP_TABLE = "x = " + "{a = " * 3000 + "}" * 3000 + "\n"


def test_tomllib_alone_recurses_out_of_stack():
    # what the check exists for (if a future tomllib stops recursing, this says so)
    with pytest.raises(RecursionError):
        tomllib.loads(DEEP_ARRAY)


@pytest.mark.parametrize("text", [DEEP_ARRAY, DEEP_TABLE])
def test_deep_nesting_is_one_line_with_its_position(text):
    with pytest.raises(GovkitError) as info:
        parse_toml("# a comment [[[[\n" + text, "f.toml")
    assert info.value.exit_code == EXIT_USAGE
    column = 5 + (5 if "{" in text else 1) * MAX_TOML_DEPTH
    assert str(info.value) == (f"f.toml:2:{column}: nested deeper than {MAX_TOML_DEPTH} levels of "
                               "arrays or inline tables; not read")


def test_brackets_in_strings_and_comments_do_not_count():
    brackets = "[" * 500
    text = (f'a = "{brackets}\\"{brackets}"\n'
            f"b = '{brackets}'\n"
            f'c = """\n{brackets}\n""{brackets}"""\n'
            f"d = '''\n{brackets}\n'''\n"
            f"# {brackets}\n"
            f"[[profile]]\n"
            f"e = {'[' * MAX_TOML_DEPTH}{']' * MAX_TOML_DEPTH}\n")
    assert toml_too_deep(text) is None
    assert parse_toml(text, "f.toml")["a"] == f'{brackets}"{brackets}'
    deeper = text + "f = " + "[" * (MAX_TOML_DEPTH + 1) + "]" * (MAX_TOML_DEPTH + 1) + "\n"
    assert toml_too_deep(deeper) == (text.count("\n") + 1, 5 + MAX_TOML_DEPTH)


def test_unterminated_strings_end_the_scan_and_tomllib_words_the_error():
    for text in ('a = "' + "[" * 3000, "a = '''" + "[" * 3000, 'a = """' + "\\" * 3000):
        assert toml_too_deep(text) is None
        with pytest.raises(tomllib.TOMLDecodeError):
            parse_toml(text, "f.toml")


def _govkit(cwd, *args):
    return subprocess.run([sys.executable, "-m", "govkit", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name, text, args", [
    ("mine.toml", DEEP_ARRAY, ("profiles", "--profiles", "mine.toml")),
    ("govkit.toml", DEEP_TABLE, ("profiles",)),
    ("govkit.toml", DEEP_ARRAY, ("lint", "doc.xml")),
    ("pyproject.toml", "[tool.govkit]\n" + DEEP_TABLE, ("lint", "doc.xml")),
])
def test_every_command_refuses_it_with_exit_2_and_one_line(tmp_path, name, text, args):
    (tmp_path / name).write_text(text)
    (tmp_path / "doc.xml").write_text("<dds/>")
    done = _govkit(tmp_path, *args)
    assert done.returncode == EXIT_USAGE, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert f"{name}:" in done.stderr and "nested deeper than" in done.stderr
