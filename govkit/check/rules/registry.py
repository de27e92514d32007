"""The lint rule registry: every rule is data (id, name, severity, document kinds, why it
matters, an example) plus one small function, registered with :func:`rule`. Adding a rule
is writing one decorated function in one of this package's rule modules (``common``,
``governance``, ``permissions``, ``subjects``, ``targets``, ``ros``); `govkit lint --rules`,
`--select`/`--ignore` and the generated rule reference (docs/) all come from here.

A rule function takes a :class:`Context` and yields :class:`Hit` s (an element and a
sentence); the lint stage turns them into findings with the element's FILE:LINE:COL.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from govkit.catalog.targets import VENDOR_TARGETS, Target
from govkit.check.vocabulary import SEVERITIES
from govkit.common.findings import DocumentKind
from govkit.documents.parse import ParsedDocument
from govkit.pki.vocabulary import DEFAULT_WARN_DAYS

Severity = Literal[SEVERITIES]
# Comparisons of rules with each other (pattern inclusions, domain set operations) one
# document may cost before the structural rules stop; real documents need a few hundred,
# a hostile one of 50,000 nodes could ask for billions. Reaching it is reported (GK003).
WORK_BUDGET = 200_000
SEVERITY_RANK = {s: rank for rank, s in enumerate(reversed(SEVERITIES))}   # info 0 .. error 2
GOV, PERM = DocumentKind.GOVERNANCE, DocumentKind.PERMISSIONS
BOTH = (GOV, PERM)
POLICY, PROTECTION = DocumentKind.POLICY, DocumentKind.PROTECTION


@dataclass(frozen=True)
class Hit:
    """What a rule found: the element concerned, one sentence (no final period), and
    optionally a severity other than the rule's (e.g. per target)."""
    elem: Any
    message: str
    severity: Severity | None = None


@dataclass
class Context:
    """Everything a rule may look at. `model` is built on first use (it loads xmlschema),
    so `validate`, which runs only the tree-reading rules, never pays for it."""
    doc: ParsedDocument
    kind: DocumentKind
    target: Target
    now: dt.datetime
    warn_days: int = DEFAULT_WARN_DAYS
    identities: list | None = None    # govkit.pki.names.Identity list from --ca, or None
    ca_label: str = ""
    valid: bool = True                # schema-valid for the target
    budget: int = field(default_factory=lambda: WORK_BUDGET)
    exhausted: bool = False
    # POLICY and PROTECTION: the checked policy and protection (govkit.check.ros_policy's
    # RosInput; `doc` then places elements of every file they were read from)
    ros: object | None = None

    def spend(self, cost: int) -> bool:
        """Charge `cost` comparisons; False (and `exhausted`) once the budget is spent:
        the caller stops looking, and lint says so once (GK003)."""
        self.budget -= max(1, cost)
        if self.budget < 0:
            self.exhausted = True
        return not self.exhausted

    @cached_property
    def model(self):
        from govkit.documents.model import build_model
        return build_model(self.doc.root, self.kind)

    @property
    def portable(self) -> bool:
        """True under --target omg: report what any known implementation does differently."""
        return self.target.name == "omg"

    def refusing(self, refuses: Callable[[Target], bool]) -> list[Target]:
        """The implementations that refuse: under omg every vendor for which `refuses`
        holds, under a vendor target that vendor (if it holds)."""
        if self.portable:
            return [t for t in VENDOR_TARGETS if refuses(t)]
        return [self.target] if refuses(self.target) else []

    def line(self, elem) -> int:
        return self.doc.locate(elem)[0]


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    severity: Severity
    kinds: tuple[DocumentKind, ...]
    why: str
    example: str
    check: Callable[[Context], Iterable[Hit]] | None = None  # None: the schema step reports it
    structural: bool = False   # compares rules with each other: needs a schema-valid document
    needs_ca: bool = False     # needs --ca identity certificates
    validate: bool = False     # `govkit validate` and `sign` run it too (same id, same target)
    note: str = ""             # how the severity changes with --target, for --rules

    def to_json(self) -> dict:
        return {"id": self.id, "name": self.name, "severity": self.severity,
                "kinds": [k.value for k in self.kinds], "why": self.why,
                "example": self.example, "needs_ca": self.needs_ca,
                "needs_valid_document": self.structural, "validate": self.validate,
                "note": self.note}


RULES: dict[str, Rule] = {}


def declare(id: str, name: str, severity: Severity, kinds, why: str, example: str,
            check=None, **flags) -> Rule:
    if id in RULES or any(r.name == name for r in RULES.values()):
        raise ValueError(f"rule {id} {name} registered twice")
    RULES[id] = Rule(id, name, severity, tuple(kinds), why, example, check, **flags)
    return RULES[id]


def rule(id: str, name: str, severity: Severity, kinds, why: str, example: str, **flags):
    """Register the decorated function as the check of a new rule."""
    def register(fn: Callable[[Context], Iterable[Hit]]):
        declare(id, name, severity, kinds, why, example, check=fn, **flags)
        return fn
    return register


def vendor_names(targets: list[Target]) -> str:
    names = [t.short for t in targets]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)
