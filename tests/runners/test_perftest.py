"""RTI Perftest runner: command lines (against the seed scripts), checks, and output parsing.

Perftest itself is not installed here; everything up to starting it is exercised.
"""

from __future__ import annotations

import os
import shlex
import stat
from pathlib import Path

import pytest

from govkit.catalog.profiles import PROFILES, get_profile
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.results.perftest_csv import csv_name
from govkit.runners import get_runner, perftest
from govkit.runners.base import (
    BenchPoint,
    Bundle,
    ParticipantFiles,
    ProcessOutput,
    RunnerError,
    prepare,
)
from govkit.runners.perftest import PerftestRunner
from govkit.runners.processes import command_line

DATA = Path(__file__).parent.parent / "data" / "perftest"

# The option strings of seed 000's scripts (lines ~1300-1500), `$nic`/`$exec_time` kept as
# placeholders; the per-size part is `-datalen $DATALEN` and, secured, `-secureGovernanceFile`.
SEED000_PUB = ("-pub -transport UDPv4 -nic $nic -noPrint -noOutputHeaders -exec $exec_time "
               "-noXML -latencyTest")
SEED000_SUB = "-sub -transport UDPv4 -nic $nic -noPrint -noOutputHeaders -noXML"
# Seed 002's generic driver: `$executable -domain $domain -dataLen $DATALEN $pub_string`.
SEED002_PUB = ("-domain $domain -dataLen $DATALEN -pub -transport UDPv4 -nic $nic "
               "-noPrintIntervals -executionTime $exec_time -latencyTest -noOutputHeaders")
SEED002_SUB = ("-domain $domain -dataLen $DATALEN -sub -transport UDPv4 -nic $nic "
               "-noPrintIntervals -noOutputHeaders")
SECURE_OPTS = ("-secureGovernanceFile", "-securePermissionsFile", "-secureCertAuthority",
               "-secureCertFile", "-securePrivateKey")


# -- helpers ------------------------------------------------------------------------------

def make_bundle(tmp: Path, profile_name: str = "rtps_sign", single_ca: bool = True,
                ca_copy: bool = False) -> Bundle:
    """A bundle of placeholder files (the runner only passes paths and compares CAs)."""
    certs = tmp / "bundle" / "certs"
    certs.mkdir(parents=True, exist_ok=True)
    (certs / "identity_ca.pem").write_text("IDENTITY CA\n")
    if single_ca and ca_copy:
        (certs / "permissions_ca.pem").write_text("IDENTITY CA\n")  # same bytes, other file
    elif not single_ca:
        (certs / "permissions_ca.pem").write_text("PERMISSIONS CA\n")
    perm_ca = certs / ("permissions_ca.pem" if (ca_copy or not single_ca) else "identity_ca.pem")
    gov = tmp / "bundle" / "governance.p7s"
    gov.write_text("signed governance\n")
    parts = {}
    for who in ("pub", "sub"):
        for name in (f"{who}_cert.pem", f"{who}_key.pem"):
            (certs / name).write_text(name)
        perms = tmp / "bundle" / f"permissions_{who}.p7s"
        perms.write_text(f"signed permissions {who}\n")
        parts[who] = ParticipantFiles(who, certs / "identity_ca.pem", certs / f"{who}_cert.pem",
                                      certs / f"{who}_key.pem", perm_ca, gov, perms)
    profile = get_profile(profile_name)
    return Bundle(profile, parts if profile.security else {})


def point(profile_name: str = "rtps_sign", mode: str = "latency", size: int = 32,
          duration: float = 30, cpus=None) -> BenchPoint:
    return BenchPoint(get_profile(profile_name), mode, size, duration, domain_id=7, cpus=cpus)


