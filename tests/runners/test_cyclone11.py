"""Cyclone DDS 11.0.1 built from ../shared/vendor beside Debian's 0.10.2, and `--dds-prefix`.

The build (govkit.runners.cyclone_source_build) is cached per machine: the first run of this
module builds it (many minutes on 2 cores), later runs find it at once. With it: every
catalog profile's signed files are accepted by a real Cyclone DDS 11 ddsperf pair, which
matches and exchanges samples with them; `govkit bench --dds-prefix` runs govkit's own
program compiled against 11 and records 11.0.1 in results.json. A prefix that is not a
Cyclone DDS install, or lacks the security plugins, is refused in one line (exit 2) before
anything is signed, built or started (those tests need no build).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.cyclone11 import VERSION, cyclone11_prefix, tarball
from helpers.dds import cyclone_loads, make_bundle, needs_cyclone, run_pair, with_file
from helpers.json_schemas import assert_valid
from helpers.require import missing
from helpers.signers import signer_variants

from govkit.catalog.profiles import SECURED_PROFILES
from govkit.catalog.targets import TARGETS
from govkit.common.errors import GovkitError
from govkit.pki.testpki import TestPKI
from govkit.runners import cyclone_source_build as source_build
from govkit.runners.dds_prefix import find_install, library_version, prefix_options
from govkit.runners.ddsperf import DdsperfRunner
from govkit.smime.sign import sign_document

GOVKIT = str(Path(sys.executable).parent / "govkit")


_tarball = tarball


@pytest.fixture(scope="module")
def cyclone11() -> Path:
    """The prefix of Cyclone DDS 11.0.1 built from the vendored source (cached)."""
    return cyclone11_prefix()


# ---------------------------------------------------------------- the build itself


def _loaded_libddsc(program: Path) -> Path | None:
    """The libddsc file the dynamic loader gives `program` (ldd, with this environment)."""
    ldd = subprocess.run(["ldd", str(program)], capture_output=True, text=True,
                         timeout=30).stdout
    found = re.search(r"^\s*libddsc\.so\S* => (\S+)", ldd, re.M)
    return Path(found[1]).resolve() if found else None



@pytest.mark.cyclone
def test_the_build_is_cached_and_is_cyclone_11_with_security(cyclone11):
    started = []
    # the second call finds the complete prefix: no build starts (progress is told of one)
    assert source_build.ensure_built(_tarball(), progress=started.append) == cyclone11
    assert started == []
    install = find_install(cyclone11, "--dds-prefix")
    assert install.version == VERSION
    assert install.library.name == f"libddsc.so.{VERSION}"
    assert all((install.plugins / p).is_file() for p in
               ("libdds_security_auth.so", "libdds_security_ac.so", "libdds_security_crypto.so"))
    # the programs find the prefix's library by their run path, not /usr's
    assert _loaded_libddsc(install.ddsperf) == install.library
    # no temporary build directory is left beside it
    assert not [d for d in cyclone11.parent.iterdir() if d.name.startswith(f".{cyclone11.name}")]


def test_a_tarball_that_does_not_match_its_sha256_is_not_built(tmp_path):
    tarball = tmp_path / source_build.TARBALL_NAME
    tarball.write_bytes(b"not the source")
    other = hashlib.sha256(b"the source").hexdigest()
    (tmp_path / f"{tarball.name}.sha256").write_text(f"{other}  {tarball.name}\n")
    with pytest.raises(GovkitError, match=f"is not the {other}.*refusing to build it"):
        source_build.ensure_built(tarball)
    (tmp_path / f"{tarball.name}.sha256").write_text("garbage\n")
    with pytest.raises(GovkitError, match=r"\.sha256:1:1: not a `SHA256"):
        source_build.ensure_built(tarball)


# ---------------------------------------------------------------- Cyclone 11 with each profile


@needs_cyclone
@pytest.mark.cyclone
@pytest.mark.parametrize("profile", [p.name for p in SECURED_PROFILES])
def test_cyclone_11_accepts_each_profiles_signed_files_and_matches(cyclone11, tmp_path,
                                                                   profile):
    bundle = make_bundle(tmp_path, profile)
    runner = DdsperfRunner(dds_prefix=find_install(cyclone11, "--dds-prefix",
                                                   for_build=False))
    runner, point, outputs = run_pair(bundle, tmp_path / "cfg", runner=runner)
    pub = outputs["pub"]
    assert pub.argv[0] == str(cyclone11 / "bin" / "ddsperf")
    assert pub.returncode in (0, None) and not pub.timed_out, pub.tail()
    # samples flowed between exactly these two (parse refuses a foreign participant)
    result = runner.parse(point, outputs)
    assert sum(r["count"] for r in result.rows) > 100, result.rows


@needs_cyclone
@pytest.mark.cyclone
def test_bench_on_cyclone_11_records_its_version(cyclone11, tmp_path):
    init = subprocess.run([GOVKIT, "pki", "init"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert init.returncode == 0, init.stderr
    out = subprocess.run([GOVKIT, "bench", "--runner", "cyclone", "--dds-prefix",
                          str(cyclone11), "--profile", "none,rtps_sign", "--sizes", "1024",
                          "--rounds", "3", "--budget", "1", "--no-report", "--out", "res"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"govkit: Cyclone DDS {VERSION} in {cyclone11} (--dds-prefix)" in out.stderr
    doc = json.loads((tmp_path / "res" / "results.json").read_text())
    assert_valid(doc, "bench")            # settings.runtime is in bench.schema.json
    runtime = doc["settings"]["runtime"]
    assert runtime["name"] == "Cyclone DDS" and runtime["version"] == VERSION
    assert runtime["prefix"] == str(cyclone11) and runtime["source"] == "--dds-prefix"
    assert doc["environment"]["cyclonedds"] == f"{VERSION} ({cyclone11})"
    assert f"Cyclone DDS {VERSION}" in doc["settings"]["method"]
    # govkit's program ran, linked to 11's library by its run path
    rot = doc["rotation"]
    assert {p["status"] for p in rot["pairs"]} == {"ok"}
    program = next(w for w in rot["pairs"][0]["commands"][0].split()
                   if Path(w).name.startswith("cyclone_perf-"))
    assert _loaded_libddsc(Path(program)) == (cyclone11 / "lib" / f"libddsc.so.{VERSION}")
    # every signed slot measured on 11; an unsecured one may meet a stranger's participant on
    # its domain on this shared machine (the run discards and reports that slot)
    signed = [x for x in rot["slots"] if x["arm"] == "rtps_sign"]
    assert len(signed) >= 3 and all(x["status"] == "ok" and x["n"] > 0 for x in signed), signed
    assert {x["status"] for x in rot["slots"]} <= {"ok", "foreign_participant", "no_samples"}
    assert all(any(x["status"] == "ok" for x in rot["slots"] if x["arm"] == arm)
               for arm in ("none", "none:aa"))


def _can_capture() -> bool:
    import socket
    try:
        socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0).close()
        return True
    except (PermissionError, AttributeError, OSError):
        return False


@needs_cyclone
@pytest.mark.cyclone
def test_wire_check_captures_cyclone_11s_traffic(cyclone11, tmp_path):
    if not _can_capture():
        pytest.skip(missing("root", "raw capture on lo needs root or CAP_NET_RAW"))
    init = subprocess.run([GOVKIT, "pki", "init"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert init.returncode == 0, init.stderr
    r = subprocess.run([GOVKIT, "wire-check", "--dds-prefix", str(cyclone11), "--profile",
                        "sign_submsg_encrypt", "--json"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr
    point = json.loads(r.stdout)["points"][0]
    assert point["verdict"] == "match", point["reasons"]
    assert all(f" {cyclone11}/bin/ddsperf " in c for c in point["commands"]), point["commands"]


# ---------------------------------------------------------------- the system's, and bad prefixes


@needs_cyclone
def test_a_plain_run_names_the_systems_cyclone_0_10_2():
    runtime = DdsperfRunner().runtime()
    assert runtime["version"] == "0.10.2" and runtime["prefix"] == "/usr"
    assert runtime["source"] == "system"


def _fake_library(lib: Path, version: str, holds: bool) -> Path:
    lib.mkdir(parents=True)
    real = lib / f"libddsc.so.{version}"
    real.write_bytes(b"\x7fELF" + (b"\0" + version.encode() + b"\0" if holds else b"\0"))
    (lib / "libddsc.so").symlink_to(real.name)
    return real


def test_the_version_is_the_librarys_own(tmp_path):
    # the file's name counts only where the library carries the same string
    assert library_version(_fake_library(tmp_path / "a" / "lib", "9.8.7", True)) == "9.8.7"
    assert library_version(_fake_library(tmp_path / "b" / "lib", "9.8.7", False)) == "unknown"


def _bad_prefix(tmp_path: Path, kind: str) -> Path:
    prefix = tmp_path / "prefix"
    prefix.mkdir()
    if kind == "no plugins":
        _fake_library(prefix / "lib", "11.0.1", True)
        (prefix / "bin").mkdir()
        for tool in ("ddsperf", "idlc"):
            (prefix / "bin" / tool).write_text("#!/bin/sh\n")
            (prefix / "bin" / tool).chmod(0o755)
        (prefix / "include" / "dds").mkdir(parents=True)
        (prefix / "include" / "dds" / "dds.h").write_text("")
    return prefix


@pytest.mark.parametrize("kind, says", [
    ("empty", "not a Cyclone DDS install (no lib/libddsc.so)"),
    ("no plugins", "a Cyclone DDS install without the DDS Security plugins"),
])
@pytest.mark.parametrize("how", ["option", "env", "wire-check"])
def test_a_bad_prefix_is_one_line_and_exit_2_before_anything(tmp_path, kind, says, how):
    prefix = _bad_prefix(tmp_path, kind)
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    argv = [GOVKIT, "wire-check" if how == "wire-check" else "bench", "--profile", "rtps_sign"]
    if how == "env":
        env["GOVKIT_DDS_PREFIX"] = str(prefix)
    else:
        argv += ["--dds-prefix", str(prefix)]
    r = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and str(prefix) in lines[0], r.stderr
    assert ("GOVKIT_DDS_PREFIX" if how == "env" else "--dds-prefix") in lines[0]
    # nothing was made: no PKI, no signed files, no results, no program built
    assert list(work.iterdir()) == [] and not (tmp_path / "cache").exists()


def test_ament_prefix_path_counts_only_through_an_entry_holding_cyclone(tmp_path, monkeypatch):
    monkeypatch.delenv("GOVKIT_DDS_PREFIX", raising=False)
    other, ros = tmp_path / "other", _bad_prefix(tmp_path, "no plugins")
    other.mkdir()
    monkeypatch.setenv("AMENT_PREFIX_PATH", os.pathsep.join([str(other), str(ros)]))
    # the entry with a Cyclone DDS is taken (and checked: this one has no plugins) ...
    with pytest.raises(GovkitError, match=r"^AMENT_PREFIX_PATH .*prefix: .*without the DDS "):
        prefix_options("cyclone", None)
    # ... by the runners that take a prefix; Fast DDS's runs the system's Fast DDS
    assert prefix_options("fastdds", None) == {}
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(other))
    assert prefix_options("cyclone", None) == {}
    with pytest.raises(GovkitError, match="--dds-prefix applies to --runner cyclone, "
                                          "ddsperf, fastdds"):
        prefix_options("perftest", other)


# ---------------------------------------------------------------- where 11 differs from 0.10
# govkit.catalog.targets: the cyclone target's `later` (Cyclone DDS 11), read from its source
# before govkit could run it; each fact here is both versions run on the same files.


def _runner(request, runtime: str) -> DdsperfRunner:
    if runtime == "0.10":
        return DdsperfRunner()
    prefix = request.getfixturevalue("cyclone11")
    return DdsperfRunner(dds_prefix=find_install(prefix, "--dds-prefix", for_build=False))


def _resigned(tmp_path: Path, xml: bytes, name: str) -> Path:
    pki = TestPKI(tmp_path / "pki")
    path = tmp_path / f"{name}.xml"
    path.write_bytes(xml)
    return sign_document(path, pki.permissions_ca, pki.permissions_ca_key)


@needs_cyclone
@pytest.mark.cyclone
@pytest.mark.parametrize("runtime", ["0.10", "11"])
def test_a_space_after_a_comma_in_the_subject_is_refused_by_0_10_only(request, tmp_path,
                                                                      runtime):
    """targets.py: Cyclone 11 trims each subject token (subject_trims); 0.10 compares the
    bytes and refuses "O=govkit test PKI, CN=pub"."""
    assert TARGETS["cyclone"].later.subject_trims
    bundle = make_bundle(tmp_path, "rtps_sign")
    xml = bundle.participants["pub"].permissions.with_suffix(".xml").read_bytes()
    spaced = re.sub(rb"<subject_name>([^<]*),([^<]*)</subject_name>",
                    rb"<subject_name>\1, \2</subject_name>", xml)
    assert spaced != xml
    signed = _resigned(tmp_path, spaced, "spaced")
    runner = _runner(request, runtime)
    _, point, outputs = run_pair(with_file(bundle, "pub", permissions=signed), tmp_path / "cfg",
                                 runner=runner)
    text = "\n".join(o.stdout + o.stderr for o in outputs.values())
    if runtime == "0.10":
        assert "Subject name is invalid" in text
    else:
        assert sum(r["count"] for r in runner.parse(point, outputs).rows) > 100, text[-800:]


@needs_cyclone
@pytest.mark.cyclone
@pytest.mark.parametrize("runtime", ["0.10", "11"])
def test_documents_signed_by_a_leaf_of_the_permissions_ca_load_in_0_10_only(request,
                                                                           tmp_path, runtime):
    """targets.py: Cyclone 11 takes the Permissions CA itself as the only signer
    (permissions_signer "ca", PKCS7_NOINTERN); 0.10 builds a chain to it ("chain")."""
    assert (TARGETS["cyclone"].permissions_signer, TARGETS["cyclone"].later.permissions_signer) \
        == ("chain", "ca")
    bundle = make_bundle(tmp_path, "rtps_sign")
    leaf = next(v for v in signer_variants(TestPKI(tmp_path / "pki")) if v.name == "leaf")
    files = bundle.participants["pub"]
    gov = leaf.sign(files.governance.with_suffix(".xml"), tmp_path / "leaf-governance.p7s")
    perm = leaf.sign(files.permissions.with_suffix(".xml"), tmp_path / "leaf-permissions.p7s")
    loaded, text = cyclone_loads(with_file(bundle, "pub", governance=gov, permissions=perm),
                                 "pub", tmp_path / "cfg", runner=_runner(request, runtime))
    assert loaded == (runtime == "0.10"), text[-800:]
    if not loaded:
        assert "validating local permissions" in text, text[-800:]


def test_the_program_is_cached_per_runtime_build(tmp_path):
    """govkit's Cyclone program is named by the library it is built against: another build
    of the same version (other bytes) is another program; the system's keeps its key."""
    from govkit.runners.cyclone_build import build_key, compiler
    cc = compiler()
    if cc is None:
        pytest.skip("no C compiler")
    prefix = _bad_prefix(tmp_path, "no plugins")
    for plugin in ("libdds_security_auth.so", "libdds_security_ac.so",
                   "libdds_security_crypto.so"):
        (prefix / "lib" / plugin).write_bytes(b"")
    install = find_install(prefix, "--dds-prefix")
    first = build_key(cc, install)
    assert first == build_key(cc, install) != build_key(cc)
    install.library.write_bytes(install.library.read_bytes() + b"rebuilt")
    assert build_key(cc, install) != first


