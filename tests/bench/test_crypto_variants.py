"""--cipher and --rekey as bench dimensions: parsing, the arms they make, the paired
difference between two variants (on data of known ratios), what results.json's summary
holds and how the report shows it, and the refusals (one line, exit 2, before anything
starts) where a runtime cannot apply them."""

from __future__ import annotations

import copy
import json
import math
import random
import subprocess
import sys
from pathlib import Path

import lxml.html
import pytest
from helpers.html import interval, num, text

from govkit.bench.options import BenchOptions, parse_ciphers, parse_rekeys
from govkit.bench.rotation import arms_of, round_plan
from govkit.catalog.profiles import get_profile
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.report.run import write_report
from govkit.results import paired, summary
from govkit.runners.crypto import CryptoVariant, variants_of

GOVKIT = str(Path(sys.executable).with_name("govkit"))
ROTATION = Path(__file__).parent.parent / "data" / "report" / "rotation" / "results.json"


def test_ciphers_and_rekeys_parse_like_the_other_dimensions():
    assert parse_ciphers(["aes128,aes256", "aes128"]) == ["aes128", "aes256"]
    assert parse_ciphers(None) == [] and parse_rekeys(None) == []
    assert parse_rekeys(["1,32", "1000"]) == [1, 32, 1000]
    for bad, option in ((["aes512"], parse_ciphers), (["0"], parse_rekeys),
                        (["4x"], parse_rekeys), ([str(2 ** 31)], parse_rekeys)):
        with pytest.raises(GovkitError, match="invalid --"):
            option(bad)
    v = variants_of(["aes128"], [4])
    assert [x.name for x in v] == ["aes128+rekey4"]
    assert v[0].properties() == {"dds.sec.crypto.keysize": "128",
                                 "dds.sec.crypto.maxblockspersession": "4"}
    assert variants_of([], []) == []


def test_every_protecting_profile_gets_an_arm_per_variant_and_none_stays_one():
    profiles = [get_profile(n) for n in ("none", "no_protection", "rtps_encrypt")]
    arms = arms_of(profiles, aa=True, variants=variants_of(["aes128", "aes256"], []))
    assert [(a.name, a.variant.name if a.variant else None) for a in arms] == [
        ("none", None), ("no_protection", None), ("rtps_encrypt@aes128", "aes128"),
        ("rtps_encrypt@aes256", "aes256"), (paired.AA_ARM, None)]
    for _, seq in round_plan(arms, [32], 2, seed=3, rnd=0):
        names = [a.name for a, _ in seq]
        assert names[::2] == ["none"] * 5          # each variant between two none slots
        assert {"rtps_encrypt@aes128", "rtps_encrypt@aes256"} <= set(names[1::2])


def _slots(ratios: dict[str, float], rounds: int, seed: int) -> list[dict]:
    """none A none B none per round, a regime shared within the round, noise per slot."""
    rand = random.Random(seed)
    out = []
    for r in range(rounds):
        regime = rand.choice((10.0, 13.0, 16.0))
        seq = ["none"]
        for arm in ratios:
            seq += [arm, "none"]
        for pos, arm in enumerate(seq):
            out.append({"round": r, "position": pos, "arm": arm, "profile": arm,
                        "instance": r % 2,
                        "size": 32, "status": "ok",
                        "p50": regime * ratios.get(arm, 1.0) * math.exp(rand.gauss(0, 0.02))})
    return out


def test_the_paired_difference_recovers_a_known_ratio_between_two_arms():
    covered = 0
    for seed in range(40):
        pairs = paired.pairings(_slots({"x@aes128": 1.30, "x@aes256": 1.20}, 40, seed))
        d = paired.difference(pairs[("x@aes128", 32)], pairs[("x@aes256", 32)], str(seed))
        assert d.rounds == 40 and abs(d.ratio / (1.30 / 1.20) - 1) < 0.02
        assert d.halfwidth_pct < 3             # regimes of ±25 % cancel within the round
        covered += d.ratio_ci95[0] < 1.30 / 1.20 < d.ratio_ci95[1]
    assert covered >= 33                       # a 95 % interval: about 38 of 40
    # identical arms: the intervals cover no difference about 95 % of the time
    covered = 0
    for seed in range(40):
        same = paired.pairings(_slots({"x@aes128": 1.2, "x@aes256": 1.2}, 30, 100 + seed))
        d0 = paired.difference(same[("x@aes128", 32)], same[("x@aes256", 32)], str(seed))
        covered += d0.ratio_ci95[0] <= 1 <= d0.ratio_ci95[1]
    assert covered >= 33
    # only common rounds count
    assert paired.difference(pairs[("x@aes128", 32)][:5], pairs[("x@aes256", 32)][5:],
                             "t") is None