def options(argv: list[str]) -> dict[str, str | None]:
    """perftest argv -> {option: value or None}; argv[0] (and any taskset prefix) skipped."""
    args = argv[argv.index(EXE) + 1:] if EXE in argv else argv
    out: dict[str, str | None] = {}
    i = 0
    while i < len(args):
        opt = args[i]
        assert opt.startswith("-"), args
        if i + 1 < len(args) and not args[i + 1].startswith("-"):
            out[opt] = args[i + 1]
            i += 2
        else:
            out[opt] = None
            i += 1
    return out


def perftest_match(seed_opt: str, ours: dict[str, str | None]) -> str:
    """Our option that perftest would take `seed_opt` for: perftest options are
    case-insensitive and may be abbreviated (`-datalen` = `-dataLen`, `-exec` =
    `-executionTime`, `-noPrint` = `-noPrintIntervals`, `-noXML` = `-noXmlQos`)."""
    hits = [o for o in ours if o.lower().startswith(seed_opt.lower())]
    assert len(hits) == 1, (seed_opt, list(ours))
    return hits[0]


EXE = "/opt/perftest/bin/perftest_cpp"
VALUES = {"$nic": "127.0.0.1", "$exec_time": "30", "$DATALEN": "32", "$domain": "7"}


def specs_for(tmp_path, p: BenchPoint, **kw):
    runner = PerftestRunner(perftest=EXE, **kw)
    bundle = make_bundle(tmp_path, p.profile.name)
    return {s.role: s for s in runner._specs(p, bundle)}, bundle, runner


def out(role: str, stdout: str, rc: int | None = 0, stderr: str = "") -> ProcessOutput:
    # As run_processes reports it: no exit status means it was killed at the timeout.
    return ProcessOutput(role, [EXE], rc, stdout, stderr, timed_out=rc is None)


def fixture(name: str) -> str:
    return (DATA / name).read_bytes().decode("utf-8")


# -- file names ---------------------------------------------------------------------------

def test_csv_name_matches_seed_scripts():
    assert csv_name(get_profile("none").name, "latency") == \
        "lat_udpv4_pub_unkeyed_rel_security_none.csv"
    assert csv_name(get_profile("sign_origin_data_encrypt").name, "latency") == \
        "lat_udpv4_pub_unkeyed_rel_security_rtps_sign_orig_data_encrypt.csv"
    assert csv_name(get_profile("sign_submsg_encrypt_origin_data_encrypt").name, "latency") == \
        "lat_udpv4_pub_unkeyed_rel_security_rtps_sign_submessage_encrypt_orig_data_encrypt.csv"
    assert csv_name(get_profile("rtps_sign").name, "throughput") == \
        "thr_udpv4_sub_unkeyed_rel_security_rtps_sign.csv"
    with pytest.raises(GovkitError):
        csv_name(get_profile("none").name, "jitter")


def test_csv_names_appear_in_the_seed_scripts(shared):
    """Every latency file name appears in seed 000's publisher script."""
    text = (shared / "seeds/000_ef47e19b05099c04.txt").read_text()
    for p in PROFILES:
        assert "/" + csv_name(p.name, "latency") in text


# -- command lines ------------------------------------------------------------------------

@pytest.mark.parametrize("seed_pub,seed_sub", [(SEED000_PUB, SEED000_SUB),
                                               (SEED002_PUB, SEED002_SUB)])
def test_options_are_the_seed_scripts(tmp_path, seed_pub, seed_sub):
    specs, _, _ = specs_for(tmp_path, point("none"))
    for role, seed in (("pub", seed_pub), ("sub", seed_sub)):
        ours = options(specs[role].argv)
        seed_opts = options(shlex.split(seed))
        seed_opts.setdefault("-datalen", "$DATALEN")
        for opt, value in seed_opts.items():
            mine = perftest_match(opt, ours)
            assert ours[mine] == (VALUES.get(value, value) if value else None), (role, opt)
        # Beyond the seeds: the domain (seed 000 has none), -noXmlQos (seed 002 has none: it
        # runs from perftest's folder, where the QoS XML is), the explicit output format;
        # nothing else for the unsecured baseline.
        extra = {o for o in ours if not any(o.lower().startswith(s.lower()) for s in seed_opts)}
        assert extra <= {"-domain", "-noXmlQos", "-outputFormat"}, extra
        assert ours["-outputFormat"] == "csv"