def test_a_killed_builds_directory_is_removed_once_no_build_can_own_it(tmp_path):
    prefix = tmp_path / "cyclonedds-11.0.1-0123456789abcdef"
    old, recent = tmp_path / f".{prefix.name}.old", tmp_path / f".{prefix.name}.new"
    for d in (old, recent):
        (d / "build").mkdir(parents=True)
    stale = time.time() - source_build.BUILD_TIMEOUT_S - 60
    os.utime(old, (stale, stale))
    assert source_build.remove_abandoned(prefix) == [old]
    assert recent.is_dir() and not old.exists()


def test_doctor_lists_the_prefix_beside_the_systems_cyclone(cyclone11):
    """`govkit doctor --dds-prefix` (and $GOVKIT_DDS_PREFIX) lists 11.0.1 in its prefix, its
    version read from its library, beside Debian's 0.10.2, each against the advisory table:
    CVE-2025-67109 (fixed in 0.10.5) affects 0.10.2 only."""
    env = {k: v for k, v in os.environ.items() if k not in ("GOVKIT_DDS_PREFIX",
                                                              "AMENT_PREFIX_PATH")}
    for args, extra, source in ((["--dds-prefix", str(cyclone11)], {}, "--dds-prefix"),
                                ([], {"GOVKIT_DDS_PREFIX": str(cyclone11)},
                                 "GOVKIT_DDS_PREFIX")):
        out = subprocess.run([GOVKIT, "doctor", "--json", *args], capture_output=True,
                             text=True, timeout=120, env={**env, **extra})
        doc = json.loads(out.stdout)
        assert out.returncode == doc["exit_code"], out.stderr
        cyclones = {r["source"]: r for r in doc["runtimes"] if r["product"] == "cyclonedds"}
        assert cyclones[source]["version"] == VERSION
        assert cyclones[source]["location"] == str(cyclone11)
        hits = {(a["location"], a["id"]) for a in doc["advisories"] if a["status"] == "affected"}
        assert (str(cyclone11), "CVE-2025-67109") not in hits
        if "system" in cyclones and cyclones["system"]["version"] == "0.10.2":
            assert ("/usr", "CVE-2025-67109") in hits

