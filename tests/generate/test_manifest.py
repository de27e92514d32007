"""The PKI manifest (govkit.pki.manifest): written by every command that writes the PKI,
authenticated, and never weaker than checking each certificate. `generate` with the
manifest writes exactly what `--paranoid` (every certificate checked in full) writes, and
refuses what it refuses, when a certificate is swapped, the manifest edited, truncated,
replaced by another PKI's, or replayed from before a revocation (issue 35)."""

from __future__ import annotations

import hashlib
import multiprocessing
import shutil
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from govkit.catalog.profiles import get_profile
from govkit.cli.main import app
from govkit.common.errors import GovkitError
from govkit.documents.render import DomainSet
from govkit.generate import fleet
from govkit.pki.issuance import init_pki
from govkit.pki.manifest import KEY_NAME, check_certificate, manifest_path, read_manifest
from govkit.pki.renewal import rekey, renew
from govkit.pki.revocation import crl_path, load_crl, revoke, revoke_all
from govkit.pki.testpki import TestPKI

NAMES = ("pub", "sub", "other", *(f"n{i}" for i in range(5)))


@pytest.fixture
def pki(tmp_path) -> TestPKI:
    return init_pki(tmp_path / "pki", participants=NAMES)[0]


def _generate(pki: TestPKI, out: Path, paranoid: bool = False) -> fleet.Result:
    return fleet.generate([get_profile("rtps_sign")], pki, out, DomainSet(), "ddsperf",
                          sign=True, paranoid=paranoid)


def _documents(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / "permissions").glob("*.xml"))}


def _same_as_paranoid(pki: TestPKI, tmp_path: Path, tag: str) -> fleet.Result:
    """generate with the manifest and with every certificate checked in full: the same
    documents, the same participants refused."""
    fast, full = tmp_path / f"{tag}-fast", tmp_path / f"{tag}-full"
    result, checked = _generate(pki, fast), _generate(pki, full, paranoid=True)
    assert _documents(fast) == _documents(full)
    assert (sorted(result.stale), sorted(result.revoked)) == \
        (sorted(checked.stale), sorted(checked.revoked))
    assert checked.manifest_note is None and checked.unproven == []
    return result


# ------------------------------------------------------------------ written by the PKI


def test_init_writes_an_authentic_manifest_of_every_identity(pki):
    manifest, why = read_manifest(pki)
    assert why is None and sorted(manifest.entries) == sorted(NAMES)
    ca = pki.certificate("identity_ca")
    for name in NAMES:
        assert manifest.entries[name] == check_certificate(pki.path(name).read_bytes(), ca)
        assert manifest.entries[name].issued and manifest.entries[name].revoked is None
    assert stat.S_IMODE((pki.directory / KEY_NAME).stat().st_mode) == 0o600
    key = (pki.directory / KEY_NAME).read_bytes()
    init_pki(pki.directory, participants=["late"])
    init_pki(pki.directory, force=True)           # new CAs, new keys: the same HMAC key
    assert (pki.directory / KEY_NAME).read_bytes() == key
    manifest, why = read_manifest(pki)
    assert why is None and sorted(manifest.entries) == sorted([*NAMES, "late"])
    assert manifest.identity_ca == hashlib.sha256(pki.identity_ca.read_bytes()).digest()


def test_revoke_renew_and_rekey_feed_the_manifest(pki):
    revoke(pki, "sub", reason="keyCompromise")
    entry = read_manifest(pki)[0].entries["sub"]
    assert entry.revoked["reason"] == "keyCompromise" and entry.revoked["crl_number"] == 1
    assert entry.revoked["serial"] == f"{pki.certificate('sub').serial_number:#x}"
    renew(pki, "pub", days=30)
    assert read_manifest(pki)[0].entries["pub"] == check_certificate(
        pki.path("pub").read_bytes(), pki.certificate("identity_ca"))
    rekey(pki, "sub")
    entry = read_manifest(pki)[0].entries["sub"]
    assert entry.revoked is None and entry.serial == pki.certificate("sub").serial_number