def test_exact_spelling_of_the_full_options(tmp_path):
    specs, _, _ = specs_for(tmp_path, point("none"))
    assert specs["pub"].argv == [
        EXE, "-pub", "-domain", "7", "-dataLen", "32", "-transport", "UDPv4",
        "-nic", "127.0.0.1", "-noPrintIntervals", "-noOutputHeaders", "-outputFormat", "csv",
        "-noXmlQos", "-executionTime", "30", "-latencyTest"]
    assert specs["sub"].argv == [
        EXE, "-sub", "-domain", "7", "-dataLen", "32", "-transport", "UDPv4",
        "-nic", "127.0.0.1", "-noPrintIntervals", "-noOutputHeaders", "-outputFormat", "csv",
        "-noXmlQos"]


def test_secured_point_passes_the_bundle_files(tmp_path):
    specs, bundle, _ = specs_for(tmp_path, point("rtps_sign"))
    for role in ("pub", "sub"):
        ours = options(specs[role].argv)
        part = bundle.participants[role]
        assert ours["-secureGovernanceFile"] == str(part.governance)
        assert ours["-securePermissionsFile"] == str(part.permissions)
        assert ours["-secureCertAuthority"] == str(part.identity_ca)
        assert ours["-secureCertFile"] == str(part.certificate)
        assert ours["-securePrivateKey"] == str(part.private_key)
        # Seed 000 secured = unsecured options + -secureGovernanceFile; we add the other four.
        seed = options(shlex.split((SEED000_PUB if role == "pub" else SEED000_SUB)
                                   + " -secureGovernanceFile X"))
        for opt in seed:
            perftest_match(opt, ours)
    assert options(specs["pub"].argv)["-secureCertFile"].endswith("pub_cert.pem")
    assert options(specs["sub"].argv)["-securePermissionsFile"].endswith("permissions_sub.p7s")


def test_baseline_has_no_secure_options_even_with_files(tmp_path):
    bundle = make_bundle(tmp_path, "rtps_sign")
    none_bundle = Bundle(get_profile("none"), dict(bundle.participants))
    runner = PerftestRunner(perftest=EXE)
    for spec in runner._specs(point("none"), none_bundle):
        assert not any(a.startswith("-secure") for a in spec.argv)


def test_no_protection_loads_the_plugins(tmp_path):
    specs, _, _ = specs_for(tmp_path, point("no_protection"))
    assert "-secureGovernanceFile" in specs["pub"].argv


def test_roles_order_delay_and_primary(tmp_path):
    runner = PerftestRunner(perftest=EXE)
    bundle = make_bundle(tmp_path)
    lat = runner._specs(point(mode="latency"), bundle)
    assert [s.role for s in lat] == ["sub", "pub"]          # subscriber first
    assert lat[0].start_delay == 0 and lat[1].start_delay > 0
    assert [s.primary for s in lat] == [False, True]        # the pub prints latency
    thr = runner._specs(point(mode="throughput"), bundle)
    assert [s.role for s in thr] == ["sub", "pub"]
    assert [s.primary for s in thr] == [True, False]        # the sub prints throughput
    assert "-latencyTest" not in thr[1].argv
    assert "-executionTime" in thr[1].argv and "-executionTime" not in thr[0].argv


def test_execution_time_is_whole_seconds(tmp_path):
    specs, _, _ = specs_for(tmp_path, point(duration=2.5))
    assert options(specs["pub"].argv)["-executionTime"] == "3"
    specs, _, _ = specs_for(tmp_path, point(duration=0.2))
    assert options(specs["pub"].argv)["-executionTime"] == "1"