@needs_cyclone
@pytest.mark.cyclone
@pytest.mark.parametrize("top", [230, 231])
def test_cyclone_11_keeps_the_domain_limit_of_230(cyclone11, tmp_path, top):
    """targets.py: the cyclone target's `later.keeps` max_domain_id: 11.0.1 still fails to
    load a governance whose domains reach 231 (access_control_parser.c), as 0.10 does, so
    GK010's verdict for --target cyclone holds for 11; 230 loads."""
    from govkit.catalog.targets import TARGETS
    assert "max_domain_id" in TARGETS["cyclone"].later.keeps
    assert TARGETS["cyclone"].max_domain_id == 230
    bundle = make_bundle(tmp_path, "rtps_sign")
    xml = bundle.participants["pub"].governance.with_suffix(".xml").read_bytes()
    edited = xml.replace(b"<max>230</max>", f"<max>{top}</max>".encode())
    assert (edited != xml) == (top != 230)
    signed = _resigned(tmp_path, edited, f"domains-{top}")
    runner = DdsperfRunner(dds_prefix=find_install(cyclone11, "--dds-prefix", for_build=False))
    loaded, text = cyclone_loads(with_file(bundle, "pub", governance=signed), "pub",
                                 tmp_path / "cfg", runner=runner)
    assert loaded == (top == 230), text[-800:]
    if not loaded:
        assert "Can not parse governance file" in text, text[-800:]