def test_a_pki_from_before_manifests_gets_one_from_pki_init(pki, tmp_path):
    manifest_path(pki).unlink()
    result = _same_as_paranoid(pki, tmp_path, "none")
    assert result.manifest_note.startswith(f"{manifest_path(pki)}: no PKI manifest")
    r = CliRunner().invoke(app, ["pki", "init", str(pki.directory)])
    assert r.exit_code == 0 and "PKI already complete" in r.output, r.output
    assert read_manifest(pki)[1] is None


# ------------------------------------------------------------------ never weaker


def test_with_an_intact_manifest_no_certificate_is_checked_in_full(pki, tmp_path):
    result = _same_as_paranoid(pki, tmp_path, "intact")
    assert result.manifest_note is None and result.unproven == []


def test_a_swapped_certificate_is_checked_in_full_and_a_forged_one_refused(pki, tmp_path):
    other, _ = init_pki(tmp_path / "other", participants=("pub",))   # the same CA names
    shutil.copy(other.path("pub"), pki.path("pub"))        # forged: another key signed it
    shutil.copy(pki.path("n0"), pki.path("n1"))            # genuine, but n0's certificate
    result = _same_as_paranoid(pki, tmp_path, "swapped")
    assert result.stale == ["pub"]
    assert sorted(result.unproven) == [("n1", "changed"), ("pub", "changed")]
    # n1's document names n0's subject, as the full check would (and did before manifests)
    assert b"CN=n0" in (tmp_path / "swapped-fast" / "permissions" / "n1.xml").read_bytes()


def test_a_certificate_added_by_hand_is_checked_in_full(pki, tmp_path):
    for suffix in (".pem", ".key"):
        shutil.copy(pki.path("n2", suffix), pki.path("byhand", suffix))
    result = _same_as_paranoid(pki, tmp_path, "byhand")
    assert result.unproven == [("byhand", "unlisted")]


