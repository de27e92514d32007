"""`govkit bench --governance FILE`: the governance you deploy, measured like a catalog
profile (same bundle steps, same rotation against `none`, same report).

Each file is validated and linted for the runner's implementation (an error refuses it,
exit 1: that implementation would refuse it too), identified (its nearest catalog profile)
and explained. It becomes a point named after the file, whose profile carries the file
(`Profile.governance_file`: the bundle signs a plain file with the test PKI) and, for the
report, the settings of the rules the runner's topics fall under (`file_settings`), with
a title that says which rule that is, and the nearest profile. Permissions for the
runner's topics are generated as for every profile.

The rule: in the first domain_rule, the first topic_rule whose expression matches each
of the runner's topics, as DDS Security 1.1 9.4.1.2.6 applies them. When none matches,
Cyclone and Fast DDS refuse to create the topic: the point will fail, and govkit says so
before it runs. The point runs on the domain ids that first domain_rule covers
(`Profile.domain_ids`, an open id_range read as the runner's implementation reads it):
a file written for one domain is measured there (govkit.bench.domains); a rule covering
no id govkit can use (0..230) is refused (exit 2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from govkit.catalog.profiles import (
    Profile,
    domain_ids_text,
    known_profiles,
    select_profiles,
    use_profiles,
)
from govkit.catalog.runners import runner_info
from govkit.catalog.targets import TARGETS
from govkit.check.explain import explain_document, explanation_text
from govkit.check.identify import identification_text, identify_paths
from govkit.check.lint import LintOptions, lint_paths
from govkit.check.loaded import load_document
from govkit.common.errors import EXIT_INVALID, EXIT_USAGE, GovkitError
from govkit.common.findings import quote_value
from govkit.common.limits import MAX_DOMAIN_ID
from govkit.documents.globs import matches

_TARGETS = {"cyclone": "cyclone", "ddsperf": "cyclone", "fastdds": "fastdds"}
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass
class GovernancePoint:
    profile: Profile
    said: list[str]          # what the terminal says about it before the run
    covered: bool            # a topic_rule covers every one of the runner's topics


def _text(v) -> str:
    return v.shown()


def point_name(path: Path) -> str:
    """The point's name: the file's name without .xml/.p7s, made a safe file name."""
    stem = path.name.removesuffix(".p7s").removesuffix(".xml")
    return _UNSAFE.sub("_", stem).lstrip(".-")[:63] or "governance"


def _rule_for(model, topics: tuple[str, ...]):
    """(domain_rule, topic_rule or None per topic) for the first domain_rule."""
    if not model.rules:
        return None, [None] * len(topics)
    d = model.rules[0]
    found = []
    for topic in topics:
        found.append(next((t for t in d.topic_rules if isinstance(t.expression.value, str)
                           and matches(t.expression.value, topic)), None))
    return d, found


def rule_domains(d, target: str) -> tuple[int, ...]:
    """The ids 0..MAX_DOMAIN_ID a domain_rule covers, an open id_range as `target` reads it
    (Cyclone DDS 0.10 and Fast DDS 2.9: its <min> alone; the spec: <min> and up)."""
    ids: set[int] = set()
    for span in d.domains:
        bounds = span.bounds(TARGETS[target].open_range)
        if bounds is not None and bounds[0] <= MAX_DOMAIN_ID:
            ids.update(range(max(0, bounds[0]), int(min(bounds[1], MAX_DOMAIN_ID)) + 1))
    return tuple(sorted(ids))


def governance_point(path: Path, runner: str, taken: set[str]) -> GovernancePoint:
    """One file's point (module docstring); GovkitError exit 1 for a file the runner's
    implementation would refuse, exit 2 for an unreadable one or a taken name."""
    target = _TARGETS.get(runner, "omg")
    (report,) = lint_paths([path], LintOptions(target=target))
    if report.error:
        raise GovkitError(report.error, EXIT_USAGE)
    errors = [f for f in report.findings if f.severity == "error"]
    if errors:
        raise GovkitError("\n".join([f"{path}: refused for --governance: invalid for "
                                     f"{target} (govkit lint --target {target}):",
                                     *map(str, errors)]), EXIT_INVALID)
    loaded = load_document(path)
    if loaded.kind.value != "governance":
        raise GovkitError(f"{path}: a {loaded.kind.value} document, not a governance",
                          EXIT_USAGE)
    (ident,) = identify_paths([path])
    name = point_name(path)
    if name in taken:
        raise GovkitError(f"{path}: its point would be named {name}, which is already a "
                          f"profile or another --governance file's; rename the file",
                          EXIT_USAGE)
    topics = runner_info(runner).topics
    d, rules = _rule_for(loaded.model, topics)
    line = lambda elem: loaded.where(elem)[0]  # noqa: E731
    said = [identification_text(ident), *(str(f) for f in report.findings)]
    covered = d is not None and all(r is not None for r in rules)
    first = next((r for r in rules if r is not None), None)
    if d is None:
        rule_text = "it has no domain_rule: NO rule covers the runner's topics"
    elif not covered:
        missing = [t for t, r in zip(topics, rules, strict=True) if r is None]
        rule_text = (f"NO topic_rule of its first domain_rule (line {line(d.elem)}) covers "
                     f"the runner's topic(s) {', '.join(missing)}: implementations refuse "
                     f"to create them, so this point will fail")
    else:
        used = sorted({(line(r.elem), r.expression.value) for r in rules})
        rule_text = ("the runner's topics fall under " + ", ".join(
            f"topic_rule {quote_value(expr)} (line {n})" for n, expr in used))
        if any(expr == "*" for _, expr in used) and len(d.topic_rules) > 1:
            rule_text += (" — the catch-all '*', not a rule written for named topics: your "
                          "own topics may get another rule")
    domain_ids = None
    if d is not None:
        domain_ids = rule_domains(d, target)
        if not domain_ids:
            row, col = loaded.where(d.elem)
            raise GovkitError(f"{path}:{row}:{col}: its first domain_rule covers no domain id "
                              f"0..{MAX_DOMAIN_ID}, the ids govkit's runners join; add one "
                              "(e.g. <id>0</id>), then `govkit sign`", EXIT_USAGE)
        if len(domain_ids) <= MAX_DOMAIN_ID:
            rule_text += f"; measured on domain {domain_ids_text(domain_ids)}, as it allows"
    said.append(f"{path}: {rule_text}")
    said.append(explanation_text(explain_document(loaded)))
    # the nearest profile of the rule the runner's topics fall under (identify names one
    # per (domain_rule, topic_rule) pair when there are several)
    match = ident.match or next((m for m in ident.rules if first is not None
                                 and m.topic_expression == first.expression.value),
                                ident.rules[0] if ident.rules else None)
    nearest = match.nearest.name if match else "none"
    how = "exact" if match and match.exact else "nearest"
    settings = {}
    if d is not None:
        settings = {"allow_unauthenticated_participants": _text(d.allow_unauthenticated),
                    "enable_join_access_control": _text(d.join_ac),
                    "discovery_protection_kind": _text(d.discovery_kind),
                    "liveliness_protection_kind": _text(d.liveliness_kind),
                    "rtps_protection_kind": _text(d.rtps_kind)}
    if first is not None:
        settings.update({"topic_expression": _text(first.expression),
                         "enable_discovery_protection": _text(first.discovery),
                         "enable_liveliness_protection": _text(first.liveliness),
                         "enable_read_access_control": _text(first.read_ac),
                         "enable_write_access_control": _text(first.write_ac),
                         "metadata_protection_kind": _text(first.metadata),
                         "data_protection_kind": _text(first.data)})
    title = f"{path.name}: {how} profile {nearest}; {rule_text}"
    profile = Profile(name, name, settings.get("allow_unauthenticated_participants"),
                      settings.get("rtps_protection_kind", "NONE"),
                      settings.get("metadata_protection_kind"),
                      settings.get("data_protection_kind"), None, title,
                      governance_file=str(path.resolve()),
                      file_settings=tuple(settings.items()), domain_ids=domain_ids)
    return GovernancePoint(profile, said, covered)


def governance_points(paths: list[Path], runner: str) -> list[GovernancePoint]:
    """Every file's point, in the order given; names unique among all profiles."""
    taken = {k for p in known_profiles() for k in (p.name, p.alias)}
    points = []
    for path in paths:
        point = governance_point(Path(path), runner, taken)
        taken.add(point.profile.name)
        points.append(point)
    return points


def bench_profiles(names: list[str] | None, all_profiles: bool, own: list[Profile],
                   governance: list[Path], runner: str
                   ) -> tuple[list[Profile], list[GovernancePoint]]:
    """What `bench` measures: --profile/--all-profiles (a profiles file's `own` among
    them), then one point per --governance file; all of them known by name from here on
    (use_profiles), as the results' CSV names and the report look them up."""
    chosen = select_profiles(names, all_profiles) if names or all_profiles or \
        not governance else []
    points = governance_points(governance, runner)
    use_profiles([*own, *(p.profile for p in points)])
    return [*chosen, *(p.profile for p in points)], points