# ---------------------------------------------------------------- facts of the cyclone11 target
# govkit.catalog.targets: TARGETS["cyclone11"] is the cyclone row with its `later` applied;
# each fact below is both versions run on the same crafted, signed files, and lint's verdict
# under each target on the same document.


def _signed_as_is(tmp_path: Path, xml: bytes, name: str) -> Path:
    """`xml` signed by the Permissions CA with OpenSSL itself: govkit's signer refuses
    these documents (they break its rules), the runtimes are given them anyway."""
    pki = TestPKI(tmp_path / "pki")
    path, out = tmp_path / f"{name}.xml", tmp_path / f"{name}.p7s"
    path.write_bytes(xml)
    subprocess.run(["openssl", "smime", "-sign", "-text", "-in", str(path), "-out", str(out),
                    "-signer", str(pki.permissions_ca), "-inkey", str(pki.permissions_ca_key)],
                   check=True, capture_output=True, timeout=60)
    return out


def _protected(governance: bytes) -> bytes:
    """Read and write access control on for every topic (the catalog's profiles leave them
    off): only then does Cyclone ask the permissions whether a topic may be created."""
    out = governance.replace(b"<enable_read_access_control>false",
                             b"<enable_read_access_control>true").replace(
        b"<enable_write_access_control>false", b"<enable_write_access_control>true")
    assert out.count(b">true</enable_") >= 2
    return out