def test_nic_option(tmp_path):
    specs, _, _ = specs_for(tmp_path, point(), nic="172.16.0.1")
    assert options(specs["pub"].argv)["-nic"] == "172.16.0.1"


def test_pinning(tmp_path):
    specs, _, _ = specs_for(tmp_path, point(cpus=(0, 1)))
    assert (specs["pub"].cpu, specs["sub"].cpu) == (0, 1)
    assert command_line(specs["pub"]).startswith(f"taskset -c 0 {EXE} -pub")
    specs, _, _ = specs_for(tmp_path, point())
    assert specs["pub"].cpu is None and command_line(specs["pub"]).startswith(f"{EXE} -pub")


def test_unknown_mode(tmp_path):
    with pytest.raises(GovkitError, match="mode"):
        specs_for(tmp_path, point(mode="jitter"))


def test_dry_run_lines(tmp_path):
    runner = PerftestRunner(perftest="/opt/RTI Perftest/perftest_cpp")  # a space to quote
    bundle = make_bundle(tmp_path)
    p = point(cpus=(0, 1))
    specs = runner.commands(p, bundle, tmp_path / "work")
    lines = [command_line(s) for s in specs]
    assert [shlex.split(line)[3:] for line in lines] == [s.argv for s in specs]
    assert lines[0].startswith("taskset -c 1 '/opt/RTI Perftest/perftest_cpp' -sub -domain 7")
    assert lines[1].startswith("taskset -c 0 '/opt/RTI Perftest/perftest_cpp' -pub -domain 7")
    assert f"-secureGovernanceFile {bundle.participants['pub'].governance}" in lines[1]
    assert not (tmp_path / "work").exists()  # a dry run writes nothing


def test_dry_run_without_perftest_uses_the_default_name(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    lines = [command_line(s) for s in PerftestRunner().commands(
        point("none"), make_bundle(tmp_path, "none"), tmp_path)]
    assert lines[1].startswith("perftest_cpp -pub ")


def test_prepare_writes_the_commands(tmp_path):
    runner = PerftestRunner(perftest=EXE)
    bundle = make_bundle(tmp_path)
    specs = prepare(runner, point(cpus=(0, 1)), bundle, tmp_path / "work")
    script = (tmp_path / "work" / "perftest-commands.sh").read_text()
    assert [line for line in script.splitlines()[2:]] == [command_line(s) for s in specs]


# -- single CA ----------------------------------------------------------------------------

def test_two_different_cas_are_refused(tmp_path):
    runner = PerftestRunner(perftest=EXE)
    bundle = make_bundle(tmp_path, single_ca=False)
    with pytest.raises(GovkitError) as e:
        prepare(runner, point(), bundle, tmp_path / "work")
    assert e.value.exit_code == EXIT_USAGE
    msg = str(e.value)
    assert "govkit pki init --single-ca" in msg and "-secureCertAuthority" in msg
    assert "identity_ca.pem" in msg and "permissions_ca.pem" in msg
    with pytest.raises(GovkitError, match="--single-ca"):
        runner.commands(point(), bundle, tmp_path / "work")


def test_same_ca_in_two_files_is_accepted(tmp_path):
    bundle = make_bundle(tmp_path, ca_copy=True)
    part = bundle.participants["pub"]
    assert part.identity_ca != part.permissions_ca
    specs = prepare(PerftestRunner(perftest=EXE), point(), bundle, tmp_path / "work")
    assert options(specs[1].argv)["-secureCertAuthority"] == str(part.identity_ca)


def test_baseline_skips_the_ca_check(tmp_path):
    bundle = make_bundle(tmp_path, single_ca=False)
    none_bundle = Bundle(get_profile("none"), dict(bundle.participants))
    prepare(PerftestRunner(perftest=EXE), point("none"), none_bundle, tmp_path / "work")


def test_secured_profile_without_participants(tmp_path):
    bundle = Bundle(get_profile("rtps_encrypt"), {})
    with pytest.raises(GovkitError, match="no 'sub' participant"):
        prepare(PerftestRunner(perftest=EXE), point("rtps_encrypt"), bundle, tmp_path)


# -- check_installed ----------------------------------------------------------------------

def test_check_installed_missing_path(tmp_path):
    with pytest.raises(GovkitError) as e:
        PerftestRunner(perftest=tmp_path / "nope" / "perftest_cpp").check_installed()
    assert e.value.exit_code == EXIT_USAGE
    msg = str(e.value)
    assert "--perftest PATH" in msg and "github.com/rticommunity/rtiperftest" in msg
    assert "nope" in msg


def test_check_installed_not_executable(tmp_path):
    exe = tmp_path / "perftest_cpp"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o644)
    if os.access(exe, os.X_OK):  # running as root on some file systems
        pytest.skip("cannot make a non-executable file here")
    with pytest.raises(GovkitError, match="not executable.*--perftest PATH"):
        PerftestRunner(perftest=exe).check_installed()


