"""`govkit bench --governance FILE`: a governance the tests have never seen, validated,
linted, identified, explained and measured as a point named after the file."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from helpers.dds import needs_cyclone
from helpers.json_schemas import assert_valid

from govkit.bench.governance_files import governance_point, point_name
from govkit.catalog.profiles import PROFILES
from govkit.common.errors import EXIT_INVALID, EXIT_USAGE, GovkitError

GOVKIT = str(Path(sys.executable).with_name("govkit"))
RULE = """\
        <topic_rule>
          <topic_expression>{expr}</topic_expression>
          <enable_discovery_protection>true</enable_discovery_protection>
          <enable_liveliness_protection>true</enable_liveliness_protection>
          <enable_read_access_control>true</enable_read_access_control>
          <enable_write_access_control>true</enable_write_access_control>
          <metadata_protection_kind>{meta}</metadata_protection_kind>
          <data_protection_kind>ENCRYPT</data_protection_kind>
        </topic_rule>
"""


def _governance(*rules: tuple[str, str], max_domain: int = 230,
                domains: str | None = None) -> str:
    """sros2's default governance, shaped: join access control, discovery and liveliness
    encrypted, RTPS signed; `rules` are (topic_expression, metadata kind)."""
    return f"""\
<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <domain_access_rules>
    <domain_rule>
      <domains>{domains or f"<id_range><min>0</min><max>{max_domain}</max></id_range>"}</domains>
      <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
      <enable_join_access_control>true</enable_join_access_control>
      <discovery_protection_kind>ENCRYPT</discovery_protection_kind>
      <liveliness_protection_kind>ENCRYPT</liveliness_protection_kind>
      <rtps_protection_kind>SIGN</rtps_protection_kind>
      <topic_access_rules>
{"".join(RULE.format(expr=e, meta=m) for e, m in rules)}      </topic_access_rules>
    </domain_rule>
  </domain_access_rules>