_DOMAINS = b"<domains><id_range><min>0</min><max>230</max></id_range></domains>"


def _rule(verdict: bytes, action: bytes, topic: bytes) -> bytes:
    return (b"<%s_rule>%s<%s><topics><topic>%s</topic></topics></%s></%s_rule>"
            % (verdict, _DOMAINS, action, topic, action, verdict))


def _with_rules(permissions: bytes, *rules: bytes) -> bytes:
    out = re.sub(rb"<allow_rule>.*</allow_rule>", b"".join(rules), permissions, flags=re.S)
    assert out != permissions
    return out


def _writer_alone(request, tmp_path: Path, runtime: str, bundle, governance: Path,
                  permissions: Path) -> tuple[int | None, str]:
    """govkit's Cyclone program, built against `runtime`, creating topic T and a writer on
    it with pub's files and no peer: exit 4 once the writer exists and no peer matched."""
    from helpers.dds import finish, next_domain, start_topic

    from govkit.runners.cyclone_build import ensure_built
    files = with_file(bundle, "pub", governance=governance, permissions=permissions)
    if runtime == "0.10":
        runner, program = DdsperfRunner(), ensure_built()
    else:
        prefix = request.getfixturevalue("cyclone11")
        runner = DdsperfRunner(dds_prefix=find_install(prefix, "--dds-prefix",
                                                       for_build=False))
        program = ensure_built(find_install(prefix, "--dds-prefix"))
    workdir = tmp_path / f"writer-{runtime}"
    workdir.mkdir(parents=True)
    config = workdir / "cyclone.xml"
    config.write_text(runner.config_text(files, "pub"))
    proc = start_topic([str(program), "pub", str(next_domain()), "2", "T"],
                       {"CYCLONEDDS_URI": config.as_uri()})
    return finish(proc)