def test_check_installed_ok_and_path_lookup(tmp_path, monkeypatch):
    exe = tmp_path / "bin" / "perftest_cpp"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    PerftestRunner(perftest=exe).check_installed()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(GovkitError, match="perftest_cpp.*not on PATH.*--perftest PATH"):
        PerftestRunner().check_installed()
    monkeypatch.setenv("PATH", str(exe.parent))
    runner = PerftestRunner()
    runner.check_installed()
    assert runner.executable == str(exe)


def test_relative_executable_is_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = PerftestRunner(perftest="./perftest_cpp")
    assert runner.executable == str(tmp_path / "perftest_cpp")


def test_unknown_options_are_refused():
    with pytest.raises(GovkitError, match="do not apply to --runner perftest"):
        get_runner("perftest", perftest=EXE, whatever=1)
    with pytest.raises(GovkitError, match="--perftest do not apply to --runner ddsperf"):
        get_runner("ddsperf", perftest=EXE)


# -- parsing: latency ---------------------------------------------------------------------

_SHORT = {honest: short for short, honest in perftest.LATENCY_NAMES.items()}


def lat(r) -> dict:
    """Perftest's latency summary under perftest's own short names."""
    assert r.row_format == "latency-summary" and not r.rows
    return {_SHORT[k]: v for k, v in r.summary.items()}


def thr(r) -> dict:
    assert r.row_format == "throughput-summary" and not r.rows
    s = r.summary
    return {"samples_per_s": s["mean_rate_sps"], "mbps": s["mean_mbps"], "lost": s["lost"]}

SEED000_NONE_32 = {"mean": 21, "std": 0.7, "min": 20, "max": 50, "median": 21, "p90": 22,
                   "p99": 24, "p9999": 31, "p999999": 50}


def parse_lat(text: str, profile="none", size=32, rc=0):
    return PerftestRunner(perftest=EXE).parse(
        point(profile, "latency", size), {"pub": out("pub", text, rc), "sub": out("sub", "")})


def test_latency_csv_with_headers():
    r = parse_lat(fixture("lat_pub_csv_headers.txt"))
    assert lat(r) == SEED000_NONE_32
    assert r.extra["source"] == "perftest summary"
    assert r.extra["format"] == "csv" and r.extra["length"] == 32


def test_latency_csv_without_headers_crlf():
    r = parse_lat(fixture("lat_pub_csv_noheaders_crlf.txt"), "rtps_sign")
    assert "\r\n" in fixture("lat_pub_csv_noheaders_crlf.txt")
    # seed 000, RTPS Sign, 32 B: 25 0.8 23 55 25 25 29 34 55
    assert lat(r) == {"mean": 25, "std": 0.8, "min": 23, "max": 55, "median": 25,
                            "p90": 25, "p99": 29, "p9999": 34, "p999999": 55}


