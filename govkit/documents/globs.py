"""Topic and partition expressions: fnmatch patterns (`*`, `?`, `[...]`, `[!...]`), the
syntax DDS Security gives topic_expression, topic and partition. Matching follows Cyclone
DDS's ac_fnmatch (no backslash escapes); an unterminated `[` is a literal character.

`covers(a, b)` answers "does every name that `b` matches also match `a`?", which is what
tells lint that a rule can never apply because an earlier one takes all its names. It is
sound (True only when it holds) and exact for the patterns seen in practice; for exotic
pairs (`??*` against `?*?`) it may say False, and lint then says nothing.

Everything here is dynamic programming over the two patterns, no backtracking regular
expression; the rows are integers used as bit sets, so a pair costs O(len(a) * len(b) / 64)
word operations. Pairs whose product exceeds MAX_WORK (a hostile megabyte
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
    """fnmatch(pattern, name): an NFA over the pattern's tokens with its state set as the bits
    of one integer, so a character costs a few integer operations, not a loop over states
    (O(len(name) * len(pattern) / 64) word operations)."""
    if len(pattern) * max(1, len(name)) > MAX_WORK:
        return False
    toks = tokens(pattern)
    n = len(toks)
    stars = sum(1 << i for i, t in enumerate(toks) if t.kind == "star")
    accepting: dict[str, tuple[int, int]] = {}      # per character: (non-star, star) tokens

    def close(states: int) -> int:
        # a star may match nothing: before it is also after it ('**' is one star, so one
        # step reaches every token a run of stars can skip)
        return states | ((states & stars) << 1)

    states = close(1)
    for c in name:
        masks = accepting.get(c)
        if masks is None:
            single = sum(1 << i for i, t in enumerate(toks)
                         if t.kind != "star" and t.accepts(c))
            masks = accepting[c] = (single, stars)
        states = close(((states & masks[0]) << 1) | (states & masks[1]))
        if not states:
            return False
    return bool(states >> n & 1)


def matches_everything(pattern: str) -> bool:
    return tokens(pattern) == (Token("star"),)


def has_wildcards(pattern: str) -> bool:
    return any(t.kind != "lit" for t in tokens(pattern))


def covers(a: str, b: str) -> bool:
    """True if every name matched by pattern `b` is matched by pattern `a` (sound).

    cov[i][j] (ta[i:] covers tb[j:]) is filled from the ends; each row i is one integer
    whose bit j is cov[i][j], so a row costs a shift and a mask (a star row: every bit up
    to the highest one of the row below), and a pattern pair costs O(len(a)) integer
    operations on len(b)-bit integers instead of len(a) * len(b) Python steps."""
    if a == b:
        return True
    if len(a) * max(1, len(b)) > MAX_WORK:
        return False
    ta, tb = tokens(a), tokens(b)
    if not has_wildcards(b):
        return matches(a, b)
    m = len(tb)
    literal: dict[str, int] = {}        # b's literal positions per character
    for j, t in enumerate(tb):
        if t.kind == "lit":
            literal[t.chars] = literal.get(t.chars, 0) | 1 << j
    masks: dict[Token, int] = {}

    def mask(t: Token) -> int:
        """Bits j where tb[j] is a single-character token that `t` includes."""
        if t.kind == "lit":
            return literal.get(t.chars, 0)
        if t not in masks:
            masks[t] = sum(1 << j for j, u in enumerate(tb) if u.single() and t.includes(u))
        return masks[t]

    row = 1 << m                        # cov[n][m]: both patterns used up
    for t in reversed(ta):
        if t.kind == "star":
            # a's star takes b's next token (whatever it is), or nothing more
            row = (1 << row.bit_length()) - 1 if row else 0
        else:
            row = mask(t) & (row >> 1)
        if not row:
            return False
    return bool(row & 1)


def overlaps(a: str, b: str) -> bool:
    """True if some name matches both patterns `a` and `b` (for lint: may a grant and a
    protection rule meet?). A search over pairs of token positions, O(len(a) * len(b));
    two character classes are taken to share a character (so it errs towards True: lint
    then stays silent). Pairs past MAX_WORK are taken to overlap."""
    if len(a) * max(1, len(b)) > MAX_WORK:
        return True
    ta, tb = tokens(a), tokens(b)

    def shared(x: Token, y: Token) -> bool:
        if x.kind == "lit":
            return y.accepts(x.chars)
        if y.kind == "lit":
            return x.accepts(y.chars)
        return True

    seen, todo = {(0, 0)}, [(0, 0)]
    while todo:
        i, j = todo.pop()
        if i == len(ta) and j == len(tb):
            return True
        steps = []
        if i < len(ta) and ta[i].kind == "star":
            steps.append((i + 1, j))
        if j < len(tb) and tb[j].kind == "star":
            steps.append((i, j + 1))
        if i < len(ta) and j < len(tb) and shared(ta[i], tb[j]):
            steps.append((i if ta[i].kind == "star" else i + 1,
                          j if tb[j].kind == "star" else j + 1))
        for step in steps:
            if step not in seen:
                seen.add(step)
                todo.append(step)
    return False
