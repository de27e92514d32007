"""`govkit identify`: which catalog profile (govkit.catalog.profiles) a governance
document implements.

Every secured catalog profile is one domain_rule with one topic_rule for '*', so a
document of that shape is compared setting by setting with each profile: an exact match,
or the nearest profile and the settings that differ (with their positions). A document
with more rules gets the nearest profile per (domain_rule, topic_rule).

Values are read as implementations read them, and said so: booleans in another letter
case (TRUE) as true/false, and a missing enable_liveliness_protection as false (the
element is new in DDS Security 1.1; the OMG interoperability governance went without it
until 2024). Any other value the XSD refuses (a misspelt enumeration) matches no profile.

A file whose name claims a profile (its name or seed alias, or the perftest governance
file name, with or without signed_) is checked against that claim: a document that does
not implement the profile its name says is reported as mislabelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from govkit.catalog.profiles import SECURED_PROFILES, Profile
from govkit.catalog.targets import VENDOR_TARGETS
from govkit.check.loaded import LoadedDocument, load_document
from govkit.check.rules.registry import vendor_names
from govkit.common.errors import GovkitError
from govkit.common.findings import DocumentKind, one_line, quote_value
from govkit.documents.model import DomainRule, Governance, TopicRule, rule_settings, setting_text

# Read as false when missing (see above); every other missing setting differs.
_DEFAULT_WHEN_MISSING = {"enable_liveliness_protection": "false"}


@dataclass
class Difference:
    setting: str
    document: str | None
    profile: str
    line: int
    column: int
    valid: bool = True        # False: a value the XSD refuses (no implementation loads it)

    def __str__(self) -> str:
        shown = "missing" if self.document is None else self.document
        return f"{self.setting} {shown} (profile: {self.profile}) at {self.line}:{self.column}"

    def to_json(self) -> dict:
        return {"setting": self.setting, "document": self.document, "profile": self.profile,
                "line": self.line, "column": self.column, "valid": self.valid}


@dataclass
class RuleMatch:
    """The nearest profile for one (domain_rule, topic_rule) pair."""
    domain_line: int
    topic_expression: str
    nearest: Profile
    differences: list[Difference]
    notes: list[str]
    topic_line: int = 0
    tied: list[str] = field(default_factory=list)   # as near, differing in as many settings

    @property
    def nearest_text(self) -> str:
        return self.nearest.name + (f" (as near: {', '.join(self.tied)})" if self.tied else "")

    @property
    def exact(self) -> bool:
        return not self.differences

    @property
    def outcome(self) -> str:
        how = "exact" if self.exact else f"{len(self.differences)} setting(s) differ"
        return f"{self.nearest_text} ({how})"


@dataclass
class Identification:
    file: str
    kind: DocumentKind | None
    claimed: Profile | None = None
    match: RuleMatch | None = None            # single-rule documents
    claimed_differences: list[Difference] = field(default_factory=list)
    rules: list[RuleMatch] = field(default_factory=list)   # larger documents
    invalid: int = 0                          # schema findings
    error: str | None = None

    @property
    def profile(self) -> Profile | None:
        return self.match.nearest if self.match and self.match.exact else None

    @property
    def mislabelled(self) -> bool:
        return self.claimed is not None and self.profile != self.claimed

    @property
    def ok(self) -> bool:
        return self.error is None and self.profile is not None and not self.mislabelled

    def to_json(self) -> dict:
        m = self.match
        return {
            "file": self.file, "kind": self.kind.value if self.kind else None,
            "error": self.error, "profile": self.profile.name if self.profile else None,
            "exact": bool(m and m.exact), "nearest": m.nearest.name if m else None,
            "as_near": list(m.tied) if m else [],
            "differences": [d.to_json() for d in m.differences] if m else [],
            "notes": m.notes if m else [], "schema_valid": self.invalid == 0,
            "claimed": self.claimed.name if self.claimed else None,
            "mislabelled": self.mislabelled,
            "claimed_differences": [d.to_json() for d in self.claimed_differences],
            "rules": [{"domain_rule_line": r.domain_line, "topic_rule_line": r.topic_line,
                       "topic_expression": r.topic_expression, "nearest": r.nearest.name,
                       "as_near": list(r.tied),
                       "differences": [d.to_json() for d in r.differences]}
                      for r in self.rules]}


def claimed_profile(filename: str) -> Profile | None:
    """The profile a file name claims, if any (see the module docstring)."""
    name = Path(filename).name
    stem = name.rsplit(".", 1)[0] if "." in name else name
    stem = stem.removeprefix("signed_")
    for p in SECURED_PROFILES:
        perftest = (p.perftest_governance_file or "").removeprefix("signed_").rsplit(".", 1)[0]
        if stem in (p.name, p.alias, perftest):
            return p
    return None


def _compare(loaded: LoadedDocument, d: DomainRule, t: TopicRule, p: Profile
             ) -> tuple[list[Difference], list[str]]:
    diffs, notes, spelled = [], [], []
    for setting, v in rule_settings(d, t).items():
        want = p.governance_settings()[setting]
        have = setting_text(v)
        if have is None and setting in _DEFAULT_WHEN_MISSING:
            have = _DEFAULT_WHEN_MISSING[setting]
            notes.append(f"{setting} is missing (as in DDS Security 1.0): read as {have}")
        elif v.text is not None and not v.valid and v.value is not None:
            spelled.append(v.text.strip())
        if have != want:
            line, col = loaded.where(v.elem if v.elem is not None else t.elem)
            diffs.append(Difference(setting, have, want, line, col,
                                    v.missing or v.valid or v.value is not None))
    if spelled:
        readers = [x for x in VENDOR_TARGETS if all(
            x.accepts_boolean(w) is not None for w in spelled)]
        words = "/".join(dict.fromkeys(spelled))
        notes.insert(0, f"booleans {words} read as true/false (as {vendor_names(readers)} "
                        "read them)")
    return diffs, notes


def _nearest(loaded: LoadedDocument, d: DomainRule, t: TopicRule) -> RuleMatch:
    best = None
    for p in SECURED_PROFILES:   # catalog order breaks ties; the others are named
        diffs, notes = _compare(loaded, d, t, p)
        if best is None or len(diffs) < len(best.differences):
            best = RuleMatch(loaded.where(d.elem)[0], setting_text(t.expression) or "", p,
                             diffs, notes, loaded.where(t.elem)[0])
        elif len(diffs) == len(best.differences) and diffs:
            best.tied.append(p.name)
    return best


def identify_document(loaded: LoadedDocument) -> Identification:
    result = Identification(loaded.file, loaded.kind, claimed_profile(loaded.file),
                            invalid=len(loaded.problems))
    if not isinstance(loaded.model, Governance):
        result.error = "a permissions document: identify names governance profiles"
        return result
    pairs = [(d, t) for d in loaded.model.rules for t in d.topic_rules]
    if len(pairs) == 1:
        result.match = _nearest(loaded, *pairs[0])
        if result.mislabelled and result.match.nearest != result.claimed:
            # say how it differs from what its name claims, too
            result.claimed_differences = _compare(loaded, *pairs[0], result.claimed)[0]
    else:
        result.rules = [_nearest(loaded, d, t) for d, t in pairs]
    return result


def identify_paths(paths: list[Path]) -> list[Identification]:
    out = []
    for path in paths:
        try:
            loaded = load_document(path)
        except GovkitError as e:
            out.append(Identification(str(path), None, claimed_profile(str(path)),
                                      error=str(e)))
            continue
        out.append(identify_document(loaded))
    return out


_PAIRS_SHOWN = 3      # per outcome, in identify's terminal text


def _diff_text(diffs: list[Difference]) -> str:
    return ", ".join(str(d) for d in diffs)


def _invalid_text(r: Identification) -> str:
    return (f"; not valid against the DDS Security 1.1 XSD ({r.invalid} problem(s), see "
            "govkit validate)")


def identification_text(r: Identification) -> str:
    """One paragraph per file, for the terminal."""
    name = one_line(r.file)
    if r.error:   # the reading's own error names the file already (file:line:col: ...)
        return r.error if r.error.startswith(name) else f"{name}: {r.error}"
    if r.match is None:
        invalid = _invalid_text(r) if r.invalid else ""
        lines = [f"{name}: implements no catalog profile{invalid}: the catalog's profiles "
                 f"have one domain_rule with one topic_rule '*', this document has "
                 f"{len(r.rules)} "
                 "(domain_rule, topic_rule) pairs; nearest, and the pairs for which it is:"]
        # one line per outcome, not per pair: a document of 400 rules whose patterns share
        # their first 60 characters read as 400 look-alike lines (--json lists every pair)
        groups: dict[str, list[RuleMatch]] = {}
        for m in r.rules:
            groups.setdefault(m.outcome, []).append(m)
        for outcome, matches in groups.items():
            where = "; ".join(f"lines {m.domain_line}/{m.topic_line} "
                              f"{quote_value(m.topic_expression, 30)}"
                              for m in matches[:_PAIRS_SHOWN])
            more = len(matches) - _PAIRS_SHOWN
            lines.append(f"  {outcome}: {len(matches)} pair(s) (domain_rule/topic_rule "
                         f"line): {where}" + (f"; and {more} more (--json lists each)"
                                              if more > 0 else ""))
        return "\n".join(lines)
    m = r.match
    if m.exact:
        what = f"implements {m.nearest.name} (exact match)"
    else:
        invalid = [d for d in m.differences if not d.valid]
        why = (f": {', '.join(f'{d.setting} {quote_value(d.document)}' for d in invalid)} "
               "is not a valid value, so implementations refuse the document" if invalid else "")
        what = (f"implements no catalog profile{why}; nearest: {m.nearest_text}, differing in "
                f"{_diff_text(m.differences)}")
    if r.mislabelled:
        text = f"{name}: MISLABELLED: its name says {r.claimed.name}, but it {what}"
        if r.claimed_differences:
            text += (f"; against {r.claimed.name} it differs in "
                     f"{_diff_text(r.claimed_differences)}")
    else:
        text = f"{name}: {what}"
        if r.claimed is not None:
            text = text.removesuffix(")") + ", as its name says)" if m.exact else text
    if r.invalid:
        text += _invalid_text(r)
    if m.notes:
        text += "; read as implementations read it: " + "; ".join(m.notes)
    return text