def test_latency_seed_output_file_picks_the_size():
    text = fixture(csv_name(get_profile("none").name, "latency"))
    assert lat(parse_lat(text, size=32)) == SEED000_NONE_32
    r = parse_lat(text, size=8192)  # seed 000, none, 8192 B: 44 0.8 43 67 44 45 48 53 67
    assert lat(r) == {"mean": 44, "std": 0.8, "min": 43, "max": 67, "median": 44,
                            "p90": 45, "p99": 48, "p9999": 53, "p999999": 67}
    assert lat(parse_lat(text, size=63000))["median"] == 109
    assert parse_lat(text, size=100).extra["length"] == 63000  # no such size: the last one


def test_latency_intervals_new_headers_and_cpu():
    r = parse_lat(fixture("lat_pub_csv_intervals_cpu.txt"), "rtps_encrypt", 8192)
    # seed 000, RTPS Encrypt, 8192 B: 52 0.8 51 81 52 52 55 61 81 (intervals are ignored)
    assert lat(r) == {"mean": 52, "std": 0.8, "min": 51, "max": 81, "median": 52,
                            "p90": 52, "p99": 55, "p9999": 61, "p999999": 81}
    assert r.extra["cpu_percent"] == 12.5


def test_latency_legacy_format():
    r = parse_lat(fixture("lat_pub_legacy.txt"), size=32)
    assert lat(r) == {"mean": 396, "std": 48.9, "min": 83, "max": 538, "median": 401,
                            "p90": 459, "p99": 510, "p9999": 538, "p999999": 538}
    assert r.extra["format"] == "legacy"
    assert lat(parse_lat(fixture("lat_pub_legacy.txt"), size=64))["max"] == 1062


def test_latency_newest_micro_sign_headers_without_intervals():
    text = ("Sample Size (Bytes), Ave (μs), Std (μs), Min (μs), Max (μs), 50% (μs), 90% (μs),"
            " 99% (μs), 99.99% (μs), 99.9999% (μs)\n"
            "                 32,   21.250,    0.700,   20.000,   50.000,   21.000,   22.000,"
            "   24.000,      31.000,        50.000\n")  # built with --ns-resolution: %9.3f
    assert lat(parse_lat(text))["mean"] == 21.25


def test_latency_summary_missing_raises_with_tail():
    text = fixture("pub_failure.txt")
    with pytest.raises(RunnerError) as e:
        parse_lat(text, rc=1)
    msg = str(e.value)
    assert "no latency summary" in msg and "exit code 1" in msg
    assert "Problem creating participant." in msg and "[Error] Initializing RTI Perftest" in msg


def test_latency_summary_of_the_wrong_table_is_not_taken():
    # A throughput summary (sub output) is not a latency summary, and vice versa.
    with pytest.raises(RunnerError):
        parse_lat(fixture("thr_sub_csv_headers.txt"))
    with pytest.raises(RunnerError):
        parse_thr(fixture("lat_pub_csv_headers.txt"))


def test_latency_zero_summary_raises():
    with pytest.raises(RunnerError, match="no samples"):
        parse_lat("32, 0, 0.0, 0, 0, 0, 0, 0, 0, 0\n")


def test_killed_publisher_is_reported():
    with pytest.raises(RunnerError, match="killed after the timeout"):
        parse_lat("Waiting to discover 1 subscribers ...\n", rc=None)


# -- parsing: throughput ------------------------------------------------------------------

def parse_thr(text: str, size=32, rc=0, pub: ProcessOutput | None = None):
    return PerftestRunner(perftest=EXE).parse(
        point("rtps_sign", "throughput", size),
        {"sub": out("sub", text, rc), "pub": pub or out("pub", "")})


def test_throughput_csv_with_headers():
    r = parse_thr(fixture("thr_sub_csv_headers.txt"))
    # seed 003, RWT (RTPS Sign + Encrypt), 32 B: 3642113 samples, 182062 /s, 46.6 Mbps
    assert thr(r) == {"samples_per_s": 182062, "mbps": 46.6, "lost": 0}
    assert r.extra["total_samples"] == 3642113 and r.extra["lost_percent"] == 0
    assert r.summary["count"] == 3642113
    assert r.extra["source"] == "perftest summary"


