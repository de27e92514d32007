"""`govkit lint` on an sros2 policy (with its sidecar, `--protection`, or the <protection>
in its <metadata>) or on a protection sidecar alone: the policy and protection rules of
the registry (govkit.check.rules.ros), each finding at the file and line its element was
written in, whichever file that is (an included profile, the sidecar).

A policy or sidecar that does not check (govkit.check.ros_policy) gets its problems as
findings (GK001 not well-formed, GK002 anything else) and no rule runs: the rules compare
what the documents govkit would write decide, and there are none.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from govkit.catalog.targets import TARGETS
from govkit.check.rules.registry import RULES, WORK_BUDGET, Context, Rule
from govkit.common.findings import DocumentKind, Finding

if TYPE_CHECKING:
    from govkit.check.ros_policy import RosInput
    from govkit.documents.xinclude import MergedDocument

# ros_policy and xinclude are imported by lint_ros, when there is a policy to lint: every
# `govkit lint` imports this module (start-up, issue 47).

ROS_ROOTS = {"policy": DocumentKind.POLICY, "protection": DocumentKind.PROTECTION}


@dataclass
class RosLint:
    """What lint_ros found: its kind, the findings as (rule, file, line, column, message,
    severity), for govkit.check.lint to turn into its own findings."""
    kind: DocumentKind
    findings: list[tuple[Rule, str, int, int, str, str]]


def _both(ros: RosInput) -> MergedDocument:
    """One locator for the policy's elements and the sidecar's."""
    from govkit.documents.xinclude import MergedDocument
    positions = dict(ros.policy_doc.positions)
    if ros.protection_doc is not None:
        positions.update(ros.protection_doc.positions)
    return MergedDocument(ros.policy_doc.root, ros.policy_doc.filename, positions)


def _problem(f: Finding) -> tuple:
    rule = RULES["GK001" if f.message.startswith("not well-formed") else "GK002"]
    return (rule, f.file, f.line, f.column, f.message.rstrip("."), rule.severity)


def lint_ros(data: bytes, filename: str, kind: DocumentKind, rules: list[Rule],
             target: str, now: dt.datetime | None = None,
             protection: Path | None = None) -> RosLint:
    """Lint one policy (with `protection`, or what its <metadata> holds) or one sidecar."""
    from govkit.check.ros_policy import PolicyInvalid, RosInput, load_policy, load_protection
    try:
        if kind is DocumentKind.POLICY:
            ros = load_policy(Path(filename), protection, data=data)
        else:
            doc, found = load_protection(Path(filename), data)
            ros = RosInput(doc, None, found, doc, filename)
    except PolicyInvalid as e:
        return RosLint(kind, [_problem(f) for f in e.findings])
    doc = _both(ros) if kind is DocumentKind.POLICY else ros.policy_doc
    ctx = Context(doc, kind, TARGETS[target], now or dt.datetime.now(dt.UTC), ros=ros)
    findings = []
    for r in rules:
        if r.check is None or kind not in r.kinds:
            continue
        for hit in r.check(ctx):
            file, line, column = doc.position(hit.elem)
            findings.append((r, file, line, column, hit.message, hit.severity or r.severity))
    if ctx.exhausted and any(r.id == "GK003" for r in rules):
        gk003 = RULES["GK003"]
        findings.append((gk003, filename, 1, 1, f"stopped comparing rules with each other "
                                               f"after {WORK_BUDGET} comparisons; rules that "
                                               f"never apply may be unreported",
                         gk003.severity))
    return RosLint(kind, findings)