def variant_doc() -> dict:
    """The real rotating run of tests/data/report/rotation (none, rtps_sign and the A/A arm
    at 32 B), its two non-baseline arms relabelled as rtps_sign's AES-256 and AES-128 arms:
    real slots, each between two none slots of its round."""
    doc = json.loads(ROTATION.read_text())
    doc.pop("summary")
    names = {"rtps_sign": "aes256", paired.AA_ARM: "aes128"}
    for rec in doc["rotation"]["slots"] + doc["rotation"]["pairs"]:
        if rec["arm"] in names:
            v = CryptoVariant(names[rec["arm"]])
            rec.update(arm=f"rtps_sign@{v.name}", profile="rtps_sign", variant=v.to_json())
    doc["settings"]["crypto"] = {"ciphers": ["aes128", "aes256"], "rekeys": [],
                                 "defaults": "Fast DDS 2.9: AES-256 unless --cipher",
                                 "variants": []}
    return doc


def test_results_hold_each_variant_as_a_point_and_the_difference_with_its_interval():
    doc = variant_doc()
    rows = {r["profile"]: r for r in summary.summarize(doc)}
    assert set(rows) == {"none", "rtps_sign@aes128", "rtps_sign@aes256"}
    aes128 = rows["rtps_sign@aes128"]
    assert aes128["variant"]["cipher"] == "aes128" and aes128["vs_none"]["rounds"] == 8
    (d,) = aes128["vs_variant"]
    assert d["reference"] == "rtps_sign@aes256" and d["dimension"] == "cipher"
    assert d["reference_us"] == rows["rtps_sign@aes256"]["estimate"]
    assert d["difference_ci95"][0] <= d["difference"] <= d["difference_ci95"][1]
    assert d["difference_pct"] == pytest.approx(100 * (d["ratio"] - 1), abs=0.01)
    # RTI's pair for rtps_sign at 32 B (seed 002): AES-256 24 µs, AES-128 24 µs
    assert d["rti"]["aes256_us"] == 24 and d["rti"]["difference_us"] == 0
    assert rows["rtps_sign@aes256"]["vs_variant"] == []
    # the difference is the per-round difference of the two arms' log ratios over none
    pairs = paired.pairings(doc["rotation"]["slots"])
    by_round = {p.round: p for p in pairs[("rtps_sign@aes256", 32)]}
    logs = sorted(p.log_ratio - by_round[p.round].log_ratio
                  for p in pairs[("rtps_sign@aes128", 32)])
    assert d["ratio"] == pytest.approx(math.exp(paired.trimmed_mean(logs)), abs=1e-4)


def test_the_rounds_go_on_while_a_variant_difference_is_wider_than_the_target():
    """Each variant arm's width for the stopping rule is at least its difference's: an arm
    whose own ratio is narrow keeps its slots (in an acceptance run, AES-256 at 1024 B
    left after 6 rounds and its difference to AES-128 rested on 12 of 98)."""
    doc = variant_doc()
    widths = summary.rotation_widths(doc)
    own = {k: o.halfwidth_pct for k, o in summary.rotation_overheads(doc).items()}
    (d,) = next(r for r in summary.summarize(doc) if r["profile"] == "rtps_sign@aes128"
                )["vs_variant"]
    for arm in ("rtps_sign@aes128", "rtps_sign@aes256"):
        key = (arm, "latency", 32)
        assert widths[key] == pytest.approx(max(own[key], d["ratio_halfwidth_pct"]), abs=1e-3)


