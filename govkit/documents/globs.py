"""Topic and partition expressions: fnmatch patterns (`*`, `?`, `[...]`, `[!...]`), the
syntax DDS Security gives topic_expression, topic and partition. Matching follows Cyclone
DDS's ac_fnmatch (no backslash escapes); an unterminated `[` is a literal character.

`covers(a, b)` answers "does every name that `b` matches also match `a`?", which is what
tells lint that a rule can never apply because an earlier one takes all its names. It is
sound (True only when it holds) and exact for the patterns seen in practice; for exotic
pairs (`??*` against `?*?`) it may say False, and lint then says nothing.

Everything here is dynamic programming over the two patterns: time O(len(a) * len(b)), no
backtracking regular expression. Pairs whose product exceeds MAX_WORK (a hostile megabyte
of pattern) are not decided: `matches` and `covers` say False, so callers, which only
report what they are sure of, stay silent.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

MAX_WORK = 1_000_000


@dataclass(frozen=True)
class Token:
    kind: str                   # "lit", "any" (?), "star" (*), "class" ([...])
    chars: str = ""             # the literal, or the class body as written
    negated: bool = False
    ranges: tuple[tuple[str, str], ...] = ()

    def single(self) -> bool:
        return self.kind != "star"

    def accepts(self, c: str) -> bool:
        if self.kind == "lit":
            return c == self.chars
        if self.kind in ("any", "star"):
            return True
        inside = any(lo <= c <= hi for lo, hi in self.ranges)
        return inside != self.negated

    def includes(self, other: Token) -> bool:
        """Every character `other` accepts, this token accepts too (sound)."""
        if self.kind == "any":
            return True
        if other.kind == "lit":
            return self.accepts(other.chars)
        if self.kind == "class" and other.kind == "class":
            if (self.chars, self.negated) == (other.chars, other.negated):
                return True
            if not self.negated and not other.negated:
                return all(any(a <= lo and hi <= b for a, b in self.ranges)
                           for lo, hi in other.ranges)
        return False


def _class(pattern: str, start: int) -> tuple[Token, int] | None:
    """The class starting after '[' at `start`, and the index after its ']'."""
    i, negated = start, False
    if i < len(pattern) and pattern[i] == "!":
        negated, i = True, i + 1
    ranges, first = [], True
    while i < len(pattern):
        c = pattern[i]
        if c == "]" and not first:
            body = pattern[start:i]
            return Token("class", body, negated, tuple(ranges)), i + 1
        if i + 2 < len(pattern) and pattern[i + 1] == "-" and pattern[i + 2] != "]":
            ranges.append((c, pattern[i + 2]))
            i += 3
        else:
            ranges.append((c, c))
            i += 1
        first = False
    return None


@lru_cache(maxsize=4096)
def tokens(pattern: str) -> tuple[Token, ...]:
    out: list[Token] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            if not out or out[-1].kind != "star":   # '**' is '*'
                out.append(Token("star"))
            i += 1
        elif c == "?":
            out.append(Token("any"))
            i += 1
        elif c == "[" and (parsed := _class(pattern, i + 1)) is not None:
            out.append(parsed[0])
            i = parsed[1]
        else:
            out.append(Token("lit", c))
            i += 1
    return tuple(out)


def matches(pattern: str, name: str) -> bool:
    """fnmatch(pattern, name), in O(len(pattern) * len(name))."""
    if len(pattern) * max(1, len(name)) > MAX_WORK:
        return False
    toks = tokens(pattern)
    # states: the set of token positions reachable after the characters read so far
    states = _close(toks, {0})
    for c in name:
        states = _close(toks, {i + (toks[i].kind != "star") for i in states
                               if i < len(toks) and toks[i].accepts(c)})
        if not states:
            return False
    return len(toks) in states


def _close(toks: tuple[Token, ...], states: set[int]) -> set[int]:
    # a star may match nothing: being before it means being after it as well
    out, todo = set(states), list(states)
    while todo:
        i = todo.pop()
        if i < len(toks) and toks[i].kind == "star" and i + 1 not in out:
            out.add(i + 1)
            todo.append(i + 1)
    return out


def matches_everything(pattern: str) -> bool:
    return tokens(pattern) == (Token("star"),)


def has_wildcards(pattern: str) -> bool:
    return any(t.kind != "lit" for t in tokens(pattern))


def covers(a: str, b: str) -> bool:
    """True if every name matched by pattern `b` is matched by pattern `a` (sound)."""
    if a == b:
        return True
    if len(a) * max(1, len(b)) > MAX_WORK:
        return False
    ta, tb = tokens(a), tokens(b)
    if not has_wildcards(b):
        return matches(a, b)
    n, m = len(ta), len(tb)
    # cov[i][j]: ta[i:] covers tb[j:], filled from the ends
    cov = [[False] * (m + 1) for _ in range(n + 1)]
    cov[n][m] = True
    for i in range(n - 1, -1, -1):
        for j in range(m, -1, -1):
            if ta[i].kind == "star":
                # a's star takes b's next token (whatever it is), or nothing more
                cov[i][j] = cov[i + 1][j] or (j < m and cov[i][j + 1])
            else:
                cov[i][j] = (j < m and tb[j].single() and ta[i].includes(tb[j])
                             and cov[i + 1][j + 1])
    return cov[0][0]
