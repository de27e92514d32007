"""Participant keys in a SoftHSM2 token: `pki init --hsm softhsm` moves them there, Fast DDS
2.9 loads one through a pkcs11: URI (OpenSSL's pkcs11 engine) and matches, and govkit
says clearly that Cyclone DDS 0.10 cannot."""

from __future__ import annotations

import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import fastdds
from helpers.require import missing
from typer.testing import CliRunner

from govkit.catalog.profiles import get_profile
from govkit.cli.main import app
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.generate.bundle import BundleLog, ensure_bundle
from govkit.pki.hsm import key_uri, move_keys_to_softhsm, softhsm_conf
from govkit.pki.issuance import init_pki
from govkit.pki.renewal import renew
from govkit.runners.ddsperf import DdsperfRunner
from govkit.runners.fastdds import FastddsRunner


def _engine() -> bool:
    """OpenSSL's pkcs11 engine (libengine-pkcs11-openssl) where OpenSSL looks for it."""
    try:
        out = subprocess.run(["openssl", "version", "-e"], capture_output=True, text=True,
                             timeout=10).stdout
    except OSError:
        return False
    engines = out.split('"')[1] if '"' in out else ""
    return bool(engines) and (Path(engines) / "pkcs11.so").exists()


needs_softhsm = pytest.mark.skipif(
    shutil.which("softhsm2-util") is None or not _engine(),
    reason=missing("softhsm", "softhsm2 / libengine-pkcs11-openssl not installed (run "
                              "`bash .ci/setup`)"))
pytestmark = [needs_softhsm]


@pytest.fixture
def pki(tmp_path):
    pki, _ = init_pki(tmp_path / "pki", participants=("pub", "sub"))
    return pki


def test_moving_keys_leaves_no_key_file_and_a_uri(pki):
    pub_pem = pki.path("pub").read_bytes()
    written = move_keys_to_softhsm(pki, ["pub"])
    assert written == [str(pki.path("pub", ".pkcs11"))]
    assert not pki.path("pub", ".key").exists() and pki.path("sub", ".key").exists()
    assert stat.S_IMODE(pki.path("pub", ".pkcs11").stat().st_mode) == 0o600
    assert key_uri(pki, "pub").startswith("pkcs11:token=govkit;id=%")
    assert key_uri(pki, "sub") is None
    assert pki.identities() == ["pub", "sub"]          # still a participant
    _, created = init_pki(pki.directory, participants=("pub", "sub"))
    assert created == [] and pki.path("pub").read_bytes() == pub_pem   # never re-keyed
    old, new = renew(pki, "pub")                       # the token's key: same public key
    assert new.public_key() == old.public_key()


def test_fastdds_participant_matches_with_its_key_in_the_token(pki, tmp_path):
    move_keys_to_softhsm(pki, ["pub"])
    bundle = ensure_bundle(get_profile("rtps_sign"), pki, tmp_path / "build", "ddsperf",
                           BundleLog())
    files = bundle.participants["pub"]
    assert isinstance(files.private_key, str) and files.token_conf == softhsm_conf(pki).resolve()
    props = FastddsRunner().properties_text(bundle, "pub")
    assert f"dds.sec.auth.builtin.PKI-DH.private_key={files.private_key}" in props.splitlines()
    result, outputs = fastdds.measure(bundle, tmp_path / "cfg")
    assert all(o.stdout.count(": authorized") >= 1 for o in outputs.values())
    assert all(r["count"] > 50 for r in result.rows)
    # the control: without SOFTHSM2_CONF the token (and so the key) cannot be found
    r, point, outputs = fastdds.run_pair(bundle, tmp_path / "no-token",
                                         env={"SOFTHSM2_CONF": "/nonexistent/softhsm2.conf"})
    assert outputs["pub"].returncode == 3, outputs["pub"].tail()


def test_cyclone_cannot_and_govkit_says_so(pki, tmp_path):
    move_keys_to_softhsm(pki)
    bundle = ensure_bundle(get_profile("rtps_sign"), pki, tmp_path / "build", "ddsperf",
                           BundleLog())
    with pytest.raises(GovkitError, match="Cyclone DDS 0.10 cannot use a pkcs11: key"):
        DdsperfRunner().config_text(bundle, "pub")


def test_pki_init_hsm_from_the_command_line(tmp_path):
    runner = CliRunner()
    r = runner.invoke(app, ["pki", "init", str(tmp_path / "pki"), "--hsm", "softhsm"])
    assert r.exit_code == 0, r.output
    assert f"moved {tmp_path / 'pki' / 'pub'}.key into the SoftHSM2 token" in r.output
    assert not list((tmp_path / "pki").glob("[ps]*b.key"))      # pub.key, sub.key gone
    assert (tmp_path / "pki" / "identity_ca.key").exists()     # CA keys stay files
    r = runner.invoke(app, ["pki", "init", str(tmp_path / "other"), "--hsm", "yubikey"])
    assert r.exit_code == EXIT_USAGE and "--hsm yubikey: unknown" in r.output


def test_bench_on_cyclone_refuses_token_keys_before_measuring(tmp_path):
    govkit = str(Path(sys.executable).with_name("govkit"))
    pki, _ = init_pki(tmp_path / "pki", participants=("pub", "sub"))
    move_keys_to_softhsm(pki)
    r = subprocess.run([govkit, "bench", "--runner", "ddsperf", "--profile", "rtps_sign",
                        "--duration", "1", "--ca", str(pki.directory), "--build",
                        str(tmp_path / "build"), "--out", str(tmp_path / "res")],
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == EXIT_USAGE, r.stdout + r.stderr
    assert "private key is in a PKCS#11 token; --runner ddsperf cannot use it" in r.stderr
    assert not (tmp_path / "res").exists()


def test_without_softhsm_init_hsm_creates_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent/bin")
    r = CliRunner().invoke(app, ["pki", "init", str(tmp_path / "pki"), "--hsm", "softhsm"])
    assert r.exit_code == EXIT_USAGE and "apt-get install softhsm2" in r.output, r.output
    assert not (tmp_path / "pki").exists()


@pytest.mark.fastdds
def test_bench_on_fastdds_rotates_with_token_keys(tmp_path):
    """The rotating run's long-lived pairs get the token too (SOFTHSM2_CONF), not only the
    per-repeat processes: every pair matches, every slot measures."""
    import json
    fastdds.require_fastdds()
    govkit = str(Path(sys.executable).with_name("govkit"))
    pki, _ = init_pki(tmp_path / "pki", participants=("pub", "sub"))
    move_keys_to_softhsm(pki)
    r = subprocess.run([govkit, "bench", "--runner", "fastdds", "--profile", "none,rtps_sign",
                        "--sizes", "32", "--rounds", "2", "--budget", "1", "--no-report",
                        "--ca", str(pki.directory), "--build", str(tmp_path / "build"),
                        "--out", str(tmp_path / "res")],
                       capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr
    rot = json.loads((tmp_path / "res" / "results.json").read_text())["rotation"]
    assert {p["status"] for p in rot["pairs"]} == {"ok"}
    assert all(s["status"] == "ok" and s["n"] > 0 for s in rot["slots"])