def test_throughput_csv_without_headers_empty_field_and_cpu():
    r = parse_thr(fixture("thr_sub_csv_noheaders_cpu.txt"), size=500000)
    # seed 003, TCP, 500000 B: 5 samples, (empty) samples/s, 0.8 Mbps, CPU 0.00
    assert thr(r) == {"samples_per_s": 0, "mbps": 0.8, "lost": 0}
    assert r.extra["total_samples"] == 5 and r.extra["cpu_percent"] == 0


def test_throughput_intervals_are_ignored():
    r = parse_thr(fixture("thr_sub_csv_intervals.txt"), size=1024)
    # seed 003, TCP (second table), 1024 B: 56160 samples, 2802 /s, 23.0 Mbps
    assert thr(r) == {"samples_per_s": 2802, "mbps": 23.0, "lost": 12}
    assert r.extra["total_samples"] == 56160 and r.extra["lost_percent"] == 0.02


def test_throughput_legacy_format():
    r = parse_thr(fixture("thr_sub_legacy.txt"), size=100)
    assert thr(r) == {"samples_per_s": 2055011, "mbps": 1644.0, "lost": 0}
    assert r.extra["format"] == "legacy" and r.extra["total_samples"] == 6163858
    old = "Length: 32 Packets: 10000000 Packets/s(ave): 47913 Mbps(ave): 12.3 Lost: 0\n"
    assert thr(parse_thr(old)) == {"samples_per_s": 47913, "mbps": 12.3, "lost": 0}


def test_throughput_failure_shows_both_sides():
    pub = out("pub", fixture("pub_failure.txt"), rc=1)
    with pytest.raises(RunnerError) as e:
        parse_thr("Waiting to discover 1 publishers ...\nWaiting for data ...\n", rc=None,
                  pub=pub)
    msg = str(e.value)
    assert "no throughput summary" in msg and "killed after the timeout" in msg
    assert "Waiting for data ..." in msg          # the sub's tail
    assert "Problem creating participant." in msg  # and the failed pub's


def test_throughput_zero_samples_raises():
    with pytest.raises(RunnerError, match="no samples"):
        parse_thr("32, 0, , 0.0, 0, 0.00\n")


def test_summary_found_in_stderr_too():
    r = PerftestRunner(perftest=EXE).parse(
        point("none"), {"pub": out("pub", "", stderr=fixture("lat_pub_csv_headers.txt"))})
    assert lat(r) == SEED000_NONE_32


def test_cli_dry_run_prints_the_seed_style_command_lines(tmp_path):
    """`govkit bench --runner perftest --dry-run` prints both processes' command lines on
    stdout, with the files a real run would create, and creates nothing."""
    import subprocess
    import sys
    govkit = str(Path(sys.executable).with_name("govkit"))
    r = subprocess.run([govkit, "bench", "--runner", "perftest", "--profile", "rtps_sign",
                        "--sizes", "32", "--repeat", "1", "--dry-run", "--no-pin",
                        "--no-realtime", "--ca", "pki-single"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[1] == "# rtps_sign latency size 32 repeat 0"
    sub, pub = (shlex.split(x) for x in lines[2:4])
    assert sub[:2] == ["perftest_cpp", "-sub"] and pub[:2] == ["perftest_cpp", "-pub"]
    assert "-latencyTest" in pub and pub[pub.index("-dataLen") + 1] == "32"
    gov = Path(pub[pub.index("-secureGovernanceFile") + 1])
    assert gov == tmp_path / "build/perftest/governance/rtps_sign.p7s"
    ca = pub[pub.index("-secureCertAuthority") + 1]
    assert ca == str(tmp_path / "pki-single/identity_ca.pem")
    assert list(tmp_path.iterdir()) == []          # no PKI, no build/, no results/
