"""`govkit bench --policy POLICY.xml [--protection FILE]`: one point per protection class of
an sros2 policy, each measured like a catalog profile (the same rotation against `none`,
the same report) and, with --wire, its capture judged against its own rule's kinds.

A class is one (metadata_protection_kind, data_protection_kind) pair: the sidecar's rules
and its default that give the same kinds are one class, named after the first of them
(`sign`, `sign_origin`, `encrypt`, `none`, or the two kinds where metadata=/data= set
them), in file order, the default last.

The governance is the one `generate --policy --protection` writes (the same protection,
rendered by govkit.documents.ros_render.render_governance), with its <domains> 0..230 as
`--domain 0-230` writes them: every process pair runs on a domain of its own, as every
point's do. Its topic_rules, and so every name's kinds, are the user's exactly. It is
written plain to BUILD/policy/ and signed per point by the bundle, as a `--governance`
file is.

Topic names: the runner's ping, pong and data topics are named from the class's first rule,
its DDS names in order (a glob's `*` replaced by govkit_ping, govkit_pong, govkit_data;
the default `*` likewise; a name holding a comma left out: the runner's names are
comma-separated), keeping those whose first matching topic_rule in that
governance is one of this rule's (an earlier rule may take a name: it is then not this
class's), up to three. With fewer, names repeat (cyclone_perf.c's topic_names and
fastdds_perf.cpp's perf_topics keep a repeated name apart). A class whose first rule
leaves no name is said and skipped; a policy with no class left is refused (exit 2).

Permissions: bench permissions, not the enclaves'. The test PKI's pub and sub are granted
exactly the class's names (publish and subscribe, every partition), generated and signed
like every point's (govkit.generate.bundle). Why: a ping-pong needs each side to publish
one name and subscribe the other, and throughput slots a third name; an sros2 grant
rarely allows that (a topic's publishers and subscribers are different enclaves), and
it names no partition, which both programs use. What the point measures is the class's
protection; which enclave may use a name decides nothing of its cost (and is what
`generate --policy` and tests/integration/test_ros2_policy.py prove against both
implementations).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from govkit.catalog.profiles import Profile
from govkit.catalog.runners import runner_info
from govkit.check.ros_policy import RosInput
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.findings import DocumentKind
from govkit.common.fsutil import write_atomic
from govkit.common.limits import MAX_DOMAIN_ID
from govkit.documents.access import topic_rule_for
from govkit.documents.globs import has_wildcards
from govkit.documents.model import build_model
from govkit.documents.parse import parse_xml
from govkit.documents.protection import (
    DOMAIN_DEFAULTS,
    KINDS,
    ORIGIN,
    SROS2_DEFAULT,
    ProtectionRule,
)
from govkit.documents.render import DomainSet
from govkit.documents.ros_render import render_governance
from govkit.generate.fleet import check_generated
from govkit.generate.policy import governance_name

ROLES = ("ping", "pong", "data")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
# Options that take a point off the rotating pairs (onto ddsperf, whose topics are fixed).
PER_REPEAT_OPTIONS = "--transport, --net, --hosts, --loss-rate or --per-repeat-throughput"


@dataclass
class PolicyPoints:
    profiles: list[Profile]
    said: list[str] = field(default_factory=list)       # before the run, on stderr
    skipped: list[str] = field(default_factory=list)    # a class with no usable name


def refuse_runner(runner: str) -> None:
    """Only govkit's own programs can name their topics (GovkitError exit 2)."""
    if not runner_info(runner).rotates:
        raise GovkitError(f"--policy: --runner {runner} cannot name its topics (a class's "
                          f"point runs on names its rule covers); use --runner cyclone (the "
                          f"default) or fastdds", EXIT_USAGE)


def rtps_note(rtps: str, sros2_default: bool) -> str:
    """What a policy run says when its governance protects every RTPS message (issue 46
    item 6: without <domain>, sros2's default governance signs them, and the class named
    `none` read 1.56x with nothing to say why); "" when rtps_protection_kind is NONE."""
    if rtps == "NONE":
        return ""
    whence = ("sros2's default governance, which a protection file without <domain> "
              "keeps" if sros2_default else "the protection file's <domain>")
    return (f"rtps_protection_kind is {rtps} for the whole domain ({whence}): every class, "
            f"the one protecting nothing included, pays it on every RTPS message, so each "
            f"class's ratio over `none` (no security) includes it, and a class's cost alone "
            f"is its ratio over the policy's unprotected class; <domain rtps=\"NONE\"/> "
            f"measures the classes alone")


def class_label(rule: ProtectionRule) -> str:
    kinds = (rule.kinds.metadata, rule.kinds.data)
    metadata, data = KINDS[rule.kind]
    if kinds == (metadata, data):
        return rule.kind
    if kinds == (metadata + ORIGIN, data):
        return f"{rule.kind}_origin"
    return "_".join(kinds).lower()


def _classes(protection) -> list[ProtectionRule]:
    """The first rule of each class, in file order (the default last)."""
    first: dict = {}
    for rule in [*protection.rules, protection.default]:
        first.setdefault(rule.kinds, rule)
    return list(first.values())