@pytest.mark.parametrize("damage", ["edit", "truncate", "key", "nokey", "other-pki"])
def test_a_damaged_manifest_is_not_used_and_every_certificate_is_checked(pki, tmp_path,
                                                                         damage):
    path = manifest_path(pki)
    other, _ = init_pki(tmp_path / "other", participants=NAMES)
    genuine = pki.path("pub").read_bytes()
    shutil.copy(other.path("pub"), pki.path("pub"))   # forged: must stay refused
    data = path.read_bytes()
    if damage == "edit":   # the forged certificate's hash put in pub's entry
        good = read_manifest(pki)[0].entries["pub"].sha256.hex().encode()
        forged = hashlib.sha256(pki.path("pub").read_bytes()).hexdigest().encode()
        path.write_bytes(data.replace(good, forged))
        why = "does not authenticate"
    elif damage == "truncate":
        path.write_bytes(data[:len(data) // 2])
        why = "does not authenticate"
    elif damage == "key":
        (pki.directory / KEY_NAME).write_text("00" * 32 + "\n")
        why = "does not authenticate"
    elif damage == "nokey":
        (pki.directory / KEY_NAME).unlink()
        why = "missing or not a manifest key"
    else:   # another PKI's manifest, under its own key: authentic, but not about this CA
        shutil.copy(manifest_path(other), path)
        shutil.copy(other.directory / KEY_NAME, pki.directory / KEY_NAME)
        why = "written for another Identity CA"
    result = _same_as_paranoid(pki, tmp_path, damage)
    assert why in result.manifest_note and result.stale == ["pub"]
    pki.path("pub").write_bytes(genuine)   # (the command line refuses to run without pub)
    r = CliRunner().invoke(app, ["generate", "--ca", str(pki.directory), "--out",
                                 str(tmp_path / "cli"), "-p", "rtps_sign", "--sign"])
    said = [line for line in r.output.splitlines() if "checked in full" in line]
    assert len(said) == 1 and why in said[0], r.output


def test_a_manifest_replayed_after_a_revocation_does_not_unrevoke(pki, tmp_path):
    before = manifest_path(pki).read_bytes()
    revoke(pki, "sub")
    manifest_path(pki).write_bytes(before)            # authentic, and says sub is not
    assert read_manifest(pki)[1] is None
    result = _same_as_paranoid(pki, tmp_path, "replayed")
    assert list(result.revoked) == ["sub"] and result.unproven == []
    assert not (tmp_path / "replayed-fast" / "permissions" / "sub.p7s").exists()


def test_a_deleted_crl_unrevokes_no_one(pki, tmp_path):
    revoke_all(pki, ["sub", "n3"], reason="keyCompromise")
    crl_path(pki).unlink()
    for paranoid in (False, True):   # refused (who is revoked is not known), nothing written
        with pytest.raises(GovkitError, match=r"identity_ca.crl.pem: missing, but the PKI "
                                              r"manifest .* records CRL number 1") as e:
            _generate(pki, tmp_path / "no-crl", paranoid)
        assert e.value.exit_code == 2 and "\n" not in str(e.value)
        assert not (tmp_path / "no-crl").exists()
    notes: list[str] = []
    revoke_all(pki, ["n4"], notes=notes)
    crl = load_crl(pki)
    assert crl.number == 2   # after the last CRL the manifest saw, not 1 again
    assert {e.serial for e in crl.entries()} == {pki.certificate(n).serial_number
                                                 for n in ("sub", "n3", "n4")}
    assert len(notes) == 1 and "lacked 2 revocation(s) the PKI manifest records" in notes[0]
    assert [e.reason for e in crl.entries() if e.serial == pki.certificate("sub").serial_number
            ] == ["keyCompromise"]


# ------------------------------------------------------------------ revoked: never granted


def test_generate_leaves_out_a_revoked_participant_and_removes_its_earlier_grant(pki, tmp_path):
    out = tmp_path / "build"
    runner = CliRunner()
    args = ["generate", "--ca", str(pki.directory), "--out", str(out), "-p", "rtps_sign",
            "--sign"]
    assert runner.invoke(app, args).exit_code == 0
    assert (out / "permissions" / "sub.p7s").exists()
    assert runner.invoke(app, ["pki", "revoke", "sub", "--ca", str(pki.directory)]
                         ).exit_code == 0
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    warned = [line for line in r.stderr.splitlines() if "revoked" in line]
    assert len(warned) == 1 and warned[0].startswith(
        "govkit: warning: sub is revoked: no permissions written; removed "
        f"{out / 'permissions' / 'sub.p7s'} and {out / 'permissions' / 'sub.xml'}, written "
        "for it earlier: certificate"), r.output
    assert not (out / "permissions" / "sub.p7s").exists()
    assert not (out / "permissions" / "sub.xml").exists()
    assert (out / "permissions" / "pub.p7s").exists()
    # named in a participants file: an error (exit 2), the others still written
    (tmp_path / "fleet.txt").write_text("pub\nsub\n")
    r = runner.invoke(app, [*args, "--participants", str(tmp_path / "fleet.txt")])
    assert r.exit_code == 2 and "govkit: sub is revoked: no permissions written" in r.stderr
    assert (out / "permissions" / "pub.p7s").exists()
    # and verify finds no grant for it
    r = runner.invoke(app, ["verify", "--ca", str(pki.directory),
                            *map(str, (out / "permissions").glob("*.p7s"))])
    assert r.exit_code == 0, r.output


# ------------------------------------------------------------------ at the same moment


def _revoke(barrier, directory, name) -> None:
    barrier.wait(timeout=60)
    revoke(TestPKI(directory), name)


def test_revocations_at_the_same_moment_all_reach_the_manifest(pki, tmp_path):
    """Three processes revoke three participants at the same moment, 50 times (as the CRL's
    own test does, tests/pki/test_pki_writes.py; it tried once): every revocation is in
    the manifest every time, and its CRL number is the CRL's."""
    ctx = multiprocessing.get_context("fork")
    for attempt in range(50):
        directory = tmp_path / f"try{attempt}"
        shutil.copytree(pki.directory, directory)
        barrier = ctx.Barrier(3)
        procs = [ctx.Process(target=_revoke, args=(barrier, directory, n))
                 for n in ("n0", "n1", "n2")]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=120)
            assert p.exitcode == 0, attempt
        copy = TestPKI(directory)
        manifest, why = read_manifest(copy)
        assert why is None, (attempt, why)
        assert sorted(n for n, e in manifest.entries.items() if e.revoked) == \
            ["n0", "n1", "n2"], attempt
        assert manifest.crl_number == load_crl(copy).number == 3, attempt