def _lint_hits(xml: bytes, target: str, rule: str) -> list:
    from govkit.check.lint import LintOptions, lint_bytes
    from govkit.check.rules.engine import selected_rules
    report = lint_bytes(xml, "p.xml", LintOptions(target=target), selected_rules([], []))
    return [f for f in report.findings if f.rule == rule]


@needs_cyclone
@pytest.mark.cyclone
@pytest.mark.parametrize("runtime", ["0.10", "11"])
def test_a_deny_of_subscribe_before_an_allow_of_publish_refuses_the_topic_on_0_10_only(
        request, tmp_path, runtime):
    """targets.py topic_creation: 0.10 lets the first rule naming T decide whether T may be
    created (access_control.c is_topic_allowed_by_permissions), so the writer it may have
    is never made; 11.0.1 decides per action (cyclonedds 5ac329b, #2267). lint's GK218 says
    so under --target cyclone, and nothing under --target cyclone11."""
    bundle = make_bundle(tmp_path, "rtps_sign")
    files = bundle.participants["pub"]
    governance = _signed_as_is(tmp_path, _protected(
        files.governance.with_suffix(".xml").read_bytes()), "governance")
    for order, rules in (("deny-first", (_rule(b"deny", b"subscribe", b"T"),
                                         _rule(b"allow", b"publish", b"T"))),
                         ("allow-first", (_rule(b"allow", b"publish", b"T"),
                                          _rule(b"deny", b"subscribe", b"T")))):
        xml = _with_rules(files.permissions.with_suffix(".xml").read_bytes(), *rules)
        permissions = _signed_as_is(tmp_path, xml, order)
        code, text = _writer_alone(request, tmp_path / order, runtime, bundle, governance,
                                   permissions)
        refused = order == "deny-first" and runtime == "0.10"
        if refused:
            assert code == 5 and "topic T: Not Allowed By Security" in text, text[-800:]
        else:   # the writer exists; no peer
            assert code == 4 and "no peer matched on T" in text, (code, text[-800:])
        target = "cyclone" if runtime == "0.10" else "cyclone11"
        assert len(_lint_hits(xml, target, "GK218")) == int(refused), (target, order)


def _crash_cases(files) -> dict[str, tuple[str, bytes]]:
    governance = _protected(files.governance.with_suffix(".xml").read_bytes())
    permissions = files.permissions.with_suffix(".xml").read_bytes()
    return {
        "topic_expression": ("governance", governance.replace(
            b"<topic_expression>*</topic_expression>",
            b"<topic_expression></topic_expression>")),
        "topic": ("permissions", _with_rules(permissions, _rule(b"allow", b"publish", b""),
                                             _rule(b"allow", b"publish", b"T"))),
    }


@needs_cyclone
@pytest.mark.cyclone
@pytest.mark.parametrize("runtime", ["0.10", "11"])
@pytest.mark.parametrize("element", ["topic_expression", "topic"])
def test_an_empty_topic_pattern_crashes_both_versions(request, tmp_path, runtime, element):
    """targets.py crashes_on_empty (cyclone, kept by cyclone11): an empty topic_expression
    (governance) or topic (permissions) leaves its value NULL, and the first topic looked up
    past it ends the process with SIGSEGV in ac_fnmatch, on 0.10.2 and 11.0.1 alike. GK303
    is an error under both targets."""
    bundle = make_bundle(tmp_path, "rtps_sign")
    files = bundle.participants["pub"]
    kind, xml = _crash_cases(files)[element]
    signed = _signed_as_is(tmp_path, xml, element)
    other = _signed_as_is(tmp_path, _protected(
        files.governance.with_suffix(".xml").read_bytes()), "governance") \
        if kind == "permissions" else files.permissions
    governance, permissions = (signed, other) if kind == "governance" else (other, signed)
    code, text = _writer_alone(request, tmp_path / "run", runtime, bundle, governance,
                               permissions)
    assert code == -11, (code, text[-800:])          # SIGSEGV, not a refusal
    target = "cyclone" if runtime == "0.10" else "cyclone11"
    (hit,) = _lint_hits(xml, target, "GK303")
    assert hit.severity == "error" and f"<{element}> is empty" in hit.message
