"""TOML a user wrote (govkit.toml, pyproject.toml, a --profiles file), parsed safely.

tomllib parses arrays and inline tables by recursion: `x = [[[[…]]]]` 3,000 deep exhausts
Python's stack (a RecursionError, not a TOMLDecodeError). `parse_toml` first measures how
deep the text nests, in one pass that never backtracks (strings and comments skipped by
`str.find` and anchored matches), and refuses anything deeper than MAX_TOML_DEPTH with one
line naming the file, line and column, before tomllib sees it.
"""

from __future__ import annotations

import re
import tomllib

from govkit.common.errors import EXIT_USAGE, GovkitError

# Arrays and inline tables inside each other. govkit's own tables nest 2 deep; other tools'
# tables in a pyproject.toml rarely 5. tomllib needs about 3 frames a level.
MAX_TOML_DEPTH = 100

_SPECIAL = re.compile(r"""["'#\[\]{}\n]""")
# The rest of a basic string after its opening quote(s): each alternative starts with a
# different character, so a failed match gives up in one pass.
_BASIC_REST = re.compile(r'(?:[^"\\\n]|\\.)*"', re.DOTALL)
_ML_BASIC_REST = re.compile(r'(?:[^"\\]|\\.|"(?!""))*"""', re.DOTALL)


def toml_too_deep(text: str, limit: int = MAX_TOML_DEPTH) -> tuple[int, int] | None:
    """(line, column) of the first bracket or brace that opens level `limit` + 1 outside
    strings and comments; None if the text nests no deeper. Linear in the text."""
    depth, line, line_start, i, n = 0, 1, 0, 0, len(text)
    while i < n:
        m = _SPECIAL.search(text, i)
        if m is None:
            return None
        j, c = m.start(), m.group()
        i = j + 1
        if c == "\n":
            line, line_start = line + 1, i
        elif c == "#":
            i = n if (k := text.find("\n", j)) < 0 else k
        elif c in "[{":
            depth += 1
            if depth > limit:
                return line, j - line_start + 1
        elif c in "]}":
            depth = max(0, depth - 1)
        else:                                   # a string: skip to its end
            triple = text.startswith(c * 3, j)
            if c == "'":
                k = text.find("'''", j + 3) if triple else text.find("'", j + 1)
                end = n if k < 0 else k + (3 if triple else 1)
            else:
                rest = (_ML_BASIC_REST if triple else _BASIC_REST).match(
                    text, j + (3 if triple else 1))
                end = rest.end() if rest else n
            skipped = text.count("\n", j, end)
            if skipped:
                line, line_start = line + skipped, text.rfind("\n", j, end) + 1
            i = end
    return None


def parse_toml(text: str, source: str) -> dict:
    """tomllib.loads(text), refusing nesting deeper than MAX_TOML_DEPTH first (GovkitError,
    exit 2, `source:LINE:COL: …`). tomllib.TOMLDecodeError passes through for the caller to
    word."""
    where = toml_too_deep(text)
    if where is not None:
        raise GovkitError(f"{source}:{where[0]}:{where[1]}: nested deeper than "
                          f"{MAX_TOML_DEPTH} levels of arrays or inline tables; not read",
                          EXIT_USAGE)
    try:
        return tomllib.loads(text)
    except RecursionError:      # a nesting the scan did not see (it should see them all)
        raise GovkitError(f"{source}: nested too deeply to read", EXIT_USAGE) from None