</dds>
"""


def test_a_point_says_which_rule_the_runners_topics_fall_under(tmp_path):
    f = tmp_path / "deployed.xml"
    f.write_text(_governance(("rt/*", "ENCRYPT"), ("DDSPerf*", "SIGN"), ("*", "NONE")))
    point = governance_point(f, "cyclone", set())
    p = point.profile
    assert point.covered and p.name == "deployed" and p.security
    assert p.governance_file == str(f.resolve())
    assert "the runner's topics fall under topic_rule 'DDSPerf*' (line 21)" in p.title
    assert p.title.startswith("deployed.xml: nearest profile ")
    settings = p.governance_settings()
    assert settings["topic_expression"] == "DDSPerf*"
    assert settings["metadata_protection_kind"] == "SIGN"
    assert settings["enable_join_access_control"] == "true"
    said = "\n".join(point.said)
    assert "implements no catalog profile" in said and "topic_rule 1 (line 12)" in said


def test_a_catch_all_and_no_rule_at_all_are_said_loudly(tmp_path):
    f = tmp_path / "catch.xml"
    f.write_text(_governance(("rt/*", "ENCRYPT"), ("*", "NONE")))
    assert "the catch-all '*', not a rule written for named topics" in \
        governance_point(f, "cyclone", set()).profile.title
    g = tmp_path / "ros_only.xml"
    g.write_text(_governance(("rt/*", "ENCRYPT")))
    point = governance_point(g, "cyclone", set())
    assert not point.covered
    assert "NO topic_rule of its first domain_rule (line 4) covers the runner's topic(s)" \
        in point.profile.title and "this point will fail" in point.profile.title


def test_what_the_runners_implementation_refuses_is_refused(tmp_path):
    f = tmp_path / "wide.xml"
    f.write_text(_governance(("*", "ENCRYPT"), max_domain=231))
    with pytest.raises(GovkitError) as info:
        governance_point(f, "cyclone", set())
    assert info.value.exit_code == EXIT_INVALID
    assert str(info.value).startswith(f"{f}: refused for --governance: invalid for cyclone")
    x = tmp_path / "x.xml"
    x.write_text(_governance(("*", "NONE")))
    with pytest.raises(GovkitError, match="would be named x, which is already a profile") \
            as taken:
        governance_point(x, "cyclone", {"x"})
    assert taken.value.exit_code == EXIT_USAGE


@pytest.mark.parametrize(("domains", "runner", "ids"), [
    ("<id_range><min>0</min><max>230</max></id_range>", "cyclone", tuple(range(231))),
    ("<id>4</id>", "cyclone", (4,)),
    ("<id>0</id><id_range><min>7</min><max>9</max></id_range>", "fastdds", (0, 7, 8, 9)),
    # an id_range without <max>: its <min> alone to Cyclone 0.10 and Fast DDS 2.9, <min>
    # and up to the specification (RTI Perftest's files are read as the spec reads them)
    ("<id_range><min>228</min></id_range>", "cyclone", (228,)),
    ("<id_range><min>228</min></id_range>", "perftest", (228, 229, 230)),
    ("<id_range><max>2</max></id_range>", "cyclone", (0, 1, 2)),
])
def test_a_point_runs_on_the_domains_its_first_domain_rule_allows(tmp_path, domains, runner,
                                                                  ids):
    f = tmp_path / "one.xml"
    f.write_text(_governance(("*", "ENCRYPT"), domains=domains))
    point = governance_point(f, runner, set())
    assert point.profile.domain_ids == ids
    assert ("measured on domain" in "\n".join(point.said)) == (len(ids) < 231)


def test_a_rule_for_no_domain_govkit_can_join_is_refused_with_its_place(tmp_path):
    f = tmp_path / "high.xml"
    f.write_text(_governance(("*", "ENCRYPT"), domains="<id>231</id>"))
    with pytest.raises(GovkitError) as e:
        governance_point(f, "fastdds", set())
    assert e.value.exit_code == EXIT_USAGE
    assert str(e.value).startswith(f"{f}:4:5: its first domain_rule covers no domain id 0..230")


def test_pairs_take_distinct_domains_a_restricted_arm_first():
    from govkit.bench.domains import distinct_domains, random_domain, usable_domains
    from govkit.bench.rotation import RotationSettings, arms_of, pair_domains

    class Quiet:
        said: list[str] = []

        def print(self, text, **_):
            self.said.append(text)

    none = next(p for p in PROFILES if p.name == "none")
    mine = replace(next(p for p in PROFILES if p.name == "rtps_sign"), name="mine",
                   domain_ids=(0, 4))
    arms = arms_of([none, mine], True, [])
    console = Quiet()
    found = pair_domains(arms, RotationSettings(instances=3), console)
    assert sorted(found["mine"]) == [0, 4]           # two pairs, where the file allows
    assert "mine: its governance allows domain 0,4: 2 process pair(s), not 3" in console.said
    every = [d for ds in found.values() for d in ds]
    assert len(every) == len(set(every)) == 2 + 6 + 3 and 0 not in every[2:]
    assert usable_domains(mine) == [4, 0] and random_domain(mine, avoid=4) == 0
    assert 0 not in distinct_domains(230, set()) and len(distinct_domains(230, set())) == 230
    with pytest.raises(GovkitError, match="231 process pairs need 231 domains"):
        distinct_domains(231, set())


def test_point_names():
    assert point_name(Path("a/my gov.v2.xml")) == "my_gov.v2"
    assert point_name(Path("signed.p7s")) == "signed"
    assert point_name(Path("-.xml")) == "governance"
    assert {p.name for p in PROFILES}.isdisjoint({point_name(Path("x.xml"))})


@needs_cyclone
@pytest.mark.cyclone
def test_bench_measures_an_unseen_governance_beside_none(tmp_path):
    (tmp_path / "G.xml").write_text(_governance(("rt/*", "ENCRYPT"), ("*", "ENCRYPT")))
    r = subprocess.run([GOVKIT, "bench", "--governance", "G.xml", "--profile", "none",
                        "--sizes", "32", "--rounds", "3", "--budget", "1", "--out", "res"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "G.xml: the runner's topics fall under topic_rule '*' (line 21)" in r.stderr
    assert "domain_rule 1 (line 4): domains 0-230" in r.stderr       # what explain says
    assert "signed build/cyclone/governance/G.p7s" in r.stderr + r.stdout
    doc = json.loads((tmp_path / "res/results.json").read_text())
    rows = {x["profile"]: x for x in doc["summary"]}
    assert rows["G"]["vs_none"]["ratio"] > 1.0
    html = (tmp_path / "res/report.html").read_text()
    for said in ("G.xml: nearest profile sign_submsg_encrypt_origin_data_encrypt",
                 "fall under topic_rule &#39;*&#39; (line 21)"):
        assert said in html


@needs_cyclone
@pytest.mark.cyclone
def test_bench_runs_a_one_domain_governance_on_its_domain(tmp_path):
    """sros2's default governance names ROS_DOMAIN_ID alone (OpenDDS's sample: 4): such a
    file passed the checks and the dry run, then failed on a random domain (issue 37)."""
    (tmp_path / "G4.xml").write_text(_governance(("*", "ENCRYPT"), domains="<id>4</id>"))
    args = [GOVKIT, "bench", "--governance", "G4.xml", "--profile", "none", "--sizes", "32",
            "--rounds", "3", "--budget", "1", "--out", "res", "--no-report"]
    dry = subprocess.run([*args, "--dry-run"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, stdin=subprocess.DEVNULL)
    assert dry.returncode == 0 and "# G4: 1 pair(s) of, DOMAIN one of 4" in dry.stdout
    r = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "measured on domain 4, as it allows" in r.stderr
    assert "G4: its governance allows domain 4: 1 process pair(s), not 3" in r.stderr
    doc = json.loads((tmp_path / "res/results.json").read_text())
    pairs = [p for p in doc["rotation"]["pairs"] if p["arm"] == "G4"]
    assert [(p["domain_id"], p["status"]) for p in pairs] == [(4, "ok")]
    assert next(p for p in doc["profiles"] if p["name"] == "G4")["domain_ids"] == "4"
    assert_valid(doc, "bench")
    assert {s["arm"] for s in doc["rotation"]["slots"]} >= {"G4", "none"}
    row = next(x for x in doc["summary"] if x["profile"] == "G4")
    assert row["vs_none"]["ratio"] > 1.0


def test_the_bundle_signs_a_plain_file_and_takes_a_signed_one_that_verifies(tmp_path):
    from govkit.generate.bundle import BundleLog, ensure_bundle, ensure_pki
    from govkit.smime.sign import sign_document
    from govkit.smime.verify import verify_file
    log = BundleLog()
    pki = ensure_pki(tmp_path / "pki", log)
    plain = tmp_path / "mine.xml"
    plain.write_text(_governance(("*", "ENCRYPT")))
    profile = governance_point(plain, "cyclone", set()).profile
    bundle = ensure_bundle(profile, pki, tmp_path / "build", "cyclone", log)
    gov = bundle.participants["pub"].governance
    assert gov == (tmp_path / "build/governance/mine.p7s").resolve()
    assert verify_file(gov, pki.permissions_ca).ok
    assert (tmp_path / "build/governance/mine.xml").read_bytes() == plain.read_bytes()
    # signed with the test PKI: used as it is
    signed = tmp_path / "signed.p7s"
    signed.write_bytes(gov.read_bytes())
    profile = governance_point(signed, "cyclone", set()).profile
    assert ensure_bundle(profile, pki, tmp_path / "build", "cyclone", log) \
        .participants["pub"].governance == signed.resolve()
    # signed by another Permissions CA: refused, the plain XML is what to give
    other = ensure_pki(tmp_path / "other", log)
    sign_document(plain, other.permissions_ca, other.permissions_ca_key)
    foreign = tmp_path / "foreign.p7s"
    (tmp_path / "mine.p7s").rename(foreign)
    profile = governance_point(foreign, "cyclone", set()).profile
    with pytest.raises(GovkitError, match="does not verify against .*give the plain XML") as e:
        ensure_bundle(profile, pki, tmp_path / "build", "cyclone", log)
    assert e.value.exit_code == EXIT_INVALID