def test_the_report_shows_the_cipher_table_as_results_computes_it(tmp_path):
    doc = variant_doc()
    (tmp_path / "results.json").write_text(json.dumps(doc))
    html_path, md_path = write_report(tmp_path)
    (d,) = summary.variant_differences(summary.summarize(doc))
    page = lxml.html.fromstring(html_path.read_bytes())
    (row,) = page.xpath('//table[@id="cipher-table"]/tbody/tr')
    assert row.get("data-arm") == "rtps_sign@aes128" and row.get("data-size") == "32"
    cell = {k: row.xpath(f'./td[@data-kind="{k}"]')[0] for k in
            ("reference", "figure", "difference", "rti-difference")}
    assert num(text(cell["reference"]).split("[")[0]) == round(d["reference_us"], 1)
    assert num(text(cell["difference"]).split("[")[0]) == round(d["difference"], 1)
    ci = row.xpath('./td[@data-kind="difference"]/span')[0]
    assert interval(text(ci)) == tuple(round(x, 1) for x in d["difference_ci95"])
    assert num(text(cell["rti-difference"])) == 0
    assert "AES-256 unless --cipher" in text(page.xpath('//p[@id="crypto-defaults"]')[0])
    md = md_path.read_text()
    assert "| AES-256 (µs) | AES-128 (µs) | AES-128 − AES-256 (µs) |" in md
    line = next(x for x in md.splitlines() if x.startswith("| `rtps_sign` | 32 |"))
    assert f"{d['difference']:+.1f} [" in line and f"{d['difference_pct']:+.1f}% [" in line
    # the variant arms are points of the latency table too, after their profile
    assert "`rtps_sign@aes128`" in md.split("Latency (µs)")[1]


def test_a_variant_slot_must_name_its_arm_as_profile_at_variant(tmp_path):
    doc = variant_doc()
    slot = next(s for s in doc["rotation"]["slots"] if s.get("variant"))
    bad = copy.deepcopy(doc)
    next(s for s in bad["rotation"]["slots"] if s.get("variant"))["arm"] = "rtps_sign"
    (tmp_path / "results.json").write_text(json.dumps(bad))
    with pytest.raises(GovkitError, match=r"variant's arm is PROFILE@VARIANT"):
        write_report(tmp_path)
    assert "@" in slot["arm"]


def _refused(*args: str, cwd: Path) -> str:
    out = subprocess.run([GOVKIT, "bench", "--profile", "none", "--profile", "rtps_encrypt",
                          *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL)
    assert out.returncode == EXIT_USAGE, out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    assert not (cwd / "results").exists() and not (cwd / "build").exists()  # nothing started
    return lines[0]


@pytest.mark.parametrize("args, reason", [
    (("--cipher", "aes128,aes256"),
     "Cyclone DDS 0.10 protects RTPS messages with AES-256 always"),
    (("--rekey", "4"), "Cyclone DDS 0.10 never renews session keys"),
    (("--runner", "ddsperf", "--cipher", "aes256"), "ddsperf cannot set the writer/reader"),
    (("--runner", "ddsperf", "--rekey", "4"), "never renews session keys"),
    (("--runner", "fastdds", "--cipher", "aes128", "--mode", "both"),
     "only with --mode latency"),
    (("--runner", "fastdds", "--cipher", "aes128", "--wire"), "without --wire"),
    (("--runner", "fastdds", "--cipher", "aes512"), "invalid --cipher 'aes512'"),
    # "²".isdigit() holds and int("²") raises: was exit 3 (issue 37, item 15)
    (("--runner", "fastdds", "--rekey", "²"), "invalid --rekey '²'"),
    (("--runner", "fastdds", "--rekey", "\u0663"), "invalid --rekey '\u0663'"),
    (("--budget", "\u0663m"), "--budget"),
    # 10,000 values took minutes to plan (held-out battery, issue 46)
    (("--runner", "fastdds", "--rekey", ",".join(map(str, range(1, 10_001)))),
     "--rekey: 10000 values; at most 16"),
])
def test_what_a_runtime_cannot_apply_is_refused_in_one_line(tmp_path, args, reason):
    assert reason in _refused(*args, cwd=tmp_path)


def test_a_run_of_unprotected_profiles_has_no_cipher_to_vary():
    opts = BenchOptions([get_profile("none"), get_profile("no_protection")], runner="fastdds",
                        ciphers=["aes128"])
    with pytest.raises(GovkitError, match="no --profile protects anything"):
        opts.check()
    # aes256 alone is what Cyclone does anyway: measured, not refused
    BenchOptions([get_profile("none"), get_profile("rtps_sign")], runner="cyclone",
                 ciphers=["aes256"]).check()
