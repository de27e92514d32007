"""Topic and partition patterns: the bit-set matcher and containment check
(govkit.documents.globs) against plain reference implementations written here the slow,
obvious way (a set of NFA states; the containment table filled cell by cell), and against
brute force over every short name."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from govkit.documents.globs import covers, matches, tokens

FUZZ = settings(max_examples=600, deadline=None, derandomize=True, database=None)
PATTERN = st.text(alphabet="ab*?[]!-", max_size=9)
NAME = st.text(alphabet="ab-]![", max_size=8)


def reference_matches(pattern: str, name: str) -> bool:
    toks = tokens(pattern)

    def close(states):
        out, todo = set(states), list(states)
        while todo:
            i = todo.pop()
            if i < len(toks) and toks[i].kind == "star" and i + 1 not in out:
                out.add(i + 1)
                todo.append(i + 1)
        return out

    states = close({0})
    for c in name:
        states = close({i + (toks[i].kind != "star") for i in states
                        if i < len(toks) and toks[i].accepts(c)})
    return len(toks) in states


def reference_covers(a: str, b: str) -> bool:
    if a == b:
        return True
    ta, tb = tokens(a), tokens(b)
    if all(t.kind == "lit" for t in tb):
        return reference_matches(a, b)
    n, m = len(ta), len(tb)
    cov = [[False] * (m + 1) for _ in range(n + 1)]
    cov[n][m] = True
    for i in range(n - 1, -1, -1):
        for j in range(m, -1, -1):
            if ta[i].kind == "star":
                cov[i][j] = cov[i + 1][j] or (j < m and cov[i][j + 1])
            else:
                cov[i][j] = (j < m and tb[j].single() and ta[i].includes(tb[j])
                             and cov[i + 1][j + 1])
    return cov[0][0]


@FUZZ
@given(PATTERN, NAME)
def test_matches_is_the_reference(pattern, name):
    assert matches(pattern, name) == reference_matches(pattern, name)


@FUZZ
@given(PATTERN, PATTERN)
def test_covers_is_the_reference(a, b):
    assert covers(a, b) == reference_covers(a, b)


NAMES = ["".join(p) for n in range(5) for p in itertools.product("ab-", repeat=n)]


@FUZZ
@given(PATTERN, PATTERN)
def test_covers_is_sound_over_every_short_name(a, b):
    """True only when it holds: no name of up to four characters matches b and not a."""
    if covers(a, b):
        assert not [x for x in NAMES if matches(b, x) and not matches(a, x)]


def test_long_star_patterns_stay_exact():
    """The shapes that took lint a minute (issue 23): many stars, long literals."""
    a = "*a" * 40 + "*"                 # at least 40 a's
    b = "*a" * 60 + "*b7"               # at least 60 a's, then ending in b7
    assert covers(a, b) and reference_covers(a, b)
    assert not covers(b, a) and not reference_covers(b, a)
    assert not covers(a + "c", b) and not reference_covers(a + "c", b)
    assert matches(a, "a" * 45 + "b") and not matches(b, "a" * 45 + "b")
    assert matches(b, "xa" * 60 + "b7") and not matches(b, "xa" * 59 + "b7")