def _candidates(rule: ProtectionRule) -> list[str]:
    """Concrete DDS names the rule's expressions stand for, in order; none holding a comma,
    which separates the runner's names in TOPICS_ENV (`rt/a,b` would be two names)."""
    expressions = ["*"] if rule.index == 0 else [d for n in rule.names for d in n.dds]
    found = []
    for expr in expressions:
        if "," in expr:
            continue
        if not has_wildcards(expr):
            found.append(expr)
            continue
        for role in ROLES:
            name = expr.replace("*", f"govkit_{role}")
            if not has_wildcards(name):     # ? and [..] are not made up: left out
                found.append(name)
    return list(dict.fromkeys(found))


def _where(ros: RosInput, elem) -> str:
    if elem is None or ros.protection_doc is None:
        return "sros2's default governance"
    file, line, _ = ros.protection_doc.position(elem)
    return f"{file}:{line}"


def governance_path(ros: RosInput, build: Path) -> Path:
    return Path(build) / "policy" / f"{governance_name(ros.source)}.xml"


def policy_points(ros: RosInput, runner: str, build: Path, write: bool = True
                  ) -> PolicyPoints:
    """Every class's point (module docstring); the governance written to `build`/policy/
    unless `write` is false (--dry-run)."""
    refuse_runner(runner)
    protection = ros.protection or SROS2_DEFAULT
    data = render_governance(protection, DomainSet(((0, MAX_DOMAIN_ID),)), ros.source,
                             ros.protection_source)
    path = governance_path(ros, build)
    check_generated(data, path)
    if write:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data)
    model = build_model(parse_xml(data, str(path)).root, DocumentKind.GOVERNANCE)
    topics = protection.topic_rules()       # in the governance's order, `*` last
    (domain_rule,) = model.rules
    origin_of = dict(zip(map(id, domain_rule.topic_rules), topics, strict=True))
    stem = _UNSAFE.sub("_", governance_name(ros.source))
    out = PolicyPoints([], [f"{ros.source}: {len(_classes(protection))} protection "
                            f"class(es) ({ros.protection_source}); governance {path} "
                            f"(generate --policy's, for domains 0-{MAX_DOMAIN_ID}); bench "
                            f"permissions grant pub and sub each class's names"])
    rtps = domain_rule.rtps_kind.shown()
    domain_wide = rtps_note(rtps, protection.domain == DOMAIN_DEFAULTS)
    if domain_wide:
        out.said.append(f"{ros.source}: {domain_wide}")
    for rule in _classes(protection):
        label = class_label(rule)
        where = _where(ros, rule.elem)
        names, taken = [], []
        for name in _candidates(rule):
            _, t = topic_rule_for(model, name, 1)
            if t is not None and origin_of[id(t)].rule is rule:
                names.append((name, t))
            elif t is not None:
                taken.append(f"{name} by {origin_of[id(t)].rule.label}")
        kinds = f"metadata {rule.kinds.metadata}, data {rule.kinds.data}"
        if not names:
            commas = [d for n in rule.names for d in n.dds if "," in d]
            why = (f"every name it has falls under an earlier rule ({'; '.join(taken[:3])})"
                   if taken else f"its names hold a comma ({commas[0]}), which the runner "
                                 f"cannot take (its topic names are comma-separated)"
                   if commas else "its names are patterns of ? or [..], which govkit does "
                                  "not make names up for")
            out.skipped.append(f"class {label} ({rule.label}, {where}): no DDS name the "
                               f"runner can use: {why}; not measured")
            continue
        names = names[:3]
        chosen = tuple(names[i % len(names)][0] for i in range(3))
        t = names[0][1]
        settings = {"allow_unauthenticated_participants":
                    domain_rule.allow_unauthenticated.shown(),
                    "enable_join_access_control": domain_rule.join_ac.shown(),
                    "discovery_protection_kind": domain_rule.discovery_kind.shown(),
                    "liveliness_protection_kind": domain_rule.liveliness_kind.shown(),
                    "rtps_protection_kind": domain_rule.rtps_kind.shown(),
                    "topic_expression": t.expression.shown(),
                    "enable_discovery_protection": t.discovery.shown(),
                    "enable_liveliness_protection": t.liveliness.shown(),
                    "enable_read_access_control": t.read_ac.shown(),
                    "enable_write_access_control": t.write_ac.shown(),
                    "metadata_protection_kind": t.metadata.shown(),
                    "data_protection_kind": t.data.shown()}
        shared = "; ping and pong share it" if chosen[0] == chosen[1] else ""
        text = (f"class {label}: {rule.label} ({where}), {kinds}; the runner's topics: "
                f"ping {chosen[0]}, pong {chosen[1]}, data {chosen[2]}{shared}"
                + (f"; rtps_protection_kind {rtps} for the whole domain" if domain_wide
                   else ""))
        name = f"{stem}.{label}"[:63]
        out.said.append(f"{name}: {text}")
        out.profiles.append(Profile(
            name, name, settings["allow_unauthenticated_participants"],
            settings["rtps_protection_kind"], settings["metadata_protection_kind"],
            settings["data_protection_kind"], None, f"{Path(ros.source).name}: {text}",
            governance_file=str(path.resolve()), file_settings=tuple(settings.items()),
            topics=chosen))
    if not out.profiles:
        raise GovkitError(f"{ros.source}: no protection class leaves the runner a DDS name "
                          f"to measure ({'; '.join(out.skipped)})", EXIT_USAGE)
    return out
